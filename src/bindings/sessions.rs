//! The session API: list, poll, readLog, writeStdin, kill, clear, remove, TTL.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::{Env, JsValue, ValueType};
use napi_derive::napi;

use crate::session::keys::{openclaw_order, KeyItem};

use super::errors::{
    object_of, reject, settle, split, throw, to_napi, typed, AgentResult, BindResult,
};
use super::fields::Fields;
use crate::error::{AgentError, ErrorCode};
use crate::session::ops::{self, SessionInfo};
use crate::session::registry;
use crate::session::Session;

#[napi(object, js_name = "SessionInfo")]
pub struct JsSessionInfo {
    pub session_id: String,
    #[napi(ts_type = "'running' | 'completed' | 'failed'")]
    pub status: String,
    pub pid: u32,
    /// Epoch ms.
    pub started_at: f64,
    pub ended_at: Option<f64>,
    pub runtime_ms: f64,
    pub cwd: String,
    pub command: String,
    /// The last 2000 characters of output.
    pub tail: String,
    pub truncated: bool,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub scope_key: Option<String>,
    pub pty: bool,
    pub backgrounded: bool,
    #[napi(ts_type = "'unknown' | 'normal' | 'application'")]
    pub cursor_key_mode: String,
    /// Ended by `killSession`: a requested kill rather than a failure of the run's own.
    pub killed: bool,
    /// Epoch ms of the last output (absent before any).
    pub last_output_at: Option<f64>,
    /// Milliseconds since the last output (or the start) of a running session, when this was read:
    /// a run quiet for long with `stdinWritable` may be waiting for input.
    pub idle_ms: Option<f64>,
    /// A running session whose input can still be written (a pipe not closed, or a PTY).
    pub stdin_writable: bool,
    /// The process exited and its last output is being read: nothing can be written any more.
    pub finalizing: bool,
    /// Ended by its timeout.
    pub timed_out: bool,
    /// Ended by the caller's abort signal (a foreground run).
    pub aborted: bool,
    /// The log file with every raw byte, once the text was cut.
    pub output_file: Option<String>,
}

impl From<SessionInfo> for JsSessionInfo {
    fn from(i: SessionInfo) -> Self {
        JsSessionInfo {
            session_id: i.id,
            status: i.status.as_str().to_string(),
            pid: i.pid,
            started_at: i.started_at_ms as f64,
            ended_at: i.ended_at_ms.map(|v| v as f64),
            runtime_ms: i.runtime_ms as f64,
            cwd: i.cwd,
            command: i.command,
            tail: i.tail,
            truncated: i.truncated,
            exit_code: i.exit_code,
            exit_signal: i.exit_signal,
            scope_key: i.scope_key,
            pty: i.pty,
            backgrounded: i.backgrounded,
            cursor_key_mode: i.cursor_key_mode.to_string(),
            killed: i.killed,
            idle_ms: i.ended_at_ms.is_none().then(|| {
                let since = i.last_output_at_ms.unwrap_or(i.started_at_ms);
                agent_exec_core::util::now_ms().saturating_sub(since) as f64
            }),
            last_output_at: i.last_output_at_ms.map(|v| v as f64),
            stdin_writable: i.stdin_writable,
            finalizing: i.finalizing,
            timed_out: i.timed_out,
            aborted: i.aborted,
            output_file: i.output_file,
        }
    }
}

#[napi(object, js_name = "PollResult")]
pub struct JsPollResult {
    pub session_id: String,
    #[napi(ts_type = "'running' | 'completed' | 'failed'")]
    pub status: String,
    /// stdout not drained by an earlier poll.
    pub stdout: String,
    /// stderr not drained by an earlier poll.
    pub stderr: String,
    pub exited: bool,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub reason: Option<String>,
    /// The whole aggregated output so far (head and tail when cut).
    pub output: String,
    pub tail: String,
    pub truncated: bool,
    /// The pending buffer dropped older undrained text (it keeps the newest).
    pub pending_truncated: bool,
    /// The log file with every raw byte, once the text was cut (deleted with the session unless
    /// `keepLogs`).
    pub output_file: Option<String>,
    /// Characters of output dropped from the pending buffers since the previous poll (nobody polled
    /// in time); they are in `readLog` and the log file.
    pub dropped_chars: f64,
    /// A full-screen program holds the PTY's alternate screen: `readScreen` shows what it draws.
    pub alternate_screen: bool,
    /// Suggested wait before polling again; absent once the session exited.
    pub retry_in_ms: Option<f64>,
    /// Whether the run was handed to the background (a foreground run is still awaited by `exec`).
    pub backgrounded: bool,
    /// Ended by its timeout.
    pub timed_out: bool,
    /// Ended by `killSession`.
    pub killed: bool,
    pub command: String,
    pub cwd: String,
    pub pty: bool,
    /// For sandboxed runs that ended: what the sandbox refused and which limit ended the run.
    pub sandbox: Option<super::sandbox::JsSandboxReport>,
}

