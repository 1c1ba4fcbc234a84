//! Starting a run and driving it to its end: output pumps, timeout, kill requests, the drain window.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;

use super::registry::Registry;
use super::target::RunTarget;
use super::terminal::Terminal;
use super::{
    merge_survivors, ExitInfo, Input, KillCause, Session, SessionHooks, SessionMeta, SessionState,
};
use crate::error::AgentError;
use crate::kill::KillTarget;
use crate::output::collector::OutputCollector;
use crate::output::Stream;
use crate::spawn::process::{self, Io, Reader, Waiter};
use crate::spawn::shell::resolve_shell;
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
    // The shell itself, before a sandbox may wrap it.
    let bash_candidate = shell.program.clone();

    let id = registry.reserve_id();
    let marker = session_marker(&id);
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
            let passed = req
                .sandbox
                .as_ref()
                .map_or(&[][..], |s| s.pass_env.as_slice());
            s.set_dropped_env(crate::sandbox::secrets::dropped_names(
                req.inherit_env,
                &req.model_env,
                passed,
            ));
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
    // bash: the cwd trap comes from a BASH_ENV file, so the script is the model's command alone.
    let trapped_req;
    let req = match crate::spawn::request::bash_cwd_trap(req, &bash_candidate) {
        Some(r) => {
            trapped_req = r;
            &trapped_req
        }
        None => req,
    };
    #[cfg(target_os = "linux")]
    let tracking_ref = tracking.as_ref();
    #[cfg(not(target_os = "linux"))]
    let tracking_ref = None;
    // The sandbox's listener is taken out of it on Linux only.
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let mut process = match process::spawn(
        req,
        &shell,
        &marker,
        &mut warnings,
        sandbox.as_ref(),
        tracking_ref,
    ) {
        Ok(p) => p,
        Err(e) => {
            registry.release(&id);
            return Err(e);
        }
    };
    if let Some(s) = &sandbox {
        #[cfg(target_os = "linux")]
        let supervised = match process.listener.take() {
            Some(listener) => s.supervise(listener),
            None => s.after_spawn(),
        };
        #[cfg(not(target_os = "linux"))]
        let supervised = s.after_spawn();
        if let Err(e) = supervised {
            // Without its supervisor the child would wait forever on its first write: end it.
            process.kill_now();
            registry.release(&id);
            return Err(e);
        }
    }
    #[cfg(unix)]
    let target = KillTarget {
        pgid: process.pid as i32,
        marker: Some(marker),
        cgroup_procs: {
            #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
            let mut files = sandbox
                .as_ref()
                .map(|s| s.cgroup_procs_files())
                .unwrap_or_default();
            #[cfg(target_os = "linux")]
            files.extend(tracking.as_ref().map(|t| t.procs_file()));
            files
        },
    };
    #[cfg(windows)]
    let target = KillTarget {
        pid: process.pid,
        job: process.job.clone(),
    };
    Ok(launch(Launch {
        registry,
        req,
        id,
        process,
        target: RunTarget::Local(target),
        warnings,
        scope_key,
        hooks,
        sandbox,
        #[cfg(target_os = "linux")]
        tracking,
    }))
}

/// Start `req` in the container it names (`req.container`): the engine's exec in place of a local
/// process, the same session around it.
pub async fn start_in_container(
    registry: &'static Registry,
    req: &ExecRequest,
    hooks: SessionHooks,
    scope_key: Option<String>,
) -> Result<Arc<Session>, AgentError> {
    req.validate()?;
    let Some(spec) = &req.container else {
        return Err(AgentError::new(
            crate::error::ErrorCode::Internal,
            "start_in_container was called for a run without a container",
        ));
    };
    if req.sandbox.is_some() {
        return Err(AgentError::invalid_option(
            "host.container does not take sandbox: the container is the run's confinement. Leave sandbox out for a run in a container.",
        ));
    }
    let id = registry.reserve_id();
    let marker = session_marker(&id);
    let spawned = match crate::container::spawn(req, spec, scope_key.as_deref(), &marker).await {
        Ok(s) => s,
        Err(e) => {
            registry.release(&id);
            return Err(e);
        }
    };
    let exec = spawned.exec.clone();
    let process = process::Process::new(
        spawned.pid,
        spawned.io,
        Waiter::Container(Some(spawned.exit)),
    );
    // The run reports its last directory in the container, where only the engine reads it.
    let mut in_container = req.clone();
    in_container.cwd_report = spawned.cwd_report;
    let mut warnings = req.warnings.clone();
    warnings.extend(spawned.warnings);
    Ok(launch(Launch {
        registry,
        req: &in_container,
        id,
        process,
        target: RunTarget::Container(exec),
        warnings,
        scope_key,
        hooks,
        sandbox: None,
        #[cfg(target_os = "linux")]
        tracking: None,
    }))
}

/// The value of the run's session marker variable (`SESSION_MARKER_VAR`): `<host token>-<id>-<ms>`.
fn session_marker(id: &str) -> String {
    format!("{}-{}-{}", crate::kill::host_token(), id, now_ms())
}

/// A started run, to be made a session.
struct Launch<'a> {
    registry: &'static Registry,
    req: &'a ExecRequest,
    id: String,
    process: process::Process,
    target: RunTarget,
    warnings: Vec<String>,
    scope_key: Option<String>,
    hooks: SessionHooks,
    sandbox: Option<crate::sandbox::Armed>,
    #[cfg(target_os = "linux")]
    tracking: Option<crate::spawn::tracking::TrackingCgroup>,
}

