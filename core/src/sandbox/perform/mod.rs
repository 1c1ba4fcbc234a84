//! The supervisor makes a judged call itself, on the copy of the arguments it judged.
//!
//! A seccomp notification shows the supervisor a system call whose path is in the caller's memory.
//! Answering "go on" (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`) lets the kernel read that path again, later:
//! another thread of the caller can rewrite the buffer between the two reads, or swap a directory on
//! the path for a link, and the kernel then writes a name the supervisor never judged (a `.envrc`, a
//! nested repository's hook). The kernel's documentation warns of exactly this. So for every call
//! that makes, changes or removes a name, the supervisor:
//!
//! 1. resolves the path the caller named in the caller's view and judges the result (`supervisor`);
//! 2. opens the judged path's parent directory beneath the caller's root, refusing any link on the
//!    way (`RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS`): the resolution already followed every link, so a
//!    link found now is one swapped in since, and the call fails rather than land elsewhere;
//! 3. makes the call relative to that directory with the judged final name (`openat`, `mkdirat`,
//!    `renameat2`, ...), as the caller: no effective capability (a sandboxed command has none) and the
//!    caller's umask, on a thread with a file-system context of its own;
//! 4. answers with the call's result, and for an open, puts the new file in the caller's fd table
//!    (`SECCOMP_IOCTL_NOTIF_ADDFD`, atomically with the answer).
//!
//! What the kernel still decides: the mounts of the caller's view (read-only binds, hidden
//! directories) apply, since the lookup starts at the caller's root; file modes and ownership apply,
//! since the call is made without capabilities. Landlock does not (the supervisor is not confined),
//! which is why only judged calls are made here: the judgment covers what Landlock would refuse.

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

mod identity;
mod open;

pub use identity::own_fs;
use identity::{has_own_fs, on_own_fs};
pub(in crate::sandbox) use identity::{with_capabilities, CallerIdentity};
use open::{file_type, open};

/// A judged call, with what it needs beyond its paths (read once from the caller).
#[derive(Debug, Clone)]
pub enum Act {
    /// `open`, `openat`, `openat2`, `creat` for writing: a new fd in the caller.
    Open {
        flags: i32,
        mode: u32,
        /// `openat2`'s restrictions on the caller's own lookup, checked as the caller would meet them.
        resolve: u64,
        /// `openat2`: flags and mode are checked as given (`EINVAL` for unknown flags, a mode without
        /// `O_CREAT`); `open`, `openat` and `creat` ignore unknown flags and such a mode.
        strict: bool,
        /// The path ended in `/`: only a directory is opened (`EISDIR` for a creation).
        dir_only: bool,
    },
    Mkdir {
        mode: u32,
    },
    Mknod {
        mode: u32,
        dev: u64,
    },
    /// `unlink`, `rmdir`, `unlinkat` (`AT_REMOVEDIR` in `flags`).
    Unlink {
        flags: i32,
    },
    /// `rename`, `renameat`, `renameat2`: targets are the old name, then the new one.
    Rename {
        flags: u32,
    },
    /// `link`, `linkat`: targets are the new name, then the file linked (already resolved).
    Link,
    /// `symlink`, `symlinkat`: the link's text, as read once.
    Symlink {
        text: CString,
    },
    /// `chmod`, `fchmodat`, `fchmodat2`, `fchmod`.
    Chmod {
        mode: u32,
    },
    /// `chown`, `lchown`, `fchownat`, `fchown` (`u32::MAX`: unchanged).
    Chown {
        uid: u32,
        gid: u32,
    },
    /// `utimensat` and the older `utime`, `utimes`, `futimesat`: the times read once (`None`: now).
    Utime {
        times: Option<[libc::timespec; 2]>,
    },
    /// `truncate`.
    Truncate {
        length: i64,
    },
    /// `bind` of the caller's socket `socket` to a path (a socket file is made).
    Bind {
        socket: i32,
    },
    /// `setxattr` and kin (`value` and `flags`), or `removexattr` and kin (`value` `None`): the
    /// attribute's name and value as read once.
    Xattr {
        name: CString,
        value: Option<Vec<u8>>,
        flags: i32,
    },
}

impl Act {
    /// Whether the call makes a file whose mode the caller's umask shapes.
    fn creates(&self) -> bool {
        match self {
            Act::Open { flags, .. } => {
                flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE
            }
            Act::Mkdir { .. } | Act::Mknod { .. } | Act::Bind { .. } => true,
            _ => false,
        }
    }
}

/// Where a judged path argument leads, as the supervisor judged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An absolute path in the caller's view with every link resolved (the final one as the call
    /// asks).
    Path(PathBuf),
    /// A `/proc` link to an open file (`/proc/<pid>/fd/<n>`, `/dev/stdout`'s end), reopened through
    /// the link itself (the file may have no name: a pipe, a deleted file); `seen` is what the link
    /// read when judged, and must read the same on the file opened.
    ProcLink { link: PathBuf, seen: PathBuf },
    /// The caller's open file `fd` (a call by descriptor, or `AT_EMPTY_PATH`; `AT_FDCWD`: its cwd),
    /// taken through `/proc` and checked to be the one judged: `seen` is what its link read then.
    Fd { fd: i32, seen: PathBuf },
}

