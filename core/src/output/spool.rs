//! The raw bytes of a run, exactly as written, interleaved in arrival order.
//!
//! While a run's output is small, the bytes stay in memory and are thrown away at the end. Once the
//! text had to be cut (or the raw bytes outgrow [`MEMORY_LIMIT`]), everything so far goes to a log file
//! and later bytes are appended to it, so the full output, invalid UTF-8 and escapes included, can
//! still be read from `outputFile`. Memory per run is therefore bounded whatever the output size.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{AgentError, ErrorCode};

/// Raw bytes kept in memory before spilling to a file.
pub const MEMORY_LIMIT: usize = 1 << 20;

/// Default cap of one run's log file: a runaway `yes` must not fill the disk.
pub const DEFAULT_MAX_LOG_BYTES: u64 = 64 << 20;

pub struct RawSpool {
    memory: Vec<u8>,
    max_file_bytes: u64,
    written: u64,
    capped: bool,
    file: Option<(PathBuf, BufWriter<File>)>,
    dir: PathBuf,
    failure: Option<String>,
    total: u64,
    /// The log outlives this process (`keepLogs`): its name then does not carry the host's pid, which
    /// is what the host watchdog removes after a host that died without cleaning up.
    kept: bool,
}

impl RawSpool {
    /// `dir` is where a log file is created if one is needed.
    pub fn new(dir: PathBuf) -> Self {
        RawSpool {
            memory: Vec::new(),
            max_file_bytes: DEFAULT_MAX_LOG_BYTES,
            written: 0,
            capped: false,
            file: None,
            dir,
            failure: None,
            total: 0,
            kept: false,
        }
    }

    /// Whether the log is kept after the host is gone (see [`log_name_prefix`]).
    pub fn set_kept(&mut self, kept: bool) {
        self.kept = kept;
    }

    /// Bytes the log file may hold; what comes after is counted but not written.
    pub fn set_max_file_bytes(&mut self, max: u64) {
        self.max_file_bytes = max;
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if let Some((_, w)) = self.file.as_mut() {
            let room = self.max_file_bytes.saturating_sub(self.written) as usize;
            let bytes = if bytes.len() > room {
                self.capped = true;
                &bytes[..room]
            } else {
                bytes
            };
            self.written += bytes.len() as u64;
            if let Err(e) = w.write_all(bytes) {
                self.failure = Some(format!("writing the output log failed: {e}"));
                self.file = None;
            }
            return;
        }
        if self.failure.is_some() {
            return;
        }
        self.memory.extend_from_slice(bytes);
        if self.memory.len() > MEMORY_LIMIT {
            self.spill();
        }
    }

    /// Move to a file from now on. Safe to call more than once.
    pub fn spill(&mut self) {
        if self.file.is_some() || self.failure.is_some() {
            return;
        }
        match self.open_file() {
            Ok((path, mut w)) => {
                let mut data = std::mem::take(&mut self.memory);
                if data.len() as u64 > self.max_file_bytes {
                    data.truncate(self.max_file_bytes as usize);
                    self.capped = true;
                }
                self.written = data.len() as u64;
                if let Err(e) = w.write_all(&data) {
                    self.failure = Some(format!("writing the output log failed: {e}"));
                    return;
                }
                self.file = Some((path, w));
            }
            Err(e) => {
                self.memory = Vec::new();
                self.failure = Some(e.message);
            }
        }
    }

    fn open_file(&self) -> Result<(PathBuf, BufWriter<File>), AgentError> {
        ensure_private_dir(&self.dir)?;
        #[cfg(unix)]
        {
            let (path, file) = create_log_in(&self.dir, &log_name_prefix(self.kept))?;
            Ok((path, BufWriter::with_capacity(64 * 1024, file)))
        }
        #[cfg(not(unix))]
        self.open_temp_file()
    }

    #[cfg(not(unix))]
    fn open_temp_file(&self) -> Result<(PathBuf, BufWriter<File>), AgentError> {
        let file = tempfile::Builder::new()
            .prefix(&log_name_prefix(self.kept))
            .suffix(".log")
            .tempfile_in(&self.dir)
            .map_err(|e| {
                AgentError::new(
                    ErrorCode::Internal,
                    format!("cannot create an output log in {}: {e}", self.dir.display()),
                )
            })?;
        // Kept on purpose: the agent reads it after the run is over.
        let (file, path) = file.keep().map_err(|e| {
            AgentError::new(
                ErrorCode::Internal,
                format!("cannot keep the output log: {e}"),
            )
        })?;
        Ok((path, BufWriter::with_capacity(64 * 1024, file)))
    }

    /// Flush the file, if any. Called when the run ends.
    pub fn finish(&mut self) {
        if let Some((_, w)) = self.file.as_mut() {
            if let Err(e) = w.flush() {
                self.failure = Some(format!("flushing the output log failed: {e}"));
            }
        }
        self.memory = Vec::new();
    }

    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|(p, _)| p.as_path())
    }

    /// Why the log is incomplete, if writing it failed.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Whether the log file stopped at its cap.
    pub fn capped(&self) -> bool {
        self.capped
    }
}

