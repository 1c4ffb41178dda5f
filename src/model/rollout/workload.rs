//! The workload (`docs/rollout.md` "Workload"): Poisson replica reads and primary writes through
//! each
//! vtgate, spread uniformly over shards.
//!
//! - *Fast mode*: the routing state of a (vtgate, shard) is constant between events, so the
//!   queries of an interval of length L are Poisson(rate × L) ("simulate state changes, not
//!   every query"): one draw per interval that fails queries (no serving replica, a write
//!   outage the buffer does not ride out), whose counts the exposures and bursts need; the
//!   queries that succeed only add up, and a sum of independent Poisson counts of one rate is
//!   the Poisson count of the summed time, so the successful reads are one draw when the run
//!   ends, over the time every route spent serving them, and so are the successful writes.
//!   The counts are independent of the route's path (no count changes a state), so that
//!   draw has exactly the distribution of the per-interval draws' sum.
//! - *Per-query mode*: one event per query, which looks at the routing state when it arrives.
//!
//! Writes during a primary outage are buffered (`enable_buffer`); if the outage lasts longer
//! than `buffer_max_failover_duration` every write of the outage fails (the buffer gives up and
//! fails what it holds), else they all succeed late.
//!
//! Holds each (vtgate, shard) [`Route`] (its routing state and open intervals), the closed
//! [`Exposure`]s, and [`Workload`]: the counters, the summed ok time and the vtgates'
//! workload streams.

use super::event::Event;
use super::params::{RolloutParams, WorkloadMode};
use crate::sim::rng::{below, exponential, poisson, LazyRng};
use crate::sim::{Draws, Scheduler, SimDuration, SimTime, TraceRecord};

/// Routing state of one (vtgate, shard) and the open intervals of the workload accounting.
#[derive(Clone, Copy)]
pub struct Route {
    /// 0 = a replica read succeeds, 1 = it is routed to a dead tablet, 2 = no healthy tablet.
    pub read: u8,
    /// Start of the current read-state interval.
    pub(crate) read_since: SimTime,
    /// Start of the current exposure (read ≠ 0).
    pub(crate) exp_start: SimTime,
    /// Routed-to-dead errors in the current exposure.
    pub(crate) exp_dead: u64,
    /// No-healthy-tablet errors in the current exposure.
    pub(crate) exp_none: u64,
    /// A primary write can be served.
    pub write_ok: bool,
    /// Start of the current write-state interval.
    pub(crate) write_since: SimTime,
    /// Writes buffered in the current primary outage (per-query mode).
    pub(crate) pending_writes: u64,
    /// Views of this route that count as a believed replica, a live believed replica and a
    /// live primary, in the 16-bit lanes 0, 1 and 2 ([`super::routing::lanes`]):
    /// [`Net::route_state`](super::routing::Net::route_state) from these is O(1).
    pub(crate) counts: u64,
}

impl Route {
    /// A route at time zero: reads succeed, writes succeed, nothing open (the constructor's
    /// and the reset's start state).
    pub(crate) const START: Route = Route {
        read: 0,
        read_since: SimTime::ZERO,
        exp_start: SimTime::ZERO,
        exp_dead: 0,
        exp_none: 0,
        write_ok: true,
        write_since: SimTime::ZERO,
        pending_writes: 0,
        counts: 0,
    };
}

/// One exposure interval of one (vtgate, shard): no replica read can succeed.
#[derive(Clone, Copy, Debug)]
pub struct Exposure {
    /// vtgate.
    pub g: u16,
    /// shard.
    pub shard: u16,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
    /// Reads routed to a tablet that had died before the vtgate noticed.
    pub dead_errors: u64,
    /// Reads failed with "no healthy tablet available".
    pub none_errors: u64,
}

