//! A tracking cgroup per run, entered before the run's first instruction, so the kill path knows every
//! process the run started, including one that cleared the session marker, called `setsid` and
//! double-forked as its very first action.
//!
//! Joining after the spawn is too late: by the time `posix_spawn` returns, the shell may already have
//! forked its first command (measured). So the child must start inside the cgroup:
//! - cgroup v2: pipe runs are spawned by `clone3(CLONE_INTO_CGROUP)` (see [`super::clone3`]), which
//!   keeps posix_spawn's cost (no copy of the host's page tables);
//! - cgroup v1: the spawning thread moves into the cgroup around `posix_spawn` (v1 lets one thread
//!   change cgroups; v2 does not), and its child is born there;
//! - PTY runs: the same `clone3` on v2 (the slave made the controlling terminal in the child); on v1
//!   forked, writing themselves into the cgroup before exec.
//!
//! Every move into a cgroup is made by the moving thread itself writing `0`: see
//! [`crate::sandbox::cgroup::join_file`] for why that, and not a process id, is written.
//!
//! Where no cgroup can be made (no writable hierarchy, an unprivileged user without delegation), runs
//! are tracked by the session marker and their process group and session, as before; [`host`] says
//! which applies, and `processTracking()` reports it to JavaScript.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::sandbox::cgroup::{
    cgroups_in, dir_of, join_file, mounts, own_cgroups, own_v1_dir, own_v2_dir, remove_when_empty,
    sweep_stale, writable_dir,
};

/// Where runs' tracking cgroups are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackingHost {
    /// 2: our own cgroup directory in the unified hierarchy; 1: our directory in one v1 hierarchy.
    version: u8,
    /// The directory runs' cgroups are made in (its children).
    parent: PathBuf,
}

impl TrackingHost {
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The directory runs' cgroups are made in.
    pub fn parent(&self) -> &Path {
        &self.parent
    }
}

/// How this host tracks a run's processes, for reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackingReport {
    /// `"cgroup"` or `"marker"`.
    pub mechanism: &'static str,
    pub cgroup_version: Option<u8>,
    /// How a pipe run enters its cgroup: `"clone3"`, `"thread"`, or none.
    pub pipe_spawn: Option<&'static str>,
    /// Why cgroups are not used, when they are not.
    pub reason: Option<String>,
    /// Where runs' cgroups are made (`agent-exec-<host pid>-...`).
    pub parent: Option<PathBuf>,
}

/// Set when `clone3(CLONE_INTO_CGROUP)` failed for a reason that will not change (an old kernel, a
/// cgroup the kernel refuses to spawn into): pipe runs then use the thread move or the marker.
static CLONE3_BROKEN: AtomicBool = AtomicBool::new(false);

pub(crate) fn clone3_usable() -> bool {
    super::clone3::supported() && !CLONE3_BROKEN.load(Ordering::Relaxed)
}

pub(crate) fn mark_clone3_broken() {
    CLONE3_BROKEN.store(true, Ordering::Relaxed);
}

/// The host's tracking cgroup parent, probed once (a cgroup is made and removed).
pub fn host() -> Result<&'static TrackingHost, &'static str> {
    static HOST: OnceLock<Result<TrackingHost, String>> = OnceLock::new();
    HOST.get_or_init(probe)
        .as_ref()
        .map_err(|reason| reason.as_str())
}

/// What [`host`] found, as reported to JavaScript.
pub fn report() -> TrackingReport {
    match host() {
        Ok(h) => TrackingReport {
            mechanism: "cgroup",
            cgroup_version: Some(h.version()),
            pipe_spawn: match h.version {
                2 if clone3_usable() => Some("clone3"),
                2 => None,
                _ => Some("thread"),
            },
            reason: None,
            parent: Some(h.parent().to_path_buf()),
        },
        Err(reason) => TrackingReport {
            mechanism: "marker",
            cgroup_version: None,
            pipe_spawn: None,
            reason: Some(reason.to_string()),
            parent: None,
        },
    }
}

fn probe() -> Result<TrackingHost, String> {
    if std::env::var_os("AGENT_EXEC_NO_CGROUP_TRACKING").is_some() {
        return Err("cgroup tracking is turned off by AGENT_EXEC_NO_CGROUP_TRACKING".into());
    }
    let mut tried = Vec::new();
    for candidate in candidates() {
        match try_make(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) => tried.push(format!(
                "cgroup v{} at {}: {e}",
                candidate.version(),
                candidate.parent().display()
            )),
        }
    }
    if tried.is_empty() {
        return Err("no cgroup hierarchy is mounted for this process".into());
    }
    Err(format!(
        "no tracking cgroup can be made here ({})",
        tried.join("; ")
    ))
}

