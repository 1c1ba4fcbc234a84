//! Checks OpenClaw B runs before a host run: the `/approve` guard ([`approve_guard`]), and the script
//! preflight: for `python <file>.py` and
//! `node <file>.js` (preloads and wrappers included), read the script when it lies inside the working
//! directory and is at most 512 KiB, and refuse to run it when its code holds shell variable syntax
//! (`$DM_JSON`) or, for JavaScript, when its first line is a shell command (`NODE ...`). A command that
//! mixes an interpreter and a script with other shell syntax (pipes, chains, substitutions) cannot be
//! checked, and is refused with B's text asking for the direct form. A file that is missing, too large
//! or outside the working directory is not checked (the command runs and fails on its own).

pub mod approve_guard;
mod fail_closed;
pub mod scan;

use std::path::{Path, PathBuf};

use crate::approval::analyze::{analyze, Context, Segment};
use crate::error::{AgentError, ErrorCode};
use scan::{first_token, Lang};

/// Largest script read.
pub const MAX_SCRIPT_BYTES: u64 = 512 * 1024;

const COMPLEX: &str = "exec preflight: complex interpreter invocation detected; refusing to run without script preflight validation. Use a direct `python <file>.py` or `node <file>.js` command.";

/// Check `command` as it would run in `cwd` with `path` as its `PATH`: the `/approve` guard, then the
/// script preflight.
pub fn check(command: &str, cwd: &Path, path: Option<&str>) -> Result<(), AgentError> {
    approve_guard::check(command, cwd, path)?;
    check_scripts(command, cwd, path)
}

/// The script preflight alone (for runs whose scripts are on this machine).
pub fn check_scripts(command: &str, cwd: &Path, path: Option<&str>) -> Result<(), AgentError> {
    if !mentions_script(command) && !mentions_interpreter(command) {
        return Ok(());
    }
    let home = std::env::var("HOME").ok();
    let analysis = analyze(
        command,
        &Context {
            cwd,
            path,
            home: home.as_deref(),
        },
    );
    let segments: Vec<&Segment> = analysis.segments().collect();
    // A direct `python x.py` or `node x.js`: its scripts are read and checked.
    let direct = match segments[..] {
        [segment] if analysis.ok && segment.inner.is_none() => {
            interpreter(&segment.resolution.executable_name).map(|kind| (segment, kind))
        }
        _ => None,
    };
    let Some((segment, kind)) = direct else {
        // Anything else is B's rule to judge: refused only where an interpreter that runs a script
        // shares its segment or pipeline with a script name, or a process substitution feeds it (a
        // wrapper the analyzer keeps whole, `bash --rcfile F -c "python x.py"`, included).
        return if fail_closed::fails_closed(command) {
            Err(rejected(COMPLEX.to_string()))
        } else {
            Ok(())
        };
    };
    for script in scripts(kind, &segment.effective_argv) {
        check_script(&script, cwd, kind)?;
    }
    Ok(())
}

fn rejected(message: String) -> AgentError {
    AgentError::new(ErrorCode::PreflightRejected, message)
}

/// A cheap first look: a `.py` or `.js` name anywhere in the command.
fn mentions_script(command: &str) -> bool {
    [".py", ".js", ".mjs", ".cjs"]
        .iter()
        .any(|ext| command.contains(ext))
}

fn mentions_interpreter(command: &str) -> bool {
    command
        .split(|c: char| {
            !(c.is_ascii_alphanumeric() || c == '.' || c == '/' || c == '_' || c == '-')
        })
        .any(|word| interpreter(word.rsplit('/').next().unwrap_or(word)).is_some())
}

/// `python`, `python3`, `python3.12`; `node`, `nodejs`.
fn interpreter(name: &str) -> Option<Lang> {
    if let Some(version) = name.strip_prefix("python") {
        if version.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return Some(Lang::Python);
        }
    }
    matches!(name, "node" | "nodejs").then_some(Lang::JavaScript)
}

