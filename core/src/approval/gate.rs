//! The approval gate of `exec`: analyse, evaluate against the approvals file, decide, and when the
//! policy says "ask", put the question to the caller's handler with a deadline.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use super::analyze::{analyze, Analysis, Context};
use super::evaluate::{
    decide, evaluate, fallback_allows, AllowRules, Decision, Evaluation, Policy,
};
use super::policy::{Ask, Security};
use super::store;
use crate::error::AgentError;

/// The caller's approval settings (all optional; per-call values only tighten the file's).
#[derive(Debug, Clone, Default)]
pub struct ApprovalOptions {
    pub security: Option<Security>,
    pub ask: Option<Ask>,
    pub ask_fallback: Option<Security>,
    pub agent_id: Option<String>,
    pub approvals_file: Option<PathBuf>,
    pub safe_bins: Option<Vec<String>>,
    pub trusted_dirs: Option<Vec<PathBuf>>,
    /// How long the handler may take before askFallback decides.
    pub timeout: Duration,
    /// Claude Code style rules instead of the allowlist: the second policy kind.
    pub rules: Option<super::rules::RuleSet>,
    /// With rules: a read-only command (see `classifyCommand`) runs without asking.
    pub allow_read_only: bool,
    /// The run has a terminal (PTY), where git starts a pager (`less`, in which `!cmd` runs a
    /// command) unless told not to: git is then read-only only with `--no-pager`/`-P`.
    /// Set by the caller of the gate that knows the run's mode.
    pub terminal: bool,
    /// With rules: allow rules match only commands that run inside these directories (and every
    /// `cd` of theirs); `None`: anywhere.
    pub working_dirs: Option<Vec<PathBuf>>,
    /// The environment the command gets from the model (`modelEnv`): judged as prefix assignments of
    /// every simple command (see `Analysis::with_environment`). Set by the exec pipeline.
    pub model_env: Vec<(String, String)>,
    /// The locale that sets how the run's bash splits bytes into characters (`LC_ALL`, else
    /// `LC_CTYPE`, else `LANG`, of its environment): outside UTF-8 and C, every segment is inexact
    /// (see `Analysis::in_locale`). Set by the exec pipeline.
    pub run_locale: Option<String>,
    /// OpenClaw's `strictInlineEval`: under an allowlist, a command that runs an inline program
    /// (`python3 -c`, `node -e`, an awk program; see `inline_eval`) is always asked, allow-always keeps
    /// nothing for it, and askFallback never lets it through when the question times out.
    pub strict_inline_eval: bool,
}

pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// What the handler is asked.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub id: String,
    pub command: String,
    pub cwd: String,
    pub agent_id: String,
    pub security: Security,
    pub ask: Ask,
    /// Why asking: `ask=always`, `allowlist miss` or `analysis failed`.
    pub reason: String,
    pub analysis_reason: Option<String>,
    /// The analysis failure's stable code (`command-too-large`, `too-many-commands`).
    pub analysis_code: Option<&'static str>,
    pub segments: Vec<RequestSegment>,
    pub resolved_paths: Vec<String>,
    pub expires_at_ms: u64,
    /// `allow-always` is not offered when every run must be asked.
    pub allowed_decisions: Vec<&'static str>,
    /// With permission rules: the narrowest allow rules that would let this command run unasked.
    pub suggestions: Vec<String>,
    /// What `allow-always` keeps, said before anyone answers.
    pub allow_always: AlwaysGrant,
}

/// What an `allow-always` answer to one request would keep, and where: shown to the person asked, so
/// the grant is never wider than what they saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlwaysGrant {
    /// The allowlist patterns (executables) or the allow rules it adds.
    pub entries: Vec<String>,
    /// The approvals file the patterns go to (allowlist policies); `None` for rules, which the
    /// host keeps (`onRulesAdded`).
    pub file: Option<String>,
    /// The agent whose allowlist they join.
    pub agent_id: Option<String>,
    /// Why `allow-always` is not offered for this command, when it is not.
    pub withheld: Option<String>,
}

#[derive(Debug, Clone)]
pub struct RequestSegment {
    pub argv: Vec<String>,
    pub resolved_path: Option<String>,
    pub executable_name: String,
    pub miss: Option<String>,
}

/// The handler's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    AllowOnce,
    AllowAlways,
    Deny,
    /// No answer before the deadline (or no handler): askFallback decides.
    TimedOut,
    /// The handler threw, rejected or returned something else: counts as deny.
    Failed(String),
}

/// The gate's verdict on one command.
#[derive(Debug, Clone)]
pub struct GateResult {
    pub allowed: bool,
    pub decision: Decision,
    /// `policy`, `user` or `fallback`.
    pub decided_by: &'static str,
    pub reason: String,
    pub answer: Option<Answer>,
    pub matches: Vec<String>,
    /// Patterns written to the approvals file by `allow-always`.
    pub persisted: Vec<String>,
    /// With permission rules: the narrowest rules that would allow this command again.
    pub suggestions: Vec<String>,
    pub request_id: Option<String>,
    pub approvals_file: PathBuf,
    /// The "yes" rests on analysis alone (the read-only class, a safe bin), not on a name the user
    /// trusted: the run is confined (see [`Confinement`]). False for denials, answers of the
    /// handler, allowlist entries, allow rules and `security=full`.
    pub analysis_only: bool,
    /// How the allowed run was confined; set by the exec pipeline, which knows what the host can do.
    pub confinement: Option<Confinement>,
}

/// How a command the gate let through on analysis alone runs. Analysis decides whether to ask;
/// confinement makes a wrong verdict harmless: a "read-only" command that writes meets the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// In a read-only sandbox: nothing writable but a private temp dir, no network, nothing outlives
    /// it, git without optional locks, hooks or fsmonitor.
    ReadOnlySandbox,
    /// This host cannot make a sandbox: the analysis is all that held (why, in a sentence).
    AnalysisOnly(String),
}

impl Confinement {
    pub fn as_str(&self) -> &'static str {
        match self {
            Confinement::ReadOnlySandbox => "read-only-sandbox",
            Confinement::AnalysisOnly(_) => "analysis-only",
        }
    }
}

