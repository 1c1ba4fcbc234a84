//! What deny rules cannot see into, asked whenever a deny (or ask) rule exists: deny rules are a
//! convenience, not a boundary. A rule such as `Bash(rm:*)` matches what a command names; a program
//! that runs code given inline (`python3 -c`, `perl -e`, `node -e`, an awk program, `make -f -`), or
//! a file the same command made or replaced (`cp /usr/bin/rm ./x && ./x F`), runs what no name shows.
//! Analysis alone cannot close this (it would have to understand every interpreter), so such
//! commands are put to the user.

use super::analyze::{Analysis, Segment};

/// Interpreters and the options that hand them program text on the command line. A flag of these
/// letters bundled with others (`perl -lne`) counts too, for the one-letter ones.
const INLINE: &[(&[&str], &[&str])] = &[
    (&["perl"], &["-e", "-E"]),
    (&["ruby", "irb"], &["-e"]),
    (
        &["node", "nodejs", "bun"],
        &["-e", "--eval", "-p", "--print"],
    ),
    (&["deno"], &["eval"]),
    (&["php"], &["-r", "-B", "-R", "-E"]),
    (&["lua", "luajit"], &["-e"]),
    (&["Rscript", "R"], &["-e"]),
    (&["make", "gmake"], &["--eval", "-E"]),
];

/// Python modules whose command line or input is program text.
const EVALUATING_MODULES: &[&str] = &["timeit", "pdb", "code", "IPython", "asyncio", "doctest"];

/// Why a deny rule cannot see what `analysis` runs, if anything in it is such a blind spot.
pub fn first(analysis: &Analysis) -> Option<String> {
    for (n, s) in analysis.segments().enumerate() {
        if let Some(inner) = &s.inner {
            if let Some(why) = first(inner) {
                return Some(why);
            }
        }
        if let Some(why) = inline_code(s).or_else(|| made_here(s, n)) {
            return Some(why);
        }
    }
    None
}

/// The program's name as the run will see it: what `PATH` found (or the word itself).
fn program(s: &Segment) -> Option<String> {
    let raw = s.effective_argv.first()?;
    let name = if s.resolution.executable_name.is_empty() {
        raw.rsplit('/').next().unwrap_or(raw).to_string()
    } else {
        s.resolution.executable_name.clone()
    };
    Some(name)
}

fn inline_code(s: &Segment) -> Option<String> {
    let name = program(s)?;
    let typed = s.effective_argv.first()?;
    program_text_in(typed, &name, &s.effective_argv[1..], true, s.dir.as_deref())
}

/// A file name that is a stream, not a file a person could read first: standard input, a
/// descriptor, a FIFO of the process's own (`-`, `/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`), by
/// any spelling (`/dev//stdin`, `/dev/./fd/0`, `/dev/../dev/stdin`), or a name that leads to one:
/// a link (`s -> /dev/stdin`, `fds -> /proc/self/fd` then `fds/0`, made by an earlier command),
/// followed from `dir` (the command's directory, where the analyzer knows it) for a relative
/// name, or a device, FIFO or socket found there.
pub(crate) fn is_stream(f: &str, dir: Option<&std::path::Path>) -> bool {
    use super::resolve::{walk_links, LinkWalk};
    use std::path::{Path, PathBuf};
    if f == "-" {
        return true;
    }
    let named = |p: &Path| {
        let t = p.to_string_lossy();
        t == "/dev/stdin"
            || t == "/dev/tty"
            || t.starts_with("/dev/fd/")
            || t.starts_with("/dev/pts/")
            || (t.starts_with("/proc/") && t.contains("/fd/"))
    };
    let at: PathBuf = match dir {
        _ if f.starts_with('/') => PathBuf::from(f),
        Some(d) => d.join(f),
        None => return false,
    };
    // Read with `..` taken lexically (`/dev/../dev/stdin`, `fds/../fds/0`) and, where that differs,
    // physically, as the kernel walks it: a stream either way counts (fail closed).
    let lexical = crate::sandbox::policy::normalize(&at);
    if named(&lexical) || (lexical != at && walk_links(&at, named) == LinkWalk::Hit) {
        return true;
    }
    match walk_links(&lexical, named) {
        // A chain of links too long to follow is not a file a person reads first either.
        LinkWalk::Hit | LinkWalk::TooLong => true,
        // A device that reads as nothing or as noise is no program text (`python3 /dev/null`).
        LinkWalk::End(end) => {
            let quiet = [
                "/dev/null",
                "/dev/zero",
                "/dev/full",
                "/dev/random",
                "/dev/urandom",
            ];
            !quiet.iter().any(|q| end == Path::new(q)) && is_special_file(&end)
        }
    }
}

