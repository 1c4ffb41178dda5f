//! The ProxySQL world's events: small `Copy` values; a thread's step carries a generation so
//! a cancelled step (its connection was killed) is ignored when it pops.

use crate::sim::{TraceRecord, Traced};

/// One event of the ProxySQL world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The pending step of sysbench thread `thread` of client `client` (connect outcome,
    /// statement outcome, or the next acquisition attempt).
    Step {
        /// Client index.
        client: u8,
        /// Thread index within the client.
        thread: u16,
        /// Thread generation when scheduled (stale steps are ignored).
        gen: u32,
    },
    /// A Monitor ping round starts.
    PingRound,
    /// The ping round's results are in: post-processing (shun_and_killall).
    PingPost,
    /// A Monitor read_only round starts.
    ReadOnlyRound,
    /// The read_only round's results are in: read_only actions.
    ReadOnlyPost,
    /// Scripted action `i`.
    Action {
        /// Index in `actions`.
        i: u16,
    },
}

impl Traced for Event {
    #[inline]
    fn record(&self) -> TraceRecord {
        let (component, index, kind, a) = match *self {
            Event::Step {
                client,
                thread,
                gen,
            } => (
                "sysbench",
                (client as u32) << 16 | thread as u32,
                "step",
                gen as u64,
            ),
            Event::PingRound => ("monitor", 0, "ping", 0),
            Event::PingPost => ("monitor", 0, "ping_post", 0),
            Event::ReadOnlyRound => ("monitor", 1, "read_only", 0),
            Event::ReadOnlyPost => ("monitor", 1, "read_only_post", 0),
            Event::Action { i } => ("operator", i as u32, "action", 0),
        };
        TraceRecord {
            component,
            index,
            kind,
            a,
            b: 0,
        }
    }
}
