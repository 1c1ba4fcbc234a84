//! A session is one run of a command: its process, its output, how it ended. Foreground and
//! background runs are the same object; a background run is simply kept in the registry after
//! `exec` returns.

pub mod changes;
pub mod ids;
pub mod keys;
pub mod ops;
pub mod outcome;
pub mod registry;
pub mod run;
mod target;
mod terminal;
pub mod workdir;

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::{watch, Notify};

use crate::kill::KillReport;
use crate::output::collector::OutputCollector;
use crate::output::Stream;

pub use outcome::{ExecOutcome, RunStatus};
pub use run::run_cgroup_parents;

/// Why a run was ended from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillCause {
    /// The caller's abort signal fired (ignored once the run is backgrounded).
    Aborted,
    /// The run outlived its timeout.
    Timeout,
    /// `killSession` (or host shutdown).
    Killed,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub cause: Option<KillCause>,
    pub duration_ms: u64,
    pub ended_at_ms: u64,
    /// Processes that survived the SIGKILL round of a kill.
    pub survivors: Vec<u32>,
    /// Processes still running after the shell exited and the drain window closed.
    pub left_running: Vec<u32>,
    /// The directory the shell ended in (cwd tracking).
    pub final_cwd: Option<String>,
    /// What the sandbox refused and which limit ended the run, for sandboxed runs.
    pub sandbox: Option<crate::sandbox::SandboxReport>,
}

impl ExitInfo {
    pub fn timed_out(&self) -> bool {
        self.cause == Some(KillCause::Timeout)
    }
}

/// Callbacks the owner of a session wants: every chunk of text, and the end.
#[derive(Default, Clone)]
pub struct SessionHooks {
    pub on_output: Option<OutputHook>,
    pub on_exit: Option<ExitHook>,
}

/// Called with the session, the stream and the new text of every chunk.
pub type OutputHook = Arc<dyn Fn(&Session, Stream, &str) + Send + Sync>;
pub type ExitHook = Arc<dyn Fn(&Session, &ExitInfo) + Send + Sync>;

/// Fixed facts about a session.
#[derive(Debug, Clone)]
pub struct SessionMeta {
    pub id: String,
    pub command: String,
    pub cwd: String,
    pub pid: u32,
    pub started_at_ms: u64,
    pub scope_key: Option<String>,
    pub is_pty: bool,
}

pub struct SessionState {
    pub collector: OutputCollector,
    pub backgrounded: bool,
    pub exit: Option<ExitInfo>,
    pub warnings: Vec<String>,
    /// Consecutive polls that found no new output (drives `retryInMs`).
    pub empty_polls: u32,
    /// When the session ended, for the TTL of finished sessions.
    pub ended: Option<Instant>,
    /// Epoch ms of the last output chunk (input-wait detection: how long the run has been quiet).
    pub last_output_at_ms: Option<u64>,
    /// Input can still be written (a pipe not closed with `eof`, or a PTY) while the run lives.
    pub stdin_open: bool,
    /// The process has exited and its output is being read to the end (the drain window): the
    /// session still counts as running, but nothing can be written or killed any more.
    pub finalizing: bool,
}

pub struct Session {
    pub meta: SessionMeta,
    pub(crate) target: target::RunTarget,
    started: Instant,
    state: Mutex<SessionState>,
    /// The change clock's tick at this session's last change (see [`changes`]).
    changed_at: AtomicU64,
    /// Its exit was announced to the agent (the exec tool's notice): once per session.
    exit_notice_claimed: AtomicBool,
    /// Woken on every output chunk and at exit.
    changed: Notify,
    kill: watch::Sender<Option<KillCause>>,
    done: watch::Sender<bool>,
    hooks: SessionHooks,
    registry: &'static registry::Registry,
    /// Where the shell's EXIT trap reports its final directory (cwd tracking).
    pub(crate) cwd_report: Option<std::path::PathBuf>,
    /// Where input goes: a pipe (`stdin: "pipe"` runs) or the PTY master; `None` once closed.
    pub(crate) input: tokio::sync::Mutex<Option<Input>>,
    /// The run's sandbox: its supervisor's record, cgroup and temp dir live as long as the session.
    pub(crate) sandbox: Option<crate::sandbox::Armed>,
    /// Keep the output log after the session is gone (the caller's `keepLogs`).
    pub(crate) keep_logs: bool,
    /// The cgroup an unsandboxed run was born in (the kill path reads its members); removed after.
    #[cfg(target_os = "linux")]
    pub(crate) tracking: Option<crate::spawn::tracking::TrackedCgroup>,
    /// The init of the run's PID namespace, when the run was spawned into one without a fork: a kill
    /// that had to escalate ends the namespace through it (processes that left the group and dropped
    /// the marker included).
    #[cfg(target_os = "linux")]
    pub(crate) namespace_init: Option<std::sync::Arc<crate::spawn::namespaced::Init>>,
}

/// A session's input side.
pub(crate) enum Input {
    Pipe(Box<dyn tokio::io::AsyncWrite + Send + Unpin>),
    Pty(terminal::Terminal),
}

/// A session's state, locked. Reading it is free; every mutable access takes a tick of the change
/// clock first, while the lock is held, so a lister asking what changed cannot miss a write.
pub struct StateGuard<'a> {
    state: MutexGuard<'a, SessionState>,
    changed_at: &'a AtomicU64,
}

impl Deref for StateGuard<'_> {
    type Target = SessionState;
    fn deref(&self) -> &SessionState {
        &self.state
    }
}

impl DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut SessionState {
        self.changed_at.store(changes::tick(), Ordering::SeqCst);
        &mut self.state
    }
}

