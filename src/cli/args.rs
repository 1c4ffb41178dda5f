//! The top-level parser: [`Cli`] and its subcommands, each holding its module's flags. Each
//! subcommand's doc line is its one line in `vtsim --help`; the longer story is in its own
//! help (`after_help` beside its flags).

use super::advise::AdviseArgs;
use super::bench::BenchArgs;
use super::diff::DiffArgs;
use super::fit::FitArgs;
use super::merge::MergeArgs;
use super::replay::ReplayArgs;
use super::run::RunArgs;
use super::validate::ValidateArgs;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "vtsim",
    version,
    about = "Deterministic discrete-event simulator of Vitess / MySQL fleet timing contracts"
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
// Parsed once per process; the size of the advise variant does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Cmd {
    /// Run a sweep: every (point, replicate) of EXPERIMENT, written to notebooks-out/<name>/.
    Run(RunArgs),
    /// Fit a rollout model to an incident's logs, or model a VitessCluster (--cluster alone).
    Fit(FitArgs),
    /// Run one replicate of a model and print its metrics and trace digest.
    Replay(ReplayArgs),
    /// Compare two JSONL traces (`replay --trace`): exit 1 if they differ, 0 if they are equal.
    Diff(DiffArgs),
    /// Join the shard outputs of EXPERIMENT into the files of a single-machine run.
    Merge(MergeArgs),
    /// Parse and check a model or experiment file; write nothing.
    Validate(ValidateArgs),
    /// The smallest (or largest) knob value whose metric clears a target at 95 % (docs/advise.md).
    Advise(AdviseArgs),
    /// Measure the kernel (hold model vs a bare BinaryHeap) and sweep scaling.
    Bench(BenchArgs),
}

/// A seed: decimal, or hex with `0x` (as `replay` prints it).
pub fn parse_seed(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
        None => t.replace('_', "").parse::<u64>(),
    };
    r.map_err(|_| format!("`{s}`: a seed is a number from 0 to 2^64 - 1, decimal or 0x hex"))
}
