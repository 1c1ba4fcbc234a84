//! Commands whose arguments are not a plain getopt: bash builtins (`printf -v`, `test -v` evaluate
//! array subscripts, which can run commands), `date` (an operand sets the clock), and tools with
//! parsers of their own (xxd, jq, yq, tree, ps).

use super::{plain_glob, Args};
use crate::approval::dispatch::evaluated_name;
use crate::approval::getopt::Parsed;

/// echo, true, false, `:`, expr: no argument makes them write or run anything.
pub fn any_args(_: &Args) -> Result<(), String> {
    Ok(())
}

/// bash's printf: `-v NAME` assigns a shell variable; a subscripted name (`a[$(cmd)]`) is
/// evaluated, so only a plain identifier is allowed (the analyzer's own rule, shared so the two
/// never disagree), and the first word may not be a glob.
pub fn check_printf(args: &Args) -> Result<(), String> {
    let w = args.words;
    let Some(first) = w.first() else {
        return Ok(());
    };
    // `printf *` becomes `printf -v 'a[$(cmd)]'` when such files exist.
    plain_glob(first, args.expands(0))?;
    if let Some(why) = evaluated_name("printf", w, args.expands) {
        return Err(why);
    }
    if first.starts_with('-') && !first.starts_with("-v") && first != "--" && first != "-" {
        return Err(format!("unknown option {first}"));
    }
    Ok(())
}

/// bash's test: `-v NAME` and `-R NAME` evaluate an array subscript in NAME.
pub fn check_test(args: &Args) -> Result<(), String> {
    evaluated_name("test", args.words, args.expands).map_or(Ok(()), Err)
}

/// `[ ... ]`: test with a closing bracket.
pub fn check_bracket(args: &Args) -> Result<(), String> {
    evaluated_name("[", args.words, args.expands).map_or(Ok(()), Err)
}

/// date: an operand other than `+FORMAT` (`MMDDhhmm[[CC]YY][.ss]`) sets the clock.
pub fn check_date(parsed: &Parsed, _: &Args) -> Result<(), String> {
    match parsed.operands().find(|(w, _)| !w.starts_with('+')) {
        Some((w, _)) => Err(format!("the operand {w} sets the system clock")),
        None => Ok(()),
    }
}

/// binutils reads more options from an `@FILE` argument, which cannot be checked.
pub fn no_response_files(parsed: &Parsed, _: &Args) -> Result<(), String> {
    match parsed.operands().find(|(w, _)| w.starts_with('@')) {
        Some((w, _)) => Err(format!("{w} reads further options from a file")),
        None => Ok(()),
    }
}

/// xxd scans its options by hand and stops at the first operand: `xxd [opts] [infile [outfile]]`.
/// An argument is accepted only in a spelling xxd documents, and one operand at most (a second
/// is the output file; an option after the infile is an output file too).
pub fn check_xxd(args: &Args) -> Result<(), String> {
    const FLAGS: &[&str] = &[
        "-a",
        "-autoskip",
        "-b",
        "-bits",
        "-C",
        "-capitalize",
        "-d",
        "-e",
        "-E",
        "-EBCDIC",
        "-h",
        "-help",
        "-i",
        "-include",
        "-p",
        "-ps",
        "-postscript",
        "-plain",
        "-r",
        "-revert",
        "-u",
        "-uppercase",
        "-v",
        "-version",
    ];
    const VALUES: &[(&str, &str)] = &[
        ("-c", "-cols"),
        ("-g", "-groupsize"),
        ("-l", "-len"),
        ("-o", "-offset"),
        ("-s", "-seek"),
        ("-n", "-name"),
        ("-R", "-R"),
    ];
    let w = args.words;
    let mut i = 0;
    while let Some(a) = w.get(i) {
        if args.expands(i) {
            return Err(format!("{a} may expand to other words"));
        }
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if FLAGS.contains(&a.as_str()) {
            i += 1;
            continue;
        }
        let Some((short, _)) = VALUES
            .iter()
            .find(|(s, long)| a == s || a == long || a.starts_with(s))
        else {
            return Err(format!("unknown option {a}"));
        };
        let attached = &a[short.len()..];
        let separate = a == short || VALUES.iter().any(|(_, l)| a == l);
        if separate {
            if w.get(i + 1).is_none() {
                return Err(format!("option {a} needs a value"));
            }
            i += 2;
        } else if attached
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "xX+-".contains(c))
        {
            i += 1;
        } else {
            return Err(format!("unknown option {a}"));
        }
    }
    let operands = &w[i.min(w.len())..];
    if operands.len() > 1 {
        return Err(format!(
            "a second operand ({}) is an output file",
            operands[1..].join(" ")
        ));
    }
    Ok(())
}

