//! Spawning a sandboxed run into PID, IPC and UTS namespaces of its own without copying the host.
//!
//! The forking way (`sandbox::reaper::split`) costs three copies of the host's page tables per run
//! (the forked child, then its init and its shell), about 1.5 ms each for a Node process, and its init
//! keeps a copy-on-write image of the host for as long as the run's background jobs live. Here nothing
//! is copied: three `clone3` calls in the vfork style (`CLONE_VM`), each on a stack of its own.
//!
//! 1. The host clones the *outer* child (`CLONE_VM | CLONE_VFORK | CLONE_FILES`; the calling thread
//!    waits until it exits). It joins the cgroups, enters the namespaces and mounts (the sandbox's
//!    `ChildPlan::enter`), then clones the two processes of the new PID namespace, both children of
//!    the host (`CLONE_PARENT`) with their pidfds in the host's descriptor table (shared), and exits:
//! 2. the **init** (pid 1; `CLONE_VM`, no vfork): reaps the run's orphans, and leaves once the shell is
//!    gone and nothing is left, or at once when the host dies (its lifeline pipe hangs up); the kernel
//!    then kills every process in the namespace. It shares the host's memory, so it runs on raw system
//!    calls only (no libc: its thread-local state is the host thread's) and touches nothing but its own
//!    stack and arguments, which the host keeps until it has reaped it;
//! 3. the **shell** (pid 2; `CLONE_VM | CLONE_VFORK`): mounts the namespace's `/proc`, finishes
//!    entering the sandbox (`ChildPlan::finish`) and execs. The host waits on it directly: its exit
//!    status needs no relay.
//!
//! Signals stay blocked from the first clone on, so no host handler ever runs in these processes; the
//! shell resets every disposition and unblocks them right before exec. x86_64 only, like `clone3`'s
//! entry; elsewhere (and where `clone3` is refused) the run takes the forking way.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

use super::clone3::{
    clone_with_signals_blocked, raw_clone3, CloneArgs, SpawnError, CLONE_INTO_CGROUP,
};
use crate::sandbox::child::ChildPlan;
use crate::sandbox::Handed;

/// Whether this build can spawn this way.
pub fn supported() -> bool {
    super::clone3::supported()
}

/// What the three processes need, prepared by the host.
pub struct Plan<'a> {
    pub program: &'a CStr,
    /// NUL-terminated arrays of NUL-terminated strings, as execve takes them.
    pub argv: *const *const c_char,
    pub envp: *const *const c_char,
    /// Descriptors that become the shell's 0, 1 and 2 (each above 2).
    pub stdio: [BorrowedFd<'a>; 3],
    /// fd 0 is a terminal the shell takes as its controlling terminal.
    pub terminal: bool,
    pub sandbox: &'a ChildPlan,
    /// The host's lifeline (read end), which the init watches.
    pub lifeline: RawFd,
    /// How the run enters its tracking cgroup, before the namespace's processes exist.
    pub tracking: Option<CgroupEntry>,
}

/// How the outer child enters the run's tracking cgroup.
#[derive(Debug, Clone, Copy)]
pub enum CgroupEntry {
    /// Born in it: `CLONE_INTO_CGROUP` with the cgroup's directory (v2). Free, where writing
    /// `cgroup.procs` costs 4 to 16 ms after a pause (the kernel waits for an RCU grace period to move
    /// a process; see [`crate::sandbox::cgroup::join_file`]).
    BornIn(RawFd),
    /// Writes `0` into this join file (v1's `tasks`, or v2's `cgroup.procs` where the clone into a
    /// cgroup was refused).
    Join(RawFd),
}

/// The shell, the namespace's init, and the seccomp listener of the shell's filter (with the proxy's
/// socket, where the run has one).
pub struct Spawned {
    pub pid: libc::pid_t,
    pub pidfd: OwnedFd,
    pub init: Init,
    pub listener: Handed,
}

/// The run's init, a child of the host that shares its memory: its pidfd, and the memory it runs on,
/// which must outlive it. [`Init::reap_when_done`] frees the memory once the init is reaped.
pub struct Init {
    /// Its pid as the host sees it.
    pid: u32,
    pidfd: OwnedFd,
    memory: Box<InitMemory>,
}

const STACK_BYTES: usize = 128 * 1024;
const INIT_STACK_BYTES: usize = 64 * 1024;

