//! What the ProxySQL process holds at run time besides its tables: the settings a
//! `SetVariable` action can change, and its wall clock (shuns and unshuns count wall-clock
//! seconds, `time(NULL)`).

use crate::sim::{SimDuration, SimTime};

/// The settings a `SetVariable` action can change at run time.
#[derive(Clone, Debug)]
pub struct Runtime {
    /// `mysql-monitor_writer_is_also_reader`.
    pub wiao: bool,
    /// `mysql-shun_on_failures`.
    pub(crate) shun_on_failures: u32,
    /// `mysql-shun_recovery_time_sec`.
    pub(crate) shun_recovery_time_sec: u32,
    /// `mysql-connect_retries_on_failure`.
    pub(crate) connect_retries: u32,
    /// `mysql-connect_timeout_server`.
    pub(crate) cts: SimDuration,
    /// `mysql-connect_timeout_server_max`.
    pub(crate) cts_max: SimDuration,
}

impl Runtime {
    /// Connect errors in one second that shun: `min(shun_on_failures, retries + 1)`.
    pub(crate) fn shun_threshold(&self) -> u32 {
        self.shun_on_failures
            .min(self.connect_retries.saturating_add(1))
    }
    /// `max_wait_sec` of the (normal, desperate) unshun paths (`MyHGC.cpp:117-260`).
    pub(crate) fn unshun_waits(&self) -> (i64, i64) {
        let rec = self.shun_recovery_time_sec as i64;
        let max_ms = (self.cts_max.as_nanos() / 1_000_000) as i64;
        let clamp = rec * 1000 >= max_ms;
        let normal = if clamp { max_ms / 1000 - 1 } else { rec };
        let desperate = if clamp { max_ms / 10000 - 1 } else { rec / 10 };
        (normal.max(1), desperate.max(1))
    }
}

/// The wall clock: where in a wall-clock second simulated time 0 falls.
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    /// Wall-clock offset of simulated time 0 (ns).
    pub(crate) offset: u64,
}

impl WallClock {
    /// Wall-clock second of `t` (`time(NULL)`).
    #[inline]
    pub(crate) fn second(self, t: SimTime) -> i64 {
        (t.0.saturating_add(self.offset) / 1_000_000_000) as i64
    }
}