/// The workload's state: the query counters, the summed ok time, the closed exposures and
/// each vtgate's workload stream. The routes whose intervals it closes are the world's
/// (`RolloutWorld::routes`), lent to each call.
pub struct Workload {
    /// Successful replica reads.
    pub(crate) reads_ok: u64,
    /// Reads routed to a dead tablet.
    pub(crate) reads_dead: u64,
    /// Reads with no healthy tablet.
    pub(crate) reads_none: u64,
    /// Successful primary writes.
    pub(crate) writes_ok: u64,
    /// Time (ns) summed over every closed read interval in which a route had a serving
    /// replica: the successful reads are one Poisson draw over it when the run ends. (A
    /// `u128`: routes × run length can pass 2^64 ns in a large, long run.)
    pub(crate) ok_read_ns: u128,
    /// Time (ns) summed over every closed write interval with a primary or in an outage the
    /// buffer rides out: the successful writes are one Poisson draw over it when the run
    /// ends.
    pub(crate) ok_write_ns: u128,
    /// Failed primary writes.
    pub(crate) writes_failed: u64,
    /// Replica reads per second per (vtgate, shard).
    pub(crate) read_rate_s: f64,
    /// Primary writes per second per (vtgate, shard).
    pub(crate) write_rate_s: f64,
    /// Per-query mode.
    pub(crate) per_query: bool,
    /// Closed exposure intervals.
    pub(crate) exposures: Vec<Exposure>,
    /// Each vtgate's workload stream (`"workload"`, index).
    pub(crate) rngs: Vec<LazyRng>,
    /// Shards (the routes of a vtgate): route `idx` is (vtgate `idx / shards`, shard
    /// `idx % shards`).
    pub(crate) shards: usize,
}


impl Workload {
    /// The workload of `p` at time zero, its streams from `seed`.
    pub(crate) fn new(p: &RolloutParams, seed: u64) -> Workload {
        let (m, s_n) = (p.vtgates as usize, p.shards as usize);
        Workload {
            reads_ok: 0,
            reads_dead: 0,
            reads_none: 0,
            writes_ok: 0,
            ok_read_ns: 0,
            ok_write_ns: 0,
            writes_failed: 0,
            read_rate_s: p.workload.replica_read_rps / s_n as f64,
            write_rate_s: p.workload.primary_write_rps / s_n as f64,
            per_query: p.workload.mode == WorkloadMode::PerQuery,
            exposures: Vec::with_capacity(m),
            rngs: (0..m)
                .map(|g| LazyRng::new(seed, "workload", g as u32))
                .collect(),
            shards: s_n,
        }
    }

    /// Per-query mode: vtgate `g`'s first replica read and first primary write (in that
    /// order), drawn from its workload stream; `None` for a query kind with no rate.
    pub(crate) fn first_queries(
        &mut self,
        g: usize,
        p: &RolloutParams,
    ) -> (Option<SimTime>, Option<SimTime>) {
        let (rr, wr) = (p.workload.replica_read_rps, p.workload.primary_write_rps);
        let rng = &mut self.rngs[g];
        let read = (rr > 0.0).then(|| {
            SimTime::ZERO + SimDuration::from_secs_f64(exponential(rng.get(), 1.0 / rr))
        });
        let write = (wr > 0.0).then(|| {
            SimTime::ZERO + SimDuration::from_secs_f64(exponential(rng.get(), 1.0 / wr))
        });
        (read, write)
    }

    /// Close the read interval of route `idx` at `now`; the new state is `new`. Fast mode: the
    /// reads of an interval with a serving replica succeed, and its time joins the one draw
    /// of [`Self::finish`]; those of an interval without one fail, a Poisson count and a draw
    /// record (`workload`, route, `reads_dead` / `reads_none`, count, interval length in ns).
    pub(crate) fn close_read(
        &mut self,
        now: SimTime,
        routes: &mut [Route],
        idx: usize,
        new: u8,
        d: &mut Draws<'_>,
    ) {
        let g = idx / self.shards;
        let (read, len) = {
            let r = &routes[idx];
            (r.read, now.since(r.read_since).as_nanos())
        };
        if !self.per_query && self.read_rate_s > 0.0 {
            if read == 0 {
                self.ok_read_ns += len as u128;
            } else if len > 0 {
                let kind = if read == 1 { "reads_dead" } else { "reads_none" };
                let n = self.count(g, idx as u32, kind, self.read_rate_s, len, d);
                let r = &mut routes[idx];
                if read == 1 {
                    self.reads_dead += n;
                    r.exp_dead += n;
                } else {
                    self.reads_none += n;
                    r.exp_none += n;
                }
            }
        }
        let r = &mut routes[idx];
        if r.read == 0 && new != 0 {
            r.exp_start = now;
            r.exp_dead = 0;
            r.exp_none = 0;
        } else if r.read != 0 && new == 0 {
            self.exposures.push(Exposure {
                g: g as u16,
                shard: (idx % self.shards) as u16,
                start: r.exp_start,
                end: now,
                dead_errors: r.exp_dead,
                none_errors: r.exp_none,
            });
        }
        r.read = new;
        r.read_since = now;
    }

