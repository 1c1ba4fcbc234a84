//! What each file call the supervisor is told of is: the operation its records name, the text that
//! shows the call, the paths it judges, and the call it makes itself once they are judged
//! (`perform`), with what that needs from the caller's memory, read once.
//!
//! One table for all of them (`file_call`), so that what is judged and what is made cannot drift
//! apart: a call listed here is always made by the supervisor, never let through to a kernel that
//! would read its arguments again.

use std::ffi::CString;

use super::caller_memory;
use super::perform::Act;

/// A notified file call, judged by its `paths` and then made as `act`.
pub(super) struct FileCall {
    /// The operation named in a refusal's record (`write`, `mkdir`, `rename`, ...).
    pub op: &'static str,
    /// The call as a record shows it (`openat(O_WRONLY|O_CREAT)`).
    pub detail: String,
    /// Its paths, in the order they are judged (a rename's source first; a link's new name first).
    pub paths: Vec<PathArg>,
    /// The call the supervisor makes once every path is judged.
    pub act: Act,
    /// An `openat2` with resolve flags: its directory fd and path as the caller named them, for the
    /// lookup restrictions it asks for (see `perform`).
    pub as_named: Option<(i32, CString)>,
}

/// The file call `nr` with arguments `a` from process `pid` (`how`: `openat2`'s `open_how`, read
/// once already), or `None` for a call that is not one (an open for reading, every other call).
/// `Err`: an errno, for arguments in the caller's memory that could not be read or that the kernel
/// would refuse.
pub(super) fn file_call(
    nr: libc::c_long,
    a: &[u64; 6],
    pid: u32,
    how: Option<OpenHow>,
) -> Result<Option<FileCall>, i32> {
    let text = |at: u64| {
        let raw = caller_memory::read_path(pid, at).ok_or(libc::EFAULT)?;
        CString::new(raw).map_err(|_| libc::EINVAL)
    };
    let open = |flags: u64, mode: u64| Act::Open {
        flags: flags as i32,
        mode: mode as u32,
        resolve: 0,
        strict: false,
        dir_only: false,
    };
    let call = |op: &'static str, detail: &str, paths: Vec<PathArg>, act: Act| FileCall {
        op,
        detail: detail.to_string(),
        paths,
        act,
        as_named: None,
    };
    let xattr_set = |at: u64, value_at: u64, size: u64, flags: u64| -> Result<Act, i32> {
        Ok(Act::Xattr {
            name: xattr_name(pid, at)?,
            value: Some(xattr_value(pid, value_at, size)?),
            flags: flags as i32,
        })
    };
    let xattr_remove = |at: u64| -> Result<Act, i32> {
        Ok(Act::Xattr {
            name: xattr_name(pid, at)?,
            value: None,
            flags: 0,
        })
    };
    let nofollow = libc::AT_SYMLINK_NOFOLLOW as u64;
    let made = match nr {
        libc::SYS_openat if is_write_open(a[2]) => FileCall {
            detail: format!("openat({})", open_flags_text(a[2])),
            ..call(
                "write",
                "",
                vec![open_arg(a[0] as i64, a[1], a[2])],
                open(a[2], a[3]),
            )
        },
        libc::SYS_openat2 => {
            let how = how.ok_or(libc::EFAULT)?;
            if !is_write_open(how.flags) {
                return Ok(None);
            }
            let act = Act::Open {
                flags: how.flags as i32,
                mode: how.mode as u32,
                resolve: how.resolve,
                strict: true,
                dir_only: false,
            };
            // The lookup as the caller named it, for the restrictions it asks of it.
            let as_named = (how.resolve != 0).then(|| text(a[1])).transpose()?;
            FileCall {
                detail: format!("openat2({})", open_flags_text(how.flags)),
                as_named: as_named.map(|n| (a[0] as i32, n)),
                ..call(
                    "write",
                    "",
                    vec![open_arg(a[0] as i64, a[1], how.flags)],
                    act,
                )
            }
        }
        libc::SYS_mkdirat => call(
            "mkdir",
            "mkdirat",
            vec![entry(a[0] as i64, a[1])],
            Act::Mkdir { mode: a[2] as u32 },
        ),
        libc::SYS_mknodat => call(
            "mknod",
            "mknodat",
            vec![entry(a[0] as i64, a[1])],
            Act::Mknod {
                mode: a[2] as u32,
                dev: a[3],
            },
        ),
        libc::SYS_unlinkat => call(
            "remove",
            "unlinkat",
            vec![entry(a[0] as i64, a[1])],
            Act::Unlink { flags: a[2] as i32 },
        ),
        libc::SYS_renameat | libc::SYS_renameat2 => {
            let (detail, flags) = if nr == libc::SYS_renameat2 {
                ("renameat2", a[4] as u32)
            } else {
                ("renameat", 0)
            };
            call(
                "rename",
                detail,
                vec![entry(a[0] as i64, a[1]), entry(a[2] as i64, a[3])],
                Act::Rename { flags },
            )
        }
        // The new name, then the file linked: a protected file linked elsewhere would be written
        // through its new name.
        libc::SYS_linkat => call(
            "link",
            "linkat",
            vec![
                entry(a[2] as i64, a[3]),
                link_source(a[0] as i64, a[1], a[4]),
            ],
            Act::Link,
        ),
        libc::SYS_symlinkat => call(
            "symlink",
            "symlinkat",
            vec![entry(a[1] as i64, a[2])],
            Act::Symlink { text: text(a[0])? },
        ),
        libc::SYS_truncate => call(
            "truncate",
            "truncate",
            vec![meta(AT_FDCWD, a[0], 0)],
            Act::Truncate {
                length: a[1] as i64,
            },
        ),
        libc::SYS_fchmodat => call(
            "chmod",
            "fchmodat",
            vec![meta(a[0] as i64, a[1], 0)],
            Act::Chmod { mode: a[2] as u32 },
        ),
        super::seccomp::SYS_FCHMODAT2 => call(
            "chmod",
            "fchmodat2",
            vec![meta(a[0] as i64, a[1], a[3])],
            Act::Chmod { mode: a[2] as u32 },
        ),
        libc::SYS_fchmod => call(
            "chmod",
            "fchmod",
            vec![by_fd(a[0])],
            Act::Chmod { mode: a[1] as u32 },
        ),
        libc::SYS_fchownat => call(
            "chown",
            "fchownat",
            vec![meta(a[0] as i64, a[1], a[4])],
            Act::Chown {
                uid: a[2] as u32,
                gid: a[3] as u32,
            },
        ),
        libc::SYS_fchown => call(
            "chown",
            "fchown",
            vec![by_fd(a[0])],
            Act::Chown {
                uid: a[1] as u32,
                gid: a[2] as u32,
            },
        ),
        libc::SYS_utimensat => call(
            "utime",
            "utimensat",
            vec![meta(a[0] as i64, a[1], a[3])],
            Act::Utime {
                times: timespecs(pid, a[2])?,
            },
        ),
        libc::SYS_setxattr => call(
            "xattr",
            "setxattr",
            vec![meta(AT_FDCWD, a[0], 0)],
            xattr_set(a[1], a[2], a[3], a[4])?,
        ),
        libc::SYS_lsetxattr => call(
            "xattr",
            "lsetxattr",
            vec![meta(AT_FDCWD, a[0], nofollow)],
            xattr_set(a[1], a[2], a[3], a[4])?,
        ),
        libc::SYS_fsetxattr => call(
            "xattr",
            "fsetxattr",
            vec![by_fd(a[0])],
            xattr_set(a[1], a[2], a[3], a[4])?,
        ),
        libc::SYS_removexattr => call(
            "xattr",
            "removexattr",
            vec![meta(AT_FDCWD, a[0], 0)],
            xattr_remove(a[1])?,
        ),
        libc::SYS_lremovexattr => call(
            "xattr",
            "lremovexattr",
            vec![meta(AT_FDCWD, a[0], nofollow)],
            xattr_remove(a[1])?,
        ),
        libc::SYS_fremovexattr => call(
            "xattr",
            "fremovexattr",
            vec![by_fd(a[0])],
            xattr_remove(a[1])?,
        ),
        // `setxattrat(dirfd, path, at_flags, name, struct xattr_args *, size)`: the value's address
        // and size, then the flags.
        super::seccomp::SYS_SETXATTRAT => {
            if a[5] < 16 {
                return Err(libc::EINVAL);
            }
            let args = caller_memory::read_exact(pid, a[4], 16)?;
            let value_at = u64::from_ne_bytes(args[0..8].try_into().expect("8 bytes"));
            let size = u32::from_ne_bytes(args[8..12].try_into().expect("4 bytes"));
            let flags = u32::from_ne_bytes(args[12..16].try_into().expect("4 bytes"));
            call(
                "xattr",
                "setxattrat",
                vec![meta(a[0] as i64, a[1], a[2])],
                xattr_set(a[3], value_at, u64::from(size), u64::from(flags))?,
            )
        }
        super::seccomp::SYS_REMOVEXATTRAT => call(
            "xattr",
            "removexattrat",
            vec![meta(a[0] as i64, a[1], a[2])],
            xattr_remove(a[3])?,
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open if is_write_open(a[1]) => FileCall {
            detail: format!("open({})", open_flags_text(a[1])),
            ..call(
                "write",
                "",
                vec![open_arg(AT_FDCWD, a[0], a[1])],
                open(a[1], a[2]),
            )
        },
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => call(
            "write",
            "creat",
            vec![open_arg(AT_FDCWD, a[0], libc::O_CREAT as u64)],
            open(
                (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
                a[1],
            ),
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mkdir => call(
            "mkdir",
            "mkdir",
            vec![entry(AT_FDCWD, a[0])],
            Act::Mkdir { mode: a[1] as u32 },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mknod => call(
            "mknod",
            "mknod",
            vec![entry(AT_FDCWD, a[0])],
            Act::Mknod {
                mode: a[1] as u32,
                dev: a[2],
            },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_unlink => call(
            "remove",
            "unlink",
            vec![entry(AT_FDCWD, a[0])],
            Act::Unlink { flags: 0 },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rmdir => call(
            "remove",
            "rmdir",
            vec![entry(AT_FDCWD, a[0])],
            Act::Unlink {
                flags: libc::AT_REMOVEDIR,
            },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rename => call(
            "rename",
            "rename",
            vec![entry(AT_FDCWD, a[0]), entry(AT_FDCWD, a[1])],
            Act::Rename { flags: 0 },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_link => call(
            "link",
            "link",
            vec![entry(AT_FDCWD, a[1]), entry(AT_FDCWD, a[0])],
            Act::Link,
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_symlink => call(
            "symlink",
            "symlink",
            vec![entry(AT_FDCWD, a[1])],
            Act::Symlink { text: text(a[0])? },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chmod => call(
            "chmod",
            "chmod",
            vec![meta(AT_FDCWD, a[0], 0)],
            Act::Chmod { mode: a[1] as u32 },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chown => call(
            "chown",
            "chown",
            vec![meta(AT_FDCWD, a[0], 0)],
            Act::Chown {
                uid: a[1] as u32,
                gid: a[2] as u32,
            },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_lchown => call(
            "chown",
            "lchown",
            vec![meta(AT_FDCWD, a[0], nofollow)],
            Act::Chown {
                uid: a[1] as u32,
                gid: a[2] as u32,
            },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utime => call(
            "utime",
            "utimes",
            vec![meta(AT_FDCWD, a[0], 0)],
            Act::Utime {
                times: utimbuf(pid, a[1])?,
            },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_utimes => call(
            "utime",
            "utimes",
            vec![meta(AT_FDCWD, a[0], 0)],
            Act::Utime {
                times: timevals(pid, a[1])?,
            },
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_futimesat => call(
            "utime",
            "futimesat",
            vec![meta(a[0] as i64, a[1], 0)],
            Act::Utime {
                times: timevals(pid, a[2])?,
            },
        ),
        _ => return Ok(None),
    };
    Ok(Some(made))
}

pub(super) fn is_write_open(flags: u64) -> bool {
    let acc = flags & libc::O_ACCMODE as u64;
    acc == libc::O_WRONLY as u64
        || acc == libc::O_RDWR as u64
        || flags & (libc::O_CREAT | libc::O_TRUNC) as u64 != 0
}

pub(super) fn open_flags_text(flags: u64) -> String {
    let mut parts = Vec::new();
    match flags & libc::O_ACCMODE as u64 {
        x if x == libc::O_WRONLY as u64 => parts.push("O_WRONLY"),
        x if x == libc::O_RDWR as u64 => parts.push("O_RDWR"),
        _ => parts.push("O_RDONLY"),
    }
    for (bit, name) in [
        (libc::O_CREAT, "O_CREAT"),
        (libc::O_TRUNC, "O_TRUNC"),
        (libc::O_APPEND, "O_APPEND"),
        (libc::O_EXCL, "O_EXCL"),
    ] {
        if flags & bit as u64 != 0 {
            parts.push(name);
        }
    }
    parts.join("|")
}

/// A path argument to check: its directory fd, its address in the caller, whether a final link is
/// followed, and whether an empty path names `dirfd`'s own file.
pub(super) struct PathArg {
    pub dirfd: i64,
    pub addr: u64,
    pub follow: bool,
    /// An empty (or null) path means the file `dirfd` refers to (`AT_EMPTY_PATH`, `fchmod(fd)`).
    pub empty_is_fd: bool,
}

pub(super) const AT_FDCWD: i64 = libc::AT_FDCWD as i64;

/// An `open` path: the final link is followed unless `O_NOFOLLOW`, or `O_CREAT|O_EXCL` (which fails
/// on any existing entry).
pub(super) fn open_arg(dirfd: i64, addr: u64, flags: u64) -> PathArg {
    let excl = (libc::O_CREAT | libc::O_EXCL) as u64;
    PathArg {
        dirfd,
        addr,
        follow: flags & libc::O_NOFOLLOW as u64 == 0 && flags & excl != excl,
        empty_is_fd: false,
    }
}

/// A directory entry the call creates or removes: its final component is never followed.
fn entry(dirfd: i64, addr: u64) -> PathArg {
    PathArg {
        dirfd,
        addr,
        follow: false,
        empty_is_fd: false,
    }
}

/// The existing file a `linkat` links: its final link followed only with `AT_SYMLINK_FOLLOW`, or the
/// fd itself with `AT_EMPTY_PATH` (an `O_TMPFILE` made into a name).
fn link_source(dirfd: i64, addr: u64, flags: u64) -> PathArg {
    PathArg {
        dirfd,
        addr,
        follow: flags & libc::AT_SYMLINK_FOLLOW as u64 != 0,
        empty_is_fd: flags & libc::AT_EMPTY_PATH as u64 != 0,
    }
}

/// A file whose metadata a call changes: by path, following the final link unless `AT_SYMLINK_NOFOLLOW`
/// is in `flags`, or the fd itself with `AT_EMPTY_PATH` (or a null path).
fn meta(dirfd: i64, addr: u64, flags: u64) -> PathArg {
    PathArg {
        dirfd,
        addr,
        follow: flags & libc::AT_SYMLINK_NOFOLLOW as u64 == 0,
        empty_is_fd: addr == 0 || flags & libc::AT_EMPTY_PATH as u64 != 0,
    }
}

/// The file an fd refers to.
fn by_fd(fd: u64) -> PathArg {
    PathArg {
        dirfd: fd as i64,
        addr: 0,
        follow: true,
        empty_is_fd: true,
    }
}

/// `openat2`'s `struct open_how` as read once from the caller.
#[derive(Debug, Clone, Copy)]
pub(super) struct OpenHow {
    pub flags: u64,
    pub mode: u64,
    pub resolve: u64,
}

/// Read `open_how` of `size` bytes at `at`, checked as the kernel checks its size: at least the
/// first version's 24 bytes (`EINVAL`), no larger than a page (`E2BIG`), and any bytes past the
/// fields this kernel knows all zero (`E2BIG`). Its fields the kernel checks when the supervisor
/// makes the call with them.
pub(super) fn read_open_how(pid: u32, at: u64, size: u64) -> Result<OpenHow, i32> {
    const VER0: u64 = 24;
    if size < VER0 {
        return Err(libc::EINVAL);
    }
    if size > 4096 {
        return Err(libc::E2BIG);
    }
    let b = caller_memory::read_exact(pid, at, size as usize)?;
    if b[VER0 as usize..].iter().any(|&x| x != 0) {
        return Err(libc::E2BIG);
    }
    let word = |i: usize| u64::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    Ok(OpenHow {
        flags: word(0),
        mode: word(1),
        resolve: word(2),
    })
}

/// Two `timespec`s at `at` in the caller (`utimensat`'s times), or `None` for a null pointer (now).
fn timespecs(pid: u32, at: u64) -> Result<Option<[libc::timespec; 2]>, i32> {
    if at == 0 {
        return Ok(None);
    }
    let b = caller_memory::read_exact(pid, at, 32)?;
    let word = |i: usize| i64::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let spec = |s: usize| libc::timespec {
        tv_sec: word(s) as libc::time_t,
        tv_nsec: word(s + 1) as _,
    };
    Ok(Some([spec(0), spec(2)]))
}

/// Two `timeval`s at `at` (`utimes`, `futimesat`) as `timespec`s; `None` for a null pointer.
#[cfg(target_arch = "x86_64")]
fn timevals(pid: u32, at: u64) -> Result<Option<[libc::timespec; 2]>, i32> {
    Ok(timespecs(pid, at)?.map(|t| {
        t.map(|v| libc::timespec {
            tv_sec: v.tv_sec,
            tv_nsec: v.tv_nsec.saturating_mul(1000),
        })
    }))
}

/// A `struct utimbuf` at `at` (`utime`: access and modification seconds); `None` for null.
#[cfg(target_arch = "x86_64")]
fn utimbuf(pid: u32, at: u64) -> Result<Option<[libc::timespec; 2]>, i32> {
    if at == 0 {
        return Ok(None);
    }
    let b = caller_memory::read_exact(pid, at, 16)?;
    let secs = |i: usize| i64::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let spec = |s: i64| libc::timespec {
        tv_sec: s as libc::time_t,
        tv_nsec: 0,
    };
    Ok(Some([spec(secs(0)), spec(secs(1))]))
}

/// An extended attribute's name at `at`, as the kernel reads it: at most `XATTR_NAME_MAX` (255)
/// bytes (`ERANGE` past it), not empty (`ERANGE`).
fn xattr_name(pid: u32, at: u64) -> Result<std::ffi::CString, i32> {
    let raw = caller_memory::read_path_or_errno(pid, at).map_err(|e| match e {
        libc::ENAMETOOLONG => libc::ERANGE,
        e => e,
    })?;
    if raw.is_empty() || raw.len() > 255 {
        return Err(libc::ERANGE);
    }
    std::ffi::CString::new(raw).map_err(|_| libc::EINVAL)
}

/// An extended attribute's value of `size` bytes at `at`: at most `XATTR_SIZE_MAX` (64 KiB,
/// `E2BIG` past it).
fn xattr_value(pid: u32, at: u64, size: u64) -> Result<Vec<u8>, i32> {
    if size > 65536 {
        return Err(libc::E2BIG);
    }
    if size == 0 {
        return Ok(Vec::new());
    }
    caller_memory::read_exact(pid, at, size as usize)
}