/// What the init reads (and the futex word it waits on), then its stack.
#[repr(C)]
struct InitMemory {
    lifeline: c_int,
    /// Non-zero: leave (taking the namespace) as soon as the shell is gone.
    leave_with_shell: c_int,
    /// 0 until the outer child has made the shell; then 1, or 2 when there is no shell to wait for.
    shell_ready: AtomicU32,
    stack: [u128; INIT_STACK_BYTES / 16],
}

/// Shared by the outer child and the shell (which runs while the outer one waits); read by the host
/// once the outer child has exited.
#[repr(C)]
struct OuterArgs {
    /// The host's `Plan`.
    plan: *const c_void,
    init: *mut InitMemory,
    shell_stack: *mut u128,
    init_pid: c_int,
    init_pidfd: c_int,
    shell_pid: c_int,
    shell_pidfd: c_int,
    /// The filter's listener, which the shell made in the host's descriptor table (shared).
    listener: c_int,
    /// The proxy's listening socket, made there too (-1: none).
    proxy_listener: c_int,
    /// The errno (step-encoded for the sandbox's steps) of the step that failed in a child.
    error: c_int,
    /// The errno of a `clone3` the kernel refused.
    clone_error: c_int,
}

/// Start the run. A failed step comes back as [`SpawnError::Child`] with its errno (the sandbox's steps
/// encoded as `sandbox::child::decode` reads them); a refused `clone3` as [`SpawnError::Clone`]. On
/// any error nothing is left running.
pub fn spawn(plan: &Plan<'_>) -> Result<Spawned, SpawnError> {
    if !supported() {
        return Err(SpawnError::Clone(io::Error::from_raw_os_error(
            libc::ENOSYS,
        )));
    }
    if plan.stdio.iter().any(|fd| fd.as_raw_fd() <= 2) {
        return Err(SpawnError::Clone(io::Error::from_raw_os_error(
            libc::EINVAL,
        )));
    }
    let mut init = Box::new(InitMemory {
        lifeline: plan.lifeline,
        leave_with_shell: plan
            .sandbox
            .process_namespaces()
            .is_some_and(|n| n.leave_with_shell) as c_int,
        shell_ready: AtomicU32::new(0),
        stack: [0; INIT_STACK_BYTES / 16],
    });
    let mut outer_stack = vec![0u128; STACK_BYTES / 16];
    let mut shell_stack = vec![0u128; STACK_BYTES / 16];
    let mut outer = OuterArgs {
        // The host thread waits (vfork) while the children read the plan: it outlives their use.
        plan: plan as *const Plan<'_> as *const c_void,
        init: &mut *init,
        shell_stack: shell_stack.as_mut_ptr(),
        init_pid: 0,
        init_pidfd: -1,
        shell_pid: 0,
        shell_pidfd: -1,
        listener: -1,
        proxy_listener: -1,
        error: 0,
        clone_error: 0,
    };
    let mut args = CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES) as u64,
        exit_signal: libc::SIGCHLD as u64,
        stack: outer_stack.as_mut_ptr() as u64,
        stack_size: STACK_BYTES as u64,
        ..CloneArgs::default()
    };
    if let Some(CgroupEntry::BornIn(dir)) = plan.tracking {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = dir as u64;
    }
    // SAFETY: the outer child runs on its own stack and reads `outer` (and the plan) while this thread
    // waits (CLONE_VFORK); it has exited when the clone returns here.
    let ret = unsafe {
        clone_with_signals_blocked(
            &mut args,
            outer_main,
            &mut outer as *mut OuterArgs as *mut c_void,
        )
    };
    drop(outer_stack);
    drop(shell_stack);
    // The outer child, which entered any namespaces made ahead for the run, is gone (or never was):
    // a retry of this run makes its own, and the run's namespaces now live only as long as it does.
    plan.sandbox.release_premade();
    if ret < 0 {
        return Err(SpawnError::Clone(io::Error::from_raw_os_error(-ret as i32)));
    }
    // SAFETY: reaping the outer child, which has exited; reading what it and the shell wrote, after
    // they stopped writing (the outer child exited after the shell exec'd or exited).
    let outer = unsafe {
        let mut status = 0;
        libc::waitpid(ret as libc::pid_t, &mut status, libc::__WALL);
        std::ptr::read_volatile(&outer)
    };
    // SAFETY: each pidfd, where the kernel made one, is a fresh descriptor owned by nobody else.
    let own = |fd: c_int| (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
    let init_pidfd = own(outer.init_pidfd);
    let shell_pidfd = own(outer.shell_pidfd);
    let listener = own(outer.listener);
    let proxy = own(outer.proxy_listener);
    let failed = outer.clone_error != 0 || outer.error != 0;
    match (failed, init_pidfd, shell_pidfd, listener) {
        (false, Some(init_pidfd), Some(pidfd), Some(listener)) => Ok(Spawned {
            pid: outer.shell_pid,
            pidfd,
            init: Init {
                pid: outer.init_pid as u32,
                pidfd: init_pidfd,
                memory: init,
            },
            listener: Handed { listener, proxy },
        }),
        (_, init_pidfd, shell_pidfd, _) => {
            if let Some(fd) = &shell_pidfd {
                reap(fd);
            }
            if let Some(fd) = init_pidfd {
                // The init may still wait for its word: ending it ends the namespace.
                kill(&fd);
                reap(&fd);
                drop(init);
            } else {
                drop(init);
            }
            Err(if outer.clone_error != 0 {
                SpawnError::Clone(io::Error::from_raw_os_error(outer.clone_error))
            } else if outer.error != 0 {
                SpawnError::Child(io::Error::from_raw_os_error(outer.error))
            } else {
                SpawnError::Clone(io::Error::from_raw_os_error(libc::EIO))
            })
        }
    }
}

