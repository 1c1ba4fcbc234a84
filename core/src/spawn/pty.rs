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
    if let Some(join_fd) = tracking {
        // SAFETY: one write(2) on a descriptor opened before the fork.
        unsafe {
            cmd.pre_exec(move || crate::spawn::child_setup::join_cgroup(join_fd));
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

/// A PTY run born in its tracking cgroup (v2) by `clone3`, as pipe runs are: no copy of the host's
/// page tables, and no move into the cgroup after a fork, which waits out an RCU grace period (4 to
/// 16 ms after a pause between commands: see [`crate::sandbox::cgroup::join_file`]). `Ok(None)`: the
/// clone cannot be made here (no entry for this architecture, a kernel or filter that refuses it),
/// and the caller forks.
#[cfg(target_os = "linux")]
pub fn spawn_pty_born_in(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
    size: PtySize,
    cgroup: std::os::fd::BorrowedFd<'_>,
) -> Result<Option<BornIn>, AgentError> {
    use super::clone3::SpawnError;
    use std::os::fd::AsFd;
    use std::os::unix::ffi::OsStrExt;
    if !super::clone3::supported() || !super::tracking::clone3_usable() {
        return Ok(None);
    }
    let cannot_start = |e: &io::Error| super::pipes::spawn_error(&shell.program, req, e);
    let script = req.shell_script();
    let args = shell.args_with(&script);
    let strings =
        super::posix::ExecStrings::new(&shell.program, &args, env).map_err(|e| cannot_start(&e))?;
    let cwd =
        super::posix::cstring(req.cwd.as_os_str().as_bytes()).map_err(|e| cannot_start(&e))?;
    let pair = open_pair(size)?;
    // Registered before the clone: nothing that can fail is left once the child runs.
    let master = PtyMaster::register(pair.master)?;
    let slave = pair.slave.as_fd();
    let plan = super::clone3::Plan {
        program: &strings.program,
        argv: strings.argv.as_ptr() as *const *const libc::c_char,
        envp: strings.envp.as_ptr() as *const *const libc::c_char,
        cwd: &cwd,
        stdio: [slave, slave, slave],
        terminal: true,
        cgroup,
    };
    let spawned = match super::clone3::spawn(&plan) {
        Ok(s) => s,
        Err(SpawnError::Child(e)) => return Err(cannot_start(&e)),
        Err(SpawnError::Clone(e)) if super::posix::lasting_refusal(&e) => {
            tracing::warn!("clone3 into a cgroup failed ({e}); PTY runs fork instead");
            super::tracking::mark_clone3_broken();
            return Ok(None);
        }
        Err(SpawnError::Clone(e)) => return Err(fail("spawn failed", &e)),
    };
    // The parent must not keep a slave open, or reads never reach end of output.
    drop(pair.slave);
    let pid = spawned.pid;
    match super::exit_watch::ExitWaiter::new(pid, Some(spawned.pidfd)) {
        Ok(exit) => Ok(Some(BornIn {
            exit,
            pid: pid as u32,
            master,
        })),
        Err(e) => {
            // Nothing could wait for it: end its group (it leads a session of its own) and reap it
            // here rather than leave it running unwatched. Unreaped, its pid cannot have been reused.
            // SAFETY: signalling our own child's process group, then reaping the child.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
            Err(fail("watching the PTY run's exit failed", &e))
        }
    }
}

/// A PTY run started by [`spawn_pty_born_in`].
#[cfg(target_os = "linux")]
pub struct BornIn {
    pub exit: super::exit_watch::ExitWaiter,
    pub pid: u32,
    pub master: PtyMaster,
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
