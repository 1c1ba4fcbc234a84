//! `analyzeCommand`: a command string becomes chains of pipelines of simple commands, each with its
//! argv, the wrappers around the real program, and the program's resolved path. Anything the lexer
//! cannot vouch for makes the analysis fail with a reason.

use std::path::{Path, PathBuf};

use super::getopt;
use super::lexer::{lex, Op, Token};

/// How the program of a segment was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// argv[0] of the effective command as written.
    pub raw_executable: String,
    /// The executable file it names, when there is one.
    pub resolved_path: Option<PathBuf>,
    /// Basename of the resolved path, else of the raw name.
    pub executable_name: String,
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The words as the shell will pass them.
    pub argv: Vec<String>,
    /// Parallel to `argv`: whether bash may expand the word into other or several words
    /// (unquoted glob characters or braces), so the argv above is not exact.
    pub expands: Vec<bool>,
    /// The command left after transparent wrappers (`env`, `nice`, `timeout`, ...) were removed.
    pub effective_argv: Vec<String>,
    /// The wrappers removed, outermost first.
    pub wrappers: Vec<String>,
    pub resolution: Resolution,
    /// For `sh -c "a && b"`: the inner command's analysis.
    pub inner: Option<Box<Analysis>>,
    /// Why this segment cannot be approved by allowlist (blocked wrapper, inner failure, ...).
    pub blocked: Option<String>,
}

/// The whole command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    pub ok: bool,
    pub reason: Option<String>,
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
            chains: Vec::new(),
            operators: Vec::new(),
        }
    }

    pub fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.chains.iter().flatten()
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
/// `busybox ls` and `toybox ls` run the applet named by their first argument.
#[cfg(not(target_os = "macos"))]
const WRAPPERS: [&str; 8] = [
    "env", "nice", "nohup", "stdbuf", "timeout", "time", "busybox", "toybox",
];
/// macOS adds its own: `caffeinate`, `sandbox-exec` (profile flags first) and `arch`.
#[cfg(target_os = "macos")]
const WRAPPERS: [&str; 11] = [
    "env",
    "nice",
    "nohup",
    "stdbuf",
    "timeout",
    "time",
    "busybox",
    "toybox",
    "caffeinate",
    "sandbox-exec",
    "arch",
];
/// Wrappers that change who or how a command runs: fail closed.
const BLOCKED_WRAPPERS: [&str; 6] = ["chrt", "doas", "ionice", "setsid", "sudo", "taskset"];
/// Shells whose `-c` script is analysed recursively.
const SHELLS: [&str; 7] = ["sh", "bash", "zsh", "dash", "ksh", "fish", "ash"];
const MAX_DEPTH: usize = 3;

pub fn analyze(command: &str, ctx: &Context<'_>) -> Analysis {
    analyze_at(command, ctx, 0)
}

fn analyze_at(command: &str, ctx: &Context<'_>, depth: usize) -> Analysis {
    if command.trim().is_empty() {
        return Analysis::failed("empty command");
    }
    let tokens = match lex(command) {
        Ok(t) => t,
        Err(reason) => return Analysis::failed(reason),
    };
    let mut chains: Vec<Vec<Vec<String>>> = vec![vec![Vec::new()]];
    let mut quoted_flags: Vec<Vec<Vec<bool>>> = vec![vec![Vec::new()]];
    let mut expand_flags: Vec<Vec<Vec<bool>>> = vec![vec![Vec::new()]];
    let mut operators = Vec::new();
    for token in tokens {
        match token {
            Token::Word(w) => {
                chains.last_mut().unwrap().last_mut().unwrap().push(w.text);
                quoted_flags
                    .last_mut()
                    .unwrap()
                    .last_mut()
                    .unwrap()
                    .push(w.quoted);
                expand_flags
                    .last_mut()
                    .unwrap()
                    .last_mut()
                    .unwrap()
                    .push(w.has_glob);
            }
            Token::Heredoc => {}
            Token::Op(Op::Pipe) => {
                if chains.last().unwrap().last().unwrap().is_empty() {
                    return Analysis::failed("empty pipeline segment");
                }
                chains.last_mut().unwrap().push(Vec::new());
                quoted_flags.last_mut().unwrap().push(Vec::new());
                expand_flags.last_mut().unwrap().push(Vec::new());
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
                quoted_flags.push(vec![Vec::new()]);
                expand_flags.push(vec![Vec::new()]);
            }
        }
    }
    let last = chains.last().unwrap();
    if last.len() == 1 && last[0].is_empty() {
        return match operators.last() {
            // `a;` is a complete command in bash; `a &&` is not.
            Some(op) if op == ";" => {
                chains.pop();
                quoted_flags.pop();
                expand_flags.pop();
                operators.pop();
                build(chains, quoted_flags, expand_flags, operators, ctx, depth)
            }
            Some(op) => Analysis::failed(format!("unsupported shell token: {op}")),
            None => Analysis::failed("empty command"),
        };
    }
    if last.last().unwrap().is_empty() {
        return Analysis::failed("empty pipeline segment");
    }
    build(chains, quoted_flags, expand_flags, operators, ctx, depth)
}

fn build(
    chains: Vec<Vec<Vec<String>>>,
    quoted: Vec<Vec<Vec<bool>>>,
    expands: Vec<Vec<Vec<bool>>>,
    operators: Vec<String>,
    ctx: &Context<'_>,
    depth: usize,
) -> Analysis {
    let chains = chains
        .into_iter()
        .zip(quoted)
        .zip(expands)
        .map(|((pipeline, q), e)| {
            pipeline
                .into_iter()
                .zip(q)
                .zip(e)
                .map(|((words, q), e)| segment(expand_tildes(words, &q, ctx.home), e, ctx, depth))
                .collect()
        })
        .collect();
    Analysis {
        ok: true,
        reason: None,
        chains,
        operators,
    }
}

