//! Approvals from JS: `analyzeCommand`, `evaluateCommand`, and the `approval` option of `exec` with
//! its `onApproval` handler, called through a thread-safe function and awaited with a deadline.

use std::path::PathBuf;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::{Env, ValueType};
use napi_derive::napi;
use serde_json::{json, Value};

use super::errors::{object_of, to_napi, typed, BindResult};
use super::fields::Fields;
use crate::approval::analyze::{analyze, Analysis, Context};
use crate::approval::evaluate::{Satisfied, SegmentVerdict};
use crate::approval::gate::{self, Answer, ApprovalOptions, ApprovalRequest, GateResult};
use crate::approval::policy::{Ask, Security};
use crate::error::{AgentError, ErrorCode};

/// What `onApproval` receives.
#[napi(object, js_name = "ApprovalRequest")]
pub struct JsApprovalRequest {
    pub id: String,
    pub command: String,
    pub cwd: String,
    pub agent_id: String,
    #[napi(ts_type = "'deny' | 'allowlist' | 'full'")]
    pub security: String,
    #[napi(ts_type = "'off' | 'on-miss' | 'always'")]
    pub ask: String,
    /// Why a person is asked: `ask=always`, `allowlist miss` or `analysis failed`.
    pub reason: String,
    /// Why the shell analysis failed, when it did.
    pub analysis_reason: Option<String>,
    /// The analysis failure's stable code, when it has one (`command-too-large`, `too-many-commands`,
    /// `shell-not-analysed` on Windows).
    pub analysis_code: Option<String>,
    #[napi(ts_type = "Array<ApprovalRequestSegment>")]
    pub segments: Vec<JsRequestSegment>,
    /// Executables `allow-always` would add to the allowlist.
    pub resolved_paths: Vec<String>,
    /// Epoch ms after which askFallback decides.
    pub expires_at_ms: f64,
    pub allowed_decisions: Vec<String>,
    /// With permission rules: the narrowest allow rules that would let this command run without
    /// asking (one per segment, never a wrapper rule such as `Bash(sh:*)`); empty otherwise.
    pub suggestions: Vec<String>,
    /// What answering `allow-always` keeps, and where; show it to the person asked.
    #[napi(ts_type = "ApprovalAlwaysGrant")]
    pub allow_always: JsAlwaysGrant,
}

/// What `allow-always` would keep for one request.
#[napi(object, js_name = "ApprovalAlwaysGrant")]
pub struct JsAlwaysGrant {
    /// The allowlist patterns (executables) or allow rules it adds. Empty when it adds nothing.
    pub entries: Vec<String>,
    /// The approvals file the allowlist patterns are written to (allowlist policies); absent for
    /// permission rules, which the host keeps (`onRulesAdded`).
    pub file: Option<String>,
    /// The agent whose allowlist they join.
    pub agent_id: Option<String>,
    /// Why `allow-always` is not offered for this command (not in `allowedDecisions`), e.g. it would
    /// add a shell, interpreter or package runner, which would then run anything unasked.
    pub withheld: Option<String>,
}

#[napi(object, js_name = "ApprovalRequestSegment")]
pub struct JsRequestSegment {
    pub argv: Vec<String>,
    pub resolved_path: Option<String>,
    pub executable_name: String,
    /// Why this segment is not allowed by the allowlist.
    pub miss: Option<String>,
}

impl From<ApprovalRequest> for JsApprovalRequest {
    fn from(r: ApprovalRequest) -> Self {
        JsApprovalRequest {
            id: r.id,
            command: r.command,
            cwd: r.cwd,
            agent_id: r.agent_id,
            security: r.security.as_str().into(),
            ask: r.ask.as_str().into(),
            reason: r.reason,
            analysis_reason: r.analysis_reason,
            analysis_code: r.analysis_code.map(String::from),
            segments: r
                .segments
                .into_iter()
                .map(|s| JsRequestSegment {
                    argv: s.argv,
                    resolved_path: s.resolved_path,
                    executable_name: s.executable_name,
                    miss: s.miss,
                })
                .collect(),
            resolved_paths: r.resolved_paths,
            expires_at_ms: r.expires_at_ms as f64,
            allowed_decisions: r.allowed_decisions.into_iter().map(String::from).collect(),
            suggestions: r.suggestions,
            allow_always: JsAlwaysGrant {
                entries: r.allow_always.entries,
                file: r.allow_always.file,
                agent_id: r.allow_always.agent_id,
                withheld: r.allow_always.withheld,
            },
        }
    }
}

