//! A control group per sandboxed run, for the limits rlimits cannot express: processes counted for the
//! run alone (`RLIMIT_NPROC` counts the whole user and does not bind root) and memory counted for the
//! whole tree, with the kernel's own count of what each limit refused or killed.
//!
//! Both hierarchies exist in the wild: cgroup v2 (one tree; the child needs the controllers delegated
//! to our cgroup's subtree) and v1 (one tree per controller, as on this machine's hybrid layout). The
//! run joins its cgroup from the forked child before exec, by writing `0` (itself) to the file
//! [`join_file`] names, through descriptors opened here, so no descendant can be forked outside it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Where this process's cgroups are, and which controllers a child cgroup can use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupHost {
    /// cgroup v2: our own cgroup directory.
    V2 {
        dir: PathBuf,
        memory: bool,
        pids: bool,
    },
    /// cgroup v1: our directory in each controller's hierarchy.
    V1 {
        memory: Option<PathBuf>,
        pids: Option<PathBuf>,
    },
}

impl CgroupHost {
    pub fn version(&self) -> u8 {
        match self {
            CgroupHost::V2 { .. } => 2,
            CgroupHost::V1 { .. } => 1,
        }
    }

    pub fn has_memory(&self) -> bool {
        match self {
            CgroupHost::V2 { memory, .. } => *memory,
            CgroupHost::V1 { memory, .. } => memory.is_some(),
        }
    }

    pub fn has_pids(&self) -> bool {
        match self {
            CgroupHost::V2 { pids, .. } => *pids,
            CgroupHost::V1 { pids, .. } => pids.is_some(),
        }
    }
}

/// One line of `/proc/self/mountinfo`: mount point, root within the file system, type, super options.
pub(crate) struct Mount {
    root: String,
    pub(crate) point: PathBuf,
    pub(crate) fstype: String,
    pub(crate) options: String,
}

pub(crate) fn mounts() -> Vec<Mount> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some(Mount {
                root: unescape(f.get(3)?),
                point: PathBuf::from(unescape(f.get(4)?)),
                fstype: (*r.first()?).to_string(),
                options: r.get(2).copied().unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// mountinfo escapes spaces and a few others as octal.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() {
            if let Ok(n) = u8::from_str_radix(&s[i + 1..i + 4], 8) {
                out.push(n);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Our cgroup path per hierarchy from `/proc/self/cgroup`: `("", path)` for v2, `(controllers, path)`
/// for v1.
pub(crate) fn own_cgroups() -> Vec<(String, String)> {
    cgroups_in("/proc/self/cgroup")
}

/// The `(controllers, path)` lines of a `/proc/<pid or thread-self>/cgroup` file.
pub(crate) fn cgroups_in(file: &str) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?.to_string();
            let path = parts.next()?.to_string();
            Some((controllers, path))
        })
        .collect()
}

/// Join a cgroup path onto the mount point of its hierarchy, allowing for a mount of a sub-tree.
pub(crate) fn dir_of(mount: &Mount, path: &str) -> PathBuf {
    let rel = path.strip_prefix(&mount.root).unwrap_or(path);
    mount.point.join(rel.trim_start_matches('/'))
}

pub(crate) fn writable_dir(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}

/// Our own cgroup's directory in the v2 hierarchy, if one is mounted.
pub(crate) fn own_v2_dir(mounts: &[Mount], own: &[(String, String)]) -> Option<PathBuf> {
    let (_, path) = own.iter().find(|(c, _)| c.is_empty())?;
    let m = mounts.iter().find(|m| m.fstype == "cgroup2")?;
    Some(dir_of(m, path))
}

/// Our own cgroup's directory in the v1 hierarchy of `controller` (or `name=...`), if mounted.
pub(crate) fn own_v1_dir(
    mounts: &[Mount],
    own: &[(String, String)],
    controller: &str,
) -> Option<PathBuf> {
    let (_, path) = own
        .iter()
        .find(|(c, _)| c.split(',').any(|x| x == controller))?;
    let m = mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller))?;
    Some(dir_of(m, path))
}

/// Find a hierarchy where a child cgroup of ours can get a memory or pids limit. v2 is preferred
/// when it offers both controllers; otherwise v1 where it has them.
pub fn detect() -> Option<CgroupHost> {
    let mounts = mounts();
    let own = own_cgroups();
    let v2 = own_v2_dir(&mounts, &own).and_then(|dir| {
        if !writable_dir(&dir) {
            return None;
        }
        let available = std::fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
        let has = |c: &str| available.split_whitespace().any(|x| x == c);
        let (memory, pids) = (has("memory"), has("pids"));
        (memory || pids).then_some(CgroupHost::V2 { dir, memory, pids })
    });
    if let Some(CgroupHost::V2 {
        memory: true,
        pids: true,
        ..
    }) = &v2
    {
        return v2;
    }
    let v1_dir =
        |controller: &str| own_v1_dir(&mounts, &own, controller).filter(|dir| writable_dir(dir));
    let (memory, pids) = (v1_dir("memory"), v1_dir("pids"));
    if memory.is_some() || pids.is_some() {
        return Some(CgroupHost::V1 { memory, pids });
    }
    v2
}

