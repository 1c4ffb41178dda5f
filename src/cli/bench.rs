//! `vtsim bench`: the kernel measurement and the sweep-scaling measurement.

use super::bad;
use anyhow::Result;
use std::process::ExitCode;

/// The flags of `vtsim bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Events per hold-model measurement (1 to 1e8).
    #[arg(long, default_value_t = 5_000_000)]
    events: u64,
    /// Skip the sweep-scaling measurement.
    #[arg(long)]
    kernel_only: bool,
}

/// Measures and prints the report on stdout.
pub fn run(args: BenchArgs) -> Result<ExitCode> {
    bench(args.events, args.kernel_only).map(|()| ExitCode::SUCCESS)
}

fn bench(events: u64, kernel_only: bool) -> Result<()> {
    vtsim::bench::check_events(events).map_err(bad)?;
    vtsim::bench::report(events, kernel_only, &mut std::io::stdout().lock())?;
    Ok(())
}
