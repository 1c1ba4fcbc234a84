//! Permission rules in the form Claude Code users write them: `Bash(npm run test:*)`, `Bash(git status)`,
//! `Bash(ls *)`, `Bash(*)`. Deny is checked first, then ask, then allow; a compound command is allowed
//! only when every segment is, so `ls && git push` does not pass on `Bash(ls:*)`.

use super::analyze::{Analysis, Segment};

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

    /// Parse a list of rules as written: allow rules (`allow`) through [`Rule::parse_allow`], deny and
    /// ask rules as they are. The first malformed rule's message.
    pub fn parse_list<S: AsRef<str>>(texts: &[S], allow: bool) -> Result<Vec<Rule>, String> {
        texts
            .iter()
            .map(|t| {
                if allow {
                    Rule::parse_allow(t.as_ref())
                } else {
                    Rule::parse(t.as_ref())
                }
            })
            .collect()
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

    /// Whether the words this rule's text covers are exact: bash expands none of them (a prefix
    /// rule covers its own words; an exact or glob rule covers every word; `Bash(*)` none).
    fn exact_over(&self, expands: &[bool]) -> bool {
        let covered = match &self.pattern {
            Pattern::Any => 0,
            Pattern::Prefix(p) => p.split_whitespace().count(),
            Pattern::Exact(_) | Pattern::Glob(_) => expands.len(),
        };
        !expands.iter().take(covered).any(|e| *e)
    }

    /// A prefix or glob rule on a runner (`Bash(npm test:*)`) does not cover the runner's own
    /// options that change what runs (see `runners`): why, for the command's words `words`.
    fn runner_problem(&self, words: &[String], expands: &[bool]) -> Option<String> {
        let p = match &self.pattern {
            Pattern::Prefix(p) => p,
            Pattern::Glob(g) => g.split('*').next().unwrap_or(""),
            Pattern::Any | Pattern::Exact(_) => return None,
        };
        let prefix: Vec<&str> = p.split_whitespace().collect();
        let covered = prefix.len().min(words.len());
        let rest_expands = expands.get(covered..).unwrap_or(&[]);
        super::runners::problem(&prefix, &words[covered..], rest_expands)
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

/// What deny and ask rules see of one segment: the command after keywords, assignments and
/// wrappers; the same with argv[0] as its basename, as the file that runs and that file's name
/// (`/bin/rm`, `./del` linking to rm); the commands it runs (`xargs rm`, `find -exec rm`); and
/// every command of an inner `sh -c` script.
///
/// `files` are the programs the rules name, as (name, device, inode) of the system's file: a hard
/// link to `rm` under another name is `rm` too.
fn deny_views(segment: &Segment, files: &[(String, u64, u64)], out: &mut Vec<String>) {
    let mut add = |argv: &[String], resolved: Option<&std::path::Path>| {
        let Some(first) = argv.first() else { return };
        let rest = &argv[1..];
        let mut names = vec![first.clone()];
        let mut name = |n: String| {
            if !names.contains(&n) {
                names.push(n);
            }
        };
        name(first.rsplit('/').next().unwrap_or(first).to_string());
        if let Some(p) = resolved {
            name(p.display().to_string());
            if let Some(n) = p.file_name() {
                name(n.to_string_lossy().into_owned());
            }
            if let Some(id) = file_id(p) {
                for (n, dev, ino) in files {
                    if (*dev, *ino) == id {
                        name(n.clone());
                    }
                }
            }
        }
        for n in names {
            let view = std::iter::once(n.as_str())
                .chain(rest.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            out.push(view);
        }
    };
    add(
        &segment.effective_argv,
        segment.resolution.resolved_path.as_deref(),
    );
    for run in &segment.runs {
        add(run, None);
    }
    if let Some(inner) = &segment.inner {
        for s in inner.segments() {
            deny_views(s, files, out);
        }
    }
}

/// Device and inode of a file.
#[cfg(unix)]
fn file_id(p: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Windows: stable Rust has no file identity (volume serial and file index are unstable), so deny
/// rules match by name only there.
#[cfg(not(unix))]
fn file_id(_p: &std::path::Path) -> Option<(u64, u64)> {
    None
}

/// The system's files for the programs deny and ask rules name (`Bash(rm:*)` names rm).
fn named_files<'a>(rules: impl Iterator<Item = &'a Rule>) -> Vec<(String, u64, u64)> {
    const DIRS: [&str; 6] = [
        "/usr/local/sbin",
        "/usr/local/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
    ];
    let mut out = Vec::new();
    for r in rules {
        let Some(name) = r.first_word() else {
            continue;
        };
        if name.contains(['/', '*']) || out.iter().any(|(n, _, _)| n == name) {
            continue;
        }
        if let Some((dev, ino)) = DIRS
            .iter()
            .find_map(|d| file_id(&std::path::Path::new(d).join(name)))
        {
            out.push((name.to_string(), dev, ino));
        }
    }
    out
}

/// The text an allow rule must match for one segment: the command after wrappers, or, when it
/// sets variables outside the harmless set, the whole simple command with its assignments
/// (`X=1 make` does not pass on `Bash(make:*)`); and where that text starts in argv (for the
/// expansion check).
/// Words as a shell line that reads back as the same words: each word with spaces, quotes or shell
/// syntax in single quotes. An exact rule is written (and suggested) this way, so the rule the user
/// reads is the command that runs, and `node -e 'a b'` never matches `node -e a b`.
pub fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The segment's words as `allow_text` reads them, quoted as a shell line (see [`shell_join`]).
fn allow_text_quoted(segment: &Segment) -> String {
    let (_, offset) = allow_text(segment);
    shell_join(&segment.argv[offset.min(segment.argv.len())..])
}

fn allow_text(segment: &Segment) -> (String, usize) {
    let harmful = super::env_names::first_harmful(
        segment
            .assignments
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str())),
    )
    .is_some();
    if harmful {
        // Assignments from outside the text (the model's `env`) are written in front, so a rule
        // matches them as it would `NAME=v cmd`.
        let mut words: Vec<String> = segment
            .assignments
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .filter(|w| !segment.argv.contains(w))
            .collect();
        words.extend(segment.argv.iter().cloned());
        (words.join(" "), 0)
    } else {
        (
            segment.effective_argv.join(" "),
            segment.argv.len() - segment.effective_argv.len(),
        )
    }
}

impl Rule {
    /// The rule's first word (the program it names), unless it is `Bash(*)`.
    fn first_word(&self) -> Option<&str> {
        match &self.pattern {
            Pattern::Exact(t) | Pattern::Prefix(t) | Pattern::Glob(t) => {
                t.split_whitespace().next()
            }
            Pattern::Any => None,
        }
    }
}

/// The program names deny and ask rules cover (each rule's first word), as the text names them.
fn covered_names<'a>(rules: impl Iterator<Item = &'a Rule>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rules {
        let Some(first) = r.first_word() else {
            continue;
        };
        let name = first.rsplit('/').next().unwrap_or(first);
        if !name.is_empty() && !name.contains('*') && !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The words bash's brace expansion makes of `word` (`{a,b}c` is `ac` and `bc`; nested and
/// sequence forms are taken apart as lists, which is enough to find a name), at most 256; a word
/// without a `{...,...}` is itself, and so is its text with the braces and commas dropped.
fn brace_words(word: &str) -> Vec<String> {
    let mut out = vec![word.to_string()];
    if !word.contains('{') {
        return out;
    }
    out.push(
        word.chars()
            .filter(|c| !matches!(c, '{' | '}' | ','))
            .collect(),
    );
    let mut pending = vec![word.to_string()];
    while let Some(w) = pending.pop() {
        if out.len() > 256 {
            break;
        }
        // The innermost `{...}` with a comma or `..`.
        let Some(close) = w.find('}') else { continue };
        let Some(open) = w[..close].rfind('{') else {
            continue;
        };
        let inner = &w[open + 1..close];
        let parts: Vec<String> = if inner.contains(',') {
            inner.split(',').map(str::to_string).collect()
        } else if let Some((a, b)) = inner.split_once("..") {
            match (a.chars().next(), b.chars().next()) {
                (Some(x), Some(y)) if a.len() == 1 && b.len() == 1 && x <= y => {
                    (x..=y).map(|c| c.to_string()).collect()
                }
                _ => vec![inner.to_string()],
            }
        } else {
            vec![inner.to_string()]
        };
        for p in parts {
            let made = format!("{}{}{}", &w[..open], p, &w[close + 1..]);
            if !out.contains(&made) {
                out.push(made.clone());
                pending.push(made);
            }
        }
    }
    out
}

/// Does the word `word` (which may hold `*`, `?` or `[...]`, as bash globs) name `name`?
fn word_names(word: &str, name: &str) -> bool {
    fn glob(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => (0..=n.len()).any(|k| glob(rest, &n[k..])),
            Some(('?', rest)) => !n.is_empty() && glob(rest, &n[1..]),
            Some(('[', rest)) => {
                // Any one character for a bracket expression, up to its `]` (a `]` first, after
                // `!` or `^`, is a member; `[:lower:]` classes are inside it).
                let mut i = usize::from(matches!(rest.first(), Some('!' | '^')));
                if rest.get(i) == Some(&']') {
                    i += 1;
                }
                let mut close = None;
                while i < rest.len() {
                    if rest[i] == '[' && rest.get(i + 1) == Some(&':') {
                        match (i + 2..rest.len().saturating_sub(1))
                            .find(|&k| rest[k] == ':' && rest[k + 1] == ']')
                        {
                            Some(k) => i = k + 2,
                            None => i += 1,
                        }
                        continue;
                    }
                    if rest[i] == ']' {
                        close = Some(i);
                        break;
                    }
                    i += 1;
                }
                match close {
                    Some(at) if !n.is_empty() => glob(&rest[at + 1..], &n[1..]),
                    _ => !n.is_empty() && n[0] == '[' && glob(rest, &n[1..]),
                }
            }
            Some((c, rest)) => n.first() == Some(c) && glob(rest, &n[1..]),
        }
    }
    if !word.contains(['*', '?', '[']) {
        return word == name;
    }
    let p: Vec<char> = word.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob(&p, &n)
}

/// A program a deny or ask rule covers (`names`) that the command's text names somewhere other
/// than in command position: an argument of a program that may run it (`setarch x86_64 touch F`,
/// `ld.so /usr/bin/touch F`, `tmux new 'touch F'`), code given inline or on its input, a copy made
/// under another name (`cp /usr/bin/touch bin/id; id F`). The rules match what runs by name, and
/// no list of programs that run others is complete; the text is. Quotes and backslashes are taken
/// out first (`t\ouch`, `'tou'ch` are `touch` to bash), and a glob that can name it counts.
fn named_elsewhere(analysis: &Analysis, command: &str, names: &[String]) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    // Quotes and backslashes out; `$@` and `$*` (empty where no arguments are, as in an `sh -c`
    // string: `r$@m` is `rm` there; make's `$$@` likewise) out too.
    let text: String = command
        .replace("$$@", "")
        .replace("$$*", "")
        .replace("$@", "")
        .replace("$*", "")
        .replace("${@}", "")
        .replace("${*}", "")
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    // Split at what ends a word for a shell or a path; and again keeping `!` and `:`, which a
    // bracket expression holds (`r[!a-l]`, `r[[:lower:]]`): the larger count of each name.
    let count = |separators: &str| {
        let mut counts = vec![0usize; names.len()];
        let words = text.split(|c: char| c.is_whitespace() || separators.contains(c));
        for word in words.filter(|w| !w.is_empty()) {
            // A word with braces is every word bash makes of it (`{r,}m` is `rm` and `m`); a word
            // counts once for each name it can make, however many of its forms make it.
            let pieces: Vec<String> = word.split([',', '{', '}']).map(str::to_string).collect();
            let forms: Vec<String> = brace_words(word).into_iter().chain(pieces).collect();
            for (i, n) in names.iter().enumerate() {
                if forms.iter().any(|f| word_names(f, n)) {
                    counts[i] += 1;
                }
            }
        }
        counts
    };
    let (split, kept) = (count(";&|()<>=:/`$!"), count(";&|()<>=/`$"));
    let in_text: Vec<usize> = split.iter().zip(&kept).map(|(a, b)| *a.max(b)).collect();
    // Where the text names each one as the program a simple command runs.
    fn as_program(a: &Analysis, names: &[String], counts: &mut [usize]) {
        for s in a.segments() {
            if let Some(first) = s.effective_argv.first() {
                let base = first.rsplit('/').next().unwrap_or(first);
                for (i, n) in names.iter().enumerate() {
                    if base == n {
                        counts[i] += 1;
                    }
                }
            }
            if let Some(inner) = &s.inner {
                as_program(inner, names, counts);
            }
        }
    }
    let mut as_programs = vec![0usize; names.len()];
    as_program(analysis, names, &mut as_programs);
    names
        .iter()
        .zip(in_text.iter().zip(&as_programs))
        .find(|(_, (t, p))| t > p)
        .map(|(n, _)| n.clone())
}