/// A run's cgroup(s), removed when dropped (once its processes are gone).
#[derive(Debug)]
pub struct RunCgroup {
    version: u8,
    memory_dir: Option<PathBuf>,
    pids_dir: Option<PathBuf>,
    /// Every directory created, for removal.
    created: Vec<PathBuf>,
}

/// What a thread writes into a cgroup's `tasks` or `cgroup.procs` to move itself: `0`, "the writer".
pub const SELF: &str = "0";

/// The file a child of one thread (forked, or cloned without `CLONE_THREAD`, before it starts any)
/// writes [`SELF`] into to join a cgroup of hierarchy `version`: `tasks` on v1, `cgroup.procs` on v2.
///
/// Why: a move of a process (`cgroup.procs`), or of a thread named by its id, takes the kernel's global
/// lock against forks for writing, and that lock's writers wait for an RCU grace period unless another
/// move happened moments before: 4 to 16 ms on this machine after a pause of 50 ms or more, which an
/// agent always makes between two commands (kernel 6.18, 2026-11-26; back-to-back runs never see it).
/// A thread moving itself alone (`0` into v1's `tasks`) cannot exit or exec under the move, so the
/// kernel skips that lock: 40 us. A child of one thread moves whole that way. v2 has no such file
/// outside threaded subtrees: there a child is born in its cgroup (`CLONE_INTO_CGROUP`) where it can be.
pub fn join_file(version: u8) -> &'static str {
    if version == 1 {
        "tasks"
    } else {
        "cgroup.procs"
    }
}

fn write_file(path: &Path, value: &str) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.write_all(value.as_bytes())
}

/// The `key N` value of a flat-keyed cgroup file (`memory.events`, `pids.events`, `memory.oom_control`).
fn keyed(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == key).then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(0)
}

impl RunCgroup {
    /// Create the run's cgroup under `host` named `name`, with the limits set. Returns the cgroup and
    /// the descriptors the child writes itself into ([`join_file`]).
    /// Without limits the cgroup still tracks the run's processes (in the pids hierarchy on v1).
    pub fn create(
        host: &CgroupHost,
        name: &str,
        memory_bytes: Option<u64>,
        processes: Option<u64>,
    ) -> std::io::Result<(RunCgroup, Vec<OwnedFd>)> {
        let mut cg = RunCgroup {
            version: host.version(),
            memory_dir: None,
            pids_dir: None,
            created: Vec::new(),
        };
        let mut dirs: Vec<(PathBuf, bool, bool)> = Vec::new();
        match host {
            CgroupHost::V2 { dir, .. } => {
                dirs.push((dir.join(name), memory_bytes.is_some(), processes.is_some()));
            }
            CgroupHost::V1 { memory, pids } => {
                if let (Some(m), Some(_)) = (memory, memory_bytes) {
                    dirs.push((m.join(name), true, false));
                }
                if let Some(p) = pids
                    .as_ref()
                    .filter(|_| processes.is_some() || dirs.is_empty())
                {
                    dirs.push((p.join(name), false, processes.is_some()));
                }
            }
        }
        let mut procs = Vec::new();
        for parent in dirs.iter().filter_map(|(d, _, _)| d.parent()) {
            sweep_stale(parent);
        }
        for (dir, mem, pids) in dirs {
            std::fs::create_dir(&dir)?;
            cg.created.push(dir.clone());
            if mem {
                let bytes = memory_bytes.expect("memory limit").to_string();
                if cg.version == 2 {
                    write_file(&dir.join("memory.max"), &bytes)?;
                    // Without swap the limit is a real ceiling; hosts without swap lack the file.
                    let _ = write_file(&dir.join("memory.swap.max"), "0");
                } else {
                    write_file(&dir.join("memory.limit_in_bytes"), &bytes)?;
                    let _ = write_file(&dir.join("memory.memsw.limit_in_bytes"), &bytes);
                }
                cg.memory_dir = Some(dir.clone());
            }
            if pids {
                let n = processes.expect("process limit").to_string();
                write_file(&dir.join("pids.max"), &n)?;
                cg.pids_dir = Some(dir.clone());
            }
            let f: File = OpenOptions::new()
                .write(true)
                .open(dir.join(join_file(cg.version)))?;
            procs.push(OwnedFd::from(f));
        }
        Ok((cg, procs))
    }