/// jq cannot write files or run programs; its options are still checked so an unknown one is not
/// taken for read-only. `--arg NAME VALUE` and friends take two values.
pub fn check_jq(args: &Args) -> Result<(), String> {
    const FLAGS: &[&str] = &[
        "--tab",
        "--seq",
        "--stream",
        "--stream-errors",
        "--slurp",
        "--raw-input",
        "--null-input",
        "--compact-output",
        "--color-output",
        "--monochrome-output",
        "--ascii-output",
        "--unbuffered",
        "--sort-keys",
        "--raw-output",
        "--raw-output0",
        "--join-output",
        "--exit-status",
        "--args",
        "--jsonargs",
        "--from-file",
        "--help",
        "--version",
        "--build-configuration",
    ];
    const ONE: &[&str] = &["--indent", "-L", "--library-path"];
    const TWO: &[&str] = &[
        "--arg",
        "--argjson",
        "--slurpfile",
        "--rawfile",
        "--argfile",
    ];
    const SHORT: &str = "cnesrRCMSajhVf";
    let w = args.words;
    let mut i = 0;
    let mut positional_only = false;
    while let Some(a) = w.get(i) {
        plain_glob(a, args.expands(i))?;
        i += 1;
        if positional_only || a == "-" || !a.starts_with('-') {
            continue;
        }
        let short_flags = !a.starts_with("--") && a[1..].chars().all(|c| SHORT.contains(c));
        if a == "--" {
            positional_only = true;
        } else if ONE.contains(&a.as_str()) {
            i += 1;
        } else if TWO.contains(&a.as_str()) {
            i += 2;
        } else if !(FLAGS.contains(&a.as_str()) || a.starts_with("-L") || short_flags) {
            return Err(format!("unknown option {a}"));
        }
    }
    if i > w.len() {
        return Err("an option needs more values".into());
    }
    Ok(())
}

/// yq is either the jq wrapper (Python, argparse, which accepts abbreviations and passes unknown
/// options to jq) or mikefarah's Go yq (where `-i` edits in place and `-s` writes files). Only
/// exact spellings that mean no harm in both are accepted.
pub fn check_yq(args: &Args) -> Result<(), String> {
    const FLAGS: &[&str] = &[
        "-y",
        "-Y",
        "-r",
        "-c",
        "-e",
        "-n",
        "-S",
        "-C",
        "-M",
        "-j",
        "--yaml-output",
        "--yml-output",
        "--yaml-roundtrip",
        "--yml-roundtrip",
        "--indentless-lists",
        "--indentless",
    ];
    for (i, a) in args.words.iter().enumerate() {
        plain_glob(a, args.expands(i))?;
        if a == "--" {
            break;
        }
        if !a.starts_with('-') || a == "-" || FLAGS.contains(&a.as_str()) {
            continue;
        }
        if a == "-i" || (a.len() >= 5 && "--in-place".starts_with(a.split('=').next().unwrap_or(a)))
        {
            return Err(format!("{a} edits files in place"));
        }
        if a.starts_with("-s") || a.starts_with("--split") {
            return Err(format!("{a} writes files (mikefarah yq)"));
        }
        return Err(format!("unknown option {a}"));
    }
    Ok(())
}

/// tree parses by hand: bundled flags, and `-L`, `-P`, `-I` take the next argument. `-o` writes
/// its output to a file, `-R` with `-H` writes HTML files into every directory.
pub fn check_tree(args: &Args) -> Result<(), String> {
    const FLAGS: &str = "adlfxpsugDFqNQrtcUvCnhAiSJX";
    const VALUES: &str = "LPI";
    const LONG: &[&str] = &[
        "--noreport",
        "--dirsfirst",
        "--du",
        "--prune",
        "--inodes",
        "--device",
        "--matchdirs",
        "--ignore-case",
        "--gitignore",
        "--si",
        "--help",
        "--version",
    ];
    let w = args.words;
    let mut i = 0;
    let mut operands_only = false;
    while let Some(a) = w.get(i) {
        plain_glob(a, args.expands(i))?;
        i += 1;
        if operands_only || !a.starts_with('-') || a == "-" {
            continue;
        }
        if a == "--" {
            operands_only = true;
            continue;
        }
        if a.starts_with("--") {
            if LONG.contains(&a.as_str()) {
                continue;
            }
            return Err(format!("unknown option {a}"));
        }
        for c in a[1..].chars() {
            match c {
                'o' => return Err(format!("-o ({a}) writes its output to a file")),
                'R' | 'H' => return Err(format!("-{c} ({a}) can write HTML files")),
                c if VALUES.contains(c) => {
                    if w.get(i).is_none() {
                        return Err(format!("option -{c} needs a value"));
                    }
                    if args.expands(i) {
                        return Err(format!("{} may expand to other words", w[i]));
                    }
                    i += 1;
                }
                c if FLAGS.contains(c) => {}
                c => return Err(format!("unknown option -{c} (in {a})")),
            }
        }
    }
    Ok(())
}

/// ps (procps) has no option that writes or runs a program; its three option syntaxes are not
/// modelled, so arguments are only required to look like options, lists or ids.
pub fn check_ps(args: &Args) -> Result<(), String> {
    for (i, a) in args.words.iter().enumerate() {
        if args.expands(i)
            || !a
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ",=:%+_.-".contains(c))
        {
            return Err(format!("unexpected argument {a}"));
        }
    }
    Ok(())
}