    /// Close the write interval of route `idx` at `now`; the new state is `ok`. Fast mode:
    /// the writes of an interval with a primary, and those of an outage the buffer rides out
    /// (`enable_buffer`, not longer than `buffer_max_failover_duration`), all succeed, and
    /// their time joins the one draw of [`Self::finish`]; the writes of an outage that fails
    /// are a Poisson count, a draw record (`workload`, route, `writes_failed`, count,
    /// interval length in ns). Per-query mode: the writes the outage held fail or succeed
    /// the same way.
    pub(crate) fn close_write(
        &mut self,
        now: SimTime,
        routes: &mut [Route],
        idx: usize,
        ok: bool,
        p: &RolloutParams,
        d: &mut Draws<'_>,
    ) {
        let g = idx / self.shards;
        let r = &routes[idx];
        let (was_ok, len) = (r.write_ok, now.since(r.write_since));
        let v = &p.vtgate;
        let fails = !was_ok && (!v.enable_buffer || len > v.buffer_max_failover_duration);
        if self.per_query {
            if !was_ok {
                let r = &mut routes[idx];
                if fails {
                    self.writes_failed += r.pending_writes;
                } else {
                    self.writes_ok += r.pending_writes;
                }
                r.pending_writes = 0;
            }
        } else if self.write_rate_s > 0.0 {
            if !fails {
                self.ok_write_ns += len.as_nanos() as u128;
            } else if len > SimDuration::ZERO {
                let ns = len.as_nanos();
                let n = self.count(g, idx as u32, "writes_failed", self.write_rate_s, ns, d);
                self.writes_failed += n;
            }
        }
        let r = &mut routes[idx];
        r.write_ok = ok;
        r.write_since = now;
    }

    /// The shard of one query (per-query mode); with several shards the pick is a draw record
    /// (`workload`, vtgate, `shard`, shard).
    fn pick_shard(&mut self, g: usize, s: &mut Scheduler<Event>) -> usize {
        let n = self.shards;
        if n == 1 {
            0
        } else {
            let shard = below(self.rngs[g].get(), n as u64) as usize;
            s.draw(&TraceRecord {
                component: "workload",
                index: g as u32,
                kind: "shard",
                a: shard as u64,
                b: 0,
            });
            shard
        }
    }

    /// One replica read (per-query mode).
    pub(crate) fn on_read(
        &mut self,
        now: SimTime,
        g: usize,
        routes: &mut [Route],
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let shard = self.pick_shard(g, s);
        let idx = g * self.shards + shard;
        let r = &mut routes[idx];
        match r.read {
            0 => self.reads_ok += 1,
            1 => {
                self.reads_dead += 1;
                r.exp_dead += 1;
            }
            _ => {
                self.reads_none += 1;
                r.exp_none += 1;
            }
        }
        let mean = 1.0 / p.workload.replica_read_rps;
        let d = exponential(self.rngs[g].get(), mean);
        s.at(
            now + SimDuration::from_secs_f64(d),
            Event::Read { g: g as u16 },
        );
    }

    /// One primary write (per-query mode).
    pub(crate) fn on_write(
        &mut self,
        now: SimTime,
        g: usize,
        routes: &mut [Route],
        p: &RolloutParams,
        s: &mut Scheduler<Event>,
    ) {
        let shard = self.pick_shard(g, s);
        let idx = g * self.shards + shard;
        let r = &mut routes[idx];
        if r.write_ok {
            self.writes_ok += 1;
        } else {
            r.pending_writes += 1;
        }
        let mean = 1.0 / p.workload.primary_write_rps;
        let d = exponential(self.rngs[g].get(), mean);
        s.at(
            now + SimDuration::from_secs_f64(d),
            Event::Write { g: g as u16 },
        );
    }

