//! Opens the supervisor makes for a caller: as the caller's open would be (its flags, mode and
//! lookup restrictions), never waiting on a thread that serves other calls, and for the files whose
//! meaning depends on who opens them (`/dev/tty`, a pty) the caller's own.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::{
    c_name, caller_handle, in_view, openat2, parent_and_name, reopen, Act, Outcome, Target,
};

/// `major:minor` of `/dev/tty`, which names the opener's controlling terminal.
const DEV_TTY: (u32, u32) = (5, 0);

pub(super) fn open(
    root: &OwnedFd,
    pid: u32,
    target: &Target,
    act: &Act,
    as_named: Option<&(i32, CString)>,
    may_block: bool,
    still_waiting: &dyn Fn() -> bool,
) -> Outcome {
    let Act::Open {
        flags,
        mode,
        resolve,
        strict,
        dir_only,
    } = *act
    else {
        return Outcome::Error(libc::EINVAL);
    };
    let cloexec = flags & libc::O_CLOEXEC != 0;
    if resolve != 0 {
        if let Err(e) = check_callers_lookup(root, pid, resolve, as_named) {
            return Outcome::Error(e);
        }
    }
    let how = OpenAs {
        flags,
        mode,
        strict,
        dir_only,
    };
    let file = match target {
        Target::Path(p) => open_path(root, pid, p, how, may_block, still_waiting),
        Target::ProcLink { link, seen } => {
            let at = in_view(pid, link);
            let is_fifo = || std::fs::metadata(&at).is_ok_and(|m| m.file_type().is_fifo());
            let open = |f: i32| reopen(pid, link, seen, f);
            open_without_waiting(flags, may_block, still_waiting, is_fifo, open)
        }
        // Opens name a path: never a descriptor alone.
        Target::Fd { .. } => Err(libc::EINVAL),
    };
    match file {
        Ok(Some(file)) => Outcome::File { file, cloexec },
        Ok(None) => Outcome::Blocks,
        Err(e) => Outcome::Error(e),
    }
}

/// How the caller asked for a file to be opened.
#[derive(Clone, Copy)]
struct OpenAs {
    flags: i32,
    mode: u32,
    strict: bool,
    dir_only: bool,
}

/// The flags `open` and `openat` know; they ignore any other bit (`openat2` refuses it).
const VALID_OPEN_FLAGS: i32 = libc::O_ACCMODE
    | libc::O_CREAT
    | libc::O_EXCL
    | libc::O_NOCTTY
    | libc::O_TRUNC
    | libc::O_APPEND
    | libc::O_NONBLOCK
    | libc::O_DSYNC
    | libc::O_ASYNC
    | libc::O_DIRECT
    | libc::O_LARGEFILE
    | libc::O_DIRECTORY
    | libc::O_NOFOLLOW
    | libc::O_NOATIME
    | libc::O_CLOEXEC
    | libc::O_PATH
    | libc::O_TMPFILE
    | libc::O_SYNC;

/// Open `path`'s file; `None` when that would wait and `may_block` is false.
fn open_path(
    root: &OwnedFd,
    pid: u32,
    path: &Path,
    how: OpenAs,
    may_block: bool,
    still_waiting: &dyn Fn() -> bool,
) -> Result<Option<OwnedFd>, i32> {
    let mut flags = how.flags;
    if how.dir_only {
        if flags & libc::O_CREAT != 0 {
            return Err(libc::EISDIR);
        }
        flags |= libc::O_DIRECTORY;
    }
    let (dir, name) = parent_and_name(root, path)?;
    match file_type(&dir, &name) {
        // `/dev/tty` is the opener's terminal: the caller's, not the supervisor's.
        Some((libc::S_IFCHR, rdev)) if rdev == libc::makedev(DEV_TTY.0, DEV_TTY.1) => {
            return open_controlling_tty(pid, flags).map(Some)
        }
        // A pseudo-terminal: the caller's own only (Landlock grants no other; a write to another
        // of the user's terminals, the agent's, could inject input).
        Some((libc::S_IFCHR, rdev))
            if (136..=143).contains(&libc::major(rdev)) && !pty_is_callers(pid, &dir, rdev) =>
        {
            return Err(libc::EACCES)
        }
        _ => {}
    }
    let is_fifo = || file_type(&dir, &name).is_some_and(|(t, _)| t == libc::S_IFIFO);
    let open = |f: i32| open_beneath(&dir, &name, f, how);
    // A repository's HEAD the run makes marks the repository as the run's (see `host_repos`).
    let head = flags & libc::O_CREAT != 0 && matches!(name.to_bytes(), b"HEAD" | b"HEAD.lock");
    let since = head.then(super::super::host_repos::coarse_now);
    let opened = open_without_waiting(flags, may_block, still_waiting, is_fifo, open);
    if let (Some(since), Ok(Some(file))) = (since, &opened) {
        super::super::host_repos::note_made_head(file, since);
    }
    opened
}

