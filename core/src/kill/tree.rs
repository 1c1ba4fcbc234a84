//! Whole-tree kill: SIGTERM to every process of the run, a grace period, then SIGKILL, and a report of
//! anything that survived.
//!
//! A run's processes are found on Linux by its tracking cgroup where it has one (every descendant is born
//! in it: reading it costs the run's own size, not the machine's); otherwise by process group and
//! session (the child leads both), and by the session marker in `/proc/<pid>/environ`, which also finds
//! descendants that called `setsid` or double-forked out of the group, at the price of a walk of every
//! process on the machine. Zombies count as gone: they hold nothing and their
//! parent (or init) reaps them. Elsewhere only the process group can be signalled.

use std::time::{Duration, Instant};

use super::{KillReport, KILL_SETTLE};

/// Which processes belong to a run.
#[derive(Debug, Clone)]
pub struct KillTarget {
    /// The process group (and session) the run's child leads.
    pub pgid: i32,
    /// The value of the session marker variable the run's processes inherited.
    pub marker: Option<String>,
    /// `cgroup.procs` files of the run's cgroup (sandboxed runs): members are the run's processes
    /// even when they cleared the marker and left the group.
    pub cgroup_procs: Vec<std::path::PathBuf>,
}

const POLL: Duration = Duration::from_millis(20);
/// Between the two walks that must both find nothing before a kill says nothing is left.
const CONFIRM_PAUSE: Duration = Duration::from_millis(3);

impl KillTarget {
    /// Live (non-zombie) processes of the run, the group leader included.
    pub fn live_processes(&self) -> Vec<u32> {
        live_processes(self)
    }

    /// Cheap check (one syscall): does any process, zombies included, remain in the group?
    pub fn group_exists(&self) -> bool {
        nix::sys::signal::killpg(nix::unistd::Pid::from_raw(self.pgid), None).is_ok()
    }

    /// Cheap check: does the group still exist, or does the run's cgroup still hold a process other
    /// than those in `except`? (The init of a run's PID namespace leaves a moment after the rest and
    /// must not send every run's end through a walk of `/proc`.)
    pub fn may_have_members_besides(&self, except: &[u32]) -> bool {
        self.group_exists() || self.cgroup_members().iter().any(|p| !except.contains(p))
    }

    /// The processes listed in the run's cgroups, wherever they went.
    fn cgroup_members(&self) -> Vec<u32> {
        self.cgroup_procs
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .flat_map(|t| {
                t.lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect()
    }

    /// SIGKILL the group and every live process of the run at once, no grace: the host is going away,
    /// or a run must end before it was ever handed over.
    pub fn kill_now(&self) {
        use nix::sys::signal::Signal;
        signal_group(self.pgid, Signal::SIGKILL);
        for pid in self.live_processes() {
            signal_process(pid, Signal::SIGKILL);
        }
    }

    pub fn is_alive(&self) -> bool {
        !self.live_processes().is_empty()
    }

    fn signal_all(&self, signal: nix::sys::signal::Signal) -> Vec<u32> {
        signal_group(self.pgid, signal);
        let live = self.live_processes();
        for pid in &live {
            signal_process(*pid, signal);
        }
        live
    }

    /// SIGTERM, wait up to `grace` for everything to end, then SIGKILL what is left.
    ///
    /// A walk of `/proc` reads every process on the machine, so it is not what the wait polls: the
    /// first signal of each round finds the run's processes with one (shared by the kills in flight),
    /// and "nothing left" is confirmed by one made then. In between, every 20 ms, the wait looks only
    /// at the run's own: the processes found, its cgroups' members, and whether each is still the run's.
    pub async fn kill_tree(&self, grace: Duration) -> KillReport {
        use nix::sys::signal::Signal;
        let mut report = KillReport::default();
        let mut known = self.signal_all(Signal::SIGTERM);
        if known.is_empty() && !self.still_alive_now(&mut known).await {
            return report;
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            tokio::time::sleep(POLL).await;
            if !self.own_alive(&mut known) && !self.still_alive_now(&mut known).await {
                return report;
            }
        }
        report.escalated = true;
        let deadline = Instant::now() + KILL_SETTLE;
        known.extend(self.signal_all(Signal::SIGKILL));
        loop {
            if !self.own_alive(&mut known) && !self.still_alive_now(&mut known).await {
                return report;
            }
            if Instant::now() >= deadline {
                break;
            }
            // Again each round, to the run's own: one may have forked since.
            self.signal_own(Signal::SIGKILL, &known);
            tokio::time::sleep(POLL).await;
        }
        report.survivors = live_processes_now(self);
        report
    }

    /// Cheap: is a process of the run alive, among those found (`known`, which gains the cgroups'
    /// current members and loses those gone)? Zombies and processes that are no longer the run's (a pid
    /// reused) do not count. No walk of `/proc`.
    fn own_alive(&self, known: &mut Vec<u32>) -> bool {
        for pid in self.cgroup_members() {
            if !known.contains(&pid) {
                known.push(pid);
            }
        }
        let members = self.cgroup_members();
        known.retain(|&pid| still_ours(self, pid, &members));
        !known.is_empty()
    }

    /// A walk of `/proc` made now, for the moment the cheap check finds nothing (the shared walk may
    /// predate a fork, and "nothing left" must never be concluded from a stale view): what it finds (a
    /// process forked out of sight since the first walk) joins `known`. "Nothing" is believed only
    /// from two walks `CONFIRM_PAUSE` apart: a process caught in the middle of an exec may not show
    /// its marker yet (`procs::read_marker` waits for most of those moments, not every one).
    async fn still_alive_now(&self, known: &mut Vec<u32>) -> bool {
        let mut found = live_processes_now(self);
        if found.is_empty() {
            tokio::time::sleep(CONFIRM_PAUSE).await;
            found = live_processes_now(self);
        }
        let alive = !found.is_empty();
        for pid in found {
            if !known.contains(&pid) {
                known.push(pid);
            }
        }
        alive
    }

    /// Signal the group and every process in `known` that is still the run's.
    fn signal_own(&self, signal: nix::sys::signal::Signal, known: &[u32]) {
        signal_group(self.pgid, signal);
        let members = self.cgroup_members();
        for &pid in known {
            if still_ours(self, pid, &members) {
                signal_process(pid, signal);
            }
        }
    }
}

/// Signal one process of a run, never one that is not a run's: pid 0 and negative pids are whole groups
/// (0 is the caller's own), 1 is init, and the host itself is never a run's process, whatever a
/// stale cgroup file or a defect upstream puts in the list.
fn signal_process(pid: u32, signal: nix::sys::signal::Signal) {
    if may_signal_process(pid, std::process::id()) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal);
    }
}

