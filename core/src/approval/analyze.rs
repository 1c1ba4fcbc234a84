//! `analyzeCommand`: a command string becomes chains of pipelines of simple commands, each with its
//! argv, the wrappers around the real program, and the file that runs. Anything the lexer cannot
//! vouch for makes the analysis fail with a reason; anything it parses but cannot see exactly as
//! bash will run it (a compound-command keyword, a builtin that changes the shell, a word bash may
//! expand in command position, a program that dispatches to other commands) marks the segment
//! *inexact*, so nothing lets it run unasked and deny rules ask rather than pass it.

use std::path::{Path, PathBuf};

use super::dispatch::{dispatch, evaluated_name, COMPOUND_KEYWORDS};
use super::getopt;
use super::lexer::{lex, Op, Token, Word};
use super::resolve;

/// How the program of a segment was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// argv[0] of the effective command as written.
    pub raw_executable: String,
    /// The file that runs, symlinks followed, when there is one.
    pub resolved_path: Option<PathBuf>,
    /// Basename of the resolved path, else of the raw name.
    pub executable_name: String,
    /// bash runs the name as a builtin (`echo`, `test`, `cd`), whatever file `PATH` holds.
    pub builtin: bool,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The words as the shell will pass them.
    pub argv: Vec<String>,
    /// Parallel to `argv`: whether bash may expand the word into other or several words
    /// (unquoted glob characters, braces, tilde forms), so the argv above is not exact.
    pub expands: Vec<bool>,
    /// The command left after keywords, assignments and transparent wrappers were removed.
    pub effective_argv: Vec<String>,
    /// Leading words that are `!`, compound keywords or assignments (before any wrapper).
    pub prefix_words: usize,
    /// Variables set for the command, by prefix assignment or `env NAME=value`, in order.
    pub assignments: Vec<(String, String)>,
    /// The wrappers removed, outermost first.
    pub wrappers: Vec<String>,
    pub resolution: Resolution,
    /// For `sh -c "a && b"`: the inner command's analysis.
    pub inner: Option<Box<Analysis>>,
    /// Why this segment cannot be approved by allowlist (blocked wrapper, inner failure, ...).
    pub blocked: Option<String>,
    /// Why the analyzer cannot see exactly what runs: never auto-allowed, asked under deny rules.
    pub inexact: Option<String>,
    /// Other commands this one runs (`xargs rm`, `find -exec rm`), for deny rules.
    pub runs: Vec<Vec<String>>,
    /// Compound-command keywords at the start of this segment (`if`, `then`, `{`, `done`...).
    pub keywords: Vec<String>,
    /// How many leading words those keywords (and a `function` name) take.
    pub keyword_words: usize,
    /// The directory the command runs in, where the analyzer followed it (not after a `cd` it
    /// did not follow): relative file names in its arguments are taken from there.
    pub dir: Option<PathBuf>,
}

impl Segment {
    /// The `PATH` this command is looked up with: its own assignment, else the context's.
    pub fn path_assignment(&self) -> Option<&str> {
        self.assignments
            .iter()
            .rev()
            .find(|(n, _)| n == "PATH")
            .map(|(_, v)| v.as_str())
    }
}

/// The whole command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    pub ok: bool,
    pub reason: Option<String>,
    /// A stable code for failures callers may branch on (`command-too-large`, `too-many-commands`,
    /// `shell-not-analysed` on Windows).
    pub code: Option<&'static str>,
    /// Chain parts (split on `&&`, `||`, `;`), each a pipeline of segments.
    pub chains: Vec<Vec<Segment>>,
    /// The operators between chain parts.
    pub operators: Vec<String>,
}

impl Analysis {
    fn failed(reason: impl Into<String>) -> Self {
        Analysis {
            ok: false,
            reason: Some(reason.into()),
            code: None,
            chains: Vec::new(),
            operators: Vec::new(),
        }
    }

    fn failed_with_code(code: &'static str, reason: impl Into<String>) -> Self {
        Analysis {
            code: Some(code),
            ..Analysis::failed(reason)
        }
    }

    pub fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.chains.iter().flatten()
    }

    /// The first reason, in this analysis or an inner `sh -c` one, why what runs is not seen
    /// exactly (an unparsed command counts).
    pub fn first_inexact(&self) -> Option<String> {
        if !self.ok {
            return Some(self.reason.clone().unwrap_or_default());
        }
        self.segments().find_map(|s| {
            s.inexact
                .clone()
                .or_else(|| s.blocked.clone())
                .or_else(|| s.inner.as_ref().and_then(|i| i.first_inexact()))
        })
    }
}

/// Where names are looked up.
pub struct Context<'a> {
    pub cwd: &'a Path,
    /// `PATH` used for lookups.
    pub path: Option<&'a str>,
    pub home: Option<&'a str>,
}

/// Transparent wrappers: the real command follows their options.
/// `busybox ls` and `toybox ls` run the applet named by their first argument; `command`, `exec`
/// and `builtin` are bash's own.
#[cfg(not(target_os = "macos"))]
const WRAPPERS: [&str; 11] = [
    "env", "nice", "nohup", "stdbuf", "timeout", "time", "busybox", "toybox", "command", "exec",
    "builtin",
];
/// macOS adds its own: `caffeinate`, `sandbox-exec` (profile flags first) and `arch`.
#[cfg(target_os = "macos")]
const WRAPPERS: [&str; 14] = [
    "env",
    "nice",
    "nohup",
    "stdbuf",
    "timeout",
    "time",
    "busybox",
    "toybox",
    "command",
    "exec",
    "builtin",
    "caffeinate",
    "sandbox-exec",
    "arch",
];
/// Wrappers that change who or how a command runs: fail closed.
/// (Also by any other name of theirs: `fakeroot-sysv`, `linux64`, the loader's file name; see
/// `program_names`.) `setarch`, the dynamic loader, `start-stop-daemon`, `capsh` and the others
/// below run the program in their arguments.
const BLOCKED_WRAPPERS: [&str; 18] = [
    "chrt",
    "doas",
    "ionice",
    "setsid",
    "sudo",
    "taskset",
    "prlimit",
    "fakeroot",
    "dbus-run-session",
    "setarch",
    "ld.so",
    "start-stop-daemon",
    "capsh",
    "setpriv",
    "faketime",
    "eatmydata",
    "unbuffer",
    "catchsegv",
];
/// Shells whose `-c` script is analysed recursively.
pub(crate) const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "fish", "ash"];
const MAX_DEPTH: usize = 3;

/// Commands longer than this are not analysed: they are asked, with the code `command-too-large`.
/// Real agent commands are far shorter; the bound keeps analysis time and the size of what is
/// handed back to JavaScript small (napi refuses very large values).
pub const MAX_COMMAND_BYTES: usize = 256 * 1024;
/// Commands with more simple commands than this (inner `sh -c` ones included) are asked, with
/// the code `too-many-commands`.
pub const MAX_SEGMENTS: usize = 1024;

pub fn analyze(command: &str, ctx: &Context<'_>) -> Analysis {
    // The analyzer reads POSIX shell; on Windows the command runs in PowerShell or cmd.exe, whose
    // quoting and operators differ. Not certain what will run, the gate asks: never guess open.
    if cfg!(windows) {
        return Analysis::failed_with_code(
            "shell-not-analysed",
            "on Windows the command runs in PowerShell or cmd.exe, whose syntax the analyzer does not read",
        );
    }
    if command.len() > MAX_COMMAND_BYTES {
        return Analysis::failed_with_code(
            "command-too-large",
            format!(
                "the command is {} bytes; commands over {MAX_COMMAND_BYTES} bytes are not analysed",
                command.len()
            ),
        );
    }
    let mut walk = Lookups::default();
    let mut analysis = analyze_at(command, ctx, 0, &mut walk, true);
    if walk.1 > MAX_SEGMENTS {
        return too_many();
    }
    mark_git_in_lines_with_writers(&mut analysis);
    analysis
}

fn too_many() -> Analysis {
    Analysis::failed_with_code(
        "too-many-commands",
        format!("the command has more than {MAX_SEGMENTS} simple commands; it is not analysed"),
    )
}

/// `bash`: the text is bash's (else a POSIX `sh` such as dash: no `builtin`, no `time` keyword).
fn analyze_at(
    command: &str,
    ctx: &Context<'_>,
    depth: usize,
    cache: &mut Lookups,
    bash: bool,
) -> Analysis {
    if command.trim().is_empty() {
        return Analysis::failed("empty command");
    }
    let tokens = match lex(command) {
        Ok(t) => t,
        Err(reason) => return Analysis::failed(reason),
    };
    let mut chains: Vec<Vec<Vec<Word>>> = vec![vec![Vec::new()]];
    let mut operators = Vec::new();
    cache.1 += 1;
    for token in tokens {
        match token {
            Token::Word(w) => chains.last_mut().unwrap().last_mut().unwrap().push(w),
            Token::Heredoc => {}
            Token::Op(Op::Pipe) => {
                if chains.last().unwrap().last().unwrap().is_empty() {
                    return Analysis::failed("empty pipeline segment");
                }
                chains.last_mut().unwrap().push(Vec::new());
                cache.1 += 1;
            }
            Token::Op(op) => {
                let part = chains.last().unwrap();
                if part.len() == 1 && part[0].is_empty() {
                    return Analysis::failed(format!("unsupported shell token: {}", op.as_str()));
                }
                if part.last().unwrap().is_empty() {
                    return Analysis::failed("empty pipeline segment");
                }
                operators.push(op.as_str().to_string());
                chains.push(vec![Vec::new()]);
                cache.1 += 1;
            }
        }
        if cache.1 > MAX_SEGMENTS {
            return Analysis::failed_with_code(
                "too-many-commands",
                format!(
                    "the command has more than {MAX_SEGMENTS} simple commands; it is not analysed"
                ),
            );
        }
    }
    let last = chains.last().unwrap();
    if last.len() == 1 && last[0].is_empty() {
        return match operators.last() {
            // `a;` is a complete command in bash; `a &&` is not.
            Some(op) if op == ";" => {
                chains.pop();
                operators.pop();
                build(chains, operators, ctx, depth, cache, bash)
            }
            Some(op) => Analysis::failed(format!("unsupported shell token: {op}")),
            None => Analysis::failed("empty command"),
        };
    }
    if last.last().unwrap().is_empty() {
        return Analysis::failed("empty pipeline segment");
    }
    build(chains, operators, ctx, depth, cache, bash)
}