fn resolved_paths(analysis: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    collect_paths(analysis, &mut out);
    out
}

fn collect_paths(analysis: &Analysis, out: &mut Vec<String>) {
    for s in analysis.segments() {
        match &s.inner {
            Some(inner) if inner.chains.len() > 1 => collect_paths(inner, out),
            _ => {
                if let Some(p) = &s.resolution.resolved_path {
                    let p = p.display().to_string();
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
            }
        }
    }
}

pub struct Prepared {
    pub analysis: Analysis,
    pub evaluation: Evaluation,
    pub policy: Policy,
    pub decision: Decision,
    pub reason: String,
    pub agent_id: String,
    pub file: PathBuf,
    /// Decided by permission rules (nothing is read from or written to the approvals file).
    pub by_rules: bool,
    /// Narrowest rules that would allow the command again.
    pub suggestions: Vec<String>,
    /// An "allow" decision that rests on analysis alone (see `GateResult::analysis_only`).
    pub by_analysis: bool,
    /// Under `strict_inline_eval`: the inline program the command runs (`python3 -c`).
    pub inline_eval: Option<String>,
}

/// Everything up to the decision, without asking anyone.
pub fn prepare(
    command: &str,
    cwd: &std::path::Path,
    path_env: Option<&str>,
    home: Option<&str>,
    opts: &ApprovalOptions,
) -> Result<Prepared, AgentError> {
    let file = opts
        .approvals_file
        .clone()
        .unwrap_or_else(store::default_path);
    if let Some(rules) = &opts.rules {
        return Ok(prepare_with_rules(
            command, cwd, path_env, home, opts, rules, file,
        ));
    }
    let loaded = store::load(&file)?;
    let agent_id = opts.agent_id.clone().unwrap_or_else(|| "main".into());
    let agent = store::resolve_agent(&loaded, Some(&agent_id));
    let policy = Policy::effective(
        agent.security,
        agent.ask,
        agent.ask_fallback,
        opts.security,
        opts.ask,
        opts.ask_fallback,
    );
    let analysis = analyze(
        command,
        &Context {
            cwd,
            path: path_env,
            home,
        },
    )
    .with_environment(&opts.model_env)
    .in_locale(opts.run_locale.as_deref());
    let patterns: Vec<String> = agent.allowlist.iter().map(|e| e.pattern.clone()).collect();
    let safe_bins: Vec<String> = opts.safe_bins.clone().unwrap_or_else(|| {
        super::safe_bins::DEFAULT_SAFE_BINS
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    let trusted: Vec<PathBuf> = opts.trusted_dirs.clone().unwrap_or_else(|| {
        super::safe_bins::DEFAULT_TRUSTED_DIRS
            .iter()
            .map(PathBuf::from)
            .collect()
    });
    let evaluation = evaluate(
        &analysis,
        &AllowRules {
            patterns: &patterns,
            safe_bins: &safe_bins,
            trusted_dirs: &trusted,
            home,
        },
    );
    let (mut decision, mut reason) = decide(&policy, &evaluation);
    let inline_eval = (opts.strict_inline_eval && policy.security == Security::Allowlist)
        .then(|| super::inline_eval::find(&analysis))
        .flatten();
    if let (Some(what), Decision::Allow) = (&inline_eval, decision) {
        decision = Decision::Ask;
        reason = format!("strict inline-eval mode requires explicit approval for {what}");
    }
    let by_analysis = decision == Decision::Allow
        && policy.security == Security::Allowlist
        && evaluation.by_analysis;
    Ok(Prepared {
        inline_eval,
        by_analysis,
        analysis,
        evaluation,
        policy,
        decision,
        reason,
        agent_id,
        file,
        by_rules: false,
        suggestions: Vec::new(),
    })
}

/// The second policy kind: deny, ask and allow rules decide; an unmatched command asks, unless it is
/// read-only and the caller opted in.
fn prepare_with_rules(
    command: &str,
    cwd: &std::path::Path,
    path_env: Option<&str>,
    home: Option<&str>,
    opts: &ApprovalOptions,
    rules: &super::rules::RuleSet,
    file: PathBuf,
) -> Prepared {
    use super::rules::Verdict;
    let ctx = Context {
        cwd,
        path: path_env,
        home,
    };
    let analysis = analyze(command, &ctx)
        .with_environment(&opts.model_env)
        .in_locale(opts.run_locale.as_deref());
    let evaluation = evaluate(
        &analysis,
        &AllowRules {
            patterns: &[],
            safe_bins: &[],
            trusted_dirs: &[],
            home,
        },
    );
    let ruled = rules.decide_command(&analysis, command);
    let outside = opts
        .working_dirs
        .as_ref()
        .and_then(|dirs| outside_working_dirs(&analysis, cwd, dirs));
    let blanket = ruled.rules.iter().all(|r| r == "Bash" || r == "Bash(*)");
    // (decision, reason, whether an allow rests on the read-only class alone)
    let (decision, reason, by_analysis) = match ruled.verdict {
        Verdict::Deny => (Decision::Deny, ruled.reason.clone(), false),
        Verdict::Ask => (Decision::Ask, ruled.reason.clone(), false),
        Verdict::Allow => match outside.filter(|_| !blanket) {
            Some(dir) => (
                Decision::Ask,
                format!(
                    "{} is outside the working directories the allow rules are for",
                    dir.display()
                ),
                false,
            ),
            None => (Decision::Allow, ruled.reason.clone(), false),
        },
        Verdict::NoMatch => {
            let c = super::classify::classify_analysis(&analysis);
            let pager = if opts.terminal {
                pager_in_terminal(&analysis)
            } else {
                None
            };
            if let (true, true, Some(why)) = (opts.allow_read_only, c.is_read_only, &pager) {
                (Decision::Ask, why.clone(), false)
            } else if opts.allow_read_only && c.is_read_only {
                (Decision::Allow, "read-only command".to_string(), true)
            } else {
                (Decision::Ask, ruled.reason.clone(), false)
            }
        }
    };
    let suggestions = if analysis.ok {
        super::rules::suggest_rules(&analysis)
    } else {
        Vec::new()
    };
    Prepared {
        inline_eval: None,
        by_analysis,
        analysis,
        evaluation,
        policy: Policy {
            security: Security::Allowlist,
            ask: Ask::OnMiss,
            ask_fallback: opts
                .ask_fallback
                .unwrap_or(Security::Deny)
                .min(Security::Allowlist),
        },
        decision,
        reason,
        agent_id: opts.agent_id.clone().unwrap_or_else(|| "main".into()),
        file,
        by_rules: true,
        suggestions,
    }
}

/// The first directory a command runs in that is outside `dirs`: its cwd, or where a `cd` (or
/// `pushd`) of it goes (a `cd` whose target cannot be told counts as outside).
fn outside_working_dirs(
    analysis: &Analysis,
    cwd: &std::path::Path,
    dirs: &[PathBuf],
) -> Option<PathBuf> {
    let real = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| real(d)).collect();
    let inside = |p: &std::path::Path| dirs.iter().any(|d| p.starts_with(d));
    let here = real(cwd);
    if !inside(&here) {
        return Some(here);
    }
    for s in analysis.segments() {
        let name = s
            .effective_argv
            .first()
            .map(|a| a.rsplit('/').next().unwrap_or(a));
        if !matches!(name, Some("cd" | "pushd")) {
            continue;
        }
        let target = match s.effective_argv.get(1) {
            Some(t) if !t.starts_with('-') => real(&here.join(t)),
            _ => return Some(PathBuf::from("(a cd the analyzer cannot follow)")),
        };
        if !inside(&target) {
            return Some(target);
        }
    }
    None
}

/// A git command that would page its output in a terminal (git pages by default when its output
/// is one; the pager takes keystrokes such as `!cmd`).
fn pager_in_terminal(analysis: &Analysis) -> Option<String> {
    fn walk(a: &Analysis) -> Option<String> {
        a.segments().find_map(|s| {
            if let Some(inner) = &s.inner {
                return walk(inner);
            }
            let argv = &s.effective_argv;
            let is_git = argv
                .first()
                .is_some_and(|a| a.rsplit('/').next() == Some("git"));
            let quiet = argv
                .iter()
                .skip(1)
                .take_while(|a| a.starts_with('-'))
                .any(|a| a == "--no-pager" || a == "-P");
            (is_git && !quiet).then(|| {
                "git starts a pager in a terminal, which runs commands typed into it; a read-only git command runs unasked there only with --no-pager".to_string()
            })
        })
    }
    walk(analysis)
}

/// What `allow-always` would keep for `p`: the executables for an allowlist (none of them a shell,
/// interpreter or runner, which would admit every script it starts), the suggested rules for rules.
pub fn always_grant(p: &Prepared) -> AlwaysGrant {
    if p.policy.ask == Ask::Always {
        return AlwaysGrant {
            withheld: Some("every command is asked under this policy (ask=always)".into()),
            ..Default::default()
        };
    }
    if p.by_rules {
        return AlwaysGrant {
            entries: p.suggestions.clone(),
            ..Default::default()
        };
    }
    if let Some(what) = &p.inline_eval {
        return AlwaysGrant {
            withheld: Some(format!(
                "the command runs an inline program ({what}) given in its own text, which no allowlist entry can describe; allow once"
            )),
            file: Some(p.file.display().to_string()),
            agent_id: Some(p.agent_id.clone()),
            ..Default::default()
        };
    }
    let entries = resolved_paths(&p.analysis);
    let withheld = entries
        .iter()
        .find(|path| super::runners::is_code_runner(path))
        .map(|path| {
            format!(
                "allow always would add {path} to the allowlist, and {} would then run any script or command unasked; allow once, or add a narrower entry by hand",
                path.rsplit('/').next().unwrap_or(path)
            )
        })
        .or_else(|| {
            // A file behind many names: its entry would be its real path, which no name matches
            // but its own (see `evaluate::is_multi_call`).
            entries
                .iter()
                .find(|path| super::evaluate::is_multi_call(path.rsplit('/').next().unwrap_or(path)))
                .map(|path| {
                    format!(
                        "{path} is one program behind many names (cargo, rustc, rustfmt, rust-gdb...), each a different tool; allow once, or add an entry for the name you use (its link, e.g. ~/.cargo/bin/cargo) by hand"
                    )
                })
        })
        .or_else(|| {
            // The allowlist reads `*`, `?` and a leading `~` as a pattern, and has no escape: the
            // path would be stored as one that matches other files (`x*` matches `xevil`).
            entries
                .iter()
                .find(|path| path.contains(['*', '?']) || path.starts_with('~'))
                .map(|path| {
                    format!(
                        "allow always would add {path} to the allowlist, where its `*`, `?` or `~` would match other files too; allow once, or rename it"
                    )
                })
        });
    AlwaysGrant {
        entries: if withheld.is_some() {
            Vec::new()
        } else {
            entries
        },
        file: Some(p.file.display().to_string()),
        agent_id: Some(p.agent_id.clone()),
        withheld,
    }
}

pub fn build_request(p: &Prepared, command: &str, cwd: &str, timeout: Duration) -> ApprovalRequest {
    let always = always_grant(p);
    let segments = p
        .analysis
        .segments()
        .zip(p.evaluation.verdicts.iter())
        .map(|(s, v)| RequestSegment {
            argv: s.argv.clone(),
            resolved_path: s
                .resolution
                .resolved_path
                .as_ref()
                .map(|p| p.display().to_string()),
            executable_name: s.resolution.executable_name.clone(),
            miss: v.miss.clone(),
        })
        .collect();
    ApprovalRequest {
        id: crate::util::uuid_v4(),
        command: command.to_string(),
        cwd: cwd.to_string(),
        agent_id: p.agent_id.clone(),
        security: p.policy.security,
        ask: p.policy.ask,
        reason: p.reason.clone(),
        analysis_reason: p.analysis.reason.clone(),
        analysis_code: p.analysis.code,
        segments,
        resolved_paths: resolved_paths(&p.analysis),
        expires_at_ms: crate::util::now_ms() + timeout.as_millis() as u64,
        allowed_decisions: if always.withheld.is_some() {
            vec!["allow-once", "deny"]
        } else {
            vec!["allow-once", "allow-always", "deny"]
        },
        suggestions: p.suggestions.clone(),
        allow_always: always,
    }
}

/// Run blocking file I/O on the runtime's blocking pool where there is one, else here.
async fn off_the_worker<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, AgentError> + Send + 'static,
) -> Result<T, AgentError> {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => rt.spawn_blocking(f).await.unwrap_or_else(|e| {
            Err(AgentError::new(
                crate::error::ErrorCode::Internal,
                format!("the approvals file could not be written: {e}"),
            ))
        }),
        Err(_) => f(),
    }
}

