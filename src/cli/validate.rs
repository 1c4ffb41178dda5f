//! `vtsim validate`: a model or experiment file parsed and checked, nothing written.

use anyhow::Result;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vtsim::experiment::files::{file_kind, model_source, FileKind};

/// The flags of `vtsim validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {
    /// The file (RON), or `builtin:NAME`.
    file: PathBuf,
}

/// Checks the file and prints one `ok:` line describing it.
pub fn run(args: ValidateArgs) -> Result<ExitCode> {
    validate(&args.file).map(|()| ExitCode::SUCCESS)
}

fn validate(file: &Path) -> Result<()> {
    let (path, text) = model_source(file)?;
    match file_kind(&path, &text)? {
        FileKind::Model => {
            let m = vtsim::experiment::parse_model(&path, &text)?;
            let defs = m.world.metric_defs();
            println!(
                "ok: model `{}` ({}), {} metrics: {}",
                m.name,
                m.world.kind(),
                defs.len(),
                defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
            );
        }
        FileKind::Experiment => {
            let plan = vtsim::experiment::plan::plan_from_text(&path, &text)?;
            println!(
                "ok: experiment `{}`: model `{}` ({}), {} points x {} replicates = {} runs, {} charts",
                plan.experiment.name,
                plan.model.name,
                plan.model_path.display(),
                plan.points.len(),
                plan.replicates(),
                plan.jobs(),
                plan.experiment.charts.len()
            );
        }
    }
    Ok(())
}