    /// Close every open interval at the end of the run (an exposure still open ends here).
    /// Its draws go to the trace: call it before the run's digest is taken.
    pub(crate) fn finish(&mut self, routes: &mut [Route], p: &RolloutParams, d: &mut Draws<'_>) {
        let now = d.now();
        // What `close_read` and `close_write` draw for (the same conditions): without it, an
        // interval in the state it closes to has nothing to count or record, and closing it
        // only moves its start (done here, without the calls).
        let reads_drawn = !self.per_query && self.read_rate_s > 0.0;
        let writes_drawn = !self.per_query && self.write_rate_s > 0.0;
        for idx in 0..routes.len() {
            let r = &mut routes[idx];
            if !reads_drawn && r.read == 0 {
                r.read_since = now;
            } else {
                self.close_read(now, routes, idx, 0, d);
            }
            let r = &mut routes[idx];
            if !writes_drawn && r.write_ok {
                r.write_since = now;
            } else {
                self.close_write(now, routes, idx, true, p, d);
            }
        }
        // The successful reads, then the successful writes: one count each over their summed
        // time, from vtgate 0's workload stream.
        if reads_drawn {
            self.reads_ok += self.draw_ok("reads_ok", self.read_rate_s, self.ok_read_ns, d);
        }
        if writes_drawn {
            self.writes_ok += self.draw_ok("writes_ok", self.write_rate_s, self.ok_write_ns, d);
        }
    }

    /// The successful queries over `ns` of the routes' summed time at `rate` a second: one
    /// count (`workload`, high bits, `kind`, count, low bits: [`ok_time`]); none for 0 ns.
    fn draw_ok(&mut self, kind: &'static str, rate: f64, ns: u128, d: &mut Draws<'_>) -> u64 {
        if ns == 0 {
            return 0;
        }
        let (hi, lo, secs) = ok_time(ns);
        self.poisson_record(0, hi, kind, rate * secs, lo, d)
    }

    /// The queries of `ns` nanoseconds at `rate` a second, a Poisson count from vtgate `g`'s
    /// workload stream, and its draw record (`workload`, `index`, `kind`, count, `ns`).
    fn count(
        &mut self,
        g: usize,
        index: u32,
        kind: &'static str,
        rate: f64,
        ns: u64,
        d: &mut Draws<'_>,
    ) -> u64 {
        self.poisson_record(g, index, kind, rate * SimDuration(ns).as_secs_f64(), ns, d)
    }

    /// A Poisson count of mean `mean` from vtgate `g`'s workload stream, and its draw record
    /// (`workload`, `index`, `kind`, count, `b`).
    fn poisson_record(
        &mut self,
        g: usize,
        index: u32,
        kind: &'static str,
        mean: f64,
        b: u64,
        d: &mut Draws<'_>,
    ) -> u64 {
        let n = poisson(self.rngs[g].get(), mean);
        d.draw(&TraceRecord {
            component: "workload",
            index,
            kind,
            a: n,
            b,
        });
        n
    }
}

/// A summed time of `ns` nanoseconds as its record's words and its seconds: (bits above 64,
/// the low 64 bits, seconds). Below 2^64 ns (584 years; a sum over many routes of a long run
/// can pass it) that is (0, ns, the seconds of a [`SimDuration`] of ns).
fn ok_time(ns: u128) -> (u32, u64, f64) {
    let (hi, lo) = ((ns >> 64) as u32, ns as u64);
    if hi == 0 {
        (0, lo, SimDuration(lo).as_secs_f64())
    } else {
        (hi, lo, ns as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summed_time_past_2_to_the_64_ns_is_kept_whole() {
        assert_eq!(ok_time(0), (0, 0, 0.0));
        let s = ok_time(1_500_000_000);
        assert_eq!((s.0, s.1), (0, 1_500_000_000));
        assert_eq!(s.2.to_bits(), 1.5f64.to_bits());
        let max = u64::MAX as u128;
        assert_eq!(ok_time(max).2, SimDuration(u64::MAX).as_secs_f64());
        // One nanosecond past: the high word carries, the seconds keep growing.
        let (hi, lo, secs) = ok_time(max + 1);
        assert_eq!((hi, lo), (1, 0));
        assert_eq!(secs, 18_446_744_073.709_553);
        // 5e6 routes (the most a model validates) for 2^64 ns each.
        let big = 5_000_000u128 << 64;
        let (hi, lo, secs) = ok_time(big);
        assert_eq!((hi as u128) << 64 | lo as u128, big);
        assert!((secs / (5e6 * 18_446_744_073.709_553) - 1.0).abs() < 1e-15);
    }
}
