//! `evaluateCommand`: the analysis checked against an allowlist and safe bins, and the decision the
//! policy takes: allow, deny, or ask.

use std::path::PathBuf;

use super::analyze::{Analysis, Segment};
use super::glob::{glob_matches, is_path_pattern};
use super::policy::{max_ask, min_security, requires_approval, Ask, Security};
use super::safe_bins::safe_bin_usage;

/// Why a segment is allowed without asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Satisfied {
    /// An allowlist pattern matched the resolved executable.
    Pattern(String),
    /// A safe-bin use (stdin-only filter with allowed flags).
    SafeBin,
    /// `sh -c "a && b"` whose inner commands are all satisfied.
    Inner,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentVerdict {
    pub satisfied: Option<Satisfied>,
    /// Why not, when not.
    pub miss: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    pub analysis_ok: bool,
    pub allowlist_satisfied: bool,
    /// Allowlist patterns that matched, in segment order (deduplicated).
    pub matches: Vec<String>,
    /// One verdict per segment, in `Analysis::segments` order.
    pub verdicts: Vec<SegmentVerdict>,
    /// Some segment (an inner shell's included) is satisfied by analysis alone (a safe bin), not by
    /// a name the user trusted: a "yes" that must run confined (see `gate::Confinement`).
    pub by_analysis: bool,
}

pub struct AllowRules<'a> {
    pub patterns: &'a [String],
    pub safe_bins: &'a [String],
    pub trusted_dirs: &'a [PathBuf],
    pub home: Option<&'a str>,
}

/// A bare `*` pattern allows anything that parsed, resolved or not.
fn wildcard(patterns: &[String]) -> Option<&String> {
    patterns.iter().find(|p| p.trim() == "*")
}

fn match_pattern<'p>(segment: &Segment, rules: &AllowRules<'p>) -> Option<&'p String> {
    if let Some(w) = wildcard(rules.patterns) {
        return Some(w);
    }
    // The resolved path is the file that runs (symlinks followed), so `./cat` that is `touch`
    // does not match `/usr/bin/cat` nor `**/cat`. An absolute path with nothing there yet (a tool a
    // build is about to create) is itself, as OpenClaw B matches it; only without `.` or `..`
    // components, which a lexical match would let climb out of a pattern's directory.
    let path = match segment.resolution.resolved_path.as_ref() {
        Some(resolved) => resolved.to_string_lossy().into_owned(),
        None => not_there_yet(&segment.resolution.raw_executable)?,
    };
    let path = path.as_str();
    // One file behind many names (rustup: `cargo`, `rustfmt`, `rust-gdb` and `rustup run` are all
    // `rustup`) is a different program under each: an entry names the one it was written for.
    let invoked = basename(&segment.resolution.raw_executable);
    let multi_call = is_multi_call(basename(path));
    rules
        .patterns
        .iter()
        .filter(|p| is_path_pattern(p))
        .filter(|p| !multi_call || glob_matches(basename(p), invoked, None))
        .find(|p| {
            glob_matches(p, path, rules.home)
                || canonical_pattern(p, rules.home).is_some_and(|c| glob_matches(&c, path, None))
        })
}

/// Programs that are one file behind many names, each name a different tool.
const MULTI_CALL: &[&str] = &["rustup", "rustup-init"];

