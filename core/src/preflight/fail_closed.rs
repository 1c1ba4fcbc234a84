//! When the script preflight refuses a command it cannot check (OpenClaw B's rule, reproduced from its
//! behaviour and tests): only when an interpreter that would run a script (`python x.py`, `node x.js`,
//! not `--version`, `-c`, `-e`...) sits in a command with other shell syntax, and a script name is in
//! that same segment or pipeline, or a process substitution feeds a direct interpreter. Shell wrappers
//! (`bash -c`, with their options before `-c`) are looked into. Words only echoed or printed, and
//! script names in another segment than the interpreter, pass.
//!
//! This is a guard against a model's script mistakes (shell syntax inside Python or JavaScript), not a
//! security boundary: the approval gate and the sandbox are.

use crate::approval::lexer::is_assignment;

/// Shells whose `-c` payload is looked into.
const SHELLS: [&str; 6] = ["bash", "dash", "fish", "ksh", "sh", "zsh"];
/// Words that may start a segment before its command (`if true; then python x.py; fi`).
const KEYWORDS: [&str; 8] = ["if", "then", "do", "elif", "else", "while", "until", "time"];

/// Whether B refuses `command` as "complex interpreter invocation detected".
pub fn fails_closed(command: &str) -> bool {
    let raw = command.trim();
    let argv = words(raw)
        .map(|w| strip_prefix_words(&w))
        .unwrap_or_default();
    let direct = argv.first().is_some_and(|e| is_interpreter(e));
    let top = heuristics(&unquoted(raw));
    let payload = argv.first().and_then(|e| shell_payload(e, &argv[1..]));
    let nested = payload.as_deref().map(|p| heuristics(&unquoted(p)));
    let seg_hint = interpreter_and_hint_in_a_segment(raw)
        || payload
            .as_deref()
            .is_some_and(interpreter_and_hint_in_a_segment);
    let pipe_hint = interpreter_in_pipeline_with_hint(raw)
        || payload
            .as_deref()
            .is_some_and(interpreter_in_pipeline_with_hint);
    let wrapped = match (&nested, payload.as_deref()) {
        (Some(n), Some(p)) => {
            n.interpreter
                && (interpreter_and_hint_in_a_segment(p)
                    || n.script_hint
                    || n.complex
                    || n.process_substitution)
        }
        _ => false,
    };
    let top_interpreter = segments(raw, true)
        .iter()
        .any(|s| leading_executable(s).is_some_and(|e| is_interpreter(&e)));
    let invocation = direct || wrapped || top_interpreter;
    let complex = top.complex || wrapped;
    let process_substitution =
        top.process_substitution || nested.is_some_and(|n| n.process_substitution);
    invocation && complex && (seg_hint || pipe_hint || (process_substitution && direct))
}

struct Heuristics {
    interpreter: bool,
    complex: bool,
    process_substitution: bool,
    script_hint: bool,
}

fn heuristics(unquoted: &str) -> Heuristics {
    let interpreter = segments(unquoted, true)
        .iter()
        .any(|s| leading_executable(s).is_some_and(|e| is_interpreter(&e)));
    let process_substitution = has_unescaped(unquoted, "<(") || has_unescaped(unquoted, ">(");
    let complex = ["|", "&&", "||", ";", "$(", "`"]
        .iter()
        .any(|s| has_unescaped(unquoted, s))
        || has_background_operator(unquoted)
        || unquoted.contains(['\n', '\r'])
        || process_substitution;
    Heuristics {
        interpreter,
        complex,
        process_substitution,
        script_hint: unquoted_script_hint(unquoted),
    }
}

/// `python`, `python3`, `python3.12` (any case), `node`; by base name.
fn is_interpreter(executable: &str) -> bool {
    let name = executable
        .rsplit('/')
        .next()
        .unwrap_or(executable)
        .to_ascii_lowercase();
    if name == "node" {
        return true;
    }
    let Some(version) = name.strip_prefix("python") else {
        return false;
    };
    match version.strip_prefix('3') {
        None => version.is_empty(),
        Some("") => true,
        Some(minor) => minor
            .strip_prefix('.')
            .is_some_and(|m| !m.is_empty() && m.chars().all(|c| c.is_ascii_digit())),
    }
}