/// How the approval gate decided a run.
#[napi(object, js_name = "ApprovalSummary")]
#[derive(Clone)]
pub struct JsApprovalSummary {
    pub allowed: bool,
    #[napi(ts_type = "'allow' | 'deny' | 'ask'")]
    pub decision: String,
    #[napi(ts_type = "'policy' | 'user' | 'fallback'")]
    pub decided_by: String,
    pub reason: String,
    #[napi(ts_type = "'allow-once' | 'allow-always' | 'deny' | 'timeout' | 'error'")]
    pub answer: Option<String>,
    pub request_id: Option<String>,
    /// Allowlist patterns that matched.
    pub matches: Vec<String>,
    /// Patterns `allow-always` added to the approvals file.
    pub persisted: Vec<String>,
    /// With permission rules: the narrowest rules that would allow this command without asking.
    pub suggestions: Vec<String>,
    pub approvals_file: String,
    /// The command was let through on analysis alone (read-only class, safe bin), not because the
    /// user trusted it by name.
    pub analysis_only: bool,
    /// How such a run was confined: `read-only-sandbox` (nothing writable but a private temp dir,
    /// no network), or `analysis-only` where the host cannot make a sandbox (`confinementNote` says
    /// why). Absent when the run is as configured.
    #[napi(ts_type = "'read-only-sandbox' | 'analysis-only'")]
    pub confinement: Option<String>,
    pub confinement_note: Option<String>,
}

impl From<&GateResult> for JsApprovalSummary {
    fn from(g: &GateResult) -> Self {
        JsApprovalSummary {
            allowed: g.allowed,
            decision: g.decision.as_str().into(),
            decided_by: g.decided_by.into(),
            reason: g.reason.clone(),
            answer: g.answer.as_ref().map(|a| {
                match a {
                    Answer::AllowOnce => "allow-once",
                    Answer::AllowAlways => "allow-always",
                    Answer::Deny => "deny",
                    Answer::TimedOut => "timeout",
                    Answer::Failed(_) => "error",
                }
                .into()
            }),
            request_id: g.request_id.clone(),
            matches: g.matches.clone(),
            persisted: g.persisted.clone(),
            suggestions: g.suggestions.clone(),
            approvals_file: g.approvals_file.display().to_string(),
            analysis_only: g.analysis_only,
            confinement: g.confinement.as_ref().map(|c| c.as_str().to_string()),
            confinement_note: g.confinement.as_ref().and_then(|c| match c {
                crate::approval::gate::Confinement::AnalysisOnly(why) => Some(why.clone()),
                crate::approval::gate::Confinement::ReadOnlySandbox => None,
            }),
        }
    }
}

