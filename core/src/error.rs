//! Typed errors with stable codes.
//!
//! Every failure a caller can cause (bad input, unknown session, closed stdin) or the runtime can meet
//! (spawn failure) is an [`AgentError`]: a stable machine-readable `code` plus a sentence a person can
//! act on. The bindings turn it into a JS `Error` whose `code` property is the code string.

use std::fmt;

/// Stable error codes. The string forms are part of the public contract: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The command is missing, empty, only whitespace, or not a string.
    InvalidCommand,
    /// A NUL byte in the command, an env key or value, or the cwd.
    NulByte,
    /// The cwd does not exist, is not a directory, or cannot be read.
    InvalidCwd,
    /// An env key or value is not a string or is malformed.
    InvalidEnv,
    /// An option has the wrong type or is out of range.
    InvalidOption,
    /// A model-supplied env override is forbidden by the host env policy (OpenClaw's texts).
    EnvForbidden,
    /// A permission rule is malformed or too broad to allow.
    InvalidRule,
    /// The requested (or `$SHELL`) shell cannot be found or executed.
    UnknownShell,
    /// The operating system refused to start the process.
    SpawnFailed,
    /// No session with that id is visible in the caller's scope.
    UnknownSession,
    /// The session has ended but the action needs a running one.
    SessionNotRunning,
    /// The action needs a finished session.
    SessionRunning,
    /// The session's stdin is closed or was never opened.
    StdinClosed,
    /// Unmodified arrow keys sent before the PTY application showed its cursor key mode.
    CursorKeyModeUnknown,
    /// The action needs a PTY session.
    NotAPty,
    /// The exec approvals file cannot be read or written, is not valid JSON or not an object, or has
    /// an unsupported version. A malformed file is never rewritten.
    InvalidApprovalsFile,
    /// A sandbox was asked for that this host cannot enforce (or a step of entering it failed).
    /// Nothing was run.
    SandboxUnavailable,
    /// The container engine (`host.container`) could not be reached, or refused a step (making the
    /// scope's container, starting the exec). Nothing ran, or the run is reported as it ended.
    ContainerEngine,
    /// A key name or hex byte `sendKeys` does not know.
    InvalidKey,
    /// The script preflight refused a `python`/`node` command (OpenClaw B's texts).
    PreflightRejected,
    /// An unexpected internal failure (a bug): the message says what broke.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidCommand => "ERR_INVALID_COMMAND",
            ErrorCode::NulByte => "ERR_NUL_BYTE",
            ErrorCode::InvalidCwd => "ERR_INVALID_CWD",
            ErrorCode::InvalidEnv => "ERR_INVALID_ENV",
            ErrorCode::InvalidOption => "ERR_INVALID_OPTION",
            ErrorCode::EnvForbidden => "ERR_ENV_FORBIDDEN",
            ErrorCode::PreflightRejected => "ERR_PREFLIGHT_REJECTED",
            ErrorCode::InvalidKey => "ERR_INVALID_KEY",
            ErrorCode::InvalidRule => "ERR_INVALID_RULE",
            ErrorCode::UnknownShell => "ERR_UNKNOWN_SHELL",
            ErrorCode::SpawnFailed => "ERR_SPAWN_FAILED",
            ErrorCode::UnknownSession => "ERR_UNKNOWN_SESSION",
            ErrorCode::SessionNotRunning => "ERR_SESSION_NOT_RUNNING",
            ErrorCode::SessionRunning => "ERR_SESSION_RUNNING",
            ErrorCode::StdinClosed => "ERR_STDIN_CLOSED",
            ErrorCode::CursorKeyModeUnknown => "ERR_CURSOR_KEY_MODE_UNKNOWN",
            ErrorCode::NotAPty => "ERR_NOT_A_PTY",
            ErrorCode::InvalidApprovalsFile => "ERR_INVALID_APPROVALS_FILE",
            ErrorCode::SandboxUnavailable => "ERR_SANDBOX_UNAVAILABLE",
            ErrorCode::ContainerEngine => "ERR_CONTAINER_ENGINE",
            ErrorCode::Internal => "ERR_INTERNAL",
        }
    }
}

/// An error with a stable code and an actionable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentError {
    pub code: ErrorCode,
    pub message: String,
}

impl AgentError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AgentError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_option(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidOption, message)
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for AgentError {}

pub type AgentResult<T> = Result<T, AgentError>;