/// A judged call and its targets, in the call's order.
#[derive(Debug, Clone)]
pub struct Job {
    pub act: Act,
    pub targets: Vec<Target>,
    /// The caller's directory fd and path, as read once, for `openat2`'s resolve checks.
    pub as_named: Option<(i32, CString)>,
    /// The entry a rename or link makes lies inside a host's git directory, where only a regular
    /// file may be put (see `host_repos::special_in_hosts_git_dir`): the file is taken by a handle
    /// and checked to be one, and it is that file which is given the new name (another thread may
    /// put a link at the source's name after the judgment).
    pub regular_only: bool,
    /// The rename puts an index in place in a host's git directory (told by its place there, see
    /// `host_repos::is_index_place`): it is read and put in place as `git_index` makes it.
    pub index_in_place: bool,
}

/// What a job came to.
#[derive(Debug)]
pub enum Outcome {
    /// The call's return value.
    Value(i64),
    /// A file to give the caller as the call's result.
    File { file: OwnedFd, cloexec: bool },
    /// The call's error.
    Error(i32),
    /// An open that would wait (a FIFO without a reader yet): to be made where waiting is allowed.
    Blocks,
    /// Refused at the call itself, on what the supervisor read there (an index put in place in a
    /// host's git directory, see `git_index`): the error, and the rule's words for the denial.
    Refused { errno: i32, rule: String },
}

/// What a run's calls are made against: its root (all its processes share it: `chroot`, `setns`
/// and `unshare` are refused in the sandbox) and its umask.
pub struct Caller {
    root: OnceLock<Arc<OwnedFd>>,
    umask: AtomicU32,
    /// Set once any process of the run calls `umask`: from then on each creation reads its
    /// caller's umask from `/proc`.
    umask_varies: AtomicBool,
}

const UNKNOWN: u32 = u32::MAX;

impl Default for Caller {
    fn default() -> Self {
        Caller {
            root: OnceLock::new(),
            umask: AtomicU32::new(UNKNOWN),
            umask_varies: AtomicBool::new(false),
        }
    }
}

impl Caller {
    /// The run's root, opened through `pid` the first time (`still_waiting` says the pid was still
    /// the caller after the open, so a reused pid's root is never taken).
    pub fn root(&self, pid: u32, still_waiting: impl Fn() -> bool) -> Result<Arc<OwnedFd>, i32> {
        if let Some(root) = self.root.get() {
            return Ok(root.clone());
        }
        let opened = super::unix_connect::open_root(pid, &still_waiting).or_else(|e| match e {
            libc::EACCES | libc::EPERM => {
                with_capabilities(|| super::unix_connect::open_root(pid, &still_waiting))
            }
            e => Err(e),
        });
        let root = Arc::new(opened?);
        Ok(self.root.get_or_init(|| root).clone())
    }

    /// A process of the run calls `umask` (the supervisor is told before the call is made).
    pub fn umask_called(&self) {
        self.umask_varies.store(true, Ordering::Release);
    }

    fn umask_of(&self, pid: u32) -> Result<u32, i32> {
        if !self.umask_varies.load(Ordering::Acquire) {
            let known = self.umask.load(Ordering::Acquire);
            if known != UNKNOWN {
                return Ok(known);
            }
        }
        let mask = read_umask(pid)?;
        if !self.umask_varies.load(Ordering::Acquire) {
            self.umask.store(mask, Ordering::Release);
        }
        Ok(mask)
    }
}

/// The `Umask:` line of `/proc/<pid>/status`.
fn read_umask(pid: u32) -> Result<u32, i32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::ESRCH))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        .ok_or(libc::ESRCH)
}

/// Make `job` for process `pid`, whose run is `caller`, without effective capabilities, and on a
/// thread with a file-system context of its own when the call creates (the caller's umask is set
/// there). `may_block`: this thread may wait on the call (an open of a FIFO waits for its reader);
/// if not, such an open comes back as `Outcome::Blocks`, to be made elsewhere.
pub fn perform(
    job: &Job,
    caller: &Caller,
    pid: u32,
    may_block: bool,
    still_waiting: impl Fn() -> bool,
) -> Outcome {
    let root = match caller.root(pid, &still_waiting) {
        Ok(root) => root,
        Err(e) => return Outcome::Error(e),
    };
    // An open handed over to wait (a FIFO's) makes nothing: no umask, and no trip to the one
    // thread that makes files for runs without a thread of their own (it would wait there too).
    if may_block || !job.act.creates() {
        let _identity = match CallerIdentity::assume() {
            Ok(guard) => guard,
            Err(e) => return Outcome::Error(e),
        };
        return make(job, &root, pid, may_block, &still_waiting);
    }
    let umask = match caller.umask_of(pid) {
        Ok(m) => m,
        Err(e) => return Outcome::Error(e),
    };
    let job = job.clone();
    on_own_fs(move || {
        let _identity = match CallerIdentity::assume() {
            Ok(guard) => guard,
            Err(e) => return Outcome::Error(e),
        };
        set_umask(umask);
        make(&job, &root, pid, false, &|| true)
    })
}

/// Give this thread's own file-system context (see `on_own_fs`) the umask `mask`; a `umask` call
/// only when it differs from the one this thread set last (nothing else here sets it), which saves
/// one on nearly every creation (issue 36).
fn set_umask(mask: u32) {
    thread_local! {
        static SET: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
    }
    if SET.with(std::cell::Cell::get) != Some(mask) {
        // SAFETY: umask sets this thread's own file-system context.
        unsafe { libc::umask(mask as libc::mode_t) };
        SET.with(|s| s.set(Some(mask)));
    }
}

