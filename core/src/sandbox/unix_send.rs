//! Sends that may name a destination (`sendto`, `sendmsg`, `sendmmsg`) while the network is off, read
//! from the caller and made by the supervisor.
//!
//! A datagram goes to whatever Unix socket file its sender names, connected or not: a logging socket,
//! a service manager's notify socket, a daemon's datagram door. So an address a send names meets the
//! same rule as `connect` (see `unix_connect`): a socket file under the writable roots or in
//! `unixSockets`, never an abstract name, never another family (the network is off).
//!
//! Why the supervisor makes the send instead of judging the address and letting the kernel continue
//! the call: the address is in the caller's memory, and another thread (or another process sharing
//! the page) can change it between the supervisor's read and the kernel's. A continued call would send
//! to an address nobody checked. So the supervisor reads the call once, decides on that copy, and
//! makes the send from that copy: it takes the caller's socket (`pidfd_getfd`, the same open socket),
//! copies the data, takes the fds the message passes (`SCM_RIGHTS`) the same way, and sends to a
//! handle of the checked path opened with no link allowed in it. What is sent is what was checked.
//!
//! That covers every `sendmsg` and `sendmmsg`, also those that name no address: the header saying "no
//! address" is in the caller's memory too, and could name one by the time the kernel read it again.
//! A `sendto` without an address is told apart by the filter from its registers, which the caller
//! cannot change afterwards, so `send()` and `write()` on a connected socket never reach the
//! supervisor (its `connect` was checked).
//!
//! What a sender can notice: a receiver with `SO_PASSCRED` learns the host process's pid and ids (the
//! host makes the send) unless the message carries `SCM_CREDENTIALS`, which are passed on once they are
//! found to be the caller's own; a blocking send waits in the supervisor, which tries again as the
//! socket drains (honouring `SO_SNDTIMEO`) and gives up when the caller is interrupted; one call
//! sends at most `MAX_DATA` bytes (a stream send is then short, which the kernel may also do; a larger
//! datagram is `EMSGSIZE`).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::caller_memory;
use super::unix_connect;

/// The most one call sends (a copy of it is held while it is sent).
pub const MAX_DATA: usize = 1 << 20;
/// The most control data one message may carry (the kernel's `optmem_max` is smaller by default).
const MAX_CONTROL: usize = 64 << 10;
/// The kernel's limits: iovecs per message, messages per `sendmmsg`, fds per `SCM_RIGHTS`, address bytes.
const UIO_MAXIOV: u64 = 1024;
const SCM_MAX_FD: usize = 253;
const SOCKADDR_STORAGE: usize = 128;

const MSGHDR: usize = std::mem::size_of::<libc::msghdr>();
const MMSGHDR: usize = std::mem::size_of::<libc::mmsghdr>();
const MSG_LEN_AT: usize = std::mem::offset_of!(libc::mmsghdr, msg_len);
const CMSGHDR: usize = std::mem::size_of::<libc::cmsghdr>();

/// Where a message's data is in the caller's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// One buffer (`sendto`).
    Buffer { addr: u64, len: u64 },
    /// An array of `count` iovecs (`sendmsg`).
    Iov { addr: u64, count: u64 },
}

/// One message of a send, as read once from the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The destination's address bytes as given; `None` when the call names none (the socket's peer).
    pub name: Option<Vec<u8>>,
    pub data: Data,
    /// Address and length of the control data (ancillary messages) in the caller's memory.
    pub control: (u64, u64),
}

/// Where the supervisor sends an allowed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum To {
    /// No address: the socket's connected peer (checked when it was connected).
    Peer,
    /// A Unix socket file the policy allows: absolute, links resolved.
    Path(PathBuf),
}