#[napi(object, js_name = "LogResult")]
pub struct JsLogResult {
    pub session_id: String,
    #[napi(ts_type = "'running' | 'completed' | 'failed'")]
    pub status: String,
    /// The selected lines, joined by `\n`.
    pub text: String,
    pub total_lines: u32,
    pub total_chars: f64,
    pub truncated: bool,
    /// Paging hint when the default 200-line window hid earlier lines.
    pub note: Option<String>,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub backgrounded: bool,
    pub command: String,
}

#[napi(object, js_name = "KillResult")]
pub struct JsKillResult {
    pub session_id: String,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    /// Processes that survived SIGKILL (normally empty).
    pub survivors: Vec<u32>,
}

#[napi(object, js_name = "SessionScope")]
pub struct JsSessionScope {
    /// Only sessions started with the same scopeKey are visible; leave out to see all.
    pub scope_key: Option<String>,
}

#[napi(object, js_name = "PollOptions")]
pub struct JsPollOptions {
    pub scope_key: Option<String>,
    /// Wait up to this many ms (0..120000) for the exit (or, with `untilOutput`, new output).
    pub timeout_ms: Option<f64>,
    /// End the wait as soon as output no poll has taken is there (later OpenClaw), not only at exit.
    pub until_output: Option<bool>,
    /// `false`: wait as asked but take nothing; the output stays for the next poll (`stdout` and
    /// `stderr` come back empty). For a caller that may give up waiting (an abort) and lose nothing.
    pub take: Option<bool>,
}

#[napi(object, js_name = "LogOptions")]
pub struct JsLogOptions {
    pub scope_key: Option<String>,
    /// First line (0-based).
    pub offset: Option<f64>,
    /// Number of lines.
    pub limit: Option<f64>,
}

#[napi(object, js_name = "WriteOptions")]
pub struct JsWriteOptions {
    pub scope_key: Option<String>,
    /// Close stdin after writing.
    pub eof: Option<bool>,
}

struct Common {
    scope: Option<String>,
    timeout_ms: Option<f64>,
    offset: Option<f64>,
    limit: Option<f64>,
    eof: bool,
    until_output: bool,
    take: bool,
}

fn parse_common(env: &Env, options: Option<Unknown>) -> BindResult<Common> {
    let mut c = Common {
        scope: None,
        timeout_ms: None,
        offset: None,
        limit: None,
        eof: false,
        until_output: false,
        take: true,
    };
    let Some(options) = options else {
        return Ok(c);
    };
    if matches!(options.get_type()?, ValueType::Undefined | ValueType::Null) {
        return Ok(c);
    }
    let Some(obj) = object_of(env, &options)? else {
        return Err(AgentError::invalid_option(
            "Session options must be an object such as { scopeKey: \"agent:main\" }.",
        )
        .into());
    };
    let f = Fields { obj };
    c.scope = f.string("scopeKey", ErrorCode::InvalidOption)?;
    c.timeout_ms = f.non_negative("timeoutMs")?;
    c.offset = f.non_negative("offset")?;
    c.limit = f.non_negative("limit")?;
    c.eof = f.boolean("eof")?.unwrap_or(false);
    c.until_output = f.boolean("untilOutput")?.unwrap_or(false);
    c.take = f.boolean("take")?.unwrap_or(true);
    Ok(c)
}

