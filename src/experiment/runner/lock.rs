//! The locks of an output folder: `<parent>/.<name>.lock` (exclusive for a run or a merge,
//! shared for a shard run) and a shard's own `.lock`, with the holder named when refused.

use super::outdir::{kept_entries, OutDir};
use crate::experiment::InputError;
use crate::io::{self, IoError, LockFile, LockRefused};
use anyhow::{bail, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// A file system that cannot lock: go on without the lock, saying so.
pub(super) fn unlocked(e: IoError) -> Result<Option<LockFile>> {
    eprintln!(
        "vtsim: warning: {e}; going on without a lock: do not start another run or merge into \
         this folder until this one ends"
    );
    Ok(None)
}

/// Take `od`'s lock exclusively (an unsharded run or a merge), or shared (a shard run).
/// `None` where the file system cannot lock.
pub(super) fn lock_out(od: &OutDir, exclusive: bool) -> Result<Option<LockFile>> {
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
            Err(InputError::file(
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

pub(super) fn holder_text(lock: &Path) -> String {
    LockFile::holder(lock)
        .map(|h| h.to_string())
        .unwrap_or_else(|| "its details are not written yet".into())
}

/// The shard runs holding their shard locks under `out/shards/`.
pub(super) fn running_shards(out: &Path) -> Vec<String> {
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

/// Take a shard's locks: `<out>`'s shared, then the shard's own exclusively.
pub(super) fn lock_shard(
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
            return Err(InputError::file(
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