/// Where a tracking cgroup could go, best first: our v2 cgroup, then our directory in a v1 hierarchy.
fn candidates() -> Vec<TrackingHost> {
    let mounts = mounts();
    let own = own_cgroups();
    let v2 = own_v2_dir(&mounts, &own).map(|parent| TrackingHost { version: 2, parent });
    // v1: any hierarchy we can write in; pids is the one a sandboxed run's limits use too.
    let v1 = ["pids", "name=systemd", "memory", "cpu", "freezer"]
        .iter()
        .find_map(|controller| {
            own_v1_dir(&mounts, &own, controller)
                .filter(|parent| writable_dir(parent))
                .map(|parent| TrackingHost { version: 1, parent })
        });
    [v2, v1].into_iter().flatten().collect()
}

/// Make and remove one cgroup, as every run will.
fn try_make(host: &TrackingHost) -> std::io::Result<()> {
    if !writable_dir(host.parent()) {
        return Err(std::io::Error::from_raw_os_error(libc::EACCES));
    }
    let dir = host
        .parent()
        .join(format!("agent-exec-{}-probe", std::process::id()));
    std::fs::create_dir(&dir)?;
    let opened = OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"));
    let _ = std::fs::remove_dir(&dir);
    opened.map(drop)
}

/// One run's tracking cgroup as its spawn needs it: the directory and the descriptors the child enters
/// it by. After the spawn the run keeps only its [`TrackedCgroup`] (no descriptors: a live session
/// holds as few as it can).
#[derive(Debug)]
pub struct TrackingCgroup {
    tracked: TrackedCgroup,
    /// The directory, for `CLONE_INTO_CGROUP` (v2).
    dir_fd: OwnedFd,
    /// The file a single-threaded child writes `0` into to join (see [`join_file`]).
    join_fd: OwnedFd,
}

/// A run's tracking cgroup once its child is in it, removed once its processes are gone.
#[derive(Debug)]
pub struct TrackedCgroup {
    version: u8,
    dir: PathBuf,
}

impl TrackedCgroup {
    /// The file listing the run's processes, wherever they went.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Remove the cgroup once the run ended, off the caller's path: in the background, retried while
    /// the kernel empties it. A cgroup that still holds a process left running stays until the session
    /// is dropped.
    pub fn remove_soon(&self) {
        remove_when_empty(vec![self.dir.clone()]);
    }
}

impl Drop for TrackedCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

impl TrackingCgroup {
    /// A fresh cgroup for one run, or `None` where this host tracks by marker. Taken from a small stock
    /// made in the background, so the run's start does not wait for a `mkdir` in the cgroup file
    /// system; a cgroup is never used by two runs (a later kill of one must never reach the other).
    pub fn create(name: &str) -> Option<TrackingCgroup> {
        let host = host().ok()?;
        let stocked = STOCK.lock().unwrap_or_else(|e| e.into_inner()).pop();
        refill_stock();
        stocked.or_else(|| Self::create_in(host, name))
    }

    fn create_in(host: &TrackingHost, name: &str) -> Option<TrackingCgroup> {
        sweep_stale(host.parent());
        let dir = host.parent().join(name);
        std::fs::create_dir(&dir).ok()?;
        let opened = (|| -> std::io::Result<(OwnedFd, OwnedFd)> {
            let dir_fd: File = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY)
                .open(&dir)?;
            let join: File = OpenOptions::new()
                .write(true)
                .open(dir.join(join_file(host.version())))?;
            Ok((dir_fd.into(), join.into()))
        })();
        match opened {
            Ok((dir_fd, join_fd)) => Some(TrackingCgroup {
                tracked: TrackedCgroup {
                    version: host.version(),
                    dir,
                },
                dir_fd,
                join_fd,
            }),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                None
            }
        }
    }

    pub fn version(&self) -> u8 {
        self.tracked.version
    }

    /// What the run keeps once its child is in the cgroup; the descriptors close here.
    pub fn into_tracked(self) -> TrackedCgroup {
        self.tracked
    }

    pub fn dir_fd(&self) -> BorrowedFd<'_> {
        self.dir_fd.as_fd()
    }

    /// The descriptor a single-threaded child (forked, or cloned without `CLONE_THREAD`) writes `0`
    /// (itself) into before exec: `tasks` on v1, `cgroup.procs` on v2 (see [`join_file`]).
    pub fn join_fd(&self) -> BorrowedFd<'_> {
        self.join_fd.as_fd()
    }

    /// The file listing the run's processes, wherever they went.
    pub fn procs_file(&self) -> PathBuf {
        self.tracked.procs_file()
    }

    /// v1: the calling thread's `tasks` file in this cgroup (a thread moves by writing its id).
    fn tasks_file(&self) -> PathBuf {
        self.tracked.dir.join("tasks")
    }

    /// Run `spawn` with the calling thread inside this cgroup (v1), so the child is born in it; the
    /// thread returns to its own cgroup afterwards. The outer error: the thread could not move, and
    /// nothing was spawned.
    pub fn spawn_from_inside<T>(&self, spawn: impl FnOnce() -> T) -> std::io::Result<T> {
        let back = own_thread_tasks_file(&self.tracked.dir)?;
        // `0`, not the thread's id: the same move, without the wait for an RCU grace period.
        write_file(&self.tasks_file(), crate::sandbox::cgroup::SELF)?;
        let spawned = spawn();
        if let Err(e) = write_file(&back, crate::sandbox::cgroup::SELF) {
            // The thread stays in the run's cgroup: later runs from it would be tracked as this one.
            // Its kill would still spare the host (its own pid is never signalled), but say so.
            tracing::error!("could not move a spawning thread back to its cgroup: {e}");
        }
        Ok(spawned)
    }
}

