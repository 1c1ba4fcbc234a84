//! An approved script stays the script that was approved (OpenClaw's binding of a run's script
//! operand): when a command is asked, the files it would run as programs (`python3 tool.py`, `bash
//! deploy.sh`, `./build.sh`) are fingerprinted, and after the answer, before anything spawns, they are
//! fingerprinted again. A file changed in between (the agent rewrote it while the user read the
//! request) is refused: the user approved other code.
//!
//! The fingerprint is the length and a keyed hash of the contents (SipHash with this process's random
//! keys: a command cannot make two different files collide without knowing the keys).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::analyze::Analysis;

/// Why a run was refused after its approval.
pub const CHANGED: &str = "SYSTEM_RUN_DENIED: approval script operand changed before execution";

/// The files a command runs as programs, as they were when it was asked.
pub struct ScriptBinding {
    keys: RandomState,
    files: Vec<(PathBuf, Option<(u64, u64)>)>,
}

impl ScriptBinding {
    /// Fingerprint what `analysis` would run as scripts, relative to `cwd`.
    pub fn bind(analysis: &Analysis, cwd: &Path) -> ScriptBinding {
        let keys = RandomState::new();
        let mut paths = Vec::new();
        collect(analysis, cwd, &mut paths);
        let files = paths
            .into_iter()
            .map(|p| {
                let print = fingerprint(&keys, &p);
                (p, print)
            })
            .collect();
        ScriptBinding { keys, files }
    }

    /// The bound files (for reports and tests).
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(p, _)| p.as_path())
    }

    /// The first bound file that is not what it was (changed, made, or removed since), if any.
    pub fn changed(&self) -> Option<&Path> {
        self.files
            .iter()
            .find(|(path, was)| fingerprint(&self.keys, path) != *was)
            .map(|(p, _)| p.as_path())
    }
}

/// Length and keyed hash of a regular file's contents; `None` for anything else (missing, a
/// directory, unreadable).
fn fingerprint(keys: &RandomState, path: &Path) -> Option<(u64, u64)> {
    let mut file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut hasher = keys.build_hasher();
    let mut buf = vec![0u8; 64 * 1024];
    let mut len = 0u64;
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        hasher.write(&buf[..n]);
        len += n as u64;
    }
    Some((len, hasher.finish()))
}

fn collect(analysis: &Analysis, cwd: &Path, out: &mut Vec<PathBuf>) {
    for segment in analysis.segments() {
        if let Some(inner) = &segment.inner {
            collect(inner, cwd, out);
        }
        for operand in script_operands(&segment.effective_argv) {
            let path = cwd.join(&operand);
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
}

/// Interpreters whose first operand is a script file, and their options that take a value.
fn interpreter(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "python" | "python2" | "python3" | "pypy" | "pypy3" => {
            &["-W", "-X", "--check-hash-based-pycs"]
        }
        "node" | "nodejs" => &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
        ],
        "bun" | "deno" | "tsx" | "ts-node" | "esno" | "jiti" | "vite-node" => &["-r", "--require"],
        "perl" | "ruby" | "php" => &["-I", "-M", "-r"],
        shell if is_shell(shell) => &["-O", "-o", "--rcfile", "--init-file"],
        _ => return None,
    })
}

/// Options after which no script file is run (inline code, a module, a version query).
const NO_SCRIPT: &[&str] = &[
    "-c",
    "-e",
    "-E",
    "-m",
    "-p",
    "--eval",
    "--print",
    "--version",
    "-V",
    "--help",
    "-h",
];

