//! Output folders: the staging folder beside the target, the swap that replaces the output
//! set whole, and the repair of what a killed run left.

use crate::io::{self, IoError};
use anyhow::{anyhow, bail, Result};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

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
            | "data-dictionary.csv"
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
pub(super) fn kept_entries(dir: &Path) -> Result<Vec<OsString>> {
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
pub(super) fn restore_and_remove(from: &Path, out: &Path) -> Result<()> {
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
pub(super) fn recover(od: &OutDir) -> Result<()> {
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
pub(super) struct Staging {
    od: OutDir,
    pub(super) path: PathBuf,
    committed: bool,
}

impl Staging {
    pub(super) fn new(od: &OutDir) -> Result<Staging> {
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
    pub(super) fn commit(mut self) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
