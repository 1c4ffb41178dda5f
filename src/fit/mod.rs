//! `vtsim fit PATH... --out MODEL.ron [--refresh-interval D]`: an incident's logs into a
//! rollout model that replays it (`docs/fit.md`), and its inverse,
//! `vtsim replay --emit-logs` ([`emit`]).
//!
//! [`parse`] recognises each input by its content; [`infer`] turns them into parameters
//! (every value with its resolution, censored ones marked); [`report`] writes the fit report
//! (text, CSV and a chart: observed vs replayed discovery lags and bursts per vtgate, with residuals).

pub mod cluster;
mod cluster_api;
pub mod emit;
pub mod hygiene;
pub mod infer;
mod kubectl;
pub mod names;
pub mod parse;
pub mod report;
pub mod totals;

use crate::experiment::ModelFile;
use crate::model::WorldSpec;
use std::path::{Path, PathBuf};

pub use infer::{fit, Fit, FitOptions};

/// Why `vtsim fit` failed: bad input (exit 2) or an output that could not be written.
#[derive(Debug)]
pub enum FitError {
    /// The inputs: the message names the file and line.
    Input(String),
    /// Writing an output.
    Output(String),
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitError::Input(m) | FitError::Output(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FitError {}

/// Read `paths` (files or folders), fit, and return the fit with the model file's text.
pub fn fit_paths(paths: &[PathBuf], opts: &FitOptions) -> Result<(Fit, String), FitError> {
    let files = parse::expand(paths).map_err(|e| FitError::Input(e.to_string()))?;
    if files.is_empty() {
        return Err(FitError::Input("no input files".into()));
    }
    let (inputs, mut tidied) = hygiene::read_all(&files).map_err(FitError::Input)?;
    let (inputs, done) = hygiene::tidy(inputs);
    tidied.extend(done);
    let mut fitted = fit(&inputs, opts).map_err(FitError::Input)?;
    // What the hygiene did comes first among the warnings: it shapes everything after.
    tidied.append(&mut fitted.warnings);
    fitted.warnings = tidied;
    let text = model_text(&fitted);
    Ok((fitted, text))
}

/// The model file of a fit: a comment header (inputs, what is inferred and how well, the
/// gaps), then `Model(..)`.
pub fn model_text(f: &Fit) -> String {
    use ron::extensions::Extensions;
    let mf = ModelFile {
        name: "fitted-incident".into(),
        description: format!(
            "fitted by vtsim fit from {} input(s): {} vtgates, {} restarts",
            f.inputs.len(),
            f.vtgates.len(),
            f.restarts.len()
        ),
        seed: Some(1),
        world: WorldSpec::Rollout(f.params.clone()),
    };
    let cfg = ron::ser::PrettyConfig::new()
        .extensions(Extensions::IMPLICIT_SOME | Extensions::UNWRAP_VARIANT_NEWTYPES);
    let body = named(ron::ser::to_string_pretty(&mf, cfg).expect("a model serialises"));
    let mut out = String::new();
    out.push_str("// Written by `vtsim fit` (docs/fit.md). Inputs:\n");
    for i in &f.inputs {
        out.push_str(&format!("//   {i}\n"));
    }
    out.push_str(&format!(
        "// Time zero: {} (UTC). vtgates in model order: {}.\n",
        names::rfc3339_nano(f.t0),
        f.vtgates.join(", ")
    ));
    if !f.tablets.is_empty() {
        let t: Vec<String> = f
            .tablets
            .iter()
            .map(|a| a.as_ref().map_or("?".into(), |a| a.to_string()))
            .collect();
        out.push_str(&format!(
            "// Tablets in model order (per shard: the primary, then replicas in restart order): {}.\n",
            t.join(", ")
        ));
    }
    out.push_str(
        "// Durations are Observed samples replayed in order (tablets by model index, operator \
         steps by shard and step).\n",
    );
    for w in &f.warnings {
        out.push_str(&format!("// gap: {w}\n"));
    }
    out.push_str(&body);
    out.push('\n');
    out
}

/// `vtsim fit --cluster FILE`: the model text of a VitessCluster file's shape and flags, and
/// the warnings (what was assumed).
pub fn cluster_model(path: &Path) -> Result<(RolloutFromCluster, String), FitError> {
    let text = crate::io::read_to_string(path).map_err(|e| FitError::Input(e.to_string()))?;
    let c = cluster::read(path, &text).map_err(FitError::Input)?;
    let mf = ModelFile {
        name: format!("{}-cluster", c.name),
        description: format!(
            "the shape and vtgate flags of VitessCluster {} ({}): {} cells, {} vtgates, {} \
             shard(s) of {} tablets; timings are the rollout defaults",
            c.name,
            path.display(),
            c.params.cells.len(),
            c.params.vtgates,
            c.params.shards,
            c.params.replicas_per_shard + 1
        ),
        seed: None,
        world: WorldSpec::Rollout(c.params.clone()),
    };
    use ron::extensions::Extensions;
    let cfg = ron::ser::PrettyConfig::new()
        .extensions(Extensions::IMPLICIT_SOME | Extensions::UNWRAP_VARIANT_NEWTYPES);
    let body = named(ron::ser::to_string_pretty(&mf, cfg).expect("a model serialises"));
    let mut out = format!(
        "// Written by `vtsim fit --cluster {}` (docs/fit.md): the cluster's cells, vtgates,\n\
         // tablet pools and vtgate flags; every timing is the rollout default (docs/rollout.md).\n",
        path.display()
    );
    for w in &c.warnings {
        out.push_str(&format!("// assumed: {w}\n"));
    }
    out.push_str(&body);
    out.push('\n');
    Ok((c, out))
}

/// `(name: ..)` as `Model(name: ..)`, the form `vtsim validate` recognises (and shipped
/// model files use).
fn named(body: String) -> String {
    match body.find("\n(") {
        Some(i) => format!("{}\nModel({}", &body[..i], &body[i + 2..]),
        None if body.starts_with('(') => format!("Model{body}"),
        None => body,
    }
}

/// What [`cluster_model`] read.
pub type RolloutFromCluster = cluster::ClusterFit;

/// `vtsim fit`: fit `paths`, write the model to `out` and the report beside it
/// (`<out stem>.fit.txt`, `.fit.csv`, `.fit.png` and `.fit.svg`); returns the report text, the files written, and whether the replay gives the logged errors
/// ([`totals`]: `vtsim fit` exits 3 when it does not).
pub fn run(
    paths: &[PathBuf],
    out: &Path,
    opts: &FitOptions,
) -> Result<(String, Vec<PathBuf>, bool), FitError> {
    let (fitted, text) = fit_paths(paths, opts)?;
    // The model must load back exactly as written (and validate).
    crate::experiment::files::parse_model(out, &text)
        .map_err(|e| FitError::Output(format!("the fitted model does not load back: {e}")))?;
    let (mut report_text, csv) = report::render(&fitted);
    let check = totals::totals(&fitted);
    report_text.push_str(&check.render());
    let stem = out.with_extension("");
    let txt = PathBuf::from(format!("{}.fit.txt", stem.display()));
    let csvp = PathBuf::from(format!("{}.fit.csv", stem.display()));
    // The chart first: a chart that cannot be drawn leaves no model or report behind.
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let chart_stem = format!(
        "{}.fit",
        stem.file_name().and_then(|s| s.to_str()).unwrap_or("model")
    );
    std::fs::create_dir_all(dir)
        .map_err(|e| FitError::Output(format!("{}: cannot create: {e}", dir.display())))?;
    report::draw_chart(&fitted, dir, &chart_stem)
        .map_err(|e| FitError::Output(format!("drawing the fit chart: {e:#}")))?;
    let mut written = vec![];
    for (p, body) in [
        (out.to_path_buf(), text),
        (txt, report_text.clone()),
        (csvp, csv),
    ] {
        crate::io::write_atomic(&p, body.as_bytes())
            .map_err(|e| FitError::Output(e.to_string()))?;
        written.push(p);
    }
    for ext in ["png", "svg"] {
        written.push(PathBuf::from(format!("{}.fit.{ext}", stem.display())));
    }
    Ok((report_text, written, check.agree()))
}