/// Whether the file named `name` (its real basename) is one of `MULTI_CALL`.
pub fn is_multi_call(name: &str) -> bool {
    MULTI_CALL.contains(&name)
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `raw` when it is an absolute path with no `.` or `..` component and nothing at it (not even a
/// dangling link).
fn not_there_yet(raw: &str) -> Option<String> {
    let p = std::path::Path::new(raw);
    let plain = p.is_absolute()
        && p.components().all(|c| {
            matches!(
                c,
                std::path::Component::RootDir | std::path::Component::Normal(_)
            )
        })
        && !raw.contains("/./")
        && !raw.ends_with("/.");
    let absent =
        std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    (plain && absent).then(|| raw.to_string())
}

/// A pattern whose literal directory part goes through symlinks (`/bin/cat` when `/bin` links to
/// `usr/bin`, `/usr/bin/awk` that is `mawk`), rewritten to the real location, so patterns written
/// for the names people type still match the file that runs. `None` when nothing changes.
fn canonical_pattern(pattern: &str, home: Option<&str>) -> Option<String> {
    let expanded = match (pattern.strip_prefix('~'), home) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => format!("{h}{rest}"),
        _ => pattern.to_string(),
    };
    if !expanded.starts_with('/') {
        return None;
    }
    let literal_end = expanded.find(['*', '?']).unwrap_or(expanded.len());
    let (base, rest) = if literal_end == expanded.len() {
        (expanded.as_str(), "")
    } else {
        let cut = expanded[..literal_end].rfind('/')?;
        (&expanded[..cut.max(1)], &expanded[cut.max(1)..])
    };
    let real = std::fs::canonicalize(base).ok()?;
    let rewritten = format!("{}{rest}", real.display());
    (rewritten != expanded).then_some(rewritten)
}

fn judge(
    segment: &Segment,
    rules: &AllowRules<'_>,
    matches: &mut Vec<String>,
    by_analysis: &mut bool,
) -> SegmentVerdict {
    if let Some(reason) = &segment.blocked {
        return SegmentVerdict {
            satisfied: None,
            miss: Some(reason.clone()),
        };
    }
    if let Some(why) = &segment.inexact {
        return SegmentVerdict {
            satisfied: None,
            miss: Some(why.clone()),
        };
    }
    if let Some(name) = super::env_names::first_harmful(
        segment
            .assignments
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str())),
    ) {
        return SegmentVerdict {
            satisfied: None,
            miss: Some(format!(
                "{name}=... may change what the command runs; only LANG, LC_*, TZ and similar are allowed"
            )),
        };
    }
    if let Some(inner) = &segment.inner {
        // Only a real chain is judged by its parts; `sh -c "one command"` is judged as `sh` itself.
        if inner.chains.len() > 1 {
            let ev = evaluate(inner, rules);
            if ev.allowlist_satisfied {
                matches.extend(ev.matches);
                *by_analysis |= ev.by_analysis;
                return SegmentVerdict {
                    satisfied: Some(Satisfied::Inner),
                    miss: None,
                };
            }
            return SegmentVerdict {
                satisfied: None,
                miss: Some("not every inner shell command is allowlisted".into()),
            };
        }
    }
    if let Some(p) = match_pattern(segment, rules) {
        matches.push(p.clone());
        return SegmentVerdict {
            satisfied: Some(Satisfied::Pattern(p.clone())),
            miss: None,
        };
    }
    match expanding_word(segment).map_or_else(
        || {
            safe_bin_usage(
                &segment.effective_argv,
                segment.resolution.resolved_path.as_deref(),
                rules.safe_bins,
                rules.trusted_dirs,
            )
        },
        Err,
    ) {
        Ok(()) => {
            *by_analysis = true;
            SegmentVerdict {
                satisfied: Some(Satisfied::SafeBin),
                miss: None,
            }
        }
        Err(why) => SegmentVerdict {
            satisfied: None,
            miss: Some(match &segment.resolution.resolved_path {
                None => format!(
                    "{} did not resolve to an executable",
                    segment.resolution.raw_executable
                ),
                Some(p) => format!("{} is not allowlisted ({why})", p.display()),
            }),
        },
    }
}

/// A safe bin may not name a file, but bash expands an unquoted glob or brace word before the
/// filter runs: `head -n {1,/etc/passwd}` is `head -n 1 /etc/passwd`. Such a word is refused.
fn expanding_word(segment: &Segment) -> Option<String> {
    let offset = segment.argv.len() - segment.effective_argv.len();
    let name = segment.resolution.executable_name.to_lowercase();
    segment
        .argv
        .iter()
        .zip(&segment.expands)
        .skip(offset)
        .find(|(_, expands)| **expands)
        .map(|(w, _)| format!("{name}: {w} may expand into file names or several words"))
}

/// Check every segment; the command is satisfied only when all of them are.
pub fn evaluate(analysis: &Analysis, rules: &AllowRules<'_>) -> Evaluation {
    let mut matches = Vec::new();
    let mut by_analysis = false;
    let verdicts: Vec<SegmentVerdict> = analysis
        .segments()
        .map(|s| judge(s, rules, &mut matches, &mut by_analysis))
        .collect();
    let mut seen = std::collections::HashSet::new();
    matches.retain(|m| seen.insert(m.clone()));
    Evaluation {
        analysis_ok: analysis.ok,
        allowlist_satisfied: analysis.ok
            && !verdicts.is_empty()
            && verdicts.iter().all(|v| v.satisfied.is_some()),
        matches,
        verdicts,
        by_analysis,
    }
}

/// What the policy says before anyone is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
    Ask,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
        }
    }
}

/// The effective policy: the stricter of the caller's and the approvals file's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub security: Security,
    pub ask: Ask,
    pub ask_fallback: Security,
}