/// `openat2` of `name` in `dir` (pinned) with the caller's flags and mode, never through a link (the
/// judgment resolved the ones the call follows; one there now is new), and checked as the call the
/// caller made: `openat2`'s strictly, `open`'s with unknown flags and a mode it would not use
/// ignored. The file's flags stay the caller's (`F_GETFL`).
fn open_beneath(dir: &OwnedFd, name: &CString, flags: i32, how: OpenAs) -> Result<OwnedFd, i32> {
    let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    let (flags, mode) = if how.strict {
        (flags, how.mode)
    } else {
        (
            flags & VALID_OPEN_FLAGS,
            if creates { how.mode & 0o7777 } else { 0 },
        )
    };
    let flags = (flags & !libc::O_CLOEXEC) | libc::O_CLOEXEC;
    let resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    openat2(dir, name, flags, mode, resolve)
}

/// Open with `open`, never waiting on this thread: the open is made non-blocking (the file's type may
/// change between any look at it and the open, so every open is), and its blocking mode given back
/// after. A FIFO opened to write with no reader yet (`ENXIO`) is what a blocking open would wait
/// for: `None` where this thread may not wait (the caller is answered from the blocking pool), else
/// retried every few milliseconds while the caller still waits. A FIFO opened to read does not wait
/// for a writer, as a blocking open would: a read before one comes sees the end of the file (only an
/// open for reading with `O_CREAT` or `O_TRUNC` comes here; other reads are the kernel's).
fn open_without_waiting(
    flags: i32,
    may_block: bool,
    still_waiting: &dyn Fn() -> bool,
    is_fifo: impl Fn() -> bool,
    open: impl Fn(i32) -> Result<OwnedFd, i32>,
) -> Result<Option<OwnedFd>, i32> {
    let asked = flags & libc::O_NONBLOCK != 0;
    let give_back = |file: OwnedFd| {
        if !asked {
            // SAFETY: F_GETFL and F_SETFL on an fd we hold.
            unsafe {
                let now = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
                libc::fcntl(file.as_raw_fd(), libc::F_SETFL, now & !libc::O_NONBLOCK);
            }
        }
        Some(file)
    };
    let waits = |e: i32| e == libc::ENXIO && !asked && is_fifo();
    match open(flags | libc::O_NONBLOCK) {
        Ok(file) => Ok(give_back(file)),
        Err(e) if waits(e) && !may_block => Ok(None),
        Err(e) if waits(e) => loop {
            if !still_waiting() {
                // The caller is gone (killed while it waited): nobody to answer.
                return Err(libc::EINTR);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            match open(flags | libc::O_NONBLOCK) {
                Ok(file) => return Ok(give_back(file)),
                Err(libc::ENXIO) => continue,
                Err(e) => return Err(e),
            }
        },
        Err(e) => Err(e),
    }
}

/// The file type (`S_IFMT` bits) and device number of `dir/name`, not following a final link.
pub(super) fn file_type(dir: &OwnedFd, name: &CString) -> Option<(libc::mode_t, libc::dev_t)> {
    // SAFETY: fstatat fills a zeroed stat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let flags = if name.is_empty() {
        libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW
    } else {
        libc::AT_SYMLINK_NOFOLLOW
    };
    let rc = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut st, flags) };
    (rc == 0).then_some((st.st_mode & libc::S_IFMT, st.st_rdev))
}

/// Whether pseudo-terminal `rdev` in directory `dir` (pinned in the caller's view) is the caller's:
/// every one of a devpts of the run's own (not the host's `/dev/pts`), else its controlling terminal.
fn pty_is_callers(pid: u32, dir: &OwnedFd, rdev: libc::dev_t) -> bool {
    // SAFETY: fstat fills a zeroed stat of an open fd.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let pinned = unsafe { libc::fstat(dir.as_raw_fd(), &mut st) } == 0;
    let hosts = std::fs::metadata("/dev/pts").map(|m| std::os::unix::fs::MetadataExt::dev(&m));
    if pinned && hosts.is_ok_and(|dev| dev != st.st_dev) {
        return true;
    }
    controlling_tty(pid).is_ok_and(|tty| tty == Some(rdev))
}

/// The caller's controlling terminal (`tty_nr` of `/proc/<pid>/stat`), if any.
fn controlling_tty(pid: u32) -> Result<Option<libc::dev_t>, i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|_| libc::ESRCH)?;
    let after_name = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .ok_or(libc::ESRCH)?;
    // Fields after the name: state, ppid, pgrp, session, tty_nr.
    let tty_nr: u64 = after_name
        .split_whitespace()
        .nth(4)
        .and_then(|v| v.parse().ok())
        .ok_or(libc::ESRCH)?;
    if tty_nr == 0 {
        return Ok(None);
    }
    let (major, minor) = (
        (tty_nr >> 8) & 0xfff,
        (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00),
    );
    Ok(Some(libc::makedev(major as u32, minor as u32)))
}

