//! What a run measures, and the metric row it reports.

/// Stage slots in the metric row (stages beyond the fourth are counted in the totals only).
pub const STAGE_SLOTS: usize = 4;

/// A log-bucketed histogram of nanosecond values: exact below 64 ns, then 32 buckets per
/// power of two (a relative error below 3.2 %). Deterministic, no allocation after creation.
#[derive(Clone, Debug)]
pub struct LogHistogram {
    /// Values counted per bucket (64 exact buckets, then 32 per power of two).
    counts: Vec<u64>,
    /// Values counted.
    n: u64,
    /// Their sum (exact).
    sum: u128,
    /// The largest value counted.
    max: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram {
            counts: vec![0; 64 + 58 * 32],
            n: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl LogHistogram {
    #[inline]
    fn bucket(v: u64) -> usize {
        if v < 64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros() as usize; // >= 6
        64 + (e - 6) * 32 + ((v >> (e - 5)) & 31) as usize
    }
    fn lower(b: usize) -> u64 {
        if b < 64 {
            return b as u64;
        }
        let e = (b - 64) / 32 + 6;
        let sub = ((b - 64) % 32) as u64;
        (1u64 << e) + (sub << (e - 5))
    }
    /// Count one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        self.counts[Self::bucket(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    /// Values counted.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// Mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
    /// Largest value (0 when empty).
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Nearest-rank quantile, reported as the midpoint of its bucket (0 when empty).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let lo = Self::lower(b);
                let hi = Self::lower(b + 1).min(self.max + 1);
                return (lo as f64 + (hi.max(lo + 1) - 1) as f64) / 2.0;
            }
        }
        self.max as f64
    }
}

/// One bucket of the run's timeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Requests that arrived (`Get` called).
    pub arrivals: u64,
    /// `Get` calls that returned a connection, counted at the instant `Get` returned.
    pub acquired: u64,
    /// `Get` calls that returned ErrTimeout.
    pub timeouts: u64,
    /// Largest waitlist length in the bucket.
    pub depth_max: usize,
    /// Waitlist length at the end of the bucket.
    pub depth_end: usize,
    /// The length changed in this bucket (else it is carried from the previous one).
    pub touched: bool,
}

/// Counts per fixed time bucket over the stages and the drain (a replay artifact: the
/// waitlist length over time, including after arrivals stop).
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Bucket width (ns).
    pub width_ns: u64,
    /// The buckets.
    pub buckets: Vec<Bucket>,
    /// A write past the last bucket lands here (not reported).
    spill: Bucket,
}

/// At most this many timeline buckets (a long run gets wider buckets).
const TIMELINE_BUCKETS: u64 = 2000;

impl Timeline {
    /// Buckets of 100 ms (wider when `span` is over 200 s) covering `span`.
    pub fn new(span: crate::sim::SimTime) -> Self {
        let width_ns = (span.0 / TIMELINE_BUCKETS).max(100_000_000);
        let n = span.0.div_ceil(width_ns).clamp(1, TIMELINE_BUCKETS + 1);
        Timeline {
            width_ns,
            buckets: vec![Bucket::default(); n as usize],
            spill: Bucket::default(),
        }
    }
    /// No buckets: every write lands in the spill (a pool whose host keeps its own timeline).
    pub fn off() -> Self {
        Timeline {
            width_ns: u64::MAX,
            buckets: Vec::new(),
            spill: Bucket::default(),
        }
    }
    /// The bucket of `t`.
    #[inline]
    pub fn at(&mut self, t: crate::sim::SimTime) -> &mut Bucket {
        if self.buckets.is_empty() {
            return &mut self.spill;
        }
        let i = (t.0 / self.width_ns) as usize;
        match self.buckets.get_mut(i) {
            Some(b) => b,
            None => &mut self.spill,
        }
    }
    /// Carry the length through buckets where it did not change.
    pub fn close(&mut self, end: crate::sim::SimTime, depth_at_end: usize) {
        let _ = depth_at_end;
        let last = ((end.0 / self.width_ns) as usize).min(self.buckets.len().saturating_sub(1));
        let mut d = 0;
        for (i, b) in self.buckets.iter_mut().enumerate() {
            if b.touched {
                d = b.depth_end;
            } else if i <= last {
                b.depth_end = d;
                b.depth_max = b.depth_max.max(d);
            }
        }
    }
}