/// `sendto(fd, buf, len, flags, addr, addrlen)`, from its arguments.
pub fn read_sendto(pid: u32, args: &[u64; 6]) -> Result<Message, i32> {
    let len = args[5] as i32;
    if len < 0 || len as usize > SOCKADDR_STORAGE {
        return Err(libc::EINVAL);
    }
    let name = if args[4] == 0 || len == 0 {
        None
    } else {
        Some(caller_memory::read_exact(pid, args[4], len as usize)?)
    };
    Ok(Message {
        name,
        data: Data::Buffer {
            addr: args[1],
            len: args[2],
        },
        control: (0, 0),
    })
}

/// A `msghdr` from its bytes (plain data: its pointers are only ever read as numbers).
fn header(raw: &[u8]) -> libc::msghdr {
    // SAFETY: msghdr is plain data for which all-zero is valid; `raw` holds at least its size.
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    // SAFETY: copies MSGHDR bytes into `m`, which is exactly that large.
    unsafe {
        std::ptr::copy_nonoverlapping(raw.as_ptr(), (&mut m as *mut libc::msghdr).cast(), MSGHDR)
    };
    m
}

/// A message from a `msghdr` read from the caller, as the kernel reads one (`__copy_msghdr`).
fn message(pid: u32, m: &libc::msghdr) -> Result<Message, i32> {
    let name_at = m.msg_name as u64;
    let namelen = m.msg_namelen as i32;
    if namelen < 0 {
        return Err(libc::EINVAL);
    }
    let name = if name_at == 0 || namelen == 0 {
        None
    } else {
        let len = (namelen as usize).min(SOCKADDR_STORAGE);
        Some(caller_memory::read_exact(pid, name_at, len)?)
    };
    if m.msg_iovlen as u64 > UIO_MAXIOV {
        return Err(libc::EMSGSIZE);
    }
    Ok(Message {
        name,
        data: Data::Iov {
            addr: m.msg_iov as u64,
            count: m.msg_iovlen as u64,
        },
        control: (m.msg_control as u64, m.msg_controllen as u64),
    })
}

/// `sendmsg(fd, msg, flags)`: the header at `addr`.
pub fn read_sendmsg(pid: u32, addr: u64) -> Result<Message, i32> {
    let raw = caller_memory::read_exact(pid, addr, MSGHDR)?;
    message(pid, &header(&raw))
}

/// `sendmmsg(fd, msgvec, vlen, flags)`: each message, or why it cannot be read. The whole array is
/// read at once; the kernel sends the messages in order and stops at the first that fails.
pub fn read_sendmmsg(pid: u32, addr: u64, vlen: u64) -> Result<Vec<Result<Message, i32>>, i32> {
    let n = vlen.min(UIO_MAXIOV) as usize;
    let raw = caller_memory::read_exact(pid, addr, n * MMSGHDR)?;
    Ok(raw
        .chunks_exact(MMSGHDR)
        .map(|m| message(pid, &header(m)))
        .collect())
}

/// Where `sendmmsg` stores how much of message `index` was sent.
pub fn sent_length_at(msgvec: u64, index: usize) -> u64 {
    msgvec + (index * MMSGHDR + MSG_LEN_AT) as u64
}

/// The process a send is made for: the calling thread, and a pidfd to take its fds from.
pub struct Caller {
    pub tid: u32,
    pidfd: OwnedFd,
    /// Its root directory: socket files are opened in its view.
    root: OwnedFd,
}

impl Caller {
    /// `still_waiting` says whether the caller is still in its call (so `tid` is still the caller).
    pub fn open(tid: u32, still_waiting: impl Fn() -> bool) -> Result<Caller, i32> {
        let pidfd = unix_connect::open_caller(tid, &still_waiting)?;
        let root = unix_connect::open_root(tid, &still_waiting)?;
        Ok(Caller { tid, pidfd, root })
    }

    /// The caller's process id (its thread group).
    pub fn tgid(&self) -> Option<u32> {
        unix_connect::thread_group(self.tid)
    }

