//! Starting a run and driving it to its end: output pumps, timeout, kill requests, the drain window.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;

use super::registry::Registry;
use super::{
    merge_survivors, ExitInfo, Input, KillCause, Session, SessionHooks, SessionMeta, SessionState,
};
use crate::error::AgentError;
use crate::kill::KillTarget;
use crate::output::collector::OutputCollector;
use crate::output::Stream;
use crate::spawn::env::{build_env, EnvPlan};
use crate::spawn::pipes::spawn_pipes;
#[cfg(unix)]
use crate::spawn::pty::{spawn_pty, PtyMaster};
use crate::spawn::shell::resolve_shell;
use crate::spawn::shell::ShellConfig;
use crate::spawn::ExecRequest;
use crate::util::now_ms;

const READ_CHUNK: usize = 256 * 1024;

/// Start `req`. The returned session is already running; its driver task owns the process.
///
/// The session is registered in `registry` while it runs.
pub fn start(
    registry: &'static Registry,
    req: &ExecRequest,
    hooks: SessionHooks,
    scope_key: Option<String>,
) -> Result<Arc<Session>, AgentError> {
    req.validate()?;
    if let Some(dir) = req.cwd_report.as_deref().and_then(std::path::Path::parent) {
        crate::output::spool::ensure_private_dir(dir)?;
    }
    let path = req.env_var("PATH");
    let env_shell = std::env::var("SHELL").ok();
    let shell = resolve_shell(req.shell.as_deref(), env_shell.as_deref(), path.as_deref())?;

    let id = registry.reserve_id();
    let marker = format!("{}-{}-{}", std::process::id(), id, now_ms());
    let mut warnings = req.warnings.clone();
    if let Some(w) = shell.warning.clone() {
        warnings.push(w);
    }
    // Every run gets a tracking cgroup where the host can make one, sandboxed or not: it is entered
    // for free at the clone (v2), where the sandbox's own cgroup (made only for its limits) is joined
    // by a write that costs about 0.3 ms.
    #[cfg(target_os = "linux")]
    let tracking = crate::spawn::tracking::TrackingCgroup::create(&format!(
        "agent-exec-{}-{id}",
        std::process::id()
    ));
    #[cfg(target_os = "linux")]
    let tracked_by = tracking.as_ref().map(|t| t.version());
    #[cfg(not(target_os = "linux"))]
    let tracked_by = None;
    let sandbox = match arm_sandbox(req, &id, tracked_by) {
        Ok(s) => s,
        Err(e) => {
            registry.release(&id);
            return Err(e);
        }
    };
    // A sandboxed run gets the sandbox's variables, and reports its cwd into its private temp dir
    // (the only place outside the roots it may write).
    let sandboxed_req;
    let (req, shell) = match &sandbox {
        Some(s) => {
            let mut r = req.clone();
            r.env.extend(s.env().iter().cloned());
            if r.cwd_report.is_some() {
                r.cwd_report = Some(s.tmp_dir().join("final-cwd"));
            }
            sandboxed_req = r;
            (&sandboxed_req, shell.wrapped(s.shell_wrapper()))
        }
        None => (req, shell),
    };
    #[cfg(target_os = "linux")]
    let tracking_ref = tracking.as_ref();
    #[cfg(not(target_os = "linux"))]
    let tracking_ref = None;
    let mut spawned = match spawn_child(
        req,
        &shell,
        &env_plan(req, &marker),
        &mut warnings,
        sandbox.as_ref(),
        tracking_ref,
    ) {
        Ok(s) => s,
        Err(e) => {
            registry.release(&id);
            return Err(e);
        }
    };
    if let Some(s) = &sandbox {
        #[cfg(target_os = "linux")]
        let supervised = match spawned.listener.take() {
            Some(listener) => s.supervise(listener),
            None => s.after_spawn(),
        };
        #[cfg(not(target_os = "linux"))]
        let supervised = s.after_spawn();
        if let Err(e) = supervised {
            // Without its supervisor the child would wait forever on its first write: end it.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(spawned.pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            registry.release(&id);
            return Err(e);
        }
    }
    let pid = spawned.pid;
    let is_pty = spawned.pty.is_some();
    let (kill_tx, kill_rx) = watch::channel(None);
    let (done_tx, _) = watch::channel(false);
    let input = match (&spawned.pty, spawned.stdin) {
        #[cfg(unix)]
        (Some(master), _) => Some(Input::Pty(master.clone())),
        (None, Some(stdin)) => Some(Input::Pipe(stdin)),
        _ => None,
    };
    let session = Arc::new(Session {
        meta: SessionMeta {
            id,
            command: req.command.clone(),
            cwd: req.cwd.display().to_string(),
            pid,
            started_at_ms: now_ms(),
            scope_key,
            is_pty,
        },
        target: KillTarget {
            pgid: pid as i32,
            marker: Some(marker),
            cgroup_procs: {
                let mut files = sandbox
                    .as_ref()
                    .map(|s| s.cgroup_procs_files())
                    .unwrap_or_default();
                #[cfg(target_os = "linux")]
                files.extend(tracking.as_ref().map(|t| t.procs_file()));
                files
            },
        },
        started: Instant::now(),
        state: Mutex::new(SessionState {
            collector: {
                let mut c = OutputCollector::new(req.limits, req.log_dir.clone(), is_pty);
                c.set_max_log_bytes(req.max_log_bytes);
                c.set_spill_above(req.log_above_chars);
                if let (true, Some(size)) = (is_pty, req.pty) {
                    c.enable_screen(size.rows, size.cols);
                }
                c
            },
            backgrounded: req.background,
            exit: None,
            warnings,
            empty_polls: 0,
            ended: None,
        }),
        changed_at: AtomicU64::new(super::changes::tick()),
        exit_notice_claimed: AtomicBool::new(false),
        changed: Notify::new(),
        kill: kill_tx,
        done: done_tx,
        hooks,
        registry,
        cwd_report: req.cwd_report.clone(),
        input: tokio::sync::Mutex::new(input),
        sandbox,
        keep_logs: req.keep_logs,
        // The child is in its cgroup: the descriptors it entered by close here.
        #[cfg(target_os = "linux")]
        tracking: tracking.map(|t| t.into_tracked()),
        #[cfg(target_os = "linux")]
        namespace_init: spawned.init.clone(),
    });
    #[cfg(target_os = "linux")]
    if let Some(init) = spawned.init {
        init.reap_when_done();
    }
    registry.insert(session.clone());
    let pumps = match (spawned.pty, spawned.stdout, spawned.stderr) {
        #[cfg(unix)]
        (Some(master), _, _) => vec![tokio::spawn(pump_pty(session.clone(), master))],
        (_, Some(out), Some(err)) => vec![
            tokio::spawn(pump(session.clone(), Stream::Stdout, out)),
            tokio::spawn(pump(session.clone(), Stream::Stderr, err)),
        ],
        _ => Vec::new(),
    };
    let plan = DrivePlan {
        timeout: req.timeout,
        grace: req.kill_grace,
        drain: req.drain_timeout,
    };
    tokio::spawn(drive(session.clone(), spawned.child, pumps, plan, kill_rx));
    Ok(session)
}