/// Run the gate. `ask` puts the request to the handler; it is raced against the deadline here.
pub async fn run_gate<F, Fut>(
    command: &str,
    cwd: &std::path::Path,
    path_env: Option<&str>,
    home: Option<&str>,
    opts: &ApprovalOptions,
    ask: Option<F>,
) -> Result<GateResult, AgentError>
where
    F: FnOnce(ApprovalRequest) -> Fut,
    Fut: Future<Output = Answer>,
{
    let p = prepare(command, cwd, path_env, home, opts)?;
    let mut result = GateResult {
        allowed: p.decision == Decision::Allow,
        decision: p.decision,
        decided_by: "policy",
        reason: p.reason.clone(),
        answer: None,
        matches: p.evaluation.matches.clone(),
        persisted: Vec::new(),
        suggestions: p.suggestions.clone(),
        request_id: None,
        approvals_file: p.file.clone(),
        analysis_only: p.by_analysis,
        confinement: None,
    };
    if p.decision == Decision::Ask {
        let request = build_request(&p, command, &cwd.display().to_string(), opts.timeout);
        result.request_id = Some(request.id.clone());
        let allow_always_offered = request.allowed_decisions.contains(&"allow-always");
        let resolved = request.allow_always.entries.clone();
        // The scripts the command would run, as they are while the question is open.
        let binding = super::script_binding::ScriptBinding::bind(&p.analysis, cwd);
        let answer = match ask {
            None => Answer::TimedOut,
            Some(f) => match tokio::time::timeout(opts.timeout, f(request)).await {
                Ok(a) => a,
                Err(_) => Answer::TimedOut,
            },
        };
        result.decided_by = "user";
        if matches!(answer, Answer::AllowOnce | Answer::AllowAlways) && binding.changed().is_some()
        {
            // What was approved is not what would run: nothing is kept and nothing runs.
            result.allowed = false;
            result.reason = super::script_binding::CHANGED.into();
            result.answer = Some(answer);
            return Ok(result);
        }
        match &answer {
            Answer::AllowOnce => {
                result.allowed = true;
                result.reason = "approved once".into();
            }
            Answer::AllowAlways => {
                result.allowed = true;
                result.reason = "approved always".into();
                if allow_always_offered
                    && !p.by_rules
                    && p.policy.security == Security::Allowlist
                    && !resolved.is_empty()
                {
                    // A locked, fsync'd rewrite: on the blocking pool, not this async worker.
                    let (file, agent) = (p.file.clone(), p.agent_id.clone());
                    result.persisted = off_the_worker(move || {
                        store::add_allowlist_patterns(
                            &file,
                            Some(&agent),
                            &resolved,
                            Some("allow-always"),
                        )
                    })
                    .await?;
                }
            }
            Answer::Deny => {
                result.allowed = false;
                result.reason = "user denied".into();
            }
            Answer::TimedOut
                if p.inline_eval.is_none()
                    && fallback_allows(&p.policy, &p.evaluation)
                    && binding.changed().is_some() =>
            {
                result.decided_by = "fallback";
                result.allowed = false;
                result.reason = super::script_binding::CHANGED.into();
            }
            Answer::TimedOut => {
                result.decided_by = "fallback";
                // An inline program under strict mode needs an explicit answer: no fallback lets it
                // through, askFallback=full included.
                result.allowed =
                    p.inline_eval.is_none() && fallback_allows(&p.policy, &p.evaluation);
                // askFallback=allowlist lets through what analysis satisfied; =full trusts all.
                result.analysis_only = result.allowed
                    && p.policy.ask_fallback == Security::Allowlist
                    && p.evaluation.by_analysis;
                result.reason = if result.allowed {
                    format!(
                        "approval timed out; askFallback={} allowed it",
                        p.policy.ask_fallback.as_str()
                    )
                } else if p.policy.ask_fallback == Security::Allowlist {
                    "approval-timeout (allowlist-miss)".into()
                } else {
                    "approval-timeout".into()
                };
            }
            Answer::Failed(why) => {
                result.allowed = false;
                result.reason = format!("approval handler failed ({why}); treated as deny");
            }
        }
        result.answer = Some(answer);
    }
    if result.allowed && !p.by_rules && p.policy.security == Security::Allowlist {
        // Bookkeeping only, queued and written in batches off this worker (see `use_log`).
        let at_ms = crate::util::now_ms();
        for pattern in &p.evaluation.matches {
            super::use_log::record(
                &p.file,
                store::EntryUse {
                    agent_id: Some(p.agent_id.clone()),
                    pattern: pattern.clone(),
                    command: command.to_string(),
                    resolved_path: None,
                    at_ms,
                },
            );
        }
    }
    Ok(result)
}

