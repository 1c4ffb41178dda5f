//! `vtsim merge`: the shard outputs of an experiment joined into a single-machine run's files.

use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;
use vtsim::experiment::plan::load_plan;
use vtsim::experiment::runner::default_out;
use vtsim::report::merge;

/// The flags of `vtsim merge`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// The experiment file the shards ran.
    experiment: PathBuf,
    /// Output directory holding shards/ [default: notebooks-out/<experiment name>].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Merges the shards and says where.
pub fn run(args: MergeArgs) -> Result<ExitCode> {
    let MergeArgs { experiment, out } = args;
    let plan = load_plan(&experiment)?;
    let out = out.unwrap_or_else(|| default_out(&plan.experiment.name));
    merge(&plan, &out)?;
    eprintln!("vtsim: merged shards into {}", out.display());
    Ok(ExitCode::SUCCESS)
}