impl Session {
    pub fn lock(&self) -> StateGuard<'_> {
        StateGuard {
            // A panic while holding the lock leaves plain data behind; keep serving it.
            state: self.state.lock().unwrap_or_else(|e| e.into_inner()),
            changed_at: &self.changed_at,
        }
    }

    /// Mark the session changed without touching its state: it entered the registry (whose lock the
    /// caller holds, as a lister does while it scans).
    pub(crate) fn touch(&self) {
        self.changed_at.store(changes::tick(), Ordering::SeqCst);
    }

    /// True exactly once, for the first caller after the run ended: who announces its exit.
    pub fn claim_exit_notice(&self) -> bool {
        self.is_exited() && !self.exit_notice_claimed.swap(true, Ordering::SeqCst)
    }

    /// Whether the session changed after tick `since` of the change clock.
    pub fn changed_since(&self, since: u64) -> bool {
        self.changed_at.load(Ordering::SeqCst) > since
    }

    /// Ask the driver to end the run. The first cause wins, except that an abort (which a backgrounded
    /// run ignores) never stands in the way of a later kill or timeout.
    pub fn request_kill(&self, cause: KillCause) {
        self.kill.send_if_modified(|current| {
            let replace = match *current {
                None => true,
                Some(KillCause::Aborted) => cause != KillCause::Aborted,
                Some(_) => false,
            };
            if replace {
                *current = Some(cause);
            }
            replace
        });
    }

    pub fn is_exited(&self) -> bool {
        *self.done.borrow()
    }

    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.lock().exit.clone()
    }

    /// Resolves once the run ended and its output was read to the end.
    pub async fn wait_exit(&self) -> ExitInfo {
        let mut rx = self.done.subscribe();
        // The sender lives as long as the session, so this cannot fail while we hold `self`.
        let _ = rx.wait_for(|done| *done).await;
        self.lock().exit.clone().expect("exit is set before done")
    }

    /// Resolves at the next output chunk or exit (or at once if already exited).
    pub async fn changed(&self) {
        let notified = self.changed.notified();
        if self.is_exited() {
            return;
        }
        notified.await;
    }

    /// Hand the session to the registry's background list. Returns false if it already ended (the
    /// caller then reports it as a finished foreground run).
    pub fn mark_backgrounded(&self) -> bool {
        let mut st = self.lock();
        if st.exit.is_some() {
            return false;
        }
        st.backgrounded = true;
        true
    }

    pub fn is_backgrounded(&self) -> bool {
        self.lock().backgrounded
    }

    /// Wait until the run has exited or `deadline` passes, whichever is first. Output does not end
    /// the wait: a poll that returned at each chunk would cost the model a turn per chunk.
    pub async fn wait_for_exit_until(&self, deadline: tokio::time::Instant) {
        let mut rx = self.done.subscribe();
        let _ = tokio::time::timeout_at(deadline, rx.wait_for(|done| *done)).await;
    }

    /// Wait until there is output no poll has taken yet, the run has exited, or `deadline` passes
    /// (OpenClaw's later poll: unread output is returned at once, not after the whole wait).
    pub async fn wait_for_output_or_exit_until(&self, deadline: tokio::time::Instant) {
        loop {
            // Registered before the check, so a chunk that lands in between still wakes us.
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_exited() || self.lock_read().collector.has_pending() {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }

    /// The state for reading only: no tick of the change clock (a wait that looks is not a change).
    pub(crate) fn lock_read(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The process has exited; its output is still being read (see [`SessionState::finalizing`]).
    pub(crate) fn mark_finalizing(&self) {
        let mut st = self.lock();
        st.finalizing = true;
        st.stdin_open = false;
    }

    /// Input was closed (`eof`, or the run is ending).
    pub(crate) fn mark_stdin_closed(&self) {
        let mut st = self.lock();
        if st.stdin_open {
            st.stdin_open = false;
        }
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    pub(crate) fn ingest(&self, stream: Stream, bytes: &[u8]) -> u32 {
        let got = {
            let mut st = self.lock();
            let got = st.collector.ingest(stream, bytes);
            if !got.text.is_empty() {
                st.last_output_at_ms = Some(crate::util::now_ms());
            }
            got
        };
        self.emit(stream, &got.text);
        got.cursor_queries
    }

    pub(crate) fn finish_stream(&self, stream: Stream) {
        let text = {
            let mut st = self.lock();
            let text = st.collector.finish_stream(stream);
            if !text.is_empty() {
                st.last_output_at_ms = Some(crate::util::now_ms());
            }
            text
        };
        self.emit(stream, &text);
    }

    fn emit(&self, stream: Stream, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(hook) = &self.hooks.on_output {
            hook(self, stream, text);
        }
        self.changed.notify_waiters();
    }

    /// Record the end. Order matters: the exit is visible before the registry moves the session, so
    /// a concurrent yield either sees the exit or marks the session backgrounded in time to be kept.
    pub(crate) fn finish(&self, exit: ExitInfo) {
        let log = {
            let mut st = self.lock();
            st.collector.finish();
            st.exit = Some(exit.clone());
            st.ended = Some(Instant::now());
            st.collector.output_file()
        };
        if let Some(file) = log.filter(|_| !self.keep_logs) {
            self.registry.track_log(&self.meta.id, file);
        }
        self.registry.mark_exited(self);
        self.done.send_replace(true);
        self.changed.notify_waiters();
        if let Some(hook) = &self.hooks.on_exit {
            hook(self, &exit);
        }
    }
}

/// Kill reports from concurrent paths merge into the session's exit.
pub(crate) fn merge_survivors(into: &mut Vec<u32>, report: &KillReport) {
    for pid in &report.survivors {
        if !into.contains(pid) {
            into.push(*pid);
        }
    }
}