/// Open the caller's controlling terminal, as its open of `/dev/tty` would (`tty_nr` of
/// `/proc/<pid>/stat`): through a descriptor the caller holds on that terminal (the same file,
/// whichever devpts holds it), else through `/dev/pts/<n>` in the caller's view. Never a terminal
/// of the host's view: a run's own devpts numbers its terminals as the host's does, so a device
/// number alone does not say whose terminal it is. None: `ENXIO`, as the kernel answers a process
/// without one.
fn open_controlling_tty(pid: u32, flags: i32) -> Result<OwnedFd, i32> {
    use std::os::unix::fs::MetadataExt;
    let wanted = controlling_tty(pid)?.ok_or(libc::ENXIO)?;
    let open_flags = (flags & !libc::O_CLOEXEC) | libc::O_NOCTTY | libc::O_CLOEXEC;
    let open_checked = |path: &Path, like: Option<&std::fs::Metadata>| -> Option<OwnedFd> {
        let c = c_name(path.as_os_str()).ok()?;
        // SAFETY: open reads the path.
        let fd = unsafe { libc::open(c.as_ptr(), open_flags) };
        if fd < 0 {
            return None;
        }
        // SAFETY: a new fd we own.
        let file = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat fills a zeroed stat of an open fd.
        let rc = unsafe { libc::fstat(file.as_raw_fd(), &mut st) };
        let same = like.is_none_or(|m| (m.dev(), m.ino()) == (st.st_dev, st.st_ino));
        (rc == 0 && st.st_rdev == wanted && same).then_some(file)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_err(|_| libc::ESRCH)?;
    for entry in fds.flatten().take(4096) {
        let link = entry.path();
        let Ok(m) = std::fs::metadata(&link) else {
            continue;
        };
        if m.file_type().is_char_device() && m.rdev() == wanted {
            if let Some(file) = open_checked(&link, Some(&m)) {
                return Ok(file);
            }
        }
    }
    let (major, minor) = (libc::major(wanted), libc::minor(wanted));
    // Unix98 pseudo-terminal slaves: majors 136-143.
    if !(136..=143).contains(&major) {
        return Err(libc::ENXIO);
    }
    let index = (major - 136) * 256 + minor;
    let in_view = PathBuf::from(format!("/proc/{pid}/root/dev/pts/{index}"));
    open_checked(&in_view, None).ok_or(libc::ENXIO)
}

/// `openat2`'s resolve flags restrict the caller's own lookup (`RESOLVE_BENEATH` keeps it under its
/// directory fd, `RESOLVE_NO_SYMLINKS` refuses links, ...): a program relying on them for its own
/// safety must meet them here too. The lookup is redone as the caller named it, as a handle only:
/// relative to the caller's directory (taken as a handle: a FIFO there must not be opened), or for
/// an absolute path from the run's root, so links resolve in the caller's view. Its error is the
/// call's.
fn check_callers_lookup(
    root: &OwnedFd,
    pid: u32,
    resolve: u64,
    as_named: Option<&(i32, CString)>,
) -> Result<(), i32> {
    let Some((dirfd, named)) = as_named else {
        return Err(libc::EINVAL);
    };
    let absolute = named.as_bytes().first() == Some(&b'/');
    if absolute && resolve & libc::RESOLVE_BENEATH != 0 {
        // An absolute path is never beneath the directory.
        return Err(libc::EXDEV);
    }
    let held;
    let (start, resolve) = if absolute {
        // From the run's root, whose `..` is the root itself, as it is for the caller.
        (root, resolve | libc::RESOLVE_IN_ROOT)
    } else {
        held = caller_handle(pid, *dirfd)?;
        (&held, resolve)
    };
    // The path from the root, for an absolute one (RESOLVE_IN_ROOT takes it relative).
    let relative;
    let path = if absolute {
        let bytes = named.as_bytes();
        let rest = &bytes[bytes.iter().take_while(|&&b| b == b'/').count()..];
        relative = CString::new(if rest.is_empty() { &b"."[..] } else { rest })
            .map_err(|_| libc::EINVAL)?;
        &relative
    } else {
        named
    };
    match openat2(start, path, libc::O_PATH | libc::O_CLOEXEC, 0, resolve) {
        Ok(_) => Ok(()),
        // A name still to be made is no restriction's business.
        Err(libc::ENOENT) => Ok(()),
        Err(e) => Err(e),
    }
}
