//! What a simple command runs besides its own program, and what makes the analyzer unsure of it.
//!
//! Two questions per command: which other commands does it run that a deny rule must see
//! (`xargs rm`, `find -exec rm`), and is there anything the analyzer does not model exactly (a
//! compound-command keyword, a builtin that changes the shell or evaluates text, a program that
//! dispatches to commands it builds at run time). The second makes the command *inexact*: never
//! auto-allowed, and asked whenever a deny rule exists, because the deny rule cannot see past it.

use super::getopt;

/// Reserved words that open, continue or close a compound command, at command position.
/// `!` (pipeline negation) and `time` (a wrapper) are handled by the caller.
pub const COMPOUND_KEYWORDS: &[&str] = &[
    "{", "}", "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "for", "in",
    "case", "esac", "select", "function", "coproc", "[[", "]]",
];

/// Builtins that evaluate text as code, change the shell's state for the commands after them
/// (variables, options, functions, the command hash, the directory), or read their arguments
/// as arithmetic (where `a[$(cmd)]` runs `cmd`).
const SHELL_STATE_BUILTINS: &[&str] = &[
    "eval",
    "source",
    ".",
    "trap",
    "alias",
    "unalias",
    "enable",
    "hash",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "unset",
    "set",
    "shopt",
    "let",
    "read",
    "mapfile",
    "readarray",
    "fc",
    "history",
    "bind",
    "complete",
    "compgen",
    "getopts",
    "ulimit",
    "umask",
    "pushd",
    "popd",
];

/// Does the command `argv` (after wrappers), named `name`, change the shell's state for the commands
/// after it (variables, options, functions, aliases, the command hash, the directory stack)? Then
/// nothing after it is exact: `BASH_CMDS[grep]=/bin/sh; grep ...` runs `sh`, `printf -v PATH ...;
/// cat` runs another `cat`. Says what, when it does.
pub fn changes_shell_state(name: &str, argv: &[String]) -> Option<String> {
    if SHELL_STATE_BUILTINS.contains(&name) {
        return Some(format!("the builtin {name}"));
    }
    // `printf -v NAME` assigns its output to a variable; options end at the format.
    if name == "printf" {
        let sets = argv[1..]
            .iter()
            .take_while(|a| a.starts_with('-') && *a != "--")
            .any(|a| a.starts_with("-v"));
        if sets {
            return Some("printf -v".to_string());
        }
    }
    // `wait -p NAME` assigns the id of the job it waited for (`wait -n -p PATH` sets PATH).
    if name == "wait" {
        let sets = argv[1..]
            .iter()
            .take_while(|a| a.starts_with('-') && *a != "--")
            .any(|a| a.contains('p'));
        if sets {
            return Some("wait -p".to_string());
        }
    }
    None
}

