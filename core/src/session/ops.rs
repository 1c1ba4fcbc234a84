//! What callers do with sessions: list, poll, read the log, write stdin, kill.

use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::keys::{encode_items, is_bare_cursor_key, Encoded, KeyItem};
use super::outcome::classify;
use super::{ExitInfo, Input, KillCause, Session};
use crate::error::{AgentError, ErrorCode};
use crate::output::sanitize::CursorKeyMode;

/// Longest a poll may wait.
pub const MAX_POLL_WAIT: Duration = Duration::from_millis(120_000);
/// Lines `readLog` returns when neither offset nor limit is given.
pub const DEFAULT_LOG_LINES: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    Running,
    Completed,
    Failed,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Running => "running",
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
        }
    }

    pub fn of(exit: Option<&ExitInfo>) -> Self {
        match exit {
            None => SessionStatus::Running,
            Some(e) => match classify(e, None).0 {
                super::RunStatus::Completed => SessionStatus::Completed,
                _ => SessionStatus::Failed,
            },
        }
    }
}

#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub id: String,
    pub status: SessionStatus,
    pub pid: u32,
    pub started_at_ms: u64,
    pub ended_at_ms: Option<u64>,
    pub runtime_ms: u64,
    pub cwd: String,
    pub command: String,
    pub tail: String,
    pub truncated: bool,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub scope_key: Option<String>,
    pub pty: bool,
    pub backgrounded: bool,
    pub cursor_key_mode: &'static str,
    /// The run was ended by `killSession` (a requested kill, not a failure of its own).
    pub killed: bool,
    /// The log file with every raw byte, once the text was cut.
    pub output_file: Option<String>,
    /// Epoch ms of the last output, if any.
    pub last_output_at_ms: Option<u64>,
    /// A running session whose input can still be written.
    pub stdin_writable: bool,
    /// The process exited and its output is being read to the end: nothing can be written any more.
    pub finalizing: bool,
    /// Ended by its timeout.
    pub timed_out: bool,
    /// Ended by the caller's abort signal.
    pub aborted: bool,
}

pub fn info(session: &Session) -> SessionInfo {
    let st = session.lock();
    let exit = st.exit.as_ref();
    SessionInfo {
        id: session.meta.id.clone(),
        status: SessionStatus::of(exit),
        pid: session.meta.pid,
        started_at_ms: session.meta.started_at_ms,
        ended_at_ms: exit.map(|e| e.ended_at_ms),
        runtime_ms: exit.map_or_else(|| session.elapsed_ms(), |e| e.duration_ms),
        cwd: session.meta.cwd.clone(),
        command: session.meta.command.clone(),
        tail: st.collector.tail(),
        truncated: st.collector.truncated() || st.collector.pending_truncated(),
        output_file: st.collector.output_file().map(|p| p.display().to_string()),
        exit_code: exit.and_then(|e| e.exit_code),
        exit_signal: exit.and_then(|e| e.exit_signal.clone()),
        scope_key: session.meta.scope_key.clone(),
        pty: session.meta.is_pty,
        backgrounded: st.backgrounded,
        cursor_key_mode: st.collector.cursor_key_mode().as_str(),
        killed: exit.is_some_and(|e| e.cause == Some(crate::session::KillCause::Killed)),
        last_output_at_ms: st.last_output_at_ms,
        stdin_writable: exit.is_none() && st.stdin_open && !st.finalizing,
        finalizing: exit.is_none() && st.finalizing,
        timed_out: exit.is_some_and(|e| e.timed_out()),
        aborted: exit.is_some_and(|e| e.cause == Some(crate::session::KillCause::Aborted)),
    }
}

#[derive(Debug, Clone)]
pub struct PollResult {
    pub info: SessionInfo,
    pub stdout: String,
    pub stderr: String,
    pub exited: bool,
    /// Some of the undrained output was dropped (the pending cap keeps the newest).
    pub pending_truncated: bool,
    /// Characters (UTF-16 units) of undrained output dropped since the previous poll.
    pub dropped_chars: usize,
    /// A full-screen program holds the PTY's alternate screen (read it with `screen`).
    pub alternate_screen: bool,
    /// Suggested wait before the next poll, while the session runs.
    pub retry_in_ms: Option<u64>,
    pub reason: Option<String>,
}

