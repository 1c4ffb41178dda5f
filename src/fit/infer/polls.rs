//! The topology reads: each vtgate's poll instants (its start-up line and every
//! record change it logged) and its shard reloads after a PRS, kept apart.

use crate::fit::parse::{Said, VtgateLog};

/// Each vtgate's topology reads (model order), ns since the Unix epoch.
pub(super) struct Polls {
    /// Per vtgate: its poll instants (a change within 1 ms of the previous is the same poll).
    pub polls: Vec<Vec<i64>>,
    /// Per vtgate: its shard reloads (a reload's changes, within 100 ms, are not polls).
    pub reloads: Vec<Vec<i64>>,
}

/// The topology reads of `logs`. Reads: the `Start`, `Adding`, `Removing` and `Reload` lines.
pub(super) fn polls(logs: &[VtgateLog]) -> Polls {
    let mut polls: Vec<Vec<i64>> = vec![];
    let mut reloads: Vec<Vec<i64>> = vec![];
    for l in logs {
        let rl: Vec<i64> = l
            .lines
            .iter()
            .filter(|x| matches!(x.said, Said::Reload(_)))
            .map(|x| x.t)
            .collect();
        let mut ps: Vec<i64> = l
            .lines
            .iter()
            .filter(|x| matches!(x.said, Said::Start(_) | Said::Adding(_) | Said::Removing(_)))
            .map(|x| x.t)
            .filter(|t| !rl.iter().any(|r| *t >= *r && *t - *r <= 100_000_000))
            .collect();
        ps.dedup_by(|a, b| (*a - *b).abs() <= 1_000_000);
        polls.push(ps);
        reloads.push(rl);
    }
    Polls { polls, reloads }
}
