//! Reading `exec` options from a JS object, with a typed error for every wrong value (through
//! [`super::fields`]). The names accepted are `EXEC_OPTIONS`, which a test keeps equal to the fields
//! of the declared `ExecOptions` type.

use std::path::PathBuf;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::{Env, ValueType};

use super::errors::{object_of, BindResult};
use super::fields::{env_object, first_unknown_key, type_name, unknown_option_message, Fields};
use crate::error::{AgentError, ErrorCode};
use crate::spawn::request::PtySize;
use crate::spawn::{ExecRequest, StdinMode};

/// Parsed options: the core request plus what only the binding uses.
pub struct ParsedExec {
    pub request: ExecRequest,
    /// The approval gate to pass before the run starts.
    pub approval: Option<(
        crate::approval::gate::ApprovalOptions,
        Option<super::approval::ApprovalFn>,
    )>,
    /// `None`: wait for the end. `Some(0)`: background at once.
    pub yield_after: Option<Duration>,
    pub scope_key: Option<String>,
    pub has_on_output: bool,
    pub has_on_exit: bool,
    pub has_signal: bool,
}

/// Every option `exec` reads: anything else is a typo that would otherwise be ignored silently.
const EXEC_OPTIONS: &[&str] = &[
    "command",
    "cwd",
    "env",
    "modelEnv",
    "hostEnvPolicy",
    "inheritEnv",
    "shell",
    "pty",
    "timeoutMs",
    "killGraceMs",
    "drainTimeoutMs",
    "stdin",
    "maxOutputChars",
    "pendingMaxOutputChars",
    "maxLogBytes",
    "logDir",
    "keepLogs",
    "logAboveChars",
    "scopeKey",
    "onOutput",
    "onExit",
    "approval",
    "yieldMs",
    "background",
    "trackCwd",
    "ptyForceFallback",
    "sandbox",
    "host",
    "signal",
];

