//! `connect` of a sandboxed process while its network is off, decided and done by the supervisor.
//!
//! Landlock does not govern connecting to a Unix socket file, and a socket file outside the writable
//! roots is often a door out of the sandbox: `docker.sock` is root on the host, the D-Bus system bus
//! starts services. So the supervisor reads the address, allows only sockets under the writable roots
//! or named by the caller (`unixSockets`), and refuses the rest with a record.
//!
//! An allowed call is not handed back to the kernel (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): the kernel
//! would read the address again from the caller's memory, which another thread may have changed since
//! the check. Instead the supervisor takes the caller's socket (`pidfd_getfd`, the same open socket),
//! opens the checked path with no symbolic link allowed anywhere in it (`openat2` with
//! `RESOLVE_NO_SYMLINKS`, so a directory swapped for a link since the check fails), and connects the
//! socket through `/proc/self/fd/N` of that handle. What gets connected is exactly what was checked.
//! One visible difference: the peer's `SO_PEERCRED` names the supervising host process, not the caller.
//! Abstract addresses are refused outright (Landlock scopes them only from ABI 6, and one cannot be
//! checked against a path); other families are connected on the caller's behalf with the bytes checked.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

/// The address a `connect` asked for, as far as the policy cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// A Unix socket file (the path as given, relative or absolute).
    Path(Vec<u8>),
    /// A name in the abstract Unix namespace.
    Abstract(Vec<u8>),
    /// Anything else: another family, `AF_UNSPEC` (dissolving a datagram association), an unnamed or
    /// malformed address. Connected as given; the kernel fails what is invalid.
    Other,
}

/// The largest address the kernel accepts from `connect` for a Unix socket (`sizeof(sockaddr_un)`).
pub const MAX_ADDRESS: usize = std::mem::size_of::<libc::sockaddr_un>();

/// The address family of an address, if it is long enough to have one.
pub fn family(addr: &[u8]) -> Option<u16> {
    (addr.len() >= 2).then(|| u16::from_ne_bytes([addr[0], addr[1]]))
}

/// Read the address bytes (`addrlen` of them, as the kernel would).
pub fn parse(addr: &[u8]) -> Address {
    if addr.len() <= 2 || addr.len() > MAX_ADDRESS {
        return Address::Other;
    }
    if u16::from_ne_bytes([addr[0], addr[1]]) != libc::AF_UNIX as u16 {
        return Address::Other;
    }
    let name = &addr[2..];
    if name[0] == 0 {
        return Address::Abstract(name[1..].to_vec());
    }
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Address::Path(name[..end].to_vec())
}

/// The process (thread group) a thread belongs to: `pidfd_open` takes only a group leader.
pub fn thread_group(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status_numbers(&status, "Tgid:").first().copied()
}