/// Counters of one run.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    /// Requests that arrived.
    pub requests: u64,
    /// Requests that arrived in each stage.
    pub arrivals_by_stage: Vec<u64>,
    /// Successful completions (acquired before the deadline, query done) in each stage.
    pub goodput_by_stage: Vec<u64>,
    /// Post-deadline handoffs in each stage.
    pub post_deadline_by_stage: Vec<u64>,
    /// Successful completions, whenever they happened.
    pub completed: u64,
    /// Queries that completed after a post-deadline acquisition (`query_checks_deadline` off).
    pub late_completions: u64,
    /// `Get` failed with ErrTimeout: the waiter removed itself, or was evicted.
    pub timeouts: u64,
    /// Of those, evicted by a returner (variants with invariant A).
    pub evicted_timeouts: u64,
    /// `waitForConn` returned a connection to a waiter whose deadline had passed (clock).
    pub post_deadline_handoffs: u64,
    /// `waitForConn` returned a connection to a waiter whose ctx was already cancelled
    /// (`ctx.Err() != nil` when `Get` returns: the metric of github/vitess-gh PR #238).
    pub post_cancel_handoffs: u64,
    /// `Get` calls that returned a connection.
    pub acquired: u64,
    /// `Get` latency of acquisitions whose ctx was live (successes the caller can use, ns).
    pub success_latency: LogHistogram,
    /// Timer lateness drawn (ns; random draws only).
    pub timer_lateness: LogHistogram,
    /// The GoSync mutex's counters (zero for Fifo).
    pub mutex_stats: super::gosync::MutexStats,
    /// Goroutine wake-ups and the sum of their delays (ns).
    pub wakes: u64,
    /// Sum of wake-up delays (ns).
    pub wake_ns: u128,
    /// Most goroutines runnable at once.
    pub runnable_max: u32,
    /// From the end of the stages until the waitlist was last empty (ns).
    pub drain_ns: u64,
    /// A connection reached a request that could not use it (query start or setting change
    /// after the deadline).
    pub wasted_handoffs: u64,
    /// Of those, the setting change failed and the connection was closed.
    pub setting_failures: u64,
    /// Dials whose ctx expired first.
    pub dial_failures: u64,
    /// Returner selections (a waiter was handed a connection).
    pub selections: u64,
    /// Selections of a waiter already expired when examined (invariant A violated).
    pub invariant_a_violations: u64,
    /// Expired waiters unlinked by a returner's walk.
    pub evictions: u64,
    /// Time `wl.mu` was held (ns).
    pub mutex_busy_ns: u64,
    /// Wait for `wl.mu` per critical section (ns).
    pub mutex_wait: LogHistogram,
    /// Time at each waitlist depth (ns), over the stages.
    pub depth_time: Vec<u64>,
    /// Largest depth seen.
    pub depth_max: usize,
    /// Acquisition latency of every `Get` that returned a connection (ns).
    pub acquisition: LogHistogram,
    /// `WaitCount`: waits that returned a connection (`recordWait`, vitessio/vitess
    /// `go/pools/smartconnpool/pool.go` `ConnPool.Get` step 4).
    pub wait_count: u64,
    /// `WaitTime` (ns).
    pub wait_time_ns: u128,
    /// Sum over finished requests of time until acquisition or timeout (ns): Erlang-A's W.
    pub queue_time_all_ns: u128,
    /// Requests in `queue_time_all_ns`.
    pub queue_time_all_n: u64,
    /// Connections dialled successfully.
    pub conns_opened: u64,
    /// Connections closed.
    pub conns_closed: u64,
}

