//! File-system helpers whose errors say what was being done, to which file, and why, in plain
//! words: `writing /data/out/points.csv: No space left on device (os error 28)`.
//!
//! Every file the runner, the report and the charts touch goes through here, so no I/O failure
//! surfaces as a bare "No such file or directory" or a debug dump. Also here: [`write_atomic`]
//! (temporary file, fsync, rename), [`exchange`] (swap two directories atomically, for the
//! staged output set) and [`LockFile`] (an advisory `flock` lock that a killed holder cannot
//! leave behind). The CSV records vtsim writes and reads back are in [`csv`]; a duration's
//! label (`90s`) is [`label::duration_label`].

pub mod csv;
pub mod label;

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// An I/O failure on a named file.
#[derive(Debug, thiserror::Error)]
#[error("{op} {}: {error}", path.display())]
pub struct IoError {
    /// What was being done ("writing", "renaming /a/b to").
    pub op: String,
    /// The file it was done to.
    pub path: PathBuf,
    /// The OS error (its `Display` is the plain words and the code).
    pub error: std::io::Error,
}

impl IoError {
    /// Wrap `error`, which happened while doing `op` to `path`.
    pub fn new(op: impl Into<String>, path: &Path, error: std::io::Error) -> Self {
        IoError {
            op: op.into(),
            path: path.to_path_buf(),
            error,
        }
    }
}

/// A closure for `map_err` that names the operation and the file.
pub fn at<'a>(op: &'a str, path: &'a Path) -> impl FnOnce(std::io::Error) -> IoError + 'a {
    move |e| IoError::new(op, path, e)
}

/// Result of a file operation.
pub type IoResult<T> = Result<T, IoError>;

/// `fs::create_dir_all`, naming the directory on failure.
pub fn create_dir_all(path: &Path) -> IoResult<()> {
    fs::create_dir_all(path).map_err(at("creating the folder", path))
}

/// Create (truncate) a file for writing.
pub fn create(path: &Path) -> IoResult<File> {
    File::create(path).map_err(at("creating", path))
}

/// Open a file for reading.
pub fn open(path: &Path) -> IoResult<File> {
    File::open(path).map_err(at("opening", path))
}

/// Read a whole file.
pub fn read(path: &Path) -> IoResult<Vec<u8>> {
    fs::read(path).map_err(at("reading", path))
}

/// Read a whole UTF-8 file.
pub fn read_to_string(path: &Path) -> IoResult<String> {
    fs::read_to_string(path).map_err(at("reading", path))
}

/// Read at most `limit` bytes of a file (for files whose size is not trusted).
pub fn read_limited(path: &Path, limit: u64) -> IoResult<Vec<u8>> {
    let mut v = vec![];
    open(path)?
        .take(limit)
        .read_to_end(&mut v)
        .map_err(at("reading", path))?;
    Ok(v)
}

/// Write `bytes` to a new file at `path` and flush it to disk (no temporary file: for files
/// inside a private staging folder).
pub fn write(path: &Path, bytes: &[u8]) -> IoResult<()> {
    let mut f = create(path)?;
    f.write_all(bytes).map_err(at("writing", path))?;
    f.sync_all().map_err(at("writing", path))
}

/// `fs::rename`, naming both paths on failure.
pub fn rename(from: &Path, to: &Path) -> IoResult<()> {
    fs::rename(from, to).map_err(|e| IoError::new(format!("renaming {} to", from.display()), to, e))
}

/// Remove a file; a file that is already gone is not an error.
pub fn remove_file(path: &Path) -> IoResult<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(IoError::new("removing", path, e))
        }
        _ => Ok(()),
    }
}

/// Remove a folder and everything in it; a folder that is already gone is not an error.
pub fn remove_dir_all(path: &Path) -> IoResult<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(IoError::new("removing the folder", path, e))
        }
        _ => Ok(()),
    }
}

/// Flush a directory's entries to disk (after creating or renaming files in it). A no-op where
/// directories cannot be opened (not Unix).
pub fn sync_dir(path: &Path) -> IoResult<()> {
    #[cfg(unix)]
    {
        File::open(path)
            .and_then(|d| d.sync_all())
            .map_err(at("flushing the folder", path))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The temporary name `write_atomic` uses for `path`: hidden, beside it, with this process's id.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp{}", std::process::id()))
}

/// Write `bytes` to `path` through a temporary file beside it (flushed to disk) and a rename, so
/// a reader sees the old file or the new one, never half of one. On failure the temporary file
/// is removed; the error names `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> IoResult<()> {
    let tmp = temp_beside(path);
    let r = (|| {
        let mut f = File::create(&tmp).map_err(at("writing", path))?;
        f.write_all(bytes).map_err(at("writing", path))?;
        f.sync_all().map_err(at("writing", path))?;
        drop(f);
        rename(&tmp, path)
    })();
    if r.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    r
}