fn session_id(env: &Env, id: &Unknown) -> BindResult<String> {
    match typed::<String>(env, id, ValueType::String)? {
        Some(s) => Ok(s),
        None => Err(AgentError::new(
            ErrorCode::UnknownSession,
            "The session id must be a string such as \"calm-harbor\" (see listSessions).",
        )
        .into()),
    }
}

fn find(id: &str, scope: Option<&str>) -> AgentResult<Arc<Session>> {
    registry::global().find(id, scope).ok_or_else(|| {
        AgentError::new(
            ErrorCode::UnknownSession,
            format!("No session found for {id}. It may have ended and expired, belong to another scope, or never existed; listSessions shows the current ones."),
        )
    })
}

/// Resolve id + options, or produce the typed error.
fn lookup(env: &Env, id: Unknown, options: Option<Unknown>) -> BindResult<(Arc<Session>, Common)> {
    let id = session_id(env, &id)?;
    let common = parse_common(env, options)?;
    let session = find(&id, common.scope.as_deref())?;
    Ok((session, common))
}

/// Background sessions (running and recently finished) visible in the scope: running first, each
/// group newest first.
#[napi(ts_args_type = "options?: SessionScope")]
pub fn list_sessions(env: &Env, options: Option<Unknown>) -> Result<Vec<JsSessionInfo>> {
    let common = throw(env, parse_common(env, options))?;
    let (mut running, mut finished) = registry::global().list(common.scope.as_deref());
    running.sort_by_key(|s| std::cmp::Reverse(s.meta.started_at_ms));
    finished.sort_by_key(|s| std::cmp::Reverse(s.meta.started_at_ms));
    Ok(running
        .iter()
        .chain(finished.iter())
        .map(|s| ops::info(s).into())
        .collect())
}

/// One session as `listSessions` describes it (foreground runs still going included), or `null` when
/// the scope has no session with that id: a lookup that costs one map access, not a list.
#[napi(ts_args_type = "sessionId: string, options?: SessionScope")]
pub fn get_session(
    env: &Env,
    id: Unknown,
    options: Option<Unknown>,
) -> Result<Option<JsSessionInfo>> {
    let id = throw(env, session_id(env, &id))?;
    let common = throw(env, parse_common(env, options))?;
    Ok(registry::global()
        .find(&id, common.scope.as_deref())
        .map(|s| ops::info(&s).into()))
}

/// Claim the one announcement of a session's exit (the exec tool's "Exec completed" notice): true the
/// first time for a session that has ended, false after that, while it runs, or for an unknown id. The
/// flag lives on the session, so it goes when the session does.
#[napi(ts_args_type = "sessionId: string")]
pub fn claim_exit_notice(env: &Env, id: Unknown) -> Result<bool> {
    let id = throw(env, session_id(env, &id))?;
    Ok(registry::global()
        .find(&id, None)
        .is_some_and(|s| s.claim_exit_notice()))
}

/// What changed in the session list since a tick: what `listSessions` in `js/` is built from.
#[napi(object, js_name = "SessionChanges")]
pub struct JsSessionChanges {
    /// The tick to ask from next time.
    pub tick: f64,
    /// `changed` is the whole list: drop every earlier copy.
    pub full: bool,
    pub changed: Vec<JsSessionInfo>,
    pub removed: Vec<String>,
}

/// The sessions `listSessions` would show that changed after tick `since` (0: all of them), and the
/// ids removed since. For a caller that keeps its own copy of the list: with 10,000 live sessions,
/// listing costs what changed, not what exists.
#[napi(ts_args_type = "since: number, options?: SessionScope")]
pub fn session_changes(
    env: &Env,
    since: Unknown,
    options: Option<Unknown>,
) -> Result<JsSessionChanges> {
    let common = throw(env, parse_common(env, options))?;
    let kind = since.get_type()?;
    let since = match kind {
        ValueType::Number => since.coerce_to_number()?.get_double()?,
        _ => f64::NAN,
    };
    if !(since.is_finite() && since >= 0.0 && since.fract() == 0.0) {
        let got = match kind {
            ValueType::Number => since.to_string(),
            other => format!("a value of type {other}"),
        };
        let e = AgentError::invalid_option(format!(
            "since must be the tick an earlier sessionChanges call returned (a whole number, 0 or more), got {got}."
        ));
        return Err(to_napi(env, &e));
    }
    let changes = registry::global().changes_since(since as u64, common.scope.as_deref());
    Ok(JsSessionChanges {
        tick: changes.tick as f64,
        full: changes.full,
        changed: changes
            .changed
            .iter()
            .map(|s| ops::info(s).into())
            .collect(),
        removed: changes.removed,
    })
}

