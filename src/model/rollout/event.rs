//! The rollout world's events: small `Copy` values (indices, generations), each describable
//! for the trace digest.

use crate::sim::{TraceRecord, Traced};

/// One event of the rollout world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// vtgate `g`'s topology watcher ticks: a full `loadTablets`.
    Poll {
        /// vtgate index.
        g: u16,
    },
    /// vtgate `g` reloads one shard (`loadTabletsTrigger` after the primary left, vitessio/vitess
    /// `go/vt/discovery/topology_watcher.go`).
    ShardReload {
        /// vtgate index.
        g: u16,
        /// shard index.
        shard: u16,
    },
    /// vtgate `g`'s health check `gen` on tablet `tablet` tries to connect / gets its first
    /// response.
    HealthConnect {
        /// vtgate index.
        g: u16,
        /// tablet index.
        tablet: u16,
        /// health-check generation (stale ones are ignored).
        gen: u32,
    },
    /// A tablet's state change reaches every vtgate streaming from `addr` (all vtgates get it
    /// after the same `health_stream_delay`, so one event serves them all).
    HealthPush {
        /// tablet index.
        tablet: u16,
        /// address the stream is on.
        addr: u32,
        /// serving after the change.
        serving: bool,
        /// type PRIMARY after the change.
        primary: bool,
    },
    /// SIGTERM: the tablet stops serving and clears its topology record.
    Drain {
        /// tablet index.
        tablet: u16,
    },
    /// The old pod is gone.
    Down {
        /// tablet index.
        tablet: u16,
    },
    /// The new vttablet writes its (new) address in the topology.
    Publish {
        /// tablet index.
        tablet: u16,
    },
    /// The new vttablet serves.
    Serve {
        /// tablet index.
        tablet: u16,
    },
    /// The readiness probe passes: the pod is Ready.
    Ready {
        /// tablet index.
        tablet: u16,
        /// availability generation.
        gen: u32,
    },
    /// The pod loses Ready briefly.
    Flap {
        /// tablet index.
        tablet: u16,
        /// availability generation.
        gen: u32,
    },
    /// The pod has been Ready for `tablet_available_timeout`: Available.
    Available {
        /// tablet index.
        tablet: u16,
        /// availability generation.
        gen: u32,
    },
    /// The operator releases the next tablet of a shard.
    Release {
        /// shard index.
        shard: u16,
    },
    /// PlannedReparentShard starts: the old primary stops serving as primary.
    PrsStart {
        /// shard index.
        shard: u16,
    },
    /// PlannedReparentShard ends: the candidate is primary, the old primary a serving REPLICA.
    PrsEnd {
        /// shard index.
        shard: u16,
    },
    /// One replica read arrives at vtgate `g` (per-query mode).
    Read {
        /// vtgate index.
        g: u16,
    },
    /// One primary write arrives at vtgate `g` (per-query mode).
    Write {
        /// vtgate index.
        g: u16,
    },
}

impl Traced for Event {
    #[inline]
    fn record(&self) -> TraceRecord {
        let (component, index, kind, a, b) = match *self {
            Event::Poll { g } => ("vtgate", g as u32, "poll", 0, 0),
            Event::ShardReload { g, shard } => {
                ("vtgate", g as u32, "shard_reload", shard as u64, 0)
            }
            Event::HealthConnect { g, tablet, gen } => (
                "vtgate",
                g as u32,
                "health_connect",
                tablet as u64,
                gen as u64,
            ),
            Event::HealthPush {
                tablet,
                addr,
                serving,
                primary,
            } => (
                "tablet",
                tablet as u32,
                "health_push",
                addr as u64,
                (serving as u64) << 1 | primary as u64,
            ),
            Event::Drain { tablet } => ("tablet", tablet as u32, "drain", 0, 0),
            Event::Down { tablet } => ("tablet", tablet as u32, "down", 0, 0),
            Event::Publish { tablet } => ("tablet", tablet as u32, "publish", 0, 0),
            Event::Serve { tablet } => ("tablet", tablet as u32, "serve", 0, 0),
            Event::Ready { tablet, gen } => ("tablet", tablet as u32, "ready", gen as u64, 0),
            Event::Flap { tablet, gen } => ("tablet", tablet as u32, "flap", gen as u64, 0),
            Event::Available { tablet, gen } => {
                ("tablet", tablet as u32, "available", gen as u64, 0)
            }
            Event::Release { shard } => ("operator", shard as u32, "release", 0, 0),
            Event::PrsStart { shard } => ("operator", shard as u32, "prs_start", 0, 0),
            Event::PrsEnd { shard } => ("operator", shard as u32, "prs_end", 0, 0),
            Event::Read { g } => ("workload", g as u32, "read", 0, 0),
            Event::Write { g } => ("workload", g as u32, "write", 0, 0),
        };
        TraceRecord {
            component,
            index,
            kind,
            a,
            b,
        }
    }
}