crate::metric_set! {
    /// What one connpool run reports, in this order.
    pub struct ConnPoolMetrics {
        /// Requests acquired before their deadline and completed, per second of the stages.
        goodput_rps: Value = "requests acquired before their deadline and completed, per second of the stages",
        /// Goodput in stage 1 (0 when absent).
        goodput_s1_rps: Value = "goodput in stage 1 (0 when absent)",
        /// Goodput in stage 2 (0 when absent).
        goodput_s2_rps: Value = "goodput in stage 2 (0 when absent)",
        /// Goodput in stage 3 (0 when absent).
        goodput_s3_rps: Value = "goodput in stage 3 (0 when absent)",
        /// Goodput in stage 4 (0 when absent).
        goodput_s4_rps: Value = "goodput in stage 4 (0 when absent)",
        /// Requests arrived per second of the stages.
        offered_rps: Value = "requests arrived per second of the stages",
        /// Completed / requests.
        goodput_frac: Value = "completed / requests",
        /// Requests that arrived.
        requests: Value = "requests that arrived",
        /// Get returned ErrTimeout (self-removed or evicted).
        timeouts: Value = "Get returned ErrTimeout (self-removed or evicted)",
        /// Timeouts / requests (Erlang-A's P(abandon)).
        timeout_frac: Value = "timeouts / requests (Erlang-A's P(abandon))",
        /// Waits that returned a connection after the waiter's deadline.
        post_deadline_handoffs: Value = "waits that returned a connection after the waiter's deadline",
        /// Post-deadline handoffs in stage 1.
        post_deadline_s1: Value = "post-deadline handoffs in stage 1",
        /// Post-deadline handoffs in stage 2.
        post_deadline_s2: Value = "post-deadline handoffs in stage 2",
        /// Post-deadline handoffs in stage 3.
        post_deadline_s3: Value = "post-deadline handoffs in stage 3",
        /// Post-deadline handoffs in stage 4.
        post_deadline_s4: Value = "post-deadline handoffs in stage 4",
        /// Connections that reached a request past its deadline.
        wasted_handoffs: Value = "connections that reached a request past its deadline",
        /// Wasted handoffs whose setting change failed: connection closed.
        setting_failures: Value = "wasted handoffs whose setting change failed: connection closed",
        /// Selections of a waiter already expired when examined.
        invariant_a_violations: Value = "selections of a waiter already expired when examined",
        /// 1 when at least one selection violated invariant A.
        any_invariant_a_violation: Indicator = "1 when at least one selection violated invariant A",
        /// Returner selections (handoffs through the waitlist).
        selections: Value = "returner selections (handoffs through the waitlist)",
        /// Expired waiters unlinked by returners.
        evictions: Value = "expired waiters unlinked by returners",
        /// Fraction of the stages wl.mu was held.
        mutex_utilisation: Value = "fraction of the stages wl.mu was held",
        /// Mean wait for wl.mu per critical section (us).
        mutex_wait_mean_us: Value = "mean wait for wl.mu per critical section (us)",
        /// P99 wait for wl.mu (us).
        mutex_wait_p99_us: Value = "p99 wait for wl.mu (us)",
        /// Largest wait for wl.mu (us).
        mutex_wait_max_us: Value = "largest wait for wl.mu (us)",
        /// Time-average waitlist length over the stages.
        waitlist_depth_mean: Value = "time-average waitlist length over the stages",
        /// Time-weighted p99 of the waitlist length.
        waitlist_depth_p99: Value = "time-weighted p99 of the waitlist length",
        /// Largest waitlist length.
        waitlist_depth_max: Value = "largest waitlist length",
        /// Median Get latency of acquisitions (ms).
        acq_latency_p50_ms: Value = "median Get latency of acquisitions (ms)",
        /// P90 Get latency of acquisitions (ms).
        acq_latency_p90_ms: Value = "p90 Get latency of acquisitions (ms)",
        /// P99 Get latency of acquisitions (ms).
        acq_latency_p99_ms: Value = "p99 Get latency of acquisitions (ms)",
        /// Largest Get latency of an acquisition (ms).
        acq_latency_max_ms: Value = "largest Get latency of an acquisition (ms)",
        /// WaitCount as the pool reports it (waits that returned a connection).
        wait_count: Value = "WaitCount as the pool reports it (waits that returned a connection)",
        /// WaitTime / WaitCount (ms).
        wait_time_mean_ms: Value = "WaitTime / WaitCount (ms)",
        /// Connections dialled.
        conns_opened: Value = "connections dialled",
        /// Connections closed.
        conns_closed: Value = "connections closed",
        /// Mean time to acquisition or timeout over finished requests (Erlang-A W).
        mean_wait_all_s: Value = "mean time to acquisition or timeout over finished requests (Erlang-A W)",
        /// Mean Get latency of acquisitions (s).
        mean_wait_served_s: Value = "mean Get latency of acquisitions (s)",
        /// Get returned a connection whose ctx was already cancelled (PR #238's metric).
        post_cancel_handoffs: Value = "Get returned a connection whose ctx was already cancelled (PR #238's metric)",
        /// Get calls that returned a connection, per second of the stages (by return instant).
        acquired_rps: Value = "Get calls that returned a connection, per second of the stages (by return instant)",
        /// Median Get latency of successes (live ctx, ms).
        success_latency_p50_ms: Value = "median Get latency of successes (live ctx, ms)",
        /// P99 Get latency of successes (ms).
        success_latency_p99_ms: Value = "p99 Get latency of successes (ms)",
        /// Largest Get latency of a success (ms).
        success_latency_max_ms: Value = "largest Get latency of a success (ms)",
        /// Mean timer lateness drawn (us).
        timer_lateness_mean_us: Value = "mean timer lateness drawn (us)",
        /// Time wl.mu spent in starvation mode (stages and drain) / stage time (GoSync).
        mutex_starving_frac: Value = "time wl.mu spent in starvation mode (stages and drain) / stage time (GoSync)",
        /// Switches of wl.mu into starvation mode.
        mutex_starvation_entries: Value = "switches of wl.mu into starvation mode",
        /// Newcomers that took wl.mu ahead of parked or woken waiters.
        mutex_barges: Value = "newcomers that took wl.mu ahead of parked or woken waiters",
        /// Woken waiters requeued at the front after losing wl.mu.
        mutex_lifo_requeues: Value = "woken waiters requeued at the front after losing wl.mu",
        /// Spin iterations on wl.mu.
        mutex_spins: Value = "spin iterations on wl.mu",
        /// Starvation-mode handoffs of wl.mu.
        mutex_handoffs: Value = "starvation-mode handoffs of wl.mu",
        /// Mean goroutine wake-up delay (us).
        wake_delay_mean_us: Value = "mean goroutine wake-up delay (us)",
        /// Most goroutines runnable at once.
        runnable_max: Value = "most goroutines runnable at once",
        /// Seconds after the stages until the waitlist was last empty.
        waitlist_drain_s: Value = "seconds after the stages until the waitlist was last empty",
    }
}