/// Whether `pid` may be a run's process for a host whose pid is `host`. Apart from the signalling, so
/// it can be checked without sending anything (init ignores what it has no handler for: a wrong answer
/// would go unseen).
fn may_signal_process(pid: u32, host: u32) -> bool {
    pid > 1 && pid <= i32::MAX as u32 && pid != host
}

/// Signal a run's process group, never the host's own (nor group 0 or 1, which `killpg` reads as the
/// caller's group and init's).
fn signal_group(pgid: i32, signal: nix::sys::signal::Signal) {
    if may_signal_group(pgid, nix::unistd::getpgrp().as_raw()) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
    }
}

/// Whether `pgid` may be a run's group for a host in group `own`.
fn may_signal_group(pgid: i32, own: i32) -> bool {
    pgid > 1 && pgid != own
}

/// Whether `pid` is alive (not a zombie) and still one of the run's: in its group or session, in its
/// cgroup (`members`), or carrying its marker. A pid the kernel gave to another process since is not.
#[cfg(target_os = "linux")]
fn still_ours(target: &KillTarget, pid: u32, members: &[u32]) -> bool {
    let Some(stat) = procs::read_stat(pid) else {
        return false;
    };
    if !stat.is_alive() {
        return false;
    }
    stat.pgrp == target.pgid
        || stat.session == target.pgid
        || members.contains(&pid)
        || target
            .marker
            .as_deref()
            .is_some_and(|m| procs::marker_with(pid, &stat).as_deref() == Some(m))
}

/// A run its cgroup tracks is known by the cgroup alone: every descendant is born in it, whatever it
/// does with the marker, its group or its session; only root can move a process out. Its live members
/// (zombies aside), or `None` where the run has no readable cgroup and the walk must find it.
#[cfg(target_os = "linux")]
fn cgroup_tracked(target: &KillTarget) -> Option<Vec<u32>> {
    let mut read_any = false;
    let mut live = Vec::new();
    for file in &target.cgroup_procs {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        read_any = true;
        for pid in text.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
            let alive = procs::read_stat(pid).is_some_and(|s| s.is_alive());
            if alive && !live.contains(&pid) {
                live.push(pid);
            }
        }
    }
    read_any.then_some(live)
}

#[cfg(target_os = "linux")]
fn live_processes_now(target: &KillTarget) -> Vec<u32> {
    if let Some(live) = cgroup_tracked(target) {
        return live;
    }
    match procs::fresh() {
        Some(snapshot) => select(target, &snapshot),
        None => group_fallback(target),
    }
}

#[cfg(target_os = "linux")]
fn live_processes(target: &KillTarget) -> Vec<u32> {
    if let Some(live) = cgroup_tracked(target) {
        return live;
    }
    let Some(snapshot) = procs::snapshot() else {
        return group_fallback(target);
    };
    select(target, &snapshot)
}

#[cfg(target_os = "linux")]
fn select(target: &KillTarget, snapshot: &[procs::Proc]) -> Vec<u32> {
    let members = target.cgroup_members();
    snapshot
        .iter()
        .filter(|p| {
            p.pgrp == target.pgid
                || p.session == target.pgid
                || (target.marker.is_some() && p.marker.as_deref() == target.marker.as_deref())
                || members.contains(&p.pid)
        })
        .map(|p| p.pid)
        .collect()
}

/// One walk of `/proc` serves every kill in flight: with a thousand sessions ending at once, each
/// reading every process's environment would cost a million reads per round.
#[cfg(target_os = "linux")]
mod procs {
    use std::sync::{Arc, LazyLock, Mutex};
    use std::time::{Duration, Instant};

    use crate::kill::SESSION_MARKER_VAR;

    /// How long a walk is reused. Short against the 20 ms poll of a kill, long enough to be shared.
    pub const FRESH_FOR: Duration = Duration::from_millis(10);

    pub struct Proc {
        pub pid: u32,
        pub pgrp: i32,
        pub session: i32,
        /// The session marker the process inherited, if any.
        pub marker: Option<String>,
    }

    type Cached = Option<(Instant, Arc<Vec<Proc>>)>;
    static CACHE: LazyLock<Mutex<Cached>> = LazyLock::new(|| Mutex::new(None));

    /// A walk made now, which also refreshes the shared one.
    pub fn fresh() -> Option<Arc<Vec<Proc>>> {
        let procs = Arc::new(walk()?);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        *cache = Some((Instant::now(), procs.clone()));
        Some(procs)
    }