/// Take the output not yet drained, per stream, optionally waiting for output or exit first.
#[napi(
    ts_args_type = "sessionId: string, options?: PollOptions",
    ts_return_type = "Promise<PollResult>"
)]
pub fn poll_session<'env>(
    env: &'env Env,
    id: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, JsPollResult>> {
    let looked = split(lookup(env, id, options))?;
    env.spawn_future_with_callback(
        settle(async move {
            let (session, common) = looked?;
            let wait = Duration::from_millis(common.timeout_ms.unwrap_or(0.0) as u64);
            let until = if common.until_output {
                ops::PollUntil::Output
            } else {
                ops::PollUntil::Exit
            };
            let poll = if common.take {
                ops::poll(&session, wait, until).await?
            } else {
                ops::wait_for(&session, wait, until).await?;
                ops::PollResult::untaken(&session)
            };
            let output = session.lock().collector.aggregated();
            let sandbox = session.exit_info().and_then(|e| e.sandbox).map(Into::into);
            Ok(JsPollResult {
                session_id: poll.info.id.clone(),
                status: poll.info.status.as_str().to_string(),
                stdout: poll.stdout,
                stderr: poll.stderr,
                exited: poll.exited,
                exit_code: poll.info.exit_code,
                exit_signal: poll.info.exit_signal.clone(),
                reason: poll.reason,
                output,
                tail: poll.info.tail.clone(),
                truncated: poll.info.truncated,
                pending_truncated: poll.pending_truncated,
                output_file: poll.info.output_file.clone(),
                dropped_chars: poll.dropped_chars as f64,
                alternate_screen: poll.alternate_screen,
                retry_in_ms: poll.retry_in_ms.map(|v| v as f64),
                backgrounded: poll.info.backgrounded,
                timed_out: poll.info.timed_out,
                killed: poll.info.killed,
                command: poll.info.command.clone(),
                cwd: poll.info.cwd.clone(),
                pty: poll.info.pty,
                sandbox,
            })
        }),
        |env, r: AgentResult<JsPollResult>| reject(env, r),
    )
}

/// Lines of a session's output: no offset and no limit gives the last 200 lines (with a paging note).
#[napi(ts_args_type = "sessionId: string, options?: LogOptions")]
pub fn read_log(env: &Env, id: Unknown, options: Option<Unknown>) -> Result<JsLogResult> {
    let (session, common) = throw(env, lookup(env, id, options))?;
    let slice = ops::read_log(
        &session,
        common.offset.map(|v| v as usize),
        common.limit.map(|v| v as usize),
    );
    let info = ops::info(&session);
    Ok(JsLogResult {
        session_id: info.id,
        status: info.status.as_str().to_string(),
        text: slice.text,
        total_lines: slice.total_lines as u32,
        total_chars: slice.total_chars as f64,
        truncated: info.truncated,
        note: slice.note,
        exit_code: info.exit_code,
        exit_signal: info.exit_signal,
        backgrounded: info.backgrounded,
        command: info.command,
    })
}

/// Write to a running session's stdin (`stdin: "pipe"` runs and PTYs). Resolves with the bytes written.
#[napi(
    ts_args_type = "sessionId: string, data: string | Buffer, options?: WriteOptions",
    ts_return_type = "Promise<number>"
)]
pub fn write_stdin<'env>(
    env: &'env Env,
    id: Unknown<'env>,
    data: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, u32>> {
    let bytes: AgentResult<Vec<u8>> = match data.get_type()? {
        ValueType::String => Ok(typed::<String>(env, &data, ValueType::String)?
            .unwrap_or_default()
            .into_bytes()),
        ValueType::Object if data.is_buffer()? => {
            Ok(typed::<Buffer>(env, &data, ValueType::Object)?
                .map(|b| b.to_vec())
                .unwrap_or_default())
        }
        _ => Err(AgentError::invalid_option(
            "writeStdin data must be a string or a Buffer.",
        )),
    };
    let looked = split(lookup(env, id, options))?;
    env.spawn_future_with_callback(
        settle(async move {
            let bytes = bytes?;
            let (session, common) = looked?;
            ops::write_stdin(&session, &bytes, common.eof)
                .await
                .map(|n| n as u32)
        }),
        |env, r: AgentResult<u32>| reject(env, r),
    )
}