/// Options of the `approval` field of `exec` (and of `evaluateCommand`).
#[napi(object, js_name = "ApprovalOptions")]
pub struct JsApprovalOptions {
    #[napi(ts_type = "'deny' | 'allowlist' | 'full'")]
    pub security: Option<String>,
    #[napi(ts_type = "'off' | 'on-miss' | 'always'")]
    pub ask: Option<String>,
    /// What happens when nobody answers in time (default deny).
    #[napi(ts_type = "'deny' | 'allowlist' | 'full'")]
    pub ask_fallback: Option<String>,
    /// Which agent's entries of the approvals file apply (default "main").
    pub agent_id: Option<String>,
    /// Default `$OPENCLAW_HOME` or `$HOME`, then `.openclaw/exec-approvals.json`.
    pub approvals_file: Option<String>,
    /// Safe bins (default cut, uniq, head, tail, tr, wc).
    pub safe_bins: Option<Vec<String>>,
    /// Where safe bins must live (default /bin, /usr/bin).
    pub safe_bin_trusted_dirs: Option<Vec<String>>,
    /// How long `onApproval` may take (default 120000 ms); then askFallback decides.
    pub timeout_ms: Option<f64>,
    /// Claude Code style rules instead of the allowlist (`Bash(npm run test:*)`); unmatched commands ask.
    /// Deny rules are a convenience, not a boundary: they match what a command names, so where any
    /// deny or ask rule exists, what they cannot see into (inline code such as `python3 -c`, a file
    /// made in the same line, shell state set by an earlier segment) is asked, and a sandbox is what
    /// actually contains a command. A prefix rule on a runner (`Bash(npm test:*)`) does not cover the
    /// runner's options that change what runs (`--node-options`, `--script-shell`, `make -f`, ...).
    #[napi(ts_type = "{ deny?: string[]; ask?: string[]; allow?: string[] }")]
    pub rules: Option<Value>,
    /// OpenClaw's `strictInlineEval`: under an allowlist, a command running an inline program
    /// (`python3 -c`, `node -e`, `perl -e`, an `awk`/`sed` program, `find -exec`, `xargs CMD`...) is
    /// always asked, allow-always is not offered for it, and askFallback never allows it on a timeout.
    pub strict_inline_eval: Option<bool>,
    /// With rules: read-only commands (see classifyCommand) run without asking, confined to a
    /// read-only sandbox where the host can make one (`approval.confinement` says how it ran).
    pub allow_read_only: Option<bool>,
    /// With rules: the directories the rules are meant for (a tool set's working directories). An
    /// allow rule matches only a command that runs inside them (its cwd and every `cd` of it);
    /// elsewhere it asks: a `package.json` or `Makefile` of another directory is not the one the
    /// user allowed `npm test` or `make` for. `Bash(*)` is not limited.
    pub working_dirs: Option<Vec<String>>,
    #[napi(
        ts_type = "(request: ApprovalRequest) => Promise<'allow-once' | 'allow-always' | 'deny'> | 'allow-once' | 'allow-always' | 'deny'"
    )]
    pub on_approval: Option<Value>,
}

pub type ApprovalFn = ThreadsafeFunction<
    JsApprovalRequest,
    Either<String, Promise<String>>,
    JsApprovalRequest,
    Status,
    false,
>;

fn enum_opt<T>(
    f: &Fields,
    name: &str,
    parse: fn(&str) -> Option<T>,
    allowed: &str,
) -> BindResult<Option<T>> {
    let Some(s) = f.string(name, ErrorCode::InvalidOption)? else {
        return Ok(None);
    };
    match parse(&s) {
        Some(v) => Ok(Some(v)),
        None => Err(AgentError::invalid_option(format!(
            "approval.{name} must be one of {allowed}, but it is \"{s}\"."
        ))
        .into()),
    }
}

/// Parse an approval options object; the handler (if any) is returned separately.
pub fn parse_approval(
    env: &Env,
    value: Unknown,
) -> BindResult<(ApprovalOptions, Option<ApprovalFn>)> {
    if value.get_type()? != ValueType::Object {
        return Err(AgentError::invalid_option(
            "The approval option must be an object such as { security: \"allowlist\", ask: \"on-miss\" }.",
        ).into());
    }
    let f = Fields {
        obj: object_of(env, &value)?.expect("checked to be an object above"),
    };
    let mut o = ApprovalOptions {
        timeout: gate::DEFAULT_APPROVAL_TIMEOUT,
        ..Default::default()
    };
    o.security = enum_opt(&f, "security", Security::parse, "deny, allowlist, full")?;
    o.ask = enum_opt(&f, "ask", Ask::parse, "off, on-miss, always")?;
    o.ask_fallback = enum_opt(&f, "askFallback", Security::parse, "deny, allowlist, full")?;
    o.agent_id = f.string("agentId", ErrorCode::InvalidOption)?;
    o.approvals_file = f
        .string("approvalsFile", ErrorCode::InvalidOption)?
        .map(PathBuf::from);
    if f.object("safeBins")?.is_some() {
        o.safe_bins = Some(
            f.strings("safeBins")?
                .into_iter()
                .map(|s| s.trim().to_ascii_lowercase())
                .collect(),
        );
    }
    o.trusted_dirs = f.paths("safeBinTrustedDirs")?;
    if let Some(ms) = f.non_negative("timeoutMs")? {
        o.timeout = Duration::from_millis(ms as u64);
    }
    if let Some((t, _)) = f.object("rules")? {
        if t != ValueType::Object {
            return Err(AgentError::invalid_option(
                "approval.rules must be an object such as { allow: [\"Bash(npm run test:*)\"] }.",
            )
            .into());
        }
        let rf = Fields {
            obj: f.obj.get::<Object>("rules")?.expect("checked above"),
        };
        let parse = |name: &str, allow: bool| -> BindResult<Vec<crate::approval::rules::Rule>> {
            crate::approval::rules::Rule::parse_list(&rf.strings(name)?, allow)
                .map_err(|m| AgentError::new(ErrorCode::InvalidRule, m).into())
        };
        o.rules = Some(crate::approval::rules::RuleSet {
            deny: parse("deny", false)?,
            ask: parse("ask", false)?,
            allow: parse("allow", true)?,
        });
    }
    o.allow_read_only = f.boolean("allowReadOnly")?.unwrap_or(false);
    o.strict_inline_eval = f.boolean("strictInlineEval")?.unwrap_or(false);
    o.working_dirs = f.paths("workingDirs")?;
    let handler = if f.function("onApproval")? {
        f.obj.get::<ApprovalFn>("onApproval")?
    } else {
        None
    };
    Ok((o, handler))
}