    /// The caller's fd `fd`, the same open file.
    pub fn take(&self, fd: i32) -> Result<OwnedFd, i32> {
        unix_connect::take_fd(&self.pidfd, fd)
    }

    /// Are these the caller's own pid, user and group, as the kernel requires of an unprivileged
    /// sender's `SCM_CREDENTIALS`?
    fn owns(&self, cred: &libc::ucred) -> bool {
        let Some(tgid) = self.tgid() else {
            return false;
        };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{tgid}/status")) else {
            return false;
        };
        // The real, effective and saved ids (not the file-system one).
        let ids = |key: &str| -> Vec<u32> {
            let mut all = unix_connect::status_numbers(&status, key);
            all.truncate(3);
            all
        };
        cred.pid as u32 == tgid
            && ids("Uid:").contains(&cred.uid)
            && ids("Gid:").contains(&cred.gid)
    }
}

/// What became of a send made for a caller.
#[derive(Debug, PartialEq, Eq)]
pub struct Sent {
    /// Bytes sent, or the errno to answer.
    pub result: Result<usize, i32>,
    /// The kernel would have sent the caller `SIGPIPE` (a stream whose peer is gone, no `MSG_NOSIGNAL`).
    pub sigpipe: bool,
}

impl Sent {
    fn err(errno: i32) -> Sent {
        Sent {
            result: Err(errno),
            sigpipe: false,
        }
    }
}

/// Send `msg` on `socket` (the caller's, taken) to `to`, with the caller's `flags`, as the kernel
/// would have for the caller. `still_waiting` says whether the caller still waits for the answer
/// (a signal ends the wait; a send that must wait then gives up, and the caller restarts its call).
pub fn send(
    caller: &Caller,
    socket: &OwnedFd,
    msg: &Message,
    to: &To,
    flags: i32,
    still_waiting: &dyn Fn() -> bool,
) -> Sent {
    let stream = match int_option(socket, libc::SO_TYPE) {
        Ok(t) => t == libc::SOCK_STREAM,
        Err(e) => return Sent::err(e),
    };
    let (data, total) = match gather(caller.tid, msg.data) {
        Ok(d) => d,
        Err(e) => return Sent::err(e),
    };
    if total > MAX_DATA as u64 && !stream {
        return Sent::err(libc::EMSGSIZE);
    }
    let mut taken = Vec::new();
    let control = match control(caller, msg.control, &mut taken) {
        Ok(c) => c,
        Err(e) => return Sent::err(e),
    };
    let (_handle, address) = match to {
        To::Peer => (None, None),
        To::Path(p) => match unix_connect::exact_address(&caller.root, p) {
            Ok((h, a)) => (Some(h), Some(a)),
            Err(e) => return Sent::err(e),
        },
    };
    let blocking = flags & libc::MSG_DONTWAIT == 0 && !nonblocking(socket);
    let deadline = send_timeout(socket).map(|t| Instant::now() + t);
    let mut sent = 0usize;
    let mut pause = Duration::from_millis(1);
    loop {
        let ctl: &[u8] = if sent == 0 { &control } else { &[] };
        let try_flags = flags | libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT;
        match send_once(socket, address.as_deref(), &data[sent..], ctl, try_flags) {
            Ok(n) => {
                sent += n;
                if !stream || sent >= data.len() || !blocking {
                    return Sent {
                        result: Ok(sent),
                        sigpipe: false,
                    };
                }
            }
            Err(libc::EAGAIN) if blocking => {}
            Err(libc::EPIPE) if stream && sent == 0 => {
                return Sent {
                    result: Err(libc::EPIPE),
                    sigpipe: flags & libc::MSG_NOSIGNAL == 0,
                }
            }
            Err(e) => return Sent::err_or(sent, e),
        }
        if !still_waiting() {
            return Sent::err_or(sent, libc::EINTR);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Sent::err_or(sent, libc::EAGAIN);
        }
        wait_writable(socket, &mut pause);
    }
}