impl PollResult {
    /// A poll that took nothing (see [`wait_for`]): the session as it is, its output left pending.
    pub fn untaken(session: &Session) -> PollResult {
        let (pending_truncated, alternate_screen) = {
            let st = session.lock_read();
            (
                st.collector.pending_truncated(),
                st.collector.alternate_screen(),
            )
        };
        let exit = session.exit_info();
        PollResult {
            exited: exit.is_some(),
            reason: exit.as_ref().and_then(|e| classify(e, None).1),
            info: info(session),
            stdout: String::new(),
            stderr: String::new(),
            pending_truncated,
            dropped_chars: 0,
            alternate_screen,
            retry_in_ms: None,
        }
    }
}

/// OpenClaw B's back-off for consecutive polls without output.
fn retry_after(empty_polls: u32) -> u64 {
    match empty_polls {
        0 | 1 => 5_000,
        2 => 10_000,
        3 => 30_000,
        _ => 60_000,
    }
}

/// A poll's wait without the take: the output stays for the next poll (a caller that may give up
/// waiting, as on an abort, loses nothing).
pub async fn wait_for(
    session: &Session,
    wait: Duration,
    until: PollUntil,
) -> Result<(), AgentError> {
    if wait > MAX_POLL_WAIT {
        return Err(AgentError::invalid_option(format!(
            "A poll may wait at most 120000 ms; got {} ms.",
            wait.as_millis()
        )));
    }
    if !wait.is_zero() {
        let deadline = tokio::time::Instant::now() + wait;
        match until {
            PollUntil::Exit => session.wait_for_exit_until(deadline).await,
            PollUntil::Output => session.wait_for_output_or_exit_until(deadline).await,
        }
    }
    Ok(())
}

/// What ends a poll's wait early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollUntil {
    /// The run's exit only (OpenClaw B: output accumulates for the whole wait).
    Exit,
    /// The run's exit, or output no poll has taken yet (later OpenClaw: returned at once).
    Output,
}