/// Bash expands an unquoted `~` or `~/...` at the start of a word to `$HOME`.
fn expand_tildes(words: Vec<String>, quoted: &[bool], home: Option<&str>) -> Vec<String> {
    let Some(home) = home else { return words };
    words
        .into_iter()
        .zip(quoted)
        .map(|(w, &q)| {
            if q {
                w
            } else if w == "~" {
                home.to_string()
            } else if let Some(rest) = w.strip_prefix("~/") {
                format!("{home}/{rest}")
            } else {
                w
            }
        })
        .collect()
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn segment(argv: Vec<String>, expands: Vec<bool>, ctx: &Context<'_>, depth: usize) -> Segment {
    let mut wrappers = Vec::new();
    let mut blocked = None;
    let mut effective: &[String] = &argv;
    while let Some(first) = effective.first() {
        let name = basename(first);
        if BLOCKED_WRAPPERS.contains(&name) {
            blocked = Some(format!("{name} runs the command with other privileges or scheduling; it needs explicit approval"));
            break;
        }
        if !WRAPPERS.contains(&name) {
            break;
        }
        match skip_wrapper(name, &effective[1..]) {
            Ok(Some(rest)) => {
                wrappers.push(name.to_string());
                effective = rest;
            }
            // A wrapper with nothing after it runs as itself (`env` prints the environment).
            Ok(None) => break,
            Err(reason) => {
                blocked = Some(reason);
                break;
            }
        }
    }
    let effective_argv = effective.to_vec();
    let resolution = resolve(
        effective_argv.first().map(String::as_str).unwrap_or(""),
        ctx,
    );
    let mut inner = None;
    if blocked.is_none() {
        if let Some(script) = shell_script(&effective_argv) {
            if depth >= MAX_DEPTH {
                blocked = Some("shell -c nesting is too deep".into());
            } else {
                let a = analyze_at(script, ctx, depth + 1);
                if !a.ok {
                    blocked = Some(format!(
                        "inner shell command: {}",
                        a.reason.clone().unwrap_or_default()
                    ));
                }
                inner = Some(Box::new(a));
            }
        }
    }
    Segment {
        argv,
        expands,
        effective_argv,
        wrappers,
        resolution,
        inner,
        blocked,
    }
}

/// `sh -c 'script'` (also `bash -lc`? no: only a plain `-c` first option is recognised).
fn shell_script(argv: &[String]) -> Option<&str> {
    let name = basename(argv.first()?);
    if !SHELLS.contains(&name) {
        return None;
    }
    match argv.get(1).map(String::as_str) {
        Some("-c") => argv.get(2).map(String::as_str),
        _ => None,
    }
}

/// The command after a transparent wrapper's own options, `None` if there is none, or why the
/// wrapper hides what runs.
///
/// The wrappers' options are walked as their own getopt walks them (bundles, attached values,
/// abbreviated long options): skipping `-vu` as one flag would take `env -vu tr rm x` for `tr`,
/// while env unsets `tr` and runs `rm x`.
fn skip_wrapper<'a>(name: &str, args: &'a [String]) -> Result<Option<&'a [String]>, String> {
    if name == "busybox" || name == "toybox" {
        // The applet is the command; busybox's own options (--list, --help) run busybox itself.
        return Ok(args.first().filter(|a| !a.starts_with('-')).map(|_| args));
    }
    let Some(spec) = wrapper_spec(name) else {
        return skip_wrapper_by_list(name, args);
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
            ("env", "-i" | "--ignore-environment" | "-S" | "--split-string" | "-a" | "--argv0") => {
                return Err(format!(
                    "env {} changes how the command is parsed or run; it needs explicit approval",
                    opt.spelled
                ))
            }
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
        while args.get(at).is_some_and(|a| a.contains('=')) {
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
    Ok((at < args.len()).then(|| &args[at..]))
}

/// GNU coreutils' option tables for the wrappers (bash's `time` keyword takes `-p` only).
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
        _ => return None,
    };
    Some(getopt::Spec {
        short,
        long,
        abbreviations: true,
        permute: false,
    })
}

/// macOS wrappers (`caffeinate`, `sandbox-exec`, `arch`): options by a list of value flags.
fn skip_wrapper_by_list<'a>(
    name: &str,
    args: &'a [String],
) -> Result<Option<&'a [String]>, String> {
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
    Ok((i < args.len()).then(|| &args[i..]))
}

/// Resolve argv[0]: `~` expanded, a name with `/` against cwd, a bare name on PATH.
pub fn resolve(raw: &str, ctx: &Context<'_>) -> Resolution {
    let expanded = match (raw.strip_prefix('~'), ctx.home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => raw.to_string(),
    };
    let resolved = if raw.is_empty() {
        None
    } else if expanded.contains('/') {
        let p = PathBuf::from(&expanded);
        let abs = if p.is_absolute() { p } else { ctx.cwd.join(p) };
        let abs = normalize(&abs);
        crate::spawn::shell::is_executable(&abs).then_some(abs)
    } else {
        crate::spawn::shell::find_executable(&expanded, ctx.path)
    };
    let executable_name = resolved
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| basename(raw).to_string());
    Resolution {
        raw_executable: raw.to_string(),
        resolved_path: resolved,
        executable_name,
    }
}

/// Lexical `.`/`..` removal, so `./bin/../bin/x` matches patterns written for `/repo/bin/x`.
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
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
}