    /// Live (non-zombie) processes, our own excepted.
    pub fn snapshot() -> Option<Arc<Vec<Proc>>> {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, procs)) = cache.as_ref() {
            if at.elapsed() < FRESH_FOR {
                return Some(procs.clone());
            }
        }
        let procs = Arc::new(walk()?);
        *cache = Some((Instant::now(), procs.clone()));
        Some(procs)
    }

    fn walk() -> Option<Vec<Proc>> {
        let dir = std::fs::read_dir("/proc").ok()?;
        let me = std::process::id();
        let prefix = format!("{SESSION_MARKER_VAR}=");
        let mut out = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Some(stat) = read_stat(pid) else {
                continue;
            };
            if !stat.is_alive() {
                continue;
            }
            out.push(Proc {
                pid,
                pgrp: stat.pgrp,
                session: stat.session,
                marker: read_marker(pid, prefix.as_bytes(), &stat),
            });
        }
        Some(out)
    }

    /// The session marker `pid` inherited, if any (the tests' view; the kill reads `stat` first).
    #[cfg(test)]
    pub fn marker_of(pid: u32) -> Option<String> {
        marker_with(pid, &read_stat(pid)?)
    }

    /// The session marker of `pid`, whose `stat` was just read.
    pub fn marker_with(pid: u32, stat: &Stat) -> Option<String> {
        read_marker(pid, format!("{SESSION_MARKER_VAR}=").as_bytes(), stat)
    }

    /// What a kill needs of `/proc/<pid>/stat`.
    pub struct Stat {
        pub state: char,
        pub pgrp: i32,
        pub session: i32,
        /// The kernel's `PF_*` flags.
        flags: u64,
        /// When the process started (clock ticks after boot): with the pid, names one process.
        start_time: u64,
    }

    impl Stat {
        /// Neither a zombie nor dead.
        pub fn is_alive(&self) -> bool {
            self.state != 'Z' && self.state != 'X'
        }

        /// A kernel thread: no environment, ever.
        pub fn is_kernel_thread(&self) -> bool {
            self.flags & PF_KTHREAD != 0
        }
    }

    pub fn read_stat(pid: u32) -> Option<Stat> {
        parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// The fields a kill needs of one `/proc/<pid>/stat` line.
    pub fn parse_stat(raw: &str) -> Option<Stat> {
        // The command name may contain spaces and parentheses: fields start after the last ')'.
        // Then: state, ppid, pgrp, session, tty_nr, tpgid, flags, ..., starttime (the 20th).
        let fields: Vec<&str> = raw.get(raw.rfind(')')? + 2..)?.split(' ').collect();
        Some(Stat {
            state: fields.first()?.chars().next()?,
            pgrp: fields.get(2)?.parse().ok()?,
            session: fields.get(3)?.parse().ok()?,
            flags: fields.get(6)?.parse().ok()?,
            start_time: fields.get(19)?.parse().ok()?,
        })
    }

    /// How often, and how far apart, an empty environment is read again while its process is
    /// between the two halves of an `execve`.
    pub(super) const SETTLE_TRIES: u32 = 50;
    const SETTLE_PAUSE: Duration = Duration::from_micros(100);
    /// One read of an environment takes this much at once (most are a few KiB).
    const ENVIRON_READ: usize = 128 * 1024;
    /// How many failed reads in a row are waited out (an exec's are a few; pid 1's are for good).
    pub(super) const FAILED_READ_TRIES: u32 = 30;
    /// `PF_KTHREAD` in `/proc/<pid>/stat`'s flags: kernel threads have no environment at all.
    const PF_KTHREAD: u64 = 0x0020_0000;

    /// The marker in `pid`'s environment. A process in the middle of an `execve` shows an empty
    /// environment and an empty command line for a moment (its new memory is in place, its new stack
    /// not yet), or fails the read outright (ESRCH, EACCES): in a shell loop that re-execs itself, a
    /// fifth of the reads. Read then, a run's process would look like no run's, and a kill would
    /// conclude that nothing is left while it finishes its exec. So such a read is made again: an
    /// empty one while the command line is empty too (a kernel thread has neither, for good; `env -i`
    /// leaves a process with a command line and no environment, for good), a failed one a few times
    /// (pid 1 may be unreadable for good, even to root), and never for a process that is gone or is
    /// another user's (unreadable for good unless we are root).
    fn read_marker(pid: u32, prefix: &[u8], stat: &Stat) -> Option<String> {
        if stat.is_kernel_thread() {
            return None;
        }
        let environ = format!("/proc/{pid}/environ");
        let env = settle(
            || look(pid, &environ),
            || may_retry_failed_read(pid, stat),
            || remember_unreadable(pid, stat),
            || std::thread::sleep(SETTLE_PAUSE),
        )?;
        env.split(|b| *b == 0)
            .find_map(|var| var.strip_prefix(prefix))
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// Whether a failed read of `pid`'s environment is worth another try: the process is ours to
    /// read and not known to be unreadable for good.
    pub(super) fn may_retry_failed_read(pid: u32, stat: &Stat) -> bool {
        may_settle(pid) && !unreadable_for_good(pid, stat)
    }

    /// What one look at a process's environment found.
    #[derive(Debug)]
    pub(super) enum Look {
        /// Its environment (empty for a process that has none, `env -i`'s).
        Environ(Vec<u8>),
        /// Empty, with an empty command line: between the two halves of an `execve`.
        MidExec,
        /// The read failed (ESRCH, EACCES: an exec's moment, or for good).
        Failed,
        /// Gone.
        Gone,
    }

    fn look(pid: u32, environ: &str) -> Look {
        match read_environ(environ) {
            Ok(env) if !env.is_empty() => Look::Environ(env),
            Ok(_) => match std::fs::read(format!("/proc/{pid}/cmdline")) {
                Err(_) => Look::Gone,
                Ok(cmdline) if cmdline.is_empty() => Look::MidExec,
                // Its exec may have finished between the two reads: once more.
                Ok(_) => read_environ(environ).map_or(Look::Gone, Look::Environ),
            },
            Err(_) => Look::Failed,
        }
    }

    /// The rules of waiting (see `read_marker`), apart from `/proc` so they are tested with scripted
    /// looks: an environment or a process gone ends it; a moment mid-exec is waited out; a failed read
    /// is tried again while `may_retry_failure` (the process is ours to read and not known to be
    /// unreadable for good), up to `FAILED_READ_TRIES` times, and then `remembered` unreadable.
    pub(super) fn settle(
        mut look: impl FnMut() -> Look,
        may_retry_failure: impl Fn() -> bool,
        remember: impl FnOnce(),
        pause: impl Fn(),
    ) -> Option<Vec<u8>> {
        let mut failures = 0;
        for _ in 0..SETTLE_TRIES {
            match look() {
                Look::Environ(env) => return Some(env),
                Look::Gone => return None,
                Look::MidExec => {}
                Look::Failed if !may_retry_failure() => return None,
                Look::Failed => {
                    failures += 1;
                    if failures > FAILED_READ_TRIES {
                        remember();
                        return None;
                    }
                }
            }
            pause();
        }
        None
    }

    /// A process's environment in one `read`: the kernel pins its memory for the length of the call,
    /// where reads of a few bytes each (what `fs::read` makes of a file with no size) can straddle an
    /// exec and end early, a truncated environment that lacks the marker at its end.
    fn read_environ(path: &str) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        thread_local! {
            // One buffer per thread, reused: a walk reads every process's environment.
            static BUF: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; ENVIRON_READ]);
        }
        let mut file = std::fs::File::open(path)?;
        let (len, full) = BUF.with_borrow_mut(|buf| -> std::io::Result<(usize, Vec<u8>)> {
            let n = file.read(buf)?;
            Ok((n, buf[..n].to_vec()))
        })?;
        let mut env = full;
        // Larger than one read: the rest as it comes (rare: an environment over 128 KiB).
        if len == ENVIRON_READ {
            file.read_to_end(&mut env)?;
        }
        Ok(env)
    }

    /// Processes (pid and start time) whose environment failed every read, as pid 1's can even for
    /// root: not waited out again, so a walk pays that wait once per such process, not every time.
    /// Bounded: a few exist on a machine; the oldest entries go first.
    static UNREADABLE: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());

    pub(super) fn unreadable_for_good(pid: u32, stat: &Stat) -> bool {
        let known = UNREADABLE.lock().unwrap_or_else(|e| e.into_inner());
        known.contains(&(pid, stat.start_time))
    }

    pub(super) fn remember_unreadable(pid: u32, stat: &Stat) {
        let mut known = UNREADABLE.lock().unwrap_or_else(|e| e.into_inner());
        if !known.contains(&(pid, stat.start_time)) {
            if known.len() >= 64 {
                known.remove(0);
            }
            known.push((pid, stat.start_time));
        }
    }

    /// Whether a failed read of `pid`'s environment may succeed in a moment: it still exists, and it
    /// is ours to read (our own user's, or we are root).
    pub(super) fn may_settle(pid: u32) -> bool {
        use std::os::unix::fs::MetadataExt;
        let me = nix::unistd::geteuid();
        std::fs::metadata(format!("/proc/{pid}"))
            .is_ok_and(|m| me.is_root() || m.uid() == me.as_raw())
    }
}