#[cfg(test)]
mod terminal_tests {
    use super::*;

    #[test]
    fn in_a_terminal_git_is_read_only_only_without_a_pager() {
        let dir = tempfile::tempdir().unwrap();
        let opts = |terminal| ApprovalOptions {
            rules: Some(super::super::rules::RuleSet::default()),
            allow_read_only: true,
            terminal,
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            ..Default::default()
        };
        let decide = |cmd: &str, terminal| {
            prepare(
                cmd,
                dir.path(),
                Some("/usr/bin:/bin"),
                None,
                &opts(terminal),
            )
            .unwrap()
            .decision
        };
        assert_eq!(decide("git log -1", false), Decision::Allow);
        assert_eq!(decide("git log -1", true), Decision::Ask);
        assert_eq!(decide("ls && git diff", true), Decision::Ask);
        assert_eq!(decide("git --no-pager log -1", true), Decision::Allow);
        assert_eq!(decide("git -P diff", true), Decision::Allow);
        assert_eq!(decide("ls", true), Decision::Allow);
    }
}

/// A rule set of allow rules only, for the tests below.
#[cfg(test)]
fn allowing(allow: &[&str]) -> super::rules::RuleSet {
    super::rules::RuleSet {
        allow: super::rules::Rule::parse_list(allow, true).unwrap(),
        ..Default::default()
    }
}