impl Metrics {
    /// The metric row; `span_s` is the total stage time, `stage_s` each stage's.
    pub fn values(&self, span_s: f64, stage_s: &[f64]) -> ConnPoolMetrics {
        let per = |v: &Vec<u64>, k: usize, rate: bool| -> f64 {
            match (v.get(k), stage_s.get(k)) {
                (Some(c), Some(d)) if rate => *c as f64 / d,
                (Some(c), _) => *c as f64,
                _ => 0.0,
            }
        };
        let goodput: u64 = self.goodput_by_stage.iter().sum();
        let arrived: u64 = self.arrivals_by_stage.iter().sum();
        let div = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let depth_total: u64 = self.depth_time.iter().sum();
        let depth_mean = div(
            self.depth_time
                .iter()
                .enumerate()
                .map(|(d, t)| d as f64 * *t as f64)
                .sum(),
            depth_total as f64,
        );
        let depth_p99 = {
            let target = (0.99 * depth_total as f64).ceil() as u64;
            let mut seen = 0;
            let mut q = 0;
            for (d, t) in self.depth_time.iter().enumerate() {
                seen += t;
                if seen >= target && *t > 0 {
                    q = d;
                    break;
                }
            }
            q as f64
        };
        let pd = |k: usize| per(&self.post_deadline_by_stage, k, false);
        let gs = |k: usize| per(&self.goodput_by_stage, k, true);
        ConnPoolMetrics {
            goodput_rps: div(goodput as f64, span_s),
            goodput_s1_rps: gs(0),
            goodput_s2_rps: gs(1),
            goodput_s3_rps: gs(2),
            goodput_s4_rps: gs(3),
            offered_rps: div(arrived as f64, span_s),
            goodput_frac: div(self.completed as f64, self.requests as f64),
            requests: self.requests as f64,
            timeouts: self.timeouts as f64,
            timeout_frac: div(self.timeouts as f64, self.requests as f64),
            post_deadline_handoffs: self.post_deadline_handoffs as f64,
            post_deadline_s1: pd(0),
            post_deadline_s2: pd(1),
            post_deadline_s3: pd(2),
            post_deadline_s4: pd(3),
            wasted_handoffs: self.wasted_handoffs as f64,
            setting_failures: self.setting_failures as f64,
            invariant_a_violations: self.invariant_a_violations as f64,
            any_invariant_a_violation: (self.invariant_a_violations > 0) as u8 as f64,
            selections: self.selections as f64,
            evictions: self.evictions as f64,
            mutex_utilisation: div(self.mutex_busy_ns as f64 * 1e-9, span_s),
            mutex_wait_mean_us: self.mutex_wait.mean() * 1e-3,
            mutex_wait_p99_us: self.mutex_wait.quantile(0.99) * 1e-3,
            mutex_wait_max_us: self.mutex_wait.max() as f64 * 1e-3,
            waitlist_depth_mean: depth_mean,
            waitlist_depth_p99: depth_p99,
            waitlist_depth_max: self.depth_max as f64,
            acq_latency_p50_ms: self.acquisition.quantile(0.5) * 1e-6,
            acq_latency_p90_ms: self.acquisition.quantile(0.9) * 1e-6,
            acq_latency_p99_ms: self.acquisition.quantile(0.99) * 1e-6,
            acq_latency_max_ms: self.acquisition.max() as f64 * 1e-6,
            wait_count: self.wait_count as f64,
            wait_time_mean_ms: div(self.wait_time_ns as f64 * 1e-6, self.wait_count as f64),
            conns_opened: self.conns_opened as f64,
            conns_closed: self.conns_closed as f64,
            mean_wait_all_s: div(
                self.queue_time_all_ns as f64 * 1e-9,
                self.queue_time_all_n as f64,
            ),
            mean_wait_served_s: self.acquisition.mean() * 1e-9,
            post_cancel_handoffs: self.post_cancel_handoffs as f64,
            acquired_rps: div(self.acquired as f64, span_s),
            success_latency_p50_ms: self.success_latency.quantile(0.5) * 1e-6,
            success_latency_p99_ms: self.success_latency.quantile(0.99) * 1e-6,
            success_latency_max_ms: self.success_latency.max() as f64 * 1e-6,
            timer_lateness_mean_us: self.timer_lateness.mean() * 1e-3,
            mutex_starving_frac: div(self.mutex_stats.starving_ns as f64 * 1e-9, span_s),
            mutex_starvation_entries: self.mutex_stats.starvation_entries as f64,
            mutex_barges: self.mutex_stats.barges as f64,
            mutex_lifo_requeues: self.mutex_stats.lifo_requeues as f64,
            mutex_spins: self.mutex_stats.spins as f64,
            mutex_handoffs: self.mutex_stats.handoffs as f64,
            wake_delay_mean_us: div(self.wake_ns as f64 * 1e-3, self.wakes as f64),
            runnable_max: self.runnable_max as f64,
            waitlist_drain_s: self.drain_ns as f64 * 1e-9,
        }
    }
}