/// SIGTERM to the whole tree, the grace period, then SIGKILL; resolves once the tree is gone.
#[napi(
    ts_args_type = "sessionId: string, options?: SessionScope",
    ts_return_type = "Promise<KillResult>"
)]
pub fn kill_session<'env>(
    env: &'env Env,
    id: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, JsKillResult>> {
    let looked = split(lookup(env, id, options))?;
    env.spawn_future_with_callback(
        settle(async move {
            let (session, _) = looked?;
            ops::kill(&session).await.map(|exit| JsKillResult {
                session_id: session.meta.id.clone(),
                exit_code: exit.exit_code,
                exit_signal: exit.exit_signal,
                survivors: exit.survivors,
            })
        }),
        |env, r: AgentResult<JsKillResult>| reject(env, r),
    )
}

/// Forget a finished session.
#[napi(ts_args_type = "sessionId: string, options?: SessionScope")]
pub fn clear_session(env: &Env, id: Unknown, options: Option<Unknown>) -> Result<()> {
    let (session, _) = throw(env, lookup(env, id, options))?;
    if !session.is_exited() {
        return Err(to_napi(
            env,
            &AgentError::new(
                ErrorCode::SessionRunning,
                format!(
                    "Session {} is still running; kill it first, or use removeSession.",
                    session.meta.id
                ),
            ),
        ));
    }
    registry::global().forget(&session.meta.id);
    Ok(())
}

/// Kill a running session (whole tree) and forget it; forget a finished one. Resolves true if a
/// running session had to be killed.
#[napi(
    ts_args_type = "sessionId: string, options?: SessionScope",
    ts_return_type = "Promise<boolean>"
)]
pub fn remove_session<'env>(
    env: &'env Env,
    id: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, bool>> {
    let looked = split(lookup(env, id, options))?;
    env.spawn_future_with_callback(
        settle(async move {
            let (session, _) = looked?;
            let was_running = ops::kill(&session).await.is_ok();
            registry::global().forget(&session.meta.id);
            Ok(was_running)
        }),
        |env, r: AgentResult<bool>| reject(env, r),
    )
}

/// How long finished background sessions are kept (ms). Takes effect at once.
#[napi(ts_args_type = "ttlMs: number")]
pub fn set_session_ttl(env: &Env, ttl_ms: Unknown) -> Result<()> {
    let ms = typed::<f64>(env, &ttl_ms, ValueType::Number)?.unwrap_or(f64::NAN);
    if !ms.is_finite() || ms < 0.0 {
        return Err(to_napi(
            env,
            &AgentError::invalid_option("setSessionTtl needs a finite number of ms, at least 0."),
        ));
    }
    registry::global().set_ttl(Duration::from_millis(ms as u64));
    Ok(())
}

#[napi]
pub fn get_session_ttl() -> f64 {
    registry::global().ttl().as_millis() as f64
}

#[napi(object, js_name = "SendKeysOptions")]
pub struct JsSendKeysOptions {
    pub scope_key: Option<String>,
    /// Key tokens: `enter`, `C-c`, `M-x`, `S-Tab`, `^D`, `up`, `f5`, `kp7`, or literal text.
    pub keys: Option<Vec<String>>,
    /// Bytes as hex (`"1b"`, `"0x03"`).
    pub hex: Option<Vec<String>>,
    /// Text sent first, as is.
    pub literal: Option<String>,
}

#[napi(object, js_name = "SendKeysResult")]
pub struct JsSendKeysResult {
    pub session_id: String,
    pub bytes: u32,
    /// Keys that were not understood (sent literally) and invalid hex bytes (skipped).
    pub warnings: Vec<String>,
}

#[napi(object, js_name = "PasteOptions")]
pub struct JsPasteOptions {
    pub scope_key: Option<String>,
    /// Wrap in bracketed-paste markers. Default: when the program turned bracketed paste mode on
    /// (`ESC[?2004h`), as a terminal does.
    pub bracketed: Option<bool>,
}

