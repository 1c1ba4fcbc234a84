//! The result of a run as callers see it, and the exit classification of CONTRACT section 2:
//! any normal exit but 126/127 is `completed` (non-zero included); 126, 127, timeouts, signals and
//! aborts are `failed`.

use super::{ExitInfo, KillCause, Session};
use crate::spawn::ExecRequest;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Completed,
    Failed,
    Running,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Running => "running",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ExecOutcome {
    pub status: RunStatus,
    pub session_id: String,
    pub pid: u32,
    pub exit_code: Option<i32>,
    pub exit_signal: Option<String>,
    pub timed_out: bool,
    pub aborted: bool,
    pub duration_ms: u64,
    pub output: String,
    pub tail: String,
    pub truncated: bool,
    pub total_chars: usize,
    pub omitted_chars: usize,
    pub output_file: Option<String>,
    pub warnings: Vec<String>,
    pub reason: Option<String>,
    pub cwd: String,
    pub survivors: Vec<u32>,
    pub left_running: Vec<u32>,
    pub final_cwd: Option<String>,
    pub sandbox: Option<crate::sandbox::SandboxReport>,
}

/// Seconds as OpenClaw prints them: `5`, `0.2`, `1.5`.
pub fn format_seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        let s = format!("{:.3}", ms as f64 / 1000.0);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Status and reason for an ended run.
pub fn classify(exit: &ExitInfo, timeout_ms: Option<u64>) -> (RunStatus, Option<String>) {
    match exit.cause {
        Some(KillCause::Timeout) => {
            let reason = match timeout_ms {
                Some(ms) => format!("Command timed out after {} seconds", format_seconds(ms)),
                None => "Command timed out".to_string(),
            };
            return (RunStatus::Failed, Some(reason));
        }
        Some(KillCause::Aborted) => return (RunStatus::Failed, Some("Command aborted".into())),
        Some(KillCause::Killed) => return (RunStatus::Failed, Some("Command was killed".into())),
        None => {}
    }
    if let Some(report) = &exit.sandbox {
        use crate::sandbox::LimitKind;
        if let (Some(kind), Some(message)) = (report.limit_exceeded, &report.limit_message) {
            // A refused fork need not end the run; the other limits kill.
            if kind != LimitKind::Processes {
                return (
                    RunStatus::Failed,
                    Some(format!("Command stopped by the sandbox: {message}")),
                );
            }
        }
    }
    if let Some(sig) = &exit.exit_signal {
        return (
            RunStatus::Failed,
            Some(format!("Command aborted by signal {sig}")),
        );
    }
    match exit.exit_code {
        Some(126) => (
            RunStatus::Failed,
            Some("Command not executable (permission denied)".into()),
        ),
        Some(127) => (RunStatus::Failed, Some("Command not found".into())),
        Some(_) => (RunStatus::Completed, None),
        None => (
            RunStatus::Failed,
            Some("Command aborted before exit code was captured".into()),
        ),
    }
}