/// What a namespaced run leaves the host besides the shell: the init, and the filter's listener (and
/// the proxy's socket).
pub struct NamespacedRun {
    pub init: Init,
    pub listener: Handed,
}

/// A piped run (see [`spawn`]): the shell with our ends of its pipes, and the namespace's init.
#[allow(clippy::too_many_arguments)]
pub fn spawn_pipes(
    program: &std::path::Path,
    args: &[&std::ffi::OsStr],
    env: &std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    stdin_pipe: bool,
    sandbox: &ChildPlan,
    lifeline: RawFd,
    tracking: Option<CgroupEntry>,
) -> Result<(super::posix::PosixChild, NamespacedRun), SpawnError> {
    use std::os::fd::AsFd;
    let strings = super::posix::ExecStrings::new(program, args, env).map_err(SpawnError::Child)?;
    let pipes = super::posix::StdioPipes::new(stdin_pipe).map_err(SpawnError::Clone)?;
    let spawned = spawn(&Plan {
        program: &strings.program,
        argv: strings.argv.as_ptr() as *const *const c_char,
        envp: strings.envp.as_ptr() as *const *const c_char,
        stdio: [pipes.in_r.as_fd(), pipes.out_w.as_fd(), pipes.err_w.as_fd()],
        terminal: false,
        sandbox,
        lifeline,
        tracking,
    })?;
    let Spawned {
        pid,
        pidfd,
        init,
        listener,
    } = spawned;
    let waiter = pidfd.try_clone();
    match super::posix::PosixChild::new(
        pid,
        Some(pidfd),
        pipes.in_w,
        pipes.out_r.into(),
        pipes.err_r.into(),
    ) {
        Ok(child) => Ok((child, NamespacedRun { init, listener })),
        Err(e) => {
            abandon(init, waiter);
            Err(SpawnError::Clone(e))
        }
    }
}

/// A run on a terminal (see [`spawn`]): the shell, whose controlling terminal is the PTY, our end of
/// the PTY, and the namespace's init.
pub fn spawn_pty(
    program: &std::path::Path,
    args: &[&std::ffi::OsStr],
    env: &std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    size: super::request::PtySize,
    sandbox: &ChildPlan,
    lifeline: RawFd,
    tracking: Option<CgroupEntry>,
) -> Result<
    (
        super::exit_watch::ExitWaiter,
        libc::pid_t,
        super::pty::PtyMaster,
        NamespacedRun,
    ),
    SpawnError,
> {
    use std::os::fd::AsFd;
    let strings = super::posix::ExecStrings::new(program, args, env).map_err(SpawnError::Child)?;
    let pair =
        super::pty::open_pair(size).map_err(|e| SpawnError::Clone(io::Error::other(e.message)))?;
    let slave = pair.slave.as_fd();
    let spawned = spawn(&Plan {
        program: &strings.program,
        argv: strings.argv.as_ptr() as *const *const c_char,
        envp: strings.envp.as_ptr() as *const *const c_char,
        stdio: [slave, slave, slave],
        terminal: true,
        sandbox,
        lifeline,
        tracking,
    })?;
    // The parent must not keep a slave open, or reads never reach end of output.
    drop(pair.slave);
    let Spawned {
        pid,
        pidfd,
        init,
        listener,
    } = spawned;
    let waiter = pidfd.try_clone();
    let parts = super::exit_watch::ExitWaiter::new(pid, Some(pidfd))
        .map_err(|e| e.to_string())
        .and_then(|w| {
            super::pty::PtyMaster::register(pair.master)
                .map(|m| (w, m))
                .map_err(|e| e.message)
        });
    match parts {
        Ok((w, master)) => Ok((w, pid, master, NamespacedRun { init, listener })),
        Err(e) => {
            abandon(init, waiter);
            Err(SpawnError::Clone(io::Error::other(e)))
        }
    }
}