fn build(
    chains: Vec<Vec<Vec<Word>>>,
    operators: Vec<String>,
    ctx: &Context<'_>,
    depth: usize,
    cache: &mut Lookups,
    bash: bool,
) -> Analysis {
    // The directory each command runs in, followed through `cd`; `None` once it is not known.
    let mut here = Some(ctx.cwd.to_path_buf());
    let chains: Vec<Vec<Segment>> = chains
        .into_iter()
        .map(|pipeline| {
            let piped = pipeline.len() > 1;
            pipeline
                .into_iter()
                .enumerate()
                .map(|(n, words)| {
                    let place = Place {
                        piped,
                        first: n == 0,
                    };
                    segment(words, ctx, depth, &mut here, place, cache, bash)
                })
                .collect()
        })
        .collect();
    let mut chains = chains;
    mark_after_state_changes(&mut chains);
    let all: Vec<&Segment> = chains.iter().flatten().collect();
    if let Some(why) = compound_error(&all) {
        return Analysis::failed(format!("unsupported shell syntax: {why}"));
    }
    Analysis {
        ok: true,
        reason: None,
        code: None,
        chains,
        operators,
    }
}

impl Analysis {
    /// The environment the command gets from outside its own text (the model's `env` parameter):
    /// each pair counts as a prefix assignment of every simple command, inner `sh -c` ones included,
    /// so a name outside the harmless set (`RIPGREP_CONFIG_PATH`, `HOME`, `XDG_CONFIG_HOME`,
    /// `NODE_V8_COVERAGE`...) keeps the command from running unasked exactly as `NAME=v cmd` would.
    /// Such a name makes every segment inexact, as a prefix assignment does (see `segment`).
    pub fn with_environment(mut self, env: &[(String, String)]) -> Analysis {
        fn add(a: &mut Analysis, env: &[(String, String)]) {
            let harmful =
                super::env_names::first_harmful(env.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            for s in a.chains.iter_mut().flatten() {
                let mut assignments = env.to_vec();
                assignments.append(&mut s.assignments);
                s.assignments = assignments;
                if let Some(name) = harmful {
                    note(
                        &mut s.inexact,
                        format!("{name}=... in the command's environment may change what it runs"),
                    );
                }
                if let Some(inner) = s.inner.as_deref_mut() {
                    add(inner, env);
                }
            }
        }
        if !env.is_empty() {
            add(&mut self, env);
        }
        self
    }
}

impl Analysis {
    /// The locale the command will run in (see `env_names::reads_like_utf8`): where bash splits bytes
    /// into characters otherwise than the analysis did (BIG5, GBK, Shift_JIS...), no segment is seen
    /// exactly, inner `sh -c` ones included.
    pub fn in_locale(mut self, locale: Option<&str>) -> Analysis {
        fn mark(a: &mut Analysis, why: &str) {
            for s in a.chains.iter_mut().flatten() {
                note(&mut s.inexact, why.to_string());
                if let Some(inner) = s.inner.as_deref_mut() {
                    mark(inner, why);
                }
            }
        }
        if let Some(locale) = locale.filter(|l| !super::env_names::reads_like_utf8(l)) {
            let why = format!(
                "the command runs in the locale {locale}, where bash may read its bytes as other characters than the analysis did"
            );
            mark(&mut self, &why);
        }
        self
    }
}

/// Whether `word` reads as an array element's assignment (`NAME[..]=value`), which the analyzer does
/// not model.
fn array_assignment(word: &str) -> bool {
    word.contains("]=") && word.contains('[')
}

/// A command that changes the shell's state (a variable outside the harmless set, an array element,
/// `printf -v`, `read`, `declare`, `hash`, `alias`, `shopt`, `trap`, `source`, ...) changes how every
/// later word is looked up or run, so every segment after it is inexact: never auto-allowed, asked
/// where a deny rule exists. (Segments of a pipeline run in subshells; they are marked all the same.)
fn mark_after_state_changes(chains: &mut [Vec<Segment>]) {
    let mut changed: Option<String> = None;
    for s in chains.iter_mut().flatten() {
        if let Some(what) = &changed {
            note(
                &mut s.inexact,
                format!("{what} before it changes the shell's state, which the analyzer does not follow"),
            );
            continue;
        }
        changed = state_change(s);
    }
}

/// git obeys its configuration and hooks as they are when it runs, and the analyzer read them when
/// it analysed the line: another segment of the line that may write files (anything not known
/// read-only: `git log --output=.git/config`, `cp x .git/hooks/post-index-change`) can change them
/// first, so every git segment of a line that has one is inexact, inner `sh -c` scripts included
/// (a pipeline's peers run at once, and an inner shell's git runs after the outer writer). git's own
/// work on the index, objects and refs (`git add`, `git commit`...) writes no config or hook.
fn mark_git_in_lines_with_writers(a: &mut Analysis) {
    fn writers(a: &Analysis, out: &mut Vec<String>) {
        for s in a.chains.iter().flatten() {
            if may_change_git_settings(s) {
                out.push(s.effective_argv.join(" "));
            }
            if let Some(inner) = s.inner.as_deref() {
                writers(inner, out);
            }
        }
    }
    fn mark(a: &mut Analysis, writers: &[String]) {
        for s in a.chains.iter_mut().flatten() {
            let me = s.effective_argv.join(" ");
            if is_git(s) {
                if let Some(w) = writers.iter().find(|w| **w != me) {
                    note(
                        &mut s.inexact,
                        format!("`{w}` in the same line may change git's configuration or hooks after the analysis read them"),
                    );
                }
            }
            if let Some(inner) = s.inner.as_deref_mut() {
                mark(inner, writers);
            }
        }
    }
    let mut found = Vec::new();
    writers(a, &mut found);
    if !found.is_empty() {
        mark(a, &found);
    }
}

fn is_git(s: &Segment) -> bool {
    s.resolution.executable_name == "git"
        || s.effective_argv.first().map(String::as_str) == Some("git")
}

/// git subcommands that write the index, objects, refs or the work tree, never config or hooks
/// (with no option that writes a file of the caller's naming).
const GIT_WORK_ONLY: [&str; 22] = [
    "add",
    "commit",
    "rm",
    "mv",
    "status",
    "diff",
    "log",
    "show",
    "checkout",
    "switch",
    "restore",
    "reset",
    "stash",
    "branch",
    "tag",
    "merge",
    "rebase",
    "cherry-pick",
    "revert",
    "fetch",
    "pull",
    "push",
];

/// Whether segment `s` may write files that git obeys (anything not read-only, except git's own
/// index and work-tree commands).
fn may_change_git_settings(s: &Segment) -> bool {
    if s.effective_argv.is_empty() {
        return false;
    }
    if is_git(s) {
        let sub = s.effective_argv[1..].iter().find(|w| !w.starts_with('-'));
        let writes_named_file = s
            .effective_argv
            .iter()
            .any(|w| w.starts_with("--output") || w == "-o" || w.starts_with("--template"));
        return !sub.is_some_and(|c| GIT_WORK_ONLY.contains(&c.as_str())) || writes_named_file;
    }
    let offset = s.argv.len() - s.effective_argv.len();
    let expands = s.expands.get(offset..).unwrap_or(&[]);
    !super::readonly::judge(&s.effective_argv, expands).read_only
}

/// What in segment `s` changes the shell's state for the segments after it, if anything.
fn state_change(s: &Segment) -> Option<String> {
    let Some(first) = s.effective_argv.first() else {
        // An assignment-only segment sets shell variables; an array element is never harmless.
        let array = s.argv.iter().any(|w| array_assignment(w));
        if array {
            return Some("an array assignment".to_string());
        }
        return super::env_names::first_harmful(
            s.assignments.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        )
        .map(|n| format!("`{n}=...`"));
    };
    super::dispatch::changes_shell_state(basename(first), &s.effective_argv)
}

/// State shared by one analysis and its inner `sh -c` analyses: name lookups, so a long chain of
/// the same command stats `PATH` once (keyed by the name and a hash of the `PATH` it was looked
/// up with), and the number of simple commands seen so far, inner ones included.
#[derive(Default)]
struct Lookups(
    std::collections::HashMap<(String, u64), Option<PathBuf>>,
    usize,
);

impl Lookups {
    fn find(&mut self, name: &str, path: Option<&str>, cwd: &Path) -> Option<PathBuf> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        path.hash(&mut h);
        if name.contains('/') || path.is_some_and(|p| p.split(':').any(|d| !d.starts_with('/'))) {
            cwd.hash(&mut h);
        }
        let key = (name.to_string(), h.finish());
        self.0
            .entry(key)
            .or_insert_with(|| {
                resolve::lookup(name, path, cwd).and_then(|p| resolve::real_file(&p))
            })
            .clone()
    }
}