impl Sent {
    /// What the kernel answers when a send stops early: what was sent, if anything, else the error.
    fn err_or(sent: usize, errno: i32) -> Sent {
        Sent {
            result: if sent > 0 { Ok(sent) } else { Err(errno) },
            sigpipe: false,
        }
    }
}

/// Wait a little for room: `poll` says when a socket's own buffer drains, but not when a datagram
/// receiver's queue does, so a poll that answers at once is followed by a pause that grows to 20 ms.
fn wait_writable(socket: &OwnedFd, pause: &mut Duration) {
    let mut p = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: poll on one fd we own.
    let ready = unsafe { libc::poll(&mut p, 1, 20) };
    if ready > 0 {
        std::thread::sleep(*pause);
        *pause = (*pause * 2).min(Duration::from_millis(20));
    }
}

/// One `sendmsg` of `data` (and `control`) on `socket`, to `address` or the peer.
fn send_once(
    socket: &OwnedFd,
    address: Option<&[u8]>,
    data: &[u8],
    control: &[u8],
    flags: i32,
) -> Result<usize, i32> {
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: msghdr is plain data; every pointer set below refers to a buffer alive for the call,
    // which the kernel only reads.
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    if let Some(a) = address {
        m.msg_name = a.as_ptr() as *mut libc::c_void;
        m.msg_namelen = a.len() as libc::socklen_t;
    }
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    if !control.is_empty() {
        m.msg_control = control.as_ptr() as *mut libc::c_void;
        m.msg_controllen = control.len() as _;
    }
    // SAFETY: see above.
    let n = unsafe { libc::sendmsg(socket.as_raw_fd(), &m, flags) };
    if n < 0 {
        Err(unix_connect::errno())
    } else {
        Ok(n as usize)
    }
}

/// The data of a message (at most `MAX_DATA` bytes of it) and how much the caller asked to send.
fn gather(pid: u32, data: Data) -> Result<(Vec<u8>, u64), i32> {
    let segments = match data {
        Data::Buffer { addr, len } => vec![(addr, len.min(i32::MAX as u64))],
        Data::Iov { addr, count } => {
            let raw = caller_memory::read_exact(pid, addr, count as usize * 16)?;
            raw.chunks_exact(16)
                .map(|c| {
                    let word = |b: &[u8]| u64::from_ne_bytes(b.try_into().expect("8 bytes"));
                    (word(&c[..8]), word(&c[8..]))
                })
                .collect()
        }
    };
    let mut total: u64 = 0;
    for &(_, len) in &segments {
        if len > isize::MAX as u64 {
            return Err(libc::EINVAL);
        }
        total = total.saturating_add(len);
    }
    let mut out = Vec::with_capacity(total.min(MAX_DATA as u64) as usize);
    for (addr, len) in segments {
        let room = MAX_DATA - out.len();
        if room == 0 {
            break;
        }
        let take = (len as usize).min(room);
        out.extend_from_slice(&caller_memory::read_exact(pid, addr, take)?);
    }
    Ok((out, total))
}

