//! `vtsim diff`: two JSONL traces compared, the first differing record shown with its context.

use super::bad;
use anyhow::Result;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vtsim::experiment::error::io_words;
use vtsim::tracediff;

/// The flags of `vtsim diff`.
#[derive(clap::Args)]
#[command(
    after_help = "It prints the first differing record with the --context records before it."
)]
pub struct DiffArgs {
    /// The first trace.
    a: PathBuf,
    /// The second trace.
    b: PathBuf,
    /// Records of context shown before the first difference (at most 100).
    #[arg(long, default_value_t = 3)]
    context: usize,
}

/// Compares the traces: exit 0 when equal, 1 when they differ.
pub fn run(args: DiffArgs) -> Result<ExitCode> {
    diff(&args.a, &args.b, args.context)
}

fn diff(a: &Path, b: &Path, context: usize) -> Result<ExitCode> {
    if context > tracediff::MAX_CONTEXT {
        return Err(bad(format!(
            "--context {context}: at most {}",
            tracediff::MAX_CONTEXT
        )));
    }
    let open = |p: &Path| {
        File::open(p).map_err(|e| bad(format!("{}: cannot read: {}", p.display(), io_words(&e))))
    };
    let (fa, fb) = (open(a)?, open(b)?);
    let (na, nb) = (a.display().to_string(), b.display().to_string());
    let mut ra = tracediff::Reader::new(na.clone(), fa);
    let mut rb = tracediff::Reader::new(nb.clone(), fb);
    let o = tracediff::compare(&mut ra, &mut rb, context).map_err(|e| bad(e.to_string()))?;
    print!("{}", tracediff::render(&o, [&na, &nb]));
    Ok(if o.same() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
