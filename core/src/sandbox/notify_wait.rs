//! How a sandboxed run's seccomp notification fd is waited on.
//!
//! A notification is a round trip the calling process sits out, so the hop that wakes its answerer is
//! paid on every write a run makes. Answered by a task of the async runtime, it took two: the kernel
//! woke the runtime's reactor, which woke a worker, often on the other CPU; on an idle virtual machine
//! the wake-up of a halted CPU doubled the round trip (issue 36: p90 of one file creation 38-40 us
//! against 19 us, 5000 creations in a shell loop 195-240 ms against 130-145 ms). So a run's fd is
//! waited on by a thread of its own, blocked in `poll` on that fd alone: the kernel's synchronous
//! wake-up (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`) then runs it on the caller's CPU, which sits idle
//! until the answer anyway. (A shared `epoll` set served by a few threads was measured too: `epoll`'s
//! wake-up does not keep the caller's CPU, and it was no better than the runtime.)
//!
//! Threads are bounded: beyond `DEDICATED_MAX` runs supervised at once, a run's fd is waited on by
//! a task of the async runtime as before, slower per call but with no thread of its own.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// What the server of a fd says after answering what was pending.
pub enum Served {
    /// Wait for the next notification.
    More,
    /// Every process using the filter is gone.
    Done,
}

/// Runs whose fd has a thread of its own at most, at once.
pub const DEDICATED_MAX: usize = 64;

static DEDICATED: AtomicUsize = AtomicUsize::new(0);

/// One of the `DEDICATED_MAX` places, given back when dropped.
struct Place;

impl Place {
    fn take() -> Option<Place> {
        DEDICATED
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < DEDICATED_MAX).then_some(n + 1)
            })
            .ok()
            .map(|_| Place)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        DEDICATED.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How a run's fd is being waited on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiter {
    Thread,
    Runtime,
}

/// Call `serve` whenever `fd` is readable or hung up, until it says `Done`: on a thread of its own
/// while places are free (and the thread can be made), else on `runtime`.
pub fn wait_on(
    fd: Arc<OwnedFd>,
    serve: impl FnMut() -> Served + Send + 'static,
    runtime: &tokio::runtime::Handle,
) -> std::io::Result<Waiter> {
    let serve = Arc::new(Mutex::new(serve));
    if let Some(place) = Place::take() {
        let (thread_fd, thread_serve) = (fd.clone(), serve.clone());
        let made = std::thread::Builder::new()
            .name("agent-exec-supervisor".into())
            .spawn(move || {
                let _place = place;
                // Calls made for the caller set its umask here, on this thread alone, and are made
                // without effective capabilities, as the caller has none.
                super::perform::own_fs();
                super::perform::CallerIdentity::assume_for_good();
                while readable(&thread_fd) {
                    if serve_now(&thread_serve) {
                        break;
                    }
                }
            });
        // No thread to be had (a process limit): the runtime waits instead.
        if made.is_ok() {
            return Ok(Waiter::Thread);
        }
    }
    // The fd registers with the reactor of the runtime it is given.
    let _in_runtime = runtime.enter();
    // SAFETY: the fd stays open as long as the AsyncFd holds its Arc; nothing else closes it.
    let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?;
    runtime.spawn(async move {
        loop {
            let Ok(mut guard) = fd.readable().await else {
                break;
            };
            guard.clear_ready();
            if serve_now(&serve) {
                break;
            }
        }
    });
    Ok(Waiter::Runtime)
}

/// Serve once; true when the server is done.
fn serve_now<F: FnMut() -> Served>(serve: &Mutex<F>) -> bool {
    let mut serve = serve.lock().unwrap_or_else(|e| e.into_inner());
    matches!((*serve)(), Served::Done)
}

/// Block until `fd` is readable or hung up; false if it is not a descriptor poll can wait on.
fn readable(fd: &OwnedFd) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: poll on one fd, waiting as long as it takes.
        let n = unsafe { libc::poll(&mut p, 1, -1) };
        if n > 0 {
            return p.revents & libc::POLLNVAL == 0;
        }
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    fn until(what: &str, cond: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !cond() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Serve a socket pair's reading end: each byte written is served, and the end of the writer
    /// ends the waiting (the server says Done), on either kind of waiter.
    fn served_until_done(runtime: &tokio::runtime::Handle, expect: Option<Waiter>) {
        let (reader, mut writer) = std::os::unix::net::UnixStream::pair().unwrap();
        reader.set_nonblocking(true).unwrap();
        let reader: Arc<OwnedFd> = Arc::new(reader.into());
        let served = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let (r, s, d) = (reader.clone(), served.clone(), done.clone());
        let waiter = wait_on(
            reader,
            move || {
                let mut buf = [0u8; 64];
                // SAFETY: a read into a local buffer from a non-blocking socket.
                let n = unsafe { libc::read(r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n == 0 {
                    d.store(true, Ordering::SeqCst);
                    return Served::Done;
                }
                if n > 0 {
                    s.fetch_add(n as usize, Ordering::SeqCst);
                }
                Served::More
            },
            runtime,
        )
        .unwrap();
        if let Some(expect) = expect {
            assert_eq!(waiter, expect);
        }
        for i in 1..=3 {
            writer.write_all(b"x").unwrap();
            until("a write was not served", || {
                served.load(Ordering::SeqCst) >= i
            });
        }
        drop(writer);
        until("the hang-up did not end the waiting", || {
            done.load(Ordering::SeqCst)
        });
        assert_eq!(served.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_fd_is_served_until_done_on_a_thread_of_its_own_and_past_the_bound_on_the_runtime() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_io()
            .build()
            .unwrap();
        // Other tests may hold places: the kind is checked only where it is certain. Once its server
        // is done, a thread ends and gives its place back.
        let before = DEDICATED.load(Ordering::SeqCst);
        served_until_done(runtime.handle(), None);
        until("the waiting thread did not end with its server", || {
            DEDICATED.load(Ordering::SeqCst) <= before
        });
        // Every place taken: the runtime waits.
        let mut held = Vec::new();
        while let Some(place) = Place::take() {
            held.push(place);
        }
        served_until_done(runtime.handle(), Some(Waiter::Runtime));
        drop(held);
    }
}