/// The session of a started run: registered, its output pumped, its driver running.
fn launch(l: Launch<'_>) -> Arc<Session> {
    let Launch {
        registry,
        req,
        id,
        process,
        target,
        warnings,
        scope_key,
        hooks,
        sandbox,
        #[cfg(target_os = "linux")]
        tracking,
    } = l;
    let pid = process.pid;
    let (kill_tx, kill_rx) = watch::channel(None);
    let (done_tx, _) = watch::channel(false);
    // The input goes to the session; the output to the pumps below.
    let (input, output) = match process.io {
        Io::Pty(master) => {
            let terminal = Terminal::Local(master);
            (Some(Input::Pty(terminal.clone())), Output::Pty(terminal))
        }
        Io::ContainerTty(tty) => {
            let terminal = Terminal::Container(tty);
            (Some(Input::Pty(terminal.clone())), Output::Pty(terminal))
        }
        Io::Pipes {
            stdin,
            stdout,
            stderr,
        } => (stdin.map(Input::Pipe), Output::Pipes(stdout, stderr)),
    };
    let is_pty = matches!(output, Output::Pty(_));
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
        target,
        started: Instant::now(),
        state: Mutex::new(SessionState {
            collector: {
                let mut c = OutputCollector::new(req.limits, req.log_dir.clone(), is_pty);
                c.set_max_log_bytes(req.max_log_bytes);
                c.set_log_kept(req.keep_logs);
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
            last_output_at_ms: None,
            stdin_open: input.is_some(),
            finalizing: false,
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
        namespace_init: process.init.clone(),
    });
    #[cfg(target_os = "linux")]
    if let Some(init) = process.init {
        init.reap_when_done();
    }
    registry.insert(session.clone());
    let pumps = match output {
        Output::Pty(master) => vec![tokio::spawn(pump_pty(session.clone(), master))],
        Output::Pipes(out, err) => vec![
            tokio::spawn(pump(session.clone(), Stream::Stdout, out)),
            tokio::spawn(pump(session.clone(), Stream::Stderr, err)),
        ],
    };
    let plan = DrivePlan {
        timeout: req.timeout,
        grace: req.kill_grace,
        drain: req.drain_timeout,
    };
    tokio::spawn(drive(session.clone(), process.waiter, pumps, plan, kill_rx));
    session
}

/// Every directory this host makes run cgroups in (tracking cgroups, and the sandbox's limit cgroups),
/// for the watchdog that kills what is left in them when the host dies.
pub fn run_cgroup_parents() -> Vec<std::path::PathBuf> {
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
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
        Some(&req.log_dir),
        &name,
        tracked_by,
    )
    .map(Some)
}

/// The directory a local run's EXIT trap wrote into its cwd report (the report and the bash trap
/// file beside it removed).
pub(super) fn take_cwd_report(report: &std::path::Path) -> Option<String> {
    let dir = read_cwd_report(report);
    let _ = std::fs::remove_file(report);
    let _ = std::fs::remove_file(report.with_extension("bash"));
    dir.map(|d| d.trim_end_matches('\n').to_string())
        .filter(|d| !d.is_empty())
}

/// What a run's EXIT trap wrote into its cwd report: read only from a regular file, at most 64 KiB,
/// never through a link and never waiting. The file lies where the command can write (a sandboxed
/// run's temp dir), so a FIFO planted there would otherwise block this read, and the host, forever.
fn read_cwd_report(path: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(64 * 1024).read_to_string(&mut text).ok()?;
    Some(text)
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

/// Where the run's output is read from.
enum Output {
    Pipes(Reader, Reader),
    Pty(Terminal),
}

/// Reads a terminal to its end, answering cursor position queries as a terminal would.
async fn pump_pty(session: Arc<Session>, master: Terminal) {
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
    mut child: Waiter,
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
    session.mark_finalizing();
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
        Ok(s) => {
            let (code, signal) = decode_status(s);
            session.target.exit_of(code, signal, cause.is_some())
        }
        Err(_) => (None, None),
    };
    let final_cwd = match &session.cwd_report {
        Some(report) => session.target.final_cwd(report).await,
        None => None,
    };
    // A sandboxed run's report of where it ended is its own writing: a directory hidden from it is
    // one it could not have been in (a forged report left every later run of the scope refused).
    let forged = |dir: &str| {
        session
            .sandbox
            .as_ref()
            .is_some_and(|s| s.hides(std::path::Path::new(dir)))
    };
    if let Some(dir) = final_cwd.as_deref().filter(|d| !forged(d)) {
        session
            .registry
            .set_scope_cwd(session.meta.scope_key.as_deref(), dir.into());
    }
    let sandbox = session.sandbox.as_ref().map(|s| {
        let report = s.report(exit_code, exit_signal.as_deref());
        // Nothing of the run's stays behind it for other users, or later runs, to read.
        s.release_tmp();
        report
    });
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

#[cfg(all(test, unix))]
mod cwd_report_tests {
    #[test]
    fn a_cwd_report_is_read_only_from_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("final-cwd");
        std::fs::write(&file, "/somewhere\n").unwrap();
        assert_eq!(
            super::read_cwd_report(&file).as_deref(),
            Some("/somewhere\n")
        );
        // A FIFO with no writer: an open that waited would never return.
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(super::read_cwd_report(&fifo), None);
        // A link to a file elsewhere is not followed.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(super::read_cwd_report(&link), None);
        assert_eq!(super::read_cwd_report(&dir.path().join("missing")), None);
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
