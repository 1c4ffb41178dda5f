//! The sweep runner: jobs = (point, replicate), run with rayon, written in job order.
//!
//! - Job `j` is point `j / R`, replicate `j % R`, seeded with `replicate_seed(seed, j % R)`:
//!   every point reuses the same seeds (common random numbers).
//! - Results are written in job order, whatever order the threads finish in, so every output
//!   file is identical for any `--threads`.
//! - `--shard K/N` runs jobs `j` with `j % N == K − 1` into `<out>/shards/K-of-N/runs.csv`,
//!   and records in `shard.json` the BLAKE3 of that file and of every block of
//!   [`BLOCK_ROWS`] rows. `vtsim merge` interleaves the shards back into the single-machine
//!   `runs.csv` and finalises it with the same code as an unsharded run, so the files are
//!   byte-identical.
//! - Rows stream to `runs.csv.partial` as chunks complete (memory stays flat as replicates
//!   grow); `--resume` keeps its verified complete rows and goes on from there.
//!
//! # What is verified
//! Every row read back (a partial file on `--resume`, a shard's `runs.csv` in `merge`, the
//! finished `runs.csv` when the outputs are computed) is parsed as a CSV record (a quoted
//! label may hold commas, quotes or line breaks) and checked against the plan: its job is the
//! next one expected, its point, replicate and seed are the ones job `j` derives
//! (`j / R`, `j % R`, `replicate_seed(seed, j % R)`), its labels are that point's, its
//! metrics, event count and digest are written exactly as vtsim writes them, and the record's
//! bytes are the ones vtsim's CSV writer gives for those fields. A shard's rows must also hash
//! to what `shard.json` recorded; where a block does not, its rows are simulated again to name
//! the row and field that changed. The first row of every shard and of a resumed partial file
//! is simulated again on this machine and must match byte for byte (a shard run by a different
//! build is caught there). A failed check is an error (exit code 1) naming the file and the
//! row, and nothing is replaced.
//!
//! # The output set is replaced whole
//! An unsharded run or a merge builds every output (`runs.csv`, `points.csv`,
//! `summary.json`, charts, `index.html`) in a staging folder beside the target,
//! `<parent>/.<name>.staging/`, on the same file system, then swaps it with the target in one
//! step (Linux `renameat2(RENAME_EXCHANGE)`; elsewhere, or where the file system cannot
//! exchange, two renames through `<parent>/.<name>.old/`, a window in which the target name
//! is briefly missing and that the next run repairs). Entries of the target that are not
//! vtsim outputs (`shards/`, or a file a user put there) are moved into the staging folder
//! just before the swap, so they are kept. A running unsharded run keeps its
//! `runs.csv.partial` and `run-state.json` in the target until the swap (the staged `runs.csv`
//! is a hard link to the finished partial file), so a kill at any moment before the swap
//! leaves a resumable run; after the swap they go with the old set. On any failure the staging
//! folder is removed (after moving the kept entries back); one left by a kill is cleaned up
//! (kept entries restored) by the next run or merge into that folder.
//!
//! # Locks
//! `<parent>/.<name>.lock` guards a folder: an unsharded run or a merge holds it exclusively,
//! a shard run holds it shared (shards run side by side, but not beside a run or merge into the
//! same folder), and a shard run also holds `<out>/shards/K-of-N/.lock` exclusively. The locks
//! are `flock(2)` locks, released by the operating system when the holder exits or is killed;
//! an exclusive holder writes its pid, host, command line and start time into the lock file
//! (JSON) and removes the file when it is done. A refused run exits with code 2 naming the
//! holder and the lock file. On a file system that cannot lock (`ENOLCK`, `EOPNOTSUPP`: some
//! network file systems) the run goes on without the lock and says so on stderr.
//!
//! # Resuming
//! `--resume` keeps the verified complete rows of `runs.csv.partial` (an empty file or a torn
//! header is rewritten, a torn last row dropped, any other damaged row refused); when the
//! partial file is complete (a kill in the output phase) nothing is simulated. A shard already
//! finished (its `shard.json` and the hashes of its `runs.csv` agree with the plan) is left as
//! it is; one that no longer verifies is run again.
//!
//! # Test hooks
//! `VTSIM_ABORT_AFTER_JOBS=N` (read by the CLI) exits with code 3 once N jobs are written;
//! `VTSIM_ABORT_IN_OUTPUTS=1` exits with code 3 in the output phase, once `runs.csv` is
//! complete and `points.csv` and `summary.json` are staged (for a shard: once `runs.csv` is
//! renamed, before `shard.json`); `VTSIM_TEST_WAIT_FOR=FILE` makes a run wait, once it holds
//! its locks, until FILE exists (at most 60 s); `VTSIM_TEST_NO_EXCHANGE=1` makes the swap use
//! its two-rename fallback. Each simulates a kill, holds a lock or takes a path on purpose,
//! for the tests.

use super::plan::Plan;
use crate::io::{self, FileWriter, IoError, LockFile, LockRefused};
use crate::model::RunOptions;
use crate::report;
use crate::sim::rng::replicate_seed;
use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub use crate::io::write_atomic;

/// Rows per block hash in `shard.json`.
pub const BLOCK_ROWS: u64 = 64;

/// Longest CSV record read back (a longer one is damage, e.g. an unclosed quote).
const MAX_RECORD: usize = 16 << 20;

/// How to run a plan.
#[derive(Clone, Debug, Default)]
pub struct RunConfig {
    /// Worker threads (default: rayon's, i.e. the number of CPUs or `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
    /// Run only shard `(k, n)`, 1-based.
    pub shard: Option<(u64, u64)>,
    /// Keep the rows of an interrupted run and go on.
    pub resume: bool,
    /// Output directory (`notebooks-out/<experiment>/` by default).
    pub out: PathBuf,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Testing hook: exit with code 3 once this many jobs are written (a simulated kill).
    pub abort_after: Option<u64>,
}

/// What a finished run did.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Jobs this invocation simulated (excluding resumed ones).
    pub jobs_run: u64,
    /// Jobs found already done by `--resume` (verified, not simulated again).
    pub jobs_resumed: u64,
    /// Events handled by the jobs this invocation simulated.
    pub events: u64,
    /// Where the outputs are.
    pub dir: PathBuf,
    /// Wall seconds spent simulating (and writing rows).
    pub simulate_s: f64,
    /// Wall seconds spent on points, summary, charts and index (0 for a shard).
    pub finalize_s: f64,
}