/// Make `to` a second name of `from` (a hard link), or a copy where the file system has no
/// hard links. `to` must not exist.
pub fn link_or_copy(from: &Path, to: &Path) -> IoResult<()> {
    if fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    let _ = fs::remove_file(to);
    let r = fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| IoError::new(format!("copying {} to", from.display()), to, e))
        .and_then(|_| {
            File::open(to)
                .and_then(|f| f.sync_all())
                .map_err(at("writing", to))
        });
    if r.is_err() {
        let _ = fs::remove_file(to);
    }
    r
}

/// Swap the two directory entries `a` and `b` in one step (Linux `renameat2(RENAME_EXCHANGE)`):
/// afterwards `a` holds what `b` held and `b` what `a` held, and no reader ever sees either
/// name missing. Returns `Ok(false)` when the platform or file system cannot exchange (the
/// caller then falls back to two renames), `Err` for any other failure.
pub fn exchange(a: &Path, b: &Path) -> IoResult<bool> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let ca = CString::new(a.as_os_str().as_bytes())
            .map_err(|_| IoError::new("swapping", a, std::io::ErrorKind::InvalidInput.into()))?;
        let cb = CString::new(b.as_os_str().as_bytes())
            .map_err(|_| IoError::new("swapping", b, std::io::ErrorKind::InvalidInput.into()))?;
        // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                ca.as_ptr(),
                libc::AT_FDCWD,
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if r == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            // No renameat2 (old kernel, seccomp), or a file system without RENAME_EXCHANGE.
            Some(libc::ENOSYS) | Some(libc::EINVAL) | Some(libc::EOPNOTSUPP) => Ok(false),
            _ => Err(IoError::new(format!("swapping {} with", a.display()), b, e)),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

/// A buffered writer to a named file whose errors name it.
pub struct FileWriter {
    w: BufWriter<File>,
    path: PathBuf,
}

impl FileWriter {
    /// Wrap an open file.
    pub fn new(f: File, path: &Path) -> Self {
        FileWriter {
            w: BufWriter::with_capacity(1 << 20, f),
            path: path.to_path_buf(),
        }
    }
    /// Create (truncate) `path`.
    pub fn create(path: &Path) -> IoResult<Self> {
        Ok(Self::new(create(path)?, path))
    }
    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// Write all of `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> IoResult<()> {
        self.w.write_all(bytes).map_err(at("writing", &self.path))
    }
    /// Push buffered bytes to the OS.
    pub fn flush(&mut self) -> IoResult<()> {
        self.w.flush().map_err(at("writing", &self.path))
    }
    /// Flush, write through to disk and close.
    pub fn finish(mut self) -> IoResult<()> {
        self.flush()?;
        let f = self
            .w
            .into_inner()
            .map_err(|e| IoError::new("writing", &self.path, e.into_error()))?;
        f.sync_all().map_err(at("writing", &self.path))
    }
}

/// Who holds a lock, as its holder wrote it into the lock file.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// The command line.
    pub command: String,
    /// When the lock was taken (RFC 3339, UTC).
    pub started: String,
}

impl Holder {
    /// This process.
    pub fn me() -> Self {
        Holder {
            pid: std::process::id(),
            host: hostname(),
            command: std::env::args_os()
                .map(|a| a.to_string_lossy().to_string())
                .collect::<Vec<_>>()
                .join(" "),
            started: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on host `{}`, started {}, running `{}`",
            self.pid, self.host, self.started, self.command
        )
    }
}

fn hostname() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it
        // (or truncates, and we stop at the first NUL or the end).
        let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if r == 0 {
            let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
            return String::from_utf8_lossy(&buf[..end]).to_string();
        }
    }
    std::env::var("HOSTNAME").unwrap_or_else(|_| "unknown".into())
}

/// An advisory lock on a file: `flock(2)` on Unix (through `std::fs::File::try_lock`), so the
/// operating system releases it when the holder exits or is killed; a lock file left behind
/// by a killed holder is simply taken over. An exclusive holder writes a [`Holder`] record into
/// the file and removes the file when it lets go.
pub struct LockFile {
    file: File,
    path: PathBuf,
    exclusive: bool,
}

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockRefused {
    /// Someone holds it (exclusively, or shared when we asked for it exclusively).
    Held,
    /// The file system cannot lock (some network file systems): `ENOLCK`, `EOPNOTSUPP`.
    Unsupported(IoError),
    /// The file system failed.
    Io(IoError),
}