#[cfg(test)]
mod environment_tests {
    use super::*;

    #[test]
    fn the_models_variables_are_judged_as_prefix_assignments() {
        let dir = tempfile::tempdir().unwrap();
        let decide = |cmd: &str, env: &[(&str, &str)], allow: &[&str]| {
            let rules = allowing(allow);
            let opts = ApprovalOptions {
                rules: Some(rules),
                allow_read_only: true,
                model_env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                timeout: DEFAULT_APPROVAL_TIMEOUT,
                ..Default::default()
            };
            prepare(cmd, dir.path(), Some("/usr/bin:/bin"), None, &opts)
                .unwrap()
                .decision
        };
        assert_eq!(decide("ls", &[], &[]), Decision::Allow);
        assert_eq!(decide("ls", &[("LANG", "C")], &[]), Decision::Allow);
        for name in [
            "RIPGREP_CONFIG_PATH",
            "HOME",
            "XDG_CONFIG_HOME",
            "NODE_V8_COVERAGE",
            "X",
        ] {
            assert_eq!(
                decide("git status", &[(name, "/tmp")], &[]),
                Decision::Ask,
                "{name}"
            );
            assert_eq!(
                decide("git status", &[(name, "/tmp")], &["Bash(git status:*)"]),
                Decision::Ask,
                "{name} under an allow rule"
            );
        }
        // Inside `sh -c` too.
        assert_eq!(
            decide("sh -c 'ls && ls'", &[("HOME", "/tmp")], &[]),
            Decision::Ask
        );
        // Deny rules under `Bash(*)` cannot see what BASH_ENV runs: asked.
        let denying = |cmd: &str, env: &[(&str, &str)]| {
            let opts = ApprovalOptions {
                rules: Some(super::super::rules::RuleSet {
                    allow: super::super::rules::Rule::parse_list(&["Bash(*)"], true).unwrap(),
                    deny: super::super::rules::Rule::parse_list(&["Bash(rm:*)"], false).unwrap(),
                    ..Default::default()
                }),
                model_env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                timeout: DEFAULT_APPROVAL_TIMEOUT,
                ..Default::default()
            };
            prepare(cmd, dir.path(), Some("/usr/bin:/bin"), None, &opts)
                .unwrap()
                .decision
        };
        assert_eq!(denying("bash -c true", &[]), Decision::Allow);
        assert_eq!(
            denying("bash -c true", &[("BASH_ENV", "./rm.sh")]),
            Decision::Ask
        );
    }
}

#[cfg(test)]
mod working_dir_tests {
    use super::*;

    #[test]
    fn allow_rules_hold_in_the_working_directories_only() {
        let work = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join("sub")).unwrap();
        let decide = |cmd: &str, cwd: &std::path::Path, allow: &[&str]| {
            let rules = allowing(allow);
            let opts = ApprovalOptions {
                rules: Some(rules),
                working_dirs: Some(vec![work.path().to_path_buf()]),
                timeout: DEFAULT_APPROVAL_TIMEOUT,
                ..Default::default()
            };
            prepare(cmd, cwd, Some("/usr/bin:/bin"), None, &opts)
                .unwrap()
                .decision
        };
        let npm = &["Bash(npm test:*)", "Bash(cd:*)"];
        assert_eq!(decide("npm test", work.path(), npm), Decision::Allow);
        assert_eq!(
            decide("npm test", &work.path().join("sub"), npm),
            Decision::Allow
        );
        assert_eq!(decide("npm test", elsewhere.path(), npm), Decision::Ask);
        let cd_out = format!("cd {} && npm test", elsewhere.path().display());
        assert_eq!(decide(&cd_out, work.path(), npm), Decision::Ask);
        assert_eq!(
            decide("cd sub && npm test", work.path(), npm),
            Decision::Allow
        );
        assert_eq!(decide("cd .. && npm test", work.path(), npm), Decision::Ask);
        // A cd whose target the analysis cannot tell is outside: back to OLDPWD, home, options.
        for cd in ["cd -", "cd", "cd -P sub", "pushd -n sub"] {
            assert_eq!(
                decide(&format!("{cd} && npm test"), work.path(), npm),
                Decision::Ask,
                "{cd}"
            );
        }
        // A blanket rule is not limited.
        assert_eq!(
            decide("npm test", elsewhere.path(), &["Bash(*)"]),
            Decision::Allow
        );
    }
}

#[cfg(test)]
mod request_tests {
    use super::*;

    #[test]
    fn a_rules_request_carries_the_narrowest_suggestions_and_an_allowlist_one_none() {
        let dir = tempfile::tempdir().unwrap();
        let ask = |opts: &ApprovalOptions, cmd: &str| {
            let p = prepare(cmd, dir.path(), Some("/usr/bin:/bin"), None, opts).unwrap();
            assert_eq!(p.decision, Decision::Ask, "{cmd}");
            build_request(&p, cmd, "/", DEFAULT_APPROVAL_TIMEOUT)
        };
        let rules = ApprovalOptions {
            rules: Some(super::super::rules::RuleSet::default()),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            ..Default::default()
        };
        assert_eq!(
            ask(&rules, "touch a && mkdir -p b").suggestions,
            ["Bash(touch:*)", "Bash(mkdir:*)"]
        );
        // A wrapper is suggested as the exact command, never as `Bash(sh:*)`.
        let wrapped = ask(&rules, "sh -c 'touch a'").suggestions;
        assert!(
            wrapped
                .iter()
                .all(|r| !r.starts_with("Bash(sh:") && !r.starts_with("Bash(sh *")),
            "{wrapped:?}"
        );
        // A command the analyzer cannot read gets no rule to allow it.
        assert!(ask(&rules, "echo $(touch a)").suggestions.is_empty());
        let allowlist = ApprovalOptions {
            security: Some(Security::Allowlist),
            ask: Some(Ask::OnMiss),
            approvals_file: Some(dir.path().join("approvals.json")),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            ..Default::default()
        };
        assert!(ask(&allowlist, "touch a").suggestions.is_empty());
    }
}

