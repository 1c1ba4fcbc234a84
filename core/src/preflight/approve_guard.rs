//! The control-command guard (OpenClaw's): commands that act on the agent's own control plane never run
//! through the shell. A model must not approve its own pending request (`/approve <id> <decision>`, B),
//! nor start an interactive channel login (`openclaw channels login`, later OpenClaw: it waits on a
//! terminal nobody sees, and pairs the gateway's account). A command any of whose simple commands, after
//! unwrapping `env` (and `env -S` payloads), `command`, `builtin`, `exec`, `sudo`, `nohup`, `nice`,
//! `timeout`, package runners (`npx`, `pnpm exec`, ...) and `sh|bash|... -c` scripts, is one of them is
//! refused. Where the analyzer cannot split the command (substitutions and the like), any such
//! invocation in the raw text is refused too.

use std::path::Path;

use crate::approval::lexer::is_assignment;

use crate::approval::analyze::{analyze, Analysis, Context, SHELLS};
use crate::error::{AgentError, ErrorCode};

pub const REFUSAL: &str = "exec cannot run /approve commands. Show the /approve command to the user as chat text, or route it through the approval command handler instead of shell execution.";

/// Later OpenClaw's text for `openclaw channels login` through exec.
pub const LOGIN_REFUSAL: &str = "exec cannot run interactive OpenClaw channel login commands. Run `openclaw channels login` in a terminal on the gateway host, or use the channel-specific login agent tool when available (for WhatsApp: `whatsapp_login`).";

/// A control command found in what would run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    Approve,
    ChannelLogin,
}

impl Control {
    fn refusal(self) -> AgentError {
        let text = match self {
            Control::Approve => REFUSAL,
            Control::ChannelLogin => LOGIN_REFUSAL,
        };
        AgentError::new(ErrorCode::PreflightRejected, text)
    }
}

const DECISIONS: [&str; 4] = ["allow-once", "allow-always", "always", "deny"];
/// How deep `sh -c` scripts are followed.
const MAX_DEPTH: usize = 4;

pub fn check(command: &str, cwd: &Path, path: Option<&str>) -> Result<(), AgentError> {
    // Cheap first look: neither can run without its words in the text, once the quotes and
    // backslashes that only join a word's parts are gone (`/app'rove'`, `log\in`).
    let bare: String = command
        .chars()
        .filter(|c| !"'\"\\".contains(*c))
        .collect::<String>()
        .to_ascii_lowercase();
    if !bare.contains("/approve") && !bare.contains("login") {
        return Ok(());
    }
    match runs_control(command, cwd, path, 0) {
        Some(control) => Err(control.refusal()),
        None => Ok(()),
    }
}

fn runs_control(command: &str, cwd: &Path, path: Option<&str>, depth: usize) -> Option<Control> {
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
        return raw_words_run_control(command);
    }
    segments_run_control(&analysis, cwd, path, depth)
}

fn segments_run_control(
    analysis: &Analysis,
    cwd: &Path,
    path: Option<&str>,
    depth: usize,
) -> Option<Control> {
    analysis.segments().find_map(|segment| {
        segment
            .inner
            .as_ref()
            .and_then(|inner| segments_run_control(inner, cwd, path, depth + 1))
            .or_else(|| argv_runs_control(&segment.argv, cwd, path, depth))
    })
}

/// Unwrap the argv's wrappers; the control command that is left, if any.
fn argv_runs_control(
    argv: &[String],
    cwd: &Path,
    path: Option<&str>,
    depth: usize,
) -> Option<Control> {
    let mut rest: Vec<String> = argv.to_vec();
    loop {
        // Variable assignments before the program (`FOO=1 /approve ...`) change nothing of what runs.
        let assignments = rest.iter().take_while(|w| is_assignment(w)).count();
        rest.drain(..assignments);
        let first = rest.first().cloned()?;
        let name = program_name(&first);
        if is_approve(&rest) {
            return Some(Control::Approve);
        }
        if is_channel_login(&rest) {
            return Some(Control::ChannelLogin);
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
                return script
                    .and_then(|at| rest.get(at + 1))
                    .and_then(|s| runs_control(s, cwd, path, depth + 1));
            }
            _ => return None,
        }
    }
}

/// A program's name as a guard compares it: the last path part, lower case, without `.exe`/`.cmd`.
fn program_name(word: &str) -> String {
    let base = word
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_ascii_lowercase();
    base.strip_suffix(".exe")
        .or_else(|| base.strip_suffix(".cmd"))
        .map(str::to_string)
        .unwrap_or(base)
}