/// Directory of shard `k` of `n` under `out`.
pub fn shard_dir(out: &Path, k: u64, n: u64) -> PathBuf {
    out.join("shards").join(format!("{k}-of-{n}"))
}

/// The `runs.csv` header for a plan.
pub fn runs_header(plan: &Plan) -> Vec<String> {
    let mut h: Vec<String> = ["job", "point", "replicate", "seed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    h.extend(plan.columns.iter().cloned());
    h.extend(plan.kept_defs().iter().map(|d| d.name.to_string()));
    h.push("events".into());
    h.push("digest".into());
    h
}

fn csv_line(fields: &[String]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(vec![]);
    w.write_record(fields).expect("write to memory");
    w.into_inner().expect("flush to memory")
}

/// Simulate job `j` and format its `runs.csv` row; also returns the events handled.
pub fn job_row(plan: &Plan, j: u64) -> (Vec<u8>, u64) {
    let reps = plan.replicates();
    let p = &plan.points[(j / reps) as usize];
    let s = replicate_seed(plan.experiment.seed, j % reps);
    let r = p.world.run(s, RunOptions::default());
    let mut f: Vec<String> = vec![
        j.to_string(),
        p.index.to_string(),
        (j % reps).to_string(),
        s.to_string(),
    ];
    f.extend(p.labels.iter().cloned());
    f.extend(plan.keep.iter().map(|&i| r.metrics[i].to_string()));
    f.push(r.events.to_string());
    f.push(r.digest);
    (csv_line(&f), r.events)
}

fn state_json(plan: &Plan, shard: Option<(u64, u64)>) -> String {
    serde_json::json!({
        "fingerprint": plan.fingerprint,
        "shard": shard.map(|(k, n)| format!("{k}/{n}")),
        "jobs": plan.jobs(),
    })
    .to_string()
}

// ---------------------------------------------------------------------------------------------
// Reading rows back

/// One CSV record as read from a file.
pub enum Record {
    /// A complete record: its bytes (ending in `\n`) and the line it starts on.
    Row(Vec<u8>, u64),
    /// The file ends inside a record (a kill tore the last write): its bytes.
    Torn(Vec<u8>),
    /// The file ends.
    End,
}

/// Reads a CSV file record by record, keeping each record's bytes: a record ends at a line
/// break outside quotes, so a quoted field may hold line breaks.
pub struct Records {
    r: BufReader<fs::File>,
    path: PathBuf,
    line: u64,
    offset: u64,
}

impl Records {
    /// Open `path`.
    pub fn open(path: &Path) -> Result<Self, IoError> {
        Ok(Records {
            r: BufReader::with_capacity(1 << 20, io::open(path)?),
            path: path.to_path_buf(),
            line: 1,
            offset: 0,
        })
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record.
    pub fn next_record(&mut self) -> Result<Record> {
        let mut buf = Vec::new();
        let mut quotes = 0usize;
        let start_line = self.line;
        loop {
            let from = buf.len();
            // Bounded: a damaged file with no line break does not fill memory.
            let room = (MAX_RECORD + 1).saturating_sub(buf.len()) as u64;
            let n = (&mut self.r)
                .take(room)
                .read_until(b'\n', &mut buf)
                .map_err(io::at("reading", &self.path))?;
            if buf.len() > MAX_RECORD {
                bail!(
                    "{}: the record starting on line {start_line} is longer than {} MiB \
                     (an unclosed quote, or not a runs.csv); the file is damaged",
                    self.path.display(),
                    MAX_RECORD >> 20
                );
            }
            if n == 0 {
                return Ok(if buf.is_empty() {
                    Record::End
                } else {
                    Record::Torn(buf)
                });
            }
            quotes += buf[from..].iter().filter(|b| **b == b'"').count();
            if buf.last() != Some(&b'\n') {
                return Ok(Record::Torn(buf));
            }
            self.line += 1;
            if quotes.is_multiple_of(2) {
                self.offset += buf.len() as u64;
                return Ok(Record::Row(buf, start_line));
            }
        }
    }
}

/// Split one CSV record (RFC 4180 quoting) into its fields.
fn split_fields(raw: &[u8]) -> Result<Vec<String>, String> {
    let body = raw.strip_suffix(b"\n").unwrap_or(raw);
    let mut fields = vec![];
    let mut i = 0;
    loop {
        let mut f = Vec::new();
        let last;
        if body.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match body.get(i) {
                    None => return Err(format!("field {} has no closing quote", fields.len() + 1)),
                    Some(b'"') if body.get(i + 1) == Some(&b'"') => {
                        f.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        f.push(c);
                        i += 1;
                    }
                }
            }
            match body.get(i) {
                None => last = true,
                Some(b',') => {
                    i += 1;
                    last = false;
                }
                Some(_) => {
                    return Err(format!(
                        "field {} has text after its closing quote",
                        fields.len() + 1
                    ))
                }
            }
        } else {
            let end = body[i..]
                .iter()
                .position(|&c| c == b',')
                .map_or(body.len(), |p| i + p);
            f.extend_from_slice(&body[i..end]);
            last = end == body.len();
            i = end + 1;
        }
        let s =
            String::from_utf8(f).map_err(|_| format!("field {} is not UTF-8", fields.len() + 1))?;
        fields.push(s);
        if last {
            return Ok(fields);
        }
    }
}

/// A CSV writer into a buffer that is reused from record to record.
struct CsvLine {
    buf: std::rc::Rc<std::cell::RefCell<Vec<u8>>>,
    w: csv::Writer<SharedBuf>,
}

struct SharedBuf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CsvLine {
    fn new() -> Self {
        let buf = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(SharedBuf(buf.clone()));
        CsvLine { buf, w }
    }
    /// Whether `raw` is exactly what vtsim's writer gives for `fields`.
    fn is(&mut self, fields: &[String], raw: &[u8]) -> bool {
        self.buf.borrow_mut().clear();
        self.w.write_record(fields).expect("write to memory");
        self.w.flush().expect("flush to memory");
        *self.buf.borrow() == raw
    }
}

/// The values of a verified row.
pub struct RowValues {
    /// The kept metrics, in header order.
    pub metrics: Vec<f64>,
    /// Events handled.
    pub events: u64,
    /// The run's trace digest.
    pub digest: String,
}

/// Checks rows against the plan: what job `j`'s row must say.
pub struct RowChecker<'a> {
    plan: &'a Plan,
    header: Vec<String>,
    line: CsvLine,
}