/// Bash expands an unquoted `~` or `~/...` at the start of a word to `$HOME` (the tilde prefix
/// ends at the first unquoted `/`; any quoted character in it stops the expansion).
fn expand_tilde(w: &Word, home: Option<&str>) -> String {
    let Some(home) = home else {
        return w.text.clone();
    };
    let slash = w.text.find('/').unwrap_or(w.text.len());
    let prefix_unquoted = w.first_quoted.is_none_or(|q| q > slash);
    if !prefix_unquoted || !w.text.starts_with('~') {
        return w.text.clone();
    }
    if w.text == "~" {
        home.to_string()
    } else if let Some(rest) = w.text.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else {
        w.text.clone()
    }
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// Where a simple command sits in its pipeline.
#[derive(Clone, Copy)]
struct Place {
    /// The pipeline has more than one command (each runs in a subshell).
    piped: bool,
    /// It is the pipeline's first command (where bash's `time` keyword may stand).
    first: bool,
}

/// Keep the first reason.
fn note(slot: &mut Option<String>, why: impl Into<String>) {
    if slot.is_none() {
        *slot = Some(why.into());
    }
}

fn segment(
    words: Vec<Word>,
    ctx: &Context<'_>,
    depth: usize,
    here: &mut Option<PathBuf>,
    place: Place,
    cache: &mut Lookups,
    bash: bool,
) -> Segment {
    let argv: Vec<String> = words.iter().map(|w| expand_tilde(w, ctx.home)).collect();
    let expands: Vec<bool> = words.iter().map(|w| w.has_glob).collect();
    let mut inexact = None;
    // `!` negates the status only; compound-command keywords are not modelled: the command after
    // them is still seen (deny rules see `rm` in `then rm`), but the whole is not exact.
    let mut i = 0;
    let mut keywords = Vec::new();
    while let Some(w) = words.get(i) {
        if w.first_quoted.is_some() {
            break;
        }
        if w.text == "!" {
            i += 1;
        } else if COMPOUND_KEYWORDS.contains(&w.text.as_str()) {
            keywords.push(w.text.clone());
            note(
                &mut inexact,
                format!(
                    "the shell keyword `{}` is part of a compound command, which the analyzer does not model",
                    w.text
                ),
            );
            i += match w.text.as_str() {
                // `function NAME`: the name is not a command.
                "function" => 2,
                // `for NAME in WORDS`, `select ...`, `case WORD in`: nothing here runs.
                "for" | "select" | "case" => words.len() - i,
                _ => 1,
            };
        } else {
            break;
        }
    }
    let keyword_words = i.min(words.len());
    let mut assignments: Vec<(String, String)> = Vec::new();
    while let Some(w) = words.get(i) {
        if let Some((name, value)) = w.assignment() {
            if name == "PATH" && value.contains('~') {
                note(
                    &mut inexact,
                    "PATH=... with a tilde, which bash expands in assignments",
                );
            }
            assignments.push((name.to_string(), value.to_string()));
            i += 1;
        } else if w.first_quoted.is_none() && array_assignment(&w.text) {
            note(
                &mut inexact,
                format!("the array assignment {} is not modelled", w.text),
            );
            i += 1;
        } else {
            break;
        }
    }
    let i = i.min(argv.len());
    let prefix_words = i;
    // A locale in which bash splits bytes otherwise (see `env_names::reads_like_utf8`): what this
    // segment runs (a `bash -c` script above all) is not what the analysis read.
    if let Some((name, value)) = assignments.iter().find(|(n, v)| {
        super::env_names::chooses_charset(n) && !super::env_names::reads_like_utf8(v)
    }) {
        note(
            &mut inexact,
            format!("{name}={value}: bash may read the command's bytes as other characters than the analysis did"),
        );
    }
    let assigns_only = i == argv.len();
    let mut wrappers = Vec::new();
    let mut blocked = None;
    let mut at = i;
    while let Some(first) = argv.get(at) {
        if expands[at] {
            note(
                &mut inexact,
                format!("{first} may expand to other words in command position"),
            );
            break;
        }
        let name = basename(first);
        if super::program_names::any_in(&super::program_names::names(first, ""), &BLOCKED_WRAPPERS)
        {
            blocked = Some(format!("{name} runs the command with other privileges or scheduling; it needs explicit approval"));
            break;
        }
        if !WRAPPERS.contains(&name) {
            break;
        }
        // `command`, `exec` and `builtin` are the shell's own: after env, nice or exec they are
        // looked up as programs (after the `time` keyword they are still the shell's). `time` is bash's keyword only first in the pipeline; elsewhere, and in
        // sh, it is the program /usr/bin/time.
        let shell_level = wrappers
            .iter()
            .all(|w: &String| matches!(w.as_str(), "command" | "builtin" | "time"));
        let own = matches!(name, "command" | "exec" | "builtin" | "time");
        if own && !shell_level
            || (name == "builtin" && !bash)
            || (name == "time"
                && (!bash || !place.first || !wrappers.is_empty() || !assignments.is_empty()))
            // A quoted or escaped `time` (`\time`, `'time'`) is no reserved word: bash runs the
            // program of that name, found on PATH.
            || (name == "time" && words.get(at).is_some_and(|w| w.quoted))
        {
            break;
        }
        match skip_wrapper(name, &argv[at + 1..], &mut assignments, &mut inexact) {
            Ok(Some(skipped)) => {
                wrappers.push(name.to_string());
                at += 1 + skipped;
            }
            // A wrapper with nothing after it runs as itself (`env` prints the environment).
            Ok(None) => break,
            Err(reason) => {
                blocked = Some(reason);
                break;
            }
        }
    }
    // A variable outside the harmless set, by prefix or by `env NAME=v` (values judged too, a
    // locale's included), can make the command run other code than its argv says: `BASH_ENV=./x
    // bash -c true` sources x, `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, `LESSOPEN`, `NODE_OPTIONS`,
    // `PYTHONPATH` run or load programs. The analysis cannot know what each program reads from its
    // environment, so the segment is inexact: every path asks, deny rules and `Bash(*)` included.
    // Alone on a segment it sets a shell variable the later commands may use.
    if let Some(name) =
        super::env_names::first_harmful(assignments.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    {
        note(
            &mut inexact,
            if assigns_only {
                format!("{name}=... sets a shell variable the commands after it may use")
            } else {
                format!("{name}=... may change what the command runs (only LANG, LC_*, TZ and similar are seen through)")
            },
        );
    }
    if let Some(w) = argv[i..at].iter().zip(&expands[i..at]).find(|(_, e)| **e) {
        note(
            &mut inexact,
            format!("{} may expand to other words in a wrapper's options", w.0),
        );
    }
    let effective_argv = argv[at..].to_vec();
    let raw = effective_argv.first().map(String::as_str).unwrap_or("");
    let name = basename(raw).to_string();
    let process_path;
    let path_var: Option<&str> = match assignments.iter().rev().find(|(n, _)| n == "PATH") {
        Some((_, v)) => Some(v.as_str()),
        None if ctx.path.is_some() => ctx.path,
        None => {
            process_path = std::env::var("PATH").ok();
            process_path.as_deref()
        }
    };
    let dir = here.clone();
    let local = Context {
        cwd: dir.as_deref().unwrap_or(ctx.cwd),
        path: ctx.path,
        home: ctx.home,
    };
    if dir.is_none() {
        let relative_path = path_var.is_some_and(|p| p.split(':').any(|d| !d.starts_with('/')));
        if (raw.contains('/') && !raw.starts_with('/')) || relative_path {
            note(
                &mut inexact,
                format!("after cd, {raw} is looked up in a directory the analyzer does not follow"),
            );
        }
        if name == "git" {
            note(
                &mut inexact,
                "after cd, git reads the configuration of a repository the analyzer did not check",
            );
        }
        if SHELLS.contains(&name.as_str()) {
            note(
                &mut inexact,
                "after cd, the script runs in a directory the analyzer does not follow",
            );
        }
    }
    if matches!(name.as_str(), "cd" | "pushd" | "popd") {
        // In a pipeline cd runs in a subshell; a wrapped or inexact cd is not followed.
        let followed = name == "cd" && !place.piped && wrappers.is_empty() && inexact.is_none();
        *here = match (followed, &dir) {
            (true, Some(d)) => cd_target(&effective_argv[1..], &expands[at + 1..], d, ctx.home),
            _ => None,
        };
    }
    let resolution = resolve_with(raw, &local, path_var, cache);
    // `/proc/self/exe` is bash to the bash that runs it, and node to the analyzer: a program named
    // through a process's own `/proc` entry (or a link to one) is not the file resolved here.
    if raw.contains('/') {
        if let Some(why) = through_proc(raw, local.cwd, ctx.home) {
            note(&mut inexact, why);
        }
    }
    // The program by every name it is known by (`rbash` is bash, `editor` is vim, `linux64` is
    // setarch): each list below is checked against all of them.
    let names = super::program_names::names(raw, &resolution.executable_name);
    if blocked.is_none() && names.iter().any(|n| BLOCKED_WRAPPERS.contains(&n.as_str())) {
        blocked = Some(format!(
            "{name} runs the command with other privileges or scheduling; it needs explicit approval"
        ));
    }
    let expanding = expands.get(at..).unwrap_or(&[]);
    let d = names
        .iter()
        .map(|n| dispatch(n, &effective_argv, expanding))
        .find(|d| d.inexact.is_some() || !d.runs.is_empty())
        .unwrap_or_default();
    if let Some(why) = d.inexact {
        note(&mut inexact, why);
    }
    let operands = effective_argv.get(1..).unwrap_or(&[]);
    if let Some(why) = evaluated_name(&name, operands, expands.get(at + 1..).unwrap_or(&[])) {
        note(&mut inexact, why);
    }
    if (name == "git" || resolution.executable_name == "git") && dir.is_some() {
        if let Some(why) = git_problem(&effective_argv[1..], &local) {
            note(&mut inexact, why);
        }
    }
    // Package managers, cargo and Maven read config files of the project that can name programs
    // and modules they then run (see `package_config`).
    let followed = dir.as_ref().map(|_| local.cwd);
    if let Some(why) = super::package_config::runs_from_config(&names, &name, followed, ctx.home) {
        note(&mut inexact, why);
    }
    // `python -m MODULE` looks in the current directory first: `./pip/__main__.py` ran as
    // `python3 -m pip list` under `Bash(python3 -m pip:*)`.
    if names
        .iter()
        .any(|n| n.starts_with("python") || n.starts_with("pypy"))
    {
        if let Some(why) = module_in_cwd(&effective_argv[1..], dir.as_deref()) {
            note(&mut inexact, why);
        }
    }
    let mut inner = None;
    let is_bash = names.iter().any(|n| n == "bash");
    let posix = matches!(name.as_str(), "sh" | "dash")
        && matches!(resolution.executable_name.as_str(), "sh" | "dash" | "bash");
    let is_shell = super::program_names::any_in(&names, &SHELLS);
    if blocked.is_none() && is_shell && !is_bash && !posix {
        note(
            &mut inexact,
            format!("{name}'s syntax is not modelled (only bash and sh scripts are analysed)"),
        );
    }
    if blocked.is_none() && is_shell {
        match shell_script(&effective_argv) {
            Some(script) if depth >= MAX_DEPTH => {
                let _ = script;
                blocked = Some("shell -c nesting is too deep".into());
            }
            Some(script) => {
                let inner_ctx = Context {
                    cwd: local.cwd,
                    path: path_var,
                    home: ctx.home,
                };
                let a = analyze_at(script, &inner_ctx, depth + 1, cache, is_bash);
                if !a.ok {
                    blocked = Some(format!(
                        "inner shell command: {}",
                        a.reason.clone().unwrap_or_default()
                    ));
                }
                inner = Some(Box::new(a));
            }
            None => note(
                &mut inexact,
                format!("{name} runs a script the analyzer does not read (only `{name} -c SCRIPT` is analysed)"),
            ),
        }
    }
    Segment {
        argv,
        expands,
        effective_argv,
        prefix_words,
        assignments,
        wrappers,
        resolution,
        inner,
        blocked,
        inexact,
        runs: d.runs,
        keywords,
        keyword_words,
        dir,
    }
}

/// Python's standard library, top level (`sys.stdlib_module_names` of 3.11, private ones left out):
/// a file or package of one of these names in the current directory is imported in its place by
/// `python -m` (`./argparse.py` ran in `python3 -m json.tool`).
const PYTHON_STDLIB: &[&str] = &[
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// Why `python ... -m MODULE` (the interpreter's arguments `args`) may run a module of the current
/// directory `dir` instead of the one installed, if it may: `MODULE`'s first part names a file or
/// directory there. Unknown after an untracked `cd`.
fn module_in_cwd(args: &[String], dir: Option<&Path>) -> Option<String> {
    let mut i = 0;
    let module = loop {
        let a = args.get(i)?;
        if a == "-m" {
            break args.get(i + 1)?.as_str();
        }
        if let Some(m) = a.strip_prefix("-m") {
            break m;
        }
        // The first word that is not an option is the script: no module.
        if !a.starts_with('-') || a == "-" || a == "--" || a == "-c" {
            return None;
        }
        // The options that take the next word as their value.
        i += if matches!(a.as_str(), "-W" | "-X") {
            2
        } else {
            1
        };
    };
    let first = module.split('.').next().unwrap_or(module);
    let Some(dir) = dir else {
        return Some(format!(
            "after cd, python -m {module} may find {first} in a directory the analyzer did not check"
        ));
    };
    if let Some(here) = [dir.join(format!("{first}.py")), dir.join(first)]
        .into_iter()
        .find(|p| std::fs::symlink_metadata(p).is_ok())
    {
        return Some(format!(
            "python -m {module} runs {} (the current directory comes first on its path)",
            here.display()
        ));
    }
    // Any module it imports is found there first too: the standard library's names are the ones
    // every module imports. (A directory that cannot be listed fails closed.)
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Some(format!(
            "python -m {module}: {} could not be listed, and its modules come first on the path",
            dir.display()
        ));
    };
    entries.flatten().find_map(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        // A module file, or a regular package (a directory without `__init__.py` is a namespace
        // portion, which the standard library's own module still wins over).
        let stem = match name.strip_suffix(".py") {
            Some(stem) => stem,
            None if e.path().join("__init__.py").exists() => &name,
            None => return None,
        };
        PYTHON_STDLIB.contains(&stem).then(|| {
            format!(
                "python -m {module} would import {} from the current directory in place of the standard library's {stem}",
                e.path().display()
            )
        })
    })
}

/// Where a compound command stands while its keywords are read in order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    IfCondition,
    IfBody,
    ElseBody,
    LoopCondition,
    LoopBody,
    Group,
}