/// A device, FIFO or socket: what a program reads as a stream, not as a file.
#[cfg(unix)]
fn is_special_file(p: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).is_ok_and(|m| {
        let t = m.file_type();
        t.is_char_device() || t.is_fifo() || t.is_socket() || t.is_block_device()
    })
}

#[cfg(not(unix))]
fn is_special_file(_: &std::path::Path) -> bool {
    false
}

/// Why the program `typed` (resolved to `resolved`) with arguments `args` runs program text no
/// name shows (given inline, on its input, through a stream, or loaded by an option), if it does.
/// `anywhere`: an inline-code option counts wherever it stands (deny rules, which fail closed),
/// not only before the script (`node app.js -e` passes `-e` to the script).
pub(crate) fn program_text_in(
    typed: &str,
    resolved: &str,
    args: &[String],
    anywhere: bool,
    dir: Option<&std::path::Path>,
) -> Option<String> {
    let is_stream = |f: &str| is_stream(f, dir);
    let names = super::program_names::names(typed, resolved);
    let is = |list: &[&str]| names.iter().any(|n| list.contains(&n.as_str()));
    let name = resolved.to_string();
    let python = names
        .iter()
        .any(|n| n.starts_with("python") || n.starts_with("pypy"));
    // (`busybox awk ...` is awk with the words after `awk`.)
    let busybox_awk = is(&["busybox"]) && args.first().is_some_and(|a| a == "awk");
    let awk = is(&["awk", "gawk", "mawk", "nawk", "original-awk"]) || busybox_awk;
    let args = if busybox_awk { &args[1..] } else { args };
    if awk {
        // A program file read from a stream is program text too (`awk -f /dev/stdin`).
        let mut file: Option<&str> = None;
        for (i, a) in args.iter().enumerate() {
            if a == "-f" || a == "--file" {
                file = args.get(i + 1).map(String::as_str).or(Some("-"));
                break;
            }
            if let Some(f) = a.strip_prefix("--file=").or_else(|| a.strip_prefix("-f")) {
                file = Some(f);
                break;
            }
        }
        match file {
            None => return Some(format!("{name} runs the program text it is given")),
            Some(f) if is_stream(f) => {
                return Some(format!("{name} -f reads its program from a stream"))
            }
            Some(_) => {}
        }
    }
    // perl's -M and -m write `use MODULE ...;` into the program: `-M5;system(...)` is code.
    if is(&["perl"])
        && args.iter().any(|a| {
            (a.starts_with("-M") || a.starts_with("-m"))
                && a[2..].contains(|c: char| !(c.is_ascii_alphanumeric() || "_:=,.".contains(c)))
        })
    {
        return Some(format!(
            "{name} -M puts program text of its own into the program"
        ));
    }
    // perl's debugger runs the commands on its input (`printf 'unlink q(x)' | perl -d s.pl`).
    if is(&["perl"])
        && args
            .iter()
            .take_while(|a| a.starts_with('-') && *a != "--" && *a != "-")
            // (A cluster that starts with an option taking an attached value, `-Mdiagnostics`,
            // `-i.old`, is that value.)
            .any(|a| {
                !a.starts_with("--")
                    && a[1..].starts_with(|c: char| {
                        c.is_ascii_alphabetic() && !"MmIxeEVCliF".contains(c)
                    })
                    && a[1..].contains('d')
            })
    {
        return Some(format!("{name} -d runs the debugger commands on its input"));
    }
    // node loads a module an option names; a `data:` URL is program text.
    if is(&["node", "nodejs", "bun"]) {
        let mut value_next = false;
        for a in args {
            let value = if std::mem::take(&mut value_next) {
                Some(a.as_str())
            } else {
                let (n, v) = a
                    .split_once('=')
                    .map_or((a.as_str(), None), |(n, v)| (n, Some(v)));
                if matches!(
                    n,
                    "-r" | "--require" | "--import" | "--loader" | "--experimental-loader"
                ) {
                    value_next = v.is_none();
                    v
                } else {
                    None
                }
            };
            if value.is_some_and(|v| v.starts_with("data:") || is_stream(v)) {
                return Some(format!("{name} loads program text an option gives"));
            }
        }
    }
    if python {
        // `-c CODE`, bundled (`-Sc`), or a program read from standard input (no script operand, or
        // `-`). The options are walked with their values (`-X dev`, `-W ignore`): a value is not the
        // script. `-m MODULE` runs a module, as a script would.
        let table = super::inline_eval::interpreter_name(&name);
        let mut code = false;
        let mut script = false;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            if a == "--" {
                script = args.get(i + 1).is_some_and(|s| s != "-");
                break;
            }
            if a == "-" || !a.starts_with('-') {
                script = !is_stream(a);
                break;
            }
            if !a.starts_with("--") && a.len() > 1 && a.ends_with('c') {
                code = true;
                break;
            }
            // `-i`: after the script, Python reads more program text from its input
            // (`echo "import os; ..." | python3 -i empty.py`), bundled too (`-Si`).
            if !a.starts_with("--") && a.len() > 1 && a[1..].contains('i') {
                return Some(format!(
                    "{name} -i runs the program text on its input after the script"
                ));
            }
            if a == "-m" || (!a.starts_with("--") && a.ends_with('m') && a.len() > 1) {
                // Modules that run program text from their arguments or input (`-m timeit -s
                // CODE`, `-m pdb -c CMD`, `-m code`): inline code by another door.
                let module = args.get(i + 1).map(String::as_str).unwrap_or("");
                code = EVALUATING_MODULES.contains(&module);
                script = !code;
                break;
            }
            i += if super::inline_eval::takes_value(&table, a) {
                2
            } else {
                1
            };
        }
        if code || !script && !args.iter().any(|a| a == "--version" || a == "-V") {
            return Some(format!(
                "{name} runs program text given inline or on its input"
            ));
        }
        return None;
    }
    for n in &names {
        if let Some(why) = program_from_stdin(n, args, dir) {
            return Some(why);
        }
    }
    if is(&["make", "gmake"]) {
        // A makefile read from a stream (`-`, `/dev/stdin`, `/dev/fd/N`, `/proc/.../fd/N`, a
        // here-document): its recipes are in no file and no name. GNU make takes any unambiguous
        // prefix of a long option (`--fil=`, `--makef`, `--ev=`).
        let long = |a: &str, full: &str| {
            let n = a.split_once('=').map_or(a, |(n, _)| n);
            n.len() >= 4 && n.starts_with("--") && full.starts_with(n)
        };
        let is_file_option = |a: &str| a == "-f" || long(a, "--file") || long(a, "--makefile");
        let from_stream = args
            .windows(2)
            .any(|w| is_file_option(&w[0]) && !w[0].contains('=') && is_stream(&w[1]))
            || args.iter().any(|a| {
                let value = if a.starts_with("--") {
                    a.split_once('=')
                        .filter(|_| is_file_option(a))
                        .map(|(_, v)| v)
                } else {
                    a.strip_prefix("-f")
                };
                value.is_some_and(|f| !f.is_empty() && is_stream(f))
            });
        if from_stream {
            return Some(format!("{name} -f reads a makefile from a stream"));
        }
        if args.iter().any(|a| a == "-E" || long(a, "--eval")) {
            return Some(format!(
                "{name} --eval runs makefile text given on its command line"
            ));
        }
    }
    for (programs, flags) in INLINE {
        if !anywhere || !programs.iter().any(|p| names.iter().any(|n| n == p)) {
            continue;
        }
        let hit = args.iter().any(|a| {
            let long = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
            flags.contains(&long)
                || flags.iter().any(|f| {
                    f.len() == 2
                        && f.starts_with('-')
                        && a.starts_with('-')
                        && !a.starts_with("--")
                        && a[1..].chars().all(|c| c.is_ascii_alphabetic())
                        && a[1..].contains(&f[1..])
                })
        });
        if hit {
            return Some(format!(
                "{name} runs program text given on its command line"
            ));
        }
    }
    None
}

