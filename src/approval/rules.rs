//! Permission rules in the form Claude Code users write them: `Bash(npm run test:*)`, `Bash(git status)`,
//! `Bash(ls *)`, `Bash(*)`. Deny is checked first, then ask, then allow; a compound command is allowed
//! only when every segment is, so `ls && git push` does not pass on `Bash(ls:*)`.

use super::analyze::Analysis;

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The text as written, for reports.
    pub source: String,
    pattern: Pattern,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    /// `Bash` or `Bash(*)`.
    Any,
    /// `Bash(git status)`: the whole command, exactly.
    Exact(String),
    /// `Bash(npm run test:*)`: the words, then anything (a word boundary after the prefix).
    Prefix(String),
    /// `Bash(git * main)`: `*` matches any run of characters.
    Glob(String),
}

/// Programs that run whatever follows them: a rule that allows them allows everything.
const WRAPPERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "env", "sudo", "doas", "xargs", "nohup",
    "nice", "timeout", "time", "stdbuf", "exec", "eval", "command", "builtin", "setsid", "busybox",
    "python", "python3", "node", "perl", "ruby",
];

impl Rule {
    /// Parse a rule; refuses malformed rules and rules that would allow anything through a wrapper.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let t = text.trim();
        let inner = if t == "Bash" {
            "*"
        } else {
            t.strip_prefix("Bash(")
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(|| format!("\"{t}\" is not a Bash rule; write Bash(command), Bash(prefix:*) or Bash(prefix *)"))?
                .trim()
        };
        if inner.is_empty() {
            return Err(format!("\"{t}\" has an empty command"));
        }
        let pattern = if inner == "*" {
            Pattern::Any
        } else if let Some(prefix) = inner
            .strip_suffix(":*")
            .or_else(|| inner.strip_suffix(" *"))
        {
            Pattern::Prefix(prefix.trim().to_string())
        } else if inner.contains('*') {
            Pattern::Glob(inner.to_string())
        } else {
            Pattern::Exact(inner.to_string())
        };
        Ok(Rule {
            source: t.to_string(),
            pattern,
        })
    }

    /// Parse a rule meant for an allow list: over-broad wrapper rules are refused.
    pub fn parse_allow(text: &str) -> Result<Rule, String> {
        let rule = Self::parse(text)?;
        if let Pattern::Prefix(p) | Pattern::Glob(p) = &rule.pattern {
            let first = p.split_whitespace().next().unwrap_or("");
            let first = first.rsplit('/').next().unwrap_or(first);
            if WRAPPERS.contains(&first) && p.split_whitespace().count() == 1 {
                return Err(format!(
                    "{} would allow any command through {first}; allow the commands themselves instead",
                    rule.source
                ));
            }
        }
        Ok(rule)
    }

    /// Does the rule match one simple command (its words joined by single spaces)?
    pub fn matches(&self, command: &str) -> bool {
        match &self.pattern {
            Pattern::Any => true,
            Pattern::Exact(e) => command == e,
            Pattern::Prefix(p) => {
                command == p
                    || command
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
            }
            Pattern::Glob(g) => glob(g, command),
        }
    }
}

/// `*` matches any run of characters; everything else is literal.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    rest.is_empty()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Deny,
    Ask,
    Allow,
    /// No rule decided.
    NoMatch,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Deny => "deny",
            Verdict::Ask => "ask",
            Verdict::Allow => "allow",
            Verdict::NoMatch => "no-match",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub deny: Vec<Rule>,
    pub ask: Vec<Rule>,
    pub allow: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDecision {
    pub verdict: Verdict,
    /// The rule that decided (for deny and ask, the first match; for allow, one per segment).
    pub rules: Vec<String>,
    pub reason: String,
}

/// Each segment as the words the shell passes, after transparent wrappers.
fn segment_commands(analysis: &Analysis) -> Vec<String> {
    analysis
        .segments()
        .map(|s| s.effective_argv.join(" "))
        .collect()
}

impl RuleSet {
    pub fn decide(&self, analysis: &Analysis) -> RuleDecision {
        if !analysis.ok {
            // An unparsed command cannot be matched segment by segment: only a blanket rule decides.
            let reason = format!(
                "the command does not parse: {}",
                analysis.reason.clone().unwrap_or_default()
            );
            if let Some(r) = self.deny.iter().find(|r| r.pattern == Pattern::Any) {
                return RuleDecision {
                    verdict: Verdict::Deny,
                    rules: vec![r.source.clone()],
                    reason,
                };
            }
            return RuleDecision {
                verdict: Verdict::Ask,
                rules: vec![],
                reason,
            };
        }
        let commands = segment_commands(analysis);
        for (list, verdict) in [(&self.deny, Verdict::Deny), (&self.ask, Verdict::Ask)] {
            for c in &commands {
                if let Some(r) = list.iter().find(|r| r.matches(c)) {
                    return RuleDecision {
                        verdict,
                        rules: vec![r.source.clone()],
                        reason: format!("`{c}` matches {}", r.source),
                    };
                }
            }
        }
        let mut used = Vec::new();
        for c in &commands {
            match self.allow.iter().find(|r| r.matches(c)) {
                Some(r) => used.push(r.source.clone()),
                None => {
                    return RuleDecision {
                        verdict: Verdict::NoMatch,
                        rules: used,
                        reason: format!("no allow rule matches `{c}`"),
                    }
                }
            }
        }
        used.dedup();
        RuleDecision {
            verdict: Verdict::Allow,
            rules: used,
            reason: "every segment matches an allow rule".into(),
        }
    }
}