/// `openclaw channels login` (or `channel login`), run directly or through a package runner: `npx`,
/// `bunx` (their options skipped), `pnpm|npm|yarn [exec|dlx|run] openclaw`. OpenClaw's options before
/// the subcommand are skipped too, values included (refusing more than OpenClaw, never less).
fn is_channel_login(argv: &[String]) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    let args: Vec<String> = match program_name(first).as_str() {
        "openclaw" => argv[1..].to_vec(),
        "npx" | "bunx" => {
            let rest = skip_options(&argv[1..], &["-p", "--package", "-c", "--call"]);
            match rest.first() {
                Some(p) if program_name(p) == "openclaw" => rest[1..].to_vec(),
                _ => return false,
            }
        }
        "pnpm" | "npm" | "yarn" => {
            let rest = skip_options(&argv[1..], &["-C", "--dir", "--prefix", "--filter"]);
            let rest = match rest.first().map(String::as_str) {
                Some("exec" | "dlx" | "run" | "x") => {
                    skip_options(&rest[1..], &["-p", "--package"])
                }
                _ => rest,
            };
            match rest.first() {
                Some(p) if program_name(p) == "openclaw" => rest[1..].to_vec(),
                _ => return false,
            }
        }
        _ => return false,
    };
    // The subcommand after any global options and their values: `channels login` as two words in a
    // row, wherever they come.
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    words
        .windows(2)
        .any(|w| matches!(w[0], "channels" | "channel") && w[1] == "login")
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

/// Fallback for commands the analyzer could not split: any `/approve <id> <decision>` word run, or
/// `openclaw` followed by `channels login` (options between them skipped).
fn raw_words_run_control(command: &str) -> Option<Control> {
    // Quotes and backslashes join a word's parts (`open'claw'`, `log\in` are `openclaw`, `login` to
    // bash): removed, not split at. Words end at blanks and at what ends a command or a substitution.
    let words: Vec<String> = command
        .split(|c: char| c.is_whitespace() || ";&|()`$<>{}".contains(c))
        .map(|w| {
            w.chars()
                .filter(|c| !"'\"\\".contains(*c))
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect();
    if words.windows(3).any(is_approve) {
        return Some(Control::Approve);
    }
    let login = words
        .iter()
        .enumerate()
        .any(|(i, w)| program_name(w) == "openclaw" && is_channel_login(&words[i..]));
    login.then_some(Control::ChannelLogin)
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

    #[test]
    fn a_channel_login_through_any_runner_or_wrapper_is_refused() {
        for cmd in [
            "openclaw channels login",
            "openclaw channel login --channel whatsapp",
            "/usr/local/bin/openclaw channels login",
            "OpenClaw.exe channels login",
            "openclaw --profile work channels login",
            "npx openclaw channels login",
            "npx -y -p openclaw@latest openclaw channels login",
            "bunx openclaw channels login",
            "pnpm openclaw channels login",
            "pnpm exec openclaw channels login",
            "pnpm dlx openclaw channels login",
            "npm exec -- openclaw channels login",
            "yarn openclaw channels login",
            "sudo -u openclaw bash -lc 'openclaw channels login'",
            "env FOO=1 openclaw channels login",
            "cd /srv && openclaw channels login | tee log",
            "echo $(openclaw channels login)",
            "timeout 60 npx openclaw channels login",
        ] {
            let Err(e) = check(cmd, Path::new("/"), Some("/usr/bin:/bin")) else {
                panic!("not refused: {cmd}");
            };
            assert_eq!(e.message, LOGIN_REFUSAL, "{cmd}");
            assert_eq!(e.code, ErrorCode::PreflightRejected);
        }
    }

    #[test]
    fn other_openclaw_commands_and_mentions_of_login_pass() {
        for cmd in [
            "openclaw channels status",
            "openclaw channels list",
            "openclaw message send --to x --text login",
            "npx openclaw doctor",
            "echo 'openclaw channels login'",
            "grep login openclaw.log",
            "ssh login@host",
            "npm run login",
        ] {
            assert!(!refused(cmd), "{cmd}");
        }
    }

    /// Every way of quoting or escaping the words of a control command that bash reads as the same
    /// words, behind a construct the analyzer cannot split (so the raw fallback decides): each refused.
    #[test]
    fn quoted_and_escaped_spellings_are_refused_where_the_command_cannot_be_split() {
        let spellings = |word: &str| -> Vec<String> {
            let chars: Vec<char> = word.chars().collect();
            let mut out = vec![word.to_string()];
            for i in 0..chars.len() {
                let (a, b): (String, String) =
                    (chars[..i].iter().collect(), chars[i..].iter().collect());
                out.push(format!("{a}'{b}'"));
                out.push(format!("{a}\"{b}\""));
                out.push(format!("{a}\\{b}"));
            }
            out
        };
        for (words, want) in [
            (["openclaw", "channels", "login"], LOGIN_REFUSAL),
            (["/approve", "abc", "allow-once"], REFUSAL),
        ] {
            for (at, word) in words.iter().enumerate() {
                for spelled in spellings(word) {
                    let mut parts: Vec<String> = words.iter().map(|w| w.to_string()).collect();
                    parts[at] = spelled;
                    // `$(...)` makes the whole command unanalysable.
                    for cmd in [
                        parts.join(" "),
                        format!("echo $(true); {}", parts.join(" ")),
                    ] {
                        let got = check(&cmd, Path::new("/"), Some("/usr/bin:/bin"));
                        assert_eq!(
                            got.err().map(|e| e.message),
                            Some(want.to_string()),
                            "{cmd}"
                        );
                    }
                }
            }
        }
    }
}