/// Why bash may run code hidden in an operand it reads as a variable name, if it may: `test -v
/// NAME` (and `-R`, and in `[ ... ]`), `printf -v NAME` and `wait -p NAME` evaluate a subscripted
/// NAME (`a[$(cmd)]`, `` a[`cmd`] ``, `BASH_ALIASES[$(cmd)]`), running `cmd`, while no word of the
/// argv names it. Only a plain identifier is seen exactly; a word that may expand (a glob, braces)
/// where such a name or option can stand is not either, since bash evaluates a name a glob
/// produced all the same. `args` are the words after the command name, `expands` parallel to them.
/// (`read`, `mapfile`, `declare`, `let`, `getopts`... are inexact whatever their operands.)
/// Checked against bash 5.2: `test`'s `-eq`-style comparisons, `printf %d`, `shift`, `exit`,
/// `return`, `break` and `kill` read their operands as plain integers and evaluate nothing.
pub fn evaluated_name(name: &str, args: &[String], expands: &[bool]) -> Option<String> {
    let expands_at = |i: usize| expands.get(i).copied().unwrap_or(false);
    let not_plain = |option: &str, var: &str| {
        format!(
            "{name} {option} {var}: bash evaluates a variable name that is not a plain identifier (a subscript can run commands)"
        )
    };
    // The NAME of an option that takes one (`-v NAME`, `-vNAME`): attached to it, or the next word
    // (which moves `i` on). Why it is not a plain identifier, if it is not.
    let option_variable = |attached: &str, i: &mut usize, option: &str| {
        let (var, var_expands) = if attached.is_empty() {
            *i += 1;
            (
                args.get(*i).map(String::as_str).unwrap_or(""),
                expands_at(*i),
            )
        } else {
            (attached, false)
        };
        (var_expands || !super::lexer::is_name(var)).then(|| not_plain(option, var))
    };
    match name {
        "test" | "[" => {
            // `]` closes `[ ... ]`; it is no operand.
            let n = if name == "[" && args.last().is_some_and(|w| w == "]") {
                args.len() - 1
            } else {
                args.len()
            };
            // test has no option syntax: `-v` may stand anywhere (`test -n x -a -v NAME`,
            // `test ! -v NAME`, `test \( -v NAME \)`), so every `-v` or `-R` is taken as one.
            for (i, word) in args[..n].iter().enumerate() {
                if expands_at(i) {
                    return Some(format!(
                        "{name}: {word} may expand to words bash's test reads as `-v NAME`"
                    ));
                }
                if matches!(word.as_str(), "-v" | "-R") {
                    if let Some(var) = args[..n].get(i + 1) {
                        if !super::lexer::is_name(var) {
                            return Some(not_plain(word, var));
                        }
                    }
                }
            }
            None
        }
        "printf" => {
            // bash's printf takes `-v NAME` (attached too, and repeated: the last one counts)
            // before the format.
            let mut i = 0;
            while let Some(word) = args.get(i) {
                if expands_at(i) {
                    return Some(format!(
                        "printf: {word} may expand to `-v NAME` before the format"
                    ));
                }
                // The first word that is not `-v...` is the format (or `--`).
                let attached = word.strip_prefix("-v")?;
                if let Some(why) = option_variable(attached, &mut i, "-v") {
                    return Some(why);
                }
                i += 1;
            }
            None
        }
        "wait" => {
            // bash's wait: `-f`, `-n`, `-p NAME`, bundled (`-np NAME`), attached (`-pNAME`) or
            // repeated (the last one counts).
            let mut i = 0;
            while let Some(word) = args.get(i) {
                if expands_at(i) {
                    return Some(format!("wait: {word} may expand to `-p NAME`"));
                }
                if word == "--" || word == "-" || !word.starts_with('-') {
                    return None;
                }
                if let Some(at) = word.find('p') {
                    if let Some(why) = option_variable(&word[at + 1..], &mut i, "-p") {
                        return Some(why);
                    }
                }
                i += 1;
            }
            None
        }
        _ => None,
    }
}

