//! How the seccomp listener (and the proxy's listening socket, where the run has one in its own
//! network namespace) gets from the sandboxed child to the runtime.
//!
//! The child installs its filter and so holds the listener; the runtime must own it before the command
//! runs. It cannot travel by `sendmsg(SCM_RIGHTS)`: with the network off the filter sends every
//! `sendmsg` to the supervisor (see `unix_send`), and the child would wait on the very listener it is
//! passing. So the child only says where the listener is, its pid and fd number, with a plain `write`
//! (which no filter rule names), and waits in `read` while a thread of the runtime takes the listener
//! with `pidfd_getfd`; then the child closes its copy and goes on to exec.
//!
//! The runtime's waiting thread (one of its blocking pool) is started before the fork (the forking
//! thread is inside the spawn until the exec) and serves one handover. A sandbox dropped without a spawn shuts the socket down, which
//! ends the thread's wait.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// The message the child writes: its pid, the listener's fd number and the proxy socket's (or -1).
const MESSAGE: usize = 12;

/// What the child hands over: the filter's listener, and the socket the run's proxy listens on inside
/// the run's network namespace, where it has one.
pub struct Handed {
    pub listener: OwnedFd,
    pub proxy: Option<OwnedFd>,
}

/// The runtime's side: a thread waiting for one child to say where its listener is.
pub struct Receiver {
    socket: Arc<OwnedFd>,
    result: Mutex<mpsc::Receiver<std::io::Result<Handed>>>,
    /// A thread of its own where there is no runtime (joined on drop); else a task of the runtime's
    /// blocking pool, which ends on its own once the socket is shut down.
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    /// Start waiting on `socket` (the runtime's end of a connected datagram pair).
    pub fn start(socket: OwnedFd) -> std::io::Result<Receiver> {
        // The kernel attaches the writer's credentials to every message, its pid as this process sees
        // it: a child in a PID namespace of its own knows only its pid in there.
        let on: libc::c_int = 1;
        // SAFETY: setsockopt reads one int from a live variable.
        if unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PASSCRED,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        let socket = Arc::new(socket);
        let (tx, rx) = mpsc::channel();
        let theirs = socket.clone();
        // The runtime's blocking pool keeps its threads: cheaper than a new one per run.
        let thread = match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn_blocking(move || serve(&theirs, &tx));
                None
            }
            Err(_) => Some(
                std::thread::Builder::new()
                    .name("sandbox-handover".into())
                    .stack_size(64 * 1024)
                    .spawn(move || serve(&theirs, &tx))?,
            ),
        };
        Ok(Receiver {
            socket,
            result: Mutex::new(rx),
            thread,
        })
    }

    /// The listener, once the child has handed it over (by the end of a successful spawn it has).
    pub fn take(&self, timeout: Duration) -> std::io::Result<Handed> {
        let rx = self.result.lock().unwrap_or_else(|p| p.into_inner());
        match rx.recv_timeout(timeout) {
            Ok(result) => result,
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the child never said where its listener is",
            )),
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // Wakes a thread still waiting (no spawn happened, or it failed before the handover).
        // SAFETY: shutdown of a socket we own.
        unsafe { libc::shutdown(self.socket.as_raw_fd(), libc::SHUT_RDWR) };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Receive one message and the pid of its writer as this process sees it (from the credentials the
/// kernel attached), falling back to the pid the writer wrote.
fn receive(socket: &OwnedFd, msg: &mut [u8; MESSAGE]) -> Option<i32> {
    // Room for one SCM_CREDENTIALS message, aligned as cmsg headers must be.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: msg.as_mut_ptr().cast(),
        iov_len: MESSAGE,
    };
    // SAFETY: recvmsg into our own buffers, whose sizes the header states; the cmsg walk stays
    // within `control` (CMSG_FIRSTHDR/NXTHDR check against msg_controllen).
    unsafe {
        let mut hdr: libc::msghdr = std::mem::zeroed();
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        hdr.msg_control = control.as_mut_ptr().cast();
        hdr.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = libc::recvmsg(socket.as_raw_fd(), &mut hdr, 0);
        if n != MESSAGE as isize {
            return None;
        }
        let mut c = libc::CMSG_FIRSTHDR(&hdr);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_CREDENTIALS {
                let cred: libc::ucred = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                if cred.pid > 0 {
                    return Some(cred.pid);
                }
            }
            c = libc::CMSG_NXTHDR(&hdr, c);
        }
    }
    Some(i32::from_ne_bytes([msg[0], msg[1], msg[2], msg[3]]))
}