/// What `argv` runs as program files: the program itself when named by a path (`./build.sh`), and an
/// interpreter's script operand.
fn script_operands(argv: &[String]) -> Vec<String> {
    let Some(program) = argv.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if program.contains('/') {
        out.push(program.clone());
    }
    let name = super::inline_eval::interpreter_name(program);
    let Some(with_value) = interpreter(&name) else {
        return out;
    };
    let mut args = argv[1..].iter();
    // `deno run FILE`, `bun run FILE`: the subcommand first.
    let mut pending_run = matches!(name.as_str(), "deno" | "bun");
    while let Some(arg) = args.next() {
        if arg == "--" {
            if let Some(file) = args.next() {
                out.push(file.clone());
            }
            break;
        }
        if NO_SCRIPT.contains(&arg.as_str())
            || (name.starts_with("python") || is_shell(&name))
                && arg.starts_with('-')
                && !arg.starts_with("--")
                && arg.contains('c')
        {
            break;
        }
        if with_value.contains(&arg.as_str()) {
            args.next();
            continue;
        }
        if arg.starts_with('-') {
            continue;
        }
        if pending_run && arg == "run" {
            pending_run = false;
            continue;
        }
        out.push(arg.clone());
        break;
    }
    out
}

/// The shells the analysis knows, and mksh.
fn is_shell(name: &str) -> bool {
    super::analyze::SHELLS.contains(&name) || name == "mksh"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(cmd: &str) -> Vec<String> {
        script_operands(
            &cmd.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn the_files_a_command_runs_as_programs() {
        assert_eq!(ops("python3 tool.py --flag"), ["tool.py"]);
        assert_eq!(ops("python3.12 -u -W ignore tool.py"), ["tool.py"]);
        assert_eq!(ops("node -r ./hook.js app.js"), ["app.js"]);
        assert_eq!(ops("bash -x deploy.sh"), ["deploy.sh"]);
        assert_eq!(ops("bash -o errexit deploy.sh"), ["deploy.sh"]);
        assert_eq!(ops("./build.sh arg"), ["./build.sh"]);
        assert_eq!(ops("/usr/bin/python3 x.py"), ["/usr/bin/python3", "x.py"]);
        assert_eq!(ops("deno run main.ts"), ["main.ts"]);
        assert_eq!(ops("perl -I lib script.pl"), ["script.pl"]);
        for none in [
            "python3 -c x",
            "python3 -m pytest",
            "node -e x",
            "bash -c x",
            "bash -lc x",
            "node --version",
            "ls -la",
            "python3",
        ] {
            assert!(ops(none).is_empty(), "{none}");
        }
    }

    #[test]
    fn a_changed_removed_or_new_file_is_named_and_an_unchanged_one_is_not() {
        use crate::approval::analyze::{analyze, Context};
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "print(1)\n").unwrap();
        std::fs::write(dir.path().join("b.sh"), "echo b\n").unwrap();
        let ctx = Context {
            cwd: dir.path(),
            path: Some("/usr/bin:/bin"),
            home: None,
        };
        let analysis = analyze(
            "python3 a.py && sh -c 'bash b.sh' && python3 later.py",
            &ctx,
        );
        let bound = ScriptBinding::bind(&analysis, dir.path());
        let files: Vec<_> = bound
            .files()
            .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
            .collect();
        assert_eq!(files, ["a.py", "b.sh", "later.py"]);
        assert_eq!(bound.changed(), None);
        // Same length, other code.
        std::fs::write(dir.path().join("b.sh"), "echo c\n").unwrap();
        assert_eq!(bound.changed(), Some(dir.path().join("b.sh").as_path()));
        std::fs::write(dir.path().join("b.sh"), "echo b\n").unwrap();
        assert_eq!(bound.changed(), None);
        // A script that did not exist when asked appears.
        std::fs::write(dir.path().join("later.py"), "import os\n").unwrap();
        assert_eq!(bound.changed(), Some(dir.path().join("later.py").as_path()));
        std::fs::remove_file(dir.path().join("later.py")).unwrap();
        std::fs::remove_file(dir.path().join("a.py")).unwrap();
        assert_eq!(bound.changed(), Some(dir.path().join("a.py").as_path()));
    }
}