/// Programs an argument may hand text to as code: shells, interpreters, and the shell's own
/// evaluating words. Checked by every name a word is known by (`python3.11` is python).
const CODE_WORDS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox", "python", "perl", "ruby", "node",
    "nodejs", "php", "lua", "tclsh", "eval", "exec", "source", ".",
];

/// Under deny or ask rules, the text a program the analyzer has no model of may run: an argument
/// holding shell text that builds a word (`$x`, `${x}`, `$(...)`, a backtick) or naming a shell or
/// an interpreter as a word of its own (`ssh-agent sh -c 'x=ouch; t$x F'`, `gcc -wrapper
/// sh,-c,...`, `java -XX:OnError='...'`). Such a program may run it, and the name it builds is
/// not in the text for `named_elsewhere` to find. Builtins, programs with a read-only grammar,
/// git and the programs whose command-running options are known (`command_options`) are modelled:
/// their arguments are judged by their own grammar instead.
fn unmodelled_code(analysis: &Analysis) -> Option<String> {
    for s in analysis.segments() {
        if let Some(why) = s.inner.as_deref().and_then(unmodelled_code) {
            return Some(why);
        }
        let Some(first) = s.effective_argv.first() else {
            continue;
        };
        let names = super::program_names::names(first, &s.resolution.executable_name);
        let modelled = s.resolution.builtin
            || names.iter().any(|n| {
                super::resolve::is_builtin(n)
                    || n == "git"
                    || super::readonly::grammar(n).is_some()
                    || super::command_options::knows(n)
            });
        if modelled {
            continue;
        }
        for word in &s.effective_argv[1..] {
            if builds_a_word(word) {
                return Some(format!(
                    "{first} is given `{word}`, shell text that builds a name when run"
                ));
            }
            let code = word
                .split(|c: char| c.is_whitespace() || ",=:;|&()<>'\"".contains(c))
                .filter(|p| !p.is_empty())
                .find(|p| {
                    super::program_names::any_in(&super::program_names::names(p, ""), CODE_WORDS)
                });
            if let Some(piece) = code {
                return Some(format!(
                    "{first} is given `{word}`, which names {piece}, a program that runs text as code"
                ));
            }
        }
    }
    None
}

