//! GNU find: `find [-H] [-L] [-P] [-D opts] [-Olevel] [path...] [expression]`. The expression is
//! walked token by token with each primary's argument count, so an argument (`-name -delete`) is
//! never mistaken for a primary or the other way round. Primaries that delete, write or run
//! commands are refused, and so is any primary not listed.

use super::{plain_glob, Args};

const NO_ARG: &[&str] = &[
    "(",
    ")",
    "!",
    ",",
    "-not",
    "-a",
    "-and",
    "-o",
    "-or",
    "-daystart",
    "-follow",
    "-nowarn",
    "-warn",
    "-depth",
    "-d",
    "-mount",
    "-noleaf",
    "-xdev",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-empty",
    "-false",
    "-true",
    "-nouser",
    "-nogroup",
    "-readable",
    "-writable",
    "-executable",
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-help",
    "--help",
    "-version",
    "--version",
];

const ONE_ARG: &[&str] = &[
    "-regextype",
    "-maxdepth",
    "-mindepth",
    "-amin",
    "-anewer",
    "-atime",
    "-cmin",
    "-cnewer",
    "-context",
    "-ctime",
    "-fstype",
    "-gid",
    "-group",
    "-ilname",
    "-iname",
    "-inum",
    "-ipath",
    "-iregex",
    "-iwholename",
    "-links",
    "-lname",
    "-mmin",
    "-mtime",
    "-name",
    "-newer",
    "-path",
    "-perm",
    "-regex",
    "-wholename",
    "-size",
    "-type",
    "-uid",
    "-used",
    "-user",
    "-xtype",
    "-printf",
    "-samefile",
    "-files0-from",
];

/// Refused primaries, with what they do.
pub const REFUSED: &[(&str, &str)] = &[
    ("-delete", "deletes files"),
    ("-exec", "runs a command"),
    ("-execdir", "runs a command"),
    ("-ok", "runs a command"),
    ("-okdir", "runs a command"),
    ("-fprint", "writes a file"),
    ("-fprint0", "writes a file"),
    ("-fprintf", "writes a file"),
    ("-fls", "writes a file"),
];

/// `-newerXY` compares with the X time of a reference given in form Y.
fn is_newer_xy(w: &str) -> bool {
    w.strip_prefix("-newer")
        .is_some_and(|xy| xy.len() == 2 && xy.chars().all(|c| "aBcmt".contains(c)))
}

pub fn check_find(args: &Args) -> Result<(), String> {
    let w = args.words;
    let mut i = 0;
    // Leading options.
    while let Some(a) = w.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            s if s.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    // Starting points: up to the first word that starts an expression.
    while let Some(a) = w.get(i) {
        if (a.starts_with('-') && a != "-") || a == "(" || a == "!" {
            break;
        }
        plain_glob(a, args.expands(i))?;
        i += 1;
    }
    while let Some(a) = w.get(i) {
        if args.expands(i) {
            return Err(format!("{a} may expand to other words"));
        }
        if let Some((_, why)) = REFUSED.iter().find(|(p, _)| p == a) {
            return Err(format!("{a} {why}"));
        }
        if NO_ARG.contains(&a.as_str()) {
            i += 1;
        } else if ONE_ARG.contains(&a.as_str()) || is_newer_xy(a) {
            let Some(value) = w.get(i + 1) else {
                return Err(format!("{a} needs an argument"));
            };
            if args.expands(i + 1) {
                return Err(format!("{value} may expand to other words"));
            }
            i += 2;
        } else {
            return Err(format!("unknown primary {a}"));
        }
    }
    Ok(())
}