/// Fresh cgroups made ahead of the runs that will use them.
static STOCK: std::sync::Mutex<Vec<TrackingCgroup>> = std::sync::Mutex::new(Vec::new());
/// How many fresh cgroups wait in stock: enough for a burst of starts between two refills.
const STOCK_SIZE: usize = 4;
static STOCK_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static REFILLING: AtomicBool = AtomicBool::new(false);

/// Top the stock up in the background (on the async runtime's blocking pool, where there is one).
fn refill_stock() {
    crate::util::refill_in_background(&REFILLING, || {
        if let Ok(host) = host() {
            while STOCK.lock().unwrap_or_else(|e| e.into_inner()).len() < STOCK_SIZE {
                let seq = STOCK_SEQ.fetch_add(1, Ordering::Relaxed);
                let name = format!("agent-exec-{}-run{seq}", std::process::id());
                match TrackingCgroup::create_in(host, &name) {
                    Some(cg) => STOCK.lock().unwrap_or_else(|e| e.into_inner()).push(cg),
                    None => break,
                }
            }
        }
    });
}

/// Remove the stock's cgroups (the host is exiting; nothing will use them).
pub fn drain_stock() {
    STOCK.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The `tasks` file of the calling thread's own cgroup in the hierarchy that holds `run_dir`.
fn own_thread_tasks_file(run_dir: &Path) -> std::io::Result<PathBuf> {
    let hierarchy = run_dir
        .parent()
        .and_then(|p| {
            mounts()
                .into_iter()
                .filter(|m| p.starts_with(&m.point))
                .max_by_key(|m| m.point.as_os_str().len())
        })
        .ok_or_else(|| std::io::Error::other("the run's cgroup is on no mounted hierarchy"))?;
    let option_of = |controllers: &str| {
        controllers
            .split(',')
            .any(|c| hierarchy.options.split(',').any(|o| o == c))
    };
    let path = cgroups_in("/proc/thread-self/cgroup")
        .into_iter()
        .find(|(controllers, _)| !controllers.is_empty() && option_of(controllers))
        .map(|(_, path)| path)
        .ok_or_else(|| {
            std::io::Error::other("this thread's cgroup in that hierarchy is unknown")
        })?;
    Ok(dir_of(&hierarchy, &path).join("tasks"))
}

fn write_file(path: &Path, value: &str) -> std::io::Result<()> {
    OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(value.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracking_cgroup_is_made_and_removed() {
        let Ok(host) = host() else {
            // Hosts without a writable hierarchy track by marker; `report` says so.
            assert_eq!(report().mechanism, "marker");
            assert!(!crate::test_needs::runs_here("cgroup-tracking", false));
            return;
        };
        let name = format!("agent-exec-{}-unit-track", std::process::id());
        let cg = TrackingCgroup::create(&name).expect("the probe made one, so this can");
        assert_eq!(cg.version(), host.version());
        assert_eq!(std::fs::read_to_string(cg.procs_file()).unwrap(), "");
        let dir = cg.tracked.dir.clone();
        drop(cg);
        assert!(!dir.exists());
    }

    #[test]
    fn on_cgroup_v1_a_spawning_thread_moves_in_and_back() {
        let v1 = candidates()
            .into_iter()
            .find(|c| c.version() == 1 && try_make(c).is_ok());
        if !crate::test_needs::runs_here("cgroup-v1", v1.is_some()) {
            return;
        }
        let v1 = v1.expect("checked");
        let name = format!("agent-exec-{}-unit-v1", std::process::id());
        let cg = TrackingCgroup::create_in(&v1, &name).unwrap();
        let before = std::fs::read_to_string("/proc/thread-self/cgroup").unwrap();
        let out = cg
            .spawn_from_inside(|| {
                std::process::Command::new("cat")
                    .arg("/proc/self/cgroup")
                    .output()
            })
            .expect("the thread moves")
            .expect("cat runs");
        let child = String::from_utf8_lossy(&out.stdout);
        assert!(child.contains(&name), "{child}");
        assert_eq!(
            std::fs::read_to_string("/proc/thread-self/cgroup").unwrap(),
            before
        );
    }
}
