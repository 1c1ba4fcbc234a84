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

/// Put the child in a session of its own: it leads a new process group, so one signal to the group
/// reaches pipelines and background jobs, and the host's terminal signals (Ctrl-C) do not.
#[cfg(unix)]
pub fn in_child() -> std::io::Result<()> {
    reset_signals();
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

/// Join the run's tracking cgroup before exec, by writing `0` (the writer itself) to its `cgroup.procs`
/// (a descriptor opened before the fork), so everything the command starts is born inside it.
#[cfg(unix)]
pub fn join_cgroup(procs_fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: write is async-signal-safe; the buffer is a static byte string.
    if unsafe { libc::write(procs_fd, b"0".as_ptr().cast(), 1) } != 1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