/// Whether the segment's interpreter would run a script: not only print a version or help, check
/// syntax, or run inline code or a module.
fn runs_a_script(segment: &str) -> bool {
    let Some(argv) = words(segment.trim()).map(|w| strip_prefix_words(&w)) else {
        return false;
    };
    let Some(executable) = argv.first() else {
        return false;
    };
    let args = &argv[1..];
    let name = executable
        .rsplit('/')
        .next()
        .unwrap_or(executable)
        .to_ascii_lowercase();
    if !is_interpreter(&name) {
        return false;
    }
    if name == "node" {
        let info = ["-v", "--version", "-h", "--help", "-c", "--check"];
        let inline = |a: &str| {
            matches!(a, "-e" | "-p" | "--eval" | "--print")
                || a.starts_with("--eval=")
                || a.starts_with("--print=")
                || ((a.starts_with("-e") || a.starts_with("-p")) && a.len() > 2)
        };
        return !args.iter().any(|a| info.contains(&a.as_str()) || inline(a));
    }
    let info = ["-V", "--version", "-h", "--help"];
    let inline =
        |a: &str| a.starts_with("-c") || a.starts_with("-m") || a == "--check-hash-based-pycs";
    !args.iter().any(|a| info.contains(&a.as_str()) || inline(a))
}

/// A script name in the segment: the interpreter's own script operand, or an unquoted word ending in
/// `.py` or `.js`.
fn script_hint(segment: &str) -> bool {
    let operand = words(segment.trim())
        .map(|w| strip_prefix_words(&w))
        .and_then(|argv| {
            let first = argv.first()?;
            let name = first.rsplit('/').next().unwrap_or(first);
            let kind = super::interpreter(name)?;
            Some(!super::scripts(kind, &argv).is_empty())
        })
        .unwrap_or(false);
    operand || unquoted_script_hint(segment)
}

fn interpreter_and_hint_in_a_segment(raw: &str) -> bool {
    segments(raw, true)
        .iter()
        .any(|s| runs_a_script(s) && script_hint(s))
}

fn interpreter_in_pipeline_with_hint(raw: &str) -> bool {
    segments(raw, false).iter().any(|segment| {
        segments(segment, true)
            .iter()
            .skip(1)
            .any(|stage| runs_a_script(stage))
            && script_hint(segment)
    })
}

/// An unquoted word ending in `.py` or `.js` (quoted text does not count).
fn unquoted_script_hint(raw: &str) -> bool {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut token = String::new();
    let ends = |t: &mut String| {
        let t2 = t.to_ascii_lowercase();
        let hit = t2.ends_with(".py") || t2.ends_with(".js");
        t.clear();
        hit
    };
    for c in raw.chars() {
        if escaped {
            if !single && !double {
                token.push(c);
            }
            escaped = false;
            continue;
        }
        if !single && c == '\\' {
            escaped = true;
            continue;
        }
        if single {
            single = c != '\'';
            continue;
        }
        if double {
            double = c != '"';
            continue;
        }
        match c {
            '\'' | '"' => {
                if ends(&mut token) {
                    return true;
                }
                single = c == '\'';
                double = c == '"';
            }
            c if c.is_whitespace() || "|&;()<>".contains(c) => {
                if ends(&mut token) {
                    return true;
                }
            }
            c => token.push(c),
        }
    }
    ends(&mut token)
}

/// `needle` in `raw` not right after a backslash.
fn has_unescaped(raw: &str, needle: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut escaped = false;
    for i in 0..bytes.len() {
        if escaped {
            escaped = false;
            continue;
        }
        if bytes[i] == b'\\' {
            escaped = true;
            continue;
        }
        if bytes[i..].starts_with(needle.as_bytes()) {
            return true;
        }
    }
    false
}