/// Bash parses the whole line before it runs any of it, so a compound command that does not
/// close (or closes wrongly: `if x; fi`, `{ x`, `done y`) makes it run nothing at all. Such a
/// line is refused, so the analysis never claims commands that will not run.
fn compound_error(segments: &[&Segment]) -> Option<String> {
    let mut stack: Vec<Open> = Vec::new();
    for s in segments {
        let has_command = s.argv.len() > s.keyword_words;
        for (k, kw) in s.keywords.iter().enumerate() {
            let last = k + 1 == s.keywords.len();
            let top = stack.last().copied();
            let opens_list = matches!(
                kw.as_str(),
                "if" | "then" | "elif" | "else" | "while" | "until" | "do" | "{"
            );
            let next_closes = s.keywords.get(k + 1).is_some_and(|n| {
                matches!(
                    n.as_str(),
                    "fi" | "done" | "}" | "then" | "do" | "elif" | "else"
                )
            });
            if opens_list && ((last && !has_command) || next_closes) {
                return Some(format!("`{kw}` is not followed by a command"));
            }
            let ok = match kw.as_str() {
                "if" => {
                    stack.push(Open::IfCondition);
                    true
                }
                "then" => top == Some(Open::IfCondition) && replace(&mut stack, Open::IfBody),
                "elif" => top == Some(Open::IfBody) && replace(&mut stack, Open::IfCondition),
                "else" => top == Some(Open::IfBody) && replace(&mut stack, Open::ElseBody),
                "fi" => matches!(top, Some(Open::IfBody | Open::ElseBody)) && stack.pop().is_some(),
                "while" | "until" | "for" | "select" => {
                    stack.push(Open::LoopCondition);
                    true
                }
                "do" => top == Some(Open::LoopCondition) && replace(&mut stack, Open::LoopBody),
                "done" => top == Some(Open::LoopBody) && stack.pop().is_some(),
                "{" => {
                    stack.push(Open::Group);
                    true
                }
                "}" => top == Some(Open::Group) && stack.pop().is_some(),
                "function" | "coproc" | "[[" => true,
                _ => false,
            };
            if !ok {
                return Some(format!("`{kw}` out of place"));
            }
            if matches!(kw.as_str(), "fi" | "done" | "}") && last && has_command {
                return Some(format!("`{kw}` is followed by more words"));
            }
        }
    }
    (!stack.is_empty()).then(|| "a compound command is not closed".to_string())
}

fn replace(stack: &mut [Open], with: Open) -> bool {
    match stack.last_mut() {
        Some(top) => {
            *top = with;
            true
        }
        None => false,
    }
}

/// Where `cd ARGS` leaves bash, from `from`: bash's default `cd -L` removes `..` lexically from
/// the joined path, then the kernel follows its symlinks; that physical directory is returned.
/// `None` when the analysis cannot tell (options, `cd -`, an expanding word, a CDPATH the host
/// sets, a target that is not a searchable directory, where cd fails and the shell stays put).
fn cd_target(
    args: &[String],
    expands: &[bool],
    from: &Path,
    home: Option<&str>,
) -> Option<PathBuf> {
    if expands.iter().any(|e| *e) || args.len() > 1 {
        return None;
    }
    let target = match args.first() {
        None => PathBuf::from(home?),
        Some(a) if a.starts_with('-') || a.is_empty() => return None,
        Some(a) => {
            let relative_name = !a.starts_with('/') && !a.starts_with('.');
            if relative_name && std::env::var_os("CDPATH").is_some() {
                return None;
            }
            from.join(a)
        }
    };
    let mut logical = PathBuf::new();
    for c in target.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                logical.pop();
            }
            other => logical.push(other.as_os_str()),
        }
    }
    let searchable =
        std::fs::metadata(&logical).is_ok_and(|m| m.is_dir()) && searchable_dir(&logical);
    let real = searchable.then(|| resolve::real_file(&logical)).flatten()?;
    // Through a symbolic link, bash's working directory (logical: a later `cd ..` drops the last
    // name) and the directory's real path part ways, and the analyzer would follow the real one:
    // `cd lnk && cd .. && git diff` ran the config of a repository the analyzer never read. Not
    // followed, so what comes after asks where it depends on the directory.
    (real == logical).then_some(real)
}

