//! `vtsim replay`: one run of a model, with `--set` overrides, a JSONL trace, the run's files
//! (`--out`) and the determinism check (`--check`). The command line parses and prints; the
//! work is here.

use crate::experiment::error::{io_words, plain_words, BadInput};
use crate::experiment::files::{file_kind, model_source, FileKind};
use crate::experiment::plan::{with_overrides, OverrideError};
use crate::experiment::ModelFile;
use crate::model::{Artifact, RunOptions, RunOutput, WorldSpec};
use crate::sim::Trace;
use crate::tracediff;
use anyhow::{bail, Result};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// An I/O failure, with the file and the OS error in plain words.
fn io_fail(what: &str, path: &Path, e: &std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("{what} {}: {}", path.display(), io_words(e))
}

fn bad(m: impl Into<String>) -> anyhow::Error {
    BadInput(m.into()).into()
}

/// Load a model named on the command line (a file or `builtin:NAME`), refusing an experiment
/// file with a hint to run it instead.
pub fn load_model(arg: &Path) -> Result<ModelFile> {
    let (path, text) = model_source(arg)?;
    if let Ok(FileKind::Experiment) = file_kind(&path, &text) {
        return Err(bad(format!(
            "{}: an experiment file; replay runs a model file (or `builtin:NAME`); run an \
             experiment with `vtsim run {}`",
            path.display(),
            path.display()
        )));
    }
    Ok(crate::experiment::parse_model(&path, &text)?)
}

/// `world` with the command line's `--set PATH=VALUE` overrides applied in order (VALUE is
/// RON, or else a bare string) and checked. The error (bad input) names the override.
pub fn with_sets(world: &WorldSpec, sets: &[String]) -> Result<WorldSpec> {
    if sets.is_empty() {
        return Ok(world.clone());
    }
    let mut parsed = Vec::with_capacity(sets.len());
    for s in sets {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| bad(format!("--set `{s}`: expected PATH=VALUE")))?;
        let value: serde_json::Value = ron::from_str(v)
            .or_else(|_| ron::from_str(&format!("\"{v}\"")))
            .map_err(|e| bad(format!("--set `{s}`: {e}")))?;
        parsed.push((k.to_string(), value));
    }
    with_overrides(world, &parsed).map_err(|e| match e {
        OverrideError::At(i, m) => bad(format!("--set `{}`: {m}", sets[i])),
        OverrideError::Whole(m) => bad(format!("--set: {m}")),
    })
}

/// The version of the `replay --json` document (schema `vtsim.replay`, `docs/outputs.md`).
pub const JSON_VERSION: u32 = 1;