/// Build the outcome of an ended session.
pub fn outcome_of(session: &Session, exit: &ExitInfo, req: &ExecRequest) -> ExecOutcome {
    let timeout_ms = req.timeout.map(|t| t.as_millis() as u64);
    let (status, reason) = classify(exit, timeout_ms);
    let st = session.lock();
    let mut warnings = st.warnings.clone();
    if !exit.left_running.is_empty() {
        warnings.push(format!(
      "Warning: {} started by this command kept running after it exited (pid {}); output written after exit was not collected.",
      plural(exit.left_running.len()),
      join_pids(&exit.left_running)
    ));
    }
    if !exit.survivors.is_empty() {
        warnings.push(format!(
            "Warning: {} survived SIGKILL (pid {}).",
            plural(exit.survivors.len()),
            join_pids(&exit.survivors)
        ));
    }
    if st.collector.log_capped() {
        warnings.push(format!(
            "Warning: the output log reached its size cap ({} bytes); later output is only in the text tail.",
            req.max_log_bytes
        ));
    }
    if let Some(f) = st.collector.log_failure() {
        warnings.push(format!("Warning: the full output log is incomplete: {f}."));
    }
    if let Some(report) = &exit.sandbox {
        // The other limits end the run and are its reason; refused forks only show here.
        if let (Some(crate::sandbox::LimitKind::Processes), Some(m)) =
            (report.limit_exceeded, &report.limit_message)
        {
            warnings.push(format!("Warning: sandbox: {m}."));
        }
    }
    ExecOutcome {
        status,
        session_id: session.meta.id.clone(),
        pid: session.meta.pid,
        exit_code: exit.exit_code,
        exit_signal: exit.exit_signal.clone(),
        timed_out: exit.timed_out(),
        aborted: exit.cause == Some(KillCause::Aborted),
        duration_ms: exit.duration_ms,
        output: st.collector.aggregated(),
        tail: st.collector.tail(),
        truncated: st.collector.truncated(),
        total_chars: st.collector.total_chars(),
        omitted_chars: st.collector.omitted_chars(),
        output_file: st.collector.output_file().map(|p| p.display().to_string()),
        warnings,
        reason,
        cwd: session.meta.cwd.clone(),
        survivors: exit.survivors.clone(),
        left_running: exit.left_running.clone(),
        final_cwd: exit.final_cwd.clone(),
        sandbox: exit.sandbox.clone(),
    }
}

/// The outcome of a run handed to the background: what it printed so far.
pub fn running_outcome(session: &Session) -> ExecOutcome {
    let st = session.lock();
    ExecOutcome {
        status: RunStatus::Running,
        session_id: session.meta.id.clone(),
        pid: session.meta.pid,
        exit_code: None,
        exit_signal: None,
        timed_out: false,
        aborted: false,
        duration_ms: session.elapsed_ms(),
        output: st.collector.aggregated(),
        tail: st.collector.tail(),
        truncated: st.collector.truncated(),
        total_chars: st.collector.total_chars(),
        omitted_chars: st.collector.omitted_chars(),
        output_file: st.collector.output_file().map(|p| p.display().to_string()),
        warnings: st.warnings.clone(),
        reason: None,
        cwd: session.meta.cwd.clone(),
        survivors: Vec::new(),
        left_running: Vec::new(),
        final_cwd: None,
        sandbox: None,
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 process".into()
    } else {
        format!("{n} processes")
    }
}

fn join_pids(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: Option<i32>, signal: Option<&str>, cause: Option<KillCause>) -> ExitInfo {
        ExitInfo {
            exit_code: code,
            exit_signal: signal.map(str::to_string),
            cause,
            duration_ms: 1,
            ended_at_ms: 1,
            survivors: vec![],
            left_running: vec![],
            final_cwd: None,
            sandbox: None,
        }
    }

    #[test]
    fn classification_table() {
        let cases = [
            (exit(Some(0), None, None), RunStatus::Completed, None),
            (exit(Some(1), None, None), RunStatus::Completed, None),
            (exit(Some(2), None, None), RunStatus::Completed, None),
            (
                exit(Some(126), None, None),
                RunStatus::Failed,
                Some("Command not executable (permission denied)"),
            ),
            (
                exit(Some(127), None, None),
                RunStatus::Failed,
                Some("Command not found"),
            ),
            (
                exit(None, Some("SIGKILL"), None),
                RunStatus::Failed,
                Some("Command aborted by signal SIGKILL"),
            ),
            (
                exit(None, Some("SIGTERM"), Some(KillCause::Timeout)),
                RunStatus::Failed,
                Some("Command timed out after 1.5 seconds"),
            ),
            (
                exit(None, Some("SIGTERM"), Some(KillCause::Aborted)),
                RunStatus::Failed,
                Some("Command aborted"),
            ),
        ];
        for (e, status, reason) in cases {
            let (s, r) = classify(&e, Some(1500));
            assert_eq!(s, status, "{e:?}");
            assert_eq!(r.as_deref(), reason, "{e:?}");
        }
    }

    #[test]
    fn seconds_format() {
        assert_eq!(format_seconds(5000), "5");
        assert_eq!(format_seconds(200), "0.2");
        assert_eq!(format_seconds(1250), "1.25");
    }
}