/// Programs that run other commands named in their arguments or built at run time, which the
/// analysis does not unwrap.
pub(crate) const DISPATCHERS: &[&str] = &[
    "watch",
    "flock",
    "chroot",
    "unshare",
    "nsenter",
    "setpriv",
    "runuser",
    "su",
    "script",
    "parallel",
    "strace",
    "ltrace",
    "systemd-run",
    "sg",
    "newgrp",
    "ssh",
    "expect",
    "sudo",
    "doas",
    "chrt",
    "ionice",
    "setsid",
    "taskset",
    "pkexec",
    "dbus-launch",
    "xvfb-run",
    "time",
    "prlimit",
    "fakeroot",
    "dbus-run-session",
    // Interactive tools that run shell commands given in their arguments or read from their
    // input (`vim -c '!rm x'`, `ed` reading `!rm x`, gdb's `shell`, sqlite3's `.shell`).
    "vim",
    "vi",
    "nvim",
    "view",
    "vimdiff",
    "ex",
    "ed",
    "gdb",
    "sqlite3",
    "emacs",
    // Terminal multiplexers, profilers and checkers that start the command they are given.
    "tmux",
    "screen",
    "valgrind",
    "perf",
    "firejail",
    "bwrap",
    // Runs every program in the directory it is given.
    "run-parts",
    "ssh-agent",
    "gpg-agent",
    "entr",
    "watchexec",
    "nodemon",
    "concurrently",
    "cross-env",
    "dotenv",
    "env-cmd",
    "npm-run-all",
    "run-p",
    "run-s",
    "xdg-open",
    "run-mailcap",
    "see",
    "edit",
    "chronic",
    "ifne",
    "pee",
    "zrun",
    "lckdo",
    "mispipe",
    "vipe",
    "toybox",
    "jrunscript",
    "jjs",
    "jshell",
    // Found by an outside round (2026-11-27), each running the program in its arguments: loggers,
    // OOM and scheduling knobs, tracers and profilers, emulators, test and build helpers.
    "logsave",
    "choom",
    "uclampset",
    "runcon",
    "sotruss",
    "memusage",
    "heaptrack",
    "gp-collect-app",
    "qemu-user",
    "wine",
    "wine64",
    "lli",
    "not",
    "make-first-existing-target",
    "debconf-apt-progress",
    "pg_virtualenv",
    "systemd-cat",
    "systemd-inhibit",
    "systemd-socket-activate",
    "scriptlive",
    "msgexec",
    "msgfilter",
    // Import the module a name names, from the current directory first.
    "pydoc",
    // Second round: a debugger, a terminal wrapper.
    "lldb",
    "luit",
    // Seventh round: LLVM's tools that run a program or object code, and the JDK's that act on
    // another JVM (`jcmd PID JVMTI.agent_load`) or debug one.
    "llvm-reduce",
    "bugpoint",
    "llvm-jitlink",
    "llvm-rtdyld",
    "llvm-exegesis",
    "jcmd",
    "jdb",
    // Eleventh round: runs ssh with the options it is given (`-o ProxyCommand`, `-F`).
    "ssh-copy-id",
    // Fifth round: programs that read commands from their input (a heredoc), shell escapes
    // included (`\!` in psql, `syscmd` in m4, `!` in dc and sftp), and schedulers that run them
    // later.
    "psql",
    "mysql",
    "mariadb",
    "m4",
    "dc",
    "sftp",
    "ftp",
    "lftp",
    "at",
    "batch",
    "crontab",
];

/// What the analysis learned about one command's program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dispatch {
    /// Why the analyzer cannot see exactly what runs, if it cannot.
    pub inexact: Option<String>,
    /// Commands it runs that deny rules must also see (argv, without the words read at run time).
    pub runs: Vec<Vec<String>>,
}

/// Judge the command `argv` (after wrappers), named `name` (its basename). `expands` is parallel
/// to `argv`: whether bash may expand the word into other words.
pub fn dispatch(name: &str, argv: &[String], expands: &[bool]) -> Dispatch {
    let mut d = Dispatch::default();
    if let Some(why) = runs_argument_command(name, argv, expands) {
        d.inexact = Some(why);
        // `git bisect run CMD ARGS`: deny rules see CMD.
        if let Some(at) = argv.iter().position(|a| a == "run") {
            if name == "git" && argv[..at].iter().any(|a| a == "bisect") {
                d.runs.push(argv[at + 1..].to_vec());
            }
        }
        return d;
    }
    if SHELL_STATE_BUILTINS.contains(&name) {
        d.inexact = Some(format!(
            "the shell builtin {name} evaluates text or changes the shell for the commands after it"
        ));
        if matches!(name, "eval" | "trap") {
            // The words are shell text; a deny rule sees them as a command line of their own,
            // split naively (still asked whenever a deny rule exists).
            let text = argv[1..].join(" ");
            d.runs
                .push(text.split_whitespace().map(String::from).collect());
        }
    } else if name == "jobs" && argv[1..].iter().any(|a| a == "-x") {
        // `jobs -x COMMAND ARGS` runs COMMAND (with job specs replaced by pids).
        d.inexact = Some("jobs -x runs the command after it".into());
        let at = argv.iter().position(|a| a == "-x").unwrap_or(0);
        d.runs.push(argv[at + 1..].to_vec());
    } else if name == "command_not_found_handle" {
        d.inexact = Some("command_not_found_handle runs whatever a lookup misses".into());
    } else if name == "xargs" {
        d.inexact = Some("xargs runs a command with arguments read at run time".into());
        match xargs_command(&argv[1..]) {
            Ok(cmd) => d.runs.push(cmd),
            Err(why) => d.inexact = Some(format!("xargs: {why}")),
        }
    } else if name == "find" {
        let runs = find_commands(&argv[1..]);
        if !runs.is_empty() {
            d.inexact = Some("find -exec runs a command for every file it finds".into());
            d.runs = runs;
        }
    } else if DISPATCHERS.contains(&name) || matches!(name, "command" | "builtin" | "exec") {
        // `command`, `builtin` and `exec` reach here only where they are not the shell's own
        // (after env, nice...), as programs of that name: whatever they are, they are not seen.
        d.inexact = Some(format!(
            "{name} runs other commands the analyzer does not unwrap"
        ));
        // The words after the options are often the command: let deny rules see every suffix.
        for i in 1..argv.len() {
            if !argv[i].starts_with('-') {
                d.runs.push(argv[i..].to_vec());
            }
        }
    } else if name == "service" && argv.get(1).is_some_and(|s| s.contains('/')) {
        // `service NAME` runs /etc/init.d/NAME: a name with a slash reaches any script.
        d.inexact = Some(format!(
            "service {}: a name with a slash runs a script outside /etc/init.d",
            argv[1]
        ));
    } else if name == "git" && git_runs_config(&argv[1..]) {
        d.inexact = Some(
            "git -c / --config-env / --exec-path can make git run any command (aliases, pagers, hooks)"
                .into(),
        );
    }
    if d.inexact.is_none() {
        d.inexact = super::readonly::not_reading(argv, expands);
    }
    d
}