/// A metric value in a sensible precision: integers as integers, else six significant
/// digits (trailing zeros dropped), scientific below 1e-4 and from 1e9.
pub fn fmt_metric(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let a = v.abs();
    if !(1e-4..1e9).contains(&a) {
        return format!("{v:.5e}");
    }
    let decimals = (5 - a.log10().floor() as i32).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A model's report without the lines that only repeat a metric (`  name   value`) or the
/// digest, and without a heading those lines leave empty, so that `replay` prints each
/// metric once (in its own list, with [`fmt_metric`]).
pub fn report_without_metrics(report: &str, out: &RunOutput) -> String {
    let names: Vec<&str> = out.metric_defs().iter().map(|d| d.name).collect();
    let repeats = |line: &str| {
        let mut t = line.split_whitespace();
        match (t.next(), t.next(), t.next()) {
            (Some(k), Some(v), None) => {
                (names.contains(&k) && v.parse::<f64>().is_ok())
                    || (k == "digest" && v == out.digest)
            }
            _ => false,
        }
    };
    let lines: Vec<&str> = report.lines().collect();
    let mut keep: Vec<bool> = lines.iter().map(|l| !repeats(l)).collect();
    for i in 0..lines.len() {
        if keep[i] && lines[i].trim_end().ends_with(':') {
            let mut j = i + 1;
            while j < lines.len() && !keep[j] {
                j += 1;
            }
            if j > i + 1 && lines.get(j).is_none_or(|l| l.trim().is_empty()) {
                keep[i] = false;
            }
        }
    }
    let mut out_lines: Vec<&str> = vec![];
    for (l, k) in lines.iter().zip(keep) {
        let blank = l.trim().is_empty();
        if k && !(blank && out_lines.last().is_none_or(|p| p.trim().is_empty())) {
            out_lines.push(l);
        }
    }
    while out_lines.last().is_some_and(|l| l.trim().is_empty()) {
        out_lines.pop();
    }
    out_lines.join("\n")
}

/// The `replay --json` document: the model, the seed (hex, and decimal as a string so that
/// no JSON reader rounds it), every metric by name, events, digest and files.
pub fn to_json(
    name: &str,
    world: &WorldSpec,
    seed: u64,
    r: &Replayed,
    trace: Option<&Path>,
    wrote: &[PathBuf],
) -> serde_json::Value {
    let out = &r.output;
    let metrics: serde_json::Map<String, serde_json::Value> = world
        .metric_defs()
        .iter()
        .zip(&out.metrics)
        .map(|(d, v)| {
            (
                d.name.to_string(),
                if v.is_finite() {
                    serde_json::json!(v)
                } else {
                    serde_json::Value::Null
                },
            )
        })
        .collect();
    serde_json::json!({
        "schema": "vtsim.replay",
        "version": JSON_VERSION,
        "vtsim": env!("CARGO_PKG_VERSION"),
        "model": {"name": name, "kind": world.kind()},
        "seed": format!("{seed:#018x}"),
        "seed_decimal": seed.to_string(),
        "metrics": metrics,
        "events": out.events,
        "digest": out.digest,
        "trace": trace.map(|p| p.display().to_string()),
        "wrote": wrote.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "deterministic_records": r.checked_records,
    })
}

/// What [`replay`] did.
pub struct Replayed {
    /// The run's output (with its report).
    pub output: RunOutput,
    /// With `check`: the records the three runs agreed on.
    pub checked_records: Option<u64>,
}

/// Run `world` once with `seed` and its report, writing the JSONL trace to `trace` when
/// given; with `check`, run it three times and compare (see [`check_determinism`]). A failed
/// trace write is in the output's `trace_error` (see [`trace_failure`]).
pub fn replay(world: &WorldSpec, seed: u64, trace: Option<&Path>, check: bool) -> Result<Replayed> {
    let (output, checked_records) = if check {
        let (out, records) = check_determinism(world, seed, trace)?;
        (out, Some(records))
    } else {
        let trace_sink = match trace {
            Some(p) => Trace::with_jsonl(
                File::create(p).map_err(|e| io_fail("cannot create the trace file", p, &e))?,
            ),
            None => Trace::digest_only(),
        };
        let out = world.run(
            seed,
            RunOptions {
                trace: trace_sink,
                report: true,
            },
        );
        (out, None)
    };
    Ok(Replayed {
        output,
        checked_records,
    })
}

/// The error for a trace that could not be written to `path`, if writing it failed.
pub fn trace_failure(out: &RunOutput, path: &Path) -> Result<()> {
    if let Some(e) = &out.trace_error {
        bail!("writing the trace {}: {}", path.display(), plain_words(e));
    }
    Ok(())
}

/// Create the folder `replay --out DIR` writes into.
pub fn create_out_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| io_fail("cannot create the folder", dir, &e))
}

/// Write a run's artifacts into `dir` (text files as they are, charts as PNG and SVG);
/// returns the files written, in order (a chart's PNG stands for both).
pub fn write_artifacts(out: &RunOutput, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut written = vec![];
    for a in &out.artifacts {
        match a {
            Artifact::Text { name, text } => {
                let p = dir.join(name);
                write_file(&p, text.as_bytes())?;
                written.push(p);
            }
            Artifact::Chart { name, data } => {
                crate::chart::draw_files(data, dir, name).map_err(|e| {
                    anyhow::anyhow!(
                        "cannot draw the chart {}: {e:#}",
                        dir.join(format!("{name}.png")).display()
                    )
                })?;
                written.push(dir.join(format!("{name}.png")));
            }
        }
    }
    Ok(written)
}

/// Write `bytes` to `path` through `path.partial` and a rename, naming the file on failure.
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    if let Err(e) = std::fs::write(&tmp, bytes) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_fail("cannot write", path, &e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_fail("cannot write", path, &e)
    })
}

/// A trace file for `--check`: a fresh file in the temp folder, unlinked at once (the open
/// handles keep it until the run is compared, and nothing is left behind), as (writer, reader).
fn scratch_trace(k: usize) -> Result<(File, File)> {
    let dir = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let p = dir.join(format!(
        "vtsim-check-{}-{k}-{nanos}.jsonl",
        std::process::id()
    ));
    let w = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&p)
        .map_err(|e| io_fail("cannot create the scratch trace", &p, &e))?;
    let r = w
        .try_clone()
        .map_err(|e| io_fail("cannot reopen the scratch trace", &p, &e))?;
    let _ = std::fs::remove_file(&p);
    Ok((w, r))
}

