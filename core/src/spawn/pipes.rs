//! Spawning a command with plain pipes: stdout and stderr piped, stdin closed (or a pipe on request),
//! the child in a new session so its process group can be signalled as a whole.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::process::Stdio;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

use super::request::{ExecRequest, StdinMode};
use super::shell::ShellConfig;
use crate::error::{AgentError, ErrorCode};

pub struct PipeChild {
    pub child: Child,
    pub pid: u32,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

impl PipeChild {
    /// A child spawned from [`piped_command`], with its pipes taken out.
    pub fn taken(mut child: Child) -> Result<PipeChild, AgentError> {
        let pid = child.id().ok_or_else(|| {
            AgentError::new(
                ErrorCode::SpawnFailed,
                "The child exited before its pid was read.",
            )
        })?;
        Ok(PipeChild {
            stdout: child.stdout.take().expect("stdout is piped"),
            stderr: child.stderr.take().expect("stderr is piped"),
            stdin: child.stdin.take(),
            child,
            pid,
        })
    }
}

/// The command for `req` under `shell` in its directory with exactly `env`, stdout and stderr piped,
/// stdin closed or piped as asked. Each platform adds its own steps before the spawn.
pub fn piped_command(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
) -> Command {
    let mut cmd = Command::new(&shell.program);
    cmd.args(&shell.args);
    #[cfg(windows)]
    if super::windows_args::is_cmd(&shell.program) {
        // cmd.exe splits its command line its own way: the command goes whole inside one pair of
        // quotes, which `/s` strips.
        cmd.raw_arg(format!("\"{}\"", req.shell_script()));
    } else {
        cmd.arg(req.shell_script().as_ref());
    }
    #[cfg(unix)]
    cmd.arg(req.shell_script().as_ref());
    cmd.current_dir(&req.cwd)
        .env_clear()
        .envs(env)
        .stdin(match req.stdin {
            StdinMode::Closed => Stdio::null(),
            StdinMode::Pipe => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Spawn with pipes, the child leading a new session (and joining the tracking cgroup, or entering
/// the sandbox) before exec.
#[cfg(unix)]
pub fn spawn_pipes(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Option<std::os::fd::RawFd>,
) -> Result<PipeChild, AgentError> {
    let mut cmd = piped_command(shell, req, env);
    // SAFETY: the closure runs in the forked child before exec and only makes async-signal-safe calls.
    unsafe {
        cmd.pre_exec(crate::spawn::child_setup::in_child);
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
        .map_err(|e| spawn_error(&shell.program, req, &e))?;
    PipeChild::taken(child)
}

pub fn spawn_error(program: &std::path::Path, req: &ExecRequest, e: &std::io::Error) -> AgentError {
    #[cfg(target_os = "linux")]
    if let Some(sandbox_error) = crate::sandbox::spawn_error(e) {
        return sandbox_error;
    }
    #[cfg(unix)]
    let too_long = e.raw_os_error() == Some(libc::E2BIG);
    // ERROR_FILENAME_EXCED_RANGE: the command line is over 32,767 characters.
    #[cfg(windows)]
    let too_long = e.raw_os_error() == Some(206);
    if too_long {
        // The command line and environment together exceed what the OS takes for one exec.
        return AgentError::new(
            ErrorCode::SpawnFailed,
            format!(
                "The command is too long for the operating system ({} bytes of command, plus the environment; E2BIG). Write it to a script file and run that file, or pass large data through stdin or a file.",
                req.command.len()
            ),
        );
    }
    AgentError::new(
        ErrorCode::SpawnFailed,
        format!(
            "Could not start {} in {}: {}. Check that the shell exists and the directory is accessible.",
            program.display(),
            req.cwd.display(),
            e
        ),
    )
}
