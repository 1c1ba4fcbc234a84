//! Checks the lexer against bash itself, and fuzzes it with token soups.
//!
//! For generated commands the analyzer accepts, each simple command's argv must equal what bash
//! passes (`printf '%s\0'` of the same words). Generated commands with an unquoted unsupported token
//! must be refused. A small xorshift generator keeps runs reproducible without a dependency.

#![cfg(test)]

use super::lexer::{lex, Token};
use std::process::Command;

use crate::test_rng::Rng;

const PLAIN: &[&str] = &[
    "a", "b", "Z", "0", "9", "_", ".", "/", "-", ":", "=", ",", "@", "%", "+", "x.y", "--flag",
];
const ANY: &[&str] = &[
    "a", " ", ";", "|", "&", "$", "`", "\\", "\"", "(", ")", "<", ">", "*", "?", "[", "#", "~",
    "{", "}", "!", "é", "\t",
];

fn part(r: &mut Rng) -> String {
    match r.below(5) {
        0 | 1 => r.pick(PLAIN).to_string(),
        2 => {
            // Single quotes: anything but a quote.
            let n = r.below(4);
            let body: String = (0..n).map(|_| r.pick(ANY)).filter(|s| *s != "'").collect();
            format!("'{body}'")
        }
        3 => {
            // Double quotes: escapes for the four specials, other characters as they are.
            let n = r.below(4);
            let mut body = String::new();
            for _ in 0..n {
                match r.pick(ANY) {
                    "\"" => body.push_str("\\\""),
                    "\\" => body.push_str(if r.below(2) == 0 { "\\\\" } else { "\\q" }),
                    "$" => body.push_str("\\$"),
                    "`" => body.push_str("\\`"),
                    s => body.push_str(s),
                }
            }
            format!("\"{body}\"")
        }
        _ => {
            let c = r.pick(ANY);
            format!("\\{c}")
        }
    }
}

fn word(r: &mut Rng) -> String {
    let n = 1 + r.below(3);
    let mut w: String = (0..n).map(|_| part(r)).collect();
    // An unquoted glob or `~`/`#` at the start would be expanded or comment out; keep words literal.
    if w.starts_with('~') || w.starts_with('#') {
        w.insert(0, 'w');
    }
    w
}

fn bash_argv(words: &str) -> Option<Vec<String>> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("shopt -u extglob; set -f; printf '%s\\0' {words}"))
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut v: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    v.pop();
    Some(v)
}

#[test]
fn differential_against_bash() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compared = 0;
    for _ in 0..3000 {
        let n = 1 + r.below(4);
        let words: Vec<String> = (0..n).map(|_| word(&mut r)).collect();
        let line = words.join(" ");
        let Ok(tokens) = lex(&line) else { continue };
        let ours: Vec<String> = tokens
            .into_iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w.text),
                _ => None,
            })
            .collect();
        let theirs = bash_argv(&line).unwrap_or_else(|| panic!("bash refused {line:?}"));
        assert_eq!(ours, theirs, "argv differs for {line:?}");
        compared += 1;
    }
    assert!(compared > 2000, "only {compared} commands were compared");
}

#[test]
fn unquoted_unsupported_tokens_are_always_refused() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    const BAD: &[&str] = &[
        "$(id)", "`id`", ">", "<", "&", "(", ")", "\n", "$HOME", "${x}", "|&", "\r", "2>&1",
        "<(ls)",
    ];
    for _ in 0..5000 {
        let mut words: Vec<String> = (0..1 + r.below(3)).map(|_| word(&mut r)).collect();
        let at = r.below(words.len() + 1);
        let bad = r.pick(BAD);
        words.insert(at, bad.to_string());
        let line = words.join(" ");
        if bad == "\n" && at == words.len() - 1 {
            continue; // a trailing newline only ends the command
        }
        assert!(lex(&line).is_err(), "accepted {line:?} containing {bad:?}");
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut r = Rng(42);
    for _ in 0..20000 {
        let n = r.below(40);
        let s: String = (0..n)
            .map(|_| {
                let pool = [
                    "a", " ", "'", "\"", "\\", "$", "(", ")", "<<", "EOF", "\n", "|", "&", ";",
                    "#", "`", "{", "-", "\t",
                ];
                pool[r.below(pool.len())]
            })
            .collect();
        let _ = lex(&s);
        let _ = super::analyze::analyze(
            &s,
            &super::analyze::Context {
                cwd: std::path::Path::new("/"),
                path: Some("/usr/bin:/bin"),
                home: Some(crate::approval::TEST_HOME),
            },
        );
    }
}