/// Why `argv` runs a shell command named in its own
/// arguments, if it may: sed's `e` command or flag (or a script that does not parse with
/// certainty, or one read from a file), tar's `--to-command`, `--checkpoint-action`, `-I` /
/// `--use-compress-program`, `--rsh-command`, `-F` / `--info-script` / `--new-volume-script`, zip's
/// `-TT` / `--unzip-command`, `git difftool -x`, `git rebase -x`, `git bisect run`, `git submodule
/// foreach`, `git filter-branch`. Long options are taken by any prefix (argp and getopt_long take
/// unique abbreviations); a short cluster holding the letter counts, whatever it means there.
/// A word bash may expand (`expands`, parallel to `argv`) can become such an option or script (a
/// file named `--to-command=x` matched by `*`), so for sed, tar and zip, and after those git
/// subcommands, it counts as one.
fn runs_argument_command(name: &str, argv: &[String], expands: &[bool]) -> Option<String> {
    if let Some(why) = super::command_options::runs(&[name.to_string()], argv) {
        return Some(why);
    }
    let args = argv.get(1..).unwrap_or(&[]);
    let expands_from = |i: usize| expands.iter().skip(1 + i).any(|e| *e);
    if matches!(name, "sed" | "gsed" | "tar" | "gtar" | "bsdtar" | "zip") && expands_from(0) {
        return Some(format!(
            "{name}: a word bash may expand can become an option or script that runs a command"
        ));
    }
    // Any program with options that run a command: a word whose expansion can begin with `-` or `+`
    // (braces or a glob at its start: `find . {-exec,sh,-c,...,\;}`, `sort -u *` beside a file
    // named `--compress-program=sh`) can become one. A word with a plain first character
    // (`src/*.ts`) cannot.
    // (`{}` and braces without a `,` or `..` are no expansion.) Words after `--` are operands.
    let may_become_option = |(a, e): (&String, &bool)| {
        *e && match a.chars().next() {
            Some('{') => a.contains(',') || a.contains(".."),
            Some(c) => matches!(c, '*' | '?' | '[' | '@' | '!' | '+' | '-'),
            None => false,
        }
    };
    let before_dashes = argv
        .iter()
        .zip(expands)
        .skip(1)
        .take_while(|(a, _)| a.as_str() != "--");
    let names = [name.to_string()];
    let with_options = if name == "git" {
        // git's options that run a command belong to a few subcommands (and to git itself,
        // before the subcommand): `git add *.rs` stays exact.
        let sub = super::command_options::subcommand("git", args);
        let at = sub.map_or(args.len(), |(i, _)| i);
        let running = sub.is_some_and(|(_, s)| super::command_options::git_subcommand_runs(s));
        let mut words = before_dashes.enumerate();
        words.any(|(i, w)| (i <= at || running) && may_become_option(w))
    } else {
        (super::command_options::has_running_options(&names)
            || matches!(name, "find" | "man" | "less"))
            && { before_dashes }.any(may_become_option)
    };
    if with_options {
        return Some(format!(
            "{name}: a word bash may expand can become an option that runs a command"
        ));
    }
    // Options as `command_options` reads them: long ones by prefix, short ones in a cluster.
    let long_prefix = |a: &str, longs: &[&str]| -> Option<String> {
        super::command_options::abbreviated_long(a, longs).map(str::to_string)
    };
    let short_has =
        |a: &str, letters: &[char]| super::command_options::cluster_letter(a, letters).is_some();
    match name {
        // man runs the pager or browser an option names (`man -P 'sh -c ...' ls`).
        "man" => args
            .iter()
            .find(|a| {
                matches!(a.as_str(), "-P" | "-H" | "--pager" | "--html")
                    || a.starts_with("--pager=")
                    || a.starts_with("--html=")
                    || (a.starts_with("-P") && !a.starts_with("--"))
                    || (a.starts_with("-H") && !a.starts_with("--"))
            })
            .map(|a| format!("man {a} runs the program it names as the pager or browser")),
        "sed" | "gsed" => sed_runs(args),
        "tar" | "gtar" | "bsdtar" => {
            const LONGS: &[&str] = &[
                "--to-command",
                "--checkpoint-action",
                "--use-compress-program",
                "--rsh-command",
                "--info-script",
                "--new-volume-script",
                "--rmt-command",
            ];
            for (i, a) in args.iter().enumerate() {
                if a == "--" {
                    break;
                }
                // `--checkpoint[=N]` is an option of its own, matched exactly before prefixes.
                let exact_other =
                    a.split_once('=').map_or(a.as_str(), |(n, _)| n) == "--checkpoint";
                if let (Some(n), false) = (long_prefix(a, LONGS), exact_other) {
                    return Some(format!("tar {n} runs a command"));
                }
                // Old-style keys (`tar cIf prog x.tar`) or a short cluster (`-xIprog`, `-F x`).
                let keys = i == 0 && !a.starts_with('-');
                if short_has(a, &['I', 'F']) || keys && a.contains(['I', 'F']) {
                    return Some(format!(
                        "tar {a}: -I (compress program) or -F (volume script) runs a command"
                    ));
                }
            }
            None
        }
        "zip" => args.iter().find_map(|a| {
            if let Some(n) = long_prefix(a, &["--unzip-command"]) {
                return Some(format!("zip {n} runs a command"));
            }
            (a.starts_with('-') && !a.starts_with("--") && a.contains("TT"))
                .then(|| format!("zip {a}: -TT runs a command"))
        }),
        "git" => {
            // git's own options, then the subcommand.
            let i = super::command_options::subcommand("git", args).map_or(args.len(), |(i, _)| i);
            if expands_from(i)
                && args.get(i).is_some_and(|sub| {
                    expands.get(1 + i).copied().unwrap_or(false)
                        || matches!(
                            sub.as_str(),
                            "difftool" | "rebase" | "bisect" | "submodule" | "filter-branch"
                        )
                })
            {
                return Some(
                    "git: a word bash may expand can become a subcommand or option that runs a command"
                        .into(),
                );
            }
            let sub = args.get(i)?.as_str();
            let rest = args.get(i + 1..).unwrap_or(&[]);
            let options = || rest.iter().take_while(|a| *a != "--");
            match sub {
                "difftool" | "rebase" => {
                    let long: &[&str] = if sub == "rebase" {
                        &["--exec"]
                    } else {
                        &["--extcmd"]
                    };
                    options()
                        .find(|a| long_prefix(a, long).is_some() || short_has(a, &['x']))
                        .map(|a| format!("git {sub} {a} runs a shell command"))
                }
                "bisect" if rest.first().is_some_and(|a| a == "run") => {
                    Some("git bisect run runs a command".into())
                }
                "submodule" if rest.iter().any(|a| a == "foreach") => {
                    Some("git submodule foreach runs a shell command".into())
                }
                "filter-branch" => Some("git filter-branch runs shell filters".into()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Why sed may run a shell command (see [`runs_argument_command`]).
fn sed_runs(args: &[String]) -> Option<String> {
    let spec = getopt::Spec::gnu(
        "Ee:f:i::l:nrsuz",
        "quiet|silent debug expression= file= follow-symlinks in-place=? line-length= posix \
         regexp-extended separate sandbox unbuffered null-data binary help version",
    );
    let parsed = match getopt::parse(args, &spec, getopt::Mode::Permute) {
        Ok(p) => p,
        Err(why) => return Some(format!("sed: {why}: its script is not seen with certainty")),
    };
    if parsed.has(&["-f", "--file"]) {
        return Some(
            "sed -f reads a script (which may run commands with `e`) the analyzer does not read"
                .into(),
        );
    }
    let expressions: Vec<&str> = parsed
        .opts()
        .filter(|o| o.name == "-e" || o.name == "--expression")
        .map(|o| o.value.as_deref().unwrap_or(""))
        .collect();
    // sed joins the -e pieces with newlines; without one, the first operand is the script.
    let script = if expressions.is_empty() {
        parsed.operands().next()?.0.to_string()
    } else {
        expressions.join("\n")
    };
    if parsed.has(&["-i", "--in-place"]) {
        return Some(
            "sed -i rewrites the files it is given (a file a later command runs, as package.json)"
                .into(),
        );
    }
    super::readonly::sed_runs_commands(&script).map(|why| format!("sed: the script {why}"))
}

/// GNU findutils' xargs options; the command follows them (`echo` when there is none).
fn xargs_command(args: &[String]) -> Result<Vec<String>, String> {
    let spec = getopt::Spec {
        short: "+0a:d:E:e::I:i::L:l::n:oP:prs:tx",
        long: "null arg-file= delimiter= eof=? replace=? max-lines=? max-args= open-tty \
               max-procs= interactive no-run-if-empty max-chars= verbose show-limits exit \
               process-slot-var= help version",
        abbreviations: true,
        permute: false,
    };
    let parsed = getopt::parse(args, &spec, getopt::Mode::Posix)?;
    let at = parsed
        .operands()
        .next()
        .map(|(_, i)| i)
        .unwrap_or(args.len());
    Ok(if at < args.len() {
        args[at..].to_vec()
    } else {
        vec!["echo".into()]
    })
}

/// The commands of `find`'s `-exec`, `-execdir`, `-ok` and `-okdir` actions (up to `;` or `+`).
fn find_commands(args: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end] != ";" && args[end] != "+" {
                end += 1;
            }
            out.push(args[start..end].to_vec());
            i = end;
        }
        i += 1;
    }
    out
}

/// git's own options that bring in configuration or programs from the command line.
fn git_runs_config(args: &[String]) -> bool {
    for a in args {
        if !a.starts_with('-') {
            return false;
        }
        if a == "-c"
            || (a.starts_with("-c") && a.len() > 2)
            || a.starts_with("--config-env")
            || a.starts_with("--exec-path=")
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn judge(cmd: &str) -> Dispatch {
        let argv: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        let name = argv[0].rsplit('/').next().unwrap().to_string();
        let expands: Vec<bool> = argv.iter().map(|w| w.contains('*')).collect();
        dispatch(&name, &argv, &expands)
    }

    /// Programs that run a shell command named in their own options or script.
    #[test]
    fn programs_that_run_a_command_from_their_arguments_are_inexact() {
        for cmd in [
            "sed e in.txt",
            "sed -n 1e in.txt",
            "sed s/.*/rm/e in.txt",
            "sed -e p -e e in.txt",
            "sed --expression=s/a/b/ge in.txt",
            "sed -ne s/a/b/e in.txt",
            "sed -f script.sed in.txt",
            "sed --fi=script.sed in.txt",
            "sed -n k in.txt",
            "sed --bogus p in.txt",
            "sed -n * in.txt",
            "sed -i s/a/b/ in.txt",
            "sed --in-place=.bak s/a/b/ in.txt",
            "sed -e 1w out in.txt",
            "tar -cf x.tar --to-command=./rm.sh a",
            "tar -xf x.tar --to-com ./rm.sh",
            "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec=./rm.sh a",
            "tar -cf x.tar --checkpoint-a=exec=./rm.sh a",
            "tar -I ./rm.sh -cf x.tar a",
            "tar -cIf ./rm.sh x.tar a",
            "tar cIf ./rm.sh x.tar a",
            "tar --use-compress-program=./rm.sh -cf x.tar a",
            "tar --use-comp ./rm.sh -cf x.tar a",
            "tar --rsh-command=./rm.sh -cf h:x.tar a",
            "tar -F ./rm.sh -cML 1 -f x.tar a",
            "tar --info-script=./rm.sh -cf x.tar a",
            "tar --new-volume-script=./rm.sh -cf x.tar a",
            "tar -cf x.tar *",
            "zip -T -TT ./rm.sh x.zip a",
            "zip --unzip-command=./rm.sh -T x.zip a",
            "git difftool -x ./rm.sh HEAD",
            "git difftool --extcmd=./rm.sh",
            "git difftool -yx ./rm.sh",
            "git --no-pager rebase -x ./rm.sh HEAD~1",
            "git -C . rebase --exec=./rm.sh HEAD~1",
            "git rebase --exe ./rm.sh HEAD~1",
            "git bisect run ./rm.sh",
            "git submodule foreach ./rm.sh",
            "git filter-branch --tree-filter ./rm.sh",
            "git rebase *",
            "vim -c !rm x",
            "vi f",
            "ex -c !rm",
            "ed f",
            "gdb -batch -ex shell",
            "sqlite3 db .shell",
            "prlimit --nofile=10 rm x",
            "fakeroot rm x",
            "dbus-run-session rm x",
        ] {
            assert!(judge(cmd).inexact.is_some(), "{cmd}");
        }
        for cmd in [
            "sed -n 1,5p in.txt",
            "sed s/e/E/g in.txt",
            "sed -n /e/p in.txt",
            "sed -e 1p in.txt",
            "tar -cf x.tar a",
            "tar -czf x.tgz --checkpoint=10 a",
            "tar xzf x.tgz",
            "tar -xf x.tar --to-stdout",
            "zip -r x.zip a",
            "zip -T x.zip a",
            "git difftool --tool=vimdiff",
            "git rebase -i HEAD~2",
            "git rebase --onto main",
            "git bisect start",
            "git log -- *.rs",
            "git add *.rs",
        ] {
            let d = judge(cmd);
            assert!(d.inexact.is_none(), "{cmd}: {:?}", d.inexact);
        }
        assert_eq!(
            judge("git bisect run rm -f x").runs,
            vec![v(&["rm", "-f", "x"])]
        );
    }

    #[test]
    fn commands_that_run_commands() {
        let d = dispatch(
            "xargs",
            &v(&["xargs", "-n1", "-I", "X", "rm", "-f", "X"]),
            &[],
        );
        assert_eq!(d.runs, vec![v(&["rm", "-f", "X"])]);
        assert!(d.inexact.is_some());
        assert_eq!(
            dispatch("xargs", &v(&["xargs"]), &[]).runs,
            vec![v(&["echo"])]
        );
        assert!(dispatch("xargs", &v(&["xargs", "--bogus", "rm"]), &[])
            .inexact
            .unwrap()
            .starts_with("xargs: "));
        let f = dispatch(
            "find",
            &v(&["find", ".", "-exec", "rm", "{}", ";", "-ok", "rm", "+"]),
            &[],
        );
        assert_eq!(f.runs, vec![v(&["rm", "{}"]), v(&["rm"])]);
        assert_eq!(
            dispatch("find", &v(&["find", ".", "-name", "x"]), &[]),
            Dispatch::default()
        );
        assert!(
            dispatch("eval", &v(&["eval", "rm -f x"]), &[]).runs == vec![v(&["rm", "-f", "x"])]
        );
        assert!(dispatch("export", &v(&["export", "PATH=."]), &[])
            .inexact
            .is_some());
        assert!(dispatch("git", &v(&["git", "-c", "alias.x=!rm", "x"]), &[])
            .inexact
            .is_some());
        assert!(dispatch("git", &v(&["git", "log", "-c"]), &[])
            .inexact
            .is_none());
        assert!(dispatch("flock", &v(&["flock", ".", "rm", "x"]), &[])
            .runs
            .contains(&v(&["rm", "x"])));
    }
}