#[cfg(test)]
mod resolved_path_tests {
    use super::*;

    fn resolved(cmd: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let opts = ApprovalOptions {
            security: Some(Security::Allowlist),
            ask: Some(Ask::OnMiss),
            approvals_file: Some(dir.path().join("approvals.json")),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            ..Default::default()
        };
        let p = prepare(cmd, dir.path(), Some("/usr/bin:/bin"), None, &opts).unwrap();
        build_request(&p, cmd, "/", DEFAULT_APPROVAL_TIMEOUT).resolved_paths
    }

    /// Where `name` resolves, links followed (as the analyzer reports it).
    fn which(name: &str) -> String {
        let found = crate::spawn::shell::find_executable(name, Some("/usr/bin:/bin"))
            .unwrap_or_else(|| panic!("{name} is in /usr/bin or /bin"));
        std::fs::canonicalize(found).unwrap().display().to_string()
    }

    #[test]
    fn the_request_names_each_program_once_and_those_inside_a_wrapped_chain() {
        // Every segment's program, once each, in order.
        assert_eq!(resolved("ls | wc -l && ls"), vec![which("ls"), which("wc")]);
        // A shell wrapper with a chain inside: the programs it runs, not the wrapper.
        assert_eq!(
            resolved("sh -c 'cat a; head b'"),
            vec![which("cat"), which("head")]
        );
        // One command inside: the wrapper's own segment stands for it (its resolved executable).
        assert_eq!(resolved("sh -c 'cat a'"), vec![which("sh")]);
    }

    #[test]
    fn confinement_kinds_have_the_names_the_bindings_report() {
        assert_eq!(Confinement::ReadOnlySandbox.as_str(), "read-only-sandbox");
        assert_eq!(
            Confinement::AnalysisOnly("no sandbox here".into()).as_str(),
            "analysis-only"
        );
    }
}

#[cfg(test)]
mod by_analysis_tests {
    use super::*;

    /// Whether an allowlist policy's "yes" rests on analysis alone (a safe bin), which is what makes
    /// the run confined (`GateResult::analysis_only`).
    fn by_analysis(cmd: &str, security: Security, allowlist: &[&str]) -> (Decision, bool) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("approvals.json");
        let entries: Vec<String> = allowlist
            .iter()
            .map(|p| format!("{{\"pattern\":\"{p}\"}}"))
            .collect();
        std::fs::write(
            &file,
            format!(
                "{{\"version\":1,\"agents\":{{\"main\":{{\"allowlist\":[{}]}}}}}}",
                entries.join(",")
            ),
        )
        .unwrap();
        let opts = ApprovalOptions {
            security: Some(security),
            ask: Some(Ask::OnMiss),
            approvals_file: Some(file),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            ..Default::default()
        };
        let p = prepare(cmd, dir.path(), Some("/usr/bin:/bin"), None, &opts).unwrap();
        (p.decision, p.by_analysis)
    }

    #[test]
    fn only_an_allowlist_yes_from_safe_bins_rests_on_analysis() {
        // A safe bin reading stdin: allowed by analysis, so confined.
        assert_eq!(
            by_analysis("head -n 1", Security::Allowlist, &[]),
            (Decision::Allow, true)
        );
        // An entry the user trusted: not analysis alone.
        let wc = crate::spawn::shell::find_executable("wc", Some("/usr/bin:/bin"))
            .expect("wc is in /usr/bin or /bin");
        let wc = std::fs::canonicalize(wc).unwrap();
        assert_eq!(
            by_analysis("wc -l", Security::Allowlist, &[wc.to_str().unwrap()]),
            (Decision::Allow, false)
        );
        // security=full trusts everything: nothing rests on analysis.
        assert_eq!(
            by_analysis("head -n 1", Security::Full, &[]),
            (Decision::Allow, false)
        );
        // A question is not a yes.
        assert_eq!(
            by_analysis("touch x", Security::Allowlist, &[]),
            (Decision::Ask, false)
        );
    }
}

#[cfg(test)]
mod run_gate_tests {
    use super::*;

    fn allowlist(dir: &std::path::Path, fallback: Option<Security>, ask: Ask) -> ApprovalOptions {
        ApprovalOptions {
            security: Some(Security::Allowlist),
            ask: Some(ask),
            ask_fallback: fallback,
            approvals_file: Some(dir.join("approvals.json")),
            timeout: Duration::from_millis(200),
            ..Default::default()
        }
    }

    fn stored(dir: &std::path::Path) -> Vec<String> {
        store::load(&dir.join("approvals.json"))
            .unwrap()
            .agents
            .get("main")
            .map(|a| a.allowlist.iter().map(|e| e.pattern.clone()).collect())
            .unwrap_or_default()
    }

    async fn gate(
        cmd: &str,
        dir: &std::path::Path,
        opts: &ApprovalOptions,
        answer: Option<Answer>,
    ) -> GateResult {
        let asker = answer.map(|a| move |_req: ApprovalRequest| async move { a });
        run_gate(cmd, dir, Some("/usr/bin:/bin"), None, opts, asker)
            .await
            .unwrap()
    }