/// Ask the JS handler; anything but a valid decision string counts as a failure (deny).
pub async fn ask_handler(handler: &ApprovalFn, request: ApprovalRequest) -> Answer {
    let returned = match handler.call_async_catch(request.into()).await {
        Ok(v) => v,
        Err(e) => return Answer::Failed(format!("the handler threw: {}", e.reason)),
    };
    let decision = match returned {
        Either::A(s) => s,
        Either::B(promise) => match promise.await {
            Ok(s) => s,
            Err(e) => return Answer::Failed(format!("the handler rejected: {}", e.reason)),
        },
    };
    match decision.as_str() {
        "allow-once" => Answer::AllowOnce,
        "allow-always" => Answer::AllowAlways,
        "deny" => Answer::Deny,
        other => Answer::Failed(format!(
            "the handler returned \"{other}\", not allow-once, allow-always or deny"
        )),
    }
}

/// JSON nulls become absent fields, as the optional fields of the declared types promise.
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

fn segment_json(s: &crate::approval::analyze::Segment) -> Value {
    json!({
        "argv": s.argv,
        "effectiveArgv": s.effective_argv,
        "wrappers": s.wrappers,
        "rawExecutable": s.resolution.raw_executable,
        "resolvedPath": s.resolution.resolved_path.as_ref().map(|p| p.display().to_string()),
        "executableName": s.resolution.executable_name,
        "blocked": s.blocked,
        "inexact": s.inexact,
        "inner": s.inner.as_ref().map(|a| analysis_json(a)),
    })
}

fn analysis_json(a: &Analysis) -> Value {
    json!({
        "ok": a.ok,
        "reason": a.reason,
        "code": a.code,
        "operators": a.operators,
        "chains": a.chains.iter().map(|c| c.iter().map(segment_json).collect::<Vec<_>>()).collect::<Vec<_>>(),
    })
}

fn verdict_json(v: &SegmentVerdict) -> Value {
    let (by, pattern) = match &v.satisfied {
        Some(Satisfied::Pattern(p)) => (Some("allowlist"), Some(p.clone())),
        Some(Satisfied::SafeBin) => (Some("safe-bin"), None),
        Some(Satisfied::Inner) => (Some("inner"), None),
        None => (None, None),
    };
    json!({ "satisfiedBy": by, "pattern": pattern, "miss": v.miss })
}

struct Where {
    cwd: PathBuf,
    path: Option<String>,
    home: Option<String>,
    /// A locale of the command's environment in which bash may read bytes as other characters
    /// than the analysis (as `exec` judges it: any of LC_ALL, LC_CTYPE, LANG outside UTF-8).
    locale: Option<String>,
}