/// Nothing could wait for the shell: end the namespace (dropping the init kills it, and everything
/// in it dies with it) and reap the shell here.
fn abandon(init: Init, shell: io::Result<OwnedFd>) {
    drop(init);
    if let Ok(fd) = shell {
        reap(&fd);
    }
}

fn kill(pidfd: &OwnedFd) {
    // SAFETY: pidfd_send_signal on our own child's pidfd.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<c_void>(),
            0,
        )
    };
}

/// Wait for a child of ours to exit, by its pidfd, and reap it.
fn reap(pidfd: &OwnedFd) {
    // SAFETY: waitid on our own child's pidfd, into a local.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        while libc::waitid(
            libc::P_PIDFD,
            pidfd.as_raw_fd() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::__WALL,
        ) < 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
    }
}

impl Init {
    /// Its pid as the host sees it.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// End the namespace now: every process in it dies with its init.
    pub fn kill(&self) {
        kill(&self.pidfd);
    }

    /// Reap the init once it exits (by itself, when the run's processes are gone, or killed), then
    /// free the memory it ran on. Without a runtime, a small thread waits.
    pub fn reap_when_done(self: std::sync::Arc<Self>) {
        let wait = move |init: std::sync::Arc<Init>| reap(&init.pidfd);
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                let fd = match self.pidfd.try_clone() {
                    Ok(fd) => fd,
                    Err(_) => {
                        let _ = std::thread::Builder::new()
                            .stack_size(64 * 1024)
                            .spawn(move || wait(self));
                        return;
                    }
                };
                rt.spawn(async move {
                    // SAFETY: the duplicate is owned by the AsyncFd from here on.
                    if let Ok(ready) = unsafe { tokio::io::unix::AsyncFd::register(fd) } {
                        let _ = ready.readable().await;
                    }
                    // Exited: the wait does not block.
                    wait(self);
                });
            }
            Err(_) => {
                let _ = std::thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || wait(self));
            }
        }
    }
}

impl Drop for Init {
    fn drop(&mut self) {
        // The memory must not be freed under a live init: if nobody reaped it, end it and reap it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: a non-blocking check of our own child's pidfd.
        let gone = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                self.pidfd.as_raw_fd() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::__WALL,
            ) == 0
                && info.si_pid() != 0
        } || io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD);
        if !gone {
            kill(&self.pidfd);
            reap(&self.pidfd);
        }
        let _ = &self.memory;
    }
}

/// Every disposition back to default (a zeroed kernel sigaction is SIG_DFL, no flags, no mask).
unsafe fn default_dispositions() {
    let dfl = [0u64; 4];
    for sig in 1..=64 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            // SAFETY: rt_sigaction with a zeroed action, no old action.
            unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    dfl.as_ptr(),
                    std::ptr::null::<u64>(),
                    8,
                )
            };
        }
    }
}