/// `still_waiting`: whether the caller still waits for this call (an open that waits for a FIFO's
/// reader gives up once it does not).
fn make(
    job: &Job,
    root: &OwnedFd,
    pid: u32,
    may_block: bool,
    still_waiting: &dyn Fn() -> bool,
) -> Outcome {
    // A refusal's words, from a call that reads what it puts in place (`rename_regular`).
    let refused: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    let result = match (&job.act, job.targets.as_slice()) {
        (Act::Open { .. }, [target]) => {
            let named = job.as_named.as_ref();
            return open(root, pid, target, &job.act, named, may_block, still_waiting);
        }
        (Act::Mkdir { mode }, [Target::Path(p)]) => at(root, p, |dir, name| {
            // SAFETY: mkdirat reads the name; dir is an open directory.
            let made = unsafe { libc::mkdirat(dir, name, *mode as libc::mode_t) };
            if made == 0 {
                // The directory is the run's by identity from now on (see `host_repos`): a
                // repository made in it is the run's, one the host makes at its path later is not.
                // SAFETY: name is the NUL-terminated name just made.
                let name = unsafe { std::ffi::CStr::from_ptr(name) };
                if let Ok(Some(id)) = super::host_repos::identity_at(dir, name) {
                    super::host_repos::note_made(id, name.to_bytes() == b".git");
                }
            }
            made
        }),
        (Act::Mknod { mode, dev }, [Target::Path(p)]) => at(root, p, |dir, name| {
            // SAFETY: as above.
            unsafe { libc::mknodat(dir, name, *mode as libc::mode_t, *dev as libc::dev_t) }
        }),
        (Act::Unlink { flags }, [Target::Path(p)]) => at(root, p, |dir, name| {
            if let Err(e) = not_a_mount_point(dir, name) {
                return fail_with(e);
            }
            // SAFETY: as above.
            unsafe { libc::unlinkat(dir, name, *flags) }
        }),
        (Act::Symlink { text }, [Target::Path(p)]) => at(root, p, |dir, name| {
            // SAFETY: symlinkat reads both strings.
            unsafe { libc::symlinkat(text.as_ptr(), dir, name) }
        }),
        (Act::Rename { flags }, [Target::Path(from), Target::Path(to)]) => {
            at2(root, from, to, |fd, fname, td, tname| {
                if let Err(e) =
                    not_a_mount_point(fd, fname).and_then(|()| not_a_mount_point(td, tname))
                {
                    return fail_with(e);
                }
                if job.regular_only {
                    return match rename_regular(fd, fname, td, tname, *flags, job.index_in_place) {
                        Ok(()) => 0,
                        Err((e, rule)) => {
                            *refused.borrow_mut() = rule;
                            fail_with(e)
                        }
                    };
                }
                // SAFETY: renameat2 reads the names; both dirs are open.
                unsafe {
                    libc::syscall(libc::SYS_renameat2, fd, fname, td, tname, *flags) as libc::c_int
                }
            })
        }
        (Act::Link, [Target::Path(new), Target::ProcLink { link, seen }]) => {
            // `linkat(AT_FDCWD, "/proc/self/fd/N", .., AT_SYMLINK_FOLLOW)`, the way to give an
            // `O_TMPFILE` file a name: the file is taken through the link, checked to be the one
            // judged, and linked through a link of the supervisor's own.
            link_open_file(root, pid, link, seen, new, job.regular_only)
        }
        (Act::Link, [Target::Path(new), Target::Path(old)]) if job.regular_only => {
            at2(root, old, new, |od, oname, nd, nname| {
                let linked = regular_file_at(od, oname).and_then(|file| {
                    // SAFETY: the name is NUL-terminated and lives for the call.
                    let name = unsafe { std::ffi::CStr::from_ptr(nname) };
                    link_own(&file, nd, name)
                });
                linked.map_or_else(fail_with, |()| 0)
            })
        }
        (Act::Link, [Target::Path(new), Target::Path(old)]) => {
            at2(root, old, new, |od, oname, nd, nname| {
                // SAFETY: linkat reads the names; the source's final link is not followed (the
                // judged path is the file itself).
                unsafe { libc::linkat(od, oname, nd, nname, 0) }
            })
        }
        (Act::Link, [Target::Path(new), Target::Fd { fd, seen }]) => {
            // `linkat(fd, "", .., AT_EMPTY_PATH)`: as above, through the caller's descriptor.
            take_fd(pid, *fd, seen)
                .and_then(|file| only_regular(file, job.regular_only))
                .and_then(|file| link_file(root, &file, new))
        }
        (Act::Chmod { mode }, [target]) => on_file(root, pid, target, |at| match at {
            At::Name(dir, name) => chmod_at(dir, name, *mode),
            At::File(file) => {
                let own = own_link(file)?;
                // SAFETY: chmod reads the path (our /proc link to the caller's file).
                check(unsafe { libc::chmod(own.as_ptr(), *mode as libc::mode_t) })
            }
        }),
        (Act::Chown { uid, gid }, [target]) => on_file(root, pid, target, |at| {
            let (fd, name, flags) = match at {
                At::Name(dir, name) => (dir, name.as_ptr(), libc::AT_SYMLINK_NOFOLLOW),
                At::File(file) => (file, c"".as_ptr(), libc::AT_EMPTY_PATH),
            };
            // SAFETY: fchownat reads the name; fd is open.
            check(unsafe { libc::fchownat(fd.as_raw_fd(), name, *uid, *gid, flags) })
        }),
        (Act::Utime { times }, [target]) => on_file(root, pid, target, |at| {
            let times_ptr = times.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
            let rc = match at {
                // SAFETY: utimensat reads the name and the times, if any.
                At::Name(dir, name) => unsafe {
                    libc::utimensat(
                        dir.as_raw_fd(),
                        name.as_ptr(),
                        times_ptr,
                        libc::AT_SYMLINK_NOFOLLOW,
                    )
                },
                At::File(file) => {
                    let own = own_link(file)?;
                    // SAFETY: as above, through our /proc link to the caller's file.
                    unsafe { libc::utimensat(libc::AT_FDCWD, own.as_ptr(), times_ptr, 0) }
                }
            };
            check(rc)
        }),
        (Act::Truncate { length }, [Target::Path(p)]) => truncate(root, p, *length),
        (Act::Bind { socket }, [Target::Path(p)]) => bind_at(root, pid, *socket, p),
        (Act::Xattr { name, value, flags }, [target]) => on_file(root, pid, target, |at| {
            // The file as a handle, then the call through our /proc link to it: the link lands on
            // that file itself, a symbolic link included (as `lsetxattr` would).
            let held;
            let file = match at {
                At::File(file) => file,
                At::Name(dir, entry) => {
                    let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                    // SAFETY: openat reads the name; dir is open.
                    let fd = unsafe { libc::openat(dir.as_raw_fd(), entry.as_ptr(), flags) };
                    if fd < 0 {
                        return Err(errno());
                    }
                    // SAFETY: a new fd we own.
                    held = unsafe { OwnedFd::from_raw_fd(fd) };
                    &held
                }
            };
            let own = own_link(file)?;
            let rc = match value {
                // SAFETY: setxattr reads the path, the name and `value.len()` bytes of value.
                Some(value) => unsafe {
                    libc::setxattr(
                        own.as_ptr(),
                        name.as_ptr(),
                        value.as_ptr().cast(),
                        value.len(),
                        *flags,
                    )
                },
                // SAFETY: removexattr reads the path and the name.
                None => unsafe { libc::removexattr(own.as_ptr(), name.as_ptr()) },
            };
            check(rc)
        }),
        // A target that is no name (a pipe's /proc link) for a call that needs one: the kernel's
        // answer for a path through a non-directory.
        _ => Err(libc::ENOTDIR),
    };
    match (result, refused.into_inner()) {
        (Err(errno), Some(rule)) => Outcome::Refused { errno, rule },
        (Ok(v), _) => Outcome::Value(v),
        (Err(e), None) => Outcome::Error(e),
    }
}