/// The replay artifacts of a run: `timeline.csv` (per bucket: arrivals, acquisitions by the
/// instant `Get` returned, timeouts, waitlist length max and at the bucket's end), and the
/// chart `waitlist.png`/`.svg` of the waitlist length over time, with the stage boundaries
/// and the end of arrivals marked.
pub fn artifacts(t: &Timeline, stage_ends: &[crate::sim::SimTime]) -> Vec<crate::model::Artifact> {
    use crate::chart::{ChartData, Curve, CurvePoint, MarkLine};
    use std::fmt::Write;
    let w = t.width_ns as f64 * 1e-9;
    let mut csv = String::from(
        "t_start_s,t_end_s,arrivals_per_s,acquired_per_s,timeouts_per_s,waitlist_max,waitlist_end\n",
    );
    let (mut depth, mut acq) = (vec![], vec![]);
    for (i, b) in t.buckets.iter().enumerate() {
        let x0 = i as f64 * w;
        let _ = writeln!(
            csv,
            "{x0:.3},{:.3},{},{},{},{},{}",
            x0 + w,
            b.arrivals as f64 / w,
            b.acquired as f64 / w,
            b.timeouts as f64 / w,
            b.depth_max,
            b.depth_end
        );
        depth.push(CurvePoint {
            x: x0 + w,
            y: b.depth_end as f64,
            band: None,
        });
        acq.push(CurvePoint {
            x: x0 + w,
            y: b.acquired as f64 / w,
            band: None,
        });
    }
    let marks: Vec<MarkLine> = stage_ends
        .iter()
        .enumerate()
        .map(|(k, e)| MarkLine::V {
            x: e.as_secs_f64(),
            label: if k + 1 == stage_ends.len() {
                "arrivals stop".into()
            } else {
                format!("end of stage {}", k + 1)
            },
        })
        .collect();
    let chart = |title: &str, y: &str, label: &str, points: Vec<CurvePoint>| ChartData {
        title: title.into(),
        x_label: "time (s)".into(),
        y_label: y.into(),
        log_x: false,
        log_y: false,
        curves: vec![Curve {
            label: label.into(),
            points,
            series_x: None,
        }],
        marks: marks.clone(),
    };
    vec![
        crate::model::Artifact::Text {
            name: "timeline.csv".into(),
            text: csv,
        },
        crate::model::Artifact::Chart {
            name: "waitlist".into(),
            data: chart(
                "Waitlist length over time, through and after the stages",
                "waiters linked (end of each bucket)",
                "waitlist length",
                depth,
            ),
        },
        crate::model::Artifact::Chart {
            name: "acquisitions".into(),
            data: chart(
                "Acquisitions per second, by the instant Get returned",
                "Get calls returning a connection per second",
                "acquisitions/s",
                acq,
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_within_bucket_error() {
        let mut h = LogHistogram::default();
        for v in 1..=100_000u64 {
            h.add(v * 1000);
        }
        for q in [0.5, 0.9, 0.99] {
            let exact = q * 100_000.0 * 1000.0;
            assert!((h.quantile(q) - exact).abs() / exact < 0.035, "q {q}");
        }
        assert_eq!(h.max(), 100_000_000);
    }
}
