//! Inline programs (OpenClaw's `strictInlineEval`): an interpreter or tool whose program is the command's
//! own text (`python3 -c CODE`, `node -e CODE`, an `awk` program, `find -exec`). An allowlist entry for
//! the interpreter says nothing about such a program, so in strict mode it is always asked, allow-always
//! keeps nothing for it, and a timed-out question never lets it through.

use super::analyze::Analysis;

/// The first inline program in what `analysis` runs, described as OpenClaw describes it
/// (`python3 -c`, `awk inline program`), looking into `sh -c` scripts too.
pub fn find(analysis: &Analysis) -> Option<String> {
    analysis.segments().find_map(|s| {
        s.inner
            .as_deref()
            .and_then(find)
            .or_else(|| describe(&s.effective_argv))
    })
}

/// Options whose value is the program, per interpreter name (after version suffixes are dropped).
fn eval_flags(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "python" | "python2" | "python3" | "pypy" | "pypy3" | "guile" | "expect" => &["-c"],
        "node" | "nodejs" | "bun" | "deno" => &["-e", "--eval", "-p", "--print"],
        "ruby" | "lua" | "osascript" | "groovy" | "rscript" | "r" | "raku" | "perl6" | "ghc"
        | "ghci" | "clojure" | "clj" => &["-e", "--eval"],
        "perl" => &["-e", "-E"],
        "php" => &["-r", "-B", "-E", "-R"],
        "julia" => &["-e", "--eval", "-E", "--print"],
        "elixir" => &["-e", "--eval", "--rpc-eval"],
        "erl" | "werl" => &["-eval", "-run", "-s"],
        "gdb" => &["-ex", "-iex", "--eval-command", "--init-eval-command"],
        "make" | "gmake" => &["-f", "--file", "--makefile", "--eval", "-E"],
        "find" => &["-exec", "-execdir", "-ok", "-okdir"],
        "sed" | "gsed" => &["-e", "--expression"],
        "awk" | "gawk" | "mawk" | "nawk" => &["-e", "--source"],
        _ => return None,
    })
}

/// Options of `name` (an interpreter or tool, as `interpreter_name` gives it) that take the next word
/// as their value when written alone: `python3 -X dev -c CODE` has its program after `dev`, and a
/// walk that took `dev` for the script would stop before `-c`. (`-jN`-style optional values are
/// taken only when the next word is a number.)
pub(crate) fn takes_value(name: &str, option: &str) -> bool {
    let values: &[&str] = match name {
        "python" | "python2" | "python3" | "pypy" | "pypy3" => {
            &["-X", "-W", "-Q", "--check-hash-based-pycs"]
        }
        "node" | "nodejs" | "bun" => &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "-C",
            "--conditions",
            "--input-type",
            "--title",
            "--env-file",
            "--preload",
        ],
        "perl" => &["-I"],
        "ruby" => &["-I", "-r", "-C", "-E", "--encoding"],
        "php" => &["-c", "-d", "-z", "-S", "-t"],
        "lua" | "luajit" => &["-l"],
        "tclsh" | "wish" => &["-encoding"],
        "make" | "gmake" => &[
            "-C",
            "-I",
            "-o",
            "-W",
            "--directory",
            "--include-dir",
            "--old-file",
            "--assume-old",
            "--what-if",
            "--new-file",
            "--assume-new",
        ],
        _ => &[],
    };
    values.contains(&option)
}

/// `python3.12` is python3; `PYTHON3.EXE` too.
pub(crate) fn interpreter_name(program: &str) -> String {
    let base = program
        .rsplit('/')
        .next()
        .unwrap_or(program)
        .to_ascii_lowercase();
    let base = base.strip_suffix(".exe").unwrap_or(&base).to_string();
    match base.split_once('.') {
        Some((stem, version))
            if stem.starts_with("python") && version.chars().all(|c| c.is_ascii_digit()) =>
        {
            stem.to_string()
        }
        _ => base,
    }
}

/// The inline program `argv` runs, if any: given by an option (the table below), or program text
/// read from its input, a stream or an option of another kind (`blind_spots::program_text_in`:
/// `python3 -`, `perl /dev/stdin`, `python3 -m timeit -s`, `perl -M'5;...'`, `awk -f /dev/stdin`,
/// `node --import=data:...`), by any name of the interpreter (`perl5.36.0`, `tclsh8.6`).
pub fn describe(argv: &[String]) -> Option<String> {
    let program = argv.first()?;
    let name = interpreter_name(program);
    let by_option = super::program_names::names(program, "")
        .iter()
        .find_map(|n| describe_as(n, argv));
    by_option.or_else(|| {
        super::blind_spots::program_text_in(program, &name, &argv[1..], false, None)
            .map(|why| format!("{name} program text: {why}"))
    })
}