/// Every directory this host makes run cgroups in (tracking cgroups, and the sandbox's limit cgroups),
/// for the watchdog that kills what is left in them when the host dies.
pub fn run_cgroup_parents() -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    #[cfg(target_os = "linux")]
    {
        if let Ok(host) = crate::spawn::tracking::host() {
            dirs.push(host.parent().to_path_buf());
        }
        match crate::sandbox::cgroup::detect() {
            Some(crate::sandbox::cgroup::CgroupHost::V2 { dir, .. }) => dirs.push(dir),
            Some(crate::sandbox::cgroup::CgroupHost::V1 { memory, pids }) => {
                dirs.extend(memory);
                dirs.extend(pids);
            }
            None => {}
        }
        // The tracking parent can be the sandbox's pids directory too.
        dirs.sort();
        dirs.dedup();
    }
    dirs
}

/// Prepare the run's sandbox, if it asked for one. `HOME` is the run's own (its start-up files are
/// protected when a writable root holds it).
/// `tracked_by`: the version of the run's tracking cgroup, when it has one (the sandbox then makes a
/// cgroup only for its limits).
fn arm_sandbox(
    req: &ExecRequest,
    id: &str,
    tracked_by: Option<u8>,
) -> Result<Option<crate::sandbox::Armed>, AgentError> {
    let Some(spec) = &req.sandbox else {
        return Ok(None);
    };
    let home = req.env_var("HOME");
    // Never a name of an earlier run: its cgroup may still be on its way out (a namespace's init
    // leaves a moment after the shell) when the session id is used again.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("agent-exec-{}-{id}-{seq}", std::process::id());
    crate::sandbox::prepare(
        spec,
        &req.cwd,
        home.as_deref().map(std::path::Path::new),
        &name,
        tracked_by,
    )
    .map(Some)
}

