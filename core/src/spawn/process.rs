//! One process handle for every way a run is spawned: pipes or a terminal, forked or not, sandboxed
//! into namespaces or not. [`spawn`] picks the way (the fork-free `posix_spawn`/`clone3` paths, the
//! namespaced clones, tokio's `Command`) and falls back from a PTY to pipes; what comes back is a
//! [`Process`] the session drives without knowing which way was taken. A Windows ConPTY is meant to
//! arrive as one more [`Io`] variant.

use std::sync::Arc;

use tokio::io::AsyncRead;

use crate::error::AgentError;
use crate::spawn::env::{build_env, EnvPlan};
#[cfg(unix)]
use crate::spawn::pipes::spawn_pipes;
#[cfg(unix)]
use crate::spawn::pty::spawn_pty;
use crate::spawn::pty::PtyMaster;
use crate::spawn::shell::ShellConfig;
use crate::spawn::ExecRequest;

pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
pub type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// A spawned run: its pid (the leader of its process group), its I/O, and the wait for its exit.
pub struct Process {
    pub pid: u32,
    pub io: Io,
    pub waiter: Waiter,
    /// The init of the run's PID namespace, where the fork-free namespaced spawn made one.
    #[cfg(target_os = "linux")]
    pub init: Option<Arc<crate::spawn::namespaced::Init>>,
    /// The sandbox's listener (and proxy socket), when the spawn made them in our descriptor table
    /// (no handover).
    #[cfg(target_os = "linux")]
    pub listener: Option<crate::sandbox::Handed>,
    /// The Job Object the run and everything it starts are in (Windows).
    #[cfg(windows)]
    pub job: Option<Arc<crate::kill::job::Job>>,
}

impl Process {
    /// A run with no namespace init, no listener and no job: the callers that have one set it.
    pub(crate) fn new(pid: u32, io: Io, waiter: Waiter) -> Process {
        Process {
            pid,
            io,
            waiter,
            #[cfg(target_os = "linux")]
            init: None,
            #[cfg(target_os = "linux")]
            listener: None,
            #[cfg(windows)]
            job: None,
        }
    }

    /// End the run at once, before it was handed to a session (its group; its job on Windows).
    pub fn kill_now(&self) {
        #[cfg(unix)]
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.terminate();
        }
    }
}

/// How the run's input and output travel.
pub enum Io {
    /// Plain pipes: stdout and stderr apart, stdin only when asked for.
    Pipes {
        stdin: Option<Writer>,
        stdout: Reader,
        stderr: Reader,
    },
    /// A terminal (a ConPTY on Windows): one master for input and the merged output.
    Pty(Arc<PtyMaster>),
    /// A terminal the container engine made for a run in a container.
    ContainerTty(Arc<crate::container::ContainerTty>),
}

impl Io {
    pub(crate) fn pipes(
        stdin: Option<impl tokio::io::AsyncWrite + Send + Unpin + 'static>,
        stdout: impl AsyncRead + Send + Unpin + 'static,
        stderr: impl AsyncRead + Send + Unpin + 'static,
    ) -> Io {
        Io::Pipes {
            stdin: stdin.map(|s| Box::new(s) as Writer),
            stdout: Box::new(stdout),
            stderr: Box::new(stderr),
        }
    }
}

/// The wait for the run's exit: tokio's child handle, or the exit watcher of the fork-free paths.
pub enum Waiter {
    /// Boxed: on Windows tokio's child is several times the size of the other variants.
    Tokio(Box<tokio::process::Child>),
    #[cfg(target_os = "linux")]
    Exit(crate::spawn::exit_watch::ExitWaiter),
    /// A ConPTY run, whose console the wait closes once it exits.
    #[cfg(windows)]
    Console(crate::spawn::conpty::ConsoleWaiter),
    /// A run in a container: its exit code, read from the engine once its output ended.
    Container(Option<tokio::sync::oneshot::Receiver<std::io::Result<i64>>>),
}