/// Wait up to `wait` for the run to exit (or, with [`PollUntil::Output`], for unread output), then
/// take everything not yet drained.
pub async fn poll(
    session: &Session,
    wait: Duration,
    until: PollUntil,
) -> Result<PollResult, AgentError> {
    wait_for(session, wait, until).await?;
    let (stdout, stderr, dropped_chars, pending_truncated, alternate_screen, retry) = {
        let mut st = session.lock();
        let (stdout, stderr, dropped) = st.collector.drain_pending();
        let exited = st.exit.is_some();
        let retry = if exited {
            None
        } else if stdout.is_empty() && stderr.is_empty() {
            st.empty_polls += 1;
            Some(retry_after(st.empty_polls))
        } else {
            st.empty_polls = 0;
            Some(retry_after(0))
        };
        (
            stdout,
            stderr,
            dropped,
            st.collector.pending_truncated(),
            st.collector.alternate_screen(),
            retry,
        )
    };
    let info = info(session);
    let exit = session.exit_info();
    Ok(PollResult {
        exited: exit.is_some(),
        reason: exit.as_ref().and_then(|e| classify(e, None).1),
        info,
        stdout,
        stderr,
        pending_truncated,
        dropped_chars,
        alternate_screen,
        retry_in_ms: retry,
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSlice {
    pub text: String,
    pub total_lines: usize,
    pub total_chars: usize,
    /// Set when the default window was used and there were more lines than it shows.
    pub note: Option<String>,
}

/// OpenClaw's line window: no offset and no limit gives the last 200 lines (with a paging note);
/// a limit alone counts from the end; an offset alone runs to the end.
pub fn slice_log(text: &str, offset: Option<usize>, limit: Option<usize>) -> LogSlice {
    let total_chars = text.chars().map(char::len_utf16).sum();
    if text.is_empty() {
        return LogSlice {
            text: String::new(),
            total_lines: 0,
            total_chars,
            note: None,
        };
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let total = lines.len();
    let default_window = offset.is_none() && limit.is_none();
    let limit = if default_window {
        Some(DEFAULT_LOG_LINES)
    } else {
        limit
    };
    let start = match (offset, limit) {
        (Some(o), _) => o.min(total),
        (None, Some(l)) => total.saturating_sub(l),
        (None, None) => 0,
    };
    let end = limit.map_or(total, |l| (start + l).min(total));
    let note = (default_window && total > DEFAULT_LOG_LINES).then(|| {
        format!("[showing last {DEFAULT_LOG_LINES} of {total} lines; pass offset/limit to page]")
    });
    LogSlice {
        text: lines[start..end].join("\n"),
        total_lines: total,
        total_chars,
        note,
    }
}

/// The log window. When the in-memory text lost its middle, the lines come from the raw log file, so
/// the counts and offsets describe the whole output (OpenClaw's window rules either way).
pub fn read_log(session: &Session, offset: Option<usize>, limit: Option<usize>) -> LogSlice {
    let (text, file, capped, total_chars) = {
        let st = session.lock();
        let file = st
            .collector
            .truncated()
            .then(|| st.collector.output_file())
            .flatten()
            .filter(|_| st.collector.log_failure().is_none());
        (
            st.collector.aggregated(),
            file,
            st.collector.log_capped(),
            st.collector.total_chars(),
        )
    };
    if let Some(path) = file {
        if let Ok(slice) = slice_file(&path, offset, limit, capped) {
            return LogSlice {
                total_chars,
                ..slice
            };
        }
    }
    slice_log(&text, offset, limit)
}

/// [`slice_log`]'s window over the whole log file.
fn slice_file(
    path: &std::path::Path,
    offset: Option<usize>,
    limit: Option<usize>,
    capped: bool,
) -> std::io::Result<LogSlice> {
    use crate::output::log_lines::{read, Window};
    let default_window = offset.is_none() && limit.is_none();
    let window = match (offset, limit) {
        (Some(o), Some(l)) => Window::Range {
            start: o,
            end: o.saturating_add(l),
        },
        (Some(o), None) => Window::Range {
            start: o,
            end: usize::MAX,
        },
        (None, Some(l)) => Window::Last(l),
        (None, None) => Window::Last(DEFAULT_LOG_LINES),
    };
    let read = read(path, window)?;
    let text = read.lines.join("\n");
    let mut notes = Vec::new();
    if default_window && read.total > DEFAULT_LOG_LINES {
        notes.push(format!(
            "[showing last {DEFAULT_LOG_LINES} of {} lines; pass offset/limit to page]",
            read.total
        ));
    }
    if capped {
        notes.push(format!(
            "[the log file {} stopped at its size cap: output after it is only in the tail of the text]",
            path.display()
        ));
    }
    Ok(LogSlice {
        total_chars: 0,
        text,
        total_lines: read.total,
        note: (!notes.is_empty()).then(|| notes.join("\n")),
    })
}

/// Write to a running session's input. `eof` closes a pipe, or sends `^D` to a PTY.
pub async fn write_stdin(session: &Session, data: &[u8], eof: bool) -> Result<usize, AgentError> {
    let id = &session.meta.id;
    if session.is_exited() {
        return Err(AgentError::new(
            ErrorCode::SessionNotRunning,
            format!("Session {id} has already exited; its stdin is gone."),
        ));
    }
    let mut guard = session.input.lock().await;
    let result = match guard.as_mut() {
        None => {
            return Err(AgentError::new(
                ErrorCode::StdinClosed,
                format!("Session {id} stdin is not writable. Start the command with stdin: \"pipe\" (or pty) to write to it."),
            ))
        }
        Some(Input::Pipe(stdin)) => {
            let r = async {
                stdin.write_all(data).await?;
                stdin.flush().await
            }
            .await;
            if r.is_ok() && eof {
                // A half-close where the writer is a socket (a container's exec): dropping one
                // closes nothing the other side sees until the connection ends.
                let _ = stdin.shutdown().await;
                guard.take();
                session.mark_stdin_closed();
            }
            r
        }
        Some(Input::Pty(master)) => {
            let r = master.write_all(data).await;
            if r.is_ok() && eof {
                master.write_all(b"\x04").await
            } else {
                r
            }
        }
    };
    if let Err(e) = result {
        guard.take();
        return Err(AgentError::new(
            ErrorCode::StdinClosed,
            format!("Session {id} stdin is not writable: the process closed it ({e})."),
        ));
    }
    Ok(data.len())
}

/// Encode keys in OpenClaw's language and send them. Unmodified cursor keys are refused while a
/// PTY application's cursor key mode is still unknown, since the wrong encoding moves nothing.
pub async fn send_keys(session: &Session, items: &[KeyItem]) -> Result<Encoded, AgentError> {
    let mode = session.lock().collector.cursor_key_mode();
    let bare_cursor = items
        .iter()
        .any(|i| matches!(i, KeyItem::Key(k) if is_bare_cursor_key(k)));
    if mode == CursorKeyMode::Unknown && bare_cursor {
        return Err(AgentError::new(
            ErrorCode::CursorKeyModeUnknown,
            format!(
                "Session {} cursor key mode is not known yet. Poll or log until startup output appears, then retry send-keys.",
                session.meta.id
            ),
        ));
    }
    let encoded =
        encode_items(items, mode).map_err(|m| AgentError::new(ErrorCode::InvalidKey, m))?;
    if encoded.data.is_empty() {
        return Err(AgentError::invalid_option("No key data provided."));
    }
    write_stdin(session, &encoded.data, false).await?;
    Ok(encoded)
}

/// Paste `text`. Bracketed (`ESC[200~ ... ESC[201~`) when `bracketed` says so, or, when it is `None`,
/// when the program turned bracketed paste mode on: a program that did not (Python 3.11's REPL) would
/// take the markers as input. Returns the bytes written.
pub async fn paste(
    session: &Session,
    text: &str,
    bracketed: Option<bool>,
) -> Result<usize, AgentError> {
    let on = bracketed.unwrap_or_else(|| session.lock().collector.bracketed_paste());
    let payload = super::keys::encode_paste(text, on);
    if payload.is_empty() {
        return Err(AgentError::invalid_option("No paste text provided."));
    }
    write_stdin(session, &payload, false).await
}

/// Change a PTY session's size (the application gets SIGWINCH).
pub async fn resize(session: &Session, cols: u16, rows: u16) -> Result<(), AgentError> {
    if cols == 0 || rows == 0 {
        return Err(AgentError::invalid_option(
            "cols and rows must both be at least 1.",
        ));
    }
    let id = &session.meta.id;
    if session.is_exited() {
        return Err(AgentError::new(
            ErrorCode::SessionNotRunning,
            format!("Session {id} has already exited."),
        ));
    }
    let guard = session.input.lock().await;
    match guard.as_ref() {
        Some(Input::Pty(terminal)) => {
            terminal
                .resize(crate::spawn::request::PtySize { cols, rows }, id)
                .await?;
            session.lock().collector.resize_screen(rows, cols);
            Ok(())
        }
        _ => Err(AgentError::new(
            ErrorCode::NotAPty,
            format!("Session {id} is not a PTY session; only pty runs can be resized."),
        )),
    }
}

/// What a PTY session's terminal shows now (also after it exited: the last screen).
pub fn screen(session: &Session) -> Result<crate::output::screen::ScreenView, AgentError> {
    session.lock().collector.screen_view().ok_or_else(|| {
        AgentError::new(
            ErrorCode::NotAPty,
            format!(
                "Session {} is not a PTY session, so it has no screen; read its output with poll or log.",
                session.meta.id
            ),
        )
    })
}

/// End a running session's whole tree and wait until it is gone.
pub async fn kill(session: &Session) -> Result<ExitInfo, AgentError> {
    if session.is_exited() {
        return Err(AgentError::new(
            ErrorCode::SessionNotRunning,
            format!("Session {} has already exited.", session.meta.id),
        ));
    }
    session.request_kill(KillCause::Killed);
    Ok(session.wait_exit().await)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("l{i}\n")).collect()
    }

    #[test]
    fn log_windows() {
        let t = lines(5);
        assert_eq!(slice_log(&t, None, None).text, "l1\nl2\nl3\nl4\nl5");
        assert_eq!(slice_log(&t, None, Some(2)).text, "l4\nl5");
        assert_eq!(slice_log(&t, Some(1), None).text, "l2\nl3\nl4\nl5");
        assert_eq!(slice_log(&t, Some(1), Some(2)).text, "l2\nl3");
        assert_eq!(slice_log(&t, Some(9), Some(2)).text, "");
        assert_eq!(slice_log(&t, None, None).total_lines, 5);
        assert_eq!(slice_log("", None, None).total_lines, 0);
    }

    #[test]
    fn default_window_is_last_200_with_note() {
        let t = lines(250);
        let s = slice_log(&t, None, None);
        assert!(s.text.starts_with("l51\n"));
        assert!(s.text.ends_with("l250"));
        assert_eq!(
            s.note.as_deref(),
            Some("[showing last 200 of 250 lines; pass offset/limit to page]")
        );
        assert_eq!(slice_log(&t, Some(0), None).text.lines().count(), 250);
        assert!(slice_log(&t, Some(0), None).note.is_none());
    }

    #[test]
    fn retry_backoff() {
        assert_eq!(
            [1, 2, 3, 4, 9].map(retry_after),
            [5_000, 10_000, 30_000, 60_000, 60_000]
        );
    }
}
