//! `exec(options)`: run a command and resolve with its outcome.

use std::sync::{Arc, Mutex, Weak};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;

use super::approval::{ask_handler, JsApprovalOptions, JsApprovalSummary};
use super::errors::{object_of, split, to_napi};
use super::forward::{OutputChunk, OutputForwarder};
use super::options::{parse_exec_options, ParsedExec};
use crate::error::AgentError;
use crate::exec::{ExecCall, Finished};
use crate::session::{registry, ExecOutcome, ExitInfo, KillCause, Session, SessionHooks};

/// The result of `exec`.
#[napi(object, js_name = "ExecOutcome")]
pub struct JsExecOutcome {
    #[napi(ts_type = "'completed' | 'failed' | 'running'")]
    pub status: String,
    pub session_id: String,
    pub pid: u32,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub timed_out: bool,
    pub aborted: bool,
    pub duration_ms: f64,
    /// Aggregated stdout and stderr in arrival order, ANSI stripped; head and tail when cut.
    pub output: String,
    /// The last 2000 characters of `output`.
    pub tail: String,
    pub truncated: bool,
    /// Characters of text the command produced, cut or not.
    pub total_chars: f64,
    /// Characters dropped from the middle of `output`.
    pub omitted_chars: f64,
    /// The raw output, every byte, when `output` was cut.
    pub output_file: Option<String>,
    pub warnings: Vec<String>,
    pub reason: Option<String>,
    pub cwd: String,
    /// Processes that survived a kill's SIGKILL round.
    pub survivors: Vec<u32>,
    /// Processes still running after the command exited (they held its output open).
    pub left_running: Vec<u32>,
    /// How the approval gate decided, when the `approval` option was given.
    pub approval: Option<JsApprovalSummary>,
    /// With `trackCwd`: the directory the shell ended in.
    pub final_cwd: Option<String>,
    /// For sandboxed runs: what was refused, which limit ended the run, how it was enforced.
    #[napi(ts_type = "SandboxReport")]
    pub sandbox: Option<super::sandbox::JsSandboxReport>,
}

impl From<ExecOutcome> for JsExecOutcome {
    fn from(o: ExecOutcome) -> Self {
        JsExecOutcome {
            status: o.status.as_str().to_string(),
            session_id: o.session_id,
            pid: o.pid,
            exit_code: o.exit_code,
            exit_signal: o.exit_signal,
            timed_out: o.timed_out,
            aborted: o.aborted,
            duration_ms: o.duration_ms as f64,
            output: o.output,
            tail: o.tail,
            truncated: o.truncated,
            total_chars: o.total_chars as f64,
            omitted_chars: o.omitted_chars as f64,
            output_file: o.output_file,
            warnings: o.warnings,
            reason: o.reason,
            cwd: o.cwd,
            survivors: o.survivors,
            left_running: o.left_running,
            approval: None,
            final_cwd: o.final_cwd,
            sandbox: o.sandbox.map(Into::into),
        }
    }
}

/// What `onExit` receives.
#[napi(object, js_name = "ExitInfo")]
#[derive(Clone)]
pub struct JsExitInfo {
    pub session_id: String,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub timed_out: bool,
    pub duration_ms: f64,
}

impl JsExitInfo {
    fn new(session: &Session, exit: &ExitInfo) -> Self {
        JsExitInfo {
            session_id: session.meta.id.clone(),
            exit_code: exit.exit_code,
            exit_signal: exit.exit_signal.clone(),
            timed_out: exit.timed_out(),
            duration_ms: exit.duration_ms as f64,
        }
    }
}