/// node, perl, ruby, php and tclsh read their program from standard input when no script operand is given
/// (or the script is `-`), as python does: `echo 'unlink "F"' | perl`, `node - <<EOF`. The options
/// walked are the ones that take a separate value, so that value is not read as the script;
/// `--version` and `--help` run nothing.
fn program_from_stdin(
    name: &str,
    args: &[String],
    dir: Option<&std::path::Path>,
) -> Option<String> {
    let is_stream = |f: &str| is_stream(f, dir);
    // tclsh8.6 is tclsh (see `program_names`).
    let names = super::program_names::names(name, "");
    let name = ["tclsh", "wish"]
        .into_iter()
        .find(|t| names.iter().any(|n| n == t))
        .unwrap_or(name);
    if !matches!(
        name,
        "tclsh" | "wish" | "node" | "nodejs" | "perl" | "ruby" | "php"
    ) {
        return None;
    }
    let mut i = 0;
    let mut script = false;
    while let Some(a) = args.get(i) {
        if a == "-" {
            break;
        }
        if a == "--" {
            script = args.get(i + 1).is_some_and(|s| s != "-");
            break;
        }
        // php's script may also come as `-f FILE`.
        // (A script that is a stream, `/dev/stdin` or `/proc/self/fd/0`, is the input again.)
        if !a.starts_with('-') {
            script = !is_stream(a);
            break;
        }
        if name == "php" && a == "-f" && i + 1 < args.len() {
            script = !is_stream(&args[i + 1]);
            break;
        }
        // ruby's -v turns on verbose mode, then runs what it reads; the others print a version.
        if matches!(a.as_str(), "--version" | "--help" | "-h") || (a == "-v" && name != "ruby") {
            return None;
        }
        i += if super::inline_eval::takes_value(name, a) {
            2
        } else {
            1
        };
    }
    (!script).then(|| format!("{name} runs a program read from its input"))
}