impl Waiter {
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            Waiter::Tokio(c) => c.wait().await,
            #[cfg(target_os = "linux")]
            Waiter::Exit(w) => w.wait().await,
            #[cfg(windows)]
            Waiter::Console(w) => w.wait().await,
            // Awaited in place, not taken: the driver's select drops this future whenever a kill
            // or the timeout fires first, and the next wait must still find the receiver.
            Waiter::Container(slot) => {
                let Some(rx) = slot.as_mut() else {
                    return Err(std::io::Error::other("the run's exit was already read"));
                };
                let code = rx.await.map_err(std::io::Error::other);
                *slot = None;
                Ok(exit_status_of_code(code??))
            }
        }
    }
}

/// An exit status from a plain exit code (a container run's, as its engine reports it).
fn exit_status_of_code(code: i64) -> std::process::ExitStatus {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        std::process::ExitStatus::from_raw(((code & 0xff) as i32) << 8)
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::ExitStatusExt;
        std::process::ExitStatus::from_raw(code as u32)
    }
}

/// Spawn `req` under `shell`: a PTY when it asks for one (pipes, with OpenClaw's warning pushed to
/// `warnings`, when the PTY cannot be had), pipes otherwise. `marker` is the run's session marker
/// variable; `tracking` the run's tracking cgroup, which the child is born in or joins before exec.
pub fn spawn(
    req: &ExecRequest,
    shell: &ShellConfig,
    marker: &str,
    warnings: &mut Vec<String>,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Tracking<'_>,
) -> Result<Process, AgentError> {
    spawn_child(
        req,
        shell,
        &env_plan(req, marker),
        warnings,
        sandbox,
        tracking,
    )
}

fn env_plan<'a>(req: &'a ExecRequest, marker: &'a str) -> impl Fn(bool) -> EnvPlan<'a> {
    move |pty| EnvPlan {
        inherit: req.inherit_env,
        drop_dangerous: req.drop_dangerous_env,
        model: &req.model_env,
        caller: &req.env,
        pty,
        cwd: &req.cwd,
        marker,
        cwd_report: req.cwd_report.as_deref(),
        cwd_trap_file: req.cwd_trap_file.as_deref(),
        secrets_passed: req.sandbox.as_ref().map(|s| s.pass_env.as_slice()),
    }
}

/// The run's tracking cgroup, where it has one (Linux).
#[cfg(target_os = "linux")]
pub type Tracking<'a> = Option<&'a crate::spawn::tracking::TrackingCgroup>;
#[cfg(not(target_os = "linux"))]
pub type Tracking<'a> = Option<&'a std::convert::Infallible>;

/// How a namespaced run's first child enters the tracking cgroup: born in it where the clone can do
/// that (v2), else by writing itself into it.
#[cfg(target_os = "linux")]
fn cgroup_entry(tracking: Tracking<'_>) -> Option<crate::spawn::namespaced::CgroupEntry> {
    use crate::spawn::namespaced::CgroupEntry;
    use std::os::fd::AsRawFd;
    tracking.map(|t| {
        if t.version() == 2 && crate::spawn::tracking::clone3_usable() {
            CgroupEntry::BornIn(t.dir_fd().as_raw_fd())
        } else {
            CgroupEntry::Join(t.join_fd().as_raw_fd())
        }
    })
}

/// How a sandboxed run's first child enters its cgroups: born in the run's own v2 cgroup where it has
/// one (its limits' cgroup, which the child would otherwise move into from the tracking cgroup, waiting
/// out an RCU grace period after a pause), else as any namespaced run enters its tracking cgroup.
#[cfg(target_os = "linux")]
fn namespaced_entry(
    plan: &crate::sandbox::child::ChildPlan,
    tracking: Tracking<'_>,
) -> Option<crate::spawn::namespaced::CgroupEntry> {
    // Only in place of a v2 tracking cgroup (or none): a v1 tracking cgroup is joined besides.
    let tracked_on_v1 = tracking.is_some_and(|t| t.version() == 1);
    match plan.cgroup_to_be_born_in() {
        Some(dir) if crate::spawn::tracking::clone3_usable() && !tracked_on_v1 => {
            Some(crate::spawn::namespaced::CgroupEntry::BornIn(dir))
        }
        _ => cgroup_entry(tracking),
    }
}