/// Options of `exec`. Declared for the type definitions; values are read and checked one by one.
#[napi(object, js_name = "ExecOptions")]
pub struct JsExecOptions {
    /// The shell command line.
    pub command: String,
    /// Working directory (default: the process's cwd).
    pub cwd: Option<String>,
    /// Variables added over the inherited environment.
    pub env: Option<std::collections::HashMap<String, String>>,
    /// Model-supplied variables: OpenClaw's host env policy applies (no PATH, no loader or shell
    /// variables; `ERR_ENV_FORBIDDEN` with OpenClaw's texts). Applied before `env`.
    pub model_env: Option<std::collections::HashMap<String, String>>,
    /// `"openclaw"`: the inherited environment loses the dangerous variables (LD_*, NODE_OPTIONS, ...).
    #[napi(ts_type = "'openclaw' | 'none'")]
    pub host_env_policy: Option<String>,
    /// Start from the host's environment (default true).
    pub inherit_env: Option<bool>,
    /// Shell program (default `$SHELL`, fish replaced by bash, else `sh`).
    pub shell: Option<String>,
    #[napi(ts_type = "boolean | { cols?: number; rows?: number }")]
    pub pty: Option<serde_json::Value>,
    /// Total lifetime in ms; 0 disables (default 1800000).
    pub timeout_ms: Option<f64>,
    /// SIGTERM to SIGKILL grace in ms (default 3000).
    pub kill_grace_ms: Option<f64>,
    /// How long output is still read after the shell exits while descendants hold it open (default 2000).
    pub drain_timeout_ms: Option<f64>,
    #[napi(ts_type = "'closed' | 'pipe'")]
    pub stdin: Option<String>,
    /// Aggregated output cap in characters (default 200000).
    pub max_output_chars: Option<f64>,
    /// Per-stream cap of output not yet polled (default 30000).
    pub pending_max_output_chars: Option<f64>,
    /// Size cap of one run's log file in bytes (default 67108864, 64 MiB).
    pub max_log_bytes: Option<f64>,
    /// Keep the output log file (`outputFile`) after the session is cleared, removed or expired. By
    /// default it is deleted then (and at host exit), so logs do not pile up in the temp dir; a
    /// foreground run's log lives as long as a finished session would (the session TTL).
    pub keep_logs: Option<bool>,
    /// Write the raw log file (`outputFile`) once the output passes this many chars, even when the
    /// text is not cut: for callers that show less text than they keep. 0 makes the file at the
    /// start, so a run handed to the background names it before its first byte.
    pub log_above_chars: Option<f64>,
    /// Directory for full output logs (default `<tmpdir>/agent-exec-<uid>`).
    pub log_dir: Option<String>,
    /// Sessions are visible only to callers with the same scope key.
    pub scope_key: Option<String>,
    #[napi(ts_type = "(chunk: OutputChunk) => void")]
    pub on_output: Option<serde_json::Value>,
    #[napi(ts_type = "(info: ExitInfo) => void")]
    pub on_exit: Option<serde_json::Value>,
    /// Check the command against an approval policy (and ask `onApproval`) before running it.
    pub approval: Option<JsApprovalOptions>,
    /// Wait this long, then resolve `running` and keep the run as a background session.
    pub yield_ms: Option<f64>,
    /// Resolve `running` at once and keep the run as a background session.
    pub background: Option<bool>,
    /// Report the directory the shell ended in (`finalCwd`) and start the scope's next `exec` without a
    /// `cwd` there, so `cd packages/x` then `ls` behaves as in a terminal.
    pub track_cwd: Option<bool>,
    /// Skip the PTY and use the pipe fallback, with its warning (for testing the fallback path).
    pub pty_force_fallback: Option<bool>,
    /// Run inside a sandbox: writes only under the writable roots (default the cwd) and a private
    /// temp dir, no IP network unless `network: true`, optional resource limits. Throws
    /// `ERR_SANDBOX_UNAVAILABLE` when the host cannot enforce it (see `sandboxCapabilities()`).
    #[napi(ts_type = "boolean | SandboxOptions")]
    pub sandbox: Option<serde_json::Value>,
    /// Where the run goes instead of this machine's shell: `{ container: { image | id, engine? } }`
    /// runs it in a container of a Docker Engine API (Docker, Podman, a remote engine), the same
    /// session around it. Throws `ERR_CONTAINER_ENGINE` when the engine cannot be reached.
    #[napi(ts_type = "ExecHost")]
    pub host: Option<serde_json::Value>,
    /// Aborting ends a foreground run (its whole tree); a backgrounded run ignores it.
    #[napi(ts_type = "AbortSignal")]
    pub signal: Option<serde_json::Value>,
}