/// A program named by a path (`./x`, `bin/tool`, `/tmp/x`) that is not there yet, or that an earlier
/// command of the same line may have made or replaced.
fn made_here(s: &Segment, position: usize) -> Option<String> {
    let raw = s.effective_argv.first()?;
    if !raw.contains('/') {
        return None;
    }
    if s.resolution.resolved_path.is_none() {
        return Some(format!(
            "{raw} is not there yet: an earlier command may make it"
        ));
    }
    let system = super::classify::SYSTEM_DIRS.iter().any(|d| {
        raw.strip_prefix(d)
            .is_some_and(|rest| rest.starts_with('/'))
    });
    (position > 0 && !system).then(|| {
        format!("{raw} is run after other commands of the same line, which may have replaced it")
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::super::analyze::{analyze, Context};
    use super::*;
    use std::path::Path;

    fn why(cmd: &str) -> Option<String> {
        let a = analyze(
            cmd,
            &Context {
                cwd: Path::new("/"),
                path: Some("/usr/bin:/bin"),
                home: None,
            },
        );
        assert!(a.ok, "{cmd}: {:?}", a.reason);
        first(&a)
    }

    #[test]
    fn inline_programs_and_files_made_in_the_line_are_blind_spots() {
        for cmd in [
            "python3 -c 'import os; os.remove(\"F\")'",
            "python3 -Sc 'x'",
            "echo 'import os' | python3",
            "perl -e 'unlink \"F\"'",
            "perl -lne 'print' f",
            "ruby -e 'File.delete(\"F\")'",
            "node -e 'require(\"fs\").rmSync(\"F\")'",
            "node --eval=x",
            "awk 'BEGIN{system(\"rm F\")}'",
            "make -f -",
            "php -r 'unlink(\"F\");'",
            "cp /usr/bin/touch ./x && ./x F",
            "./not-there-yet F",
            "echo hi && sh -c 'python3 -c 1'",
            // A program read from standard input.
            "echo 'unlink q(F)' | perl",
            "echo x | perl -",
            "echo x | perl -w -I lib",
            "echo x | node",
            "echo x | node -r ./x.js",
            "echo x | node -",
            "echo x | ruby -I lib",
            "echo x | ruby -v",
            "echo x | php",
            "echo x | php -d a=b",
        ] {
            assert!(why(cmd).is_some(), "{cmd}");
        }
        for cmd in [
            "python3 script.py",
            "python3 --version",
            "node server.js",
            "perl script.pl",
            "awk -f prog.awk f",
            "make test",
            "ls -la",
            "/usr/bin/env ls",
            "echo a && /bin/ls",
            "node --version",
            "node -r ./x.js app.js",
            "perl -w -I lib script.pl",
            "ruby -I lib app.rb",
            "php -f x.php",
            "php -v",
        ] {
            assert_eq!(why(cmd), None, "{cmd}");
        }
    }
}