/// The tracking cgroup's join file (`tasks` on v1, `cgroup.procs` on v2), for a forked child to join
/// before exec.
#[cfg(unix)]
fn join_fd(tracking: Tracking<'_>) -> Option<std::os::fd::RawFd> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        tracking.map(|t| t.join_fd().as_raw_fd())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tracking;
        None
    }
}

fn spawn_with_pipes(
    req: &ExecRequest,
    shell: &ShellConfig,
    plan: EnvPlan<'_>,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Tracking<'_>,
) -> Result<Process, AgentError> {
    let env = build_env(&plan);
    #[cfg(target_os = "linux")]
    {
        let script = req.shell_script();
        let args = shell.args_with(&script);
        let stdin_pipe = req.stdin == crate::spawn::StdinMode::Pipe;
        // A sandbox with a PID namespace of its own is entered without a fork where the clone can
        // be made.
        if let Some((plan, ns)) = sandbox
            .map(|s| s.child_plan())
            .and_then(|p| p.process_namespaces().map(|ns| (p, ns)))
            .filter(|_| crate::spawn::namespaced::supported())
        {
            use crate::spawn::clone3::SpawnError;
            match crate::spawn::namespaced::spawn_pipes(
                &shell.program,
                &args,
                &env,
                stdin_pipe,
                &plan,
                ns.lifeline,
                namespaced_entry(&plan, tracking),
            ) {
                Ok((p, run)) => return Ok(piped(p, Some(run))),
                Err(SpawnError::Child(e)) => {
                    return Err(crate::spawn::pipes::spawn_error(&shell.program, req, &e))
                }
                // The kernel refused the clone (a container's filter, an old kernel): fork instead.
                Err(SpawnError::Clone(e)) => {
                    tracing::debug!("a namespaced clone failed ({e}); the sandboxed run forks");
                }
            }
        }
        // The fork-free path cannot run the sandbox's steps in the child: sandboxed runs fork.
        if sandbox.is_none() {
            match crate::spawn::posix::spawn(
                &shell.program,
                &args,
                &req.cwd,
                &env,
                stdin_pipe,
                tracking,
            ) {
                Ok(p) => return Ok(piped(p, None)),
                // No pidfd (kernels before 5.3), or no way into the cgroup without a fork: the
                // forking path below, which joins the cgroup before exec.
                Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {}
                Err(e) => return Err(crate::spawn::pipes::spawn_error(&shell.program, req, &e)),
            }
        }
    }
    #[cfg(windows)]
    let (p, job) = {
        // No sandbox on Windows (refused before the spawn) and no tracking cgroup: the run's job
        // tracks it.
        let _ = (sandbox, tracking);
        crate::spawn::windows::spawn_pipes(shell, req, &env)?
    };
    #[cfg(unix)]
    let p = spawn_pipes(shell, req, &env, sandbox, join_fd(tracking))?;
    let process = Process::new(
        p.pid,
        Io::pipes(p.stdin, p.stdout, p.stderr),
        Waiter::Tokio(Box::new(p.child)),
    );
    #[cfg(windows)]
    let process = Process {
        job: Some(Arc::new(job)),
        ..process
    };
    Ok(process)
}

/// A run spawned without a fork (posix_spawn, clone3), with the namespace it got, if any.
#[cfg(target_os = "linux")]
fn piped(
    p: crate::spawn::posix::PosixChild,
    run: Option<crate::spawn::namespaced::NamespacedRun>,
) -> Process {
    let process = Process::new(
        p.pid,
        Io::pipes(p.stdin, p.stdout, p.stderr),
        Waiter::Exit(p.exit),
    );
    match run {
        Some(r) => Process {
            init: Some(Arc::new(r.init)),
            listener: Some(r.listener),
            ..process
        },
        None => process,
    }
}