type ExitFn = ThreadsafeFunction<JsExitInfo, (), JsExitInfo, Status, false, true>;

/// Connects a JS abort signal to a session that may not exist yet.
#[derive(Default)]
struct AbortLatch {
    state: Mutex<(bool, Option<Weak<Session>>)>,
}

impl AbortLatch {
    fn fire(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.0 = true;
        if let Some(s) = st.1.as_ref().and_then(Weak::upgrade) {
            s.request_kill(KillCause::Aborted);
        }
    }

    fn attach(&self, session: &Arc<Session>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.1 = Some(Arc::downgrade(session));
        if st.0 {
            session.request_kill(KillCause::Aborted);
        }
    }
}

fn listen_for_abort(env: &Env, signal: &Object, latch: Arc<AbortLatch>) -> Result<()> {
    if signal.get::<bool>("aborted")?.unwrap_or(false) {
        latch.fire();
        return Ok(());
    }
    type AbortListener<'a> = Function<'a, (), ()>;
    let add: Option<Function<'_, FnArgs<(String, AbortListener<'_>)>, ()>> =
        signal.get("addEventListener")?;
    let Some(add) = add else {
        return Err(napi::Error::new(
            Status::InvalidArg,
            "The signal option must be an AbortSignal (it has no addEventListener).",
        ));
    };
    let listener = env.create_function_from_closure::<(), (), _>("agentExecAbort", move |_| {
        latch.fire();
        Ok(())
    })?;
    add.apply(signal, FnArgs::from(("abort".to_string(), listener)))?;
    Ok(())
}

/// Run a command. Resolves with the outcome (a failed command is a result, not a rejection); rejects
/// with a typed error (`code`) only for invalid input and spawn failures.
#[napi(
    ts_args_type = "options: ExecOptions",
    ts_return_type = "Promise<ExecOutcome>"
)]
pub fn exec<'env>(
    env: &'env Env,
    options: Unknown<'env>,
) -> Result<PromiseRaw<'env, JsExecOutcome>> {
    let parsed: ParsedExec = match split(parse_exec_options(env, options))? {
        Ok(p) => p,
        Err(e) => return rejected(env, e),
    };
    let obj: Object = object_of(env, &options)?.expect("the options were parsed as an object");
    let forwarder = if parsed.has_on_output {
        Some(OutputForwarder::new(obj.get("onOutput")?.expect("checked")))
    } else {
        None
    };
    let on_exit: Option<ExitFn> = if parsed.has_on_exit {
        obj.get("onExit")?
    } else {
        None
    };
    install_host_exit_cleanup(env)?;
    let latch = Arc::new(AbortLatch::default());
    if parsed.has_signal {
        let signal: Object = obj.get("signal")?.expect("checked");
        listen_for_abort(env, &signal, latch.clone())?;
    }

    let mut hooks = SessionHooks::default();
    if let Some(f) = forwarder.clone() {
        hooks.on_output = Some(Arc::new(move |session, stream, text| {
            f.push(session, stream, text)
        }));
    }
    if let Some(tsfn) = on_exit {
        let tsfn = Arc::new(tsfn);
        hooks.on_exit = Some(Arc::new(move |session, exit| {
            tsfn.call(
                JsExitInfo::new(session, exit),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
        }));
    }

    let ParsedExec {
        request,
        scope_key,
        yield_after,
        approval,
        ..
    } = parsed;
    let (approval, handler) = match approval {
        Some((opts, handler)) => (Some(opts), handler),
        None => (None, None),
    };
    let cwd = request.cwd.display().to_string();
    let call = ExecCall {
        request,
        scope_key,
        yield_after,
        approval,
    };
    env.spawn_future_with_callback(
        async move {
            let asker = handler.as_ref().map(|h| move |req| ask_handler(h, req));
            let finished =
                crate::exec::execute(registry::global(), call, hooks, asker, |session| {
                    latch.attach(session)
                })
                .await;
            if let (Ok(Finished::Ran { exited: true, .. }), Some(f)) = (&finished, forwarder) {
                // Every chunk reaches onOutput before the promise resolves.
                f.flushed().await;
            }
            Ok(finished)
        },
        move |env, result: std::result::Result<Finished, AgentError>| match result {
            Ok(Finished::Ran { outcome, gate, .. }) => {
                let mut js = JsExecOutcome::from(*outcome);
                js.approval = gate.as_deref().map(JsApprovalSummary::from);
                Ok(js)
            }
            Ok(Finished::Denied { gate }) => Ok(denied(cwd, &gate)),
            Err(e) => Err(to_napi(env, &e)),
        },
    )
}