fn errno() -> c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// The outer child: enter the namespaces, make the init and the shell, exit.
extern "C" fn outer_main(arg: *mut c_void) -> ! {
    // SAFETY: `arg` is the host's OuterArgs and its plan, alive while the host waits (vfork). Only
    // system calls on prepared data; the host thread, whose thread-local state (errno) we share, is
    // stopped until we exit.
    unsafe {
        let a = &mut *(arg as *mut OuterArgs);
        let plan = &*(a.plan as *const Plan<'_>);
        default_dispositions();
        if let Some(CgroupEntry::Join(fd)) = plan.tracking {
            if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                a.error = errno();
                libc::_exit(127);
            }
        }
        let terminal = plan.terminal.then(|| plan.stdio[0].as_raw_fd());
        let born_in = matches!(plan.tracking, Some(CgroupEntry::BornIn(fd))
            if plan.sandbox.cgroup_to_be_born_in() == Some(fd));
        if let Err(e) = plan.sandbox.enter(terminal, born_in) {
            a.error = e.raw_os_error().unwrap_or(libc::EIO);
            libc::_exit(127);
        }
        let mut init_pidfd: c_int = -1;
        let mut init_args = CloneArgs {
            flags: (libc::CLONE_VM | libc::CLONE_PIDFD | libc::CLONE_PARENT) as u64,
            pidfd: &mut init_pidfd as *mut c_int as u64,
            stack: (*a.init).stack.as_mut_ptr() as u64,
            stack_size: INIT_STACK_BYTES as u64,
            ..CloneArgs::default()
        };
        let init = raw_clone3(
            &mut init_args,
            std::mem::size_of::<CloneArgs>(),
            init_main,
            a.init as *mut c_void,
        );
        if init < 0 {
            a.clone_error = -init as c_int;
            libc::_exit(127);
        }
        a.init_pid = init as c_int;
        a.init_pidfd = init_pidfd;
        let mut shell_pidfd: c_int = -1;
        let mut shell_args = CloneArgs {
            // The host's descriptor table, shared until the filter's listener is made in it.
            flags: (libc::CLONE_VM
                | libc::CLONE_VFORK
                | libc::CLONE_PIDFD
                | libc::CLONE_PARENT
                | libc::CLONE_FILES) as u64,
            pidfd: &mut shell_pidfd as *mut c_int as u64,
            stack: a.shell_stack as u64,
            stack_size: STACK_BYTES as u64,
            ..CloneArgs::default()
        };
        let shell = raw_clone3(
            &mut shell_args,
            std::mem::size_of::<CloneArgs>(),
            shell_main,
            arg,
        );
        let ready = &(*a.init).shell_ready;
        if shell < 0 {
            a.clone_error = -shell as c_int;
            ready.store(2, Ordering::SeqCst);
        } else {
            a.shell_pid = shell as c_int;
            a.shell_pidfd = shell_pidfd;
            ready.store(if a.error == 0 { 1 } else { 2 }, Ordering::SeqCst);
        }
        libc::syscall(
            libc::SYS_futex,
            ready as *const AtomicU32,
            libc::FUTEX_WAKE,
            1,
        );
        libc::_exit(0)
    }
}

/// The shell, pid 2 of the namespace: finish entering the sandbox and exec.
extern "C" fn shell_main(arg: *mut c_void) -> ! {
    // SAFETY: as for `outer_main`; the outer child waits (vfork) while we run.
    unsafe {
        let a = &mut *(arg as *mut OuterArgs);
        let plan = &*(a.plan as *const Plan<'_>);
        default_dispositions();
        let fail = |a: &mut OuterArgs, code: c_int| -> ! {
            a.error = if code == 0 { libc::EIO } else { code };
            libc::_exit(127)
        };
        if libc::setsid() < 0 {
            fail(a, errno());
        }
        // The filter's listener is made in the host's table, which we share so far: no handover.
        let proc_options = match plan.sandbox.process_namespaces() {
            Some(ns) => ns.proc_options,
            None => c"",
        };
        let entered = ChildPlan::mount_proc(proc_options).and_then(|()| {
            let terminal = plan.terminal.then(|| plan.stdio[0].as_raw_fd());
            plan.sandbox.finish_with(terminal, |listener, proxy| {
                a.listener = listener;
                a.proxy_listener = proxy;
                0
            })
        });
        if let Err(e) = entered {
            fail(a, e.raw_os_error().unwrap_or(libc::EIO));
        }
        // A table of our own from here on, for the command's 0, 1 and 2.
        if libc::unshare(libc::CLONE_FILES) < 0 {
            fail(a, errno());
        }
        for (target, fd) in plan.stdio.iter().enumerate() {
            if libc::dup3(fd.as_raw_fd(), target as c_int, 0) < 0 {
                fail(a, errno());
            }
        }
        // In our own table now: the host's /dev/null reopened in the run's view.
        if let Err(e) = plan.sandbox.reopen_null_in_view() {
            fail(a, e.raw_os_error().unwrap_or(libc::EIO));
        }
        if plan.terminal && libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
            fail(a, errno());
        }
        // Nothing else the host holds reaches the command (the listener included).
        crate::spawn::child_setup::close_host_fds_at_exec();
        let empty = 0u64;
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &empty as *const u64,
            std::ptr::null::<u64>(),
            8,
        );
        libc::syscall(
            libc::SYS_execve,
            plan.program.as_ptr(),
            plan.argv,
            plan.envp,
        );
        fail(a, errno())
    }
}