fn parse_where<'a>(
    env: &Env,
    options: &Option<Unknown<'a>>,
) -> BindResult<(Where, Option<Fields<'a>>)> {
    let mut w = Where {
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        path: std::env::var("PATH").ok(),
        home: std::env::var("HOME").ok(),
        locale: None,
    };
    let mut locale_vars: Vec<(&str, Option<String>)> = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .map(|k| (*k, std::env::var(k).ok()))
        .collect();
    let pick_locale = |vars: &[(&str, Option<String>)]| {
        vars.iter().find_map(|(_, v)| {
            v.clone()
                .filter(|v| !crate::approval::env_names::reads_like_utf8(v))
        })
    };
    let Some(o) = options else {
        w.locale = pick_locale(&locale_vars);
        return Ok((w, None));
    };
    match o.get_type()? {
        ValueType::Undefined | ValueType::Null => return Ok((w, None)),
        ValueType::Object => {}
        _ => {
            return Err(AgentError::invalid_option(
                "Options must be an object such as { cwd: \"/repo\" }.",
            )
            .into())
        }
    }
    let f = Fields {
        obj: object_of(env, o)?.expect("checked to be an object above"),
    };
    if let Some(cwd) = f.string("cwd", ErrorCode::InvalidCwd)? {
        w.cwd = w.cwd.join(cwd);
    }
    if let Some((t, _)) = f.object("env")? {
        if t != ValueType::Object {
            return Err(AgentError::new(
                ErrorCode::InvalidEnv,
                "The env option must be an object of string values.",
            )
            .into());
        }
        let e: Object = f.obj.get("env")?.expect("checked");
        let ef = Fields { obj: e };
        if let Some(p) = ef.string("PATH", ErrorCode::InvalidEnv)? {
            w.path = Some(p);
        }
        if let Some(h) = ef.string("HOME", ErrorCode::InvalidEnv)? {
            w.home = Some(h);
        }
        for (k, v) in locale_vars.iter_mut() {
            if let Some(given) = ef.string(k, ErrorCode::InvalidEnv)? {
                *v = Some(given);
            }
        }
    }
    w.locale = pick_locale(&locale_vars);
    Ok((w, Some(f)))
}

fn command_string(env: &Env, command: Unknown) -> Result<String> {
    if command.get_type()? != ValueType::String {
        return Err(to_napi(
            env,
            &AgentError::new(ErrorCode::InvalidCommand, "The command must be a string."),
        ));
    }
    Ok(typed(env, &command, ValueType::String)?.unwrap_or_default())
}

/// Parse a command the way the approval gate does: chains, pipelines, argv, wrappers, resolved paths.
#[napi(
    ts_args_type = "command: string, options?: { cwd?: string; env?: Record<string, string> }",
    ts_return_type = "CommandAnalysis"
)]
pub fn analyze_command(env: &Env, command: Unknown, options: Option<Unknown>) -> Result<Value> {
    let command = command_string(env, command)?;
    let (w, _) = parse_where(env, &options).map_err(|e| e.into_napi(env))?;
    let a = analyze(
        &command,
        &Context {
            cwd: &w.cwd,
            path: w.path.as_deref(),
            home: w.home.as_deref(),
        },
    )
    .in_locale(w.locale.as_deref());
    Ok(without_nulls(analysis_json(&a)))
}

/// Evaluate a command against the approvals file and policy without running it or asking anyone.
#[napi(
    ts_args_type = "command: string, options?: ApprovalOptions & { cwd?: string; env?: Record<string, string> }",
    ts_return_type = "CommandEvaluation"
)]
pub fn evaluate_command(env: &Env, command: Unknown, options: Option<Unknown>) -> Result<Value> {
    let command = command_string(env, command)?;
    let (w, _) = parse_where(env, &options).map_err(|e| e.into_napi(env))?;
    let mut opts = match options {
        Some(o) if o.get_type()? == ValueType::Object => {
            parse_approval(env, o).map_err(|e| e.into_napi(env))?.0
        }
        _ => ApprovalOptions {
            timeout: gate::DEFAULT_APPROVAL_TIMEOUT,
            ..Default::default()
        },
    };
    // As `exec` judges the command: in the locale its environment gives.
    opts.run_locale = opts.run_locale.or(w.locale);
    let p = gate::prepare(
        &command,
        &w.cwd,
        w.path.as_deref(),
        w.home.as_deref(),
        &opts,
    )
    .map_err(|e| to_napi(env, &e))?;
    Ok(without_nulls(json!({
        "analysisOk": p.evaluation.analysis_ok,
        "allowlistSatisfied": p.evaluation.allowlist_satisfied,
        "decision": p.decision.as_str(),
        "reason": p.reason,
        "requiresApproval": p.decision == crate::approval::evaluate::Decision::Ask,
        "security": p.policy.security.as_str(),
        "ask": p.policy.ask.as_str(),
        "askFallback": p.policy.ask_fallback.as_str(),
        "agentId": p.agent_id,
        "approvalsFile": p.file.display().to_string(),
        "matches": p.evaluation.matches,
        "segments": p.evaluation.verdicts.iter().map(verdict_json).collect::<Vec<_>>(),
        "analysis": analysis_json(&p.analysis),
        "allowAlways": always_json(&gate::always_grant(&p)),
    })))
}