fn is_script_name(word: &str, kind: Lang) -> bool {
    match kind {
        Lang::Python => word.ends_with(".py"),
        Lang::JavaScript => [".js", ".mjs", ".cjs"].iter().any(|e| word.ends_with(e)),
    }
}

/// The script operand and (for node) the preloads, from the interpreter's argv.
fn scripts(kind: Lang, argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        let a = arg.as_str();
        if a == "--" {
            out.extend(args.next().filter(|s| is_script_name(s, kind)).cloned());
            break;
        }
        match kind {
            Lang::JavaScript => {
                if matches!(a, "-r" | "--require" | "--import") {
                    out.extend(args.next().filter(|s| is_script_name(s, kind)).cloned());
                    continue;
                }
                if let Some(v) = a
                    .strip_prefix("--require=")
                    .or_else(|| a.strip_prefix("--import="))
                {
                    if is_script_name(v, kind) {
                        out.push(v.to_string());
                    }
                    continue;
                }
                // Inline code: no file to read.
                if matches!(a, "-e" | "--eval" | "-p" | "--print") {
                    break;
                }
                if matches!(
                    a,
                    "--loader"
                        | "--experimental-loader"
                        | "-C"
                        | "--conditions"
                        | "--env-file"
                        | "--title"
                        | "--input-type"
                ) {
                    args.next();
                    continue;
                }
            }
            Lang::Python => {
                if a == "-c" || a == "-m" || a.starts_with("-c") || a.starts_with("-m") {
                    break;
                }
                if matches!(a, "-W" | "-X" | "--check-hash-based-pycs") {
                    args.next();
                    continue;
                }
            }
        }
        if a.starts_with('-') && a.len() > 1 {
            continue;
        }
        if is_script_name(a, kind) {
            out.push(a.to_string());
        }
        break;
    }
    out
}

/// The script's real path, when it lies inside `cwd`.
fn inside(script: &str, cwd: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(cwd.join(script)).ok()?;
    let root = std::fs::canonicalize(cwd).ok()?;
    real.starts_with(&root).then_some(real)
}