    /// Processes the kernel's OOM killer ended in this cgroup for exceeding the memory limit.
    pub fn oom_kills(&self) -> u64 {
        let Some(dir) = &self.memory_dir else {
            return 0;
        };
        if self.version == 2 {
            keyed(&dir.join("memory.events"), "oom_kill")
        } else {
            keyed(&dir.join("memory.oom_control"), "oom_kill")
        }
    }

    /// Forks the process limit refused.
    pub fn fork_refusals(&self) -> u64 {
        self.pids_dir
            .as_ref()
            .map(|d| keyed(&d.join("pids.events"), "max"))
            .unwrap_or(0)
    }

    /// On v2, a descriptor of the run's cgroup directory, for a clone to put the child in at birth
    /// (`CLONE_INTO_CGROUP`) instead of its join (see [`join_file`]). A v2 process is in one cgroup, so
    /// a run with a cgroup of its own lives there and not in its tracking cgroup either way.
    pub fn open_v2_dir(&self) -> Option<std::io::Result<OwnedFd>> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = self.created.first().filter(|_| self.version == 2)?;
        Some(
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
                .open(dir)
                .map(OwnedFd::from),
        )
    }

    /// The `cgroup.procs` files listing the run's processes, wherever they went.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.created
            .iter()
            .map(|d| d.join("cgroup.procs"))
            .collect()
    }
}

impl RunCgroup {
    /// Remove the cgroup once the run ended. The last process may still be on its way out when the
    /// run's exit is seen (the kernel empties a cgroup a moment after its members are reaped), so the
    /// removal is retried for a few seconds in the background; a cgroup still holding a process left
    /// running stays until the session is dropped.
    pub fn remove_soon(&self) {
        let dirs = self.created.clone();
        if remove_all(&dirs) {
            return;
        }
        remove_when_empty(dirs);
    }
}

/// Remove `dirs` in the background, retried for a few seconds while the kernel empties them (without
/// an async runtime: one attempt now).
pub(crate) fn remove_when_empty(dirs: Vec<PathBuf>) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        remove_all(&dirs);
        return;
    };
    rt.spawn(async move {
        for _ in 0..60 {
            if remove_all(&dirs) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    });
}

