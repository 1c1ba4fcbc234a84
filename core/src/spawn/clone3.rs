//! Spawning a pipe or PTY run straight into its tracking cgroup: `clone3` with `CLONE_INTO_CGROUP`, in the
//! vfork style posix_spawn uses (`CLONE_VM | CLONE_VFORK`: no copy of the host's page tables, the
//! calling thread waits until the child has exec'd), and `CLONE_PIDFD` for the exit wait.
//!
//! Why not posix_spawn: glibc before 2.39 cannot put the child in a cgroup, and joining after the spawn
//! returns is too late (the shell may have forked already). Why not fork: copying Node's address space
//! costs about 3 ms a run.
//!
//! The child shares the parent's memory and runs on a stack of its own, so it may only make system
//! calls on data prepared before the clone: no allocation, no locks, nothing that returns into Rust
//! code of the parent. Signals are blocked across the clone so no host handler runs in the child; the
//! child resets every disposition to default and unblocks them just before exec, as posix_spawn's
//! `SETSIGDEF` and `SETSIGMASK` did. The entry into the child is a few lines of assembly (x86_64 only
//! for now: the arm64 version needs a test host where `clone3` runs, and qemu-user refuses it).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Whether this build has the child entry (the architecture's assembly).
pub fn supported() -> bool {
    cfg!(target_arch = "x86_64")
}

/// What the child does between the clone and exec.
pub struct Plan<'a> {
    pub program: &'a CStr,
    /// NUL-terminated arrays of NUL-terminated strings, as execve takes them.
    pub argv: *const *const c_char,
    pub envp: *const *const c_char,
    pub cwd: &'a CStr,
    /// Descriptors that become the child's 0, 1 and 2 (each above 2).
    pub stdio: [BorrowedFd<'a>; 3],
    /// Make the terminal on 0 (a PTY's slave) the new session's controlling terminal.
    pub terminal: bool,
    /// The cgroup directory the child is born in.
    pub cgroup: BorrowedFd<'a>,
}

pub struct Spawned {
    pub pid: libc::pid_t,
    pub pidfd: OwnedFd,
}

/// `struct clone_args` of linux/sched.h, up to `cgroup` (CLONE_ARGS_SIZE_VER2).
#[repr(C)]
#[derive(Default)]
pub(crate) struct CloneArgs {
    pub flags: u64,
    pub pidfd: u64,
    pub child_tid: u64,
    pub parent_tid: u64,
    pub exit_signal: u64,
    pub stack: u64,
    pub stack_size: u64,
    pub tls: u64,
    pub set_tid: u64,
    pub set_tid_size: u64,
    pub cgroup: u64,
}

pub(crate) const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
/// The child's stack: it makes a handful of system calls; debug builds have larger frames.
const STACK_BYTES: usize = 128 * 1024;

/// Everything the child reads, and the one thing it writes: the errno of the step that failed.
#[repr(C)]
struct ChildArgs {
    program: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
    cwd: *const c_char,
    stdio: [RawFd; 3],
    terminal: bool,
    error: c_int,
}

/// Why a spawn failed: the clone itself (the kernel or the cgroup refused; another way may work), or a
/// step of the child (the cwd, the program), which any way of spawning would meet too.
#[derive(Debug)]
pub enum SpawnError {
    Clone(io::Error),
    Child(io::Error),
}

