//! The drains: each restarted tablet's SIGTERM (the `Deleted Pod` event, else its
//! first serving `true => false` line on its old host), the primary's PRS from its serving
//! changes, and the fit's time zero.

use super::kube::KubeEvidence;
use super::roster::Roster;
use super::FitResult;
use crate::fit::names::NS;
use crate::fit::parse::{Alias, Said, VtgateLog};
use std::collections::BTreeMap;
use std::path::Path;

/// One serving change of a tablet, as a vtgate logged it.
pub(super) struct Change {
    /// When (ns, Unix).
    pub t: i64,
    /// The host it came from.
    pub host: String,
    /// Serving before.
    pub from: bool,
    /// Serving after.
    pub to: bool,
    /// As the primary.
    pub primary: bool,
    /// The health stream's last word (the tablet is being removed).
    pub finalize: bool,
}

/// Per tablet, the serving changes seen by any vtgate (every host), in time order.
pub(super) fn serving_changes(logs: &[VtgateLog]) -> BTreeMap<Alias, Vec<Change>> {
    let mut changes: BTreeMap<Alias, Vec<Change>> = BTreeMap::new();
    for l in logs {
        for x in &l.lines {
            if let Said::Serving {
                alias,
                host,
                from,
                to,
                primary,
                finalize,
                ..
            } = &x.said
            {
                changes.entry(alias.clone()).or_default().push(Change {
                    t: x.t,
                    host: host.clone(),
                    from: *from,
                    to: *to,
                    primary: *primary,
                    finalize: *finalize,
                });
            }
        }
    }
    for v in changes.values_mut() {
        v.sort_by_key(|c| c.t);
    }
    changes
}

/// A restarted tablet, before `health_stream_delay` is known.
pub(super) struct Drain {
    /// Its alias.
    pub alias: Alias,
    /// The host of its old pod.
    pub old_host: String,
    /// Its first serving `true => false` line on the old host (for the primary: the first
    /// after its PRS); else the SIGTERM event's instant (ns, Unix).
    pub drain_line: i64,
    /// The `Deleted Pod` event: its instant and resolution (ns).
    pub drain_ev: Option<(i64, i64)>,
    /// For the original primary: the PRS start (its serving `true => false` as PRIMARY) and
    /// end (`false => true` as REPLICA), as logged (ns, Unix).
    pub prs: Option<(i64, i64)>,
}

/// The restarted tablets, in roster (alias) order. Reads: each tablet's serving changes on its
/// old host (not the finalizing ones) and its `Deleted Pod` event. A tablet with neither a
/// `true => false` line nor an event is not a restart.
pub(super) fn drains(
    roster: &Roster,
    changes: &BTreeMap<Alias, Vec<Change>>,
    kube: &KubeEvidence,
) -> Vec<Drain> {
    let mut raws = vec![];
    for (alias, seen) in &roster.first_seen {
        let (host0, primary0) = (&seen.host, &seen.primary);
        let ch = changes.get(alias).map(Vec::as_slice).unwrap_or(&[]);
        let on_old = |c: &&Change| c.host == *host0 && !c.finalize;
        let mut prs = None;
        let drain_line = if *primary0 {
            let s = ch
                .iter()
                .filter(on_old)
                .find(|c| c.from && !c.to && c.primary);
            let e = s.and_then(|s| {
                ch.iter()
                    .filter(on_old)
                    .find(|c| c.t > s.t && !c.from && c.to && !c.primary)
            });
            if let (Some(s), Some(e)) = (s, e) {
                prs = Some((s.t, e.t));
            }
            e.and_then(|e| {
                ch.iter()
                    .filter(on_old)
                    .find(|c| c.t > e.t && c.from && !c.to)
                    .map(|c| c.t)
            })
        } else {
            ch.iter()
                .filter(on_old)
                .find(|c| c.from && !c.to)
                .map(|c| c.t)
        };
        let drain_ev = kube.drains.get(&alias.uid).copied();
        let Some(drain_line) = drain_line.or(drain_ev.map(|d| d.0)) else {
            continue;
        };
        raws.push(Drain {
            alias: alias.clone(),
            old_host: host0.clone(),
            drain_line,
            drain_ev,
            prs,
        });
    }
    raws
}

/// The restarted tablets in drain order, with what places them on the fit's clock.
pub(super) struct Drains {
    /// The restarts, in SIGTERM order.
    pub list: Vec<Drain>,
    /// `health_stream_delay` (ns): a serving change reaches the vtgates this long after the
    /// SIGTERM.
    pub hsd: i64,
    /// The coarsest line resolution of the logs (ns).
    pub res: i64,
    /// The fit's time zero (ns, Unix): a whole second, at least 1 s before the first release.
    pub t0: i64,
}

impl Drains {
    /// Sort `list` by SIGTERM and set time zero. Fails when nothing restarted (`first_log`
    /// names the input in the message).
    pub(super) fn new(list: Vec<Drain>, hsd: i64, res: i64, first_log: &Path) -> FitResult<Self> {
        let mut d = Drains {
            list,
            hsd,
            res,
            t0: 0,
        };
        let mut list = std::mem::take(&mut d.list);
        list.sort_by_key(|r| d.drain_of(r).0);
        d.list = list;
        if d.list.is_empty() {
            return Err(format!(
                "{}: no tablet restart in the logs (no serving true => false line and no \
                 `Deleted Pod` event): nothing to fit",
                first_log.display()
            ));
        }
        // Time zero: a whole second, at least 1 s before the first release.
        let first_release = d.list.iter().map(|r| d.release_of(r)).min().unwrap_or(0);
        d.t0 = first_release.div_euclid(NS) * NS - NS;
        Ok(d)
    }

    /// The SIGTERM of `r` and its half-width (ns, Unix): the event's, else its first
    /// `true => false` line minus `hsd`.
    pub(super) fn drain_of(&self, r: &Drain) -> (i64, i64) {
        match r.drain_ev {
            Some((t, res_e)) => (t, res_e / 2),
            None => (r.drain_line - self.hsd, self.res),
        }
    }

    /// The operator's release of `r` (ns, Unix): its SIGTERM, or for the primary its PRS start
    /// when earlier.
    pub(super) fn release_of(&self, r: &Drain) -> i64 {
        r.prs.map_or(self.drain_of(r).0, |p| {
            (p.0 - self.hsd).min(self.drain_of(r).0)
        })
    }

    /// The PRS of `alias`'s shard, if `alias` restarted and its PRS shows: start and end since
    /// time zero (the logged changes minus `hsd`).
    pub(super) fn prs_of(&self, alias: &Alias) -> Option<(i64, i64)> {
        let raw_p = self.list.iter().find(|r| r.alias == *alias);
        raw_p
            .and_then(|r| r.prs)
            .map(|(a, b)| (a - self.hsd - self.t0, b - self.hsd - self.t0))
    }
}
