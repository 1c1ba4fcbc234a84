//! A validated exec request: everything the runtime needs, checked once, with typed errors.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{AgentError, ErrorCode};
use crate::output::collector::OutputLimits;

/// What the child's stdin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinMode {
    /// End of file at once: commands that read stdin return instead of hanging.
    Closed,
    /// A pipe the caller can write to (and close) later.
    Pipe,
}

/// PTY size in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtySize {
    pub cols: u16,
    pub rows: u16,
}

impl Default for PtySize {
    fn default() -> Self {
        PtySize {
            cols: 120,
            rows: 30,
        }
    }
}

/// Defaults of the native API.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_millis(3000);
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_millis(2000);

#[derive(Debug, Clone)]
pub struct ExecRequest {
    pub command: String,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// Model-supplied variables, checked against the host env policy.
    pub model_env: Vec<(String, String)>,
    /// Drop dangerous inherited variables (OpenClaw's host policy).
    pub drop_dangerous_env: bool,
    pub inherit_env: bool,
    pub shell: Option<String>,
    pub pty: Option<PtySize>,
    /// Total lifetime; `None` means no timeout.
    pub timeout: Option<Duration>,
    pub kill_grace: Duration,
    /// How long output is still read after the shell exited while descendants hold the pipes open.
    pub drain_timeout: Duration,
    pub stdin: StdinMode,
    pub limits: OutputLimits,
    /// Where the output log goes when output is cut.
    pub log_dir: PathBuf,
    /// Registered as a background session from the start (kept after exit, ignores aborts).
    pub background: bool,
    /// Act as if the PTY could not be opened (exercises the pipe fallback).
    pub pty_force_fallback: bool,
    /// Size cap of the output log file.
    pub max_log_bytes: u64,
    /// Write the log file once the text passes this many chars, cut or not.
    pub log_above_chars: Option<usize>,
    /// Keep the output log file after the session is cleared, removed or expired (default: delete it
    /// then, so logs do not pile up in the temp dir).
    pub keep_logs: bool,
    /// Report the directory the shell ended in (written by an EXIT trap to this file).
    pub cwd_report: Option<PathBuf>,
    /// The file bash reads through `BASH_ENV` to set that EXIT trap (see [`bash_cwd_trap`]): set,
    /// the script is the command alone.
    pub cwd_trap_file: Option<PathBuf>,
    /// Warnings found while preparing the request, reported with the outcome.
    pub warnings: Vec<String>,
    /// Run inside a sandbox (file rules, network cut, limits).
    pub sandbox: Option<crate::sandbox::SandboxSpec>,
    /// Run in a container of a Docker Engine API instead of this machine's shell.
    pub container: Option<crate::container::ContainerSpec>,
}

impl ExecRequest {
    /// A request with the defaults, for `command` in the current directory.
    pub fn new(command: impl Into<String>) -> Self {
        ExecRequest {
            command: command.into(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            env: Vec::new(),
            model_env: Vec::new(),
            drop_dangerous_env: false,
            inherit_env: true,
            shell: None,
            pty: None,
            timeout: Some(DEFAULT_TIMEOUT),
            kill_grace: DEFAULT_KILL_GRACE,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            stdin: StdinMode::Closed,
            limits: OutputLimits::default(),
            log_dir: crate::output::spool::default_log_dir(),
            background: false,
            pty_force_fallback: false,
            max_log_bytes: crate::output::spool::DEFAULT_MAX_LOG_BYTES,
            keep_logs: false,
            log_above_chars: None,
            cwd_report: None,
            cwd_trap_file: None,
            warnings: Vec::new(),
            sandbox: None,
            container: None,
        }
    }

    /// A variable as the run will see it: the caller's (last one wins), else the host's when the run
    /// inherits the host environment.
    pub fn env_var(&self, key: &str) -> Option<String> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| {
                if self.inherit_env {
                    std::env::var(key).ok()
                } else {
                    None
                }
            })
    }

    /// The script handed to the shell: the command, preceded by an EXIT trap that records the final
    /// directory when cwd tracking is on (a command that sets its own EXIT trap replaces ours).
    pub fn shell_script(&self) -> std::borrow::Cow<'_, str> {
        // PowerShell and cmd.exe have no `trap ... EXIT`: on Windows the final directory is not
        // reported (README, Platforms).
        if cfg!(windows) {
            return std::borrow::Cow::Borrowed(&self.command);
        }
        match &self.cwd_report {
            // bash sets the trap from its BASH_ENV file: nothing of ours in the script, so a
            // syntax error bash quotes with its line shows the model's command alone.
            _ if self.cwd_trap_file.is_some() => std::borrow::Cow::Borrowed(&self.command),
            None => std::borrow::Cow::Borrowed(&self.command),
            // On the command's first line, so `$LINENO` and the shell's error line numbers are the
            // command's own.
            Some(_) => std::borrow::Cow::Owned(format!("{}{}", cwd_trap_line(), self.command)),
        }
    }

    /// Checks what the type system cannot: an empty command, NUL bytes, the cwd, the env, the caps.
    pub fn validate(&self) -> Result<(), AgentError> {
        validate_command(&self.command)?;
        validate_cwd(&self.cwd)?;
        for (k, v) in self.env.iter().chain(&self.model_env) {
            super::env::validate_env_entry(k, v)?;
        }
        super::env::validate_model_env(&self.model_env)?;
        if self.limits.max_output_chars == 0 {
            return Err(AgentError::invalid_option(
                "maxOutputChars must be at least 1. Leave it out for the default of 200000.",
            ));
        }
        if self.limits.pending_max_output_chars == 0 {
            return Err(AgentError::invalid_option(
                "pendingMaxOutputChars must be at least 1. Leave it out for the default of 30000.",
            ));
        }
        if let Some(size) = self.pty {
            if size.cols == 0 || size.rows == 0 {
                return Err(AgentError::invalid_option(
                    "pty cols and rows must both be at least 1.",
                ));
            }
        }
        Ok(())
    }
}