/// Whether the user may search `dir` (execute permission on a directory).
#[cfg(unix)]
fn searchable_dir(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::X_OK).is_ok()
}

/// Windows has no execute bit on directories: a directory that can be listed can be searched.
#[cfg(not(unix))]
fn searchable_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok()
}

/// Why git, with these global options in this directory, may run a program its repository's or
/// user's configuration names (see `git_config`).
fn git_problem(args: &[String], ctx: &Context<'_>) -> Option<String> {
    let mut dir = ctx.cwd.to_path_buf();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if !a.starts_with('-') {
            break;
        }
        if a == "-C" {
            dir = dir.join(args.get(i + 1)?);
            i += 2;
            continue;
        }
        if ["--git-dir", "--work-tree", "--namespace"]
            .iter()
            .any(|o| a == o || a.starts_with(&format!("{o}=")))
        {
            return Some(format!(
                "git {a} reads a repository whose configuration the analyzer did not check"
            ));
        }
        i += 1;
    }
    let checked = super::git_config::check(&dir, ctx.home);
    if checked.runs.is_some() {
        return checked.runs;
    }
    // An alias runs what it names with these arguments after it, which are not judged as the
    // aliased command's (`git rx -x CMD` with `alias.rx = rebase`; `git p` with `alias.p = push`
    // under a deny rule on `git push`).
    let (_, sub) = super::command_options::subcommand("git", args)?;
    let sub = sub.to_lowercase();
    checked
        .aliases
        .contains(&sub)
        .then(|| format!("git {sub} is an alias: it runs the command it names with these arguments, which are not judged as that command's"))
}

/// `sh -c 'script'`: only a plain `-c` first option is recognised; every other way of starting a
/// shell (`bash -lc`, `bash -x -c`, `sh script.sh`, `sh` reading stdin) runs a script the analysis
/// does not read, and the caller marks it inexact.
fn shell_script(argv: &[String]) -> Option<&str> {
    argv.first()?;
    // `bash -c -- 'rm x'` and `sh -c -e 'rm x'` run the word after the options: only a script
    // right after `-c` that cannot be read as an option is taken.
    match argv.get(1).map(String::as_str) {
        Some("-c") => argv
            .get(2)
            .map(String::as_str)
            .filter(|s| !s.starts_with(['-', '+'])),
        _ => None,
    }
}

/// How many of `args` a transparent wrapper's own options take before the command, `None` if no
/// command follows (the wrapper runs as itself), or why the wrapper hides what runs.
/// `env NAME=value` words are added to `assignments`.
///
/// The wrappers' options are walked as their own getopt walks them (bundles, attached values,
/// abbreviated long options): skipping `-vu` as one flag would take `env -vu tr rm x` for `tr`,
/// while env unsets `tr` and runs `rm x`.
fn skip_wrapper(
    name: &str,
    args: &[String],
    assignments: &mut Vec<(String, String)>,
    inexact: &mut Option<String>,
) -> Result<Option<usize>, String> {
    if name == "busybox" || name == "toybox" {
        // The applet is the command; busybox's own options (--list, --help) run busybox itself.
        return Ok(args.first().filter(|a| !a.starts_with('-')).map(|_| 0));
    }
    let Some(spec) = wrapper_spec(name) else {
        return Ok(skip_wrapper_by_list(name, args));
    };
    let mut i = 0;
    // nice's obsolete `-NUM` / `--NUM` adjustment comes first.
    if name == "nice" {
        if let Some(a) = args.first() {
            let digits = a.strip_prefix("--").or_else(|| a.strip_prefix('-'));
            if digits.is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit())) {
                i = 1;
            }
        }
    }
    let parsed = getopt::parse(&args[i..], &spec, getopt::Mode::Posix)
        .map_err(|why| format!("{name}: {why}; it needs explicit approval"))?;
    for opt in parsed.opts() {
        match (name, opt.name.as_str()) {
            // The wrapper runs as itself and ignores the rest.
            (_, "--help" | "--version") => return Ok(None),
            // `command -v/-V` prints what a name is and runs nothing.
            ("command", "-v" | "-V") => return Ok(None),
            ("command", "-p") => note(
                inexact,
                "command -p looks the command up on a default PATH the analyzer does not model",
            ),
            ("exec", "-a") => {
                return Err("exec -a runs the command under another name; it needs explicit approval".into())
            }
            ("env", "-i" | "--ignore-environment" | "-S" | "--split-string" | "-a" | "--argv0") => {
                return Err(format!(
                    "env {} changes how the command is parsed or run; it needs explicit approval",
                    opt.spelled
                ))
            }
            ("env", "-C" | "--chdir") => note(
                inexact,
                "env --chdir runs the command in another directory, whose files and repository were not checked",
            ),
            // Without PATH, execvp looks the command up on the C library's default path
            // (`/bin:/usr/bin`), not the one the analyzer resolved it with: `env -u PATH rm` ran
            // /usr/bin/rm where PATH found an allowlisted `rm`.
            ("env", "-u" | "--unset") if opt.value.as_deref() == Some("PATH") => note(
                inexact,
                "env -u PATH looks the command up on the C library's default path, which the analyzer does not model",
            ),
            _ => {}
        }
    }
    // getopt stopped at the first operand (these wrappers' getopt strings start with `+`).
    let mut at = i + parsed
        .operands()
        .next()
        .map_or(args.len() - i, |(_, index)| index);
    if parsed.end_of_options.is_some() && parsed.operands().next().is_none() {
        at = args.len();
    }
    if name == "env" {
        while let Some((n, v)) = args.get(at).and_then(|a| a.split_once('=')) {
            assignments.push((n.to_string(), v.to_string()));
            at += 1;
        }
        let moves = parsed.has(&["-C", "--chdir"]);
        if moves && args.get(at).is_some_and(|c| c.contains('/')) {
            return Err(
                "env --chdir changes where a command named by a path is found; it needs explicit approval"
                    .into(),
            );
        }
    }
    if name == "timeout" {
        // The duration comes before the command.
        if args.get(at).is_none() {
            return Ok(None);
        }
        at += 1;
    }
    Ok((at < args.len()).then_some(at))
}

/// GNU coreutils' option tables for the wrappers (bash's `time` keyword takes `-p` only; bash's
/// builtins take short options only, with no abbreviations).
fn wrapper_spec(name: &str) -> Option<getopt::Spec> {
    let (short, long) = match name {
        "env" => (
            "+a:C:iS:u:v0",
            "argv0= chdir= ignore-environment null unset= split-string= block-signal=? \
             default-signal=? ignore-signal=? list-signal-handling debug help version",
        ),
        "nice" => ("+n:", "adjustment= help version"),
        "nohup" => ("+", "help version"),
        "stdbuf" => ("+i:o:e:", "input= output= error= help version"),
        "timeout" => (
            "+k:s:v",
            "foreground kill-after= preserve-status signal= verbose help version",
        ),
        "time" => ("+p", ""),
        "command" => ("+pvV", ""),
        "exec" => ("+cla:", ""),
        "builtin" => ("+", ""),
        _ => return None,
    };
    let builtin = matches!(name, "time" | "command" | "exec" | "builtin");
    Some(getopt::Spec {
        short,
        long,
        abbreviations: !builtin,
        permute: false,
    })
}

/// macOS wrappers (`caffeinate`, `sandbox-exec`, `arch`): options by a list of value flags.
fn skip_wrapper_by_list(name: &str, args: &[String]) -> Option<usize> {
    let takes_value: &[&str] = match name {
        "sandbox-exec" => &["-f", "-n", "-p", "-D"],
        "caffeinate" => &["-t", "-w"],
        _ => &[],
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        i += if takes_value.contains(&a.as_str()) {
            2
        } else {
            1
        };
    }
    (i < args.len()).then_some(i)
}

/// Resolve argv[0] with the context's PATH: `~` expanded, a name with `/` against cwd, a bare
/// name on PATH, then the file that really runs (symlinks and `..` followed physically).
pub fn resolve(raw: &str, ctx: &Context<'_>) -> Resolution {
    let path = ctx
        .path
        .map(str::to_string)
        .or_else(|| std::env::var("PATH").ok());
    resolve_with(raw, ctx, path.as_deref(), &mut Lookups::default())
}