fn check_script(script: &str, cwd: &Path, kind: Lang) -> Result<(), AgentError> {
    let Some(path) = inside(script, cwd) else {
        return Ok(());
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(());
    };
    if !meta.is_file() || meta.len() > MAX_SCRIPT_BYTES {
        return Ok(());
    }
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(());
    };
    let content = String::from_utf8_lossy(&bytes);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind_name = match kind {
        Lang::Python => "python",
        Lang::JavaScript => "node",
    };
    if let Some((token, at)) = first_token(&content, kind) {
        let line = content[..at].matches('\n').count() + 1;
        let bare = &token[1..];
        let advice = match kind {
            Lang::Python => {
                format!("In Python, use os.environ.get(\"{bare}\") instead of raw {token}.")
            }
            Lang::JavaScript => {
                format!("In Node.js, use process.env[\"{bare}\"] instead of raw {token}.")
            }
        };
        return Err(rejected(format!(
            "exec preflight: detected likely shell variable injection ({token}) in {kind_name} script: {name}:{line}.\n{advice}\n(If this is inside a string literal on purpose, escape it or restructure the code.)"
        )));
    }
    if kind == Lang::JavaScript {
        let first = content.lines().map(str::trim).find(|l| !l.is_empty());
        if let Some(first) = first.filter(|l| {
            l.strip_prefix("NODE").is_some_and(|rest| {
                rest.is_empty() || !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
        }) {
            return Err(rejected(format!(
                "exec preflight: JS file starts with shell syntax ({first}). This looks like a shell command, not JavaScript: run it in the shell, or fix {name}."
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in files {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        dir
    }

    fn run(command: &str, dir: &Path) -> Result<(), String> {
        check(command, dir, Some("/usr/local/bin:/usr/bin:/bin")).map_err(|e| e.message)
    }

    #[test]
    fn injected_shell_variables_are_refused_with_bs_text() {
        let d = dir_with(&[(
            "bad.py",
            "import json\n# model wrote shell syntax:\npayload = $DM_JSON\nprint(payload)\n",
        )]);
        let err = run("python bad.py", d.path()).unwrap_err();
        assert_eq!(
            err,
            "exec preflight: detected likely shell variable injection ($DM_JSON) in python script: bad.py:3.\nIn Python, use os.environ.get(\"DM_JSON\") instead of raw $DM_JSON.\n(If this is inside a string literal on purpose, escape it or restructure the code.)"
        );
        for cmd in [
            "python3 bad.py",
            "python3.11 -u bad.py",
            "env FOO=1 python bad.py",
            "python \"bad.py\"",
            "timeout 5 python -W ignore bad.py",
        ] {
            assert!(run(cmd, d.path()).is_err(), "{cmd}");
        }
    }

    #[test]
    fn node_scripts_and_preloads_are_checked() {
        let d = dir_with(&[
            ("bad.js", "const x = $DM_JSON;\n"),
            ("shell.js", "NODE \"$TMPDIR/hot.json\"\nconsole.log('hi')\n"),
            ("ok.js", "console.log(\"echo $HOME\")\n"),
        ]);
        assert!(run("node bad.js", d.path())
            .unwrap_err()
            .contains("In Node.js, use process.env[\"DM_JSON\"]"));
        assert!(run("node shell.js", d.path())
            .unwrap_err()
            .starts_with("exec preflight: JS file starts with shell syntax"));
        assert!(run("node --require ./bad.js ok.js", d.path()).is_err());
        assert!(run("node --import=./bad.js ok.js", d.path()).is_err());
        assert_eq!(run("node ok.js", d.path()), Ok(()));
        assert_eq!(run("node -e 'console.log(1)' bad.js", d.path()), Ok(()));
    }

    #[test]
    fn ambiguous_forms_fail_closed_and_unrelated_commands_pass() {
        let d = dir_with(&[("ok.py", "print('hi')\n")]);
        for cmd in [
            "cat ok.py | python",
            "cd . && python ok.py",
            "python ok.py; echo done",
            "python $(echo ok.py)",
            "bash -c 'python ok.py'",
        ] {
            assert_eq!(run(cmd, d.path()), Err(COMPLEX.to_string()), "{cmd}");
        }
        // B's decisions, through the whole preflight (the analyzer's split included).
        for cmd in [
            "bash --rcfile shell.rc -c \"python ok.py\"",
            "bash --noprofile --norc -c \"python ok.py\"",
            "bash -xc \"python ok.py\"",
            "bash -O extglob -c \"python ok.py\"",
            "bash -o errexit -c \"python ok.py\"",
            "bash -ceu \"python ok.py\"",
        ] {
            assert_eq!(run(cmd, d.path()), Err(COMPLEX.to_string()), "{cmd}");
        }
        for cmd in [
            "echo time python ok.py; cat",
            "echo ok.py; python --version",
            "node --version && ls *.py",
            "echo ok.py | node --version",
            "echo ok.py | node -c ok.js",
            "node -e \"console.log('ok.py')\" | cat",
        ] {
            assert_eq!(run(cmd, d.path()), Ok(()), "{cmd}");
        }
        for cmd in [
            "grep -n foo ok.py",
            "npm test && echo ok",
            "cat a.js | wc -l",
            "python --version",
            "python ok.py",
        ] {
            assert_eq!(run(cmd, d.path()), Ok(()), "{cmd}");
        }
    }

    #[test]
    fn scripts_outside_the_workdir_large_or_missing_are_not_read() {
        let outside = dir_with(&[("bad.py", "x = $DM_JSON\n")]);
        let work = dir_with(&[(
            "big.py",
            &format!("{}x = $DM_JSON\n", "#\n".repeat(300_000)),
        )]);
        let far = outside.path().join("bad.py");
        assert_eq!(
            run(&format!("python {}", far.display()), work.path()),
            Ok(())
        );
        assert_eq!(run("python big.py", work.path()), Ok(()));
        assert_eq!(run("python missing.py", work.path()), Ok(()));
    }
}
