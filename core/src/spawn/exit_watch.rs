//! Waiting for a spawned child's exit without holding a descriptor per child.
//!
//! One io_uring for the whole process (`IORING_OP_WAITID`, kernel 6.7 and later) waits for every
//! run at once: a live run holds nothing for its exit, so its only descriptors are its pipes (two per
//! session instead of three; issue 23 asks that 10,000 sessions fit in 20,000 open files). The ring
//! is driven by one thread that sleeps in the kernel until an exit or a new child arrives; the
//! kernel wakes it per exit, not per child, so the cost stays flat in the number of live runs.
//!
//! Where the ring cannot be had (an older kernel, `kernel.io_uring_disabled`, a container's seccomp
//! profile refusing `io_uring_setup`, or `AGENT_EXEC_NO_IO_URING` set), each child keeps a pidfd
//! registered with tokio's reactor, as before. Neither way installs a SIGCHLD handler: Node's libuv
//! owns that signal.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

/// Waits for one child of ours to exit (and reaps it).
pub struct ExitWaiter {
    pid: libc::pid_t,
    how: How,
    status: Option<ExitStatus>,
}

enum How {
    /// The process-wide ring reaps the child and sends its status.
    Ring(oneshot::Receiver<io::Result<ExitStatus>>),
    /// The child's pidfd becomes readable at its exit; then `waitpid` reaps it.
    Pidfd(AsyncFd<OwnedFd>),
}

impl ExitWaiter {
    /// Wait on child `pid`. `pidfd` is the child's pidfd when the spawn made one (`clone3`); without
    /// the ring it is used, or one is opened. When no way to wait exists, the child's group is
    /// killed and reaped here rather than leaked.
    pub(crate) fn new(pid: libc::pid_t, pidfd: Option<OwnedFd>) -> io::Result<ExitWaiter> {
        match ring::get() {
            // The pidfd, if any, closes here: the ring needs none.
            Some(ring) => Ok(ExitWaiter {
                pid,
                how: How::Ring(ring.watch(pid)),
                status: None,
            }),
            None => ExitWaiter::by_pidfd(pid, pidfd),
        }
    }

    /// Wait on child `pid` through a pidfd of its own (the way without the ring).
    fn by_pidfd(pid: libc::pid_t, pidfd: Option<OwnedFd>) -> io::Result<ExitWaiter> {
        let fd = match pidfd {
            Some(fd) => fd,
            None => open_pidfd(pid)?,
        };
        // SAFETY: the pidfd is owned by the AsyncFd from here on.
        let fd = unsafe { AsyncFd::register(fd) }.map_err(|e| io::Error::other(e.to_string()))?;
        Ok(ExitWaiter {
            pid,
            how: How::Pidfd(fd),
            status: None,
        })
    }

    /// The child's exit status, once it has exited (cached: later calls return it at once).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(s) = self.status {
            return Ok(s);
        }
        let status = match &mut self.how {
            How::Ring(rx) => match rx.await {
                Ok(result) => result?,
                Err(_) => return Err(io::Error::other("the exit watcher stopped")),
            },
            How::Pidfd(fd) => wait_pidfd(self.pid, fd).await?,
        };
        self.status = Some(status);
        Ok(status)
    }

    /// Whether this child's exit comes through the shared ring (no descriptor of its own).
    pub fn shares_the_ring(&self) -> bool {
        matches!(self.how, How::Ring(_))
    }
}

/// Whether exits are watched by the shared ring in this process (started on first use).
pub fn ring_available() -> bool {
    ring::get().is_some()
}

async fn wait_pidfd(pid: libc::pid_t, fd: &AsyncFd<OwnedFd>) -> io::Result<ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    loop {
        let mut guard = fd.readable().await?;
        let mut raw = 0;
        // SAFETY: plain waitpid on our own child.
        let rc = unsafe { libc::waitpid(pid, &mut raw, libc::WNOHANG) };
        if rc == pid {
            return Ok(ExitStatus::from_raw(raw));
        }
        if rc == -1 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        guard.clear_ready();
    }
}

