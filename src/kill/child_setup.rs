//! Runs in the forked child before exec.

/// Put the child in a session of its own: it leads a new process group, so one signal to the group
/// reaches pipelines and background jobs, and the host's terminal signals (Ctrl-C) do not.
#[cfg(unix)]
pub fn in_child() -> std::io::Result<()> {
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