pub fn parse_exec_options<'a>(env: &Env, options: Unknown<'a>) -> BindResult<ParsedExec> {
    let t = options.get_type()?;
    if t != ValueType::Object {
        return Err(AgentError::new(
            ErrorCode::InvalidCommand,
            format!(
                "exec expects an options object such as {{ command: \"ls\" }}, but got {}.",
                type_name(t)
            ),
        )
        .into());
    }
    let obj: Object<'a> = object_of(env, &options)?.expect("checked to be an object above");
    let f = Fields { obj };
    if let Some(unknown) = first_unknown_key(&f.obj, EXEC_OPTIONS)? {
        return Err(AgentError::invalid_option(unknown_option_message(
            "exec",
            &unknown,
            EXEC_OPTIONS,
        ))
        .into());
    }

    let command = match f.raw("command")? {
        None => {
            return Err(AgentError::new(
                ErrorCode::InvalidCommand,
                "Provide a command to start: the command option is missing.",
            )
            .into())
        }
        Some((ValueType::String, _)) => f.obj.get::<String>("command")?.unwrap_or_default(),
        Some((t, _)) => {
            return Err(AgentError::new(
                ErrorCode::InvalidCommand,
                format!("The command must be a string, but it is {}.", type_name(t)),
            )
            .into())
        }
    };
    let mut req = ExecRequest::new(command);

    let mut tracked_cwd_warning = None;
    let cwd_given = f.object("cwd")?.is_some();
    if let Some(cwd) = f.string("cwd", ErrorCode::InvalidCwd)? {
        let p = PathBuf::from(&cwd);
        req.cwd = if p.is_absolute() { p } else { req.cwd.join(p) };
        if cwd.is_empty() {
            req.cwd = PathBuf::new();
        }
    }

    req.env = env_object(&f, "env")?;
    req.model_env = env_object(&f, "modelEnv")?;
    match f
        .string("hostEnvPolicy", ErrorCode::InvalidOption)?
        .as_deref()
    {
        None | Some("none") => {}
        Some("openclaw") => req.drop_dangerous_env = true,
        Some(other) => {
            return Err(AgentError::invalid_option(format!(
                "The hostEnvPolicy option must be \"openclaw\" or \"none\", but it is \"{other}\"."
            ))
            .into())
        }
    }
    if let Some(inherit) = f.boolean("inheritEnv")? {
        req.inherit_env = inherit;
    }
    req.shell = f.string("shell", ErrorCode::UnknownShell)?;

    match f.object("pty")? {
        None => {}
        Some((ValueType::Boolean, _)) => {
            let wanted = f.obj.get::<bool>("pty")?.unwrap_or(false);
            req.pty = wanted.then(PtySize::default);
        }
        Some((ValueType::Object, _)) => {
            let pty: Object = f.obj.get("pty")?.expect("checked above");
            let pf = Fields { obj: pty };
            let mut size = PtySize::default();
            if let Some(c) = pf.non_negative("cols")? {
                size.cols = c.min(u16::MAX as f64) as u16;
            }
            if let Some(r) = pf.non_negative("rows")? {
                size.rows = r.min(u16::MAX as f64) as u16;
            }
            req.pty = Some(size);
        }
        Some((t, _)) => {
            return Err(AgentError::invalid_option(format!(
                "The pty option must be true, false or {{ cols, rows }}, but it is {}.",
                type_name(t)
            ))
            .into())
        }
    }

    if let Some(ms) = f.non_negative("timeoutMs")? {
        req.timeout = (ms > 0.0).then(|| Duration::from_millis(ms as u64));
    }
    if let Some(ms) = f.non_negative("killGraceMs")? {
        req.kill_grace = Duration::from_millis(ms as u64);
    }
    if let Some(ms) = f.non_negative("drainTimeoutMs")? {
        req.drain_timeout = Duration::from_millis(ms as u64);
    }
    match f.string("stdin", ErrorCode::InvalidOption)?.as_deref() {
        None | Some("closed") => {}
        Some("pipe") => req.stdin = StdinMode::Pipe,
        Some(other) => {
            return Err(AgentError::invalid_option(format!(
                "The stdin option must be \"closed\" or \"pipe\", but it is \"{other}\"."
            ))
            .into())
        }
    }
    if let Some(n) = f.non_negative("maxOutputChars")? {
        req.limits.max_output_chars = n as usize;
    }
    if let Some(n) = f.non_negative("pendingMaxOutputChars")? {
        req.limits.pending_max_output_chars = n as usize;
    }
    if let Some(n) = f.non_negative("logAboveChars")? {
        req.log_above_chars = Some(n as usize);
    }
    if let Some(keep) = f.boolean("keepLogs")? {
        req.keep_logs = keep;
    }
    if let Some(n) = f.non_negative("maxLogBytes")? {
        req.max_log_bytes = n as u64;
    }
    if let Some(dir) = f.string("logDir", ErrorCode::InvalidOption)? {
        req.log_dir = PathBuf::from(dir);
        crate::watchdog::watch_log_dir(&req.log_dir);
    }
    let mut yield_after = f
        .non_negative("yieldMs")?
        .map(|ms| Duration::from_millis(ms as u64));
    if f.boolean("background")? == Some(true) {
        req.background = true;
        yield_after = Some(Duration::ZERO);
    }
    if f.boolean("trackCwd")? == Some(true) {
        req.cwd_report = Some(req.log_dir.join(format!(
            "cwd-{}-{}.txt",
            std::process::id(),
            agent_exec_core::util::uuid_v4()
        )));
    }
    let scope_key = f.string("scopeKey", ErrorCode::InvalidOption)?;
    let host_cwd = req.cwd.clone();
    if req.cwd_report.is_some() && !cwd_given {
        // The scope's tracked directory, if a previous run left one and it still exists.
        let (cwd, warning) = crate::session::workdir::tracked_or(
            crate::session::registry::global(),
            scope_key.as_deref(),
            std::mem::take(&mut req.cwd),
        );
        req.cwd = cwd;
        tracked_cwd_warning = warning;
    }
    let has_on_output = f.function("onOutput")?;
    let has_on_exit = f.function("onExit")?;
    let has_signal = match f.object("signal")? {
        None => false,
        Some((ValueType::Object, _)) => true,
        Some((t, _)) => {
            return Err(AgentError::invalid_option(format!(
                "The signal option must be an AbortSignal, but it is {}.",
                type_name(t)
            ))
            .into())
        }
    };
    let approval = match f.object("approval")? {
        None => None,
        Some((_, value)) => Some(super::approval::parse_approval(env, value)?),
    };
    req.sandbox = super::sandbox::parse_sandbox(&f)?;
    req.container = super::container::parse_host(&f)?;
    if let Some(spec) = req.sandbox.as_mut() {
        // The writable roots are the host's: its `cwd` option (or the process's cwd), never the
        // directory a previous run `cd`'d into (the tracked cwd below replaced `req.cwd`).
        spec.pin_roots(&host_cwd);
        // The approvals file this gate obeys, and OpenClaw's default one (under $OPENCLAW_HOME or
        // $HOME, which a tool's elevated path reads), stay the host's wherever they lie (a run under
        // the roots could otherwise allowlist `*` for every later command).
        let mut files = vec![agent_exec_core::approval::store::default_path()];
        if let Some(file) = approval
            .as_ref()
            .and_then(|(o, _)| o.approvals_file.clone())
        {
            files.push(file);
        }
        for file in files {
            let file = host_cwd.join(file).to_string_lossy().into_owned();
            if !spec.deny_write.contains(&file) {
                spec.deny_write.push(file);
            }
        }
    }
    if let Some(force) = f.boolean("ptyForceFallback")? {
        req.pty_force_fallback = force;
    }
    if let Some(w) = tracked_cwd_warning {
        req.warnings.push(w);
    }
    Ok(ParsedExec {
        request: req,
        approval,
        yield_after,
        scope_key,
        has_on_output,
        has_on_exit,
        has_signal,
    })
}