/// Why the program path `raw` (with a `/`) may be a different file to the shell that runs it than
/// to the analyzer: on its way (links followed from `cwd`, one hop at a time) it goes through
/// `/proc`, whose `self`, `thread-self`, `<pid>`, `exe`, `cwd` and `fd` entries are the reading
/// process's own.
fn through_proc(raw: &str, cwd: &Path, home: Option<&str>) -> Option<String> {
    let expanded = match (raw.strip_prefix('~'), home) {
        (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => format!("{h}{rest}"),
        _ => raw.to_string(),
    };
    let why = || {
        Some(format!(
            "{raw} is named through /proc, whose entries are the running process's own (the shell's, not the analyzer's)"
        ))
    };
    let in_proc = |p: &Path| p.starts_with("/proc") || p.starts_with("/dev/fd");
    // Every link on the way, a component at a time and `..` taken physically, as the kernel walks
    // it (a directory link `cw -> /proc/self/cwd` is as much the process's own as the last one):
    // never resolved in the analyzer's process.
    match resolve::walk_links(&cwd.join(&expanded), in_proc) {
        resolve::LinkWalk::Hit => why(),
        resolve::LinkWalk::TooLong => Some(format!("{raw} is a chain of links too long to follow")),
        resolve::LinkWalk::End(_) => None,
    }
}

fn resolve_with(
    raw: &str,
    ctx: &Context<'_>,
    path_var: Option<&str>,
    cache: &mut Lookups,
) -> Resolution {
    let expanded = match (raw.strip_prefix('~'), ctx.home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => raw.to_string(),
    };
    let resolved = cache.find(&expanded, path_var, ctx.cwd);
    let executable_name = resolved
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| basename(raw).to_string());
    Resolution {
        raw_executable: raw.to_string(),
        resolved_path: resolved,
        executable_name,
        builtin: !raw.contains('/') && resolve::is_builtin(raw),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn ctx() -> Context<'static> {
        Context {
            cwd: Path::new("/"),
            path: Some("/usr/bin:/bin"),
            home: Some("/home/u"),
        }
    }

    #[test]
    fn shell_state_set_by_one_segment_makes_every_later_one_inexact() {
        let c = ctx();
        for cmd in [
            "BASH_CMDS[grep]=/bin/sh; grep -c 'touch F'",
            "PATH=/tmp; cat f",
            "HOME=/tmp; git status",
            "IFS=/; ls",
            "CDPATH=/tmp; ls",
            "printf -v PATH %s /x; cat f",
            "printf -vPATH %s /x && cat f",
            "declare PATH=/x; cat f",
            "hash -p /bin/sh cat; cat f",
            "export PATH=/x && ls",
            "read -r PATH; ls",
            "alias ls=rm; ls",
            "shopt -s expand_aliases; ls",
            "set -o posix; ls",
            "enable -n echo; echo x",
            "trap 'rm x' EXIT; ls",
            "source ./env.sh; ls",
            "unset PATH; ls",
            "X=1; echo a; ls",
        ] {
            let a = analyze(cmd, &c);
            assert!(a.ok, "{cmd}: {:?}", a.reason);
            let last = a.segments().last().unwrap();
            assert!(last.inexact.is_some(), "{cmd}: the last segment is exact");
        }
        for cmd in [
            "LANG=C; ls",
            "LC_ALL=C && ls",
            "cd /tmp && ls",
            "echo a; ls",
            "printf %s x; ls",
        ] {
            let a = analyze(cmd, &c);
            let last = a.segments().last().unwrap();
            assert!(last.inexact.is_none(), "{cmd}: {:?}", last.inexact);
        }
        // A builtin that runs a command: inexact, and what it runs is seen by deny rules.
        let a = analyze("jobs -x rm -f F", &c);
        let s = a.segments().next().unwrap();
        assert!(s.inexact.is_some());
        assert_eq!(
            s.runs,
            vec![vec!["rm".to_string(), "-f".into(), "F".into()]]
        );
    }

    #[test]
    fn chains_and_pipelines() {
        let a = analyze("ls -la && git status | head -n 1; echo done", &ctx());
        assert!(a.ok, "{a:?}");
        assert_eq!(a.operators, vec!["&&", ";"]);
        assert_eq!(a.chains.len(), 3);
        assert_eq!(a.chains[1].len(), 2);
        assert_eq!(a.chains[1][1].argv, vec!["head", "-n", "1"]);
        let ls = &a.chains[0][0].resolution;
        assert_eq!(ls.executable_name, "ls");
        assert!(ls.resolved_path.as_ref().unwrap().ends_with("ls"));
    }

    #[test]
    fn failures_carry_reasons() {
        let cases = [
            ("", "empty command"),
            ("   ", "empty command"),
            ("ls |", "empty pipeline segment"),
            ("| ls", "empty pipeline segment"),
            ("ls && ", "unsupported shell token: &&"),
            ("&& ls", "unsupported shell token: &&"),
            ("ls ;; pwd", "unsupported shell token: ;"),
            ("ls && rm -rf ~ &", "unsupported shell token: &"),
        ];
        for (cmd, reason) in cases {
            let a = analyze(cmd, &ctx());
            assert!(!a.ok, "{cmd}");
            assert_eq!(a.reason.as_deref(), Some(reason), "{cmd}");
        }
        assert!(analyze("ls;", &ctx()).ok);
    }

    #[test]
    fn wrappers_are_unwrapped_or_blocked() {
        let a = analyze("env FOO=1 nice -n 5 timeout -s KILL 10 nohup ls -l", &ctx());
        let s = &a.chains[0][0];
        assert_eq!(s.wrappers, vec!["env", "nice", "timeout", "nohup"]);
        assert_eq!(s.effective_argv, vec!["ls", "-l"]);
        assert_eq!(s.resolution.executable_name, "ls");
        assert!(s.blocked.is_none());
        for cmd in [
            "sudo ls",
            "doas ls",
            "setsid ls",
            "env -S 'ls -l'",
            "env -iu x ls",
            "env --ign ls",
            "env -a x ls",
            "env --spl 'ls -l'",
            "env -C /tmp ./x",
            "env --bogus ls",
            "time -o out ls",
            "nice sudo rm -rf /",
            "taskset 1 ls",
        ] {
            let s = &analyze(cmd, &ctx()).chains[0][0];
            assert!(s.blocked.is_some(), "{cmd}");
        }
        let s = &analyze("stdbuf -o L grep x", &ctx()).chains[0][0];
        assert_eq!(s.effective_argv, vec!["grep", "x"]);
        // Bundles, attached values and abbreviations are walked as getopt walks them: env unsets
        // `tr` and runs `rm`, not `tr rm x`.
        for (cmd, effective) in [
            ("env -vu tr rm x", vec!["rm", "x"]),
            ("env --un tr rm x", vec!["rm", "x"]),
            ("env --unset=tr rm x", vec!["rm", "x"]),
            ("env -utr A=1 rm x", vec!["rm", "x"]),
            ("env -- A=1 ls", vec!["ls"]),
            ("nice -10 ls", vec!["ls"]),
            ("nice -n5 ls", vec!["ls"]),
            ("nice --adj 5 ls", vec!["ls"]),
            ("timeout -vs KILL 5 ls", vec!["ls"]),
            ("timeout --sig=KILL 5 ls", vec!["ls"]),
            ("stdbuf -oL -eL ls", vec!["ls"]),
            ("time -p ls", vec!["ls"]),
            ("nohup -- ls", vec!["ls"]),
        ] {
            let s = &analyze(cmd, &ctx()).chains[0][0];
            assert!(s.blocked.is_none(), "{cmd}: {:?}", s.blocked);
            assert_eq!(s.effective_argv, effective, "{cmd}");
        }
        let s = &analyze("env --help rm x", &ctx()).chains[0][0];
        assert_eq!(s.effective_argv, vec!["env", "--help", "rm", "x"]);
        let s = &analyze("busybox ls -l", &ctx()).chains[0][0];
        assert_eq!(s.wrappers, vec!["busybox"]);
        assert_eq!(s.effective_argv, vec!["ls", "-l"]);
        let s = &analyze("busybox --list", &ctx()).chains[0][0];
        assert!(s.wrappers.is_empty());
    }

    #[test]
    fn shell_c_is_analysed_recursively() {
        let a = analyze("bash -c 'ls && rm -rf /tmp/x'", &ctx());
        let s = &a.chains[0][0];
        let inner = s.inner.as_ref().unwrap();
        assert!(inner.ok);
        assert_eq!(inner.chains.len(), 2);
        assert_eq!(inner.chains[1][0].argv, vec!["rm", "-rf", "/tmp/x"]);
        let bad = analyze("sh -c 'echo $(id)'", &ctx());
        assert!(bad.chains[0][0].blocked.as_ref().unwrap().contains("$()"));
        let deep = analyze("sh -c \"sh -c 'sh -c \\\"sh -c ls\\\"'\"", &ctx());
        fn depth_blocked(a: &Analysis) -> bool {
            a.segments().any(|s| {
                s.blocked.as_deref() == Some("shell -c nesting is too deep")
                    || s.inner.as_ref().is_some_and(|i| depth_blocked(i))
                    || s.blocked.as_ref().is_some_and(|b| b.contains("too deep"))
            })
        }
        assert!(depth_blocked(&deep), "{deep:#?}");
    }

    #[test]
    fn resolution_rules() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().to_str().unwrap();
        let c = Context {
            cwd: dir.path(),
            path: Some(bin.to_str().unwrap()),
            home: Some(home),
        };
        assert_eq!(
            resolve("tool", &c).resolved_path.as_deref(),
            Some(tool.as_path())
        );
        assert_eq!(
            resolve("./bin/tool", &c).resolved_path.as_deref(),
            Some(tool.as_path())
        );
        assert_eq!(
            resolve("bin/../bin/tool", &c).resolved_path.as_deref(),
            Some(tool.as_path())
        );
        assert_eq!(
            resolve("~/bin/tool", &c).resolved_path.as_deref(),
            Some(tool.as_path())
        );
        let missing = resolve("nope-xyz", &c);
        assert!(missing.resolved_path.is_none());
        assert_eq!(missing.executable_name, "nope-xyz");
        let a = analyze("~/bin/tool ~ '~' ~/x", &c);
        assert_eq!(
            a.chains[0][0].argv,
            vec![
                format!("{home}/bin/tool"),
                home.to_string(),
                "~".into(),
                format!("{home}/x")
            ]
        );
    }

    /// A variable outside the harmless set makes a program run other code than its argv says
    /// (`BASH_ENV=./rm.sh bash -c true` sources rm.sh): the segment itself is inexact, by prefix
    /// or by `env NAME=v`, values of the locale variables judged too.
    #[test]
    fn a_harmful_assignment_makes_its_segment_inexact() {
        for cmd in [
            "BASH_ENV=./rm.sh bash -c true",
            "env BASH_ENV=./rm.sh bash -c true",
            "nice env -u A BASH_ENV=./rm.sh timeout 5 bash -c true",
            "LESSOPEN='|./rm.sh %s' less f",
            "NODE_OPTIONS=--require=./x.js node a.js",
            "PYTHONPATH=. python3 a.py",
            "GIT_DIR=/tmp/x git status",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=./x git log",
            "GIT_CONFIG_PARAMETERS=\"'core.pager'='./x'\" git log",
            "GIT_EXTERNAL_DIFF=./x git diff",
            "GIT_SSH_COMMAND=./x git fetch",
            "GIT_ALLOW_PROTOCOL=ext git fetch",
            "LC_ALL=zh_TW.BIG5 ls",
            "X=1 ls",
        ] {
            let a = analyze(cmd, &ctx());
            let s = a.segments().next().unwrap();
            assert!(s.inexact.is_some(), "{cmd}: {s:?}");
        }
        for cmd in ["LANG=C ls", "env TZ=UTC LC_ALL=C.UTF-8 ls", "TERM=dumb ls"] {
            let a = analyze(cmd, &ctx());
            let s = a.segments().next().unwrap();
            assert!(s.inexact.is_none(), "{cmd}: {:?}", s.inexact);
        }
    }

    #[test]
    fn keywords_assignments_and_builtin_wrappers_are_seen_through() {
        let seg = |cmd: &str, n: usize| analyze(cmd, &ctx()).segments().nth(n).unwrap().clone();
        for (cmd, n, effective, exact) in [
            ("! rm x", 0, vec!["rm", "x"], true),
            ("X=1 Y+=2 rm x", 0, vec!["rm", "x"], false),
            ("LANG=C TZ=UTC rm x", 0, vec!["rm", "x"], true),
            ("command rm x", 0, vec!["rm", "x"], true),
            ("command -- rm x", 0, vec!["rm", "x"], true),
            ("exec rm x", 0, vec!["rm", "x"], true),
            ("builtin command rm x", 0, vec!["rm", "x"], true),
            ("{ rm x; }", 0, vec!["rm", "x"], false),
            ("if true; then rm x; fi", 1, vec!["rm", "x"], false),
            ("while rm x; do :; done", 0, vec!["rm", "x"], false),
            ("function f { rm x; }", 0, vec!["rm", "x"], false),
            ("eval rm x", 0, vec!["eval", "rm", "x"], false),
            ("builtin eval rm x", 0, vec!["eval", "rm", "x"], false),
            ("{rm,-f,x}", 0, vec!["{rm,-f,x}"], false),
            ("bash -lc 'rm x'", 0, vec!["bash", "-lc", "rm x"], false),
            ("echo rm x | sh", 1, vec!["sh"], false),
            ("xargs rm", 0, vec!["xargs", "rm"], false),
            ("export PATH=/tmp", 0, vec!["export", "PATH=/tmp"], false),
        ] {
            let s = seg(cmd, n);
            assert_eq!(s.effective_argv, effective, "{cmd}");
            assert_eq!(
                s.inexact.is_none() && s.blocked.is_none(),
                exact,
                "{cmd}: {:?}",
                s.inexact
            );
        }
        assert_eq!(
            seg("X=1 rm x", 0).assignments,
            vec![("X".into(), "1".into())]
        );
        assert_eq!(
            seg("env -u A B=2 rm x", 0).assignments,
            vec![("B".into(), "2".into())]
        );
        assert!(seg("'X=1' rm", 0).assignments.is_empty());
        assert!(seg("exec -a ls rm x", 0).blocked.is_some());
        assert_eq!(
            seg("xargs -n1 rm -f", 0).runs,
            vec![vec!["rm".to_string(), "-f".into()]]
        );
        assert!(
            seg("PATH=/tmp; ls", 0).inexact.is_some(),
            "a bare PATH assignment"
        );
        assert!(seg("LANG=C; ls", 0).inexact.is_none());
    }

    /// Found by the differential harness against bash (differential_bash.rs).
    #[test]
    fn shell_builtins_keywords_and_tildes_as_bash_reads_them() {
        let eff = |cmd: &str, n: usize| {
            analyze(cmd, &ctx())
                .segments()
                .nth(n)
                .unwrap()
                .effective_argv
                .clone()
        };
        // After env, nice or exec, `command`/`builtin`/`exec` are looked up as programs.
        assert_eq!(eff("env command ls", 0), vec!["command", "ls"]);
        assert_eq!(eff("exec command ls", 0), vec!["command", "ls"]);
        assert_eq!(eff("command exec ls", 0), vec!["ls"]);
        // `time` is a keyword only first in a pipeline, and only in bash.
        assert_eq!(eff("A=1 time ls", 0), vec!["time", "ls"]);
        assert_eq!(eff("\\time ls", 0), vec!["time", "ls"]);
        assert_eq!(eff("'time' -p ls", 0), vec!["time", "-p", "ls"]);
        assert_eq!(eff("time ls", 0), vec!["ls"]);
        assert_eq!(eff("command time ls", 0), vec!["time", "ls"]);
        let inner = analyze("sh -c 'builtin command ls; time ls'", &ctx());
        let inner = inner.chains[0][0].inner.as_ref().unwrap();
        assert_eq!(
            inner.chains[0][0].effective_argv,
            vec!["builtin", "command", "ls"]
        );
        assert_eq!(inner.chains[1][0].effective_argv, vec!["time", "ls"]);
        assert!(
            inner.chains[1][0].inexact.is_some(),
            "the time program runs other commands"
        );
        // A quoted character in the tilde prefix stops tilde expansion.
        assert_eq!(
            analyze("ls ~\"\" ~/\"x\"", &ctx()).chains[0][0].argv,
            vec!["ls", "~", "/home/u/x"]
        );
        // A compound command that does not close makes bash run nothing: refused.
        for bad in [
            "if true; fi",
            "{ ls",
            "ls; }",
            "while true; do ls",
            "if true; then fi",
            "{ ls; } x",
            "done",
            "for i in 1; ls; done",
        ] {
            let a = analyze(bad, &ctx());
            assert!(!a.ok, "{bad}");
            assert!(
                a.reason.unwrap().starts_with("unsupported shell syntax"),
                "{bad}"
            );
        }
        for good in [
            "if true; then ls; elif false; then ls; else ls; fi",
            "{ { ls; } }",
            "while false; do ls; done",
            "for i in 1; do ls; done",
            "! { ls; }",
        ] {
            assert!(analyze(good, &ctx()).ok, "{good}");
        }
    }

    #[test]
    fn the_file_that_runs_uses_the_commands_path_and_follows_symlinks() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("bin")).unwrap();
        let touch = crate::spawn::shell::find_executable("touch", Some("/usr/bin:/bin"))
            .expect("touch is in /usr/bin or /bin on every Unix this runs on");
        let touch = std::fs::canonicalize(touch).unwrap();
        symlink(&touch, root.join("bin/cat")).unwrap();
        symlink(&touch, root.join("cat")).unwrap();
        let c = Context {
            cwd: &root,
            path: Some("/usr/bin:/bin"),
            home: None,
        };
        let a = analyze("PATH=bin:/usr/bin cat x && ./cat y && bin/../cat z", &c);
        let found: Vec<_> = a
            .segments()
            .map(|s| s.resolution.resolved_path.clone())
            .collect();
        assert_eq!(found, vec![Some(touch.clone()); 3]);
        assert_eq!(
            a.chains[0][0].resolution.executable_name,
            touch.file_name().unwrap().to_string_lossy()
        );
        // cd is followed as bash follows it (`cd -L`: `..` lexically, then symlinks).
        let followed = analyze("cd bin && ./cat x && cd .. && ./cat y", &c);
        let segs: Vec<_> = followed.segments().collect();
        assert!(segs.iter().all(|s| s.inexact.is_none()), "{segs:#?}");
        assert_eq!(segs[1].resolution.resolved_path, Some(touch.clone()));
        assert_eq!(segs[3].resolution.resolved_path, Some(touch.clone()));
        // A cd the analysis cannot follow leaves relative names and git unknown.
        for cmd in [
            "cd - && ./cat x",
            "cd nowhere && ./cat x",
            "cd bin | ./cat x; ./cat y",
            "cd *n && git status",
        ] {
            let a = analyze(cmd, &c);
            let last = a.segments().last().unwrap();
            assert!(
                last.inexact
                    .as_deref()
                    .unwrap_or("")
                    .starts_with("after cd"),
                "{cmd}: {last:?}"
            );
        }
        assert!(analyze("cd bin && ls", &c).chains[1][0].inexact.is_none());
        // Through a symbolic link, bash's `cd ..` goes back up the link's name, the real path's
        // parent is elsewhere: not followed.
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir(elsewhere.path().join("d")).unwrap();
        symlink(elsewhere.path().join("d"), root.join("lnk")).unwrap();
        let a = analyze("cd lnk && cd .. && git diff", &c);
        let last = a.segments().last().unwrap();
        assert!(
            last.inexact
                .as_deref()
                .unwrap_or("")
                .starts_with("after cd"),
            "{last:?}"
        );
    }

    /// bash evaluates a subscripted variable name given to its `test -v`, `printf -v` or
    #[test]
    fn a_locale_bash_reads_otherwise_makes_every_segment_inexact() {
        let c = Context {
            cwd: Path::new("/"),
            path: Some("/usr/bin:/bin"),
            home: None,
        };
        let cmd = "echo hi; sh -c 'ls'";
        for (locale, exact) in [
            (None, true),
            (Some("C.UTF-8"), true),
            (Some("C"), true),
            (Some("zh_TW.BIG5"), false),
            (Some("ja_JP.SJIS"), false),
        ] {
            let a = analyze(cmd, &c).in_locale(locale);
            assert_eq!(a.first_inexact().is_none(), exact, "{locale:?}");
            if !exact {
                assert!(a.segments().all(|s| s.inexact.is_some()));
                let inner = a.segments().nth(1).unwrap().inner.as_deref().unwrap();
                assert!(inner.segments().all(|s| s.inexact.is_some()));
            }
        }
        // Set by the command itself, on a segment: that segment is inexact.
        let a = analyze("LC_ALL=zh_TW.BIG5 bash -c 'echo hi'", &c);
        assert!(a.segments().next().unwrap().inexact.is_some());
        assert!(analyze("LC_ALL=C.UTF-8 bash -c 'echo hi'", &c)
            .first_inexact()
            .is_none());
    }

    #[test]
    fn git_after_a_segment_that_may_write_files_is_inexact() {
        let dir = tempfile::tempdir().unwrap();
        let git_init = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status();
        if !git_init.is_ok_and(|s| s.success()) {
            return;
        }
        let c = Context {
            cwd: dir.path(),
            path: Some("/usr/bin:/bin"),
            home: None,
        };
        for cmd in [
            "git log -1 --format=x --output=.git/config && git status",
            "cp /tmp/x .git/hooks/post-index-change && git status",
            "touch a; git diff",
            "cp a b | git status",
            // A later pipeline peer runs at once; an inner shell's git after the outer writer.
            "git status | cp a .git/hooks/post-index-change",
            "cp /tmp/x .git/hooks/post-index-change && sh -c 'git status'",
            "cp /tmp/x .git/hooks/post-index-change && bash -c 'echo; git status'",
            "git config core.fsmonitor x && git status",
        ] {
            let a = analyze(cmd, &c);
            let mut gits = Vec::new();
            for s in a.segments() {
                gits.push(s);
                if let Some(inner) = s.inner.as_deref() {
                    gits.extend(inner.segments());
                }
            }
            gits.retain(|s| is_git(s));
            // The git the writer can change: the last one of the line (a pipeline's status too).
            let judged = if cmd.starts_with("git status |") {
                gits.first()
            } else {
                gits.last()
            };
            assert!(
                judged.is_some_and(|s| s.inexact.is_some()),
                "{cmd}: git is exact"
            );
        }
        // Read-only segments beside git, and git's own index work, leave git exact.
        for cmd in [
            "ls && git status",
            "cat f | git status",
            "git add -A && git commit -m x && git status",
        ] {
            let a = analyze(cmd, &c);
            for git in a.segments().filter(|s| is_git(s)) {
                assert!(git.inexact.is_none(), "{cmd}: {:?}", git.inexact);
            }
        }
    }

    /// `wait -p`, `$(...)` and backticks included: the segment itself is inexact, wherever it
    /// stands and however the option is spelled (found by an outside tester; the forms bash runs
    /// are checked against bash in differential_bash.rs).
    #[test]
    fn a_variable_name_bash_evaluates_makes_the_segment_itself_inexact() {
        let c = ctx();
        for (cmd, n) in [
            ("test -v 'a[$(touch /tmp/C)]'", 0),
            ("[ -v 'a[$(touch /tmp/C)]' ]", 0),
            ("test ! -v 'a[$(touch /tmp/C)]'", 0),
            ("test -n x -a -v 'a[$(touch /tmp/C)]'", 0),
            ("test x = y -o -v 'a[$(touch /tmp/C)]'", 0),
            ("test \\( -v 'a[$(touch /tmp/C)]' \\)", 0),
            ("test -v 'a[`touch /tmp/C`]'", 0),
            ("test -v 'BASH_ALIASES[$(touch /tmp/C)]'", 0),
            ("test -R 'a[$(touch /tmp/C)]'", 0),
            ("test -v *", 0),
            ("test -v 'a[$(touch /tmp/C)]' | cat", 0),
            ("echo hi; test -v 'a[$(touch /tmp/C)]'", 1),
            ("command test -v 'a[$(touch /tmp/C)]'", 0),
            ("builtin [ -v 'a[$(touch /tmp/C)]' ]", 0),
            ("time test -v 'a[$(touch /tmp/C)]'", 0),
            ("! test -v 'a[$(touch /tmp/C)]'", 0),
            ("printf -v 'a[$(touch /tmp/C)]' x", 0),
            ("printf -v'a[$(touch /tmp/C)]' x", 0),
            ("printf -v 'BASH_ALIASES[$(touch /tmp/C)]' x", 0),
            ("printf -v x -v 'a[$(touch /tmp/C)]' y", 0),
            ("printf -vx -v'a[`touch /tmp/C`]' y", 0),
            ("printf * x", 0),
            ("printf -v * x", 0),
            ("echo hi; printf -v 'a[$(touch /tmp/C)]' x | cat", 1),
            ("wait -n -p 'a[$(touch /tmp/C)]'", 0),
            ("wait -np 'a[$(touch /tmp/C)]'", 0),
            ("wait -p'a[$(touch /tmp/C)]' 1", 0),
            ("wait -p x -p 'a[$(touch /tmp/C)]'", 0),
        ] {
            let a = analyze(cmd, &c);
            assert!(a.ok, "{cmd}: {:?}", a.reason);
            let s = a.segments().nth(n).unwrap();
            assert!(s.inexact.is_some(), "{cmd}: segment {n} is exact");
        }
        // bash runs the subscript of an inner script's name too.
        let a = analyze("sh -c \"test -v 'a[\\$(touch /tmp/C)]'\"", &c);
        assert!(a.first_inexact().is_some());
        // Plain names, and operands bash reads as plain integers or strings, stay exact.
        for cmd in [
            "test -v HOME",
            "test -n x -a -v _x1",
            "test 'a[$(touch /tmp/C)]' -eq 1",
            "test -z 'a[$(touch /tmp/C)]'",
            "printf -v x %s y",
            "printf -vx %s y",
            "printf %d 'a[$(touch /tmp/C)]'",
            "printf '%s\\n' *",
            "printf -- -v 'a[$(touch /tmp/C)]'",
            "wait -n",
            "wait 'a[$(touch /tmp/C)]'",
            "wait -p x",
        ] {
            let a = analyze(cmd, &c);
            let s = a.segments().next().unwrap();
            assert!(s.inexact.is_none(), "{cmd}: {:?}", s.inexact);
        }
        // `wait -p NAME` assigns NAME, as `printf -v` does: what follows is not exact.
        let a = analyze("wait -n -p PATH; ls", &c);
        assert!(a.segments().nth(1).unwrap().inexact.is_some());
    }

    #[test]
    fn oversized_commands_fail_with_a_code() {
        let big = "ls; ".repeat(MAX_SEGMENTS + 1);
        let a = analyze(&big, &ctx());
        assert_eq!(a.code, Some("too-many-commands"));
        let huge = format!("echo {}", "a".repeat(MAX_COMMAND_BYTES));
        let a = analyze(&huge, &ctx());
        assert_eq!(a.code, Some("command-too-large"));
        assert!(a.reason.unwrap().contains("bytes"));
    }
}