/// Run `seed` three times (twice here, once on another thread at the same time as the
/// second) and compare traces, metrics, digest and report. Returns run 1's output and the
/// number of records, or an error naming the first difference.
pub fn check_determinism(
    world: &WorldSpec,
    seed: u64,
    trace: Option<&Path>,
) -> Result<(RunOutput, u64)> {
    let run = |w: &WorldSpec, f: File| {
        w.run(
            seed,
            RunOptions {
                trace: Trace::with_jsonl(f),
                report: true,
            },
        )
    };
    // Run 1 alone, into the user's --trace file when there is one.
    let (w1, r1) = match trace {
        Some(p) => {
            let w = File::create(p).map_err(|e| io_fail("cannot create the trace file", p, &e))?;
            let r = File::open(p).map_err(|e| io_fail("cannot read the trace file", p, &e))?;
            (w, r)
        }
        None => scratch_trace(1)?,
    };
    let o1 = run(world, w1);
    let (w2, r2) = scratch_trace(2)?;
    let (w3, r3) = scratch_trace(3)?;
    let other = world.clone();
    let handle = std::thread::Builder::new()
        .name("vtsim-check".into())
        .spawn(move || {
            other.run(
                seed,
                RunOptions {
                    trace: Trace::with_jsonl(w3),
                    report: true,
                },
            )
        })
        .map_err(|e| anyhow::anyhow!("cannot start a thread: {}", io_words(&e)))?;
    let o2 = run(world, w2);
    let o3 = handle
        .join()
        .map_err(|_| anyhow::anyhow!("the run on another thread panicked"))?;
    let scratch = format!("a scratch file in {}", std::env::temp_dir().display());
    let run1_file = trace.map_or(scratch.clone(), |p| p.display().to_string());
    for (name, o, file) in [
        ("run 1", &o1, &run1_file),
        ("run 2", &o2, &scratch),
        ("run 3 (another thread)", &o3, &scratch),
    ] {
        if let Some(e) = &o.trace_error {
            bail!(
                "--check: {name}: writing the trace {file}: {}",
                plain_words(e)
            );
        }
    }
    let mut records = 0;
    for (name, r, o) in [("run 2", r2, &o2), ("run 3 (another thread)", r3, &o3)] {
        let mut a = r1
            .try_clone()
            .map_err(|e| anyhow::anyhow!("cannot reread the trace of run 1: {}", io_words(&e)))?;
        a.seek(SeekFrom::Start(0))
            .map_err(|e| anyhow::anyhow!("cannot reread the trace of run 1: {}", io_words(&e)))?;
        let mut b = r;
        b.seek(SeekFrom::Start(0))
            .map_err(|e| anyhow::anyhow!("cannot reread the trace of {name}: {}", io_words(&e)))?;
        let mut ra = tracediff::Reader::new("run 1", a);
        let mut rb = tracediff::Reader::new(name, b);
        let outcome =
            tracediff::compare(&mut ra, &mut rb, 3).map_err(|e| anyhow::anyhow!("{e}"))?;
        match outcome {
            tracediff::Outcome::Same { records: n } => records = n,
            other => bail!(
                "not deterministic: seed {seed}: the traces of run 1 and {name} differ\n{}",
                tracediff::render(&other, ["run 1", name]).trim_end()
            ),
        }
        let mut diffs = vec![];
        if o.digest != o1.digest {
            diffs.push(format!("digest {} vs {}", o1.digest, o.digest));
        }
        if o.events != o1.events {
            diffs.push(format!("events {} vs {}", o1.events, o.events));
        }
        let defs = world.metric_defs();
        for (i, (x, y)) in o1.metrics.iter().zip(&o.metrics).enumerate() {
            if x.to_bits() != y.to_bits() {
                let n = defs.get(i).map(|d| d.name).unwrap_or("?");
                diffs.push(format!("metric {n} {x} vs {y}"));
            }
        }
        if o.metrics.len() != o1.metrics.len() {
            diffs.push(format!(
                "{} metrics vs {}",
                o1.metrics.len(),
                o.metrics.len()
            ));
        }
        if o.report != o1.report {
            diffs.push("the report text".into());
        }
        if !diffs.is_empty() {
            bail!(
                "not deterministic: seed {seed}: run 1 and {name} have equal traces but differ in: {}",
                diffs.join("; ")
            );
        }
    }
    Ok((o1, records))
}

/// `replay --emit-logs DIR`: write what the real components would print for the run of
/// `model` (with `sets`) and `seed` (default: the file's, else 1) into `dir`
/// ([`crate::fit::emit`]); rollout models only.
pub fn emit_logs(
    model: &Path,
    seed: Option<u64>,
    sets: &[String],
    dir: &Path,
    format: crate::fit::emit::LogFormat,
) -> Result<Vec<PathBuf>> {
    let mf = load_model(model)?;
    let seed = seed.or(mf.seed).unwrap_or(1);
    match with_sets(&mf.world, sets)? {
        WorldSpec::Rollout(p) => crate::fit::emit::emit(&p, seed, dir, format),
        other => Err(bad(format!(
            "--emit-logs: only rollout models have logs to emit ({} is a {} model)",
            model.display(),
            other.kind()
        ))),
    }
}