/// Once per process: sessions die with the host (cleanup hook for normal exits, watchdog for the rest).
fn install_host_exit_cleanup(env: &Env) -> Result<()> {
    static INSTALLED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    env.add_env_cleanup_hook((), |_| {
        registry::global().kill_all_now();
        // Allowlist use times still queued.
        crate::approval::use_log::flush();
        // Output logs nobody asked to keep, and the temp dirs of sandboxed runs still alive.
        registry::global().delete_all_logs();
        crate::sandbox::remove_live_tmp_dirs();
        // Fresh cgroups made ahead for runs that will not come.
        #[cfg(target_os = "linux")]
        crate::spawn::tracking::drain_stock();
    })?;
    // `process.exit()` ends Node without its cleanup hooks, but through the C library's exit, which
    // runs `atexit` handlers: the files the hook would remove go there too.
    #[cfg(unix)]
    {
        extern "C" fn at_exit() {
            registry::global().delete_all_logs();
            crate::sandbox::remove_live_tmp_dirs();
        }
        // SAFETY: registers a plain function with no arguments.
        unsafe { libc::atexit(at_exit) };
    }
    crate::watchdog::ensure_watchdog(crate::session::run_cgroup_parents);
    let _ = INSTALLED.set(());
    Ok(())
}

/// A run the approval gate refused: a result with the reason, nothing spawned.
fn denied(cwd: String, gate: &crate::approval::gate::GateResult) -> JsExecOutcome {
    JsExecOutcome {
        status: "failed".into(),
        session_id: String::new(),
        pid: 0,
        exit_code: None,
        exit_signal: None,
        timed_out: false,
        aborted: false,
        duration_ms: 0.0,
        output: String::new(),
        tail: String::new(),
        truncated: false,
        total_chars: 0.0,
        omitted_chars: 0.0,
        output_file: None,
        warnings: Vec::new(),
        reason: Some(format!("exec denied: {}", gate.reason)),
        cwd,
        survivors: Vec::new(),
        left_running: Vec::new(),
        approval: Some(JsApprovalSummary::from(gate)),
        final_cwd: None,
        sandbox: None,
    }
}

/// A promise already rejected with a typed error.
fn rejected<'env, T: ToNapiValue + Send + 'static>(
    env: &'env Env,
    e: AgentError,
) -> Result<PromiseRaw<'env, T>> {
    env.spawn_future_with_callback(async move { Ok(e) }, |env, e: AgentError| -> Result<T> {
        Err(to_napi(env, &e))
    })
}

// Keeps `OutputChunk` in the type definitions even though it only appears in callbacks.
#[allow(dead_code)]
fn _chunk_type(_: OutputChunk) {}