/// The pid of the run's namespace init, where the host spawned one it knows (the fork-free spawn).
fn namespace_inits(session: &Session) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        session.namespace_init.iter().map(|i| i.pid()).collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = session;
        Vec::new()
    }
}

/// The processes a run left, less the init of its PID namespace: the sandbox's own, there only while
/// the command's processes are, and gone with them.
fn without_namespace_inits(pids: Vec<u32>) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    return pids
        .into_iter()
        .filter(|&p| !crate::sandbox::reaper::is_namespace_init(p))
        .collect();
    #[cfg(not(target_os = "linux"))]
    pids
}

type Reader = Box<dyn AsyncRead + Send + Unpin>;
type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// The spawned process, waited on by tokio's child reaper or by a pidfd.
enum ChildProc {
    Tokio(tokio::process::Child),
    #[cfg(target_os = "linux")]
    Exit(crate::spawn::exit_watch::ExitWaiter),
}

impl ChildProc {
    async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        match self {
            ChildProc::Tokio(c) => c.wait().await,
            #[cfg(target_os = "linux")]
            ChildProc::Exit(w) => w.wait().await,
        }
    }
}

/// What `start` needs from either spawn path.
struct Spawned {
    child: ChildProc,
    pid: u32,
    stdin: Option<Writer>,
    stdout: Option<Reader>,
    stderr: Option<Reader>,
    #[cfg(unix)]
    pty: Option<Arc<PtyMaster>>,
    #[cfg(not(unix))]
    pty: Option<()>,
    #[cfg(target_os = "linux")]
    init: Option<Arc<crate::spawn::namespaced::Init>>,
    /// The sandbox's listener, when the spawn made it in our descriptor table (no handover).
    #[cfg(target_os = "linux")]
    listener: Option<std::os::fd::OwnedFd>,
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
    }
}

/// The run's tracking cgroup, where it has one (Linux).
#[cfg(target_os = "linux")]
type Tracking<'a> = Option<&'a crate::spawn::tracking::TrackingCgroup>;
#[cfg(not(target_os = "linux"))]
type Tracking<'a> = Option<&'a std::convert::Infallible>;

/// How a namespaced run's first child enters the tracking cgroup: born in it where the clone can do
/// that (v2), else by writing `cgroup.procs`.
#[cfg(target_os = "linux")]
fn cgroup_entry(tracking: Tracking<'_>) -> Option<crate::spawn::namespaced::CgroupEntry> {
    use crate::spawn::namespaced::CgroupEntry;
    use std::os::fd::AsRawFd;
    tracking.map(|t| {
        if t.version() == 2 && crate::spawn::tracking::clone3_usable() {
            CgroupEntry::BornIn(t.dir_fd().as_raw_fd())
        } else {
            CgroupEntry::Join(t.procs_fd().as_raw_fd())
        }
    })
}