impl Policy {
    /// Per-call values may only tighten what the file (or the built-in default) says.
    pub fn effective(
        file_security: Option<Security>,
        file_ask: Option<Ask>,
        file_fallback: Option<Security>,
        call_security: Option<Security>,
        call_ask: Option<Ask>,
        call_fallback: Option<Security>,
    ) -> Policy {
        let base_security = file_security.unwrap_or(Security::Full);
        let security = call_security.map_or(base_security, |c| min_security(base_security, c));
        let base_ask = file_ask.unwrap_or(Ask::Off);
        let ask = call_ask.map_or(base_ask, |c| max_ask(base_ask, c));
        let fallback = file_fallback.unwrap_or(Security::Deny);
        let fallback = call_fallback.map_or(fallback, |c| min_security(fallback, c));
        Policy {
            security,
            ask,
            ask_fallback: min_security(security, fallback),
        }
    }
}

/// The decision and its reason.
pub fn decide(policy: &Policy, ev: &Evaluation) -> (Decision, String) {
    if policy.security == Security::Deny {
        return (Decision::Deny, "security=deny".into());
    }
    if requires_approval(
        policy.ask,
        policy.security,
        ev.analysis_ok,
        ev.allowlist_satisfied,
    ) {
        let why = if policy.ask == Ask::Always {
            "ask=always"
        } else if !ev.analysis_ok {
            "analysis failed"
        } else {
            "allowlist miss"
        };
        return (Decision::Ask, why.into());
    }
    if policy.security == Security::Allowlist && !(ev.analysis_ok && ev.allowlist_satisfied) {
        return (Decision::Deny, "allowlist miss".into());
    }
    (
        Decision::Allow,
        if policy.security == Security::Full {
            "security=full".into()
        } else {
            "allowlisted".into()
        },
    )
}