impl<'a> RowChecker<'a> {
    /// A checker for `plan`'s `runs.csv` rows.
    pub fn new(plan: &'a Plan) -> Self {
        RowChecker {
            plan,
            header: runs_header(plan),
            line: CsvLine::new(),
        }
    }

    /// The header bytes a `runs.csv` of this plan starts with.
    pub fn header_bytes(&self) -> Vec<u8> {
        csv_line(&self.header)
    }

    /// Check that `raw` (one record, with its `\n`) is job `j`'s row; return its values or
    /// what is wrong.
    pub fn check(&mut self, raw: &[u8], j: u64) -> Result<RowValues, String> {
        let plan = self.plan;
        if j >= plan.jobs() {
            return Err(format!(
                "there are only {} jobs, so no row should be here",
                plan.jobs()
            ));
        }
        let f = split_fields(raw)?;
        if f.len() != self.header.len() {
            return Err(format!(
                "{} fields, expected {} ({})",
                f.len(),
                self.header.len(),
                self.header.join(",")
            ));
        }
        let reps = plan.replicates();
        let (p, r) = (j / reps, j % reps);
        let seed = replicate_seed(plan.experiment.seed, r);
        let bad = |col: usize, want: &dyn std::fmt::Display, why: String| {
            format!(
                "`{}` is `{}`, expected `{want}`{why}",
                self.header[col], f[col]
            )
        };
        if !is_u64(&f[0], j) {
            return Err(bad(0, &j, String::new()));
        }
        if !is_u64(&f[1], p) {
            return Err(bad(1, &p, format!(" for job {j}")));
        }
        if !is_u64(&f[2], r) {
            return Err(bad(2, &r, format!(" for job {j}")));
        }
        if !is_u64(&f[3], seed) {
            return Err(bad(
                3,
                &seed,
                format!(
                    " for replicate {r} (experiment seed {})",
                    plan.experiment.seed
                ),
            ));
        }
        let labels = &plan.points[p as usize].labels;
        for (i, l) in labels.iter().enumerate() {
            if f[4 + i] != *l {
                return Err(bad(4 + i, l, format!(" at point {p}")));
            }
        }
        let m0 = 4 + labels.len();
        let nk = plan.keep.len();
        let mut metrics = Vec::with_capacity(nk);
        for (name, text) in self.header[m0..m0 + nk].iter().zip(&f[m0..m0 + nk]) {
            match text.parse::<f64>() {
                Ok(v) if v.to_string() == *text => metrics.push(v),
                _ => {
                    return Err(format!(
                        "`{name}` is `{text}`, not a number as vtsim writes one"
                    ))
                }
            }
        }
        let ev = m0 + nk;
        let events = match f[ev].parse::<u64>() {
            Ok(v) if is_u64(&f[ev], v) => v,
            _ => return Err(format!("`events` is `{}`, not a count", f[ev])),
        };
        let d = &f[ev + 1];
        if d.len() != 64
            || !d
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(format!("`digest` is `{d}`, not 64 lowercase hex digits"));
        }
        if !self.line.is(&f, raw) {
            return Err(
                "the fields are right but the record is not written the way vtsim writes it \
                 (quoting, spacing or line ending differ)"
                    .into(),
            );
        }
        let digest = f[ev + 1].clone();
        Ok(RowValues {
            metrics,
            events,
            digest,
        })
    }

    /// The first field in which `got` differs from `want` (both records), in words.
    pub fn difference(&self, got: &[u8], want: &[u8]) -> String {
        let (g, w) = (split_fields(got), split_fields(want));
        if let (Ok(g), Ok(w)) = (g, w) {
            for (i, (a, b)) in g.iter().zip(&w).enumerate() {
                if a != b {
                    let name = self.header.get(i).map_or("?", |s| s.as_str());
                    return format!("`{name}` is `{a}` in the file, `{b}` when simulated here");
                }
            }
        }
        "the record differs from the one simulated here".into()
    }
}

/// Whether `s` is `v` written as vtsim writes a count (decimal, no sign, no leading zero).
fn is_u64(s: &str, v: u64) -> bool {
    s.parse::<u64>() == Ok(v) && !s.starts_with('+') && (s.len() == 1 || !s.starts_with('0'))
}

/// Simulate job `j` again and compare with its row as read; `Err` says which field differs.
fn resimulate_matches(chk: &RowChecker, plan: &Plan, raw: &[u8], j: u64) -> Result<(), String> {
    let (want, _) = job_row(plan, j);
    if want == raw {
        Ok(())
    } else {
        Err(chk.difference(raw, &want))
    }
}

// ---------------------------------------------------------------------------------------------
// Output folders: locks, staging, swap

/// An output folder, by absolute parent and name (the staging folder and the lock live beside
/// it in the parent).
#[derive(Clone, Debug)]
pub struct OutDir {
    /// The folder.
    pub path: PathBuf,
    parent: PathBuf,
    name: OsString,
}

impl OutDir {
    /// Resolve `out` (creating its parent, not the folder itself).
    pub fn resolve(out: &Path) -> Result<OutDir> {
        let abs = if fs::symlink_metadata(out).is_ok() {
            if !out.is_dir() {
                bail!("{}: the output folder is not a folder", out.display());
            }
            fs::canonicalize(out).map_err(io::at("resolving", out))?
        } else {
            let name = out.file_name().ok_or_else(|| {
                anyhow!("{}: not a folder name to write outputs to", out.display())
            })?;
            let parent = match out.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            io::create_dir_all(parent)?;
            fs::canonicalize(parent)
                .map_err(io::at("resolving", parent))?
                .join(name)
        };
        let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) else {
            bail!(
                "{}: cannot write outputs to the root folder (the staging folder goes beside it)",
                out.display()
            );
        };
        Ok(OutDir {
            parent: parent.to_path_buf(),
            name: name.to_os_string(),
            path: abs.clone(),
        })
    }

    fn beside(&self, suffix: &str) -> PathBuf {
        let mut n = OsString::from(".");
        n.push(&self.name);
        n.push(suffix);
        self.parent.join(n)
    }
    /// `<parent>/.<name>.lock`.
    pub fn lock_path(&self) -> PathBuf {
        self.beside(".lock")
    }
    /// `<parent>/.<name>.staging`.
    pub fn staging_path(&self) -> PathBuf {
        self.beside(".staging")
    }
    /// `<parent>/.<name>.old` (only used where the swap falls back to two renames).
    pub fn old_path(&self) -> PathBuf {
        self.beside(".old")
    }
}