fn describe_as(name: &str, argv: &[String]) -> Option<String> {
    let name = interpreter_name(name);
    if name == "xargs" {
        // Whatever follows xargs' options is a command it runs with the input as arguments.
        let command = argv[1..].iter().find(|a| !a.starts_with('-'));
        return command.map(|_| "xargs inline command".into());
    }
    let flags = eval_flags(&name)?;
    let scans_all = name == "find";
    let mut value_next = false;
    for (i, arg) in argv[1..].iter().enumerate() {
        // The value of the option before (`-X dev`, `-r fs`, `-C /tmp`), not an operand.
        if std::mem::take(&mut value_next) {
            continue;
        }
        if arg == "--" && !scans_all {
            break;
        }
        let optional_number = matches!(name.as_str(), "make" | "gmake")
            && matches!(arg.as_str(), "-j" | "-l")
            && argv.get(i + 2).is_some_and(|v| {
                !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')
            });
        if takes_value(&name, arg) || optional_number {
            value_next = true;
            continue;
        }
        let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
        if flags.contains(&flag) {
            return Some(format!("{name} {flag}"));
        }
        // `python3 -Sc CODE`: a short-option cluster ending in -c.
        if flags.contains(&"-c")
            && arg.starts_with('-')
            && !arg.starts_with("--")
            && arg.len() > 2
            && arg[1..].chars().all(|c| c.is_ascii_alphabetic())
            && arg.contains('c')
        {
            return Some(format!("{name} -c"));
        }
        if !scans_all && !arg.starts_with('-') {
            break;
        }
    }
    // awk and sed take their program as the first operand when no option gave one.
    if matches!(
        name.as_str(),
        "awk" | "gawk" | "mawk" | "nawk" | "sed" | "gsed"
    ) {
        let gives_file = argv[1..]
            .iter()
            .any(|a| a == "-f" || a.starts_with("--file") || a.starts_with("-f"));
        let operand = argv[1..].iter().any(|a| !a.starts_with('-'));
        if operand && !gives_file {
            return Some(format!("{name} inline program"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(cmd: &str) -> Option<String> {
        describe(
            &cmd.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn inline_programs_are_found_by_interpreter_and_flag() {
        for (cmd, want) in [
            ("python3 -c print(1)", "python3 -c"),
            ("/usr/bin/python3.12 -c x", "python3 -c"),
            ("python3 -Sc x", "python3 -c"),
            ("python -I -c x", "python -c"),
            ("node -e x", "node -e"),
            ("node --eval=x", "node --eval"),
            ("node -p 1", "node -p"),
            ("bun -e x", "bun -e"),
            ("deno --eval x", "deno --eval"),
            ("ruby -e x", "ruby -e"),
            ("perl -E say", "perl -E"),
            ("php -r x", "php -r"),
            ("lua -e x", "lua -e"),
            ("osascript -e x", "osascript -e"),
            ("find . -name a -exec rm {} ;", "find -exec"),
            ("find . -execdir x ;", "find -execdir"),
            ("make -f Evil.mk", "make -f"),
            ("sed -e s/a/b/ f", "sed -e"),
            ("sed s/a/b/ f", "sed inline program"),
            ("awk {print} f", "awk inline program"),
            ("gawk --source x", "gawk --source"),
            ("xargs rm", "xargs inline command"),
            ("julia -E 1", "julia -E"),
            ("gdb -ex run", "gdb -ex"),
            // An option's value is not the script: the program comes after it.
            ("python3 -X dev -c x", "python3 -c"),
            ("python3 -W ignore -c x", "python3 -c"),
            ("node -r fs -e x", "node -e"),
            ("perl -I /tmp -e x", "perl -e"),
            ("make -C /tmp -f /dev/stdin", "make -f"),
            ("make -C /tmp --eval=x", "make --eval"),
            ("make -j 4 -f x.mk", "make -f"),
        ] {
            assert_eq!(d(cmd).as_deref(), Some(want), "{cmd}");
        }
    }

    #[test]
    fn scripts_and_plain_runs_are_not_inline() {
        for cmd in [
            "python3 script.py -c x",
            "python3 -m pytest",
            "node app.js -e",
            "node --version",
            "awk -f prog.awk data",
            "sed -f script.sed data",
            "make",
            "make test",
            "find . -name x",
            "xargs",
            "ls -c",
            "cat -e file",
        ] {
            assert_eq!(d(cmd), None, "{cmd}");
        }
    }
}