fn serve(socket: &OwnedFd, tx: &mpsc::Sender<std::io::Result<Handed>>) {
    let mut msg = [0u8; MESSAGE];
    let Some(pid) = receive(socket, &mut msg) else {
        let _ = tx.send(Err(std::io::Error::other(
            "the sandbox was dropped before its child handed over the listener",
        )));
        return;
    };
    let fd = i32::from_ne_bytes([msg[4], msg[5], msg[6], msg[7]]);
    let proxy = i32::from_ne_bytes([msg[8], msg[9], msg[10], msg[11]]);
    let taken = take(pid, fd).and_then(|listener| {
        let proxy = (proxy >= 0).then(|| take(pid, proxy)).transpose()?;
        Ok(Handed { listener, proxy })
    });
    let ack = [u8::from(taken.is_ok())];
    let _ = tx.send(taken);
    // SAFETY: write from our own buffer.
    unsafe { libc::write(socket.as_raw_fd(), ack.as_ptr().cast(), 1) };
}

/// Duplicate fd `fd` of process `pid` into this process.
fn take(pid: i32, fd: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags; pidfd_getfd an fd of that process. Each returns a new
    // fd we own, or -1.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0);
        if pidfd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let pidfd = OwnedFd::from_raw_fd(pidfd as RawFd);
        let got = libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0);
        if got < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(got as RawFd))
    }
}

/// The child's side, between fork and exec (system calls only): say where `listener` and `proxy` (-1:
/// none) are and wait until the runtime has taken them. Returns -1 with errno set when it did not.
pub fn give(socket: RawFd, listener: RawFd, proxy: RawFd) -> libc::c_long {
    let mut msg = [0u8; MESSAGE];
    // SAFETY: getpid has no arguments.
    msg[..4].copy_from_slice(&unsafe { libc::getpid() }.to_ne_bytes());
    msg[4..8].copy_from_slice(&listener.to_ne_bytes());
    msg[8..].copy_from_slice(&proxy.to_ne_bytes());
    // SAFETY: write and read on our own buffers.
    unsafe {
        if libc::write(socket, msg.as_ptr().cast(), MESSAGE) != MESSAGE as isize {
            return -1;
        }
        let mut ack = [0u8; 1];
        let n = libc::read(socket, ack.as_mut_ptr().cast(), 1);
        if n != 1 || ack[0] != 1 {
            *libc::__errno_location() = if n < 0 {
                *libc::__errno_location()
            } else {
                libc::EPIPE
            };
            return -1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixDatagram;
    use std::path::Path;

    #[test]
    fn a_listener_is_taken_from_the_process_that_names_it() {
        let (ours, theirs) = UnixDatagram::pair().unwrap();
        let receiver = Receiver::start(OwnedFd::from(ours)).unwrap();
        let file = std::fs::File::open("/dev/null").unwrap();
        let raw = file.as_raw_fd();
        // This process plays the child: it names one of its fds and waits for the ack.
        let giver = std::thread::spawn(move || give(theirs.as_raw_fd(), raw, -1));
        let got = receiver.take(Duration::from_secs(10)).unwrap();
        assert_eq!(giver.join().unwrap(), 0);
        assert_ne!(got.listener.as_raw_fd(), raw);
        assert!(got.proxy.is_none());
        let link = |fd: RawFd| std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
        assert_eq!(link(got.listener.as_raw_fd()), Path::new("/dev/null"));
        // With a proxy socket too: both arrive, each the one named.
        let (ours, theirs) = UnixDatagram::pair().unwrap();
        let receiver = Receiver::start(OwnedFd::from(ours)).unwrap();
        let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let sock = socket.as_raw_fd();
        let giver = std::thread::spawn(move || give(theirs.as_raw_fd(), raw, sock));
        let got = receiver.take(Duration::from_secs(10)).unwrap();
        assert_eq!(giver.join().unwrap(), 0);
        assert_eq!(link(got.listener.as_raw_fd()), Path::new("/dev/null"));
        let proxy = got.proxy.expect("the proxy socket");
        assert_eq!(link(proxy.as_raw_fd()), link(sock));
        drop(file);
    }

    #[test]
    fn a_bad_fd_fails_both_sides_and_a_drop_ends_the_wait() {
        let (ours, theirs) = UnixDatagram::pair().unwrap();
        let receiver = Receiver::start(OwnedFd::from(ours)).unwrap();
        let giver = std::thread::spawn(move || give(theirs.as_raw_fd(), 987_654, -1));
        assert!(receiver.take(Duration::from_secs(10)).is_err());
        assert_eq!(giver.join().unwrap(), -1);
        // A bad proxy socket fails the handover as a whole.
        let (ours, theirs) = UnixDatagram::pair().unwrap();
        let receiver = Receiver::start(OwnedFd::from(ours)).unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let raw = null.as_raw_fd();
        let giver = std::thread::spawn(move || give(theirs.as_raw_fd(), raw, 987_654));
        assert!(receiver.take(Duration::from_secs(10)).is_err());
        assert_eq!(giver.join().unwrap(), -1);
        // Nobody ever hands anything over: dropping the receiver ends its thread (the drop joins it).
        let (ours, _theirs) = UnixDatagram::pair().unwrap();
        let idle = Receiver::start(OwnedFd::from(ours)).unwrap();
        drop(idle);
    }
}
