//! The run's own PID namespace: a small init that reaps and dies with the host, and a relay that
//! gives the host the shell's exit status.
//!
//! After `unshare(CLONE_NEWPID)` the forked child (the *relay*, the process the host spawned) stays in
//! the host's namespace; only its children enter the new one. So it forks twice:
//!
//! - the **init** (pid 1 inside): reaps the orphans of the run (background jobs outlive their shell as
//!   they do without a namespace) and exits once the relay is gone and nothing is left, or at once
//!   when the host dies. When it exits the kernel kills every process in the namespace, daemons that
//!   left the run's session and dropped its marker included.
//! - the **shell** (pid 2 inside): returns to the caller, finishes entering the sandbox and execs.
//!
//! The relay then waits for the shell and exits the way it did (code or signal), so the host waits on
//! the process it spawned, as for any run. A namespace init has no default action for the signals a
//! host sends (only SIGKILL reaches it), so the kill path's SIGKILL to the run's group ends the
//! namespace, and its SIGTERM goes to the command.
//!
//! The host's death is seen through a pipe, not `PR_SET_PDEATHSIG`: the death signal fires when the
//! *thread* that forked exits (a pool thread can retire while the run lives), and the init's parent is
//! the relay, which exits with the shell. Every init holds the read end of one pipe whose write end
//! only the host holds (close-on-exec, and closed in every child that does not exec): when the host
//! dies, the read end reports a hang-up.
//!
//! Only system calls run here, in a single-threaded forked child; the forks are raw `clone` calls so
//! that no `pthread_atfork` handler of the host (whose locks another thread may have held at the
//! first fork) runs.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The name the init shows in `ps` (`comm`, and its command line inside the namespace).
pub const INIT_NAME: &str = "agent-exec-init";

/// The read end of the host's lifeline pipe, made on first use; `None` if no pipe could be made.
pub fn lifeline() -> Option<RawFd> {
    static LIFELINE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();
    LIFELINE
        .get_or_init(|| nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok())
        .as_ref()
        .map(|(read, _write)| read.as_raw_fd())
}

/// Where the host's own command line lies in its memory (`/proc/self/stat` fields 48 and 49), so the
/// init, a copy of the host, can overwrite its copy and show its own name there instead of the
/// agent's command line (readable by any process in the namespace through `/proc/1/cmdline`).
pub fn host_arg_range() -> Option<(usize, usize)> {
    static RANGE: OnceLock<Option<(usize, usize)>> = OnceLock::new();
    *RANGE.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The command name (field 2) may hold spaces and parentheses: count fields after its end.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        // `rest` starts at field 3.
        let start: usize = fields.get(48 - 3)?.parse().ok()?;
        let end: usize = fields.get(49 - 3)?.parse().ok()?;
        (start != 0 && end > start).then_some((start, end))
    })
}

/// Is `pid` (in this process's namespace) the first process of a PID namespace below ours, with the
/// init's name? Its `NSpid` ends in 1 there; a command cannot take pid 1 of its own namespace.
pub fn is_namespace_init(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    let nested_pid_one = field("NSpid:")
        .map(|v| v.split_whitespace().collect::<Vec<_>>())
        .is_some_and(|ids| ids.len() > 1 && ids.last() == Some(&"1"));
    nested_pid_one && field("Name:") == Some(INIT_NAME)
}

/// A fork with no `atfork` handlers: the child shares nothing with the parent.
fn raw_fork() -> libc::pid_t {
    // SAFETY: clone with only the exit signal and no stack is fork(2); the child runs on a copy of
    // this stack. The argument order after `flags` differs between architectures; all are zero.
    unsafe {
        libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0) as libc::pid_t
    }
}

/// Close every descriptor but `keep` (sorted, ascending).
fn close_all_but(keep: &[RawFd]) {
    let mut from: u32 = 0;
    for &fd in keep {
        let fd = fd as u32;
        if fd > from {
            close_range(from, fd - 1);
        }
        from = fd + 1;
    }
    close_range(from, u32::MAX);
}

fn close_range(first: u32, last: u32) {
    // SAFETY: close_range on our own table; before Linux 5.9 it fails and we close one by one.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, last, 0) == 0 {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as u32
        } else {
            1024
        };
        for fd in first..=last.min(max) {
            libc::close(fd as i32);
        }
    }
}