#[napi(object, js_name = "ResizeOptions")]
pub struct JsResizeOptions {
    pub scope_key: Option<String>,
}

/// Send keys in OpenClaw's key language. Unmodified arrows are refused (ERR_CURSOR_KEY_MODE_UNKNOWN)
/// until a PTY application has shown whether it wants CSI or SS3 arrows.
#[napi(
    ts_args_type = "sessionId: string, options: SendKeysOptions",
    ts_return_type = "Promise<SendKeysResult>"
)]
pub fn send_keys<'env>(
    env: &'env Env,
    id: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, JsSendKeysResult>> {
    let parsed = split((|| -> BindResult<Vec<KeyItem>> {
        let Some(obj) = options
            .as_ref()
            .map(|o| object_of(env, o))
            .transpose()?
            .flatten()
        else {
            return Err(AgentError::invalid_option(
                "sendKeys needs an options object with keys, hex or literal.",
            )
            .into());
        };
        let f = Fields { obj };
        let keys = key_items(&f)?;
        let hex = f.strings("hex")?;
        let literal = f.string("literal", ErrorCode::InvalidOption)?;
        // OpenClaw's order for its fields: literal, hex, then keys (which may hold their own
        // literal and hex steps, sent where they stand).
        let mut items = openclaw_order(&[], &hex, literal.as_deref());
        items.extend(keys);
        Ok(items)
    })())?;
    let looked = split(lookup(env, id, options))?;
    env.spawn_future_with_callback(
        settle(async move {
            let items = parsed?;
            let (session, _) = looked?;
            ops::send_keys(&session, &items)
                .await
                .map(|enc| JsSendKeysResult {
                    session_id: session.meta.id.clone(),
                    bytes: enc.data.len() as u32,
                    warnings: enc.warnings,
                })
        }),
        |env, r: AgentResult<JsSendKeysResult>| reject(env, r),
    )
}

/// Paste text, bracketed (`ESC[200~ ... ESC[201~`) when the program enabled bracketed paste or
/// `bracketed: true` says so. Resolves with the bytes sent.
#[napi(
    ts_args_type = "sessionId: string, text: string, options?: PasteOptions",
    ts_return_type = "Promise<number>"
)]
pub fn paste_text<'env>(
    env: &'env Env,
    id: Unknown<'env>,
    text: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, u32>> {
    let text: AgentResult<String> = typed(env, &text, ValueType::String)?
        .ok_or_else(|| AgentError::invalid_option("pasteText needs the text as a string."));
    let bracketed = split(
        match options
            .as_ref()
            .map(|o| object_of(env, o))
            .transpose()?
            .flatten()
        {
            Some(obj) => Fields { obj }.boolean("bracketed"),
            None => Ok(None),
        },
    )?;
    let looked = split(lookup(env, id, options))?;
    env.spawn_future_with_callback(
        settle(async move {
            let (text, bracketed) = match (text, bracketed) {
                (Ok(t), Ok(b)) => (t, b),
                (Err(e), _) | (_, Err(e)) => return Err(e),
            };
            let (session, _) = looked?;
            ops::paste(&session, &text, bracketed)
                .await
                .map(|n| n as u32)
        }),
        |env, r: AgentResult<u32>| reject(env, r),
    )
}

/// Resize a PTY session.
#[napi(
    ts_args_type = "sessionId: string, cols: number, rows: number, options?: ResizeOptions",
    ts_return_type = "Promise<void>"
)]
pub fn resize_pty<'env>(
    env: &'env Env,
    id: Unknown<'env>,
    cols: Unknown<'env>,
    rows: Unknown<'env>,
    options: Option<Unknown<'env>>,
) -> Result<PromiseRaw<'env, ()>> {
    let dim = |v: &Unknown| -> Result<Option<u16>> {
        let n = typed::<f64>(env, v, ValueType::Number)?.unwrap_or(f64::NAN);
        Ok((n.is_finite() && n >= 1.0 && n <= u16::MAX as f64).then_some(n as u16))
    };
    let size = match (dim(&cols)?, dim(&rows)?) {
        (Some(c), Some(r)) => Ok((c, r)),
        _ => Err(AgentError::invalid_option(
            "resizePty needs cols and rows as whole numbers from 1 to 65535.",
        )),
    };
    let looked = split(lookup(env, id, options))?;
    env.spawn_future_with_callback(
        settle(async move {
            let (cols, rows) = size?;
            let (session, _) = looked?;
            ops::resize(&session, cols, rows).await
        }),
        |env, r: AgentResult<()>| reject(env, r),
    )
}