/// The shape `analyzeCommand` returns (declared for the type definitions).
#[napi(object, js_name = "CommandAnalysis")]
pub struct JsCommandAnalysis {
    pub ok: bool,
    /// Why the command cannot be analysed (OpenClaw's texts, e.g. `unsupported shell token: $()`).
    pub reason: Option<String>,
    /// A stable code for failures callers may branch on: `command-too-large` (over 256 KiB),
    /// `too-many-commands` (over 1024 simple commands, inner `sh -c` ones included) or
    /// `shell-not-analysed` (Windows, where PowerShell or cmd.exe runs the command). Such commands are asked, never run unasked.
    pub code: Option<String>,
    /// `&&`, `||` or `;` between chain parts.
    pub operators: Vec<String>,
    /// Chain parts, each a pipeline of simple commands.
    #[napi(ts_type = "Array<Array<CommandSegment>>")]
    pub chains: Vec<Vec<JsCommandSegment>>,
}

#[napi(object, js_name = "CommandSegment")]
pub struct JsCommandSegment {
    pub argv: Vec<String>,
    /// argv after transparent wrappers (env, nice, nohup, stdbuf, timeout, time).
    pub effective_argv: Vec<String>,
    pub wrappers: Vec<String>,
    pub raw_executable: String,
    pub resolved_path: Option<String>,
    pub executable_name: String,
    /// Why this command can never be allowlisted as written (sudo, env -S, failed inner shell...).
    pub blocked: Option<String>,
    /// Why the analyzer cannot see exactly what runs (a compound-command keyword, `eval`, a word
    /// bash may expand in command position, `xargs`...): never run unasked, and asked whenever a
    /// deny rule exists.
    pub inexact: Option<String>,
    #[napi(ts_type = "CommandAnalysis")]
    pub inner: Option<Value>,
}

/// The shape `evaluateCommand` returns (declared for the type definitions).
#[napi(object, js_name = "CommandEvaluation")]
pub struct JsCommandEvaluation {
    pub analysis_ok: bool,
    pub allowlist_satisfied: bool,
    #[napi(ts_type = "'allow' | 'deny' | 'ask'")]
    pub decision: String,
    pub reason: String,
    pub requires_approval: bool,
    pub security: String,
    pub ask: String,
    pub ask_fallback: String,
    pub agent_id: String,
    pub approvals_file: String,
    pub matches: Vec<String>,
    #[napi(ts_type = "Array<SegmentVerdict>")]
    pub segments: Vec<JsSegmentVerdict>,
    pub analysis: JsCommandAnalysis,
    /// What an `allow-always` answer would keep, and where (as in `ApprovalRequest`).
    #[napi(ts_type = "ApprovalAlwaysGrant")]
    pub allow_always: JsAlwaysGrant,
}

fn always_json(g: &crate::approval::gate::AlwaysGrant) -> Value {
    json!({ "entries": g.entries, "file": g.file, "agentId": g.agent_id, "withheld": g.withheld })
}

#[napi(object, js_name = "SegmentVerdict")]
pub struct JsSegmentVerdict {
    #[napi(ts_type = "'allowlist' | 'safe-bin' | 'inner'")]
    pub satisfied_by: Option<String>,
    pub pattern: Option<String>,
    pub miss: Option<String>,
}

/// Check a model-supplied env against OpenClaw's host policy; throws `ERR_ENV_FORBIDDEN` with its texts.
#[napi(ts_args_type = "env: Record<string, string>")]
pub fn check_model_env(env: &Env, value: Unknown) -> Result<()> {
    if value.get_type()? != ValueType::Object {
        return Ok(());
    }
    let holder = Fields {
        obj: {
            let mut o = Object::new(env)?;
            o.set("env", value)?;
            o
        },
    };
    let pairs = super::fields::env_object(&holder, "env").map_err(|e| e.into_napi(env))?;
    crate::spawn::env::validate_model_env(&pairs).map_err(|e| to_napi(env, &e))
}