/// What happens when nobody answered in time: OpenClaw's askFallback.
pub fn fallback_allows(policy: &Policy, ev: &Evaluation) -> bool {
    match policy.ask_fallback {
        Security::Full => true,
        Security::Allowlist => ev.analysis_ok && ev.allowlist_satisfied,
        Security::Deny => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::analyze::{analyze, Context};
    use super::*;
    use std::path::Path;

    fn ctx() -> Context<'static> {
        Context {
            cwd: Path::new("/"),
            path: Some("/usr/bin:/bin"),
            home: Some(crate::approval::TEST_HOME),
        }
    }

    fn eval(cmd: &str, patterns: &[&str]) -> Evaluation {
        let patterns: Vec<String> = patterns.iter().map(|s| s.to_string()).collect();
        let safe: Vec<String> = super::super::safe_bins::DEFAULT_SAFE_BINS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let trusted: Vec<PathBuf> = super::super::safe_bins::DEFAULT_TRUSTED_DIRS
            .iter()
            .map(PathBuf::from)
            .collect();
        evaluate(
            &analyze(cmd, &ctx()),
            &AllowRules {
                patterns: &patterns,
                safe_bins: &safe,
                trusted_dirs: &trusted,
                home: Some(crate::approval::TEST_HOME),
            },
        )
    }

    #[test]
    fn every_segment_must_be_satisfied() {
        let ls = "/usr/bin/ls";
        assert!(eval("ls -la", &[ls]).allowlist_satisfied);
        assert!(!eval("ls && rm -rf ~", &[ls]).allowlist_satisfied);
        assert!(
            eval("ls | head -n 3", &[ls]).allowlist_satisfied,
            "head is a safe bin"
        );
        assert!(!eval("ls | head /etc/shadow", &[ls]).allowlist_satisfied);
        assert!(!eval("ls > out", &[ls]).allowlist_satisfied);
        assert!(!eval("sudo ls", &[ls, "/usr/bin/sudo"]).allowlist_satisfied);
        assert!(eval("env LANG=C ls", &[ls]).allowlist_satisfied);
        // A variable outside the harmless set can change what runs (PATH, BASH_ENV, PAGER...).
        assert!(!eval("env A=1 ls", &[ls]).allowlist_satisfied);
        assert!(!eval("A=1 ls", &[ls]).allowlist_satisfied);
        assert!(!eval("env PATH=/tmp ls", &[ls]).allowlist_satisfied);
        assert!(eval("ls", &["/usr/bin/*"]).allowlist_satisfied);
        assert!(
            !eval("ls", &["ls"]).allowlist_satisfied,
            "bare names are not path patterns"
        );
        assert!(eval("anything-at-all", &["*"]).allowlist_satisfied);
        assert!(
            !eval("echo $(id)", &["*"]).allowlist_satisfied,
            "a failed analysis is never satisfied"
        );
        assert_eq!(eval("ls && ls", &[ls]).matches, vec![ls.to_string()]);
    }

    /// The shell expands unquoted globs and braces before a safe bin runs, so such a word can
    /// name a file the profile never saw.
    #[test]
    fn safe_bins_refuse_words_the_shell_expands() {
        assert!(eval("head -n 1", &[]).allowlist_satisfied);
        assert!(eval("head -n '{1,/etc/passwd}'", &[]).allowlist_satisfied);
        for cmd in [
            "head -n {1,/etc/passwd}",
            "tail -n 1{,}",
            "tr a-z {A-Z,/etc/passwd}",
            "wc -l *",
        ] {
            let ev = eval(cmd, &[]);
            assert!(!ev.allowlist_satisfied, "{cmd}");
            let miss = ev.verdicts[0].miss.as_deref().unwrap_or("");
            assert!(miss.contains("may expand"), "{cmd}: {miss}");
        }
    }

    #[test]
    fn an_allowlisted_absolute_path_that_does_not_exist_yet_matches_itself() {
        let tool = "/opt/agent-exec-not-yet/bin/tool";
        assert!(eval(&format!("{tool} --build"), &[tool]).allowlist_satisfied);
        assert!(eval(tool, &["/opt/agent-exec-not-yet/**"]).allowlist_satisfied);
        // `..` would let a lexical match climb out of the pattern's directory.
        let climb = "/opt/agent-exec-not-yet/../../tmp/evil";
        assert!(!eval(climb, &["/opt/agent-exec-not-yet/**"]).allowlist_satisfied);
        assert!(
            !eval(
                "/opt/agent-exec-not-yet/./tool",
                &["/opt/agent-exec-not-yet/*"]
            )
            .allowlist_satisfied
        );
        // A name on PATH that does not exist is still not allowed by a path pattern.
        assert!(!eval("no-such-tool-xyz", &["**/no-such-tool-xyz"]).allowlist_satisfied);
    }

    #[test]
    fn shell_c_chains_need_every_inner_command() {
        let ls = "/usr/bin/ls";
        assert!(eval("sh -c 'ls && ls -l'", &[ls]).allowlist_satisfied);
        assert!(!eval("sh -c 'ls && rm x'", &[ls]).allowlist_satisfied);
        assert!(
            !eval("sh -c 'ls'", &[ls]).allowlist_satisfied,
            "a single-command wrapper is judged as sh"
        );
    }

    #[test]
    fn decisions() {
        let ok = eval("ls", &["/usr/bin/ls"]);
        let miss = eval("rm x", &["/usr/bin/ls"]);
        let p = |s, a, f| Policy::effective(Some(s), Some(a), Some(f), None, None, None);
        use Ask::*;
        use Security::*;
        assert_eq!(decide(&p(Deny, Off, Deny), &ok).0, Decision::Deny);
        assert_eq!(decide(&p(Full, Off, Deny), &miss).0, Decision::Allow);
        assert_eq!(decide(&p(Allowlist, Off, Deny), &ok).0, Decision::Allow);
        assert_eq!(
            decide(&p(Allowlist, Off, Deny), &miss),
            (Decision::Deny, "allowlist miss".into())
        );
        assert_eq!(
            decide(&p(Allowlist, OnMiss, Deny), &miss),
            (Decision::Ask, "allowlist miss".into())
        );
        assert_eq!(decide(&p(Allowlist, OnMiss, Deny), &ok).0, Decision::Allow);
        assert_eq!(
            decide(&p(Full, Always, Deny), &ok),
            (Decision::Ask, "ask=always".into())
        );
        assert!(!fallback_allows(&p(Allowlist, OnMiss, Deny), &miss));
        assert!(fallback_allows(&p(Full, Always, Full), &miss));
        assert!(fallback_allows(&p(Allowlist, Always, Allowlist), &ok));
        assert!(
            !fallback_allows(&p(Allowlist, Always, Full), &miss),
            "fallback clamped to security"
        );
    }

    #[test]
    fn per_call_values_only_tighten() {
        use Ask::*;
        use Security::*;
        let p = Policy::effective(
            Some(Allowlist),
            Some(OnMiss),
            None,
            Some(Full),
            Some(Off),
            None,
        );
        assert_eq!((p.security, p.ask), (Allowlist, OnMiss));
        let p = Policy::effective(Some(Full), Some(Off), None, Some(Deny), Some(Always), None);
        assert_eq!((p.security, p.ask), (Deny, Always));
        let p = Policy::effective(None, None, None, None, None, None);
        assert_eq!((p.security, p.ask, p.ask_fallback), (Full, Off, Deny));
    }
}