/// Whether an entry of an output folder belongs to the output set or a run's state (replaced
/// by the next set), as opposed to one that is kept across a swap (`shards/`, anything else).
pub fn is_output_entry(name: &str) -> bool {
    matches!(
        name,
        "runs.csv"
            | "points.csv"
            | "summary.json"
            | "index.html"
            | "runs.csv.partial"
            | "run-state.json"
    ) || name.ends_with(".png")
        || name.ends_with(".svg")
        || name.ends_with(".partial")
        // A temporary file of `write_atomic` left by a kill.
        || (name.starts_with('.') && name.contains(".tmp"))
}

/// Entries of `dir` that are kept across a swap.
fn kept_entries(dir: &Path) -> Result<Vec<OsString>> {
    let mut v = vec![];
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(v),
        Err(e) => return Err(IoError::new("listing", dir, e).into()),
    };
    for e in rd {
        let e = e.map_err(io::at("listing", dir))?;
        let name = e.file_name();
        if !is_output_entry(&name.to_string_lossy()) {
            v.push(name);
        }
    }
    v.sort();
    Ok(v)
}

/// Move the kept entries of a leftover folder `from` back into `out`, then remove `from`.
/// Refuses (and keeps `from`) when an entry exists in both.
fn restore_and_remove(from: &Path, out: &Path) -> Result<()> {
    if fs::symlink_metadata(from).is_err() {
        return Ok(());
    }
    let kept = kept_entries(from)?;
    if !kept.is_empty() {
        io::create_dir_all(out)?;
    }
    for name in kept {
        let (src, dst) = (from.join(&name), out.join(&name));
        if fs::symlink_metadata(&dst).is_ok() {
            bail!(
                "an interrupted run left {} and {} exists too; move one of them aside and \
                 run again",
                src.display(),
                dst.display()
            );
        }
        io::rename(&src, &dst)?;
    }
    io::remove_dir_all(from)?;
    Ok(())
}

/// Repair what a killed run or merge left beside `od` (call with the exclusive lock held).
fn recover(od: &OutDir) -> Result<()> {
    let old = od.old_path();
    // A fallback swap killed between its two renames: the old set is whole in `.old`.
    if fs::symlink_metadata(&od.path).is_err() && fs::symlink_metadata(&old).is_ok() {
        io::rename(&old, &od.path)?;
    }
    restore_and_remove(&od.staging_path(), &od.path)?;
    restore_and_remove(&old, &od.path)?;
    Ok(())
}

/// A staging folder for a new output set; removed (kept entries moved back) unless committed.
struct Staging {
    od: OutDir,
    path: PathBuf,
    committed: bool,
}

impl Staging {
    fn new(od: &OutDir) -> Result<Staging> {
        let path = od.staging_path();
        restore_and_remove(&path, &od.path)?;
        fs::create_dir(&path).map_err(io::at("creating the folder", &path))?;
        Ok(Staging {
            od: od.clone(),
            path,
            committed: false,
        })
    }

    /// Swap the staged set in for the target's; the kept entries move across.
    fn commit(mut self) -> Result<()> {
        let out = self.od.path.clone();
        io::create_dir_all(&out)?;
        io::sync_dir(&self.path)?;
        for name in kept_entries(&out)? {
            io::rename(&out.join(&name), &self.path.join(&name))?;
        }
        let exchange = std::env::var_os("VTSIM_TEST_NO_EXCHANGE").is_none();
        let old = if exchange && io::exchange(&self.path, &out)? {
            self.path.clone()
        } else {
            // Two renames: the target name is missing between them (a kill there is repaired
            // by `recover`, which puts `.old` back).
            let old = self.od.old_path();
            io::remove_dir_all(&old)?;
            io::rename(&out, &old)?;
            if let Err(e) = io::rename(&self.path, &out) {
                let _ = io::rename(&old, &out);
                return Err(e.into());
            }
            old
        };
        self.committed = true;
        io::sync_dir(&self.od.parent)?;
        if let Err(e) = io::remove_dir_all(&old) {
            eprintln!(
                "vtsim: warning: the new outputs are in place, but the previous ones are left in \
                 {}: {e}; the next run into {} removes them",
                old.display(),
                out.display()
            );
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            // `recover` also puts `.old` back should a fallback swap have failed half-way.
            if let Err(e) = recover(&self.od) {
                eprintln!("vtsim: warning: cleaning up {}: {e:#}", self.path.display());
            }
        }
    }
}

/// A file system that cannot lock: go on without the lock, saying so.
fn unlocked(e: IoError) -> Result<Option<LockFile>> {
    eprintln!(
        "vtsim: warning: {e}; going on without a lock: do not start another run or merge into \
         this folder until this one ends"
    );
    Ok(None)
}

/// Take `od`'s lock exclusively (an unsharded run or a merge), or shared (a shard run).
/// `None` where the file system cannot lock.
fn lock_out(od: &OutDir, exclusive: bool) -> Result<Option<LockFile>> {
    let p = od.lock_path();
    match LockFile::try_lock(&p, exclusive) {
        Ok(l) => Ok(Some(l)),
        Err(LockRefused::Unsupported(e)) => unlocked(e),
        Err(LockRefused::Io(e)) => Err(e.into()),
        Err(LockRefused::Held) => {
            let who = if LockFile::held_exclusively(&p) {
                format!("another vtsim ({})", holder_text(&p))
            } else {
                let shards = running_shards(&od.path);
                if shards.is_empty() {
                    "running shards".to_string()
                } else {
                    format!("running shards: {}", shards.join("; "))
                }
            };
            Err(super::InputError::file(
                &p,
                format!(
                    "{} is in use by {who}. Wait for it to finish or stop it (the lock goes \
                     with the process, so a killed run never leaves it held)",
                    od.path.display()
                ),
            )
            .into())
        }
    }
}

fn holder_text(lock: &Path) -> String {
    LockFile::holder(lock)
        .map(|h| h.to_string())
        .unwrap_or_else(|| "its details are not written yet".into())
}

/// The shard runs holding their shard locks under `out/shards/`.
fn running_shards(out: &Path) -> Vec<String> {
    let mut v = vec![];
    if let Ok(rd) = fs::read_dir(out.join("shards")) {
        let mut dirs: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            let l = d.join(".lock");
            if LockFile::held_exclusively(&l) {
                let name = d
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string();
                v.push(format!("shard {name} ({})", holder_text(&l)));
            }
        }
    }
    v
}