pub(crate) fn open_pidfd(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
    if raw < 0 {
        let e = io::Error::last_os_error();
        // Without a pidfd we cannot wait without a thread: end the child rather than leak it.
        // SAFETY: signals and a blocking reap of our own child and its group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
            let mut st = 0;
            libc::waitpid(pid, &mut st, 0);
        }
        return Err(e);
    }
    // SAFETY: the kernel returned a new descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// The status `waitpid` would have given, from what `waitid` reports.
fn status_from(info: &libc::siginfo_t) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    // SAFETY: for a CLD_* report the kernel filled the child fields of the union.
    let status = unsafe { info.si_status() };
    let raw = match info.si_code {
        libc::CLD_EXITED => (status & 0xff) << 8,
        libc::CLD_DUMPED => (status & 0x7f) | 0x80,
        // CLD_KILLED (the only other report for WEXITED).
        _ => status & 0x7f,
    };
    ExitStatus::from_raw(raw)
}

mod ring {
    use super::*;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};

    use io_uring::{opcode, types, IoUring, Probe};

    /// The user data of the ring's read of its wake-up eventfd; every wait gets a larger one.
    const WAKE: u64 = 0;

    /// Children to wait for, queued by the spawning threads and taken by the ring's thread.
    type Queue = Arc<Mutex<Vec<Request>>>;

    pub struct Ring {
        queue: Queue,
        wake: OwnedFd,
    }

    struct Request {
        pid: libc::pid_t,
        reply: oneshot::Sender<io::Result<ExitStatus>>,
    }

    pub fn get() -> Option<&'static Ring> {
        static RING: OnceLock<Option<Ring>> = OnceLock::new();
        RING.get_or_init(|| match start() {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::debug!("exits are watched by pidfds: no io_uring waitid here ({e})");
                None
            }
        })
        .as_ref()
    }

    impl Ring {
        /// Queue a wait for `pid` and wake the ring's thread to submit it.
        pub fn watch(&self, pid: libc::pid_t) -> oneshot::Receiver<io::Result<ExitStatus>> {
            let (reply, rx) = oneshot::channel();
            self.queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Request { pid, reply });
            let one: u64 = 1;
            // SAFETY: an 8-byte write to our eventfd. It cannot fail short of the counter's
            // overflow (2^64 - 2 unread wake-ups), which would still leave the thread awake.
            unsafe {
                libc::write(
                    self.wake.as_raw_fd(),
                    &one as *const u64 as *const libc::c_void,
                    8,
                )
            };
            rx
        }
    }

    fn start() -> io::Result<Ring> {
        if std::env::var_os("AGENT_EXEC_NO_IO_URING").is_some() {
            return Err(io::Error::other("AGENT_EXEC_NO_IO_URING is set"));
        }
        // Completions of a burst of exits beyond the queue are kept by the kernel (NODROP), but a
        // larger queue avoids that slow path when many runs end together.
        let uring: IoUring = IoUring::builder().setup_cqsize(4096).build(256)?;
        let mut probe = Probe::new();
        uring.submitter().register_probe(&mut probe)?;
        if !probe.is_supported(opcode::WaitId::CODE) {
            return Err(io::Error::other(
                "the kernel's io_uring has no waitid (6.7+)",
            ));
        }
        // SAFETY: eventfd returns a new descriptor or -1.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor owned by nobody else.
        let wake = unsafe { OwnedFd::from_raw_fd(raw) };
        let wake_fd = wake.as_raw_fd();
        let queue: Queue = Arc::default();
        let taken = queue.clone();
        // The Ring lives in a static for the life of the process, so `wake_fd` stays open for
        // the thread; the thread is never joined.
        std::thread::Builder::new()
            .name("agent-exec-exits".into())
            .spawn(move || drive(uring, wake_fd, taken))?;
        Ok(Ring { queue, wake })
    }

    /// A wait in the kernel: where it writes the child's report, and whom to tell.
    struct Pending {
        info: Box<libc::siginfo_t>,
        reply: oneshot::Sender<io::Result<ExitStatus>>,
    }

    fn drive(mut uring: IoUring, wake_fd: RawFd, queue: Queue) {
        let mut pending: HashMap<u64, Pending> = HashMap::new();
        let mut next: u64 = WAKE + 1;
        // The eventfd's counter is read into this box; it lives as long as the thread.
        let wake_buf: &'static mut u64 = Box::leak(Box::new(0u64));
        let wake_read = opcode::Read::new(types::Fd(wake_fd), wake_buf as *mut u64 as *mut u8, 8)
            .build()
            .user_data(WAKE);
        push(&mut uring, &wake_read);
        loop {
            if let Err(e) = uring.submit_and_wait(1) {
                // EINTR (a signal) and EBUSY (completions overflowed) are drained below.
                match e.raw_os_error() {
                    Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN) => {}
                    _ => {
                        tracing::error!("the exit watcher's ring failed ({e}); retrying");
                        std::thread::sleep(std::time::Duration::from_millis(100));
                    }
                }
            }
            let done: Vec<(u64, i32)> = uring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            let mut rearm = false;
            for (id, res) in done {
                if id == WAKE {
                    rearm = true;
                    continue;
                }
                let Some(p) = pending.remove(&id) else {
                    continue;
                };
                let result = if res < 0 {
                    Err(io::Error::from_raw_os_error(-res))
                } else {
                    Ok(status_from(&p.info))
                };
                // The waiter may be gone (its session dropped): the child is reaped all the same.
                let _ = p.reply.send(result);
            }
            if rearm {
                let requests =
                    std::mem::take(&mut *queue.lock().unwrap_or_else(|p| p.into_inner()));
                for r in requests {
                    let id = next;
                    next += 1;
                    // SAFETY: siginfo_t is plain data; zeroes are a valid (empty) report.
                    let mut info: Box<libc::siginfo_t> = Box::new(unsafe { std::mem::zeroed() });
                    let entry =
                        opcode::WaitId::new(libc::P_PID, r.pid as libc::id_t, libc::WEXITED)
                            .infop(&mut *info as *mut libc::siginfo_t as *const libc::siginfo_t)
                            .build()
                            .user_data(id);
                    // The box's heap address does not move when it goes into the map.
                    pending.insert(
                        id,
                        Pending {
                            info,
                            reply: r.reply,
                        },
                    );
                    push(&mut uring, &entry);
                }
                push(&mut uring, &wake_read);
            }
        }
    }

    /// Put one entry on the submission queue, submitting what is queued when it is full.
    fn push(uring: &mut IoUring, entry: &io_uring::squeue::Entry) {
        loop {
            // SAFETY: every buffer an entry points at (the wake counter, each wait's siginfo box)
            // outlives the operation: the counter is leaked, a box leaves `pending` only after its
            // completion.
            if unsafe { uring.submission().push(entry) }.is_ok() {
                return;
            }
            if let Err(e) = uring.submit() {
                if !matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY)) {
                    tracing::error!("the exit watcher could not submit ({e}); retrying");
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// A child of ours that runs `script` under sh (spawned with posix_spawn: no fork of the test).
    fn child(script: &str) -> libc::pid_t {
        let prog = std::ffi::CString::new("/bin/sh").unwrap();
        let c = std::ffi::CString::new("-c").unwrap();
        let s = std::ffi::CString::new(script).unwrap();
        let argv = [
            prog.as_ptr() as *mut libc::c_char,
            c.as_ptr() as *mut libc::c_char,
            s.as_ptr() as *mut libc::c_char,
            std::ptr::null_mut(),
        ];
        let mut pid = 0;
        extern "C" {
            static environ: *const *mut libc::c_char;
        }
        // SAFETY: posix_spawn with valid NUL-terminated argv and the current environment.
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                prog.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                argv.as_ptr(),
                environ,
            )
        };
        assert_eq!(rc, 0, "posix_spawn failed");
        pid
    }

    fn still_ours(pid: libc::pid_t) -> bool {
        let mut st = 0;
        // SAFETY: a non-blocking reap query; returns -1/ECHILD once the child was reaped.
        unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) != -1 }
    }

    #[tokio::test]
    async fn exits_arrive_with_the_status_waitpid_would_give_and_the_child_is_reaped() {
        type Expect = Box<dyn Fn(ExitStatus) -> bool>;
        let cases: [(&str, Expect); 4] = [
            ("exit 0", Box::new(|s| s.code() == Some(0))),
            ("exit 7", Box::new(|s| s.code() == Some(7))),
            ("exit 255", Box::new(|s| s.code() == Some(255))),
            (
                "kill -TERM $$",
                Box::new(|s| s.signal() == Some(libc::SIGTERM) && !s.core_dumped()),
            ),
        ];
        for (script, expect) in cases {
            let pid = child(script);
            let mut w = ExitWaiter::new(pid, None).unwrap();
            let status = tokio::time::timeout(std::time::Duration::from_secs(20), w.wait())
                .await
                .expect("the exit arrives")
                .unwrap();
            assert!(expect(status), "{script}: {status:?}");
            // Cached: a second wait answers at once with the same status.
            assert_eq!(w.wait().await.unwrap(), status);
            assert!(!still_ours(pid), "{script}: the child was not reaped");
        }
    }

    #[tokio::test]
    async fn many_children_ending_together_each_get_their_own_exit() {
        let mut waiters: Vec<(i32, ExitWaiter)> = (0..300)
            .map(|i| {
                let pid = child(&format!("exit {}", i % 200));
                (i % 200, ExitWaiter::new(pid, None).unwrap())
            })
            .collect();
        for (code, w) in &mut waiters {
            let s = tokio::time::timeout(std::time::Duration::from_secs(30), w.wait())
                .await
                .expect("every exit arrives")
                .unwrap();
            assert_eq!(s.code(), Some(*code));
        }
    }

    #[tokio::test]
    async fn without_the_ring_a_pidfd_waits_as_well() {
        for (script, code) in [("exit 3", 3), ("sleep 0.2; exit 0", 0)] {
            let pid = child(script);
            let mut w = ExitWaiter::by_pidfd(pid, None).unwrap();
            assert!(!w.shares_the_ring());
            let s = tokio::time::timeout(std::time::Duration::from_secs(20), w.wait())
                .await
                .expect("the exit arrives")
                .unwrap();
            assert_eq!(s.code(), Some(code));
            assert!(!still_ours(pid));
        }
    }

    #[tokio::test]
    async fn on_a_kernel_with_waitid_in_io_uring_no_descriptor_is_held_per_child() {
        let ring = ring_available();
        let waiter = ExitWaiter::new(child("sleep 30"), None).unwrap();
        assert_eq!(waiter.shares_the_ring(), ring);
        // Where the kernel has it (6.7+) and nothing forbids it, the ring must be the way taken.
        let (major, minor) = kernel_version();
        let forbidden = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .map(|s| s.trim() != "0")
            .unwrap_or(false)
            || std::env::var_os("AGENT_EXEC_NO_IO_URING").is_some();
        if (major, minor) >= (6, 7) && !forbidden {
            assert!(
                ring,
                "kernel {major}.{minor} has io_uring waitid but the ring is not used"
            );
        }
        // SAFETY: ends our own child, then reaps it through the waiter.
        unsafe { libc::kill(waiter.pid, libc::SIGKILL) };
        let mut waiter = waiter;
        let s = waiter.wait().await.unwrap();
        assert_eq!(s.signal(), Some(libc::SIGKILL));
    }

    fn kernel_version() -> (u32, u32) {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut parts = release
            .trim()
            .split(|c: char| !c.is_ascii_digit())
            .map(|p| p.parse().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
    }
}