/// `bind` of the caller's socket `socket` to `path`: the socket is taken (the same open socket), the
/// judged path's parent pinned and made this thread's cwd (a thread with a file-system context of
/// its own: creations run on one), and the socket bound to the final name there.
fn bind_at(root: &OwnedFd, pid: u32, socket: i32, path: &Path) -> Result<i64, i32> {
    let socket = super::unix_connect::take_socket(pid, socket, || true)?;
    let (dir, name) = parent_and_name(root, path)?;
    // SAFETY: sockaddr_un is plain data; zeroed is a valid empty address.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    let bytes = name.as_bytes();
    if bytes.len() >= addr.sun_path.len() {
        return Err(libc::ENAMETOOLONG);
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    if !has_own_fs() {
        return Err(libc::EAGAIN);
    }
    // SAFETY: fchdir to an open directory; this thread's cwd is its own.
    check(unsafe { libc::fchdir(dir.as_raw_fd()) })?;
    // SAFETY: bind reads `len` bytes of the address.
    check(unsafe {
        libc::bind(
            socket.as_raw_fd(),
            (&addr as *const libc::sockaddr_un).cast(),
            len as libc::socklen_t,
        )
    })
}

/// `truncate` of `path`: only a regular file (a directory or device answers as the kernel's
/// truncate would), opened without waiting and never through a final link.
fn truncate(root: &OwnedFd, path: &Path, length: i64) -> Result<i64, i32> {
    let (dir, name) = parent_and_name(root, path)?;
    match file_type(&dir, &name) {
        Some((libc::S_IFDIR, _)) => Err(libc::EISDIR),
        Some((libc::S_IFREG, _)) => {
            let flags = libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
            // SAFETY: openat reads the name; dir is open.
            let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
            if fd < 0 {
                return Err(errno());
            }
            // SAFETY: a new fd we own.
            let file = unsafe { OwnedFd::from_raw_fd(fd) };
            // SAFETY: ftruncate on an fd we hold.
            check(unsafe { libc::ftruncate(file.as_raw_fd(), length as libc::off_t) })
        }
        Some(_) => Err(libc::EINVAL),
        None => Err(errno()),
    }
}

/// A metadata call's file: a name in a pinned directory, or an open file taken from the caller.
enum At<'a> {
    Name(&'a OwnedFd, &'a CString),
    File(&'a OwnedFd),
}

/// Run `call` on `target`'s file: a path's final name in its pinned parent (never following a final
/// link: a link the call follows was resolved in the judgment), or the caller's open file.
fn on_file(
    root: &OwnedFd,
    pid: u32,
    target: &Target,
    call: impl FnOnce(At) -> Result<i64, i32>,
) -> Result<i64, i32> {
    match target {
        Target::Path(p) => {
            let (dir, name) = parent_and_name(root, p)?;
            call(At::Name(&dir, &name))
        }
        Target::Fd { fd, seen } => {
            let file = take_fd(pid, *fd, seen)?;
            call(At::File(&file))
        }
        Target::ProcLink { link, seen } => {
            let file = reopen(pid, link, seen, libc::O_PATH)?;
            call(At::File(&file))
        }
    }
}

/// `chmod` of `dir/name` without following a final link: `fchmodat2` with `AT_SYMLINK_NOFOLLOW`
/// (Linux 6.6; a link answers `EOPNOTSUPP`), else through a handle on the file.
fn chmod_at(dir: &OwnedFd, name: &CString, mode: u32) -> Result<i64, i32> {
    const SYS_FCHMODAT2: libc::c_long = 452;
    // SAFETY: fchmodat2 reads the name; dir is open.
    let rc = unsafe {
        libc::syscall(
            SYS_FCHMODAT2,
            dir.as_raw_fd(),
            name.as_ptr(),
            mode,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc == 0 {
        return Ok(0);
    }
    if errno() != libc::ENOSYS {
        return Err(errno());
    }
    let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat reads the name; dir is open.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new fd we own.
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    if file_type(&file, &CString::default()).is_some_and(|(t, _)| t == libc::S_IFLNK) {
        return Err(libc::EOPNOTSUPP);
    }
    let own = own_link(&file)?;
    // SAFETY: chmod reads the path (our /proc link to the file).
    check(unsafe { libc::chmod(own.as_ptr(), mode as libc::mode_t) })
}

/// `/proc/self/fd/<n>` of a file the supervisor holds: a path the kernel follows to that file.
fn own_link(file: &OwnedFd) -> Result<CString, i32> {
    CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(|_| libc::EINVAL)
}

fn check(rc: libc::c_int) -> Result<i64, i32> {
    if rc < 0 {
        Err(errno())
    } else {
        Ok(0)
    }
}

/// The caller's open file `fd` (`AT_FDCWD`: its cwd) as a handle of the supervisor's, checked to be
/// the file judged: its link must read as `seen` did (the caller may have put another file at that
/// number since).
fn take_fd(pid: u32, fd: i32, seen: &Path) -> Result<OwnedFd, i32> {
    let file = caller_handle(pid, fd)?;
    verify(&file, seen)?;
    Ok(file)
}

/// A handle (`O_PATH`) on the caller's open file `fd` (`AT_FDCWD`: its cwd), never opening what it
/// is (a FIFO must not be opened here).
fn caller_handle(pid: u32, fd: i32) -> Result<OwnedFd, i32> {
    let c = CString::new(fd_link(pid, fd)).map_err(|_| libc::EINVAL)?;
    // SAFETY: open reads the path.
    let raw = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if raw < 0 {
        return Err(match errno() {
            libc::ENOENT => libc::EBADF,
            e => e,
        });
    }
    // SAFETY: a new fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// That `file`'s link reads as `seen` (the text judged).
fn verify(file: &OwnedFd, seen: &Path) -> Result<(), i32> {
    let now = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    if now != seen {
        // Another file took the number since it was judged: the caller raced its own call.
        return Err(libc::EAGAIN);
    }
    Ok(())
}

/// The last OS error of this thread.
fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn c_name(name: &OsStr) -> Result<CString, i32> {
    CString::new(name.as_bytes()).map_err(|_| libc::EINVAL)
}

/// `path` (absolute, in the caller's view) as the supervisor reaches it by name, through
/// `/proc/<pid>/root`.
pub(super) fn in_view(pid: u32, path: &Path) -> PathBuf {
    let mut at = PathBuf::from(format!("/proc/{pid}/root"));
    at.push(path.strip_prefix("/").unwrap_or(path));
    at
}

/// `path` (absolute, in the caller's view) relative to the caller's root, for the `*at` calls made
/// beneath a handle on it (`.` for the root itself).
pub(super) fn beneath_root(path: &Path) -> Result<CString, i32> {
    let relative = path.strip_prefix("/").map_err(|_| libc::EINVAL)?;
    if relative.as_os_str().is_empty() {
        return c_name(OsStr::new("."));
    }
    c_name(relative.as_os_str())
}

/// The `/proc` link of the caller's fd `fd` (`AT_FDCWD`: its cwd).
pub(super) fn fd_link(pid: u32, fd: i32) -> String {
    match fd {
        libc::AT_FDCWD => format!("/proc/{pid}/cwd"),
        fd => format!("/proc/{pid}/fd/{fd}"),
    }
}

/// The directory `path` (absolute, in the caller's view, links already resolved) beneath `root`,
/// with no link anywhere on the way (one there now was swapped in since the judgment).
fn pinned_dir(root: &OwnedFd, path: &Path) -> Result<OwnedFd, i32> {
    let c = beneath_root(path)?;
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
    let resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    openat2(root, &c, flags, 0, resolve)
}

/// `openat2(dir, path, {flags, mode, resolve})`: a new fd, or the error.
pub(super) fn openat2(
    dir: &OwnedFd,
    path: &std::ffi::CStr,
    flags: i32,
    mode: u32,
    resolve: u64,
) -> Result<OwnedFd, i32> {
    // SAFETY: open_how is plain data; all-zero is its default (libc marks it non-exhaustive).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u32 as u64;
    how.mode = u64::from(mode);
    how.resolve = resolve;
    // SAFETY: openat2 reads the path and open_how, both alive for the call; dir is open.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new fd we own from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `path`'s parent, pinned, and its final name (`.` for the root itself).
fn parent_and_name(root: &OwnedFd, path: &Path) -> Result<(OwnedFd, CString), i32> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((pinned_dir(root, parent)?, c_name(name)?)),
        _ => Ok((pinned_dir(root, Path::new("/"))?, c_name(OsStr::new("."))?)),
    }
}

/// `Ok` unless `name` in `dir` is a mount point of the run's view (`EBUSY`, the kernel's answer to
/// a rename or removal of one). `dir` was reached from the run's root, so the lookup crosses the
/// run's mounts: the files and directories hidden from it (an empty file or directory mounted over
/// them), its read-only binds and its roots. The kernel's own check sees only the mounts of the
/// caller's namespace, and the supervisor's thread is in the host's: a rename made here detached the
/// run's mount, so a hidden `.env` moved to a name nothing hid, and the directories covered in the
/// run's view (other runs' temp dirs, the session logs) could be moved or replaced by the run.
/// (The supervisor's judgment refuses and records these first, see `is_mount_point`; this is the
/// check at the call itself.) A name that is not there is left to the call itself.
fn not_a_mount_point(dir: RawFd, name: *const libc::c_char) -> Result<(), i32> {
    // SAFETY: the callers pass a NUL-terminated name that lives for the call.
    let name = unsafe { std::ffi::CStr::from_ptr(name) };
    match mount_root_at(dir, name) {
        Ok(true) => Err(libc::EBUSY),
        Ok(false) => Ok(()),
        Err(libc::ENOENT | libc::ENOTDIR) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether `path` (absolute, in the supervisor's view: `/proc/<pid>/root/...` for the caller's) is
/// a mount point, its last link not followed. Unknown (an error) counts as one.
pub(super) fn is_mount_point(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return true;
    };
    match mount_root_at(libc::AT_FDCWD, &c) {
        Ok(root) => root,
        Err(libc::ENOENT | libc::ENOTDIR) => false,
        Err(_) => true,
    }
}

/// `statx`'s `STATX_ATTR_MOUNT_ROOT` of `name` in `dir`, not following a last link. The attribute
/// is the VFS's own (Linux 5.8; Landlock needs 5.13): a kernel that does not tell is taken to say
/// yes.
fn mount_root_at(dir: RawFd, name: &std::ffi::CStr) -> Result<bool, i32> {
    let flags = libc::AT_SYMLINK_NOFOLLOW | libc::AT_NO_AUTOMOUNT;
    let stx = super::host_repos::statx_at(dir, name, flags, libc::STATX_TYPE)?;
    let mount_root = libc::STATX_ATTR_MOUNT_ROOT as u64;
    Ok(stx.stx_attributes_mask & mount_root == 0 || stx.stx_attributes & mount_root != 0)
}

/// Fail a call closure with `errno` (as the call itself would have: -1 and errno set).
fn fail_with(errno: i32) -> libc::c_int {
    // SAFETY: errno is this thread's own.
    unsafe { *libc::__errno_location() = errno };
    -1
}

fn at(
    root: &OwnedFd,
    path: &Path,
    call: impl FnOnce(RawFd, *const libc::c_char) -> libc::c_int,
) -> Result<i64, i32> {
    let (dir, name) = parent_and_name(root, path)?;
    if call(dir.as_raw_fd(), name.as_ptr()) < 0 {
        return Err(errno());
    }
    Ok(0)
}

fn at2(
    root: &OwnedFd,
    first: &Path,
    second: &Path,
    call: impl FnOnce(RawFd, *const libc::c_char, RawFd, *const libc::c_char) -> libc::c_int,
) -> Result<i64, i32> {
    let (d1, n1) = parent_and_name(root, first)?;
    let (d2, n2) = parent_and_name(root, second)?;
    if call(d1.as_raw_fd(), n1.as_ptr(), d2.as_raw_fd(), n2.as_ptr()) < 0 {
        return Err(errno());
    }
    Ok(0)
}

fn link_open_file(
    root: &OwnedFd,
    pid: u32,
    link: &Path,
    seen: &Path,
    new: &Path,
    regular_only: bool,
) -> Result<i64, i32> {
    let file = only_regular(reopen(pid, link, seen, libc::O_PATH)?, regular_only)?;
    link_file(root, &file, new)
}

/// `file` itself, unless only a regular file may be linked and it is none (`EPERM`).
fn only_regular(file: OwnedFd, regular_only: bool) -> Result<OwnedFd, i32> {
    if regular_only && file_kind(&file)? != libc::S_IFREG {
        return Err(libc::EPERM);
    }
    Ok(file)
}

/// The file type bits of an open file.
fn file_kind(file: &OwnedFd) -> Result<libc::mode_t, i32> {
    stat_of(file).map(|st| st.st_mode & libc::S_IFMT)
}

/// A handle on the entry `name` in `dir`, its last link not followed, if it is a regular file
/// (`EPERM` if it is anything else).
fn regular_file_at(dir: RawFd, name: *const libc::c_char) -> Result<OwnedFd, i32> {
    // SAFETY: openat reads the NUL-terminated name; dir is an open directory.
    let fd = unsafe { libc::openat(dir, name, libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new fd we own.
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    only_regular(file, true)
}

/// Give `file` the name `name` in `dir`, through a link of the supervisor's own to it.
fn link_own(file: &OwnedFd, dir: RawFd, name: &std::ffi::CStr) -> Result<(), i32> {
    let own = own_link(file)?;
    // SAFETY: linkat reads both names; dir is an open directory.
    check(unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            own.as_ptr(),
            dir,
            name.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    })
    .map(|_| ())
}

/// `renameat2` of a regular file into a host's git directory, made on the file checked to be one:
/// it is linked by a handle under a fresh name beside the destination, that name renamed over the
/// destination (atomically, as a rename would), and the source's name removed if it still names
/// the same file. An exchange or a whiteout is refused (`EPERM`): git makes neither.
/// An index put in place (`index`, told by the judgment, or a split index's `sharedindex.*`) is
/// read and put in place as `git_index::sanitized` makes it, or refused (the error with the rule's
/// words).
fn rename_regular(
    from_dir: RawFd,
    from: *const libc::c_char,
    to_dir: RawFd,
    to: *const libc::c_char,
    flags: u32,
    index: bool,
) -> Result<(), (i32, Option<String>)> {
    if flags & (libc::RENAME_EXCHANGE | libc::RENAME_WHITEOUT) != 0 {
        return Err((libc::EPERM, None));
    }
    let file = regular_file_at(from_dir, from).map_err(|e| (e, None))?;
    // SAFETY: the name is NUL-terminated and lives for the call.
    let name = unsafe { std::ffi::CStr::from_ptr(to) }.to_bytes();
    if name.starts_with(b"sharedindex.") {
        return Err((libc::EPERM, Some(SPLIT_INDEX_RULE.into())));
    }
    if index {
        return put_index_in_place(&file, from_dir, from, to_dir, to, flags);
    }
    rename_file(&file, from_dir, from, to_dir, to, flags).map_err(|e| (e, None))
}

const SPLIT_INDEX_RULE: &str = "a split index in the host's git directory: its entries lie in a shared index the supervisor does not read (core.splitIndex is not supported for the host's repositories in the sandbox)";

/// Read the index `file` (a handle on the run's `index.lock`), and put the copy `git_index` makes of
/// it at `to`, a file of the supervisor's own that no process of the run holds open, then remove the
/// source's name if it still names that file.
fn put_index_in_place(
    file: &OwnedFd,
    from_dir: RawFd,
    from: *const libc::c_char,
    to_dir: RawFd,
    to: *const libc::c_char,
    flags: u32,
) -> Result<(), (i32, Option<String>)> {
    let plain = |e: i32| (e, None);
    let own = own_link(file).map_err(plain)?;
    // SAFETY: open reads our own /proc link; a new fd we own.
    let fd = unsafe { libc::open(own.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(plain(errno()));
    }
    let mut reading = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut reading, &mut bytes).map_err(|e| plain(io_errno(&e)))?;
    // The index it replaces (what the host's git reads now), for the entries it already held.
    let previous = read_at(to_dir, to);
    let clean = super::git_index::sanitized(&bytes, previous.as_deref()).map_err(|why| {
        (
            libc::EPERM,
            Some(format!(
                "an index put in the host's git directory: {why} (the host's git would write what it names)"
            )),
        )
    })?;
    let st = stat_of(file).map_err(plain)?;
    let temp = temp_name().map_err(plain)?;
    let flags_new =
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat reads the name; to_dir is an open directory; a new fd we own.
    let fd = unsafe { libc::openat(to_dir, temp.as_ptr(), flags_new, 0o600) };
    if fd < 0 {
        return Err(plain(errno()));
    }
    let mut writing = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let written = std::io::Write::write_all(&mut writing, &clean)
        .map_err(|e| io_errno(&e))
        .and_then(|()| {
            // SAFETY: fchmod on an fd we hold.
            check(unsafe { libc::fchmod(writing.as_raw_fd(), st.st_mode & 0o7777) }).map(|_| ())
        })
        // (The copy is the supervisor's own: nothing else holds it.)
        .and_then(|()| rename_at(to_dir, temp.as_ptr(), to_dir, to, flags));
    if let Err(e) = written {
        // SAFETY: unlinkat reads the name; the dir is open.
        unsafe { libc::unlinkat(to_dir, temp.as_ptr(), 0) };
        return Err(plain(e));
    }
    if same_file_at(from_dir, from, &st) {
        // SAFETY: unlinkat reads the name; the dir is open.
        unsafe { libc::unlinkat(from_dir, from, 0) };
    }
    Ok(())
}

/// The contents of the regular file `name` in `dir` (its last link not followed), if it can be read.
fn read_at(dir: RawFd, name: *const libc::c_char) -> Option<Vec<u8>> {
    // SAFETY: openat reads the NUL-terminated name; dir is open; a new fd we own.
    let fd = unsafe {
        libc::openat(
            dir,
            name,
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    if file_kind(&file).ok()? != libc::S_IFREG {
        return None;
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::fs::File::from(file), &mut bytes).ok()?;
    Some(bytes)
}

fn io_errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

/// Whether `name` in `dir` (its last link not followed) is the file `st` describes.
fn same_file_at(dir: RawFd, name: *const libc::c_char, st: &libc::stat) -> bool {
    // SAFETY: fstatat fills a zeroed stat; the name is NUL-terminated.
    let mut now: libc::stat = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::fstatat(dir, name, &mut now, libc::AT_SYMLINK_NOFOLLOW) };
    rc == 0 && (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)
}

/// `fstat` of an open file.
fn stat_of(file: &OwnedFd) -> Result<libc::stat, i32> {
    // SAFETY: fstat fills a zeroed stat for an fd we hold.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } < 0 {
        return Err(errno());
    }
    Ok(st)
}

/// A fresh name for a file of the supervisor's own beside the one it puts in place.
fn temp_name() -> Result<CString, i32> {
    CString::new(format!(".agent-exec-{}", crate::util::uuid_v4())).map_err(|_| libc::EINVAL)
}

/// `renameat2(from_dir, from, to_dir, to, flags)`.
fn rename_at(
    from_dir: RawFd,
    from: *const libc::c_char,
    to_dir: RawFd,
    to: *const libc::c_char,
    flags: u32,
) -> Result<(), i32> {
    // SAFETY: renameat2 reads the NUL-terminated names; both dirs are open.
    let rc = unsafe { libc::syscall(libc::SYS_renameat2, from_dir, from, to_dir, to, flags) };
    if rc < 0 {
        return Err(errno());
    }
    Ok(())
}

/// Rename the regular file `file` (the one at `from` when it was checked) to `to`: linked by a
/// handle under a fresh name beside `to`, that name renamed over it, then `from` removed if it
/// still names the same file.
fn rename_file(
    file: &OwnedFd,
    from_dir: RawFd,
    from: *const libc::c_char,
    to_dir: RawFd,
    to: *const libc::c_char,
    flags: u32,
) -> Result<(), i32> {
    let mine = stat_of(file)?;
    // Two names of one file: a rename does nothing.
    if same_file_at(to_dir, to, &mine) {
        return Ok(());
    }
    let temp = temp_name()?;
    link_own(file, to_dir, &temp)?;
    if let Err(e) = rename_at(to_dir, temp.as_ptr(), to_dir, to, flags) {
        // SAFETY: unlinkat reads the name; the dir is open.
        unsafe { libc::unlinkat(to_dir, temp.as_ptr(), 0) };
        return Err(e);
    }
    if same_file_at(from_dir, from, &mine) {
        // SAFETY: as above.
        unsafe { libc::unlinkat(from_dir, from, 0) };
    }
    Ok(())
}

/// Give the open `file` the name `new`, through a link of the supervisor's own to it.
fn link_file(root: &OwnedFd, file: &OwnedFd, new: &Path) -> Result<i64, i32> {
    let (dir, name) = parent_and_name(root, new)?;
    let own = own_link(file)?;
    // SAFETY: linkat reads both names; dir is an open directory.
    check(unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            own.as_ptr(),
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    })
}

/// Reopen a file through a `/proc` link of the caller's (`/proc/<pid>/fd/<n>` in its view), then
/// check the file opened is the one judged: the link's text must read as it did (the caller may
/// have put another file at that fd number since).
fn reopen(pid: u32, link: &Path, seen: &Path, flags: i32) -> Result<OwnedFd, i32> {
    let c = c_name(in_view(pid, link).as_os_str())?;
    // O_CREAT and O_EXCL mean nothing for a file that is open already; O_NOCTTY keeps a terminal
    // from becoming the supervisor's.
    let open_flags = (flags & !(libc::O_CLOEXEC | libc::O_CREAT | libc::O_EXCL))
        | libc::O_NOCTTY
        | libc::O_CLOEXEC;
    // SAFETY: open reads the path.
    let fd = unsafe { libc::open(c.as_ptr(), open_flags) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new fd we own.
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    verify(&file, seen)?;
    Ok(file)
}

/// Put `file` in the caller's fd table as the answer to notification `id` (`SECCOMP_ADDFD_FLAG_SEND`,
/// Linux 5.14: in one step, the new number being the call's return value): `Ok(None)`, answered.
/// Kernels before it take the fd first and the answer after: `Ok(Some(number))`, still to answer.
/// The cost of the race-free open: the kernel installs the fd from the caller's side, so the ioctl
/// wakes the caller and waits to be woken back, two wake-ups the plain answer does not have (an open
/// 60 to 70 us on this 2-CPU VM against 22 us for a `mkdir` made the same way; the two-step form
/// without `SEND` measured the same).
pub fn send_file(
    listener: &OwnedFd,
    id: u64,
    file: &OwnedFd,
    cloexec: bool,
) -> Result<Option<i32>, i32> {
    let mut addfd = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
        srcfd: file.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: ADDFD reads the struct.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &mut addfd,
        )
    };
    if rc >= 0 {
        return Ok(None);
    }
    let e = errno();
    if e != libc::EINVAL {
        return Err(e);
    }
    addfd.flags = 0;
    // SAFETY: as above, without the flag an older kernel lacks.
    let number = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &mut addfd,
        )
    };
    if number < 0 {
        return Err(errno());
    }
    Ok(Some(number))
}