fn test_wait_hook() {
    if let Some(p) = std::env::var_os("VTSIM_TEST_WAIT_FOR") {
        let p = PathBuf::from(p);
        let t0 = std::time::Instant::now();
        while !p.exists() && t0.elapsed().as_secs() < 60 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Test hook: exit with code 3 in the output phase when `VTSIM_ABORT_IN_OUTPUTS` is set.
pub fn abort_in_outputs_hook(what: &str) {
    if std::env::var_os("VTSIM_ABORT_IN_OUTPUTS").is_some_and(|v| !v.is_empty() && v != "0") {
        eprintln!("vtsim: stopping in the output phase, {what} (VTSIM_ABORT_IN_OUTPUTS)");
        std::process::exit(3);
    }
}

// ---------------------------------------------------------------------------------------------
// Running

/// A resumed or fresh `runs.csv.partial`, open for appending.
struct Partial {
    w: FileWriter,
    done: u64,
}

/// Open `partial` to go on from its verified complete rows, or refuse saying what to do.
/// Jobs of this invocation are `k0 + i·n` for `i < mine`.
fn resume_partial(plan: &Plan, partial: &Path, (k0, n, mine): (u64, u64, u64)) -> Result<Partial> {
    let mut chk = RowChecker::new(plan);
    let header = chk.header_bytes();
    let refuse = |what: String| {
        anyhow!(
            "cannot resume from {}: {what}. Run again without --resume to start over",
            partial.display()
        )
    };
    let mut rec = Records::open(partial)?;
    // The header: whole, or torn by a kill before any row (an empty file included).
    let header_ok = match rec.next_record()? {
        Record::End => false,
        Record::Torn(b) if header.starts_with(&b) => false,
        Record::Row(b, _) if b == header => true,
        Record::Row(..) | Record::Torn(_) => {
            return Err(refuse(
                "its header is not this experiment's runs.csv header".into(),
            ))
        }
    };
    let mut done = 0u64;
    let mut keep = rec.offset();
    let mut first: Option<Vec<u8>> = None;
    if header_ok {
        loop {
            match rec.next_record()? {
                Record::End | Record::Torn(_) => break, // a torn last row is dropped
                Record::Row(b, line) => {
                    if done >= mine {
                        return Err(refuse(format!(
                            "row {} (line {line}) is beyond the {mine} jobs of this run",
                            done + 1
                        )));
                    }
                    chk.check(&b, k0 + done * n)
                        .map_err(|m| refuse(format!("row {} (line {line}): {m}", done + 1)))?;
                    if first.is_none() {
                        first = Some(b);
                    }
                    done += 1;
                    keep = rec.offset();
                }
            }
        }
    }
    if let Some(b) = &first {
        resimulate_matches(&chk, plan, b, k0).map_err(|m| {
            refuse(format!(
                "row 1 (job {k0}) is not what this vtsim simulates: {m} (the rows were \
                 written by a different build, or changed)"
            ))
        })?;
    }
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(partial)
        .map_err(io::at("opening", partial))?;
    if header_ok {
        f.set_len(keep).map_err(io::at("truncating", partial))?;
        f.seek(SeekFrom::End(0))
            .map_err(io::at("seeking in", partial))?;
        Ok(Partial {
            w: FileWriter::new(f, partial),
            done,
        })
    } else {
        // Empty, or the header itself torn: write it again.
        f.set_len(0).map_err(io::at("truncating", partial))?;
        let mut w = FileWriter::new(f, partial);
        w.write_all(&header)?;
        Ok(Partial { w, done: 0 })
    }
}

/// Start `partial` afresh with its state file.
fn fresh_partial(plan: &Plan, partial: &Path, state: &Path, my_state: &str) -> Result<Partial> {
    write_atomic(state, my_state.as_bytes())?;
    let mut w = FileWriter::create(partial)?;
    w.write_all(&csv_line(&runs_header(plan)))?;
    Ok(Partial { w, done: 0 })
}

/// Open the partial file of `dir` (resumed or fresh) for this invocation's jobs.
fn open_partial(
    plan: &Plan,
    cfg: &RunConfig,
    dir: &Path,
    jobs: (u64, u64, u64),
) -> Result<Partial> {
    let partial = dir.join("runs.csv.partial");
    let state = dir.join("run-state.json");
    let my_state = state_json(plan, cfg.shard);
    if !cfg.resume || !partial.is_file() {
        return fresh_partial(plan, &partial, &state, &my_state);
    }
    let same = io::read_limited(&state, 1 << 20)
        .map(|s| s == my_state.as_bytes())
        .unwrap_or(false);
    if !same {
        bail!(
            "cannot resume in {}: the partial output belongs to a different experiment, \
             shard or vtsim version (or its run-state.json is missing); run without --resume \
             to start again",
            dir.display()
        );
    }
    resume_partial(plan, &partial, jobs)
}

/// Simulate this invocation's remaining jobs into `p`. Returns (written, events, seconds).
fn simulate(
    plan: &Plan,
    cfg: &RunConfig,
    p: &mut Partial,
    (k0, n, mine): (u64, u64, u64),
) -> Result<(u64, u64, f64)> {
    let pool = {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(t) = cfg.threads {
            b = b.num_threads(t);
        }
        b.build().context("starting worker threads")?
    };
    let bar = if cfg.progress {
        let pb = indicatif::ProgressBar::new(mine);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} runs ({per_sec}, eta {eta})",
            )
            .expect("template"),
        );
        pb.set_position(p.done);
        pb
    } else {
        indicatif::ProgressBar::hidden()
    };
    let done = p.done;
    let mut events = 0u64;
    let mut written = 0u64;
    let chunk = (pool.current_num_threads() * 512).max(1024);
    let t_sim = std::time::Instant::now();
    // This invocation's i-th job (i in done..mine) is job k0 + i·n; chunks are built as they
    // are reached, so memory does not grow with the number of jobs.
    let mut next = done;
    while next < mine {
        let end = (next + chunk as u64).min(mine);
        let jobs: Vec<u64> = (next..end).map(|i| k0 + i * n).collect();
        next = end;
        // Each worker simulates its job and formats its row; this thread only writes bytes,
        // in job order.
        let results: Vec<(Vec<u8>, u64)> = pool.install(|| {
            jobs.par_iter()
                .map(|&j| {
                    let r = job_row(plan, j);
                    bar.inc(1);
                    r
                })
                .collect()
        });
        for (line, ev) in results {
            p.w.write_all(&line)?;
            events += ev;
            written += 1;
        }
        p.w.flush()?;
        if let Some(a) = cfg.abort_after {
            if done + written >= a {
                bar.abandon();
                eprintln!(
                    "vtsim: stopping after {} jobs (VTSIM_ABORT_AFTER_JOBS)",
                    done + written
                );
                std::process::exit(3);
            }
        }
    }
    bar.finish_and_clear();
    Ok((written, events, t_sim.elapsed().as_secs_f64()))
}

