//! awk programs: read-only when they can be shown not to run commands or write files.
//!
//! Refused: `system`, `getline` (which reads from commands or files), a single `|` (pipes to or
//! from commands; `||` is allowed), `@` (gawk's `@load`, `@include`, indirect calls), and an
//! output redirection. A `>` is a redirection only in a `print`/`printf` statement, i.e. inside an
//! action (`{...}`) and outside parentheses; there it is refused, even when it would be a
//! comparison. Outside actions (`$1 > 0`) and inside parentheses (`if ($1 > 0)`) it compares.
//!
//! Strings and regex literals are skipped; whether `/` starts a regex or divides is decided from
//! the token before it, as awk's lexer does. Regexes are scanned twice, with and without `[...]`
//! holding a `/` (gawk and mawk differ), and both readings must pass. Unbalanced brackets are
//! refused, so a misread cannot move a `>` out of an action unnoticed.

use super::Args;
use crate::approval::getopt::Parsed;

pub fn check_awk(parsed: &Parsed, args: &Args) -> Result<(), String> {
    let Some((program, at)) = parsed.operands().next() else {
        return Err("no program".into());
    };
    if args.expands(at) {
        return Err(format!("the program {program} may expand to other words"));
    }
    for brackets in [true, false] {
        scan(program, brackets).map_err(|why| format!("the program {why}"))?;
    }
    Ok(())
}

const BANNED: &[(&str, &str)] = &[
    ("system", "runs a command (system)"),
    ("getline", "reads from a command or file (getline)"),
];

/// Keywords after which a `/` starts a regex rather than dividing.
const KEYWORDS: &[&str] = &[
    "BEGIN", "END", "function", "func", "if", "else", "while", "for", "do", "break", "continue",
    "next", "nextfile", "exit", "return", "delete", "in", "print", "printf",
];

fn scan(program: &str, brackets: bool) -> Result<(), String> {
    let chars: Vec<char> = program.chars().collect();
    let mut stack: Vec<char> = Vec::new();
    // Whether the last token ends an operand (so a following `/` divides).
    let mut after_operand = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\r' => {
                i += 1;
                continue;
            }
            '\n' | ';' | ',' => {
                after_operand = false;
                i += 1;
                continue;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 2;
                continue;
            }
            '"' => {
                i = skip_string(&chars, i + 1)?;
                after_operand = true;
                continue;
            }
            '/' if !after_operand => {
                i = skip_regex(&chars, i + 1, brackets)?;
                after_operand = true;
                continue;
            }
            '(' | '[' | '{' => {
                stack.push(c);
                after_operand = false;
            }
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return Err(format!("has an unbalanced {c:?}"));
                }
                after_operand = c != '}';
            }
            '|' => {
                if chars.get(i + 1) == Some(&'|') {
                    i += 2;
                    after_operand = false;
                    continue;
                }
                return Err("pipes to or from a command (|)".into());
            }
            '@' => return Err("uses @ (gawk load, include or indirect call)".into()),
            '>' => {
                let in_action = stack.contains(&'{');
                let in_parens = stack.contains(&'(');
                if in_action && !in_parens {
                    return Err(
                        "may redirect output to a file (> in an action outside parentheses)".into(),
                    );
                }
                after_operand = false;
            }
            '+' | '-' if chars.get(i + 1) == Some(&c) => {
                // `x++ / 2` divides.
                i += 2;
                after_operand = true;
                continue;
            }
            '$' => after_operand = false,
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if let Some((_, why)) = BANNED.iter().find(|(w, _)| *w == word) {
                    return Err((*why).to_string());
                }
                after_operand = !KEYWORDS.contains(&word.as_str());
                continue;
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
                after_operand = true;
                continue;
            }
            _ => after_operand = false,
        }
        i += 1;
    }
    if let Some(open) = stack.last() {
        return Err(format!("has an unclosed {open:?}"));
    }
    Ok(())
}

/// From after the opening quote to after the closing one.
fn skip_string(chars: &[char], mut i: usize) -> Result<usize, String> {
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 2,
            '"' => return Ok(i + 1),
            '\n' => break,
            _ => i += 1,
        }
    }
    Err("has an unterminated string".into())
}

/// From after the opening `/` to after the closing one.
fn skip_regex(chars: &[char], mut i: usize, brackets: bool) -> Result<usize, String> {
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 2,
            '/' => return Ok(i + 1),
            '\n' => break,
            '[' if brackets => {
                i += 1;
                if chars.get(i) == Some(&'^') {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                }
                while let Some(&d) = chars.get(i) {
                    match d {
                        ']' => break,
                        '\n' => return Err("has an unterminated regex".into()),
                        '\\' => i += 2,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    Err("has an unterminated regex".into())
}

#[cfg(test)]
mod tests {
    use super::scan;

    fn ok(p: &str) -> bool {
        scan(p, true).is_ok() && scan(p, false).is_ok()
    }

    /// How many files this machine's awk creates running `program` in an empty directory
    /// (`None` without an awk).
    fn files_created(program: &str) -> Option<usize> {
        let awk = std::path::Path::new("/usr/bin/awk");
        if !awk.is_file() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        std::fs::write(&input, "1 2 3\n-1 20 2000\nfoo bar 3\n").unwrap();
        let out = std::process::Command::new(awk)
            .arg(program)
            .arg(&input)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{program}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(std::fs::read_dir(dir.path()).unwrap().count() - 1)
    }

    /// The accepted programs write nothing when awk runs them; the redirections refused do.
    fn ran_without_writing(accepted: &[&str]) {
        for p in accepted {
            assert!(files_created(p).unwrap_or(0) == 0, "{p} created a file");
        }
        for p in [
            "{ print > \"out\" }",
            "{ print $1 >> \"out\" }",
            "{ printf(\"%s\", $1) > \"f\" }",
        ] {
            assert!(!ok(p));
            assert!(files_created(p).is_none_or(|n| n == 1), "{p}");
        }
    }

    #[test]
    fn programs() {
        let mut accepted = Vec::new();
        for p in [
            "{print $1}",
            "$1 > 0",
            "$1 > 0 { print $2 }",
            "NR > 1 && $3 >= 10",
            "{ if ($1 > 0) print $1 }",
            "{ print ($1 > 2) }",
            "/foo/ { n++ } END { print n }",
            "{ s += $1 } END { print s / NR }",
            "{ x = a / 2; y = 3 / 4 }",
            "$1 == \"a\" || $2 == \"b\"",
            "BEGIN { FS = \":\" } { print $1 }",
            "{ print \"a > b\" }",
            "/a>b/",
            "{ printf \"%s\\n\", $0 }",
            "length($0) > 72",
            "/a|b/",
        ] {
            assert!(ok(p), "{p}");
            accepted.push(p);
        }
        ran_without_writing(&accepted);
        for p in [
            "{ print > \"out\" }",
            "{ print $1 >> \"out\" }",
            "{ printf(\"%s\", $1) > \"f\" }",
            "{ system(\"rm x\") }",
            "{ print | \"sh\" }",
            "{ \"date\" | getline d }",
            "{ getline line < \"f\" }",
            "@load \"x\"",
            "{ y = /}/; print > \"f\"; z = /{/ }",
            "{ if (/}/) print > \"f\" }",
            "{ x++ / 2; print > \"f\"; y = 1 / 3 }",
            "{ x = a >= b }",
            "{ print $1 ",
            "{ print \"unterminated }",
        ] {
            assert!(!ok(p), "{p}");
        }
    }
}