/// A lone unescaped `&` (a job sent to the background, as in `node server.js & wait`), not a redirection
/// (`2>&1`, `&>log`, `<&3`) and not `&&`.
fn has_background_operator(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut escaped = false;
    for i in 0..b.len() {
        if escaped {
            escaped = false;
            continue;
        }
        match b[i] {
            b'\\' => escaped = true,
            b'&' => {
                let before = i.checked_sub(1).map(|j| b[j]);
                let after = b.get(i + 1).copied();
                let redirection = matches!(before, Some(b'>' | b'<')) || after == Some(b'>');
                let doubled = before == Some(b'&') || after == Some(b'&');
                if !redirection && !doubled {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The text outside quotes (each quoted part left as an empty pair of quotes).
fn unquoted(raw: &str) -> String {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if escaped {
            escaped = false;
            if !single && !double {
                out.push(c);
            }
            continue;
        }
        if single {
            if c == '\'' {
                single = false;
                out.push(c);
            }
            continue;
        }
        if double {
            if c == '\\' {
                escaped = true;
            } else if c == '"' {
                double = false;
                out.push(c);
            }
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                out.push(c);
            }
            '\'' => {
                single = true;
                out.push(c);
            }
            '"' => {
                double = true;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The command's segments outside quotes: split at `;`, `&`, `&&`, `||`, line breaks, and (when
/// `pipes`) at `|`. Escaped characters do not split.
fn segments(raw: &str, pipes: bool) -> Vec<String> {
    let chars: Vec<char> = raw.chars().collect();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut out = Vec::new();
    let mut current = String::new();
    let push = |current: &mut String, out: &mut Vec<String>| {
        let t = current.trim();
        if !t.is_empty() {
            out.push(t.to_string());
        }
        current.clear();
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if escaped {
            current.push(c);
            escaped = false;
            i += 1;
            continue;
        }
        if c == '\\' && !single {
            escaped = true;
            current.push(c);
            i += 1;
            continue;
        }
        if single || double {
            if (single && c == '\'') || (double && c == '"') {
                single = false;
                double = false;
            }
            current.push(c);
            i += 1;
            continue;
        }
        match c {
            '\'' => single = true,
            '"' => double = true,
            _ => {}
        }
        let split = match (c, next) {
            ('|', Some('|')) | ('&', Some('&')) => {
                i += 1;
                true
            }
            ('|', _) => pipes,
            (';' | '&' | '\n' | '\r', _) => true,
            _ => false,
        };
        if split {
            push(&mut current, &mut out);
        } else {
            current.push(c);
        }
        i += 1;
    }
    push(&mut current, &mut out);
    out
}

/// The segment's program after a leading keyword, `env` and its options, and assignments.
fn leading_executable(segment: &str) -> Option<String> {
    let argv = words(unquoted(segment).trim())?;
    strip_prefix_words(&argv)
        .into_iter()
        .next()
        .map(|e| e.to_ascii_lowercase())
}

/// Drop what comes before the program: one leading keyword, `env` (its options and assignments),
/// and `NAME=value` words.
fn strip_prefix_words(argv: &[String]) -> Vec<String> {
    let mut rest: &[String] = argv;
    if rest
        .first()
        .is_some_and(|w| KEYWORDS.contains(&w.to_ascii_lowercase().as_str()))
    {
        rest = &rest[1..];
    }
    loop {
        while rest.first().is_some_and(|w| is_assignment(w)) {
            rest = &rest[1..];
        }
        if rest
            .first()
            .is_some_and(|w| w.rsplit('/').next() == Some("env"))
        {
            rest = &rest[1..];
            while let Some(w) = rest.first() {
                if w == "--" {
                    rest = &rest[1..];
                    break;
                }
                if is_assignment(w) {
                    rest = &rest[1..];
                } else if w.starts_with('-') && w.len() > 1 {
                    let takes_value = matches!(w.as_str(), "-u" | "--unset" | "-C" | "--chdir");
                    rest = &rest[if takes_value { 2 } else { 1 }.min(rest.len())..];
                } else {
                    break;
                }
            }
            continue;
        }
        break;
    }
    rest.to_vec()
}

/// The `-c` script of a shell, read past the options before it (`-O opt`, `-o opt`, `--rcfile F`,
/// combined flags such as `-xc` or `-ceu`).
fn shell_payload(executable: &str, args: &[String]) -> Option<String> {
    let name = executable
        .rsplit('/')
        .next()
        .unwrap_or(executable)
        .to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    if !SHELLS.contains(&name) {
        return None;
    }
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            return None;
        }
        if a == "-c" {
            return args.get(i + 1).cloned();
        }
        if a.len() > 1
            && a.starts_with('-')
            && !a.starts_with("--")
            && a[1..].chars().all(|c| c.is_ascii_alphabetic())
        {
            if a.contains('c') {
                return args.get(i + 1).cloned();
            }
            if a == "-O" || a == "-o" {
                i += 1;
            }
            i += 1;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let takes_next = !long.is_empty()
                && !long.contains('=')
                && args
                    .get(i + 1)
                    .is_some_and(|n| n != "--" && !n.starts_with('-'));
            if takes_next {
                i += 1;
            }
            i += 1;
            continue;
        }
        return None;
    }
    None
}

/// Shell words with quotes and escapes read as the shell does (no expansions); `None` for an
/// unterminated quote.
fn words(raw: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        x => word.push(x),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.peek() {
                            Some(&n @ ('\\' | '"' | '$' | '`')) => {
                                word.push(n);
                                chars.next();
                            }
                            _ => word.push('\\'),
                        },
                        x => word.push(x),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        out.push(word);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::fails_closed;

    /// OpenClaw B's own cases (its `failClosedCases` and `passCases`), and the issue's.
    #[test]
    fn b_fails_closed_where_it_does_and_only_there() {
        for cmd in [
            "cat bad.py | python",
            "if true; then python bad.py; fi",
            "if true; then\npython bad.py\nfi",
            "bash -c \"python 'bad.py'\"",
            "if true; then python \"bad.py\"; fi",
            "bash -c \"python bad.py\"",
            "bash -c \"if true; then python bad.py; fi\"",
            "env bash -c \"python bad.py\"",
            "/bin/bash -c \"python bad.py\"",
            "bash --rcfile shell.rc -c \"python bad.py\"",
            "bash --noprofile --norc -c \"python bad.py\"",
            "bash -xc \"python bad.py\"",
            "bash -O extglob -c \"python bad.py\"",
            "bash -o errexit -c \"python bad.py\"",
            "bash -ceu \"python bad.py\"",
            "python <(cat bad.py)",
            "cd . && python ok.py",
            "python ok.py; echo done",
            "python $(echo ok.py)",
            "bash -c 'python ok.py'",
            // A job sent to the background is shell syntax too (B refuses it).
            "node server.js & wait",
            "python3 worker.py & python3 other.py",
        ] {
            assert!(fails_closed(cmd), "should fail closed: {cmd:?}");
        }
        for cmd in [
            "bash -c \"echo python\"",
            "node -e \"console.log(123)\"",
            "echo 'python bad.py | python'",
            "echo time python bad.py; cat",
            "echo python | cat",
            "printf node | wc -c",
            "echo bad.py; python --version",
            "node --version && ls *.py",
            "echo bad.py | node --version",
            "echo bad.py | node -c ok.js",
            "node -e \"console.log('bad.py')\" | cat",
            "echo python bad.py \\| node",
            "echo python bad.py \\; node",
            "node -e \"console.log('bad.py')\"",
            "grep -n foo ok.py",
            "npm test && echo ok",
            "cat a.js | wc -l",
            // Redirections that name `&` are not background jobs.
            "python3 ok.py 2>&1",
            "node ok.js &>log",
            "python3 ok.py >&2",
        ] {
            assert!(!fails_closed(cmd), "should pass: {cmd:?}");
        }
    }
}
