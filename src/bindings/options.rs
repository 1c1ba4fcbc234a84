//! Reading `exec` options from a JS object, with a typed error for every wrong value.
//!
//! The options arrive as a plain object rather than a napi-derived struct so that a wrong type gets
//! our error code and a sentence naming the option, not napi's generic conversion message.

use std::path::PathBuf;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::{Env, ValueType};

use super::errors::{object_of, BindResult};
use crate::error::{AgentError, ErrorCode};
use crate::spawn::request::PtySize;
use crate::spawn::{ExecRequest, StdinMode};

pub struct Fields<'a> {
    pub obj: Object<'a>,
}

fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::Number => "a number",
        ValueType::String => "a string",
        ValueType::Symbol => "a symbol",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::External => "an external",
        ValueType::BigInt => "a bigint",
        _ => "an unknown value",
    }
}

impl<'a> Fields<'a> {
    pub(crate) fn raw(&self, name: &str) -> Result<Option<(ValueType, Unknown<'a>)>> {
        let v: Option<Unknown<'a>> = self.obj.get(name)?;
        match v {
            None => Ok(None),
            Some(u) => {
                let t = u.get_type()?;
                if t == ValueType::Null || t == ValueType::Undefined {
                    Ok(None)
                } else {
                    Ok(Some((t, u)))
                }
            }
        }
    }

    pub fn string(&self, name: &str, code: ErrorCode) -> BindResult<Option<String>> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(None),
            Some((ValueType::String, _)) => Ok(self.obj.get::<String>(name)?),
            Some((t, _)) => Err(AgentError::new(
                code,
                format!(
                    "The {name} option must be a string, but it is {}.",
                    type_name(t)
                ),
            )),
        };
        Ok(r?)
    }

    pub fn boolean(&self, name: &str) -> BindResult<Option<bool>> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(None),
            Some((ValueType::Boolean, _)) => Ok(self.obj.get::<bool>(name)?),
            Some((t, _)) => Err(AgentError::invalid_option(format!(
                "The {name} option must be true or false, but it is {}.",
                type_name(t)
            ))),
        };
        Ok(r?)
    }

    /// A finite, non-negative number of milliseconds (or count).
    pub fn non_negative(&self, name: &str) -> BindResult<Option<f64>> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(None),
            Some((ValueType::Number, _)) => {
                let n: f64 = self.obj.get::<f64>(name)?.unwrap_or(0.0);
                if !n.is_finite() || n < 0.0 {
                    Err(AgentError::invalid_option(format!(
                        "The {name} option must be a finite number of at least 0, but it is {n}."
                    )))
                } else {
                    Ok(Some(n))
                }
            }
            Some((t, _)) => Err(AgentError::invalid_option(format!(
                "The {name} option must be a number, but it is {}.",
                type_name(t)
            ))),
        };
        Ok(r?)
    }

    pub fn function(&self, name: &str) -> BindResult<bool> {
        let r: std::result::Result<_, AgentError> = match self.raw(name)? {
            None => Ok(false),
            Some((ValueType::Function, _)) => Ok(true),
            Some((t, _)) => Err(AgentError::invalid_option(format!(
                "The {name} option must be a function, but it is {}.",
                type_name(t)
            ))),
        };
        Ok(r?)
    }

    pub fn object(&self, name: &str) -> Result<Option<(ValueType, Unknown<'a>)>> {
        self.raw(name)
    }

    /// An array of strings (missing means empty).
    pub fn strings(&self, name: &str) -> BindResult<Vec<String>> {
        let bad = || {
            AgentError::invalid_option(format!("The {name} option must be an array of strings."))
        };
        let Some((t, value)) = self.raw(name)? else {
            return Ok(Vec::new());
        };
        if t != ValueType::Object || !value.is_array()? {
            return Err(bad().into());
        }
        let arr: Array = self.obj.get(name)?.expect("checked above");
        let mut out = Vec::with_capacity(arr.len() as usize);
        for i in 0..arr.len() {
            let item: Option<Unknown> = arr.get(i)?;
            match item {
                Some(u) if u.get_type()? == ValueType::String => {
                    out.push(arr.get::<String>(i)?.unwrap_or_default())
                }
                _ => return Err(bad().into()),
            }
        }
        Ok(out)
    }
}

/// An object of string values (`undefined` values skipped), as `[key, value]` pairs.
pub fn env_object(f: &Fields, name: &str) -> BindResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    let Some((t, _)) = f.object(name)? else {
        return Ok(out);
    };
    if t != ValueType::Object {
        return Err(AgentError::new(
            ErrorCode::InvalidEnv,
            format!(
                "The {name} option must be an object of string values, but it is {}.",
                type_name(t)
            ),
        )
        .into());
    }
    let env_obj: Object = f.obj.get(name)?.expect("checked above");
    for key in Object::keys(&env_obj)? {
        let v: Option<Unknown> = env_obj.get(&key)?;
        let vt = match &v {
            Some(u) => u.get_type()?,
            None => ValueType::Undefined,
        };
        match vt {
            ValueType::String => {
                let value: String = env_obj.get(&key)?.unwrap_or_default();
                out.push((key, value));
            }
            // `{ FOO: undefined }` is how JS spells "not set".
            ValueType::Undefined => {}
            other => {
                return Err(AgentError::new(
                    ErrorCode::InvalidEnv,
                    format!(
                        "The env variable \"{key}\" must be a string, but it is {}. Convert it with String(value) or leave it out.",
                        type_name(other)
                    ),
                ).into())
            }
        }
    }
    Ok(out)
}

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
    "signal",
];

/// The first own key of `obj` with a defined value that is not in `known`.
pub(crate) fn first_unknown_key(obj: &Object, known: &[&str]) -> Result<Option<String>> {
    let names = obj.get_property_names()?;
    let len = names.get_array_length()?;
    for i in 0..len {
        let name: String = names.get_element(i)?;
        if known.contains(&name.as_str()) {
            continue;
        }
        let defined = match obj.get::<Unknown>(&name)? {
            Some(v) => v.get_type()? != ValueType::Undefined,
            None => false,
        };
        if defined {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// `Unknown exec option "timout". Did you mean "timeoutMs"?`, or the list of options when nothing is
/// close.
pub(crate) fn unknown_option_message(what: &str, name: &str, known: &[&str]) -> String {
    let lower = name.to_ascii_lowercase();
    // Jaro-Winkler favours a shared start, which is how option typos look (`timout`, `timeout`).
    let nearest = known
        .iter()
        .map(|k| (strsim::jaro_winkler(&lower, &k.to_ascii_lowercase()), *k))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match nearest {
        Some((score, k)) if score >= 0.8 => {
            format!("Unknown {what} option \"{name}\". Did you mean \"{k}\"?")
        }
        _ => format!(
            "Unknown {what} option \"{name}\". Known options: {}.",
            known.join(", ")
        ),
    }
}

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
    if let Some(spec) = req.sandbox.as_mut() {
        // The writable roots are the host's: its `cwd` option (or the process's cwd), never the
        // directory a previous run `cd`'d into (the tracked cwd below replaced `req.cwd`).
        spec.pin_roots(&host_cwd);
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