/// PTY when asked for, falling back to pipes (with OpenClaw's warning) when the PTY cannot be had.
fn spawn_child<'a>(
    req: &'a ExecRequest,
    shell: &ShellConfig,
    plan: &impl Fn(bool) -> EnvPlan<'a>,
    warnings: &mut Vec<String>,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Tracking<'_>,
) -> Result<Process, AgentError> {
    let Some(size) = req.pty else {
        return spawn_with_pipes(req, shell, plan(false), sandbox, tracking);
    };
    let pty_error = if req.pty_force_fallback {
        AgentError::new(
            crate::error::ErrorCode::SpawnFailed,
            "PTY disabled by the ptyForceFallback option",
        )
    } else {
        match spawn_terminal(req, shell, &build_env(&plan(true)), size, sandbox, tracking) {
            Ok(p) => return Ok(p),
            // The sandbox failed, not the terminal: pipes would fail the same way.
            Err(e) if e.code == crate::error::ErrorCode::SandboxUnavailable => return Err(e),
            Err(e) => e,
        }
    };
    spawn_pipes_instead(req, shell, plan, warnings, sandbox, tracking, pty_error)
}

/// A run on a terminal of `size`: a PTY, sandboxed into its PID namespace without a fork where that
/// applies (Linux), else forked onto the PTY.
#[cfg(unix)]
fn spawn_terminal(
    req: &ExecRequest,
    shell: &ShellConfig,
    env: &std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    size: crate::spawn::request::PtySize,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Tracking<'_>,
) -> Result<Process, AgentError> {
    #[cfg(target_os = "linux")]
    if let Some(spawned) = spawn_pty_namespaced(req, shell, env, size, sandbox, tracking) {
        return spawned;
    }
    // Unsandboxed into a v2 tracking cgroup: born in it, without a fork.
    #[cfg(target_os = "linux")]
    if let Some(cg) = tracking.filter(|t| sandbox.is_none() && t.version() == 2) {
        if let Some(p) = crate::spawn::pty::spawn_pty_born_in(shell, req, env, size, cg.dir_fd())? {
            return Ok(Process::new(
                p.pid,
                Io::Pty(Arc::new(p.master)),
                Waiter::Exit(p.exit),
            ));
        }
    }
    let p = spawn_pty(shell, req, env, size, sandbox, join_fd(tracking))?;
    Ok(Process::new(
        p.pid,
        Io::Pty(Arc::new(p.master)),
        Waiter::Tokio(Box::new(p.child)),
    ))
}

/// A run on a ConPTY of `size`, in its job (Windows has no sandbox and no tracking cgroup).
#[cfg(windows)]
fn spawn_terminal(
    req: &ExecRequest,
    shell: &ShellConfig,
    env: &std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    size: crate::spawn::request::PtySize,
    _sandbox: Option<&crate::sandbox::Armed>,
    _tracking: Tracking<'_>,
) -> Result<Process, AgentError> {
    let c = crate::spawn::conpty::spawn_conpty(shell, req, env, size)?;
    Ok(Process {
        job: Some(Arc::new(c.job)),
        ..Process::new(
            c.pid,
            Io::Pty(Arc::new(c.master)),
            Waiter::Console(c.waiter),
        )
    })
}

/// The PTY could not be had: pipes, with OpenClaw's warning.
fn spawn_pipes_instead<'a>(
    req: &'a ExecRequest,
    shell: &ShellConfig,
    plan: &impl Fn(bool) -> EnvPlan<'a>,
    warnings: &mut Vec<String>,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Tracking<'_>,
    pty_error: AgentError,
) -> Result<Process, AgentError> {
    // A PTY child can always be written to; keep that promise over pipes.
    let mut piped = req.clone();
    piped.stdin = crate::spawn::StdinMode::Pipe;
    match spawn_with_pipes(&piped, shell, plan(false), sandbox, tracking) {
        Ok(s) => {
            warnings.push(format!(
                "Warning: PTY spawn failed ({}); retrying without PTY for `{}`.",
                pty_error.message, req.command
            ));
            Ok(s)
        }
        Err(pipe_error) => Err(AgentError::new(
            crate::error::ErrorCode::SpawnFailed,
            format!(
                "PTY spawn failed ({}), and the pipe fallback failed too ({}).",
                pty_error.message, pipe_error.message
            ),
        )),
    }
}