/// Run a plan (or one shard of it) and, unless sharded, write every output.
pub fn run_plan(plan: &Plan, cfg: &RunConfig) -> Result<RunSummary> {
    match cfg.shard {
        Some((k, n)) => run_shard(plan, cfg, k, n),
        None => run_whole(plan, cfg),
    }
}

fn run_whole(plan: &Plan, cfg: &RunConfig) -> Result<RunSummary> {
    let od = OutDir::resolve(&cfg.out)?;
    let _lock = lock_out(&od, true)?;
    recover(&od)?;
    io::create_dir_all(&od.path)?;
    test_wait_hook();
    let total = plan.jobs();
    let jobs = (0, 1, total);
    let mut p = open_partial(plan, cfg, &od.path, jobs)?;
    let (written, events, simulate_s) = simulate(plan, cfg, &mut p, jobs)?;
    let done = p.done;
    p.w.finish()?;
    let t_fin = std::time::Instant::now();
    let partial = od.path.join("runs.csv.partial");
    publish(plan, &od, |staging| {
        io::link_or_copy(&partial, &staging.join("runs.csv"))?;
        Ok(())
    })
    .map_err(|e| {
        anyhow!(
            "{e:#}. The {} simulated rows are kept in {}: once the cause is fixed, run again \
             with --resume to write the outputs without simulating again",
            done + written,
            partial.display()
        )
    })?;
    Ok(RunSummary {
        jobs_run: written,
        jobs_resumed: done,
        events,
        dir: cfg.out.clone(),
        simulate_s,
        finalize_s: t_fin.elapsed().as_secs_f64(),
    })
}

/// Stage a new output set (`runs` puts `runs.csv` into the staging folder), finalise it and
/// swap it in; on failure the target is untouched and the staging folder is gone.
fn publish(plan: &Plan, od: &OutDir, runs: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let staging = Staging::new(od)?;
    let sp = staging.path.clone();
    let built = runs(&sp).and_then(|()| report::finalize(plan, &sp));
    built.and_then(|()| staging.commit()).map_err(|e| {
        anyhow!(
            "building the outputs of {} in {}: {e:#}. The previous outputs are untouched",
            od.path.display(),
            sp.display()
        )
    })
}

/// What `shard.json` records about a finished shard.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardRecord {
    /// The plan's fingerprint.
    pub fingerprint: String,
    /// `K/N`.
    pub shard: String,
    /// Jobs of the whole plan.
    pub jobs: u64,
    /// Rows of this shard's `runs.csv`.
    pub rows: u64,
    /// BLAKE3 of the whole `runs.csv` (as `b3sum runs.csv` prints it).
    pub runs_csv_blake3: String,
    /// Rows per block hash.
    pub block_rows: u64,
    /// BLAKE3 (first 16 bytes, hex) of each block of `block_rows` rows' bytes, header excluded.
    pub block_blake3: Vec<String>,
}

fn block_hash(rows: &[Vec<u8>]) -> String {
    let mut h = blake3::Hasher::new();
    for r in rows {
        h.update(r);
    }
    h.finalize().to_hex()[..32].to_string()
}

/// Hash a finished shard file (header then rows) for its `shard.json`.
fn hash_shard_file(path: &Path) -> Result<(String, u64, Vec<String>)> {
    let mut rec = Records::open(path)?;
    let mut file = blake3::Hasher::new();
    let mut blocks = vec![];
    let mut block: Vec<Vec<u8>> = vec![];
    let mut rows = 0u64;
    let mut first = true;
    loop {
        match rec.next_record()? {
            Record::End => break,
            Record::Torn(_) => bail!("{}: the last row is incomplete", path.display()),
            Record::Row(b, _) => {
                file.update(&b);
                if first {
                    first = false;
                    continue;
                }
                rows += 1;
                block.push(b);
                if block.len() as u64 == BLOCK_ROWS {
                    blocks.push(block_hash(&block));
                    block.clear();
                }
            }
        }
    }
    if !block.is_empty() {
        blocks.push(block_hash(&block));
    }
    Ok((file.finalize().to_hex().to_string(), rows, blocks))
}

/// Take a shard's locks: `<out>`'s shared, then the shard's own exclusively.
fn lock_shard(
    od: &OutDir,
    dir: &Path,
    k: u64,
    n: u64,
) -> Result<(Option<LockFile>, Option<LockFile>)> {
    let out_lock = lock_out(od, false)?;
    for leftover in [od.staging_path(), od.old_path()] {
        if !kept_entries(&leftover)?.is_empty() {
            bail!(
                "an interrupted run or merge into {} left {} holding entries that belong in \
                 the folder (such as shards/); run `vtsim merge` or an unsharded run into it \
                 once to put them back, then run the shard",
                od.path.display(),
                leftover.display()
            );
        }
    }
    io::create_dir_all(dir)?;
    let p = dir.join(".lock");
    let shard_lock = match LockFile::try_lock(&p, true) {
        Ok(l) => Some(l),
        Err(LockRefused::Unsupported(e)) => unlocked(e)?,
        Err(LockRefused::Io(e)) => return Err(e.into()),
        Err(LockRefused::Held) => {
            return Err(super::InputError::file(
                &p,
                format!(
                    "shard {k}/{n} in {} is being run by another vtsim ({}). Wait for it to \
                     finish or stop it",
                    dir.display(),
                    holder_text(&p)
                ),
            )
            .into())
        }
    };
    Ok((out_lock, shard_lock))
}

/// Check a finished shard's record and file hashes against the plan (rows are checked one by
/// one by `merge`).
fn finished_shard(plan: &Plan, dir: &Path, k: u64, n: u64, mine: u64) -> Result<()> {
    let bytes = io::read_limited(&dir.join("shard.json"), 256 << 20)?;
    let meta: ShardRecord = serde_json::from_slice(&bytes)
        .map_err(|e| anyhow!("its shard.json is not readable: {e}"))?;
    if meta.fingerprint != plan.fingerprint
        || meta.shard != format!("{k}/{n}")
        || meta.jobs != plan.jobs()
        || meta.rows != mine
        || meta.block_rows != BLOCK_ROWS
    {
        bail!("its shard.json is another experiment's or another split's");
    }
    let (file, rows, blocks) = hash_shard_file(&dir.join("runs.csv"))?;
    if file != meta.runs_csv_blake3 || rows != meta.rows || blocks != meta.block_blake3 {
        bail!("its runs.csv does not match the hashes in its shard.json");
    }
    Ok(())
}