/// Start the child in the cgroup. A failed child step comes back as the errno the child met, as
/// posix_spawn reports it; the child is reaped.
pub fn spawn(plan: &Plan<'_>) -> Result<Spawned, SpawnError> {
    if !supported() {
        return Err(SpawnError::Clone(io::Error::from_raw_os_error(
            libc::ENOSYS,
        )));
    }
    let stdio = plan.stdio.map(|fd| fd.as_raw_fd());
    if stdio.iter().any(|&fd| fd <= 2) {
        // dup3 onto 0..2 in order would clobber a source that is itself one of them.
        return Err(SpawnError::Clone(io::Error::from_raw_os_error(
            libc::EINVAL,
        )));
    }
    let mut child = ChildArgs {
        program: plan.program.as_ptr(),
        argv: plan.argv,
        envp: plan.envp,
        cwd: plan.cwd.as_ptr(),
        stdio,
        terminal: plan.terminal,
        error: 0,
    };
    // u128 keeps the stack 16-byte aligned, as both ABIs want at a call.
    let mut stack = vec![0u128; STACK_BYTES / 16];
    let mut pidfd: c_int = -1;
    let mut args = CloneArgs {
        flags: (libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD) as u64 | CLONE_INTO_CGROUP,
        pidfd: &mut pidfd as *mut c_int as u64,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack.as_mut_ptr() as u64,
        stack_size: STACK_BYTES as u64,
        cgroup: plan.cgroup.as_raw_fd() as u64,
        ..CloneArgs::default()
    };
    // SAFETY: `args` names a stack the child may use; `child` outlives the child's use of it (the
    // parent waits, CLONE_VFORK).
    let ret = unsafe {
        clone_with_signals_blocked(
            &mut args,
            child_main,
            &mut child as *mut ChildArgs as *mut c_void,
        )
    };
    drop(stack);
    if ret < 0 {
        return Err(SpawnError::Clone(io::Error::from_raw_os_error(-ret as i32)));
    }
    let pid = ret as libc::pid_t;
    // SAFETY: the kernel stored a new pidfd for the child, owned by nobody else.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    // SAFETY: the child has exec'd or exited (CLONE_VFORK), so nobody writes `error` any more.
    let error = unsafe { std::ptr::read_volatile(&child.error) };
    if error != 0 {
        let mut status = 0;
        // SAFETY: reaping our own child, which exited with 127 after the failed step.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(SpawnError::Child(io::Error::from_raw_os_error(error)));
    }
    Ok(Spawned { pid, pidfd })
}

/// `clone3` with every signal blocked around it, so no host handler runs in a child that shares our
/// memory (it unblocks what it needs itself); the previous mask is restored right after, on every
/// path. Blocked by the raw call: glibc's wrappers keep two of its own unblocked.
///
/// # Safety
/// As [`raw_clone3`]: `args` is a valid `clone_args` whose stack the child may use, and `arg` is what
/// `entry` expects, alive for as long as the child uses it.
pub(crate) unsafe fn clone_with_signals_blocked(
    args: &mut CloneArgs,
    entry: extern "C" fn(*mut c_void) -> !,
    arg: *mut c_void,
) -> isize {
    // SAFETY: rt_sigprocmask on the calling thread with full and saved masks of the kernel's size;
    // the clone's contract is the caller's.
    unsafe {
        let all = u64::MAX;
        let mut old = 0u64;
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &all as *const u64,
            &mut old as *mut u64,
            8,
        );
        let ret = raw_clone3(args, std::mem::size_of::<CloneArgs>(), entry, arg);
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &old as *const u64,
            std::ptr::null_mut::<u64>(),
            8,
        );
        ret
    }
}