impl From<IoError> for LockRefused {
    fn from(e: IoError) -> Self {
        LockRefused::Io(e)
    }
}

impl LockFile {
    /// Take the lock at `path` without waiting (creating the file if needed).
    pub fn try_lock(path: &Path, exclusive: bool) -> Result<LockFile, LockRefused> {
        // The file may be removed by a holder letting go between our open and our lock; then
        // we locked a file nobody else will see, so open the path again.
        for _ in 0..100 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(at("opening the lock file", path))?;
            let r = if exclusive {
                file.try_lock()
            } else {
                file.try_lock_shared()
            };
            match r {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Err(LockRefused::Held),
                Err(std::fs::TryLockError::Error(e)) => {
                    let unsupported = e.kind() == std::io::ErrorKind::Unsupported || {
                        #[cfg(unix)]
                        {
                            matches!(
                                e.raw_os_error(),
                                Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP)
                            )
                        }
                        #[cfg(not(unix))]
                        {
                            false
                        }
                    };
                    let e = IoError::new("locking", path, e);
                    return Err(if unsupported {
                        LockRefused::Unsupported(e)
                    } else {
                        LockRefused::Io(e)
                    });
                }
            }
            if !same_file(&file, path) {
                continue;
            }
            let lock = LockFile {
                file,
                path: path.to_path_buf(),
                exclusive,
            };
            if exclusive {
                let mut text = serde_json::to_string(&Holder::me()).expect("plain struct");
                text.push('\n');
                lock.file.set_len(0).map_err(at("writing", path))?;
                (&lock.file)
                    .write_all(text.as_bytes())
                    .map_err(at("writing", path))?;
            }
            return Ok(lock);
        }
        Err(IoError::new(
            "locking",
            path,
            std::io::Error::other("the lock file keeps being replaced"),
        )
        .into())
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The holder recorded in the lock file at `path`, if it is readable.
    pub fn holder(path: &Path) -> Option<Holder> {
        let bytes = read_limited(path, 64 * 1024).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Whether someone holds the lock at `path` exclusively (a shared try succeeds otherwise).
    pub fn held_exclusively(path: &Path) -> bool {
        match OpenOptions::new().read(true).open(path) {
            Ok(f) => matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock)),
            Err(_) => false,
        }
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // An exclusive holder removes the file while still holding the lock: anyone who opened
        // it meanwhile finds, once they lock it, that the path is gone, and opens it again.
        // Shared holders leave it (removing it would need a moment of exclusive lock, which
        // could refuse a shared holder starting at that instant); the next exclusive holder
        // removes it.
        if self.exclusive && same_file(&self.file, &self.path) {
            let _ = fs::remove_file(&self.path);
        }
        let _ = self.file.unlock();
    }
}

/// Whether the open `file` is still the file at `path`.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_and_the_os_error() {
        let e = write_atomic(Path::new("/nonexistent-dir/x.csv"), b"x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "writing /nonexistent-dir/x.csv: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn write_atomic_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        write_atomic(&d.path().join("a.txt"), b"hello").unwrap();
        let long = "x".repeat(300);
        let e = write_atomic(&d.path().join(&long), b"hello").unwrap_err();
        assert!(e.to_string().contains("File name too long"), "{e}");
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
    }

    #[test]
    fn a_lock_is_exclusive_until_dropped_and_removes_its_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(".lock");
        let a = LockFile::try_lock(&p, true).ok().unwrap();
        assert!(matches!(
            LockFile::try_lock(&p, true),
            Err(LockRefused::Held)
        ));
        assert!(matches!(
            LockFile::try_lock(&p, false),
            Err(LockRefused::Held)
        ));
        assert!(LockFile::held_exclusively(&p));
        assert_eq!(LockFile::holder(&p).unwrap().pid, std::process::id());
        drop(a);
        assert!(!p.exists());
        let s1 = LockFile::try_lock(&p, false).ok().unwrap();
        let s2 = LockFile::try_lock(&p, false).ok().unwrap();
        assert!(matches!(
            LockFile::try_lock(&p, true),
            Err(LockRefused::Held)
        ));
        assert!(!LockFile::held_exclusively(&p));
        drop(s1);
        drop(s2);
        let e = LockFile::try_lock(&p, true).ok().unwrap();
        drop(e);
        assert!(!p.exists());
    }

    #[test]
    fn exchange_swaps_two_folders() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        fs::write(a.join("f"), "A").unwrap();
        fs::write(b.join("f"), "B").unwrap();
        if exchange(&a, &b).unwrap() {
            assert_eq!(fs::read_to_string(a.join("f")).unwrap(), "B");
            assert_eq!(fs::read_to_string(b.join("f")).unwrap(), "A");
        }
    }
}