/// The numbers of the line of `/proc/<pid>/status` text `status` that starts with `key` (`Uid:`
/// gives the real, effective, saved and file-system ids; `NSpid:` one pid per namespace, the
/// reader's first); none where there is no such line.
pub fn status_numbers(status: &str, key: &str) -> Vec<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| {
            v.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

pub fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// A pidfd of the process of thread `tid`, from which its fds can be taken. `still_waiting` says
/// whether the caller is still in its call (so `tid` was not reused before the pidfd pinned it).
pub fn open_caller(tid: u32, still_waiting: impl Fn() -> bool) -> Result<OwnedFd, i32> {
    let open = |pid: u32| {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd < 0 {
            return Err(errno());
        }
        // SAFETY: a new fd we own from here on.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    };
    // Most callers are a process's main thread, whose tid is the pid: no need to read /proc (a
    // read of its status file costs more than the rest of a send). Another thread's tid is refused
    // (EINVAL, or ENOENT on newer kernels): then its thread group is looked up.
    let pidfd = match open(tid) {
        Ok(fd) => fd,
        Err(_) => open(thread_group(tid).ok_or(libc::ESRCH)?)?,
    };
    if !still_waiting() {
        return Err(libc::ESRCH);
    }
    Ok(pidfd)
}

/// A copy of fd `fd` of the process behind `pidfd` (the same open file, not a new one).
pub fn take_fd(pidfd: &OwnedFd, fd: i32) -> Result<OwnedFd, i32> {
    // SAFETY: pidfd_getfd duplicates fd `fd` of that process into ours; it returns a new fd or -1.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(errno());
    }
    // SAFETY: a new fd we own from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
}

/// A copy of fd `fd` of the process of thread `tid` (the same open socket, not a new one).
/// `still_waiting` says whether the caller is still in its call (so `tid` was not reused).
pub fn take_socket(tid: u32, fd: i32, still_waiting: impl Fn() -> bool) -> Result<OwnedFd, i32> {
    take_fd(&open_caller(tid, still_waiting)?, fd)
}

/// The root directory of the process of thread `tid` (its view of the file system: its mount
/// namespace, where hidden directories are covered), for [`exact_address`]. `still_waiting` says
/// whether the caller is still in its call (so `tid` was not reused before the open).
pub fn open_root(tid: u32, still_waiting: impl Fn() -> bool) -> Result<OwnedFd, i32> {
    let root = std::fs::File::open(format!("/proc/{tid}/root"))
        .map_err(|e| e.raw_os_error().unwrap_or(libc::ESRCH))?;
    if !still_waiting() {
        return Err(libc::ESRCH);
    }
    Ok(root.into())
}

/// Open `path` (absolute in the caller's view, already resolved) beneath the caller's `root` as a
/// handle, refusing a symbolic link anywhere in it: the file the caller would reach, never the one the
/// host sees at that path (a socket in a directory hidden from the run is not there for it).
fn open_exact(root: &OwnedFd, path: &Path) -> Result<OwnedFd, i32> {
    let c = super::perform::beneath_root(path)?;
    let resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS | libc::RESOLVE_BENEATH;
    super::perform::openat2(root, &c, libc::O_PATH | libc::O_CLOEXEC, 0, resolve)
}

/// Connect `socket` to `addr` as the caller gave it (families the policy does not judge).
pub fn connect_as_given(socket: &OwnedFd, addr: &[u8]) -> Result<(), i32> {
    // SAFETY: connect reads `addr.len()` bytes of the address.
    let rc = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    };
    if rc < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

fn unix_address(path: &[u8]) -> Vec<u8> {
    let mut addr = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    addr.extend_from_slice(path);
    addr.push(0);
    addr
}

/// An address naming exactly the Unix socket file at `path` (checked, absolute, links resolved): a
/// handle opened without following any link, and `/proc/self/fd/N` of it. Valid while the handle is.
pub fn exact_address(root: &OwnedFd, path: &Path) -> Result<(OwnedFd, Vec<u8>), i32> {
    let handle = open_exact(root, path)?;
    let via = format!("/proc/self/fd/{}", handle.as_raw_fd());
    Ok((handle, unix_address(via.as_bytes())))
}

/// Connect `socket` to the Unix socket file at `path` (checked, absolute, links resolved), exactly
/// that file (see `exact_address`).
pub fn connect_path(socket: &OwnedFd, root: &OwnedFd, path: &Path) -> Result<(), i32> {
    let (_handle, addr) = exact_address(root, path)?;
    connect_as_given(socket, &addr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::{UnixListener, UnixStream};

    /// This process's root, as the supervisor opens a caller's.
    fn host_root() -> OwnedFd {
        open_root(std::process::id(), || true).unwrap()
    }

    fn addr(family: u16, name: &[u8]) -> Vec<u8> {
        let mut a = family.to_ne_bytes().to_vec();
        a.extend_from_slice(name);
        a
    }

    #[test]
    fn addresses_are_told_apart_as_the_kernel_reads_them() {
        let unix = libc::AF_UNIX as u16;
        assert_eq!(
            parse(&addr(unix, b"/run/x.sock\0junk")),
            Address::Path(b"/run/x.sock".to_vec())
        );
        assert_eq!(
            parse(&addr(unix, b"rel.sock")),
            Address::Path(b"rel.sock".to_vec())
        );
        assert_eq!(
            parse(&addr(unix, b"\0name")),
            Address::Abstract(b"name".to_vec())
        );
        assert_eq!(parse(&addr(unix, b"")), Address::Other);
        assert_eq!(parse(&addr(libc::AF_UNSPEC as u16, b"")), Address::Other);
        assert_eq!(parse(&addr(libc::AF_INET as u16, &[0; 14])), Address::Other);
        assert_eq!(parse(&addr(unix, &[b'a'; MAX_ADDRESS])), Address::Other);
    }

    #[test]
    fn a_socket_is_taken_from_a_caller_that_is_not_its_processs_main_thread() {
        // SAFETY: a plain socket call.
        let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        // SAFETY: a new fd we own.
        let _mine = unsafe { OwnedFd::from_raw_fd(raw) };
        // A thread that waits, as a caller in its system call does.
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: gettid has no arguments.
            tid_tx
                .send(unsafe { libc::syscall(libc::SYS_gettid) } as u32)
                .unwrap();
            done_rx.recv().unwrap();
        });
        let live = tid_rx.recv().unwrap();
        assert_ne!(live, std::process::id());
        assert!(take_socket(live, raw, || true).is_ok());
        done_tx.send(()).unwrap();
        t.join().unwrap();
    }

    #[test]
    fn a_socket_taken_from_a_process_connects_to_exactly_the_checked_file() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let listener = UnixListener::bind(base.join("s.sock")).unwrap();
        // A socket of "the caller" (this process), taken the way the supervisor takes one.
        // SAFETY: a plain socket call.
        let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        assert!(raw >= 0);
        // SAFETY: a new fd we own.
        let mine = unsafe { OwnedFd::from_raw_fd(raw) };
        let taken = take_socket(std::process::id(), raw, || true).unwrap();
        connect_path(&taken, &host_root(), &base.join("s.sock")).unwrap();
        drop(taken);
        // The caller's own fd is the connected socket.
        let mut stream = UnixStream::from(mine);
        stream.write_all(b"hi").unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        let mut got = [0u8; 2];
        peer.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hi");
        // A link anywhere in the path is refused, even one pointing at the same file.
        std::os::unix::fs::symlink(&base, base.join("link")).unwrap();
        // SAFETY: a plain socket call.
        let raw2 =
            unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        // SAFETY: a new fd we own.
        let other = unsafe { OwnedFd::from_raw_fd(raw2) };
        assert_eq!(
            connect_path(&other, &host_root(), &base.join("link/s.sock")),
            Err(libc::ELOOP)
        );
        assert_eq!(
            connect_path(&other, &host_root(), &base.join("missing.sock")),
            Err(libc::ENOENT)
        );
        // A caller that stopped waiting is not served.
        assert_eq!(
            take_socket(std::process::id(), raw2, || false).err(),
            Some(libc::ESRCH)
        );
        assert_eq!(
            take_socket(std::process::id(), 987_654, || true).err(),
            Some(libc::EBADF)
        );
    }
}