/// The clone itself. Returns the child's pid (or `-errno`) in the parent; in the child it calls
/// `entry(arg)` on the new stack and never returns.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn raw_clone3(
    args: *mut CloneArgs,
    size: usize,
    entry: extern "C" fn(*mut c_void) -> !,
    arg: *mut c_void,
) -> isize {
    let ret: isize;
    // SAFETY (caller): `args` is a valid clone_args whose stack the child may use. The child path
    // leaves through `entry`, which never returns, so the parent's registers and stack are untouched
    // there; the parent path is a plain system call (rcx and r11 clobbered).
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            // Child: on its own stack; no frame to return to.
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 as isize => ret,
            in("rdi") args,
            in("rsi") size,
            in("r12") arg,
            in("r13") entry,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn raw_clone3(
    _args: *mut CloneArgs,
    _size: usize,
    _entry: extern "C" fn(*mut c_void) -> !,
    _arg: *mut c_void,
) -> isize {
    -(libc::ENOSYS as isize)
}

/// The child, between the clone and exec: system calls only.
extern "C" fn child_main(arg: *mut c_void) -> ! {
    // SAFETY: `arg` is the parent's ChildArgs, alive until we exec or exit (the parent waits).
    unsafe {
        let a = &mut *(arg as *mut ChildArgs);
        // Every disposition back to default (a zeroed kernel sigaction is SIG_DFL, no flags, no mask).
        let dfl = [0u64; 4];
        for sig in 1..=64 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    sig,
                    dfl.as_ptr(),
                    std::ptr::null::<u64>(),
                    8,
                );
            }
        }
        for (target, &fd) in a.stdio.iter().enumerate() {
            if libc::syscall(libc::SYS_dup3, fd, target as c_int, 0) < 0 {
                fail(a);
            }
        }
        // Nothing else the host holds reaches the command: every other descriptor closes at exec.
        // (Kernels before 5.11 lack the flag; they keep posix_spawn's behaviour.)
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
        if libc::syscall(libc::SYS_chdir, a.cwd) < 0 {
            fail(a);
        }
        if libc::syscall(libc::SYS_setsid) < 0 {
            fail(a);
        }
        if a.terminal && libc::syscall(libc::SYS_ioctl, 0, libc::TIOCSCTTY, 0) < 0 {
            fail(a);
        }
        let empty = 0u64;
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &empty as *const u64,
            std::ptr::null::<u64>(),
            8,
        );
        libc::syscall(libc::SYS_execve, a.program, a.argv, a.envp);
        fail(a)
    }
}

/// Record the failed step's errno for the parent and exit as a shell does for a command it cannot run.
unsafe fn fail(a: &mut ChildArgs) -> ! {
    // SAFETY: errno is the calling thread's (the parent's, shared): read right after the failed call.
    unsafe {
        let errno = *libc::__errno_location();
        std::ptr::write_volatile(&mut a.error, if errno == 0 { libc::EIO } else { errno });
        libc::_exit(127)
    }
}

