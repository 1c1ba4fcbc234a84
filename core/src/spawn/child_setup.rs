//! Runs in the forked child before exec.

/// Node ignores some signals (SIGPIPE, SIGXFSZ) and ignored dispositions survive exec: give the
/// command the defaults a shell would have, and an empty signal mask, as the posix_spawn path does.
#[cfg(unix)]
fn reset_signals() {
    // SAFETY: signal and sigprocmask are async-signal-safe; SIGKILL and SIGSTOP are skipped.
    unsafe {
        for sig in 1..32 {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::signal(sig, libc::SIG_DFL);
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
}

/// Nothing the host process holds reaches the command: every descriptor from 3 up closes at exec
/// (the host's own parent may have left a file or socket open without close-on-exec). Marked, not
/// closed, so the steps that run after this one (the sandbox's) can still use theirs.
#[cfg(target_os = "linux")]
pub fn close_host_fds_at_exec() {
    // SAFETY: close_range and fcntl are plain system calls on our own descriptor table.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) == 0
        {
            return;
        }
        // Kernels before 5.11: one fcntl per possible descriptor.
        let mut limit: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as i32
        } else {
            1024
        };
        for fd in 3..max {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
pub fn close_host_fds_at_exec() {
    // SAFETY: fcntl on our own descriptors; descriptors that are not open fail harmlessly.
    unsafe {
        let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(256, 1 << 16) as i32;
        for fd in 3..max {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// Put the child in a session of its own: it leads a new process group, so one signal to the group
/// reaches pipelines and background jobs, and the host's terminal signals (Ctrl-C) do not.
#[cfg(unix)]
pub fn in_child() -> std::io::Result<()> {
    reset_signals();
    close_host_fds_at_exec();
    // SAFETY: setsid and setpgid are async-signal-safe.
    unsafe {
        if libc::setsid() == -1 && libc::setpgid(0, 0) == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// For PTY runs: a new session whose controlling terminal is the PTY slave (already on fd 0).
#[cfg(unix)]
pub fn in_pty_child() -> std::io::Result<()> {
    reset_signals();
    close_host_fds_at_exec();
    // SAFETY: setsid and ioctl are async-signal-safe.
    unsafe {
        if libc::setsid() == -1 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::ioctl(0, libc::TIOCSCTTY as _, 0) == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Join the run's tracking cgroup before exec, by writing `0` (the writer itself) to its join file
/// (`tasks` on v1, `cgroup.procs` on v2; a descriptor opened before the fork), so everything the
/// command starts is born inside it.
#[cfg(unix)]
pub fn join_cgroup(join_fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: write is async-signal-safe; the buffer is a static byte string.
    if unsafe { libc::write(join_fd, b"0".as_ptr().cast(), 1) } != 1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