/// A system call with no C library in the way: no errno, no thread-local state. The init shares the
/// host's memory while the host's threads run, so it may not touch what they use.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sys(n: libc::c_long, a: [usize; 4]) -> isize {
    let ret: isize;
    // SAFETY (caller): the arguments are what the call expects.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") n as isize => ret,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn sys(_n: libc::c_long, _a: [usize; 4]) -> isize {
    -(libc::ENOSYS as isize)
}

/// The namespace's init (see the module doc). Raw system calls only; never returns.
extern "C" fn init_main(arg: *mut c_void) -> ! {
    // SAFETY: `arg` is the init's memory, which the host keeps until it has reaped us. Every call
    // below is a raw system call on our own stack's data.
    unsafe {
        let m = &*(arg as *const InitMemory);
        let lifeline = m.lifeline as usize;
        let exit = |code: usize| -> ! {
            sys(libc::SYS_exit_group, [code, 0, 0, 0]);
            #[allow(clippy::empty_loop)]
            loop {}
        };
        let dfl = [0u64; 4];
        for sig in 1..=64usize {
            if sig != libc::SIGKILL as usize && sig != libc::SIGSTOP as usize {
                sys(libc::SYS_rt_sigaction, [sig, dfl.as_ptr() as usize, 0, 8]);
            }
        }
        // Its own session, out of the host's terminal's reach; no core of the host's memory.
        sys(libc::SYS_setsid, [0; 4]);
        let no_core = [0u64; 2];
        sys(
            libc::SYS_prlimit64,
            [0, libc::RLIMIT_CORE as usize, no_core.as_ptr() as usize, 0],
        );
        let name = b"agent-exec-init\0";
        sys(
            libc::SYS_prctl,
            [libc::PR_SET_NAME as usize, name.as_ptr() as usize, 0, 0],
        );
        // Every descriptor but the lifeline closes (our table is a copy of the host's).
        if lifeline > 0 {
            sys(libc::SYS_close_range, [0, lifeline - 1, 0, 0]);
        }
        sys(
            libc::SYS_close_range,
            [lifeline + 1, u32::MAX as usize, 0, 0],
        );
        // Signals stay blocked (as the clone left them); SIGCHLD is read from a signalfd.
        let chld: u64 = 1 << (libc::SIGCHLD - 1);
        let sfd = sys(
            libc::SYS_signalfd4,
            [
                usize::MAX,
                &chld as *const u64 as usize,
                8,
                (libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) as usize,
            ],
        );
        if sfd < 0 {
            exit(1);
        }
        // Wait until the outer child has made the shell (or given up on it).
        let ready = &m.shell_ready;
        while ready.load(Ordering::SeqCst) == 0 {
            sys(
                libc::SYS_futex,
                [
                    ready as *const AtomicU32 as usize,
                    libc::FUTEX_WAIT as usize,
                    0,
                    0,
                ],
            );
        }
        // The shell is pid 2 here; a pidfd tells us when it is gone (it is the host's child).
        let mut shell = if ready.load(Ordering::SeqCst) == 1 {
            sys(libc::SYS_pidfd_open, [2, 0, 0, 0])
        } else {
            -1
        };
        let mut shell_gone = shell < 0;
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: lifeline as c_int,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: sfd as c_int,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: if shell_gone { -1 } else { shell as c_int },
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // ppoll with no timeout and no mask is poll(-1); arm64 has no poll system call.
            let n = sys(
                libc::SYS_ppoll,
                [fds.as_mut_ptr() as usize, fds.len(), 0, 0],
            );
            if n < 0 && n != -(libc::EINTR as isize) {
                exit(1);
            }
            if fds[0].revents != 0 {
                // The host is gone: leaving takes everything in the namespace with us.
                exit(0);
            }
            if fds[2].revents != 0 {
                shell_gone = true;
                sys(libc::SYS_close, [shell as usize, 0, 0, 0]);
                shell = -1;
                if m.leave_with_shell != 0 {
                    // The command is over: nothing of it lives on.
                    exit(0);
                }
            }
            if fds[1].revents != 0 {
                let mut info = [0u8; 128];
                while sys(
                    libc::SYS_read,
                    [sfd as usize, info.as_mut_ptr() as usize, 128, 0],
                ) > 0
                {}
            }
            loop {
                let r = sys(
                    libc::SYS_wait4,
                    [usize::MAX, 0, (libc::WNOHANG | libc::__WALL) as usize, 0],
                );
                if r > 0 {
                    continue;
                }
                if r == -(libc::ECHILD as isize) && shell_gone {
                    exit(0);
                }
                break;
            }
        }
    }
}