fn run_shard(plan: &Plan, cfg: &RunConfig, k: u64, n: u64) -> Result<RunSummary> {
    let od = OutDir::resolve(&cfg.out)?;
    let dir = shard_dir(&od.path, k, n);
    let _locks = lock_shard(&od, &dir, k, n)?;
    test_wait_hook();
    let runs = dir.join("runs.csv");
    let partial = dir.join("runs.csv.partial");
    let state = dir.join("run-state.json");
    let record = dir.join("shard.json");
    let total = plan.jobs();
    let k0 = k - 1;
    let mine = if total > k0 {
        (total - k0).div_ceil(n)
    } else {
        0
    };
    if cfg.resume && !partial.exists() && record.is_file() {
        // Already finished (a resubmitted array job): nothing to do if it verifies.
        match finished_shard(plan, &dir, k, n, mine) {
            Ok(()) => {
                return Ok(RunSummary {
                    jobs_run: 0,
                    jobs_resumed: mine,
                    events: 0,
                    dir: shard_dir(&cfg.out, k, n),
                    simulate_s: 0.0,
                    finalize_s: 0.0,
                })
            }
            Err(e) => eprintln!(
                "vtsim: shard {k}/{n} in {} is recorded as finished but {e:#}; running it again",
                dir.display()
            ),
        }
    }
    if cfg.resume && !partial.exists() && runs.is_file() && state.is_file() {
        // Killed between renaming the finished rows and writing shard.json: finish again.
        io::rename(&runs, &partial)?;
    }
    if !cfg.resume || !partial.is_file() {
        // Whatever finished shard was here is being replaced: it is not finished any more.
        io::remove_file(&record)?;
        io::remove_file(&runs)?;
    }
    let jobs = (k0, n, mine);
    let mut p = open_partial(plan, cfg, &dir, jobs)?;
    let (written, events, simulate_s) = simulate(plan, cfg, &mut p, jobs)?;
    let done = p.done;
    p.w.finish()?;
    let (file_hash, rows, blocks) = hash_shard_file(&partial)?;
    if rows != mine {
        bail!(
            "{}: {rows} rows written for {mine} jobs; run the shard again without --resume",
            partial.display()
        );
    }
    io::rename(&partial, &runs)?;
    abort_in_outputs_hook("before shard.json");
    let rec = ShardRecord {
        fingerprint: plan.fingerprint.clone(),
        shard: format!("{k}/{n}"),
        jobs: total,
        rows,
        runs_csv_blake3: file_hash,
        block_rows: BLOCK_ROWS,
        block_blake3: blocks,
    };
    let mut text = serde_json::to_string_pretty(&rec).expect("plain struct");
    text.push('\n');
    write_atomic(&record, text.as_bytes())?;
    io::remove_file(&state)?;
    io::sync_dir(&dir)?;
    Ok(RunSummary {
        jobs_run: written,
        jobs_resumed: done,
        events,
        dir: shard_dir(&cfg.out, k, n),
        simulate_s,
        finalize_s: 0.0,
    })
}

// ---------------------------------------------------------------------------------------------
// Merging

/// One shard being read by `merge`.
struct ShardIn {
    k: u64,
    path: PathBuf,
    rec: Records,
    meta: ShardRecord,
    file: blake3::Hasher,
    /// This block's rows: (bytes, line, job, row number).
    block: Vec<(Vec<u8>, u64, u64, u64)>,
    blocks_done: usize,
    rows: u64,
}

impl ShardIn {
    fn close_block(&mut self, plan: &Plan, chk: &RowChecker) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let rows: Vec<Vec<u8>> = self.block.iter().map(|b| b.0.clone()).collect();
        let got = block_hash(&rows);
        let want = self.meta.block_blake3.get(self.blocks_done);
        if want != Some(&got) {
            let (a, b) = (self.block[0].3, self.block[self.block.len() - 1].3);
            // Name the row: simulate the block's rows again.
            for (bytes, line, j, row) in &self.block {
                if let Err(m) = resimulate_matches(chk, plan, bytes, *j) {
                    bail!(
                        "{}: row {row} (line {line}, job {j}) was changed after the shard \
                         finished: {m}; the shard's rows no longer match the hash in its \
                         shard.json. Run shard {}/{} again",
                        self.path.display(),
                        self.k,
                        plan_n(&self.meta)
                    );
                }
            }
            bail!(
                "{}: rows {a}-{b} match what this vtsim simulates but not the hash shard.json \
                 recorded for them: shard.json was changed, or belongs to other rows. Run shard \
                 {}/{} again",
                self.path.display(),
                self.k,
                plan_n(&self.meta)
            );
        }
        self.blocks_done += 1;
        self.block.clear();
        Ok(())
    }
}

fn plan_n(meta: &ShardRecord) -> String {
    meta.shard.split('/').nth(1).unwrap_or("?").to_string()
}

/// Open shard `k` of `n` and check its `shard.json` against the plan.
fn open_shard(plan: &Plan, out: &Path, k: u64, n: u64, header: &[u8]) -> Result<ShardIn> {
    let d = shard_dir(out, k, n);
    let sj = d.join("shard.json");
    if !sj.is_file() {
        bail!(
            "shard {k}/{n} is missing or unfinished: no {} (run `vtsim run EXPERIMENT --shard \
             {k}/{n}` into this folder, or copy that shard's folder here)",
            sj.display()
        );
    }
    let bytes = io::read_limited(&sj, 256 << 20)?;
    let meta: ShardRecord = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow!(
            "{}: not a shard record of this vtsim ({e}); run shard {k}/{n} again",
            sj.display()
        )
    })?;
    if meta.fingerprint != plan.fingerprint {
        bail!(
            "shard {k}/{n} in {} was run from a different experiment or vtsim version \
             (fingerprint {} in shard.json, {} here)",
            d.display(),
            meta.fingerprint,
            plan.fingerprint
        );
    }
    let k0 = k - 1;
    let total = plan.jobs();
    let mine = if total > k0 {
        (total - k0).div_ceil(n)
    } else {
        0
    };
    if meta.shard != format!("{k}/{n}")
        || meta.jobs != total
        || meta.rows != mine
        || meta.block_rows != BLOCK_ROWS
        || meta.block_blake3.len() as u64 != mine.div_ceil(BLOCK_ROWS)
    {
        bail!(
            "{}: says shard {} with {} rows of {} jobs in {} blocks of {}; shard {k}/{n} of this \
             experiment has {mine} rows of {total} jobs in {} blocks of {BLOCK_ROWS}. Run shard \
             {k}/{n} again",
            sj.display(),
            meta.shard,
            meta.rows,
            meta.jobs,
            meta.block_blake3.len(),
            meta.block_rows,
            mine.div_ceil(BLOCK_ROWS)
        );
    }
    let path = d.join("runs.csv");
    let mut rec = Records::open(&path)?;
    let mut file = blake3::Hasher::new();
    match rec.next_record()? {
        Record::Row(b, _) if b == header => {
            file.update(&b);
        }
        _ => bail!(
            "{}: the header is not this experiment's runs.csv header",
            path.display()
        ),
    }
    Ok(ShardIn {
        k,
        path,
        rec,
        meta,
        file,
        block: vec![],
        blocks_done: 0,
        rows: 0,
    })
}

