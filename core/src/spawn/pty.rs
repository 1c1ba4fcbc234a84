//! Spawning a command on a pseudo-terminal, with the master driven by the async runtime.
//!
//! `nix::pty::openpty` rather than portable-pty: portable-pty's reader is a blocking `Read` (a thread
//! per session) and its kill sends SIGHUP to one pid. Here the master is non-blocking and registered
//! with tokio's reactor (`AsyncFd`), so a thousand PTY sessions cost no threads, and the child is a
//! session leader with the PTY as its controlling terminal, so the kill path treats it like any run.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::process::{Child, Command};

use super::request::{ExecRequest, PtySize};
use super::shell::ShellConfig;
use crate::error::{AgentError, ErrorCode};

/// The parent's end of the terminal.
pub struct PtyMaster {
    fd: AsyncFd<OwnedFd>,
}

impl PtyMaster {
    /// Read output. End of output (every slave descriptor closed) is `Ok(0)`; Linux reports it as EIO.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.fd.readable().await?;
            match guard
                .try_io(|inner| nix::unistd::read(inner.get_ref(), buf).map_err(io::Error::from))
            {
                Ok(Ok(n)) => return Ok(n),
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Ok(0),
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
    }

    pub async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut guard = self.fd.writable().await?;
            match guard
                .try_io(|inner| nix::unistd::write(inner.get_ref(), data).map_err(io::Error::from))
            {
                Ok(Ok(n)) => data = &data[n..],
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }

    pub fn resize(&self, size: PtySize) -> io::Result<()> {
        let ws = winsize(size);
        // SAFETY: TIOCSWINSZ reads one `winsize` from the pointer, which outlives the call.
        let rc = unsafe { libc::ioctl(self.fd.get_ref().as_raw_fd(), libc::TIOCSWINSZ, &ws) };
        if rc == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

fn winsize(size: PtySize) -> libc::winsize {
    libc::winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

pub struct PtyChild {
    pub child: Child,
    pub pid: u32,
    pub master: PtyMaster,
}

fn set_cloexec(fd: &OwnedFd) -> io::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).map_err(io::Error::from)?;
    Ok(())
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL).map_err(io::Error::from)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).map_err(io::Error::from)?;
    Ok(())
}

/// Open a PTY and start the shell on it. Errors here are what the pipe fallback reports.
pub fn spawn_pty(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
    size: PtySize,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Option<std::os::fd::RawFd>,
) -> Result<PtyChild, AgentError> {
    let pair = open_pair(size)?;
    let stdio = |fd: &OwnedFd| -> Result<Stdio, AgentError> {
        Ok(Stdio::from(
            fd.try_clone()
                .map_err(|e| fail("dup of the PTY slave failed", &e))?,
        ))
    };

    let mut cmd = Command::new(&shell.program);
    cmd.args(&shell.args)
        .arg(req.shell_script().as_ref())
        .current_dir(&req.cwd)
        .env_clear()
        .envs(env)
        .stdin(stdio(&pair.slave)?)
        .stdout(stdio(&pair.slave)?)
        .stderr(stdio(&pair.slave)?);
    // SAFETY: only async-signal-safe calls (setsid, ioctl) run between fork and exec.
    unsafe {
        cmd.pre_exec(crate::spawn::child_setup::in_pty_child);
    }
    if let Some(procs_fd) = tracking {
        // SAFETY: one write(2) on a descriptor opened before the fork.
        unsafe {
            cmd.pre_exec(move || crate::spawn::child_setup::join_cgroup(procs_fd));
        }
    }
    super::sandboxed::enter_in_child(&mut cmd, sandbox);
    let child = cmd
        .spawn()
        .map_err(|e| super::pipes::spawn_error(&shell.program, req, &e))?;
    // The parent must not keep a slave open, or reads never reach end of output.
    drop(pair.slave);
    let pid = child
        .id()
        .ok_or_else(|| fail("spawn failed", &"the child exited before its pid was read"))?;
    Ok(PtyChild {
        child,
        pid,
        master: PtyMaster::register(pair.master)?,
    })
}

fn fail(what: &str, e: &dyn std::fmt::Display) -> AgentError {
    AgentError::new(ErrorCode::SpawnFailed, format!("{what}: {e}"))
}

/// A new terminal of `size`: both ends close-on-exec, the master non-blocking.
pub fn open_pair(size: PtySize) -> Result<nix::pty::OpenptyResult, AgentError> {
    let ws = winsize(size);
    let pair = nix::pty::openpty(&ws, None).map_err(|e| fail("openpty failed", &e))?;
    set_cloexec(&pair.master).map_err(|e| fail("fcntl on the PTY master failed", &e))?;
    set_cloexec(&pair.slave).map_err(|e| fail("fcntl on the PTY slave failed", &e))?;
    set_nonblocking(&pair.master).map_err(|e| fail("fcntl on the PTY master failed", &e))?;
    Ok(pair)
}

impl PtyMaster {
    /// Drive `master` (non-blocking) from the runtime's reactor.
    pub fn register(master: OwnedFd) -> Result<PtyMaster, AgentError> {
        // SAFETY: the master is an OwnedFd owned by the AsyncFd from here on; nothing else closes it.
        let fd = unsafe {
            AsyncFd::register_with_interest(master, Interest::READABLE | Interest::WRITABLE)
        }
        .map_err(|e| fail("registering the PTY master failed", &e))?;
        Ok(PtyMaster { fd })
    }
}
