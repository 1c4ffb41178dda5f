//! Shard runs: jobs `j` with `j % N == K − 1` into `<out>/shards/K-of-N/`, and the
//! `shard.json` that records the hashes `merge` checks.

use super::execute::{open_partial, simulate};
use super::lock::lock_shard;
use super::outdir::OutDir;
use super::{RunConfig, RunSummary};
use crate::experiment::hooks::{abort_in_outputs_hook, test_wait_hook};
use crate::experiment::plan::Plan;
use crate::io::csv::{Next, Records};
use crate::io::{self, write_atomic};
use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};

/// Rows per block hash in `shard.json`.
pub const BLOCK_ROWS: u64 = 64;

/// Directory of shard `k` of `n` under `out`.
pub fn shard_dir(out: &Path, k: u64, n: u64) -> PathBuf {
    out.join("shards").join(format!("{k}-of-{n}"))
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

/// The hash `shard.json` records for a block: BLAKE3 of its rows' bytes, one after the
/// other (first 16 bytes, hex).
pub(super) fn block_hash(rows: &[u8]) -> String {
    blake3::hash(rows).to_hex()[..32].to_string()
}

/// Hash a finished shard file (header then rows) for its `shard.json`, reading it through one
/// reused buffer (no allocation per row).
pub(super) fn hash_shard_file(path: &Path) -> Result<(String, u64, Vec<String>)> {
    let mut rec = Records::open(path)?;
    let mut file = blake3::Hasher::new();
    let mut blocks = vec![];
    let mut block = blake3::Hasher::new();
    let mut in_block = 0u64;
    let mut rows = 0u64;
    let mut first = true;
    let mut b = Vec::with_capacity(1024);
    loop {
        match rec.next_into(&mut b)? {
            Next::End => break,
            Next::Torn => bail!("{}: the last row is incomplete", path.display()),
            Next::Row(_) => {
                file.update(&b);
                if first {
                    first = false;
                    continue;
                }
                rows += 1;
                block.update(&b);
                in_block += 1;
                if in_block == BLOCK_ROWS {
                    blocks.push(block.finalize().to_hex()[..32].to_string());
                    block.reset();
                    in_block = 0;
                }
            }
        }
    }
    if in_block > 0 {
        blocks.push(block.finalize().to_hex()[..32].to_string());
    }
    Ok((file.finalize().to_hex().to_string(), rows, blocks))
}

/// Check a finished shard's record and file hashes against the plan (rows are checked one by
/// one by `merge`).
pub(super) fn finished_shard(plan: &Plan, dir: &Path, k: u64, n: u64, mine: u64) -> Result<()> {
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

pub(super) fn run_shard(plan: &Plan, cfg: &RunConfig, k: u64, n: u64) -> Result<RunSummary> {
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
    let mut p = open_partial(plan, cfg, &dir, jobs, None)?;
    let (written, events, simulate_s) = simulate(plan, cfg, &mut p, jobs, None)?;
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