pub fn validate_command(command: &str) -> Result<(), AgentError> {
    if command.trim().is_empty() {
        return Err(AgentError::new(
            ErrorCode::InvalidCommand,
            "Provide a command to start: the command is empty.",
        ));
    }
    if command.contains('\0') {
        return Err(AgentError::new(
      ErrorCode::NulByte,
      "The command contains a NUL byte, which a shell cannot receive. Remove it (for binary data, use printf escapes).",
    ));
    }
    Ok(())
}

pub fn validate_cwd(cwd: &Path) -> Result<(), AgentError> {
    let shown = cwd.display();
    if cwd.as_os_str().is_empty() {
        return Err(AgentError::new(
            ErrorCode::InvalidCwd,
            "The cwd is empty. Pass an existing directory or leave cwd out.",
        ));
    }
    if cwd.to_string_lossy().contains('\0') {
        return Err(AgentError::new(
            ErrorCode::NulByte,
            "The cwd contains a NUL byte. Pass a real directory path.",
        ));
    }
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(AgentError::new(
            ErrorCode::InvalidCwd,
            format!(
                "The cwd {shown} is not a directory. Pass the directory that contains it instead."
            ),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(AgentError::new(
            ErrorCode::InvalidCwd,
            format!(
                "The cwd {shown} does not exist. Create it first or pass an existing directory."
            ),
        )),
        Err(e) => Err(AgentError::new(
            ErrorCode::InvalidCwd,
            format!("The cwd {shown} cannot be used: {e}."),
        )),
    }
}

/// The EXIT trap that writes a POSIX shell's last directory to `$AGENT_EXEC_CWD_FILE`, as the start of
/// a script's first line (`trackCwd` where no BASH_ENV file can carry it).
pub fn cwd_trap_line() -> &'static str {
    "trap 'pwd -P > \"$AGENT_EXEC_CWD_FILE\" 2>/dev/null' EXIT; "
}

/// What bash reads through `BASH_ENV` before the command of a run that tracks its directory: the EXIT
/// trap, and the caller's own `BASH_ENV` (kept aside in `AGENT_EXEC_OUTER_BASH_ENV`), which is
/// restored for the command's children and read as it would have been.
pub const BASH_CWD_TRAP: &str = "\
# agent-exec: the EXIT trap that reports the final directory of a run (trackCwd).
if [ -n \"${AGENT_EXEC_OUTER_BASH_ENV+set}\" ]; then BASH_ENV=$AGENT_EXEC_OUTER_BASH_ENV; unset AGENT_EXEC_OUTER_BASH_ENV; else unset BASH_ENV; fi
trap 'pwd -P > \"$AGENT_EXEC_CWD_FILE\" 2>/dev/null' EXIT
if [ -n \"${BASH_ENV-}\" ]; then . \"$BASH_ENV\"; fi
";

/// For bash, the request with its EXIT trap moved out of the script into a file next to the cwd
/// report (bash quotes a line with a syntax error in its message, and the trap shared the command's
/// first line to keep its line numbers). `None`: another shell, no tracking, or the file could not be
/// written (then the trap stays in the script).
pub fn bash_cwd_trap(req: &ExecRequest, shell: &std::path::Path) -> Option<ExecRequest> {
    if cfg!(windows) || shell.file_name()? != "bash" {
        return None;
    }
    let file = req.cwd_report.as_ref()?.with_extension("bash");
    std::fs::write(&file, BASH_CWD_TRAP).ok()?;
    let mut r = req.clone();
    r.cwd_trap_file = Some(file);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_nul_commands_are_rejected() {
        assert_eq!(
            validate_command("").unwrap_err().code,
            ErrorCode::InvalidCommand
        );
        assert_eq!(
            validate_command(" \n\t").unwrap_err().code,
            ErrorCode::InvalidCommand
        );
        assert_eq!(
            validate_command("echo a\0b").unwrap_err().code,
            ErrorCode::NulByte
        );
        assert!(validate_command("true").is_ok());
    }

    #[test]
    fn cwd_must_be_an_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(validate_cwd(dir.path()).is_ok());
        let e = validate_cwd(&file).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidCwd);
        assert!(e.message.contains("not a directory"));
        let e = validate_cwd(&dir.path().join("missing")).unwrap_err();
        assert!(e.message.contains("does not exist"));
    }

    #[test]
    fn env_var_prefers_the_callers_last_value_then_the_inherited_one() {
        let mut r = ExecRequest::new("true");
        r.env = vec![("X_A".into(), "1".into()), ("X_A".into(), "2".into())];
        assert_eq!(r.env_var("X_A").as_deref(), Some("2"));
        assert_eq!(r.env_var("PATH"), std::env::var("PATH").ok());
        r.inherit_env = false;
        assert_eq!(r.env_var("PATH"), None);
    }

    #[test]
    fn zero_caps_are_rejected() {
        let mut r = ExecRequest::new("true");
        r.limits.max_output_chars = 0;
        assert_eq!(r.validate().unwrap_err().code, ErrorCode::InvalidOption);
    }
}
