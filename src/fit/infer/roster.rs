//! The roster: every tablet the vtgate logs name, its shard, the host it was first
//! seen on and whether it was the primary then; and the shards.

use super::FitResult;
use crate::fit::parse::{Alias, Said, VtgateLog};
use std::collections::{BTreeMap, BTreeSet};

/// Where a tablet was when the logs first name it.
#[derive(Clone, Debug)]
pub(super) struct FirstSeen {
    /// The earliest line naming it on a known host (ns, Unix).
    pub at: i64,
    /// That host (its old pod's address).
    pub host: String,
    /// It was the shard's primary then.
    pub primary: bool,
}

/// The tablets and shards the logs name.
pub(super) struct Roster {
    /// Each tablet's shard (`keyspace/shard`).
    pub shard_of: BTreeMap<Alias, String>,
    /// Each tablet's first sighting.
    pub first_seen: BTreeMap<Alias, FirstSeen>,
    /// The shards, in name order.
    pub shards: Vec<String>,
}

/// The roster of `logs`. Reads: every `Adding`, `Removing`, stream-error and serving-change
/// line (the tablet record it carries). Infers: the original host and primary of each tablet
/// (its earliest line with a host). Fails when no log has a discovery line.
pub(super) fn roster(logs: &[VtgateLog]) -> FitResult<Roster> {
    let mut shard_of: BTreeMap<Alias, String> = BTreeMap::new();
    let mut first_seen: BTreeMap<Alias, FirstSeen> = BTreeMap::new();
    for l in logs {
        for x in &l.lines {
            let (alias, host, ks, primary) = match &x.said {
                Said::Adding(r) | Said::Removing(r) | Said::StreamError(r) => (
                    r.alias.clone(),
                    r.host.clone().unwrap_or_default(),
                    format!("{}/{}", r.keyspace, r.shard),
                    r.primary,
                ),
                Said::Serving {
                    alias,
                    host,
                    keyspace_shard,
                    primary,
                    ..
                } => (
                    alias.clone(),
                    host.clone(),
                    keyspace_shard.clone(),
                    *primary,
                ),
                _ => continue,
            };
            shard_of.entry(alias.clone()).or_insert(ks);
            let e = first_seen.entry(alias).or_insert(FirstSeen {
                at: x.t,
                host: host.clone(),
                primary,
            });
            if x.t < e.at && !host.is_empty() {
                *e = FirstSeen {
                    at: x.t,
                    host,
                    primary,
                };
            }
        }
    }
    if shard_of.is_empty() {
        return Err(format!(
            "{}: no discovery lines (Adding / Removing tablet, HealthCheckUpdate) in any vtgate \
             log: nothing to fit",
            logs[0].path.display()
        ));
    }
    let shards: BTreeSet<String> = shard_of.values().cloned().collect();
    let shards: Vec<String> = shards.into_iter().collect();
    Ok(Roster {
        shard_of,
        first_seen,
        shards,
    })
}