#[cfg(test)]
mod timing {
    /// Where analysis time goes on a large command (run with --ignored --nocapture in release).
    #[test]
    #[ignore]
    fn profile_large_commands() {
        let ctx = super::Context {
            cwd: std::path::Path::new("/"),
            path: std::env::var("PATH")
                .ok()
                .as_deref()
                .map(|p| Box::leak(p.to_string().into_boxed_str()) as &str),
            home: Some(crate::approval::TEST_HOME),
        };
        let unit = "env LANG=C nice -n 5 timeout 5 sh -c 'ls -la && cat x' ; ";
        let cmd = format!("{}true", unit.repeat(65536 / unit.len()));
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let toks = super::lex(&cmd).unwrap();
            let lexed = t.elapsed();
            let a = super::analyze(&cmd, &ctx);
            let all = t.elapsed();
            let t2 = std::time::Instant::now();
            let c = super::super::classify::classify(&cmd, &ctx);
            let classified = t2.elapsed();
            let t3 = std::time::Instant::now();
            let rules = super::super::rules::RuleSet {
                deny: vec![super::super::rules::Rule::parse("Bash(rm:*)").unwrap()],
                ask: vec![],
                allow: vec![super::super::rules::Rule::parse("Bash(cat:*)").unwrap()],
            };
            let d = rules.decide(&a);
            let s = super::super::rules::suggest_rules(&a);
            println!(
                "lex {lexed:?} ({} tokens), lex+analyze {all:?}, classify {classified:?}, rules+suggest {:?} ok={} {:?} {}",
                toks.len(),
                t3.elapsed(),
                a.ok && c.parsed,
                d.verdict,
                s.len()
            );
        }
    }
}