/// Split the calling child (already in the new PID namespace's parent role) into relay, init and shell.
/// Returns only in the shell, with 0; the relay and the init never return. An error is the errno of
/// the fork that failed (nothing was left behind: an init without a relay exits by itself).
pub fn split(
    lifeline: RawFd,
    arg_range: Option<(usize, usize)>,
    leave_with_shell: bool,
) -> Result<(), i32> {
    let mut alive = [0 as RawFd; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(alive.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(errno());
    }
    let (alive_read, alive_write) = (alive[0], alive[1]);
    match raw_fork() {
        -1 => return Err(errno()),
        0 => init(lifeline, alive_read, arg_range, leave_with_shell),
        _ => {}
    }
    // SAFETY: our copy of the read end; the init holds its own.
    unsafe { libc::close(alive_read) };
    let shell = raw_fork();
    match shell {
        -1 => Err(errno()),
        // The shell: the relay's end of the pipe closes at exec.
        0 => Ok(()),
        _ => relay(shell, alive_write),
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Wait for the shell and exit as it did. Holds nothing the command uses, so its output reaches its
/// end with the command's.
fn relay(shell: libc::pid_t, alive_write: RawFd) -> ! {
    close_all_but(&[alive_write]);
    // SAFETY: signal dispositions and a wait of our own child; `_exit` and `kill` of ourselves.
    unsafe {
        // The kill path signals the whole group; the relay must outlive the shell's own handling of
        // those signals to report how it ended.
        for sig in [
            libc::SIGTERM,
            libc::SIGINT,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGALRM,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let _ = super::privileges::drop_all();
        let mut status = 0;
        loop {
            let r = libc::waitpid(shell, &mut status, 0);
            if r == shell {
                break;
            }
            if r == -1 && errno() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            // Die of the same signal, without a core dump of this copy of the host.
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(127)
    }
}

/// The namespace's init: reap whatever is reparented to it; exit when the host is gone, or when the
/// relay is gone and no process is left (or at once when the relay is gone, with `leave_with_shell`).
fn init(
    lifeline: RawFd,
    alive_read: RawFd,
    arg_range: Option<(usize, usize)>,
    leave_with_shell: bool,
) -> ! {
    let mut keep = [lifeline, alive_read];
    keep.sort_unstable();
    close_all_but(&keep);
    // SAFETY: system calls on our own process; the argument area is this process's private copy of
    // the host's, written within its bounds.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, c"agent-exec-init".as_ptr(), 0, 0, 0);
        if let Some((start, end)) = arg_range {
            let area = std::slice::from_raw_parts_mut(start as *mut u8, end - start);
            area.fill(0);
            let name = INIT_NAME.as_bytes();
            let n = name.len().min(area.len().saturating_sub(1));
            area[..n].copy_from_slice(&name[..n]);
        }
        let _ = super::privileges::drop_all();
        let mut chld: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut chld);
        libc::sigaddset(&mut chld, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &chld, std::ptr::null_mut());
        let sfd = libc::signalfd(-1, &chld, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC);
        if sfd < 0 {
            libc::_exit(1);
        }
        let mut relay_gone = false;
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: lifeline,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: sfd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if relay_gone { -1 } else { alive_read },
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            if libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) < 0 {
                if errno() == libc::EINTR {
                    continue;
                }
                libc::_exit(1);
            }
            if fds[0].revents != 0 {
                // The host is gone: leaving takes everything in the namespace with us.
                libc::_exit(0);
            }
            if fds[2].revents != 0 {
                relay_gone = true;
                if leave_with_shell {
                    // The command is over: nothing of it lives on.
                    libc::_exit(0);
                }
            }
            if fds[1].revents != 0 {
                let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
                while libc::read(sfd, info.as_mut_ptr().cast(), info.len()) > 0 {}
            }
            loop {
                let r = libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG);
                if r > 0 {
                    continue;
                }
                if r < 0 && errno() == libc::ECHILD && relay_gone {
                    libc::_exit(0);
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    /// Run `sh -c script` split as a sandboxed run is on the forking way (relay, init, shell), in new
    /// mount and PID namespaces (root only: a normal user would need a user namespace too). `None`
    /// only when not root; as root every failure to run it fails the test (it never passes empty).
    fn run_split(
        script: &str,
        leave_with_shell: bool,
    ) -> Option<(std::process::ExitStatus, String)> {
        // SAFETY: geteuid cannot fail.
        if !crate::test_needs::runs_here("root", unsafe { libc::geteuid() } == 0) {
            return None;
        }
        let lifeline = super::lifeline().expect("a root test process has a lifeline");
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", script])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        // SAFETY: system calls only, in the forked child.
        unsafe {
            cmd.pre_exec(move || {
                if libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if super::super::child::bind(None, c"/", libc::MS_REC | libc::MS_SLAVE) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                super::split(lifeline, None, leave_with_shell)
                    .map_err(std::io::Error::from_raw_os_error)?;
                super::super::child::ChildPlan::mount_proc(c"")
            });
        }
        let out = cmd
            .output()
            .expect("the split run starts (namespaces as root)");
        Some((
            out.status,
            String::from_utf8_lossy(&out.stdout).into_owned(),
        ))
    }

    #[test]
    fn the_relay_exits_as_the_shell_did_and_the_shell_is_pid_2() {
        let Some((status, out)) = run_split(
            "echo $$; ps -e -o pid=,comm= | tr -s ' ' | sort -n; exit 3",
            false,
        ) else {
            return;
        };
        assert_eq!(status.code(), Some(3), "{out}");
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("2"), "{out}");
        // The namespace holds its init, the shell and what the shell started, nothing of the host.
        assert!(out.contains("1 agent-exec-init"), "{out}");
        assert!(
            !out.lines()
                .any(|l| l.contains("cargo") || l.contains("agent_exec")),
            "{out}"
        );
        let Some((status, _)) = run_split("kill -TERM $$", false) else {
            return;
        };
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }

    #[test]
    fn a_background_job_outlives_its_shell_under_the_init() {
        // The job writes after its shell has gone: it ran on, adopted by the init.
        let dir = std::env::temp_dir().join(format!("agent-exec-split-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mark = dir.join("mark");
        let script = format!(
            "(sleep 0.3; cat /proc/1/comm > {m}; exec awk '/^PPid/ {{ print $2 }}' /proc/self/status >> {m}) & exit 0",
            m = mark.display()
        );
        let Some((status, _)) = run_split(&script, false) else {
            let _ = std::fs::remove_dir_all(&dir);
            return;
        };
        assert_eq!(status.code(), Some(0));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let text = loop {
            let text = std::fs::read_to_string(&mark).unwrap_or_default();
            if text.lines().count() == 2 || std::time::Instant::now() > deadline {
                break text;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let _ = std::fs::remove_dir_all(&dir);
        // Its parent, once the shell was gone, is the namespace's init.
        assert_eq!(text, "agent-exec-init\n1\n");
    }

    #[test]
    fn with_leave_with_shell_nothing_outlives_the_shell() {
        let dir = std::env::temp_dir().join(format!("agent-exec-leave-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mark = dir.join("mark");
        // The job would write after its shell has gone; the init leaves with the shell and the kernel
        // ends the job first. The job holds the run's stdout, so the output is read to its end only
        // once the job is gone, written or killed: no waiting on time.
        let script = format!("(sleep 0.5; echo ran > {m}) & exit 0", m = mark.display());
        let Some((status, _)) = run_split(&script, true) else {
            let _ = std::fs::remove_dir_all(&dir);
            return;
        };
        assert_eq!(status.code(), Some(0));
        let wrote = mark.exists();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(!wrote, "a job of the run outlived its shell");
    }

    #[test]
    fn the_host_argument_area_is_found() {
        let (start, end) = super::host_arg_range().expect("/proc/self/stat has the argument area");
        assert!(end > start);
        // The area holds this process's argv[0], NUL-terminated.
        let argv0 = std::env::args_os().next().unwrap();
        // SAFETY: the range is this process's own argument area, mapped and readable.
        let area = unsafe { std::slice::from_raw_parts(start as *const u8, end - start) };
        use std::os::unix::ffi::OsStrExt;
        assert!(
            area.starts_with(argv0.as_bytes()),
            "{:?}",
            &area[..area.len().min(64)]
        );
    }

    #[test]
    fn the_lifeline_is_one_pipe_for_the_process() {
        let a = super::lifeline().expect("a pipe");
        assert_eq!(super::lifeline(), Some(a));
    }
}