/// Under deny or ask rules, a program's script that the same line names before it runs: a code
/// runner's file operand (`printf ... | tee x.py; python3 x.py`, `tclsh x.tcl`) or make's makefile
/// (`printf ... > Makefile; make`). The earlier command may have written it, and the rules cannot
/// see what it holds.
fn script_written_here(analysis: &Analysis, command: &str) -> Option<String> {
    for (at, s) in analysis.segments().enumerate().skip(1) {
        let Some(first) = s.effective_argv.first() else {
            continue;
        };
        let names = super::program_names::names(first, &s.resolution.executable_name);
        if names.iter().any(|n| matches!(n.as_str(), "make" | "gmake"))
            && command.contains("akefile")
        {
            return Some(format!(
                "{first} reads a makefile the same line names before it (segment {})",
                at + 1
            ));
        }
        // A package manager's scripts and settings: `package.json`, `.npmrc`, `.yarnrc(.yml)`,
        // `bunfig.toml`, however the line quotes or escapes the name (`pack''age.json`), since an
        // earlier command may have written them with contents the text does not show (`find
        // -fprintf package.json '{"scripts":{"\164est":...}}'`).
        if super::program_names::any_in(&names, super::package_config::PACKAGE_MANAGERS) {
            let plain: String = command
                .chars()
                .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                .collect();
            let config = ["package.json", ".npmrc", ".yarnrc", "bunfig.toml", "npmrc"]
                .into_iter()
                .find(|f| plain.contains(f));
            if let Some(file) = config {
                return Some(format!(
                    "{first} reads {file}, which the same line names before it (it may have written it)"
                ));
            }
        }
        if !super::runners::is_code_runner(first)
            && !super::runners::is_code_runner(&s.resolution.executable_name)
        {
            continue;
        }
        for operand in s.effective_argv[1..].iter().filter(|a| !a.starts_with('-')) {
            let base = operand.rsplit('/').next().unwrap_or(operand);
            if base.len() >= 2 && command.matches(base).count() >= 2 {
                return Some(format!(
                    "{first} runs {operand}, which the same line names before it (it may have written it)"
                ));
            }
        }
    }
    None
}

/// Does `word` hold a shell expansion that makes a name at run time: `$` before a name, `{` or
/// `(`, or a backtick?
fn builds_a_word(word: &str) -> bool {
    let b = word.as_bytes();
    b.contains(&b'`')
        || b.windows(2).any(|w| {
            w[0] == b'$'
                && (w[1].is_ascii_alphabetic() || matches!(w[1], b'_' | b'{' | b'(' | b'\''))
        })
}