/// Test support: `sh -c script` spawned by [`spawn`] into the cgroup `cgroup`, in `cwd`, with an empty
/// environment and `stdio` (the terminal on 0 made the controlling one when `terminal`).
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn spawn_sh_in(
    cgroup: BorrowedFd<'_>,
    script: &str,
    cwd: &str,
    stdio: [BorrowedFd<'_>; 3],
    terminal: bool,
) -> Result<Spawned, SpawnError> {
    use std::ffi::CString;
    let program = CString::new("/bin/sh").unwrap();
    let args = [
        CString::new("sh").unwrap(),
        CString::new("-c").unwrap(),
        CString::new(script).unwrap(),
    ];
    let mut argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let envp: [*const c_char; 1] = [std::ptr::null()];
    let cwd = CString::new(cwd).unwrap();
    spawn(&Plan {
        program: &program,
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: &cwd,
        stdio,
        terminal,
        cgroup,
    })
}

/// Test support: [`spawn_sh_in`] with stdin and stderr on `/dev/null`; its stdout and wait status.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn run_sh_in(
    cgroup: BorrowedFd<'_>,
    script: &str,
    cwd: &str,
) -> Result<(String, i32), SpawnError> {
    use std::io::Read;
    use std::os::fd::AsFd;
    let (mut out_r, out_w) = std::io::pipe().unwrap();
    let null = std::fs::File::open("/dev/null").unwrap();
    let err = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let stdio = [null.as_fd(), out_w.as_fd(), err.as_fd()];
    let spawned = spawn_sh_in(cgroup, script, cwd, stdio, false)?;
    drop(out_w);
    let mut out = String::new();
    out_r.read_to_string(&mut out).unwrap();
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(spawned.pid, &mut status, 0) };
    Ok((out, status))
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::spawn::tracking::{host, TrackingCgroup};
    use std::io::Read;

    /// Runs `sh -c script` through `spawn` in a fresh tracking cgroup; returns its stdout and status.
    fn run(script: &str, cwd: &str) -> Result<(String, i32, String), SpawnError> {
        let cg = TrackingCgroup::create(&format!(
            "agent-exec-{}-clone3-{}",
            std::process::id(),
            script.len()
        ))
        .expect("a tracking cgroup");
        let (out, status) = run_sh_in(cg.dir_fd(), script, cwd)?;
        let name = cg.procs_file().parent().unwrap().display().to_string();
        Ok((out, status, name))
    }

    use std::os::fd::AsFd;

    #[test]
    fn the_child_is_born_in_the_cgroup_with_a_clean_start() {
        if !crate::test_needs::runs_here("cgroup-v2", host().map(|h| h.version()) == Ok(2)) {
            return;
        }
        // A descriptor the host left inheritable must not reach the command.
        let leak = std::fs::File::open("/dev/null").unwrap();
        let leak_fd = leak.as_raw_fd();
        // SAFETY: clearing FD_CLOEXEC on our own descriptor.
        unsafe { libc::fcntl(leak_fd, libc::F_SETFD, 0) };
        let script = format!(
            "cat /proc/self/cgroup; grep -E '^(SigBlk|SigIgn)' /proc/self/status; \
             [ -e /proc/self/fd/{leak_fd} ] && echo leaked; pwd; ps -o sid= -p $$ | tr -d ' '; echo $$"
        );
        let (out, status, dir) = run(&script, "/tmp").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(status, 0, "{out}");
        let name = dir.rsplit('/').next().unwrap();
        assert!(out.contains(name), "{out}");
        assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");
        assert!(out.contains("SigIgn:\t0000000000000000"), "{out}");
        assert!(!out.contains("leaked"), "{out}");
        assert!(out.contains("\n/tmp\n"), "{out}");
        // A session of its own: the session id is its own pid.
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[lines.len() - 2], lines[lines.len() - 1], "{out}");
    }

    /// A PTY run: the slave becomes the new session's controlling terminal only when asked for
    /// (`terminal`), as a terminal's job control (Ctrl-C to the foreground group) needs.
    #[test]
    fn a_terminal_child_gets_the_slave_as_its_controlling_terminal() {
        if !crate::test_needs::runs_here("cgroup-v2", host().map(|h| h.version()) == Ok(2)) {
            return;
        }
        let tty_of = |terminal: bool| -> i64 {
            let cg = TrackingCgroup::create(&format!(
                "agent-exec-{}-clone3-tty-{terminal}",
                std::process::id()
            ))
            .expect("a tracking cgroup");
            let pair = nix::pty::openpty(None, None).unwrap();
            let slave = pair.slave.as_fd();
            // Field 7 of stat: the controlling terminal's device number, 0 for none.
            let script = "cut -d' ' -f7 /proc/$$/stat";
            let spawned = spawn_sh_in(cg.dir_fd(), script, "/", [slave, slave, slave], terminal)
                .unwrap_or_else(|e| panic!("{e:?}"));
            drop(pair.slave);
            let mut out = Vec::new();
            let mut master = std::fs::File::from(pair.master);
            // The master reads EIO once the child and its slave are gone.
            let _ = master.read_to_end(&mut out);
            let mut status = 0;
            // SAFETY: reaping our own child.
            unsafe { libc::waitpid(spawned.pid, &mut status, 0) };
            let text = String::from_utf8_lossy(&out);
            text.trim().parse().unwrap_or_else(|_| panic!("{text:?}"))
        };
        assert_ne!(tty_of(true), 0);
        assert_eq!(tty_of(false), 0);
    }

    #[test]
    fn a_failed_step_in_the_child_comes_back_as_its_errno() {
        if !crate::test_needs::runs_here("cgroup-v2", host().map(|h| h.version()) == Ok(2)) {
            return;
        }
        match run("true", "/no/such/dir") {
            Err(SpawnError::Child(e)) => assert_eq!(e.raw_os_error(), Some(libc::ENOENT)),
            other => panic!("{other:?}"),
        }
    }
}