pub fn ensure_private_dir(dir: &Path) -> Result<(), AgentError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| {
        AgentError::new(
            ErrorCode::Internal,
            format!(
                "cannot create the output log directory {}: {e}",
                dir.display()
            ),
        )
    })
}

/// Make a new log file in `dir`, named `<prefix><random>.log`, mode 0600, never through a link:
/// the directory is opened without following a link at its name and must be this user's (or a
/// sticky one, as `/tmp` is), and the file is made there by name, exclusively. The default
/// directory's path is predictable (`/tmp/agent-exec-<uid>`): another user could have made it
/// first to read the logs, and a sandboxed run whose roots hold it once replaced it with a link, so
/// the host wrote the next run's output wherever the link pointed.
#[cfg(unix)]
fn create_log_in(dir: &Path, prefix: &str) -> Result<(PathBuf, File), AgentError> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let refuse = |why: String| {
        AgentError::new(
            ErrorCode::Internal,
            format!(
                "cannot create an output log in {}: {why}; remove it, or give the host another logDir",
                dir.display()
            ),
        )
    };
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                refuse("it is a symbolic link or not a directory".into())
            }
            _ => refuse(e.to_string()),
        })?;
    let meta = handle.metadata().map_err(|e| refuse(e.to_string()))?;
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    // The sticky bit (S_ISVTX, whose type differs between platforms).
    const STICKY: u32 = 0o1000;
    if meta.uid() != me && meta.mode() & STICKY == 0 {
        return Err(refuse(format!(
            "it belongs to user {}, not to this process's user {me}",
            meta.uid()
        )));
    }
    for _ in 0..16 {
        let name = format!("{prefix}{}.log", crate::util::uuid_v4());
        let c_name = std::ffi::CString::new(name.as_str()).map_err(|e| refuse(e.to_string()))?;
        // SAFETY: openat reads the name; the directory's fd is open.
        let fd = unsafe {
            libc::openat(
                handle.as_raw_fd(),
                c_name.as_ptr(),
                libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600 as libc::c_uint,
            )
        };
        if fd >= 0 {
            // SAFETY: a new fd we own from here on.
            return Ok((dir.join(name), unsafe { File::from_raw_fd(fd) }));
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(refuse(e.to_string()));
        }
    }
    Err(refuse("no free name after 16 tries".into()))
}

/// How a log file's name starts: `run-<host pid>-` for a log that goes with the host (the watchdog
/// removes those of a host that died, by that prefix), plain `run-` for one kept on purpose.
pub fn log_name_prefix(kept: bool) -> String {
    if kept {
        "run-".to_string()
    } else {
        format!("run-{}-", std::process::id())
    }
}

/// The default directory for output logs: `<tmp>/agent-exec-<uid>`.
pub fn default_log_dir() -> PathBuf {
    #[cfg(unix)]
    let suffix = format!("agent-exec-{}", nix::unistd::getuid());
    #[cfg(not(unix))]
    let suffix = "agent-exec".to_string();
    std::env::temp_dir().join(suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_log_is_never_made_through_a_link_or_in_another_users_directory() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        let logs = dir.path().join("logs");
        std::os::unix::fs::symlink(&target, &logs).unwrap();
        let mut s = RawSpool::new(logs.clone());
        s.push(b"output");
        s.spill();
        assert!(s.path().is_none());
        assert!(
            s.failure().unwrap().contains("symbolic link"),
            "{:?}",
            s.failure()
        );
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
        // A directory of this user's: the log is made there, private.
        let real = dir.path().join("real");
        let mut s = RawSpool::new(real.clone());
        s.push(b"output");
        s.spill();
        s.finish();
        let made = s.path().unwrap();
        assert_eq!(made.parent(), Some(real.as_path()));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(made).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(std::fs::read(made).unwrap(), b"output");
    }

    #[test]
    fn small_output_never_touches_disk() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = RawSpool::new(dir.path().join("logs"));
        s.push(b"hello");
        s.finish();
        assert!(s.path().is_none());
        assert!(!dir.path().join("logs").exists());
        assert_eq!(s.total_bytes(), 5);
    }

    #[test]
    fn spill_keeps_every_byte_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = RawSpool::new(dir.path().to_path_buf());
        s.push(b"\xffhead ");
        s.spill();
        s.push(b"tail\x1b[0m");
        s.finish();
        let data = std::fs::read(s.path().unwrap()).unwrap();
        assert_eq!(data, b"\xffhead tail\x1b[0m");
    }

    #[test]
    fn the_log_file_stops_at_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = RawSpool::new(dir.path().to_path_buf());
        s.set_max_file_bytes(10);
        s.push(b"12345");
        s.spill();
        s.push(b"67890abc");
        s.push(b"def");
        s.finish();
        assert!(s.capped());
        assert_eq!(s.total_bytes(), 16);
        assert_eq!(std::fs::read(s.path().unwrap()).unwrap(), b"1234567890");
    }

    #[test]
    fn large_output_spills_by_itself() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = RawSpool::new(dir.path().to_path_buf());
        let block = vec![b'x'; 64 * 1024];
        for _ in 0..20 {
            s.push(&block);
        }
        s.finish();
        let len = std::fs::metadata(s.path().unwrap()).unwrap().len();
        assert_eq!(len, 20 * 64 * 1024);
    }
}