/// A sandboxed PTY run spawned into its PID namespace without a fork, where it has one and the clone
/// can be made (`None`: take the other way).
#[cfg(target_os = "linux")]
fn spawn_pty_namespaced(
    req: &ExecRequest,
    shell: &ShellConfig,
    env: &std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString>,
    size: crate::spawn::request::PtySize,
    sandbox: Option<&crate::sandbox::Armed>,
    tracking: Tracking<'_>,
) -> Option<Result<Process, AgentError>> {
    use crate::spawn::clone3::SpawnError;
    let plan = sandbox?.child_plan();
    let ns = plan.process_namespaces()?;
    if !crate::spawn::namespaced::supported() {
        return None;
    }
    let script = req.shell_script();
    let args = shell.args_with(&script);
    match crate::spawn::namespaced::spawn_pty(
        &shell.program,
        &args,
        env,
        size,
        &plan,
        ns.lifeline,
        namespaced_entry(&plan, tracking),
    ) {
        Ok((waiter, pid, master, run)) => Some(Ok(Process {
            init: Some(Arc::new(run.init)),
            listener: Some(run.listener),
            ..Process::new(pid as u32, Io::Pty(Arc::new(master)), Waiter::Exit(waiter))
        })),
        Err(SpawnError::Child(e)) => Some(Err(crate::spawn::pipes::spawn_error(
            &shell.program,
            req,
            &e,
        ))),
        Err(SpawnError::Clone(e)) => {
            tracing::debug!("a namespaced clone failed ({e}); the sandboxed PTY run forks");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pty_and_pipe_failure_names_both_causes() {
        let mut req = ExecRequest::new("true");
        req.pty = Some(crate::spawn::request::PtySize::default());
        req.pty_force_fallback = true;
        let shell = ShellConfig {
            program: "/nonexistent/shell".into(),
            args: vec!["-c".into()],
            warning: None,
        };
        let mut warnings = Vec::new();
        let err = match spawn(&req, &shell, "m", &mut warnings, None, None) {
            Err(e) => e,
            Ok(_) => panic!("spawn must fail"),
        };
        assert_eq!(err.code, crate::error::ErrorCode::SpawnFailed);
        assert!(
            err.message.starts_with("PTY spawn failed (PTY disabled"),
            "{}",
            err.message
        );
        assert!(
            err.message
                .contains("pipe fallback failed too (Could not start /nonexistent/shell"),
            "{}",
            err.message
        );
        assert!(warnings.is_empty());
    }

    /// An unsandboxed PTY run on a v2 tracking host is born in its cgroup by `clone3` (watched by its
    /// pidfd), not forked and moved in before exec (tokio's child): that move waits out an RCU grace
    /// period after every pause between commands, 4 to 16 ms here.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_unsandboxed_pty_run_is_born_in_its_v2_tracking_cgroup() {
        use crate::spawn::tracking::{host, TrackingCgroup};
        let v2 = host().map(|h| h.version()) == Ok(2) && crate::spawn::clone3::supported();
        if !crate::test_needs::runs_here("cgroup-v2", v2) {
            return;
        }
        let cg = TrackingCgroup::create(&format!("agent-exec-{}-pty-born", std::process::id()))
            .expect("a tracking cgroup");
        let mut req = ExecRequest::new("sleep 30");
        req.pty = Some(crate::spawn::request::PtySize::default());
        let shell = ShellConfig {
            program: "/bin/sh".into(),
            args: vec!["-c".into()],
            warning: None,
        };
        let mut warnings = Vec::new();
        let mut p = spawn(&req, &shell, "m", &mut warnings, None, Some(&cg)).unwrap();
        let born_in = matches!(p.waiter, Waiter::Exit(_));
        let members = std::fs::read_to_string(cg.procs_file()).unwrap_or_default();
        p.kill_now();
        let _ = p.waiter.wait().await;
        assert!(born_in, "the PTY run was forked");
        assert!(
            members.lines().any(|l| l.trim() == p.pid.to_string()),
            "{members}"
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }
}