/// The directory the scope's last `trackCwd` run ended in (whether it still exists or not), or
/// `null` when none did. `exec({trackCwd: true})` without a `cwd` starts there.
#[napi(ts_args_type = "scopeKey?: string")]
pub fn tracked_cwd(scope_key: Option<String>) -> Option<String> {
    crate::session::registry::global()
        .scope_cwd(scope_key.as_deref())
        .map(|p| p.display().to_string())
}

/// `keys`: key names, and `{literal: text}` or `{hex: byte}` steps, in the order they are sent.
fn key_items(f: &Fields) -> BindResult<Vec<KeyItem>> {
    let bad = |i: u32| {
        AgentError::invalid_option(format!(
            "keys[{i}] must be a key name such as \"enter\" or \"C-c\", {{literal: \"text\"}} or {{hex: \"1b\"}}."
        ))
    };
    let Some((t, value)) = f.raw("keys")? else {
        return Ok(Vec::new());
    };
    if t != ValueType::Object || !value.is_array()? {
        return Err(AgentError::invalid_option(
            "The keys option must be an array of key names (and {literal} or {hex} steps).",
        )
        .into());
    }
    let arr: Array = f.obj.get("keys")?.expect("checked above");
    let mut out = Vec::with_capacity(arr.len() as usize);
    for i in 0..arr.len() {
        let Some(item) = arr.get::<Unknown>(i)? else {
            return Err(bad(i).into());
        };
        match item.get_type()? {
            ValueType::String => out.push(KeyItem::Key(arr.get::<String>(i)?.unwrap_or_default())),
            ValueType::Object => {
                let step = Fields {
                    obj: arr.get::<Object>(i)?.expect("an object"),
                };
                let literal = step.obj.get::<Unknown>("literal")?;
                let hex = step.obj.get::<Unknown>("hex")?;
                match (literal, hex) {
                    (Some(l), None) if l.get_type()? == ValueType::String => out.push(
                        KeyItem::Literal(step.obj.get::<String>("literal")?.unwrap_or_default()),
                    ),
                    (None, Some(h)) if h.get_type()? == ValueType::String => out.push(
                        KeyItem::Hex(step.obj.get::<String>("hex")?.unwrap_or_default()),
                    ),
                    _ => return Err(bad(i).into()),
                }
            }
            _ => return Err(bad(i).into()),
        }
    }
    Ok(out)
}

/// What a PTY session's terminal shows.
#[napi(object, js_name = "ScreenView")]
pub struct JsScreenView {
    pub session_id: String,
    /// Every visible row, trailing spaces removed.
    pub rows: Vec<String>,
    /// The rows joined by newlines, without the blank rows at the bottom.
    pub text: String,
    /// Zero-based cursor position.
    pub cursor_row: u32,
    pub cursor_col: u32,
    /// The program is in the alternate screen (full-screen mode: an editor, a pager, a TUI).
    pub alternate_screen: bool,
    pub cols: u32,
}

/// The screen of a PTY session as a person would see it: rows of text and the cursor, kept by a
/// terminal emulator fed the session's output. `ERR_NOT_A_PTY` for pipe sessions.
#[napi(ts_args_type = "sessionId: string, options?: SessionScope")]
pub fn read_screen(env: &Env, id: Unknown, options: Option<Unknown>) -> Result<JsScreenView> {
    let (session, _) = throw(env, lookup(env, id, options))?;
    let view = reject(env, ops::screen(&session))?;
    Ok(JsScreenView {
        session_id: session.meta.id.clone(),
        text: view.text(),
        cursor_row: view.cursor_row as u32,
        cursor_col: view.cursor_col as u32,
        alternate_screen: view.alternate,
        cols: view.cols as u32,
        rows: view.rows,
    })
}