/// `cgroup.procs` of the tracking cgroup, for a forked child to join before exec.
fn join_fd(tracking: Tracking<'_>) -> Option<std::os::fd::RawFd> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        tracking.map(|t| t.procs_fd().as_raw_fd())
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
) -> Result<Spawned, AgentError> {
    let env = build_env(&plan);
    #[cfg(target_os = "linux")]
    {
        let script = req.shell_script();
        let mut args: Vec<&std::ffi::OsStr> = shell.args.iter().map(|a| a.as_ref()).collect();
        args.push(script.as_ref().as_ref());
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
                cgroup_entry(tracking),
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
    let p = spawn_pipes(shell, req, &env, sandbox, join_fd(tracking))?;
    Ok(Spawned {
        child: ChildProc::Tokio(p.child),
        pid: p.pid,
        stdin: p.stdin.map(|s| Box::new(s) as Writer),
        stdout: Some(Box::new(p.stdout)),
        stderr: Some(Box::new(p.stderr)),
        pty: None,
        #[cfg(target_os = "linux")]
        init: None,
        #[cfg(target_os = "linux")]
        listener: None,
    })
}

/// A run spawned without a fork (posix_spawn, clone3), with the namespace it got, if any.
#[cfg(target_os = "linux")]
fn piped(
    p: crate::spawn::posix::PosixChild,
    run: Option<crate::spawn::namespaced::NamespacedRun>,
) -> Spawned {
    let (init, listener) = match run {
        Some(r) => (Some(Arc::new(r.init)), Some(r.listener)),
        None => (None, None),
    };
    Spawned {
        child: ChildProc::Exit(p.exit),
        pid: p.pid,
        stdin: p.stdin.map(|s| Box::new(s) as Writer),
        stdout: Some(Box::new(p.stdout)),
        stderr: Some(Box::new(p.stderr)),
        pty: None,
        init,
        listener,
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
) -> Result<Spawned, AgentError> {
    let Some(size) = req.pty else {
        return spawn_with_pipes(req, shell, plan(false), sandbox, tracking);
    };
    #[cfg(unix)]
    let pty_error = if req.pty_force_fallback {
        AgentError::new(
            crate::error::ErrorCode::SpawnFailed,
            "PTY disabled by the ptyForceFallback option",
        )
    } else {
        let env = build_env(&plan(true));
        #[cfg(target_os = "linux")]
        if let Some(spawned) = spawn_pty_namespaced(req, shell, &env, size, sandbox, tracking) {
            match spawned {
                Ok(s) => return Ok(s),
                Err(e) if e.code == crate::error::ErrorCode::SandboxUnavailable => return Err(e),
                // The terminal failed: the pipes below, as for any run.
                Err(e) => {
                    return spawn_pipes_instead(req, shell, plan, warnings, sandbox, tracking, e)
                }
            }
        }
        match spawn_pty(shell, req, &env, size, sandbox, join_fd(tracking)) {
            Ok(p) => {
                return Ok(Spawned {
                    child: ChildProc::Tokio(p.child),
                    pid: p.pid,
                    stdin: None,
                    stdout: None,
                    stderr: None,
                    pty: Some(Arc::new(p.master)),
                    #[cfg(target_os = "linux")]
                    init: None,
                    #[cfg(target_os = "linux")]
                    listener: None,
                })
            }
            // The sandbox failed, not the terminal: pipes would fail the same way.
            Err(e) if e.code == crate::error::ErrorCode::SandboxUnavailable => return Err(e),
            Err(e) => e,
        }
    };
    #[cfg(not(unix))]
    let pty_error = {
        let _ = size;
        AgentError::new(
            crate::error::ErrorCode::SpawnFailed,
            "PTY sessions are not supported on this platform yet",
        )
    };
    spawn_pipes_instead(req, shell, plan, warnings, sandbox, tracking, pty_error)
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
) -> Result<Spawned, AgentError> {
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
) -> Option<Result<Spawned, AgentError>> {
    use crate::spawn::clone3::SpawnError;
    let plan = sandbox?.child_plan();
    let ns = plan.process_namespaces()?;
    if !crate::spawn::namespaced::supported() {
        return None;
    }
    let script = req.shell_script();
    let mut args: Vec<&std::ffi::OsStr> = shell.args.iter().map(|a| a.as_ref()).collect();
    args.push(script.as_ref().as_ref());
    match crate::spawn::namespaced::spawn_pty(
        &shell.program,
        &args,
        env,
        size,
        &plan,
        ns.lifeline,
        cgroup_entry(tracking),
    ) {
        Ok((waiter, pid, master, run)) => Some(Ok(Spawned {
            child: ChildProc::Exit(waiter),
            pid: pid as u32,
            stdin: None,
            stdout: None,
            stderr: None,
            pty: Some(Arc::new(master)),
            init: Some(Arc::new(run.init)),
            listener: Some(run.listener),
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

/// Reads a PTY master to its end, answering cursor position queries as a terminal would.
#[cfg(unix)]
async fn pump_pty(session: Arc<Session>, master: Arc<PtyMaster>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match master.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let queries = session.ingest(Stream::Stdout, &buf[..n]);
                for _ in 0..queries {
                    // A TUI that asks where its cursor is waits for the answer before drawing.
                    let _ = master.write_all(b"\x1b[1;1R").await;
                }
            }
        }
    }
    session.finish_stream(Stream::Stdout);
}

struct DrivePlan {
    timeout: Option<Duration>,
    grace: Duration,
    drain: Duration,
}

async fn pump<R: AsyncRead + Unpin>(session: Arc<Session>, stream: Stream, mut reader: R) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                session.ingest(stream, &buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    session.finish_stream(stream);
}

async fn drive(
    session: Arc<Session>,
    mut child: ChildProc,
    pumps: Vec<JoinHandle<()>>,
    plan: DrivePlan,
    mut kill_rx: watch::Receiver<Option<KillCause>>,
) {
    let deadline = plan.timeout.map(|t| tokio::time::Instant::now() + t);
    let mut cause: Option<KillCause> = None;
    let mut killer: Option<JoinHandle<crate::kill::KillReport>> = None;
    let status = loop {
        tokio::select! {
          status = child.wait() => break status,
          _ = sleep_until(deadline), if cause.is_none() => {
            cause = Some(KillCause::Timeout);
            killer = Some(spawn_kill(&session, plan.grace));
          }
          changed = kill_rx.changed(), if cause.is_none() => {
            if changed.is_err() {
              continue;
            }
            let requested = *kill_rx.borrow_and_update();
            match requested {
              // An abort only ends a run the caller is still waiting for.
              Some(KillCause::Aborted) if session.lock().backgrounded => {}
              Some(c) => {
                cause = Some(c);
                killer = Some(spawn_kill(&session, plan.grace));
              }
              None => {}
            }
          }
        }
    };
    // Nobody can write to a process that is gone; closing also frees the fd.
    session.input.lock().await.take();
    let mut survivors = Vec::new();
    if let Some(k) = killer {
        if let Ok(report) = k.await {
            #[cfg(target_os = "linux")]
            if report.escalated {
                // What the group, the marker and the cgroup could not name dies with the namespace.
                if let Some(init) = &session.namespace_init {
                    init.kill();
                }
            }
            merge_survivors(&mut survivors, &report);
        }
    }

    // Output first, exit second: wait for the pipes to reach EOF, but not forever.
    let mut left_running = Vec::new();
    let drain = futures_join_all(pumps);
    tokio::pin!(drain);
    if tokio::time::timeout(plan.drain, &mut drain).await.is_err() {
        // Something still holds the pipes. Stop reading; say who.
        drain.abort_all();
        let live = without_namespace_inits(session.target.live_processes());
        left_running.extend(live.into_iter().filter(|p| !survivors.contains(p)));
        session.finish_stream(Stream::Stdout);
        session.finish_stream(Stream::Stderr);
    } else if cause.is_none()
        && session
            .target
            .may_have_members_besides(&namespace_inits(&session))
    {
        // Output ended, yet the group lives on: descendants that closed or lost the output (a PTY
        // hangs up when its session leader exits) and kept running.
        left_running.extend(without_namespace_inits(session.target.live_processes()));
    }

    let (exit_code, exit_signal) = match &status {
        Ok(s) => decode_status(s),
        Err(_) => (None, None),
    };
    let final_cwd = session.cwd_report.as_ref().and_then(|report| {
        let dir = std::fs::read_to_string(report).ok();
        let _ = std::fs::remove_file(report);
        dir.map(|d| d.trim_end_matches('\n').to_string())
            .filter(|d| !d.is_empty())
    });
    if let Some(dir) = &final_cwd {
        session
            .registry
            .set_scope_cwd(session.meta.scope_key.as_deref(), dir.into());
    }
    let sandbox = session
        .sandbox
        .as_ref()
        .map(|s| s.report(exit_code, exit_signal.as_deref()));
    #[cfg(target_os = "linux")]
    if let Some(t) = &session.tracking {
        t.remove_soon();
    }
    let mut exit = ExitInfo {
        exit_code,
        exit_signal,
        cause,
        duration_ms: session.elapsed_ms(),
        ended_at_ms: now_ms(),
        survivors,
        left_running,
        final_cwd,
        sandbox,
    };
    if let Err(e) = status {
        session
            .lock()
            .warnings
            .push(format!("Warning: waiting for the process failed: {e}."));
        exit.exit_code = None;
    }
    session.finish(exit);
}

fn spawn_kill(session: &Arc<Session>, grace: Duration) -> JoinHandle<crate::kill::KillReport> {
    let target = session.target.clone();
    tokio::spawn(async move { target.kill_tree(grace).await })
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

#[cfg(unix)]
fn decode_status(s: &std::process::ExitStatus) -> (Option<i32>, Option<String>) {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = s.signal() {
        let name = nix::sys::signal::Signal::try_from(sig)
            .map(|s| s.as_str().to_string())
            .unwrap_or_else(|_| format!("SIG{sig}"));
        return (None, Some(name));
    }
    (s.code(), None)
}

#[cfg(not(unix))]
fn decode_status(s: &std::process::ExitStatus) -> (Option<i32>, Option<String>) {
    (s.code(), None)
}

/// Waits for all pumps; can abort the ones still running.
struct JoinAll {
    handles: Vec<JoinHandle<()>>,
}

fn futures_join_all(handles: Vec<JoinHandle<()>>) -> JoinAll {
    JoinAll { handles }
}

impl JoinAll {
    fn abort_all(&self) {
        for h in &self.handles {
            h.abort();
        }
    }
}

impl std::future::Future for JoinAll {
    type Output = ();
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        use std::task::Poll;
        let mut i = 0;
        while i < self.handles.len() {
            match std::pin::Pin::new(&mut self.handles[i]).poll(cx) {
                Poll::Ready(_) => {
                    self.handles.swap_remove(i);
                }
                Poll::Pending => i += 1,
            }
        }
        if self.handles.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::outcome::outcome_of;
    use crate::session::RunStatus;

    async fn run(req: ExecRequest) -> crate::session::ExecOutcome {
        let s = start(
            crate::session::registry::global(),
            &req,
            SessionHooks::default(),
            None,
        )
        .unwrap();
        let exit = s.wait_exit().await;
        outcome_of(&s, &exit, &req)
    }

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
        let err = match spawn_child(
            &req,
            &shell,
            &env_plan(&req, "m"),
            &mut warnings,
            None,
            None,
        ) {
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

    #[tokio::test]
    async fn captures_both_streams_and_exit_code() {
        let out = run(ExecRequest::new("echo out; echo err >&2; exit 3")).await;
        assert_eq!(out.status, RunStatus::Completed);
        assert_eq!(out.exit_code, Some(3));
        assert!(out.output.contains("out\n") && out.output.contains("err\n"));
    }

    #[tokio::test]
    async fn timeout_kills_the_group() {
        let mut req = ExecRequest::new("sleep 30 | cat");
        req.timeout = Some(Duration::from_millis(200));
        req.kill_grace = Duration::from_millis(500);
        let out = run(req).await;
        assert_eq!(out.status, RunStatus::Failed);
        assert!(out.timed_out);
        assert_eq!(
            out.reason.as_deref(),
            Some("Command timed out after 0.2 seconds")
        );
    }

    #[tokio::test]
    async fn background_child_holding_pipes_does_not_hang() {
        let mut req = ExecRequest::new("sleep 30 & echo started");
        req.drain_timeout = Duration::from_millis(300);
        let started = Instant::now();
        let s = start(
            crate::session::registry::global(),
            &req,
            SessionHooks::default(),
            None,
        )
        .unwrap();
        let exit = s.wait_exit().await;
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(exit.left_running.len(), 1, "{exit:?}");
        s.target.kill_tree(Duration::from_millis(100)).await;
        let out = outcome_of(&s, &exit, &req);
        assert!(out.output.contains("started"));
        assert!(
            out.warnings.iter().any(|w| w.contains("kept running")),
            "{:?}",
            out.warnings
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod sandbox_tests {
    use super::*;
    use crate::session::outcome::outcome_of;

    #[tokio::test]
    async fn a_sandboxed_run_writes_inside_and_is_refused_outside() {
        let dir = tempfile::tempdir().unwrap();
        let mut req = ExecRequest::new(
            "echo in > inside.txt; echo out > /etc/agent-exec-sandbox-probe; cat /etc/hostname >/dev/null && echo read-ok",
        );
        req.cwd = dir.path().to_path_buf();
        req.sandbox = Some(crate::sandbox::SandboxSpec::default());
        let started = start(
            crate::session::registry::global(),
            &req,
            SessionHooks::default(),
            None,
        );
        if !crate::sandbox::capabilities::get().enforceable() {
            let e = started.err().expect("a host that cannot sandbox refuses");
            assert_eq!(e.code, crate::error::ErrorCode::SandboxUnavailable);
            assert!(!dir.path().join("inside.txt").exists());
            return;
        }
        let s = started.unwrap();
        let exit = s.wait_exit().await;
        let out = outcome_of(&s, &exit, &req);
        assert!(dir.path().join("inside.txt").exists(), "{out:?}");
        assert!(!std::path::Path::new("/etc/agent-exec-sandbox-probe").exists());
        assert!(out.output.contains("read-ok"), "{}", out.output);
        let report = out.sandbox.expect("a report");
        assert!(
            report.denials.iter().any(|d| d.operation == "write"
                && d.path.as_deref() == Some("/etc/agent-exec-sandbox-probe")
                && d.rule == "outside the writable roots"),
            "{report:?}"
        );
    }
}
