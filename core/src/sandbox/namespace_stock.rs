//! Network, IPC and UTS namespaces made ahead of the runs that enter them, as root (where a run's
//! namespaces belong to the host's user namespace; an unprivileged run makes them inside its own user
//! namespace at spawn, as before).
//!
//! Why: making a network namespace costs 0.5 to 0.8 ms here (every network subsystem sets up its
//! state for it), the largest single layer of a sandboxed start; entering one made ahead costs 0.13
//! to 0.19 ms (measured 2026-11-26, kernel 6.18). The stock is made off the run's path, by a thread
//! of its own that calls `unshare` and keeps a descriptor of each namespace, then exits, so no thread
//! that runs anything else ever changes namespace.
//!
//! What stays true: each set is taken by one run only (a kill of one run, or a socket it binds, never
//! meets another run), and is as empty as one made at spawn: no process ever ran in it, the network
//! namespace has its loopback only (down), the UTS namespace the host's names as of its making.

use std::fs::File;
use std::os::fd::{IntoRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

/// One run's network, IPC and UTS namespaces, held by descriptors until its first spawn attempt has
/// returned. Atomics, not owned descriptors: the child reads them between clone and exec (no locks
/// there), and the host closes them through a shared plan.
#[derive(Debug)]
pub struct Premade {
    /// net, ipc, uts; -1 once released.
    fds: [AtomicI32; 3],
}

impl Premade {
    /// The flags of the namespaces a set stands for, which the child then does not unshare.
    pub const FLAGS: libc::c_int = libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    const KINDS: [libc::c_int; 3] = [libc::CLONE_NEWNET, libc::CLONE_NEWIPC, libc::CLONE_NEWUTS];

    fn new(net: OwnedFd, ipc: OwnedFd, uts: OwnedFd) -> Premade {
        Premade {
            fds: [net, ipc, uts].map(|fd| AtomicI32::new(fd.into_raw_fd())),
        }
    }

    /// In the child (system calls only): enter the three if they are still held. `false`: released
    /// (a later attempt of the same run), or refused part-way; the child then unshares all three,
    /// which replaces any it entered, as a run without a set does.
    pub fn enter(&self) -> bool {
        let fds = self.fds.each_ref().map(|fd| fd.load(Ordering::Acquire));
        if fds.contains(&-1) {
            return false;
        }
        // SAFETY: setns of the calling process with namespace descriptors the plan holds.
        fds.iter()
            .zip(Self::KINDS)
            .all(|(&fd, kind)| unsafe { libc::setns(fd, kind) } == 0)
    }

    /// In the host, once a spawn attempt has returned (the child that entered them is gone; the
    /// namespaces live on with the run's processes) or before a forking attempt (whose child's copy of
    /// the plan the host could not release afterwards): close the descriptors. So a retry of the run
    /// makes fresh namespaces, and the run's IPC objects do not outlive its processes.
    pub fn release(&self) {
        for fd in &self.fds {
            let fd = fd.swap(-1, Ordering::AcqRel);
            if fd >= 0 {
                // SAFETY: a descriptor this set owned, closed once (swapped out first).
                unsafe { libc::close(fd) };
            }
        }
    }

    /// Whether the set is still held (not yet released).
    pub fn held(&self) -> bool {
        self.fds.iter().all(|fd| fd.load(Ordering::Acquire) >= 0)
    }
}

impl Drop for Premade {
    fn drop(&mut self) {
        self.release();
    }
}

/// Sets waiting for runs: enough for a burst of starts between two refills.
const STOCK_SIZE: usize = 2;
static STOCK: Mutex<Vec<Premade>> = Mutex::new(Vec::new());
static REFILLING: AtomicBool = AtomicBool::new(false);
/// Set once the making was refused for good (no privilege, a container's filter): stop trying.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// A set for one run, if one is in stock; the stock is topped up in the background. `None` (the first
/// run, a burst, a host that refuses): the run makes its own at spawn.
pub fn take() -> Option<Premade> {
    let taken = STOCK.lock().unwrap_or_else(|e| e.into_inner()).pop();
    if !REFUSED.load(Ordering::Relaxed) {
        refill();
    }
    taken
}

/// A failure later makings would meet too; others (descriptors or memory short for a moment, the
/// namespace count at its ceiling) only end this refill.
fn lasting(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EINVAL | libc::ENOSYS | libc::EACCES)
    )
}