/// The control data of a message, with each fd it passes (`SCM_RIGHTS`) replaced by our copy of the
/// caller's (kept in `taken` until the send) and any `SCM_CREDENTIALS` checked to be the caller's own.
fn control(
    caller: &Caller,
    (addr, len): (u64, u64),
    taken: &mut Vec<OwnedFd>,
) -> Result<Vec<u8>, i32> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if len > MAX_CONTROL as u64 {
        return Err(libc::ENOBUFS);
    }
    let mut buf = caller_memory::read_exact(caller.tid, addr, len as usize)?;
    let mut at = 0;
    while at + CMSGHDR <= buf.len() {
        // SAFETY: cmsghdr is plain data; CMSGHDR bytes of `buf` from `at` exist (checked above).
        let mut h: libc::cmsghdr = unsafe { std::mem::zeroed() };
        unsafe {
            std::ptr::copy_nonoverlapping(
                buf[at..].as_ptr(),
                (&mut h as *mut libc::cmsghdr).cast(),
                CMSGHDR,
            )
        };
        let clen = h.cmsg_len as usize;
        if clen < CMSGHDR || at + clen > buf.len() {
            return Err(libc::EINVAL);
        }
        let body = at + CMSGHDR..at + clen;
        if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SCM_RIGHTS {
            let count = body.len() / 4;
            if count > SCM_MAX_FD {
                return Err(libc::EINVAL);
            }
            for i in 0..count {
                let at = body.start + i * 4;
                let theirs = i32::from_ne_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
                let ours = caller.take(theirs).map_err(|_| libc::EBADF)?;
                buf[at..at + 4].copy_from_slice(&ours.as_raw_fd().to_ne_bytes());
                taken.push(ours);
            }
        } else if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SCM_CREDENTIALS {
            if body.len() != std::mem::size_of::<libc::ucred>() {
                return Err(libc::EINVAL);
            }
            let word = |i: usize| {
                u32::from_ne_bytes(
                    buf[body.start + i * 4..body.start + i * 4 + 4]
                        .try_into()
                        .expect("4 bytes"),
                )
            };
            let cred = libc::ucred {
                pid: word(0) as i32,
                uid: word(1),
                gid: word(2),
            };
            if !caller.owns(&cred) {
                return Err(libc::EPERM);
            }
        }
        at += clen.next_multiple_of(std::mem::size_of::<usize>());
    }
    Ok(buf)
}

fn int_option(socket: &OwnedFd, name: libc::c_int) -> Result<libc::c_int, i32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `v`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        Err(unix_connect::errno())
    } else {
        Ok(v)
    }
}

/// Is the caller's open socket non-blocking (`O_NONBLOCK` belongs to the open file, which we share)?
fn nonblocking(socket: &OwnedFd) -> bool {
    // SAFETY: F_GETFL reads the file's status flags.
    let fl = unsafe { libc::fcntl(socket.as_raw_fd(), libc::F_GETFL) };
    fl >= 0 && fl & libc::O_NONBLOCK != 0
}