/// Join the `n` shard outputs under `out/shards/` into `out/runs.csv` and finalise. Every row
/// of every shard is checked (see the module doc) before the output set is swapped in; on
/// any failure the previous outputs are untouched.
pub fn merge(plan: &Plan, out: &Path) -> Result<()> {
    let od = OutDir::resolve(out)?;
    let _lock = lock_out(&od, true)?;
    recover(&od)?;
    test_wait_hook();
    let shards_root = od.path.join("shards");
    let mut ns: Vec<u64> = vec![];
    let listed = match fs::read_dir(&shards_root) {
        Ok(rd) => Some(rd),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(IoError::new("listing", &shards_root, e).into()),
    };
    if let Some(rd) = listed {
        for e in rd {
            let e = e.map_err(io::at("listing", &shards_root))?;
            let name = e.file_name().to_string_lossy().to_string();
            if let Some((_, n)) = name.split_once("-of-") {
                if let Ok(n) = n.parse::<u64>() {
                    if !ns.contains(&n) {
                        ns.push(n);
                    }
                }
            }
        }
    }
    ns.sort_unstable();
    let n = match ns.as_slice() {
        [n] => *n,
        [] => bail!("no shard outputs under {}", shards_root.display()),
        _ => bail!(
            "shard outputs of different splits under {}: {:?}",
            shards_root.display(),
            ns
        ),
    };
    let mut chk = RowChecker::new(plan);
    let header = chk.header_bytes();
    let mut shards = (1..=n)
        .map(|k| open_shard(plan, &od.path, k, n, &header))
        .collect::<Result<Vec<_>>>()?;
    publish(plan, &od, |staging| {
        let runs = staging.join("runs.csv");
        let mut w = FileWriter::create(&runs)?;
        w.write_all(&header)?;
        for j in 0..plan.jobs() {
            let s = &mut shards[(j % n) as usize];
            let row = s.rows + 1;
            let (bytes, line) = match s.rec.next_record()? {
                Record::Row(b, line) => (b, line),
                Record::Torn(_) | Record::End => bail!(
                    "{}: ends after row {}, but shard {}/{n} has {} rows: job {j} (row {row}) \
                     is missing",
                    s.path.display(),
                    s.rows,
                    s.k,
                    s.meta.rows
                ),
            };
            chk.check(&bytes, j)
                .map_err(|m| anyhow!("{}: row {row} (line {line}): {m}", s.path.display()))?;
            if row == 1 {
                resimulate_matches(&chk, plan, &bytes, j).map_err(|m| {
                    anyhow!(
                        "{}: row 1 (line {line}, job {j}) is not what this vtsim simulates: \
                         {m} (the shard was run by a different build, or changed)",
                        s.path.display()
                    )
                })?;
            }
            s.rows = row;
            s.file.update(&bytes);
            w.write_all(&bytes)?;
            s.block.push((bytes, line, j, row));
            if s.block.len() as u64 == BLOCK_ROWS {
                s.close_block(plan, &chk)?;
            }
        }
        for s in &mut shards {
            match s.rec.next_record()? {
                Record::End => {}
                Record::Row(_, line) => bail!(
                    "{}: row {} (line {line}) is beyond the shard's {} jobs",
                    s.path.display(),
                    s.rows + 1,
                    s.meta.rows
                ),
                Record::Torn(_) => bail!(
                    "{}: an incomplete row follows row {}, the shard's last",
                    s.path.display(),
                    s.rows
                ),
            }
            s.close_block(plan, &chk)?;
            let h = s.file.finalize().to_hex().to_string();
            if h != s.meta.runs_csv_blake3 {
                bail!(
                    "{}: BLAKE3 {h}, but shard.json recorded {}; run shard {}/{n} again",
                    s.path.display(),
                    s.meta.runs_csv_blake3,
                    s.k
                );
            }
        }
        w.finish()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_split_as_the_csv_writer_joins_them() {
        let cases: Vec<Vec<String>> = vec![
            vec!["a".into(), "b,c".into(), "say \"hi\"".into()],
            vec!["line\nbreak".into(), "".into(), "x".into()],
            vec!["".into()],
            vec!["a".into(), "".into()],
            vec!["\r".into(), " lead".into()],
        ];
        for f in cases {
            let line = csv_line(&f);
            assert_eq!(split_fields(&line).unwrap(), f, "{line:?}");
            let mut c = CsvLine::new();
            assert!(c.is(&f, &line));
        }
        assert!(split_fields(b"\"open\n").is_err());
        assert!(split_fields(b"\"a\"b\n").is_err());
    }

    #[test]
    fn records_keep_quoted_line_breaks_and_report_a_torn_end() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.csv");
        fs::write(&p, "h1,h2\n\"a\nb\",c\nd,\"e").unwrap();
        let mut r = Records::open(&p).unwrap();
        assert!(matches!(r.next_record().unwrap(), Record::Row(b, 1) if b == b"h1,h2\n"));
        assert!(matches!(r.next_record().unwrap(), Record::Row(b, 2) if b == b"\"a\nb\",c\n"));
        assert_eq!(r.offset(), 14);
        assert!(matches!(r.next_record().unwrap(), Record::Torn(b) if b == b"d,\"e"));
    }

    #[test]
    fn kept_entries_are_what_is_not_an_output() {
        for n in [
            "runs.csv",
            "points.csv",
            "x.png",
            "x.svg",
            "run-state.json",
            "a.partial",
        ] {
            assert!(is_output_entry(n), "{n}");
        }
        for n in ["shards", "notes.txt", "runs.csv.bak"] {
            assert!(!is_output_entry(n), "{n}");
        }
    }
}
