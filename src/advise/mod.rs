//! `vtsim advise`: the smallest (or largest) value of any model's knob whose metric clears a
//! target at 95 %, decided sequentially with a stated error, within a budget, with common
//! random numbers. The presets ([`rollout`]) are this engine with the knob, metric and target
//! of a real question filled in (`docs/advise.md`).
//!
//! # The search
//! The candidates are the knob's values `A, A+S, …, B` (`--range A..B --step S`). They are
//! scanned from the unsafe end (`--direction min`: smallest first; `max`: largest first) and
//! the scan stops at the first candidate that *clears* the target: its answer is that value.
//!
//! # The sequential test and its error
//! A candidate runs replicates in batches whose sizes double: it is looked at after `b, 2b,
//! 4b, …` runs up to `--max-runs` (`K` looks at most). At each look it gets an interval of
//! the metric (Wilson for a 0/1 metric, Student t for a value) and is decided as soon as the
//! interval lies wholly on one side of the target: *clears* or *misses*; at the last look
//! without a decision it is *undecided* (treated as not clearing). Peeking `K` times at `C`
//! candidates is paid for with a Bonferroni split: every interval is computed at level
//! `1 − α / (C · K)` with `α` = 5 %, so with probability at least 95 % every interval of the
//! whole search covers its candidate's true value at once, and then every decision is right:
//! the answer truly clears the target (and every candidate reported as missing truly misses)
//! with probability ≥ 95 %, however many looks were taken. (For a value metric the t interval
//! is the usual normal approximation of a mean.) `tests/advise.rs` checks the error rate by
//! simulation on Bernoulli and normal cases whose truth is known, against naive peeking.
//!
//! # Common random numbers and the budget
//! Replicate `r` has the seed `replicate_seed(seed, r)` at every candidate, so neighbouring
//! candidates differ by the knob, not by luck. The whole search stops when the next batch
//! would exceed `--budget` runs; the answer then says so.

pub mod connpool;
pub mod fleet;
pub mod frontier;
pub mod proxysql;
pub mod rollout;
pub mod site_poller;

mod ask;
mod engine;
mod knob;
mod render;
mod search;

pub use ask::{prepare, prepare_with, run_one, run_one_ticked, Ask, ModelSampler, SearchBudget};
pub use engine::{ending_word, search, search_with, Decision, Ending, Outcome, Sample, Tested};
pub use knob::{KnobKind, KnobValue};
pub use render::{answer_cells, num, pct, preset_doc, render, show, to_json};
pub use search::{
    alpha, alpha_per_look, alpha_per_look_at, default_max_runs, default_max_runs_at, looks,
    zero_event_runs, Direction, Search, Want,
};

/// Most candidates one search may scan.
pub const MAX_CANDIDATES: u64 = 1000;
/// Most runs one candidate may take (`--max-runs`).
pub const MAX_RUNS_PER_CANDIDATE: u64 = 10_000_000;
/// Most runs one search may take in all (`--budget`).
pub const MAX_BUDGET: u64 = 1_000_000_000;
/// The budget when none is given: two million runs (about half an hour of the default rollout
/// model on two cores; a typical search takes a few percent of it).
pub const DEFAULT_BUDGET: u64 = 2_000_000;
/// The version of the `--json` document ([`to_json`]); bumped on any incompatible change.
pub const JSON_VERSION: u32 = 1;