/// Top the stock up on a thread of its own (started from the runtime's blocking pool where there is
/// one, so the run that asked does not wait for the thread's start either).
fn refill() {
    crate::util::refill_in_background(&REFILLING, || {
        let made = std::thread::Builder::new()
            .name("agent-exec-namespaces".into())
            .spawn(|| {
                while STOCK.lock().unwrap_or_else(|e| e.into_inner()).len() < STOCK_SIZE {
                    match make() {
                        Ok(set) => STOCK.lock().unwrap_or_else(|e| e.into_inner()).push(set),
                        Err(e) => {
                            tracing::debug!("namespaces could not be made ahead: {e}");
                            if lasting(&e) {
                                REFUSED.store(true, Ordering::Relaxed);
                            }
                            break;
                        }
                    }
                }
            })
            .map(|t| t.join());
        match made {
            // No thread now (a process at its thread limit): the next take tries again.
            Err(e) => tracing::debug!("no thread to make namespaces ahead: {e}"),
            Ok(Err(_)) => tracing::error!("the thread making namespaces ahead panicked"),
            Ok(Ok(())) => {}
        }
    });
}

/// Make one set, on the calling thread (which is left in it: call it on a thread that then exits).
fn make() -> std::io::Result<Premade> {
    // SAFETY: unshare of the calling thread's own namespaces (these three may be unshared by one
    // thread of a process).
    if unsafe { libc::unshare(Premade::FLAGS) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let open = |kind: &str| -> std::io::Result<OwnedFd> {
        Ok(File::open(format!("/proc/thread-self/ns/{kind}"))?.into())
    };
    Ok(Premade::new(open("net")?, open("ipc")?, open("uts")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn inode(path: &str) -> String {
        std::fs::read_link(path).unwrap().display().to_string()
    }

    /// The namespace a held set's descriptor `i` (net, ipc, uts) stands for.
    fn of(set: &Premade, i: usize) -> String {
        inode(&format!(
            "/proc/self/fd/{}",
            set.fds[i].load(Ordering::Acquire)
        ))
    }

    /// Sets come out of stock unshared (each run its own, none the host's), a process entering one
    /// finds an empty network (its loopback only) while the host's threads stay where they were, and
    /// a released set is entered by nobody (the child then makes its own).
    #[test]
    fn each_run_takes_a_set_of_its_own_and_finds_it_empty() {
        if !crate::test_needs::runs_here("root", nix::unistd::geteuid().is_root()) {
            return;
        }
        let host = ["net", "ipc", "uts"].map(|k| inode(&format!("/proc/thread-self/ns/{k}")));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut sets = Vec::new();
        while sets.len() < 3 && std::time::Instant::now() < deadline {
            match take() {
                Some(s) => sets.push(s),
                None => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
        assert_eq!(sets.len(), 3, "the stock was never refilled");
        assert_eq!(inode("/proc/thread-self/ns/net"), host[0]);
        for (i, host_ns) in host.iter().enumerate() {
            let ids: std::collections::BTreeSet<String> = sets.iter().map(|s| of(s, i)).collect();
            assert_eq!(ids.len(), 3, "{ids:?}");
            assert!(!ids.contains(host_ns), "{ids:?}");
        }

        let set = std::sync::Arc::new(sets.pop().unwrap());
        let expected = of(&set, 0);
        let probe = |set: std::sync::Arc<Premade>| {
            let mut cmd = std::process::Command::new("/bin/sh");
            cmd.arg("-c")
                .arg("readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1");
            // SAFETY: only setns runs between fork and exec, on descriptors opened before the fork.
            unsafe {
                cmd.pre_exec(move || {
                    if set.enter() {
                        Ok(())
                    } else {
                        Err(std::io::Error::from_raw_os_error(libc::ESRCH))
                    }
                });
            }
            cmd.output()
        };
        let out = probe(set.clone()).unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(lines, [expected.as_str(), "lo"], "{text}");

        assert!(set.held());
        set.release();
        assert!(!set.held());
        let refused = probe(set).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(libc::ESRCH));
    }
}