/// What `classifyCommand` returns.
#[napi(object, js_name = "CommandClassification")]
pub struct JsCommandClassification {
    /// Whether the command parsed (a command that does not is never read-only).
    pub parsed: bool,
    #[napi(
        ts_type = "Array<{ argv: string[]; kind: 'search' | 'read' | 'list' | 'neutral' | 'other'; readOnly: boolean; reasons: string[] }>"
    )]
    pub segments: Vec<Value>,
    /// Every non-neutral segment searches, reads or lists.
    pub is_search_or_read: bool,
    /// Nothing in the command writes, deletes or runs other programs.
    pub is_read_only: bool,
    pub reasons: Vec<String>,
}

/// Classify each segment (search, read, list, neutral, other) and the whole command, with reasons.
#[napi(ts_args_type = "command: string, options?: { cwd?: string; env?: Record<string, string> }")]
pub fn classify_command(
    env: &Env,
    command: Unknown,
    options: Option<Unknown>,
) -> Result<JsCommandClassification> {
    let command = command_string(env, command)?;
    let (w, _) = parse_where(env, &options).map_err(|e| e.into_napi(env))?;
    let c = crate::approval::classify::classify(
        &command,
        &Context {
            cwd: &w.cwd,
            path: w.path.as_deref(),
            home: w.home.as_deref(),
        },
    );
    Ok(JsCommandClassification {
        parsed: c.parsed,
        segments: c
            .segments
            .iter()
            .map(|s| json!({ "argv": s.argv, "kind": s.kind.as_str(), "readOnly": s.read_only, "reasons": s.reasons }))
            .collect(),
        is_search_or_read: c.is_search_or_read,
        is_read_only: c.is_read_only,
        reasons: c.reasons,
    })
}

/// What `checkPermissionRules` returns.
#[napi(object, js_name = "RuleDecision")]
pub struct JsRuleDecision {
    #[napi(ts_type = "'deny' | 'ask' | 'allow' | 'no-match'")]
    pub verdict: String,
    /// The rules that decided.
    pub rules: Vec<String>,
    pub reason: String,
    /// The narrowest allow rules that would let this command run without asking (one per segment).
    pub suggestions: Vec<String>,
}

/// Check a command against Claude Code style rules (`Bash(npm run test:*)`): deny, then ask, then allow;
/// every segment of a compound command must be allowed. Over-broad allow rules (`Bash(sh:*)`) and
/// malformed rules throw `ERR_INVALID_RULE`. Deny rules are a convenience, not a boundary: where any
/// exists, what they cannot see into (inline interpreter code, a file made in the same line, state
/// set by an earlier segment) is `ask`, never `allow`.
#[napi(
    ts_args_type = "command: string, rules: { deny?: string[]; ask?: string[]; allow?: string[]; cwd?: string; env?: Record<string, string> }"
)]
pub fn check_permission_rules(
    env: &Env,
    command: Unknown,
    rules: Unknown,
) -> Result<JsRuleDecision> {
    use crate::approval::rules::{suggest_rules, Rule, RuleSet};
    let command = command_string(env, command)?;
    let options = Some(rules);
    let (w, fields) = parse_where(env, &options).map_err(|e| e.into_napi(env))?;
    let mut set = RuleSet::default();
    if let Some(f) = fields {
        let parse = |name: &str, allow: bool| -> Result<Vec<Rule>> {
            let texts = f.strings(name).map_err(|e| e.into_napi(env))?;
            Rule::parse_list(&texts, allow)
                .map_err(|m| to_napi(env, &AgentError::new(ErrorCode::InvalidRule, m)))
        };
        set.deny = parse("deny", false)?;
        set.ask = parse("ask", false)?;
        set.allow = parse("allow", true)?;
    }
    let analysis = analyze(
        &command,
        &Context {
            cwd: &w.cwd,
            path: w.path.as_deref(),
            home: w.home.as_deref(),
        },
    )
    .in_locale(w.locale.as_deref());
    // The gate's own decision, text checks included: a host asking the rules gets what the gate
    // would do, never a looser answer.
    let d = set.decide_command(&analysis, &command);
    Ok(JsRuleDecision {
        verdict: d.verdict.as_str().into(),
        rules: d.rules,
        reason: d.reason,
        suggestions: if analysis.ok {
            suggest_rules(&analysis)
        } else {
            Vec::new()
        },
    })
}