/// The socket's `SO_SNDTIMEO`, if it has one.
fn send_timeout(socket: &OwnedFd) -> Option<Duration> {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `tv`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&mut tv as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    let t = Duration::from_secs(tv.tv_sec.max(0) as u64)
        + Duration::from_micros(tv.tv_usec.max(0) as u64);
    (rc == 0 && !t.is_zero()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{FromRawFd, IntoRawFd};
    use std::os::unix::net::UnixDatagram;

    fn me() -> Caller {
        Caller::open(std::process::id(), || true).unwrap()
    }

    fn dgram() -> OwnedFd {
        // SAFETY: a plain socket call.
        let raw = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        assert!(raw >= 0);
        // SAFETY: a new fd we own.
        unsafe { OwnedFd::from_raw_fd(raw) }
    }

    fn unix_addr(path: &std::path::Path) -> Vec<u8> {
        use std::os::unix::ffi::OsStrExt;
        let mut a = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        a.extend_from_slice(path.as_os_str().as_bytes());
        a.push(0);
        a
    }

    #[test]
    fn a_sendmsg_is_read_once_and_sent_to_exactly_the_checked_file_with_its_fds() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let receiver = UnixDatagram::bind(base.join("r.sock")).unwrap();
        // This process plays the caller: a sendmsg header in its own memory, naming an address, two
        // data segments and an fd to pass.
        let name = unix_addr(&base.join("r.sock"));
        let (one, two) = (b"hel".to_vec(), b"lo".to_vec());
        let iov = [
            libc::iovec {
                iov_base: one.as_ptr() as *mut _,
                iov_len: one.len(),
            },
            libc::iovec {
                iov_base: two.as_ptr() as *mut _,
                iov_len: two.len(),
            },
        ];
        let passed = std::fs::File::open("/dev/null").unwrap().into_raw_fd();
        // SAFETY: CMSG_SPACE/LEN compute sizes only.
        let space = unsafe { libc::CMSG_SPACE(4) } as usize;
        let mut control = vec![0u8; space];
        // SAFETY: msghdr is plain data; pointers refer to the buffers above.
        let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
        m.msg_name = name.as_ptr() as *mut _;
        m.msg_namelen = name.len() as u32;
        m.msg_iov = iov.as_ptr() as *mut _;
        m.msg_iovlen = 2;
        m.msg_control = control.as_mut_ptr().cast();
        m.msg_controllen = space as _;
        // SAFETY: the first header of a control buffer of CMSG_SPACE(4) bytes.
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&m);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(4) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<i32>(), passed);
        }
        let msg = read_sendmsg(std::process::id(), &m as *const libc::msghdr as u64).unwrap();
        assert_eq!(msg.name.as_deref(), Some(&name[..]));
        let socket = dgram();
        let to = To::Path(base.join("r.sock"));
        let sent = send(&me(), &socket, &msg, &to, 0, &|| true);
        assert_eq!(
            sent,
            Sent {
                result: Ok(5),
                sigpipe: false
            }
        );
        // SAFETY: our own fd, passed above.
        drop(unsafe { OwnedFd::from_raw_fd(passed) });
        // The datagram arrived with a working copy of the fd.
        let mut buf = [0u8; 16];
        let mut got_ctl = vec![0u8; space];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: as above, for recvmsg into our buffers.
        let mut r: libc::msghdr = unsafe { std::mem::zeroed() };
        r.msg_iov = &mut iov;
        r.msg_iovlen = 1;
        r.msg_control = got_ctl.as_mut_ptr().cast();
        r.msg_controllen = space as _;
        // SAFETY: recvmsg into the buffers above; the fd read is owned below.
        let (n, fd) = unsafe {
            let n = libc::recvmsg(
                receiver.as_raw_fd(),
                &mut r,
                libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
            );
            let c = libc::CMSG_FIRSTHDR(&r);
            assert!(!c.is_null());
            (
                n,
                OwnedFd::from_raw_fd(std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<i32>())),
            )
        };
        assert_eq!(&buf[..n as usize], b"hello");
        let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap();
        assert_eq!(link, std::path::PathBuf::from("/dev/null"));
        // A link anywhere in the checked path is refused, even to the same socket.
        std::os::unix::fs::symlink(&base, base.join("link")).unwrap();
        let via_link = To::Path(base.join("link/r.sock"));
        let plain = Message {
            name: None,
            data: Data::Buffer {
                addr: one.as_ptr() as u64,
                len: 3,
            },
            control: (0, 0),
        };
        assert_eq!(
            send(&me(), &socket, &plain, &via_link, 0, &|| true).result,
            Err(libc::ELOOP)
        );
    }

    #[test]
    fn limits_and_bad_input_get_the_kernels_answers() {
        let me_pid = std::process::id();
        // sendto: a negative or oversized address length, and an address that is not there.
        let args = |addr: u64, len: u64| [0, 0, 0, 0, addr, len];
        assert_eq!(
            read_sendto(me_pid, &args(8, u32::MAX as u64)),
            Err(libc::EINVAL)
        );
        assert_eq!(read_sendto(me_pid, &args(8, 129)), Err(libc::EINVAL));
        assert_eq!(read_sendto(me_pid, &args(8, 16)), Err(libc::EFAULT));
        assert_eq!(read_sendto(me_pid, &args(0, 16)).unwrap().name, None);
        // A datagram larger than one call may carry, and credentials that are not the caller's.
        let big = vec![0u8; MAX_DATA + 1];
        let msg = Message {
            name: None,
            data: Data::Buffer {
                addr: big.as_ptr() as u64,
                len: big.len() as u64,
            },
            control: (0, 0),
        };
        let (a, _b) = UnixDatagram::pair().unwrap();
        let a = OwnedFd::from(a);
        assert_eq!(
            send(&me(), &a, &msg, &To::Peer, 0, &|| true).result,
            Err(libc::EMSGSIZE)
        );
        let cred = libc::ucred {
            pid: 1,
            uid: 0,
            gid: 0,
        };
        // SAFETY: CMSG_SPACE/LEN compute sizes only.
        let (space, len) = unsafe { (libc::CMSG_SPACE(12) as usize, libc::CMSG_LEN(12) as usize) };
        let mut ctl = vec![0u8; space];
        ctl[..8].copy_from_slice(&(len as u64).to_ne_bytes());
        ctl[8..12].copy_from_slice(&libc::SOL_SOCKET.to_ne_bytes());
        ctl[12..16].copy_from_slice(&libc::SCM_CREDENTIALS.to_ne_bytes());
        ctl[16..20].copy_from_slice(&cred.pid.to_ne_bytes());
        let small = b"x";
        let forged = Message {
            name: None,
            data: Data::Buffer {
                addr: small.as_ptr() as u64,
                len: 1,
            },
            control: (ctl.as_ptr() as u64, space as u64),
        };
        assert_eq!(
            send(&me(), &a, &forged, &To::Peer, 0, &|| true).result,
            Err(libc::EPERM)
        );
        // The caller's own credentials pass.
        ctl[16..20].copy_from_slice(&(me_pid as i32).to_ne_bytes());
        // SAFETY: getuid and getgid have no arguments.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        ctl[20..24].copy_from_slice(&uid.to_ne_bytes());
        ctl[24..28].copy_from_slice(&gid.to_ne_bytes());
        assert_eq!(
            send(&me(), &a, &forged, &To::Peer, 0, &|| true).result,
            Ok(1)
        );
    }

    #[test]
    fn a_blocking_send_to_a_full_receiver_gives_up_when_the_caller_stops_waiting() {
        let (a, b) = UnixDatagram::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        while a.send(b"fill").is_ok() {}
        a.set_nonblocking(false).unwrap();
        let a = OwnedFd::from(a);
        let data = b"more";
        let msg = Message {
            name: None,
            data: Data::Buffer {
                addr: data.as_ptr() as u64,
                len: 4,
            },
            control: (0, 0),
        };
        let tries = std::cell::Cell::new(0);
        let waiting = || {
            tries.set(tries.get() + 1);
            tries.get() < 3
        };
        assert_eq!(
            send(&me(), &a, &msg, &To::Peer, 0, &waiting).result,
            Err(libc::EINTR)
        );
        // Once the receiver reads, it goes through; MSG_DONTWAIT never waits.
        assert_eq!(
            send(&me(), &a, &msg, &To::Peer, libc::MSG_DONTWAIT, &|| true).result,
            Err(libc::EAGAIN)
        );
        let mut buf = [0u8; 8];
        b.recv(&mut buf).unwrap();
        assert_eq!(send(&me(), &a, &msg, &To::Peer, 0, &|| true).result, Ok(4));
    }

    #[test]
    fn a_stream_whose_peer_is_gone_asks_for_sigpipe_unless_told_not_to() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        drop(b);
        let a = OwnedFd::from(a);
        let data = b"x";
        let msg = Message {
            name: None,
            data: Data::Buffer {
                addr: data.as_ptr() as u64,
                len: 1,
            },
            control: (0, 0),
        };
        assert_eq!(
            send(&me(), &a, &msg, &To::Peer, 0, &|| true),
            Sent {
                result: Err(libc::EPIPE),
                sigpipe: true
            }
        );
        assert_eq!(
            send(&me(), &a, &msg, &To::Peer, libc::MSG_NOSIGNAL, &|| true),
            Sent {
                result: Err(libc::EPIPE),
                sigpipe: false
            }
        );
    }
}
