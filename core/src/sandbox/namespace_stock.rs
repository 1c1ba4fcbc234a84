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
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// One run's network, IPC and UTS namespaces, kept alive by these descriptors until it enters them.
#[derive(Debug)]
pub struct Premade {
    pub net: OwnedFd,
    pub ipc: OwnedFd,
    pub uts: OwnedFd,
}

impl Premade {
    /// Enter the three, in the child (system calls only, as the child's other steps).
    pub fn enter(&self) -> std::io::Result<()> {
        for (fd, kind) in [
            (&self.net, libc::CLONE_NEWNET),
            (&self.ipc, libc::CLONE_NEWIPC),
            (&self.uts, libc::CLONE_NEWUTS),
        ] {
            // SAFETY: setns of the calling process with a namespace descriptor we own.
            if unsafe { libc::setns(fd.as_raw_fd(), kind) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// The flags of the namespaces this set stands for, which the child then does not unshare.
    pub const FLAGS: libc::c_int = libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
}

/// Sets waiting for runs: enough for a burst of starts between two refills.
const STOCK_SIZE: usize = 2;
static STOCK: Mutex<Vec<Premade>> = Mutex::new(Vec::new());
static REFILLING: AtomicBool = AtomicBool::new(false);
/// Set once a making failed: this host refuses (no privilege, a container's filter), so stop trying.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// A set for one run, if one is in stock; the stock is topped up in the background either way. `None`
/// (the first run, a burst, a host that refuses): the run makes its own at spawn.
pub fn take() -> Option<Premade> {
    if REFUSED.load(Ordering::Relaxed) {
        return None;
    }
    let taken = STOCK.lock().unwrap_or_else(|e| e.into_inner()).pop();
    refill();
    taken
}

/// Top the stock up on a thread of its own (started from the runtime's blocking pool where there is
/// one, so the run that asked does not wait for the thread's start either).
fn refill() {
    if REFILLING.swap(true, Ordering::AcqRel) {
        return;
    }
    let fill = || {
        let made = std::thread::Builder::new()
            .name("agent-exec-namespaces".into())
            .spawn(|| {
                while STOCK.lock().unwrap_or_else(|e| e.into_inner()).len() < STOCK_SIZE {
                    match make() {
                        Ok(set) => STOCK.lock().unwrap_or_else(|e| e.into_inner()).push(set),
                        Err(e) => {
                            tracing::debug!("namespaces cannot be made ahead here: {e}");
                            REFUSED.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                }
            })
            .map(|t| t.join());
        if made.is_err() {
            REFUSED.store(true, Ordering::Relaxed);
        }
        REFILLING.store(false, Ordering::Release);
    };
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(fill)),
        Err(_) => fill(),
    }
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
    Ok(Premade {
        net: open("net")?,
        ipc: open("ipc")?,
        uts: open("uts")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn inode(path: &str) -> String {
        std::fs::read_link(path).unwrap().display().to_string()
    }

    /// Sets come out of stock unshared (each run its own, none the host's), and a process entering one
    /// finds an empty network (its loopback only) while the host's threads stay where they were.
    #[test]
    fn each_run_takes_a_set_of_its_own_and_finds_it_empty() {
        let root = crate::test_needs::runs_here("root", nix::unistd::geteuid().is_root());
        if !root {
            return;
        }
        let host_net = inode("/proc/thread-self/ns/net");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut sets = Vec::new();
        while sets.len() < 3 && std::time::Instant::now() < deadline {
            match take() {
                Some(s) => sets.push(s),
                None => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
        assert_eq!(sets.len(), 3, "the stock was never refilled");
        assert_eq!(inode("/proc/thread-self/ns/net"), host_net);
        let of = |fd: &OwnedFd| inode(&format!("/proc/self/fd/{}", fd.as_raw_fd()));
        let nets: std::collections::BTreeSet<String> = sets.iter().map(|s| of(&s.net)).collect();
        assert_eq!(nets.len(), 3, "{nets:?}");
        assert!(!nets.contains(&host_net));
        for s in &sets {
            assert_ne!(of(&s.ipc), inode("/proc/thread-self/ns/ipc"));
            assert_ne!(of(&s.uts), inode("/proc/thread-self/ns/uts"));
        }

        let set = sets.pop().unwrap();
        let expected = of(&set.net);
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1");
        // SAFETY: only setns runs between fork and exec, on descriptors opened before the fork.
        unsafe {
            cmd.pre_exec(move || set.enter());
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(lines, [expected.as_str(), "lo"], "{text}");
    }
}