    /// Every wrapper the analysis sees through, around every inline form: strict mode asks for each,
    /// and the script binding sees every script run through them.
    #[test]
    fn inline_programs_and_scripts_are_seen_through_every_wrapper() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let strict = ApprovalOptions {
            strict_inline_eval: true,
            security: Some(Security::Allowlist),
            ask: Some(Ask::OnMiss),
            approvals_file: Some(d.join("approvals.json")),
            timeout: Duration::from_millis(200),
            ..Default::default()
        };
        let wrappers = [
            "",
            "env ",
            "env FOO=1 ",
            "nice -n 5 ",
            "timeout 5 ",
            "nohup ",
            "stdbuf -o0 ",
            "command ",
            "FOO=1 ",
        ];
        for inline in [
            "python3 -c 'print(1)'",
            "node -e 1",
            "perl -e 1",
            "ruby -e 1",
            "awk '{print}' /dev/null",
            "find . -exec true ;",
        ] {
            for w in wrappers {
                for cmd in [
                    format!("{w}{inline}"),
                    format!("sh -c \"{w}{inline}\""),
                    format!("true && {w}{inline}"),
                ] {
                    let p = prepare(&cmd, d, Some("/usr/bin:/bin"), None, &strict).unwrap();
                    assert!(p.inline_eval.is_some(), "not seen: {cmd}");
                    assert_ne!(p.decision, Decision::Allow, "{cmd}");
                }
            }
        }
        std::fs::write(d.join("x.sh"), "true\n").unwrap();
        std::fs::write(d.join("x.py"), "pass\n").unwrap();
        for w in wrappers {
            for script in ["bash x.sh", "sh ./x.sh", "python3 x.py", "python3 -u x.py"] {
                for cmd in [format!("{w}{script}"), format!("sh -c '{w}{script}'")] {
                    let p = prepare(&cmd, d, Some("/usr/bin:/bin"), None, &strict).unwrap();
                    let bound = super::super::script_binding::ScriptBinding::bind(&p.analysis, d);
                    let names: Vec<String> = bound
                        .files()
                        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .collect();
                    assert!(
                        names.iter().any(|n| n == "x.sh" || n == "x.py"),
                        "{cmd}: {names:?}"
                    );
                }
            }
        }
    }

    #[tokio::test]
    async fn a_script_changed_while_the_question_was_open_does_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        std::fs::write(d.join("tool.sh"), "echo approved\n").unwrap();
        let opts = allowlist(&d, Some(Security::Full), Ask::Always);
        // The user reads the request; meanwhile the script is rewritten; the user allows.
        let script = d.join("tool.sh");
        let rewrite = move |_req: ApprovalRequest| async move {
            std::fs::write(&script, "echo other code\n").unwrap();
            Answer::AllowAlways
        };
        let r = run_gate(
            "bash tool.sh",
            &d,
            Some("/usr/bin:/bin"),
            None,
            &opts,
            Some(rewrite),
        )
        .await
        .unwrap();
        assert!(!r.allowed);
        assert_eq!(r.reason, super::super::script_binding::CHANGED);
        assert!(
            r.persisted.is_empty(),
            "nothing is kept for code nobody approved"
        );
        // Unchanged, the same answer runs it.
        let same = gate("bash tool.sh", &d, &opts, Some(Answer::AllowOnce)).await;
        assert!(same.allowed, "{}", same.reason);
        // A fallback that would allow it does not either, once the script changed.
        let script = d.join("tool.sh");
        let late = move |_req: ApprovalRequest| async move {
            std::fs::write(&script, "echo late\n").unwrap();
            Answer::TimedOut
        };
        let trusting = ApprovalOptions {
            security: Some(Security::Full),
            ..allowlist(&d, Some(Security::Full), Ask::Always)
        };
        // The stricter of the file and the caller applies: the file trusts a fallback too.
        std::fs::write(
            d.join("approvals.json"),
            r#"{"version":1,"defaults":{"security":"full","askFallback":"full"},"agents":{}}"#,
        )
        .unwrap();
        let r = run_gate(
            "bash tool.sh",
            &d,
            Some("/usr/bin:/bin"),
            None,
            &trusting,
            Some(late),
        )
        .await
        .unwrap();
        assert!(!r.allowed);
        assert_eq!(r.decided_by, "fallback");
        assert_eq!(r.reason, super::super::script_binding::CHANGED);
    }

    #[tokio::test]
    #[allow(clippy::await_holding_lock)]
    async fn strict_inline_eval_asks_withholds_allow_always_and_never_falls_back() {
        let _serial = crate::approval::use_log::tests::SERIAL
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let python = std::fs::canonicalize(
            crate::spawn::shell::find_executable("python3", Some("/usr/bin:/bin")).unwrap(),
        )
        .unwrap()
        .display()
        .to_string();
        store::add_allowlist_patterns(&d.join("approvals.json"), Some("main"), &[python], None)
            .unwrap();
        let strict = |fallback| ApprovalOptions {
            strict_inline_eval: true,
            ..allowlist(d, fallback, Ask::OnMiss)
        };
        // Allowlisted python runs a script unasked, but an inline program is asked.
        let script = gate("python3 /dev/null", d, &strict(None), None).await;
        assert!(script.allowed, "{}", script.reason);
        let asked = prepare(
            "python3 -c 'print(1)'",
            d,
            Some("/usr/bin:/bin"),
            None,
            &strict(None),
        )
        .unwrap();
        assert_eq!(asked.decision, Decision::Ask);
        assert_eq!(
            asked.reason,
            "strict inline-eval mode requires explicit approval for python3 -c"
        );
        let request = build_request(&asked, "python3 -c 'print(1)'", "/", Duration::from_secs(1));
        assert_eq!(request.allowed_decisions, vec!["allow-once", "deny"]);
        assert!(request
            .allow_always
            .withheld
            .as_deref()
            .unwrap()
            .contains("python3 -c"));
        // Inside a shell's -c script too.
        let nested = prepare(
            "sh -c 'awk {print} /dev/null'",
            d,
            Some("/usr/bin:/bin"),
            None,
            &strict(None),
        )
        .unwrap();
        assert_eq!(nested.inline_eval.as_deref(), Some("awk inline program"));
        // An explicit answer runs it; a timeout never does, whatever askFallback says.
        let once = gate(
            "python3 -c 'print(1)'",
            d,
            &strict(None),
            Some(Answer::AllowOnce),
        )
        .await;
        assert!(once.allowed);
        let timed_out = gate(
            "python3 -c 'print(1)'",
            d,
            &strict(Some(Security::Full)),
            Some(Answer::TimedOut),
        )
        .await;
        assert!(!timed_out.allowed);
        assert_eq!(timed_out.reason, "approval-timeout");
        // Without strict mode the allowlisted interpreter runs the inline program unasked (OpenClaw's default).
        let lax = gate(
            "python3 -c 'print(1)'",
            d,
            &allowlist(d, None, Ask::OnMiss),
            None,
        )
        .await;
        assert!(lax.allowed);
    }

    #[tokio::test]
    // The use-time queue's test lock, held for the whole test on its single thread.
    #[allow(clippy::await_holding_lock)]
    async fn allow_always_keeps_the_executables_only_where_it_was_offered() {
        // An allowlisted run queues a use time: not while the queue's own tests run.
        let _serial = crate::approval::use_log::tests::SERIAL
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let uname = std::fs::canonicalize(
            crate::spawn::shell::find_executable("uname", Some("/usr/bin:/bin")).unwrap(),
        )
        .unwrap();
        let r = gate(
            "uname -s",
            d,
            &allowlist(d, None, Ask::OnMiss),
            Some(Answer::AllowAlways),
        )
        .await;
        assert!(r.allowed);
        assert_eq!(r.decided_by, "user");
        assert_eq!(r.persisted, vec![uname.display().to_string()]);
        assert_eq!(stored(d), vec![uname.display().to_string()]);
        // Now on the allowlist: no question, the policy allows it.
        let again = gate("uname -a", d, &allowlist(d, None, Ask::OnMiss), None).await;
        assert!(again.allowed);
        assert_eq!(again.decided_by, "policy");
        // ask=always offers no allow-always: an answer of it anyway allows once and keeps nothing.
        let once = gate(
            "id -u",
            d,
            &allowlist(d, None, Ask::Always),
            Some(Answer::AllowAlways),
        )
        .await;
        assert!(once.allowed && once.persisted.is_empty());
        // A runner is not kept either.
        let runner = gate(
            "python3 -c 1",
            d,
            &allowlist(d, None, Ask::OnMiss),
            Some(Answer::AllowAlways),
        )
        .await;
        assert!(runner.allowed && runner.persisted.is_empty());
        // Rules keep nothing in the file.
        let rules = ApprovalOptions {
            rules: Some(super::super::rules::RuleSet::default()),
            approvals_file: Some(d.join("approvals.json")),
            timeout: Duration::from_millis(200),
            ..Default::default()
        };
        let ruled = gate("whoami", d, &rules, Some(Answer::AllowAlways)).await;
        assert!(ruled.allowed && ruled.persisted.is_empty());
        assert_eq!(stored(d), vec![uname.display().to_string()]);
    }

    #[tokio::test]
    async fn answers_and_the_fallback_decide_with_their_reasons() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let deny = gate(
            "touch x",
            d,
            &allowlist(d, None, Ask::OnMiss),
            Some(Answer::Deny),
        )
        .await;
        assert!(!deny.allowed);
        assert_eq!(deny.reason, "user denied");
        let failed = gate(
            "touch x",
            d,
            &allowlist(d, None, Ask::OnMiss),
            Some(Answer::Failed("boom".into())),
        )
        .await;
        assert!(!failed.allowed);
        assert!(failed.reason.contains("boom"));
        // Nobody to ask: the fallback decides, deny by default.
        let nobody = gate("touch x", d, &allowlist(d, None, Ask::OnMiss), None).await;
        assert!(!nobody.allowed);
        assert_eq!(
            (nobody.decided_by, nobody.reason.as_str()),
            ("fallback", "approval-timeout")
        );
        // A caller may only tighten the fallback: asking for allowlist over the default deny changes nothing.
        let loosened = gate(
            "head -n 1",
            d,
            &allowlist(d, Some(Security::Allowlist), Ask::Always),
            None,
        )
        .await;
        assert!(!loosened.allowed);
        // The file may set it: allowlist lets through what analysis allows (a safe bin), confined.
        std::fs::write(
            d.join("approvals.json"),
            r#"{"version":1,"defaults":{"askFallback":"allowlist"}}"#,
        )
        .unwrap();
        let safe_bin = gate("head -n 1", d, &allowlist(d, None, Ask::Always), None).await;
        assert!(safe_bin.allowed, "{}", safe_bin.reason);
        assert!(
            safe_bin.analysis_only,
            "a yes of the fallback on analysis alone is confined"
        );
        assert!(safe_bin.reason.contains("askFallback=allowlist"));
        let miss = gate("touch x", d, &allowlist(d, None, Ask::OnMiss), None).await;
        assert!(!miss.allowed);
        assert_eq!(miss.reason, "approval-timeout (allowlist-miss)");
        // A handler that never answers times out into the fallback too.
        let slow = |_req: ApprovalRequest| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Answer::AllowOnce
        };
        let r = run_gate(
            "touch x",
            d,
            Some("/usr/bin:/bin"),
            None,
            &allowlist(d, None, Ask::OnMiss),
            Some(slow),
        )
        .await
        .unwrap();
        assert!(!r.allowed);
        assert_eq!(r.decided_by, "fallback");
    }
}

