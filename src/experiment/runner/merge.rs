//! `vtsim merge`: join the shard outputs into the single-machine `runs.csv`, checking every
//! row, then finalise it like an unsharded run.

use super::execute::resimulate_matches;
use super::lock::lock_out;
use super::outdir::{recover, OutDir};
use super::publish;
use super::shard::{block_hash, shard_dir, ShardRecord, BLOCK_ROWS};
use crate::experiment::accumulate::Outputs;
use crate::experiment::hooks::test_wait_hook;
use crate::experiment::layout::RowChecker;
use crate::experiment::plan::Plan;
use crate::io::csv::{Next, Record, Records};
use crate::io::{self, FileWriter, IoError};
use anyhow::{anyhow, bail, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// One shard being read by `merge`.
pub(super) struct ShardIn {
    k: u64,
    path: PathBuf,
    rec: Records,
    meta: ShardRecord,
    file: blake3::Hasher,
    /// This block's rows' bytes, one after the other, and per row (where its bytes end,
    /// line, job, row number): kept in buffers reused from block to block.
    block_bytes: Vec<u8>,
    block: Vec<(usize, u64, u64, u64)>,
    blocks_done: usize,
    rows: u64,
}

impl ShardIn {
    fn close_block(&mut self, plan: &Plan, chk: &RowChecker) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let got = block_hash(&self.block_bytes);
        let want = self.meta.block_blake3.get(self.blocks_done);
        if want != Some(&got) {
            let (a, b) = (self.block[0].3, self.block[self.block.len() - 1].3);
            // Name the row: simulate the block's rows again.
            let mut start = 0;
            for &(end, line, j, row) in &self.block {
                let bytes = &self.block_bytes[start..end];
                start = end;
                if let Err(m) = resimulate_matches(chk, plan, bytes, j) {
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
        self.block_bytes.clear();
        Ok(())
    }
}

pub(super) fn plan_n(meta: &ShardRecord) -> String {
    meta.shard.split('/').nth(1).unwrap_or("?").to_string()
}

/// Open shard `k` of `n` and check its `shard.json` against the plan.
pub(super) fn open_shard(
    plan: &Plan,
    out: &Path,
    k: u64,
    n: u64,
    header: &[u8],
) -> Result<ShardIn> {
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
        block_bytes: Vec::new(),
        block: vec![],
        blocks_done: 0,
        rows: 0,
    })
}

/// Join the `n` shard outputs under `out/shards/` into `out/runs.csv` and finalise (with
/// `finalize`, as [`run_plan_with`](super::run_plan_with) does). Every row of every shard is
/// checked (see the module doc) before the output set is swapped in; on any failure the
/// previous outputs are untouched.
pub fn merge_with<F>(plan: &Plan, out: &Path, finalize: F) -> Result<()>
where
    F: FnOnce(&Plan, &Path, Outputs) -> Result<()>,
{
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
    let runs_of = |staging: &Path| {
        let runs = staging.join("runs.csv");
        let mut w = FileWriter::create(&runs)?;
        w.write_all(&header)?;
        let mut acc = Outputs::new(plan);
        // One buffer for every row (no allocation per row).
        let mut bytes: Vec<u8> = Vec::with_capacity(1024);
        for j in 0..plan.jobs() {
            let s = &mut shards[(j % n) as usize];
            let row = s.rows + 1;
            let line = match s.rec.next_into(&mut bytes)? {
                Next::Row(line) => line,
                Next::Torn | Next::End => bail!(
                    "{}: ends after row {}, but shard {}/{n} has {} rows: job {j} (row {row}) \
                     is missing",
                    s.path.display(),
                    s.rows,
                    s.k,
                    s.meta.rows
                ),
            };
            let v = chk
                .check(&bytes, j)
                .map_err(|m| anyhow!("{}: row {row} (line {line}): {m}", s.path.display()))?;
            acc.add(v.metrics.iter().copied(), v.events, v.digest)
                .map_err(|e| anyhow!("{}: row {row} (line {line}): {e}", s.path.display()))?;
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
            s.block_bytes.extend_from_slice(&bytes);
            s.block.push((s.block_bytes.len(), line, j, row));
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
        Ok(acc)
    };
    publish(plan, &od, runs_of, finalize)
}