impl RuleSet {
    /// `decide`, and then what the text says beyond the analysis: an allow, while deny or ask rules
    /// exist, is asked when the command names a program they cover anywhere but in command
    /// position (see `named_elsewhere`).
    pub fn decide_command(&self, analysis: &Analysis, command: &str) -> RuleDecision {
        let decided = self.decide(analysis);
        if decided.verdict != Verdict::Allow {
            return decided;
        }
        let names = covered_names(self.deny.iter().chain(&self.ask));
        if let Some(name) = named_elsewhere(analysis, command, &names) {
            return RuleDecision {
                verdict: Verdict::Ask,
                rules: vec![],
                reason: format!(
                    "the command names {name}, which a deny or ask rule covers, where the rules cannot see whether it runs (an argument, a script or program text, a copy under another name)"
                ),
            };
        }
        // Only deny or ask rules need these (an allow alone decides by what the analysis saw).
        let guarded = !self.deny.is_empty() || !self.ask.is_empty();
        let unseen = guarded
            .then(|| unmodelled_code(analysis).or_else(|| script_written_here(analysis, command)))
            .flatten();
        match unseen {
            Some(why) => RuleDecision {
                verdict: Verdict::Ask,
                rules: vec![],
                reason: format!("the deny and ask rules cannot see what runs: {why}"),
            },
            None => decided,
        }
    }

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
        let files = named_files(self.deny.iter().chain(&self.ask));
        let mut views = Vec::new();
        for s in analysis.segments() {
            deny_views(s, &files, &mut views);
        }
        for (list, verdict) in [(&self.deny, Verdict::Deny), (&self.ask, Verdict::Ask)] {
            for c in &views {
                if let Some(r) = list.iter().find(|r| r.matches(c)) {
                    return RuleDecision {
                        verdict,
                        rules: vec![r.source.clone()],
                        reason: format!("`{c}` matches {}", r.source),
                    };
                }
            }
        }
        // A deny rule is never passed silently: what the analyzer does not see exactly is asked.
        if !self.deny.is_empty() || !self.ask.is_empty() {
            if let Some(why) = analysis.first_inexact() {
                return RuleDecision {
                    verdict: Verdict::Ask,
                    rules: vec![],
                    reason: format!("the deny and ask rules cannot see exactly what runs: {why}"),
                };
            }
            // Deny rules match names: code given inline, or a file made in the same line, hides
            // what runs behind a name no rule names.
            if let Some(why) = super::blind_spots::first(analysis) {
                return RuleDecision {
                    verdict: Verdict::Ask,
                    rules: vec![],
                    reason: format!("the deny and ask rules cannot see what runs: {why}"),
                };
            }
        }
        let mut used = Vec::new();
        let blanket = self.allow.iter().any(|r| r.pattern == Pattern::Any);
        for s in analysis.segments() {
            let (text, offset) = allow_text(s);
            let unseen = s
                .inexact
                .clone()
                .or_else(|| s.blocked.clone())
                .or_else(|| s.inner.as_ref().and_then(|i| i.first_inexact()));
            if let (Some(why), false) = (unseen, blanket) {
                return RuleDecision {
                    verdict: Verdict::NoMatch,
                    rules: used,
                    reason: format!("`{text}` is not seen exactly: {why}"),
                };
            }
            let expands = &s.expands[offset.min(s.expands.len())..];
            let words = &s.argv[offset.min(s.argv.len())..];
            let quoted = allow_text_quoted(s);
            let matches = |r: &Rule| {
                r.matches(&text) || (matches!(r.pattern, Pattern::Exact(_)) && r.matches(&quoted))
            };
            match self.allow.iter().find(|r| {
                matches(r) && r.exact_over(expands) && r.runner_problem(words, expands).is_none()
            }) {
                Some(r) => used.push(r.source.clone()),
                None => {
                    // A rule that matched but for a runner option says which option.
                    let runner = self.allow.iter().find_map(|r| {
                        matches(r)
                            .then(|| r.runner_problem(words, expands))
                            .flatten()
                            .map(|why| format!("{} does not cover this: {why}", r.source))
                    });
                    return RuleDecision {
                        verdict: Verdict::NoMatch,
                        rules: used,
                        reason: runner.unwrap_or_else(|| format!("no allow rule matches `{text}`")),
                    };
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
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "git",
    "cargo",
    "go",
    "docker",
    "kubectl",
    "make",
    "pip",
    "uv",
    "poetry",
    "gh",
    "npx",
    // Fifth round: CLIs whose subcommands differ in kind (`terraform version` is not `terraform
    // apply`): a rule on the whole program allowed them all.
    "terraform",
    "tofu",
    "helm",
    "podman",
    "gcloud",
    "aws",
    "az",
    "mvn",
    "gradle",
    "gradlew",
    "tox",
    "conda",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "systemctl",
    "rustup",
    "deno",
    "bundle",
    "rails",
    "rake",
    "composer",
    "dotnet",
    "flutter",
    "dart",
    "mix",
    "pulumi",
    "wrangler",
    "vercel",
    "firebase",
    "heroku",
    "flyctl",
    "pip3",
    "pipenv",
    "pdm",
    "hatch",
    "nix",
    "direnv",
];

/// Interpreters that run program text given on their command line or in a file the rule does
/// not name (with versions and other names: `gawk`, `php8.2`, `lua5.4`).
const INTERPRETERS: &[&str] = &[
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "busybox",
    "php",
    "deno",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "Rscript",
    "R",
    "jshell",
    "osascript",
    "pwsh",
    "groovy",
    "kotlin",
    "scala",
    "pypy",
    "python",
    "node",
    "nodejs",
    "perl",
    "ruby",
    "irb",
    "julia",
    "guile",
    "racket",
    "sbcl",
    "clisp",
    "ghci",
    "runghc",
    "erl",
    "elixir",
    "swift",
];

/// Subcommands that run whatever command or package they are given.
const RUNS_ANY_COMMAND: &[(&str, &str)] = &[
    ("uv", "run"),
    ("uvx", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("rye", "run"),
    ("bundle", "exec"),
    ("npm", "exec"),
    ("npm", "x"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
    ("yarn", "exec"),
    ("bun", "x"),
    ("go", "run"),
    ("rustup", "run"),
    ("pyenv", "exec"),
    ("conda", "run"),
    ("nix", "run"),
    ("nix-shell", "--run"),
    // Fifth round: subcommands whose own arguments say what runs (a container's command, a
    // package's install scripts, a generator's directives).
    ("docker", "run"),
    ("docker", "exec"),
    ("docker", "compose"),
    ("podman", "run"),
    ("podman", "exec"),
    ("kubectl", "exec"),
    ("kubectl", "run"),
    ("kubectl", "apply"),
    ("npm", "install"),
    ("npm", "i"),
    ("npm", "ci"),
    ("pnpm", "install"),
    ("pnpm", "add"),
    ("yarn", "add"),
    ("pip", "install"),
    ("pip3", "install"),
    ("go", "generate"),
    ("go", "install"),
    ("cargo", "install"),
    ("direnv", "exec"),
    ("terraform", "apply"),
    ("git", "config"),
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
        // A prefix rule on a program that runs any program text or command it is given (an
        // interpreter, `uv run`, `npm exec`) would allow everything after it: `Bash(awk:*)`, kept
        // after an `awk -f x.awk` was allowed always, let `awk 'BEGIN{system(...)}'` through. Those
        // get the exact command, as the allowlist withholds them; so does a command whose prefix
        // could not be read whole (`git -C /tmp status` is not `Bash(git:*)`).
        let interpreter =
            super::program_names::any_in(&super::program_names::names(name, ""), INTERPRETERS);
        let runs_anything = interpreter
            || words
                .get(..2)
                .is_some_and(|w| RUNS_ANY_COMMAND.contains(&(w[0], w[1])));
        let cut_short = take > words.len();
        let rule = if WRAPPERS.contains(&name) || s.blocked.is_some() || runs_anything || cut_short
        {
            format!("Bash({})", shell_join(argv))
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

    pub(super) fn a(cmd: &str) -> Analysis {
        analyze(
            cmd,
            &Context {
                cwd: Path::new("/"),
                path: Some("/usr/bin:/bin"),
                home: Some(crate::approval::TEST_HOME),
            },
        )
    }

    /// The rules' verdict on `cmd` analysed in directory `cwd` (the tests that make one are Unix's).
    #[cfg(unix)]
    fn verdict_in(rules: &RuleSet, cwd: &Path, cmd: &str) -> Verdict {
        let ctx = Context {
            cwd,
            path: Some("/usr/bin:/bin"),
            home: Some(crate::approval::TEST_HOME),
        };
        rules.decide_command(&analyze(cmd, &ctx), cmd).verdict
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
    fn under_a_blanket_allow_a_deny_rule_is_never_passed_by_what_it_cannot_see() {
        let rules = set(&["Bash(rm:*)"], &[], &["Bash(*)"]);
        // A builtin that runs a command: its command is seen.
        assert_eq!(rules.decide(&a("jobs -x rm -f F")).verdict, Verdict::Deny);
        for cmd in [
            "cp /usr/bin/touch ./x && ./x F",
            "python3 -c 'import os; os.remove(\"F\")'",
            "perl -e 'unlink q(F)'",
            "node -e 'require(\"fs\").rmSync(\"F\")'",
            "awk 'BEGIN{system(\"rm F\")}'",
            "make -f -",
            "printf -v PATH %s /tmp; ls",
            "BASH_CMDS[ls]=/bin/rm; ls F",
        ] {
            assert_eq!(rules.decide(&a(cmd)).verdict, Verdict::Ask, "{cmd}");
        }
        assert_eq!(rules.decide(&a("python3 test.py")).verdict, Verdict::Allow);
        // A runner's own options are not covered by a prefix rule on it.
        let npm = set(&[], &[], &["Bash(npm test:*)"]);
        assert_eq!(
            npm.decide(&a("npm test -- --watch")).verdict,
            Verdict::Allow
        );
        let d = npm.decide(&a("npm test --script-shell=/tmp/x"));
        assert_eq!(d.verdict, Verdict::NoMatch);
        assert!(d.reason.contains("--script-shell"), "{}", d.reason);
        // Without deny or ask rules, the allow rule decides as before.
        let open = set(&[], &[], &["Bash(*)"]);
        assert_eq!(open.decide(&a("python3 -c 1")).verdict, Verdict::Allow);
    }

    /// Standard input named as a script by any spelling, or through a link an earlier command
    /// made, is the program text on the input again (an outside round ran `rm` this way).
    #[cfg(unix)]
    #[test]
    fn standard_input_named_by_any_path_is_program_text_on_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink("/dev/stdin", cwd.join("s")).unwrap();
        std::os::unix::fs::symlink("/proc/self/fd", cwd.join("fds")).unwrap();
        std::os::unix::fs::symlink("s", cwd.join("s2")).unwrap();
        std::fs::write(cwd.join("plain.py"), "print(1)\n").unwrap();
        let rules = set(&["Bash(rm:*)"], &[], &["Bash(*)"]);
        let decide = |cmd: &str| verdict_in(&rules, &cwd, cmd);
        for script in [
            "/dev//stdin",
            "/dev/./fd/0",
            "//dev/stdin",
            "/dev/../dev/stdin",
            "/proc/./self/fd/0",
            "./s",
            "s2",
            "fds/0",
            "./fds/../fds/0",
        ] {
            for program in ["python3", "perl", "ruby", "awk -f", "node"] {
                // (The text does not name rm: a name the rules cover is asked anyway.)
                let cmd = format!("{program} {script} <<'EOF'\nsystem('m'.'r')\nEOF");
                assert_eq!(decide(&cmd), Verdict::Ask, "{cmd}");
            }
        }
        // A plain script file is what it is: the rules decide as before.
        assert_eq!(decide("python3 plain.py"), Verdict::Allow);
    }

    /// Outside round, 2026-11-27: prefix rules on reading commands let them write any file (a
    /// `package.json` the next allowed `npm test` ran), and programs that run the program in their
    /// arguments, load a library or read a config naming a program were let through.
    #[test]
    fn what_an_allow_rule_names_does_not_cover_writing_files_or_running_others() {
        let rules = set(
            &[],
            &[],
            &[
                "Bash(git log:*)",
                "Bash(git diff:*)",
                "Bash(sort:*)",
                "Bash(find:*)",
                "Bash(sed -n:*)",
                "Bash(tar -tf:*)",
                "Bash(logsave:*)",
                "Bash(choom:*)",
                "Bash(curl:*)",
                "Bash(man:*)",
                "Bash(nm:*)",
                "Bash(python3 -m pip:*)",
            ],
        );
        let decide = |cmd: &str| rules.decide_command(&a(cmd), cmd).verdict;
        for cmd in [
            "git log -1 --format='tformat:x' --output=package.json",
            "git diff --output=/root/.bashrc",
            "sort -o /root/.bashrc a",
            "find . -fprintf .npmrc 'node-options=x'",
            "sed -n '1w package.json' a",
            "sed -n -i 's/a/b/' package.json",
            "sed -n 's/a/b/w out' f",
            "tar -tf a.tar --index-file=zz.pth",
            "logsave /dev/null ./payload.sh",
            "choom -n 0 -- ./payload.sh",
            "curl -sS --engine /abs/p.so https://x",
            "man -C ./man.conf ls",
            "nm --plugin ./p.so /bin/ls",
            // Second round: git's other subcommands that take --output, curl's output options,
            // tools named for their target, multi-call names.
            "git shortlog --output=venv/lib/python3.11/site-packages/evil.pth",
            "git log --outp=x",
            "curl -s file:///tmp/src.json -o package.json",
            "curl -sO https://x/package.json",
            "x86_64-linux-gnu-nm --plugin ./evil.so o.o",
            "logsave /dev/null ./del victim",
        ] {
            assert_ne!(decide(cmd), Verdict::Allow, "{cmd}");
        }
        for cmd in [
            "git log --oneline -5",
            "git diff --stat",
            "sort -u a",
            "find . -name '*.rs'",
            "sed -n '1,5p' a",
            "sed -n '1w /dev/stdout' a",
            "tar -tf a.tar",
            "curl -sS https://x",
            "man ls",
            "python3 -m pip list",
        ] {
            assert_eq!(decide(cmd), Verdict::Allow, "{cmd}");
        }
    }

    /// Outside round seven: a rule on a reader (a program with a read-only grammar) let its writing
    /// and running forms through (`xxd -r -p - package.json`, `uniq in out`, `rg --pre ./x`, awk's
    /// `system`, `find -delete`, `date -s`). A rule naming a reader covers its reading uses: every
    /// grammar's own example, and the common forms below, still pass.
    #[test]
    fn a_rule_on_a_reader_covers_its_reading_uses_only() {
        let names: Vec<&str> = super::super::readonly::grammars().map(|g| g.name).collect();
        let allow: Vec<String> = names.iter().map(|n| format!("Bash({n}:*)")).collect();
        let allow: Vec<&str> = allow.iter().map(String::as_str).collect();
        let rules = set(&[], &[], &allow);
        let decide = |cmd: &str| rules.decide_command(&a(cmd), cmd).verdict;
        for g in super::super::readonly::grammars() {
            let cmd = std::iter::once(g.name)
                .chain(g.example.iter().copied())
                .map(|w| {
                    if w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+%".contains(c))
                    {
                        w.to_string()
                    } else {
                        format!("'{}'", w.replace('\'', "'\\''"))
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            if matches!(
                g.name,
                "cd" | "type" | "echo" | "printf" | "test" | "true" | "false" | "pwd"
            ) {
                continue;
            }
            assert_eq!(decide(&cmd), Verdict::Allow, "{cmd}");
        }
        for cmd in [
            "xxd -r -p - package.json",
            "uniq in.txt out.txt",
            "uniq *",
            "rg --pre ./x foo",
            "awk 'BEGIN{system(\"x\")}'",
            "awk '{print > \"out\"}' f",
            "find . -name x -delete",
            "date -s 2020-01-01",
            "tree -o out",
            "file -C -m magic",
            "sort -o out a",
        ] {
            assert_ne!(decide(cmd), Verdict::Allow, "{cmd}");
        }
        for cmd in [
            "grep -rn foo src",
            "grep foo *",
            "cat *.txt",
            "ls -la",
            "find . -name '*.rs'",
            "awk '{print $1}' f",
            "uniq -c a",
            "wc -l *",
            "du -sh *",
            "date +%s",
            "jq -r .a f.json",
            "cat f | sort | uniq -c",
        ] {
            assert_eq!(decide(cmd), Verdict::Allow, "{cmd}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_module_or_cargo_config_of_the_current_directory_is_what_runs() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        let rules = set(
            &[],
            &[],
            &["Bash(python3 -m pip:*)", "Bash(cargo metadata:*)"],
        );
        let decide = |cmd: &str| verdict_in(&rules, &cwd, cmd);
        assert_eq!(decide("python3 -m pip list"), Verdict::Allow);
        assert_eq!(decide("cargo metadata"), Verdict::Allow);
        std::fs::create_dir(cwd.join("pip")).unwrap();
        std::fs::write(cwd.join("pip/__main__.py"), "print(1)\n").unwrap();
        assert_ne!(decide("python3 -m pip list"), Verdict::Allow);
        assert_ne!(decide("python3 -W ignore -m pip list"), Verdict::Allow);
        std::fs::create_dir(cwd.join(".cargo")).unwrap();
        std::fs::write(
            cwd.join(".cargo/config.toml"),
            "[build]\nrustc-wrapper = \"./w.sh\"\n",
        )
        .unwrap();
        assert_ne!(decide("cargo metadata"), Verdict::Allow);
    }

    /// Third round: what a command in a project directory imports or reads before any goal.
    #[cfg(unix)]
    #[test]
    fn a_standard_module_or_a_maven_jvm_config_of_the_current_directory_is_what_runs() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        let rules = set(
            &[],
            &[],
            &[
                "Bash(python3 -m json.tool:*)",
                "Bash(mvn -v:*)",
                "Bash(env:*)",
                "Bash(ls:*)",
            ],
        );
        let decide = |cmd: &str| verdict_in(&rules, &cwd, cmd);
        assert_eq!(decide("python3 -m json.tool x.json"), Verdict::Allow);
        // A directory without __init__.py is a namespace portion: the standard library wins.
        std::fs::create_dir(cwd.join("email")).unwrap();
        assert_eq!(decide("python3 -m json.tool x.json"), Verdict::Allow);
        std::fs::write(cwd.join("email/__init__.py"), "").unwrap();
        assert_ne!(decide("python3 -m json.tool x.json"), Verdict::Allow);
        std::fs::remove_dir_all(cwd.join("email")).unwrap();
        std::fs::write(cwd.join("argparse.py"), "print(1)\n").unwrap();
        assert_ne!(decide("python3 -m json.tool x.json"), Verdict::Allow);
        std::fs::remove_file(cwd.join("argparse.py")).unwrap();
        assert_eq!(decide("python3 -m json.tool x.json"), Verdict::Allow);
        assert_eq!(decide("mvn -v"), Verdict::Allow);
        std::fs::create_dir(cwd.join(".mvn")).unwrap();
        std::fs::write(cwd.join(".mvn/jvm.config"), "-agentpath:./ev.so\n").unwrap();
        assert_ne!(decide("mvn -v"), Verdict::Allow);
        // env without PATH looks the program up on the C library's default path.
        assert_eq!(decide("env ls"), Verdict::Allow);
        for cmd in [
            "env -u PATH ls",
            "env -uPATH ls",
            "env --unset=PATH ls",
            "env --un=PATH ls",
        ] {
            assert_ne!(decide(cmd), Verdict::Allow, "{cmd}");
        }
        // bash's blanks are space, tab and newline: a Unicode space is part of a heredoc's
        // delimiter, so the line after it runs.
        for space in ['\u{a0}', '\u{2028}', '\u{3000}', '\u{2009}'] {
            let cmd = format!("ls <<EOF{space}\nEOF{space}\ntouch canary\nEOF");
            assert_ne!(decide(&cmd), Verdict::Allow, "{cmd:?}");
        }
    }

    #[test]
    fn a_covered_program_named_where_the_rules_cannot_see_it_run_is_asked() {
        let rules = set(&["Bash(touch:*)"], &[], &["Bash(*)"]);
        let decide = |cmd: &str| rules.decide_command(&a(cmd), cmd).verdict;
        // Programs that run their arguments, by any name; code and makefiles given inline or on
        // their input; a copy made under another name.
        for cmd in [
            "setarch x86_64 touch F",
            "linux64 touch F",
            "/lib64/ld-linux-x86-64.so.2 /usr/bin/touch F",
            "start-stop-daemon -S -x /usr/bin/touch -- F",
            "valgrind touch F",
            "perf stat touch F",
            "tmux new -d 'touch F'",
            "capsh -- -c 'touch F'",
            "rbash -c 'touch F'",
            "fakeroot-sysv touch F",
            "editor -es -c '!touch F' -c q",
            "python3 -X dev -c \"import os; os.system('touch F')\"",
            "make -f /dev/stdin <<EOF\nall:\n\ttouch F\nEOF",
            "tclsh8.6 <<EOF\nexec touch F\nEOF",
            "cp /usr/bin/touch /tmp/bin/whoami; whoami F",
            "setarch x86_64 /usr/bin/t?uch F",
            "setarch x86_64 to\\uch F",
            "cp /usr/bin/{t,}ouch d/; run-parts --arg=F d",
            "sh -c 't$@ouch F'",
            "make x -f /dev/null --ev='x:;@t$$@ouch F'",
            // Outside round, 2026-11-27: programs that run the program in their arguments.
            "logsave /dev/null touch F",
            "choom -n 0 -- touch F",
            "qemu-x86_64-static /usr/bin/touch F",
            "not-14 touch F",
            "sotruss touch F",
            // Second round.
            "rustup run stable touch F",
            "rust-gdb -batch -ex 'shell touch F'",
            "x86_64-linux-gnu-gp-collect-app touch F",
            "gprofng collect app touch F",
            "valgrind.bin touch F",
            "service ../../usr/bin/touch F",
            "pip --python ./x list",
            "gpg-zip --tar ./x -d y",
            "clippy-driver -C linker=./x x.rs",
            "rpcgen -Y ./ev -h t.x",
            "luit touch F",
            "echo \"import os\" | python3 -i /dev/null",
            "printf 'x' | perl -d empty.pl",
            "tomlq -y -i '.a' v.toml",
            // Fourth round: a program named through /proc is the shell's own file to the shell.
            "/proc/self/exe -c 'touch F'",
            "/proc/thread-self/exe -c 'touch F'",
            "/proc/self/cwd/touch F",
            "msgexec -i x.po touch F",
            "systemd-cat touch F",
            "wine touch F",
        ] {
            assert_ne!(decide(cmd), Verdict::Allow, "{cmd}");
        }
        // Named only in command position, or not at all: the rules decide as before.
        assert_eq!(decide("touch F"), Verdict::Deny);
        // A rule on one subcommand does not make the program's other commands asked.
        let push = set(
            &["Bash(git push:*)"],
            &["Bash(git fetch:*)"],
            &["Bash(git status:*)", "Bash(git log:*)"],
        );
        for cmd in ["git status", "git status && git log -1"] {
            assert_eq!(
                push.decide_command(&a(cmd), cmd).verdict,
                Verdict::Allow,
                "{cmd}"
            );
        }
        // Bracket expressions with classes and negations name what they match.
        for cmd in [
            "setarch x86_64 /usr/bin/t[!a-n]uch F",
            "setarch x86_64 /usr/bin/t[[:lower:]]uch F",
            "dpkgx --post-invoke=\"printf '\\164ouch F' | . /dev/stdin\"",
        ] {
            assert_ne!(decide(cmd), Verdict::Allow, "{cmd}");
        }
        assert_eq!(decide("ls -la && git status"), Verdict::Allow);
        assert_eq!(decide("echo touching"), Verdict::Allow);
        // Without deny or ask rules, nothing changes.
        let open = set(&[], &[], &["Bash(*)"]);
        assert_eq!(
            open.decide_command(&a("setarch x86_64 touch F"), "setarch x86_64 touch F")
                .verdict,
            Verdict::Allow
        );
    }

    #[test]
    fn shell_text_given_to_a_program_without_a_model_is_asked_under_deny_rules() {
        let rules = set(&["Bash(rm:*)"], &[], &["Bash(*)"]);
        let decide = |cmd: &str| rules.decide_command(&a(cmd), cmd).verdict;
        // A name built at run time, or a shell or interpreter handed text, by a program no list knows.
        for cmd in [
            "ssh-agent2 sh -c 'x=m; r$x -f F'",
            "mytool --hook='r${x}m F'",
            "mytool --hook='r$(echo m) F'",
            "mytool --hook='`echo rm` F'",
            "mytool -wrapper sh,-c,payload",
            "mytool --on-error='python3 evil.py'",
            "mytool exec bash",
            "ls; othertool 'eval x'",
            "printf 'import os' | tee x.py; python3 x.py",
            "printf 'exec r' | tee x.tcl; tclsh x.tcl",
            "printf 'all:' > Makefile; make",
            "find . -maxdepth 0 -fprintf package.json '{\"scripts\":{\"\\164est\":\"x\"}}' && npm run test",
            "sort -o pack''age.json x && npm run test",
            "find . -maxdepth 0 -fprintf .npmrc 'node-options=--require=./e.js' && npm test",
            "echo 'yarnPath: x.cjs' > .yarnrc.yml; yarn test",
        ] {
            assert_eq!(decide(cmd), Verdict::Ask, "{cmd}");
        }
        // Programs with a model judge their own arguments; plain text and a regex anchor are not code.
        for cmd in [
            "git commit -m 'use bash and $HOME'",
            "grep 'x$' f",
            "echo '$x'",
            "printf '%s\\n' '$x'",
            "mytool --message='fix the shell script'",
            "mytool --price='$5'",
            "cd src && python3 manage.py test",
            "python3 x.py",
            "npm run test",
        ] {
            assert_eq!(decide(cmd), Verdict::Allow, "{cmd}");
        }
        // Without deny or ask rules, nothing changes.
        let open = set(&[], &[], &["Bash(*)"]);
        let cmd = "mytool --hook='r$x F'";
        assert_eq!(open.decide_command(&a(cmd), cmd).verdict, Verdict::Allow);
    }

    #[test]
    fn options_that_run_commands_are_not_covered_by_a_prefix_rule() {
        let rules = set(
            &[],
            &[],
            &["Bash(git grep:*)", "Bash(git fetch:*)", "Bash(sort:*)"],
        );
        for cmd in [
            "git grep -O'touch C' hi",
            "git fetch --upload-pack='touch C' .",
            "sort -S 1 --compress-program=sh data",
        ] {
            assert_ne!(
                rules.decide_command(&a(cmd), cmd).verdict,
                Verdict::Allow,
                "{cmd}"
            );
        }
        for cmd in ["git grep -n hi", "git fetch origin", "sort -u data"] {
            assert_eq!(
                rules.decide_command(&a(cmd), cmd).verdict,
                Verdict::Allow,
                "{cmd}"
            );
        }
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
            vec!["Bash(bash -c 'ls && pwd')"]
        );
        // A program that runs any program text or command gets its exact command: `Bash(awk:*)`
        // allowed `awk 'BEGIN{system(...)}'` once an `awk -f x.awk` was allowed always.
        for (cmd, rule) in [
            ("awk -f x.awk f", "Bash(awk -f x.awk f)"),
            ("php x.php", "Bash(php x.php)"),
            ("deno run x.ts", "Bash(deno run x.ts)"),
            ("uv run pytest", "Bash(uv run pytest)"),
            ("npm exec eslint", "Bash(npm exec eslint)"),
            ("git -C /tmp status", "Bash(git -C /tmp status)"),
        ] {
            assert_eq!(suggest_rules(&a(cmd)), vec![rule.to_string()], "{cmd}");
        }
        assert_eq!(suggest_rules(&a("npm test")), vec!["Bash(npm test:*)"]);
        // Fifth round: subcommands whose arguments say what runs, and CLIs whose subcommands
        // differ in kind.
        for (cmd, rule) in [
            ("terraform version", "Bash(terraform version:*)"),
            ("npm install --offline", "Bash(npm install --offline)"),
            ("docker run alpine true", "Bash(docker run alpine true)"),
            ("kubectl exec p -- true", "Bash(kubectl exec p -- true)"),
        ] {
            assert_eq!(suggest_rules(&a(cmd)), vec![rule.to_string()], "{cmd}");
        }
    }

    /// Fifth round: a git alias runs the command it names with the arguments after it; a link to
    /// a /proc directory is the running process's; programs that read commands from their input.
    #[cfg(unix)]
    #[test]
    fn a_git_alias_a_proc_directory_link_and_commands_on_the_input_are_asked() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        assert!(crate::git_layout::git_in(&cwd, &["init", "-q"]));
        assert!(crate::git_layout::git_in(
            &cwd,
            &["config", "alias.rx", "rebase"]
        ));
        std::os::unix::fs::symlink("/proc/self/cwd", cwd.join("cw")).unwrap();
        let rules = set(
            &["Bash(git push:*)"],
            &[],
            &["Bash(git:*)", "Bash(psql:*)", "Bash(*)"],
        );
        let decide = |cmd: &str| verdict_in(&rules, &cwd, cmd);
        assert_ne!(decide("git rx -x 'touch x' --root"), Verdict::Allow);
        assert_ne!(decide("git RX -x 'touch x' --root"), Verdict::Allow);
        assert_eq!(decide("git status"), Verdict::Allow);
        assert_ne!(decide("cw/usr/bin/ls"), Verdict::Allow);
        assert_ne!(decide("./cw/../cw/usr/bin/ls"), Verdict::Allow);
        assert_ne!(
            decide("psql -d x <<'EOF'\n\\! touch m\nEOF"),
            Verdict::Allow
        );
    }

    #[test]
    fn deny_rules_see_what_runs_and_ask_what_they_cannot_see() {
        let rules = set(&["Bash(rm:*)"], &[], &["Bash(*)"]);
        for cmd in [
            "/bin/rm -f x",
            "command rm -f x",
            "exec rm -f x",
            "X=1 rm -f x",
            "! rm -f x",
            "{ rm -f x; }",
            "if true; then rm -f x; fi",
            "while true; do rm -f x; done",
            "sh -c 'rm -f x'",
            "sh -c \"sh -c 'rm -f x'\"",
            "echo x | xargs rm -f",
            "echo x | xargs -n1 -- rm -f",
            "find . -exec rm {} ;",
            "eval rm -f x",
            "nice timeout 5 env -u A rm -f x",
            "builtin command rm x",
            "sudo rm x",
            // Found by the deny-rule differential: after the `time` keyword, `command` is still
            // the shell's builtin.
            "time -p command rm x",
            "time builtin command rm x",
            // The program /usr/bin/time runs the words after it.
            "ls | time rm x",
        ] {
            assert_eq!(rules.decide(&a(cmd)).verdict, Verdict::Deny, "{cmd}");
        }
        for cmd in [
            "{rm,-f,x}",
            // eval decodes `$'\x72m'` itself: `rm`.
            "eval \"$'\\x72m' x\"",
            "bash -lc 'rm x'",
            "echo rm x | sh",
            "source ./x.sh",
            "for i in 1; do :; done",
            "PATH=/tmp; ls",
            "echo x | xargs --bogus rm",
            // Not first in its pipeline, `time` is the program /usr/bin/time, which runs
            // `command` as a program: not seen.
            "ls | time command ls",
            // Variables that make a program run other code (bash sources BASH_ENV).
            "BASH_ENV=./rm.sh bash -c true",
            "env BASH_ENV=./rm.sh bash -c true",
            "GIT_EXTERNAL_DIFF=./rm.sh git diff",
            // Programs that run a shell command named in their arguments.
            "sed 's/.*/rm -f x/e' in.txt",
            "tar -xf x.tar --to-command='rm -f x'",
            "git rebase -x 'rm -f x' HEAD~1",
            "vim -es -c '!rm -f x'",
            "fakeroot sh rm.sh",
        ] {
            let d = rules.decide(&a(cmd));
            assert_eq!(d.verdict, Verdict::Ask, "{cmd}: {d:?}");
            assert!(
                d.reason.contains("cannot see exactly"),
                "{cmd}: {}",
                d.reason
            );
        }
        assert_eq!(
            rules.decide(&a("ls -la && git status")).verdict,
            Verdict::Allow
        );
    }

    #[test]
    fn allow_rules_need_exact_words_and_harmless_variables() {
        let rules = set(
            &[],
            &[],
            &["Bash(git status:*)", "Bash(ls:*)", "Bash(make:*)"],
        );
        assert_eq!(rules.decide(&a("git status")).verdict, Verdict::Allow);
        assert_eq!(
            rules.decide(&a("ls *.rs")).verdict,
            Verdict::Allow,
            "expansion after the prefix"
        );
        assert_eq!(rules.decide(&a("LANG=C make")).verdict, Verdict::Allow);
        for cmd in [
            "{ls,x}",
            "git {status,push}",
            "X=1 make",
            "env GIT_EXTERNAL_DIFF=./x git status",
            "PATH=./bin ls",
            "if true; then ls; fi",
            "command -p ls",
        ] {
            assert_eq!(rules.decide(&a(cmd)).verdict, Verdict::NoMatch, "{cmd}");
        }
    }

    #[test]
    fn shells_with_options_after_c_and_hard_links_are_seen() {
        let rules = set(&["Bash(rm:*)"], &[], &["Bash(*)"]);
        for cmd in ["bash -c -- 'rm x'", "sh -c -e 'rm x'", "bash -c -x 'rm x'"] {
            assert_eq!(rules.decide(&a(cmd)).verdict, Verdict::Ask, "{cmd}");
        }
        let dir = tempfile::tempdir().unwrap();
        let rm = ["/usr/bin/rm", "/bin/rm"]
            .into_iter()
            .find(|p| Path::new(p).exists());
        let link = dir.path().join("del");
        if let Some(rm) = rm {
            if std::fs::hard_link(rm, &link).is_ok() {
                let d = rules.decide(&a(&format!("{} x", link.display())));
                assert_eq!(d.verdict, Verdict::Deny, "{d:?}");
            }
        }
    }
}

#[cfg(test)]
mod exact_rule_tests {
    use super::tests::a;
    use super::*;

    fn allows(rule: &str, cmd: &str) -> bool {
        let set = RuleSet {
            allow: Rule::parse_list(&[rule], true).unwrap(),
            ..Default::default()
        };
        set.decide(&a(cmd)).verdict == Verdict::Allow
    }

    #[test]
    fn an_exact_suggestion_keeps_the_words_as_written_and_matches_only_them() {
        let cmd = "node -e \"console.log('a b')\"";
        let rules = suggest_rules(&a(cmd));
        assert_eq!(rules, vec!["Bash(node -e 'console.log('\\''a b'\\'')')"]);
        assert!(allows(&rules[0], cmd), "{}", rules[0]);
        // The same words split differently are another command.
        assert!(!allows(&rules[0], "node -e console.log a b"));
        assert_eq!(
            shell_join(&["a b".into(), "it's".into(), "x".into(), String::new()]),
            "'a b' 'it'\\''s' x ''"
        );
    }
}
