//! The `/approve` guard (OpenClaw B): a model must not approve its own pending request by running the
//! approval command through the shell. A command any of whose simple commands, after unwrapping `env`
//! (and `env -S` payloads), `command`, `builtin`, `exec`, `sudo`, `nohup`, `nice`, `timeout`, and
//! `sh|bash|... -c` scripts, starts with `/approve <id> <decision>` is refused. Where the analyzer cannot
//! split the command (substitutions and the like), any such invocation in the raw text is refused too.

use std::path::Path;

use crate::approval::lexer::is_assignment;

use crate::approval::analyze::{analyze, Analysis, Context, SHELLS};
use crate::error::{AgentError, ErrorCode};

pub const REFUSAL: &str = "exec cannot run /approve commands. Show the /approve command to the user as chat text, or route it through the approval command handler instead of shell execution.";

const DECISIONS: [&str; 4] = ["allow-once", "allow-always", "always", "deny"];
/// How deep `sh -c` scripts are followed.
const MAX_DEPTH: usize = 4;

pub fn check(command: &str, cwd: &Path, path: Option<&str>) -> Result<(), AgentError> {
    if !command.contains("/approve") {
        return Ok(());
    }
    if runs_approve(command, cwd, path, 0) {
        return Err(AgentError::new(ErrorCode::PreflightRejected, REFUSAL));
    }
    Ok(())
}

fn runs_approve(command: &str, cwd: &Path, path: Option<&str>, depth: usize) -> bool {
    let analysis = analyze(
        command,
        &Context {
            cwd,
            path,
            home: None,
        },
    );
    if !analysis.ok || depth > MAX_DEPTH {
        // Not split exactly: look at the words themselves.
        return raw_words_run_approve(command);
    }
    segments_run_approve(&analysis, cwd, path, depth)
}

fn segments_run_approve(analysis: &Analysis, cwd: &Path, path: Option<&str>, depth: usize) -> bool {
    analysis.segments().any(|segment| {
        if let Some(inner) = &segment.inner {
            if segments_run_approve(inner, cwd, path, depth + 1) {
                return true;
            }
        }
        argv_runs_approve(&segment.argv, cwd, path, depth)
    })
}

/// Unwrap the argv's wrappers; true when what is left is `/approve <id> <decision>`.
fn argv_runs_approve(argv: &[String], cwd: &Path, path: Option<&str>, depth: usize) -> bool {
    let mut rest: Vec<String> = argv.to_vec();
    loop {
        // Variable assignments before the program (`FOO=1 /approve ...`) change nothing of what runs.
        let assignments = rest.iter().take_while(|w| is_assignment(w)).count();
        rest.drain(..assignments);
        let Some(first) = rest.first().cloned() else {
            return false;
        };
        let name = first.rsplit('/').next().unwrap_or(&first).to_string();
        if is_approve(&rest) {
            return true;
        }
        match name.as_str() {
            "env" => {
                let mut i = 1;
                while i < rest.len() {
                    let a = &rest[i];
                    if a == "-S" || a == "--split-string" {
                        let payload: Vec<String> = rest
                            .get(i + 1)
                            .map(|p| p.split_whitespace().map(str::to_string).collect())
                            .unwrap_or_default();
                        let tail = rest[(i + 2).min(rest.len())..].to_vec();
                        rest = [payload, tail].concat();
                        i = usize::MAX;
                        break;
                    }
                    if let Some(p) = a
                        .strip_prefix("-S")
                        .or_else(|| a.strip_prefix("--split-string="))
                    {
                        let payload: Vec<String> =
                            p.split_whitespace().map(str::to_string).collect();
                        let tail = rest[i + 1..].to_vec();
                        rest = [payload, tail].concat();
                        i = usize::MAX;
                        break;
                    }
                    if a.starts_with('-') || a.contains('=') {
                        i += if matches!(a.as_str(), "-u" | "--unset" | "-C" | "--chdir") {
                            2
                        } else {
                            1
                        };
                        continue;
                    }
                    break;
                }
                if i != usize::MAX {
                    rest = rest[i.min(rest.len())..].to_vec();
                }
            }
            "command" | "builtin" | "nohup" => {
                rest = skip_options(&rest[1..], &[]);
            }
            "exec" => rest = skip_options(&rest[1..], &["-a"]),
            "sudo" | "doas" => {
                rest = skip_options(
                    &rest[1..],
                    &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
                )
            }
            "nice" => rest = skip_options(&rest[1..], &["-n"]),
            "timeout" => {
                let after = skip_options(&rest[1..], &["-s", "-k"]);
                rest = after.get(1..).map(<[String]>::to_vec).unwrap_or_default();
            }
            shell if SHELLS.contains(&shell) => {
                let script = rest.iter().position(|a| {
                    a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
                });
                return match script.and_then(|at| rest.get(at + 1)) {
                    Some(s) => runs_approve(s, cwd, path, depth + 1),
                    None => false,
                };
            }
            _ => return false,
        }
    }
}

/// Drop leading options (and the values of `with_value` options).
fn skip_options(args: &[String], with_value: &[&str]) -> Vec<String> {
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') && args[i] != "-" {
        if args[i] == "--" {
            i += 1;
            break;
        }
        i += if with_value.contains(&args[i].as_str()) {
            2
        } else {
            1
        };
    }
    args[i.min(args.len())..].to_vec()
}

fn is_approve(argv: &[String]) -> bool {
    argv.len() >= 3
        && argv[0] == "/approve"
        && !argv[1].is_empty()
        && DECISIONS.contains(&argv[2].to_ascii_lowercase().as_str())
}

/// Fallback for commands the analyzer could not split: any `/approve <id> <decision>` word run.
fn raw_words_run_approve(command: &str) -> bool {
    let words: Vec<String> = command
        .split(|c: char| c.is_whitespace() || "'\";&|()`$<>{}".contains(c))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    words.windows(3).any(is_approve)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(command: &str) -> bool {
        check(command, Path::new("/"), Some("/usr/bin:/bin")).is_err()
    }

    #[test]
    fn approve_in_any_position_or_wrapper_is_refused() {
        for cmd in [
            "/approve abc allow-once",
            "FOO=1 /approve abc allow-once",
            "A=1 B=2 env C=3 /approve abc deny",
            "sudo FOO=1 /approve abc allow-once",
            "echo ok && /approve abc allow-once",
            "true; /approve abc deny",
            "false || /approve abc1234 allow-always",
            "echo x | /approve id always",
            "env FOO=1 /approve abc allow-once",
            "env -S '/approve abc allow-once'",
            "command /approve abc allow-once",
            "exec /approve abc deny",
            "builtin /approve abc deny",
            "sudo -u root /approve abc allow-once",
            "sh -c '/approve abc allow-once'",
            "bash -lc 'echo hi; /approve abc allow-once'",
            "sh -c \"sh -c '/approve abc deny'\"",
            "echo $(/approve abc allow-once)",
            "timeout 5 /approve abc allow-once",
        ] {
            assert!(refused(cmd), "{cmd}");
        }
        assert_eq!(
            check("/approve abc allow-once", Path::new("/"), None)
                .unwrap_err()
                .message,
            REFUSAL
        );
    }

    #[test]
    fn mentions_of_approve_that_do_not_run_it_pass() {
        for cmd in [
            "echo 'use /approve abc allow-once in chat'",
            "grep -rn /approve docs/",
            "cat /approve.txt",
            "/approve-helper abc allow-once",
            "/approve abc maybe",
            "ls",
        ] {
            assert!(!refused(cmd), "{cmd}");
        }
    }
}