/// Remove the empty cgroups of hosts that are gone (`agent-exec-<pid>-<id>` with no process `<pid>`):
/// a host that exits right after a run cannot wait for its cgroup to empty. Once per parent directory.
pub(crate) fn sweep_stale(parent: &Path) {
    static SWEPT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    if swept.iter().any(|p| p == parent) {
        return;
    }
    swept.push(parent.to_path_buf());
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("agent-exec-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// Remove every directory that still exists; true when none is left.
pub(crate) fn remove_all(dirs: &[PathBuf]) -> bool {
    dirs.iter()
        .all(|d| std::fs::remove_dir(d).is_ok() || !d.exists())
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        remove_all(&self.created);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/end\\"), "/end\\");
    }

    #[test]
    fn keyed_files_are_read_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("memory.events");
        std::fs::write(&f, "low 0\nhigh 0\nmax 4\noom 1\noom_kill 2\n").unwrap();
        assert_eq!(keyed(&f, "oom_kill"), 2);
        assert_eq!(keyed(&f, "max"), 4);
        assert_eq!(keyed(&f, "missing"), 0);
    }

    #[test]
    fn stale_cgroups_of_gone_hosts_are_swept_once() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("agent-exec-999999999-calm-harbor");
        let mine = dir
            .path()
            .join(format!("agent-exec-{}-swift-sage", std::process::id()));
        let other = dir.path().join("unrelated-999999999");
        for d in [&gone, &mine, &other] {
            std::fs::create_dir(d).unwrap();
        }
        sweep_stale(dir.path());
        assert!(!gone.exists());
        assert!(mine.exists() && other.exists());
    }

    #[test]
    fn a_run_cgroup_is_created_limited_and_removed() {
        let host = detect();
        // Not every host lets us create cgroups; sandboxCapabilities reports that.
        if !crate::test_needs::runs_here("cgroup-limits", host.is_some()) {
            return;
        }
        let host = host.expect("checked");
        let name = format!("agent-exec-unit-{}", std::process::id());
        let (cg, procs) = RunCgroup::create(&host, &name, Some(64 << 20), Some(32)).unwrap();
        assert!(!procs.is_empty());
        let pids_dir = cg.pids_dir.clone().unwrap();
        assert_eq!(
            std::fs::read_to_string(pids_dir.join("pids.max"))
                .unwrap()
                .trim(),
            "32"
        );
        assert!(cg
            .procs_files()
            .iter()
            .all(|f| std::fs::read_to_string(f).unwrap().trim().is_empty()));
        assert_eq!(cg.fork_refusals(), 0);
        let created = cg.created.clone();
        drop(procs);
        drop(cg);
        assert!(created.iter().all(|d| !d.exists()));
    }

    /// A run's own v2 cgroup is handed to the clone as a directory to be born in (a v1 run's cgroups
    /// are joined, never born in: `CLONE_INTO_CGROUP` takes v2 only). This machine's v2 hierarchy has
    /// no memory or pids controller, so the cgroup here carries no limit: the birth is what is tested.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_v2_run_cgroup_is_opened_for_the_clone_to_be_born_in() {
        let v2 = own_v2_dir(&mounts(), &own_cgroups()).filter(|d| writable_dir(d));
        if !crate::test_needs::runs_here("cgroup-v2", v2.is_some()) {
            return;
        }
        let host = CgroupHost::V2 {
            dir: v2.expect("checked"),
            memory: false,
            pids: false,
        };
        let name = format!("agent-exec-unit-born-{}", std::process::id());
        let (cg, _joins) = RunCgroup::create(&host, &name, None, None).unwrap();
        let dir = cg.open_v2_dir().expect("a v2 cgroup").unwrap();
        use std::os::fd::AsFd;
        let (out, _) = crate::spawn::clone3::run_sh_in(dir.as_fd(), "cat /proc/self/cgroup", "/")
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(out.trim_end().ends_with(&name), "{out}");

        if let Some(v1) = detect().filter(|h| h.version() == 1) {
            let v1_name = format!("agent-exec-unit-born-v1-{}", std::process::id());
            let (v1_cg, _) = RunCgroup::create(&v1, &v1_name, None, None).unwrap();
            assert!(v1_cg.open_v2_dir().is_none());
        }
        assert!(removed_once_empty(cg));
    }

    /// A forked child (one thread) joins by writing itself into the join file, and what it starts is
    /// born inside and counted. On v1 that file is `tasks`: a revert to `cgroup.procs` would still join,
    /// but every run would again wait out an RCU grace period after a pause (the benchmark's
    /// "after a pause" rows measure that; this test keeps the file the kernel serves without it).
    #[test]
    fn a_child_of_one_thread_joins_through_the_join_file_and_its_forks_are_counted() {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let host = detect().filter(|h| h.has_pids());
        if !crate::test_needs::runs_here("cgroup-limits", host.is_some()) {
            return;
        }
        let host = host.expect("checked");
        let name = format!("agent-exec-unit-join-{}", std::process::id());
        let (cg, joins) = RunCgroup::create(&host, &name, None, Some(4)).unwrap();
        let fds: Vec<i32> = joins.iter().map(|f| f.as_raw_fd()).collect();
        // v1: a thread's own file, which the kernel moves its writer by without the global lock.
        let expected = if host.version() == 1 {
            "tasks"
        } else {
            "cgroup.procs"
        };
        for fd in &fds {
            let path = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
            assert!(path.ends_with(expected), "{}", path.display());
        }
        // Five background sleeps against a limit of four: the shell itself is one, so the fourth fork
        // is refused. The shell lists its own cgroups first.
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("cat /proc/self/cgroup; for i in 1 2 3 4 5; do sleep 30 >/dev/null 2>&1 & done")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        // SAFETY: only write(2) runs between fork and exec, on descriptors opened before the fork.
        unsafe {
            cmd.pre_exec(move || {
                for &fd in &fds {
                    crate::spawn::child_setup::join_cgroup(fd)?;
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        // The sleeps that did start are the cgroup's members: end them before asserting.
        for file in cg.procs_files() {
            for pid in std::fs::read_to_string(&file).unwrap_or_default().lines() {
                if let Ok(pid) = pid.trim().parse::<i32>() {
                    // SAFETY: signalling a member of the test's own cgroup.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let pids_line = text
            .lines()
            .find(|l| l.contains(":pids:") || l.starts_with("0::"))
            .unwrap_or_default();
        assert!(pids_line.ends_with(&name), "{text}");
        assert!(cg.fork_refusals() >= 1, "{text}");
        drop(joins);
        assert!(removed_once_empty(cg));
    }

    /// Drop `cg` and wait (10 s at most) for its directories to go: the kernel empties a cgroup a
    /// moment after its last member is reaped. Whether they are gone.
    fn removed_once_empty(cg: RunCgroup) -> bool {
        let created = cg.created.clone();
        drop(cg);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !remove_all(&created) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        created.iter().all(|d| !d.exists())
    }
}