/// Off Linux there is no `/proc` to walk: a run is its process group. (A module of its own so the
/// mutation runs here, which cannot build it, leave it out by name: `scripts/mutants.sh`.)
#[cfg(not(target_os = "linux"))]
mod without_proc {
    use super::{group_fallback, KillTarget};

    pub fn still_ours(target: &KillTarget, pid: u32, _members: &[u32]) -> bool {
        nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(pid as i32)))
            .is_ok_and(|g| g.as_raw() == target.pgid)
    }

    pub fn live_processes_now(target: &KillTarget) -> Vec<u32> {
        group_fallback(target)
    }

    pub fn live_processes(target: &KillTarget) -> Vec<u32> {
        group_fallback(target)
    }
}
#[cfg(not(target_os = "linux"))]
use without_proc::{live_processes, live_processes_now, still_ours};

/// Without `/proc`: the group is alive while signal 0 reaches it (zombies included).
#[allow(dead_code)]
fn group_fallback(target: &KillTarget) -> Vec<u32> {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    if killpg(Pid::from_raw(target.pgid), None).is_ok() {
        vec![target.pgid as u32]
    } else {
        Vec::new()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn spawn_group(script: &str, marker: &str) -> std::process::Child {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(script)
            .env(crate::kill::SESSION_MARKER_VAR, marker);
        // The run's child leads its own session and group, as spawn makes it.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        cmd.spawn().unwrap()
    }

    #[test]
    fn a_run_its_cgroup_tracks_is_known_by_the_cgroup_alone_zombies_aside() {
        // A stand-in for cgroup.procs, naming a live process outside the target's group and marker,
        // a zombie, and a pid no process has.
        let mut live = Command::new("sleep").arg("30").spawn().unwrap();
        let mut dead = Command::new("true").spawn().unwrap();
        // `dead` exits and stays a zombie until waited for.
        let deadline = Instant::now() + Duration::from_secs(5);
        while procs::read_stat(dead.id()).is_some_and(|s| s.state != 'Z')
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cgroup.procs");
        std::fs::write(&file, format!("{}\n{}\n4194999\n", live.id(), dead.id())).unwrap();
        let target = KillTarget {
            pgid: i32::MAX - 7,
            marker: None,
            cgroup_procs: vec![file],
        };
        assert_eq!(target.live_processes(), vec![live.id()]);
        // An unreadable cgroup (removed) leaves the walk to find the run: nothing here.
        let gone = KillTarget {
            cgroup_procs: vec![dir.path().join("missing")],
            ..target.clone()
        };
        assert!(!gone.live_processes().contains(&live.id()));
        live.kill().unwrap();
        live.wait().unwrap();
        dead.wait().unwrap();
    }

    async fn wait_until(mut f: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !f() {
            assert!(Instant::now() < deadline, "condition not met in time");
            tokio::time::sleep(POLL).await;
        }
    }

    /// Ends every process carrying its marker when dropped, so a test that fails (or a mutant of the
    /// code under test) leaves nothing running.
    struct KillOnDrop(String);

    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            for pid in with_marker(&self.0) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }

    /// A marker no other test or run has.
    fn marker(name: &str) -> (String, KillOnDrop) {
        let m = format!("test-{name}-{}", std::process::id());
        (m.clone(), KillOnDrop(m))
    }

    /// Reap a test's own child, which the kill must have ended: a bounded wait, not a hang, when it
    /// did not.
    fn reap(child: &mut std::process::Child) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the child {} outlived the kill", child.id());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether `pid` is a live (non-zombie) process: what the world says, not the kill's report.
    fn alive(pid: u32) -> bool {
        procs::read_stat(pid).is_some_and(|s| s.is_alive())
    }

    /// The pids of processes whose marker is `marker` (the world's view, independent of the target).
    fn with_marker(marker: &str) -> Vec<u32> {
        procs::fresh()
            .unwrap()
            .iter()
            .filter(|p| p.marker.as_deref() == Some(marker))
            .map(|p| p.pid)
            .collect()
    }

    /// Whether a process with `marker` is `sleep <seconds>` (its exec done: `setsid sleep N` before
    /// its own exec does not count).
    fn running(marker: &str, seconds: &str) -> bool {
        with_marker(marker).iter().any(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                let words: Vec<&[u8]> = c.split(|b| *b == 0).filter(|w| !w.is_empty()).collect();
                words.len() == 2 && words[0].ends_with(b"sleep") && words[1] == seconds.as_bytes()
            })
        })
    }

    /// Whether `pid`'s signal mask line `field` (SigIgn: ignored, SigCgt: caught) holds SIGTERM: the
    /// shell has installed its trap.
    fn handles_sigterm(pid: u32, field: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map(|s| {
                s.lines().any(|l| {
                    l.strip_prefix(field)
                        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                        .is_some_and(|mask| mask & (1 << (libc::SIGTERM - 1)) != 0)
                })
            })
            .unwrap_or(false)
    }

    fn target_of(child: &std::process::Child, marker: &str) -> KillTarget {
        KillTarget {
            pgid: child.id() as i32,
            marker: Some(marker.to_string()),
            cgroup_procs: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_tree_that_obeys_sigterm_ends_without_the_hard_kill() {
        let (marker, _cleanup) = marker("obeys");
        let mut child = spawn_group("sleep 310 & setsid sleep 311 & wait", &marker);
        let target = target_of(&child, &marker);
        // Both sleeps exec'd, not merely forked: a process between fork and exec (or mid-exec, its
        // environment briefly unreadable) would make the two walks below see different sets.
        wait_until(|| running(&marker, "310") && running(&marker, "311")).await;
        let pids = with_marker(&marker);
        assert_eq!(pids.len(), 3, "{pids:?}");
        // Every process was found and signalled by the first round.
        let mut signalled = target.signal_all(nix::sys::signal::Signal::SIGCONT);
        signalled.sort_unstable();
        let mut expected = pids.clone();
        expected.sort_unstable();
        assert_eq!(signalled, expected);
        // A grace far longer than SIGTERM needs: the kill ends as soon as the tree is gone, without
        // escalating (a kill that waited the grace out would escalate).
        let report = target.kill_tree(Duration::from_secs(30)).await;
        // The kill returns once nothing is left: checked at once, not after a wait.
        for pid in &pids {
            assert!(!alive(*pid), "{pid} outlived the kill");
        }
        reap(&mut child);
        assert!(!report.escalated, "{report:?}");
        assert!(report.survivors.is_empty(), "{report:?}");
        // The group's last zombies are reaped by their new parent, not by us.
        wait_until(|| !target.group_exists()).await;
    }

    #[tokio::test]
    async fn a_process_forked_out_of_sight_during_the_grace_is_found_and_killed() {
        // On SIGTERM the shell starts, after a moment, a new session's process (marker inherited, SIGTERM
        // ignored) and exits: the first round's walk predates it, so only the walk made when the known
        // ones are gone finds it, and only the hard kill ends it.
        let (marker, _cleanup) = marker("late");
        let mut child = spawn_group(
            "trap 'sleep 0.2; trap \"\" TERM; setsid sleep 312 & exit 0' TERM; while :; do sleep 0.05; done",
            &marker,
        );
        let target = target_of(&child, &marker);
        wait_until(|| handles_sigterm(child.id(), "SigCgt:")).await;
        // A grace well past the trap's 0.2 s, so the late process exists before the hard kill.
        let report = target.kill_tree(Duration::from_secs(2)).await;
        reap(&mut child);
        let left = with_marker(&marker);
        assert!(left.is_empty(), "left behind: {left:?} ({report:?})");
        assert!(report.escalated, "{report:?}");
        assert!(report.survivors.is_empty(), "{report:?}");
    }

    #[tokio::test]
    async fn kill_now_ends_every_process_at_once_even_those_ignoring_sigterm() {
        let (marker, _cleanup) = marker("now");
        let mut child = spawn_group(
            "trap '' TERM; setsid sh -c 'trap \"\" TERM; sleep 313' & sleep 314 & wait",
            &marker,
        );
        let target = target_of(&child, &marker);
        // The whole tree first, both sleeps included: kill_now is one round, and a process forked
        // while it runs is the next round's (kill_tree's) to find.
        wait_until(|| running(&marker, "313") && running(&marker, "314")).await;
        let pids = with_marker(&marker);
        target.kill_now();
        reap(&mut child);
        wait_until(|| pids.iter().all(|&p| !alive(p))).await;
        assert!(live_processes_now(&target).is_empty());
    }

    #[test]
    fn what_belongs_to_a_run_group_session_cgroup_or_marker_and_nothing_else() {
        let (marker, _cleanup) = marker("ours");
        let (other, _other_cleanup) = super::tests::marker("other-run");
        // In the run's group.
        let mut in_group = spawn_group("exec sleep 315", &marker);
        let group_target = KillTarget {
            pgid: in_group.id() as i32,
            marker: None,
            cgroup_procs: Vec::new(),
        };
        // Outside any group of the run, no marker: known only by a cgroup listing it.
        let mut stranger = spawn_group("exec sleep 316", &other);
        let dir = tempfile::tempdir().unwrap();
        let procs_file = dir.path().join("cgroup.procs");
        std::fs::write(&procs_file, format!("{}\n", stranger.id())).unwrap();
        // Until each has exec'd: before that, /proc shows the test process's own environment (no
        // marker) and its group (the setsid may not have happened yet).
        let deadline = Instant::now() + Duration::from_secs(5);
        let execed = |pid: u32, m: &str| {
            procs::marker_of(pid).as_deref() == Some(m)
                && procs::read_stat(pid).is_some_and(|s| s.pgrp == pid as i32)
        };
        while !(execed(in_group.id(), &marker) && execed(stranger.id(), &other)) {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(still_ours(&group_target, in_group.id(), &[]));
        assert!(!still_ours(&group_target, stranger.id(), &[]));
        assert!(still_ours(&group_target, stranger.id(), &[stranger.id()]));
        // Known by the marker alone (another group and session).
        let marker_target = KillTarget {
            pgid: i32::MAX - 11,
            marker: Some(other.clone()),
            cgroup_procs: Vec::new(),
        };
        assert!(still_ours(&marker_target, stranger.id(), &[]));
        assert!(!still_ours(&marker_target, in_group.id(), &[]));
        assert_eq!(live_processes_now(&marker_target), vec![stranger.id()]);
        // A marker that merely starts like the run's is another run's.
        let prefix_target = KillTarget {
            marker: Some(other[..other.len() - 1].to_string()),
            ..marker_target.clone()
        };
        assert!(!still_ours(&prefix_target, stranger.id(), &[]));
        // The group exists while its leader lives; the cgroup's members count unless excepted.
        assert!(group_target.group_exists());
        let cgroup_target = KillTarget {
            pgid: i32::MAX - 13,
            marker: None,
            cgroup_procs: vec![procs_file.clone()],
        };
        assert!(!cgroup_target.group_exists());
        assert_eq!(cgroup_target.cgroup_members(), vec![stranger.id()]);
        assert!(cgroup_target.may_have_members_besides(&[]));
        assert!(!cgroup_target.may_have_members_besides(&[stranger.id()]));
        assert!(group_target.may_have_members_besides(&[in_group.id()]));
        // A zombie is not the run's any more, and neither is a pid nobody has.
        in_group.kill().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while alive(in_group.id()) {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!still_ours(&group_target, in_group.id(), &[in_group.id()]));
        assert!(live_processes_now(&group_target).is_empty());
        in_group.wait().unwrap();
        assert!(!group_target.group_exists());
        assert!(!group_target.may_have_members_besides(&[]));
        assert!(!still_ours(&group_target, 4_194_999, &[4_194_999]));
        stranger.kill().unwrap();
        stranger.wait().unwrap();
    }

    #[tokio::test]
    async fn a_member_known_only_by_its_cgroup_is_killed() {
        // It left the group and cleared the marker; the cgroup (here a stand-in file) still lists it.
        let (marker, _cleanup) = marker("cg");
        let (cleared, _cleared_cleanup) = super::tests::marker("cleared");
        let mut leader = spawn_group("sleep 317", &marker);
        let mut runaway = spawn_group("trap '' TERM; while :; do sleep 0.05; done", &cleared);
        let dir = tempfile::tempdir().unwrap();
        let procs_file = dir.path().join("cgroup.procs");
        std::fs::write(&procs_file, format!("{}\n{}\n", leader.id(), runaway.id())).unwrap();
        let target = KillTarget {
            pgid: leader.id() as i32,
            marker: Some(marker),
            cgroup_procs: vec![procs_file],
        };
        wait_until(|| alive(leader.id()) && handles_sigterm(runaway.id(), "SigIgn:")).await;
        let report = target.kill_tree(Duration::from_millis(200)).await;
        reap(&mut leader);
        reap(&mut runaway);
        assert!(report.escalated, "the runaway ignores SIGTERM: {report:?}");
        assert!(report.survivors.is_empty(), "{report:?}");
    }

    #[tokio::test]
    async fn a_target_that_names_the_host_init_or_group_zero_signals_none_of_them() {
        // What a stale or corrupted list could hold: the host itself, group 0 (the caller's own group
        // to killpg), init. Were any signalled, this test process would not see the end of the test.
        let dir = tempfile::tempdir().unwrap();
        let procs_file = dir.path().join("cgroup.procs");
        std::fs::write(&procs_file, format!("0\n1\n{}\n", std::process::id())).unwrap();
        for pgid in [0, 1, nix::unistd::getpgrp().as_raw()] {
            let target = KillTarget {
                pgid,
                marker: None,
                cgroup_procs: vec![procs_file.clone()],
            };
            target.kill_now();
            let report = target.kill_tree(Duration::from_millis(50)).await;
            assert!(
                report.escalated,
                "the host is still here, so something 'survived'"
            );
        }
        assert!(alive(std::process::id()));
    }

    #[test]
    fn a_process_in_the_middle_of_an_exec_keeps_its_marker() {
        // A shell that re-execs itself without end spends a good part of its time between the two
        // halves of an execve, when its environment reads empty: every read must still find the
        // marker, and a kill's "nothing left" must never come from one of those moments.
        let (marker, _cleanup) = marker("reexec");
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("again.sh");
        std::fs::write(&script, "#!/bin/sh\nexec /bin/sh \"$0\"\n").unwrap();
        let mut child = std::process::Command::new("/bin/sh")
            .arg(&script)
            .env(crate::kill::SESSION_MARKER_VAR, &marker)
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut missed = 0;
        for _ in 0..3000 {
            if procs::marker_of(pid).as_deref() != Some(marker.as_str()) {
                missed += 1;
            }
        }
        // A process with no environment for good, and a kernel thread (kthreadd, where the host's
        // pid namespace shows it), read as none without waiting out the retries.
        let mut bare = std::process::Command::new("/bin/sleep")
            .arg("30")
            .env_clear()
            .spawn()
            .unwrap();
        wait_for_exec(bare.id(), "sleep");
        let started = Instant::now();
        assert_eq!(procs::marker_of(bare.id()), None);
        if procs::read_stat(2).is_some_and(|s| s.is_kernel_thread()) {
            assert_eq!(procs::marker_of(2), None);
        }
        assert!(
            started.elapsed() < Duration::from_millis(4),
            "{:?}",
            started.elapsed()
        );
        for c in [&mut child, &mut bare] {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Read as `fs::read` reads (small reads that can straddle an exec) and without the wait for an
        // exec to finish, about 150 of 3000 miss here; in one read but without the wait, 30 to 40;
        // with both, none in every run seen (a few allowed for a read that one exec ends and the next
        // begins during: this loop does nothing else; the kill's second walk covers those).
        assert!(
            missed <= 3,
            "{missed} of 3000 reads found no marker mid-exec"
        );
    }

    /// Wait until `pid` runs `name` (its exec done).
    fn wait_for_exec(pid: u32, name: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim() != name)
            .unwrap_or(true)
        {
            assert!(Instant::now() < deadline, "{pid} never ran {name}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_process_of_the_runs_session_alone_is_the_runs() {
        // A job a shell of the run put in a group of its own (as job control does), with the marker
        // cleared: neither the run's group, its cgroup nor its marker names it; its session does.
        let (marker, _cleanup) = marker("session");
        let mut leader = spawn_group(
            "env -u AGENT_EXEC_SESSION python3 -c 'import os; os.setpgid(0, 0); os.execvp(\"sleep\", [\"sleep\", \"317\"])' & wait",
            &marker,
        );
        let sid = leader.id() as i32;
        let target = KillTarget {
            pgid: sid,
            marker: Some(marker.clone()),
            cgroup_procs: Vec::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let job = loop {
            let job = procs::fresh().unwrap().iter().find_map(|p| {
                let exe = std::fs::read_to_string(format!("/proc/{}/comm", p.pid)).ok()?;
                (p.session == sid && p.pgrp != sid && exe.trim() == "sleep").then_some(p.pid)
            });
            if let Some(job) = job {
                break job;
            }
            assert!(Instant::now() < deadline, "the job never started");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(procs::marker_of(job), None);
        assert!(still_ours(&target, job, &[]));
        assert!(live_processes_now(&target).contains(&job));
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(job as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        reap(&mut leader);
    }

    /// A kernel thread is told by its `PF_KTHREAD` flag (its environment, always empty, is then not
    /// waited on as an exec's would be); a command name with spaces and parentheses does not shift
    /// the fields.
    #[test]
    fn stat_lines_give_state_group_session_and_the_kernel_thread_flag() {
        let line = |name: &str, flags: u64| {
            format!("42 ({name}) S 2 0 0 0 -1 {flags} 0 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0")
        };
        let kthread = procs::parse_stat(&line("kworker/0:1", 0x0020_8040)).unwrap();
        assert!(kthread.is_kernel_thread());
        assert!(kthread.is_alive());
        let user = procs::parse_stat(&line("a (b) c", 0x0040_0100)).unwrap();
        assert!(!user.is_kernel_thread());
        assert_eq!((user.pgrp, user.session), (0, 0));
        let zombie = procs::parse_stat(&line("sh", 0).replace(") S ", ") Z ")).unwrap();
        assert!(!zombie.is_alive());
        assert!(procs::parse_stat("42 (sh S 1").is_none());
    }

    /// The walk of `/proc` is shared while it is fresh (a thousand kills in flight make one walk, not
    /// a thousand) and made again once it is not (a process started since is in the next one).
    #[test]
    fn a_walk_is_shared_while_fresh_and_made_again_once_stale() {
        // Other tests refresh the shared walk too: a pair of snapshots is shared unless one came
        // between, so a few pairs are tried and one shared pair is enough.
        let shared = (0..50).any(|_| {
            let a = procs::snapshot().unwrap();
            let b = procs::snapshot().unwrap();
            std::sync::Arc::ptr_eq(&a, &b)
        });
        assert!(shared, "no two snapshots in a row were the same walk");
        let before = procs::snapshot().unwrap();
        let child = ChildGuard(Command::new("sleep").arg("30").spawn().unwrap());
        let pid = child.0.id();
        std::thread::sleep(procs::FRESH_FOR + Duration::from_millis(5));
        let after = procs::snapshot().unwrap();
        drop(child);
        assert!(!before.iter().any(|p| p.pid == pid));
        assert!(
            after.iter().any(|p| p.pid == pid),
            "a walk older than FRESH_FOR was reused"
        );
    }

    /// The waiting rules of a marker read, with scripted looks: how many looks each sequence takes,
    /// and what it ends with.
    #[test]
    fn a_marker_read_waits_out_an_exec_and_failed_reads_of_its_own_processes_only() {
        use procs::{settle, Look, FAILED_READ_TRIES, SETTLE_TRIES};
        let run = |script: Vec<Look>, ours: bool| {
            let script = std::cell::RefCell::new(script.into_iter());
            let (looks, remembered) = (std::cell::Cell::new(0), std::cell::Cell::new(false));
            let found = settle(
                || {
                    looks.set(looks.get() + 1);
                    script.borrow_mut().next().unwrap_or(Look::Failed)
                },
                || ours,
                || remembered.set(true),
                || {},
            );
            (found, looks.get(), remembered.get())
        };
        let env = || Look::Environ(b"A=1".to_vec());
        // A moment mid-exec and a few failed reads (an exec's) are waited out.
        let mut script: Vec<Look> = (0..5).map(|_| Look::Failed).collect();
        script.extend([Look::MidExec, Look::MidExec, env()]);
        assert_eq!(run(script, true), (Some(b"A=1".to_vec()), 8, false));
        // As many failures as are waited out, and the read after them counts.
        let mut script: Vec<Look> = (0..FAILED_READ_TRIES).map(|_| Look::Failed).collect();
        script.push(env());
        assert_eq!(
            run(script, true).0.as_deref(),
            Some(&b"A=1"[..]),
            "the last waited-out failure was not tried again"
        );
        // One more and it is given up and remembered.
        assert_eq!(
            run(Vec::new(), true),
            (None, FAILED_READ_TRIES as usize + 1, true)
        );
        // A process not ours to read (or known unreadable) is not waited on at all.
        assert_eq!(run(vec![Look::Failed, env()], false), (None, 1, false));
        // Gone is gone; an environment that stays mid-exec is given up after SETTLE_TRIES looks.
        assert_eq!(run(vec![Look::Gone, env()], true), (None, 1, false));
        let script: Vec<Look> = (0..SETTLE_TRIES + 1).map(|_| Look::MidExec).collect();
        assert_eq!(run(script, true), (None, SETTLE_TRIES as usize, false));
    }

    /// Processes unreadable for good are remembered by pid and start time (a reused pid is another
    /// process), and the memory is bounded, oldest first out.
    #[test]
    fn unreadable_processes_are_remembered_by_pid_and_start_time_within_a_bound() {
        let stat = |start: u64| {
            procs::parse_stat(&format!(
                "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {start} 0 0"
            ))
            .unwrap()
        };
        // Pids no process here has (above the kernel's pid_max of 4194304).
        let base = 4_300_000_u32;
        assert!(!procs::unreadable_for_good(base, &stat(7)));
        procs::remember_unreadable(base, &stat(7));
        assert!(procs::unreadable_for_good(base, &stat(7)));
        assert!(!procs::unreadable_for_good(base, &stat(8)), "a reused pid");
        procs::remember_unreadable(base, &stat(7));
        for i in 1..=64 {
            procs::remember_unreadable(base + i, &stat(7));
        }
        assert!(
            !procs::unreadable_for_good(base, &stat(7)),
            "the oldest is forgotten past the bound"
        );
        assert!(procs::unreadable_for_good(base + 64, &stat(7)));
    }

    /// A failed read may settle only for a process that exists and is ours to read: our own user's,
    /// or anyone's when we are root; one remembered as unreadable for good is not tried again.
    #[test]
    fn only_processes_we_may_read_are_waited_on() {
        let me = std::process::id();
        let my_stat = procs::read_stat(me).unwrap();
        assert!(procs::may_retry_failed_read(me, &my_stat));
        assert!(!procs::may_retry_failed_read(4_300_001, &my_stat));
        let mut child = ChildGuard(Command::new("sleep").arg("30").spawn().unwrap());
        let pid = child.0.id();
        let stat = procs::read_stat(pid).unwrap();
        assert!(procs::may_retry_failed_read(pid, &stat));
        procs::remember_unreadable(pid, &stat);
        assert!(!procs::may_retry_failed_read(pid, &stat), "remembered");
        let _ = child.0.kill();
        assert!(procs::may_settle(std::process::id()));
        assert!(!procs::may_settle(4_300_000), "a pid no process has");
        let root = nix::unistd::geteuid().is_root();
        let mut other = Command::new("sleep");
        other.arg("30");
        if root {
            // SAFETY: setuid between fork and exec, in the child only.
            unsafe {
                other.pre_exec(|| {
                    nix::unistd::setuid(nix::unistd::Uid::from_raw(65534)).map_err(Into::into)
                });
            }
        }
        let mut other = ChildGuard(other.spawn().unwrap());
        let pid = other.0.id();
        // Wait until the child runs as the other user (its /proc entry says so after the setuid).
        let deadline = Instant::now() + Duration::from_secs(5);
        while root && procs::read_stat(pid).is_some() && !owned_by(pid, 65534) {
            assert!(
                Instant::now() < deadline,
                "the child never became uid 65534"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(procs::may_settle(pid), "ours, or anyone's as root");
        let _ = other.0.kill();
        // Not root: a process of root's (pid 1 outside a PID namespace of our own) is not ours.
        if !root {
            if let Some(p) = (1..64).find(|&p| owned_by(p, 0)) {
                assert!(!procs::may_settle(p), "root's process {p}");
            }
        }
    }

    /// A child process ended (killed and reaped) when the test ends, passing or not.
    struct ChildGuard(std::process::Child);

    impl Drop for ChildGuard {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn owned_by(pid: u32, uid: u32) -> bool {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == uid)
    }

    /// An environment larger than one read (128 KiB) is read whole: the marker, last, is found.
    #[test]
    fn a_marker_after_a_large_environment_is_found() {
        let big = "x".repeat(100 * 1024);
        let mut cmd = Command::new("sleep");
        // Named to come first: Command passes its variables in the order of their names.
        cmd.arg("30")
            .env_clear()
            .env("AA_BIG1", &big)
            .env("AA_BIG2", &big);
        cmd.env(crate::kill::SESSION_MARKER_VAR, "after-the-big-ones");
        let child = ChildGuard(cmd.spawn().unwrap());
        let pid = child.0.id();
        wait_for_exec(pid, "sleep");
        assert_eq!(procs::marker_of(pid).as_deref(), Some("after-the-big-ones"));
    }

    /// Where `/proc` cannot be read (and off Linux), a run is its group: alive, as its leader's pid,
    /// while signal 0 reaches the group, and nothing once the group is gone.
    #[test]
    fn without_proc_a_run_is_its_group_while_signal_zero_reaches_it() {
        let mut child = spawn_group("exec sleep 30", "group-fallback-test");
        let target = KillTarget {
            pgid: child.id() as i32,
            marker: None,
            cgroup_procs: Vec::new(),
        };
        let alive = group_fallback(&target);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(alive, vec![child.id()]);
        assert_eq!(group_fallback(&target), Vec::<u32>::new());
    }

    #[test]
    fn only_a_runs_own_pids_and_groups_may_be_signalled() {
        let host = 4242;
        for pid in [0, 1, host, i32::MAX as u32 + 1, u32::MAX] {
            assert!(!may_signal_process(pid, host), "{pid}");
        }
        for pid in [2, 4241, 4243, i32::MAX as u32] {
            assert!(may_signal_process(pid, host), "{pid}");
        }
        for pgid in [i32::MIN, -1, 0, 1, 77] {
            assert!(!may_signal_group(pgid, 77), "{pgid}");
        }
        for pgid in [2, 76, 78, i32::MAX] {
            assert!(may_signal_group(pgid, 77), "{pgid}");
        }
    }

    #[tokio::test]
    async fn kills_group_and_setsid_escapees() {
        let (marker, _cleanup) = marker("group");
        let mut child = spawn_group("sleep 300 & setsid sleep 301 & wait", &marker);
        let target = KillTarget {
            pgid: child.id() as i32,
            marker: Some(marker),
            cgroup_procs: Vec::new(),
        };
        wait_until(|| target.live_processes().len() >= 3).await;
        let report = target.kill_tree(Duration::from_millis(1000)).await;
        reap(&mut child);
        assert!(report.survivors.is_empty(), "{report:?}");
        assert!(!target.is_alive());
    }

    #[tokio::test]
    async fn escalates_to_sigkill_when_sigterm_is_ignored() {
        let (marker, _cleanup) = marker("ign");
        let mut child = spawn_group(
            "trap '' TERM; echo ready; while :; do sleep 0.05; done",
            &marker,
        );
        let target = KillTarget {
            pgid: child.id() as i32,
            marker: Some(marker),
            cgroup_procs: Vec::new(),
        };
        wait_until(|| target.is_alive()).await;
        // Give the shell a moment to install its trap: poll its signal mask in /proc.
        wait_until(|| handles_sigterm(child.id(), "SigIgn:")).await;
        let pids = with_marker(target.marker.as_deref().unwrap());
        let report = target.kill_tree(Duration::from_millis(200)).await;
        // After the hard kill too, the kill returns only once nothing is left.
        for pid in &pids {
            assert!(!alive(*pid), "{pid} outlived the kill");
        }
        reap(&mut child);
        assert!(report.escalated);
        assert!(report.survivors.is_empty());
    }
}