#[cfg(test)]
mod untraceable_cd_tests {
    use super::*;

    #[test]
    fn a_cd_the_analyzer_cannot_follow_is_outside_the_working_directories() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        let opts = ApprovalOptions {
            rules: Some(allowing(&["Bash(cd:*)", "Bash(ls:*)"])),
            working_dirs: Some(vec![d.clone()]),
            timeout: DEFAULT_APPROVAL_TIMEOUT,
            ..Default::default()
        };
        let decide = |cmd: &str| {
            let p = prepare(cmd, &d, Some("/usr/bin:/bin"), None, &opts).unwrap();
            (p.decision, p.reason)
        };
        assert_eq!(decide("cd sub && ls").0, Decision::Allow);
        // `cd -` goes to $OLDPWD, `cd` alone to $HOME: not followed, so not allowed by the rules.
        for cmd in ["cd - && ls", "cd && ls", "cd -P / && ls"] {
            let (decision, reason) = decide(cmd);
            assert_eq!(decision, Decision::Ask, "{cmd}");
            assert!(
                reason.contains("outside the working directories"),
                "{cmd}: {reason}"
            );
        }
        let (decision, reason) = decide("cd / && ls");
        assert_eq!(decision, Decision::Ask);
        assert!(reason.starts_with("/ is outside"), "{reason}");
    }
}