/// Programs whose second word is the real action (`npm run test`, `git commit`).
const TWO_WORD: &[&str] = &[
    "npm", "pnpm", "yarn", "bun", "git", "cargo", "go", "docker", "kubectl", "make", "pip", "uv",
    "poetry", "gh", "npx",
];

/// The narrowest rule per segment that would allow it again: `Bash(npm run test:*)`, `Bash(ls:*)`.
pub fn suggest_rules(analysis: &Analysis) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in analysis.segments() {
        let argv = &s.effective_argv;
        let Some(first) = argv.first() else { continue };
        let name = first.rsplit('/').next().unwrap_or(first);
        let words: Vec<&str> = argv
            .iter()
            .map(String::as_str)
            .take_while(|w| !w.starts_with('-'))
            .collect();
        let take = if name == "npm" || name == "pnpm" || name == "yarn" || name == "bun" {
            if words.get(1) == Some(&"run") {
                3
            } else {
                2
            }
        } else if TWO_WORD.contains(&name) {
            2
        } else {
            1
        };
        let prefix = words
            .iter()
            .take(take.min(words.len().max(1)))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let rule = if WRAPPERS.contains(&name) || s.blocked.is_some() {
            format!("Bash({})", argv.join(" "))
        } else {
            format!("Bash({prefix}:*)")
        };
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::analyze::{analyze, Context};
    use super::*;
    use std::path::Path;

    fn a(cmd: &str) -> Analysis {
        analyze(
            cmd,
            &Context {
                cwd: Path::new("/"),
                path: Some("/usr/bin:/bin"),
                home: Some("/root"),
            },
        )
    }

    fn set(deny: &[&str], ask: &[&str], allow: &[&str]) -> RuleSet {
        let p = |v: &[&str]| v.iter().map(|r| Rule::parse(r).unwrap()).collect();
        RuleSet {
            deny: p(deny),
            ask: p(ask),
            allow: p(allow),
        }
    }

    #[test]
    fn matcher_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("Bash(npm run test:*)", "npm run test", true),
            ("Bash(npm run test:*)", "npm run test -- --watch", true),
            ("Bash(npm run test:*)", "npm run testing", false),
            ("Bash(npm run test:*)", "npm run build", false),
            ("Bash(git status)", "git status", true),
            ("Bash(git status)", "git status -s", false),
            ("Bash(ls *)", "ls -la", true),
            ("Bash(ls *)", "lsof", false),
            ("Bash(ls:*)", "ls", true),
            ("Bash(rm:*)", "rm -rf /", true),
            ("Bash(git * main)", "git push origin main", true),
            ("Bash(git * main)", "git push origin dev", false),
            ("Bash(*)", "anything at all", true),
            ("Bash", "anything", true),
        ];
        for (rule, cmd, expected) in cases {
            assert_eq!(
                Rule::parse(rule).unwrap().matches(cmd),
                *expected,
                "{rule} vs {cmd}"
            );
        }
    }

    #[test]
    fn deny_then_ask_then_allow_over_every_segment() {
        let rules = set(
            &["Bash(rm:*)"],
            &["Bash(git push:*)"],
            &["Bash(ls:*)", "Bash(git status)", "Bash(npm run test:*)"],
        );
        assert_eq!(rules.decide(&a("ls -la")).verdict, Verdict::Allow);
        assert_eq!(rules.decide(&a("ls && git status")).verdict, Verdict::Allow);
        assert_eq!(rules.decide(&a("ls && git push")).verdict, Verdict::Ask);
        assert_eq!(rules.decide(&a("ls && rm -rf x")).verdict, Verdict::Deny);
        assert_eq!(rules.decide(&a("ls | wc -l")).verdict, Verdict::NoMatch);
        assert_eq!(
            rules.decide(&a("echo 'ls && rm -rf x'")).verdict,
            Verdict::NoMatch,
            "quoted operators are one word"
        );
        assert_eq!(
            rules.decide(&a("env CI=1 npm run test")).verdict,
            Verdict::Allow,
            "wrappers are looked through"
        );
        assert_eq!(rules.decide(&a("ls $(rm x)")).verdict, Verdict::Ask);
        let d = rules.decide(&a("ls && rm -rf x"));
        assert_eq!(d.rules, vec!["Bash(rm:*)"]);
        assert_eq!(d.reason, "`rm -rf x` matches Bash(rm:*)");
    }

    #[test]
    fn over_broad_wrapper_rules_are_refused() {
        for r in [
            "Bash(sh:*)",
            "Bash(bash:*)",
            "Bash(env:*)",
            "Bash(sudo:*)",
            "Bash(xargs *)",
            "Bash(python3:*)",
        ] {
            assert!(
                Rule::parse_allow(r)
                    .unwrap_err()
                    .contains("would allow any command"),
                "{r}"
            );
        }
        assert!(Rule::parse_allow("Bash(bash scripts/test.sh)").is_ok());
        assert!(Rule::parse_allow("Bash(npm run test:*)").is_ok());
        assert!(Rule::parse("Read(x)").is_err());
        assert!(Rule::parse("Bash()").is_err());
    }

    #[test]
    fn narrowest_suggestions() {
        assert_eq!(
            suggest_rules(&a("npm run test -- --watch")),
            vec!["Bash(npm run test:*)"]
        );
        assert_eq!(
            suggest_rules(&a("git commit -m x && ls -la")),
            vec!["Bash(git commit:*)", "Bash(ls:*)"]
        );
        assert_eq!(
            suggest_rules(&a("cargo test --lib")),
            vec!["Bash(cargo test:*)"]
        );
        assert_eq!(
            suggest_rules(&a("bash -c 'ls && pwd'")),
            vec!["Bash(bash -c ls && pwd)"]
        );
    }
}
