//! Whether one simple command is read-only, judged by a per-command grammar.
//!
//! Read-only is a safety claim (with `allowReadOnly` such a command runs without asking), so it is
//! an allowlist: each command the classifier knows has a grammar listing every option the tool
//! accepts (parsed the way the tool's own getopt parses them, see [`crate::approval::getopt`]), the
//! options that make it write, run programs or change state, the operands it may take, and any check
//! of a script it runs (sed, awk). Anything the grammar does not know makes the command not
//! read-only, with a reason naming the option or operand.

mod awk;
mod commands;
mod custom;
mod find;
mod git;
mod sed;

pub use sed::script_runs_commands as sed_runs_commands;

use super::getopt::{self, Mode, Parsed, Spec};

/// What a command does, for `classifyCommand`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Search,
    Read,
    List,
    /// Touches no data: `echo`, `true`, `cd`, `sleep`...
    Neutral,
    Other,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Search => "search",
            Kind::Read => "read",
            Kind::List => "list",
            Kind::Neutral => "neutral",
            Kind::Other => "other",
        }
    }
}

/// The arguments after argv[0], and for each whether bash may expand it into other or several
/// words (unquoted glob characters or braces).
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    pub words: &'a [String],
    pub expands: &'a [bool],
}

impl Args<'_> {
    fn expands(&self, i: usize) -> bool {
        self.expands.get(i).copied().unwrap_or(false)
    }
}

/// How many operands a command may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    Any,
    /// A further operand would be an output file (`uniq in out`, `xxd in out`) or set state.
    AtMost(usize),
}

/// A check over the parsed arguments (a script, the operands' form), run once per parse mode.
pub type Check = fn(&Parsed, &Args) -> Result<(), String>;

/// How a command's arguments are read.
pub enum Syntax {
    /// getopt or getopt_long.
    Getopt {
        spec: Spec,
        /// Options that make the command not read-only, by short or long name (as in the spec),
        /// with what they do. Every name here must be an option of `spec`.
        refused: &'static [(&'static str, &'static str)],
        operands: Operands,
        check: Option<Check>,
    },
    /// A parser of its own (find's expression, xxd's prefixes, bash builtins...).
    Custom(fn(&Args) -> Result<(), String>),
}

pub struct Grammar {
    pub name: &'static str,
    pub kind: Kind,
    pub syntax: Syntax,
    /// A read-only use, which tests build on: adding a refused option to it must make it not
    /// read-only.
    pub example: &'static [&'static str],
}

/// The verdict for one simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub kind: Kind,
    pub read_only: bool,
    pub reason: String,
}

/// Every command with a grammar.
pub fn grammars() -> impl Iterator<Item = &'static Grammar> {
    commands::GRAMMARS.iter()
}

pub fn grammar(name: &str) -> Option<&'static Grammar> {
    grammars().find(|g| g.name == name)
}

/// Characters that start a word bash may expand into one beginning with `-`.
fn may_expand_to_option(word: &str) -> bool {
    word.starts_with(['*', '?', '[', '{'])
}

/// Judge `argv` (argv[0] is the command name as written) with `expands` parallel to it.
pub fn judge(argv: &[String], expands: &[bool]) -> Verdict {
    let Some(first) = argv.first() else {
        return Verdict {
            kind: Kind::Neutral,
            read_only: true,
            reason: "empty".into(),
        };
    };
    let name = first.rsplit('/').next().unwrap_or(first);
    let args = Args {
        words: &argv[1..],
        expands: expands.get(1..).unwrap_or(&[]),
    };
    if expands.first() == Some(&true) {
        return refuse(Kind::Other, format!("{first} is a glob"));
    }
    if name == "git" {
        return git::judge(&args);
    }
    let Some(g) = grammar(name) else {
        return refuse(Kind::Other, format!("{name} is not known to be read-only"));
    };
    match check_grammar(g, &args) {
        Ok(()) => Verdict {
            kind: g.kind,
            read_only: true,
            reason: format!("{name} is {}", g.kind.as_str()),
        },
        Err(why) => refuse(g.kind, format!("{name}: {why}")),
    }
}

/// Why `argv` (argv[0] its name as written; `expands` parallel to it), a program the analyzer knows
/// as a reader (one with a grammar), is used in a form that is not reading: an option its grammar
/// refuses (`sort -o`, `find -delete`, `date -s`), an operand that is an output file (`uniq in
/// out`, `xxd -r -p - package.json`), an option it does not know, or a script that runs commands
/// (`awk 'BEGIN{system(..)}'`). A rule or allowlist entry that names a reader covers its reading
/// (outside round seven: `Bash(xxd:*)` let a line write any bytes into `package.json`, which the
/// next allowed `npm test` ran). A word bash may expand counts where it could become such a form:
/// for a grammar of its own (find's, xxd's), and for one with options that write or run or a
/// bounded number of operands; a glob given to `grep` or `cat` stays theirs. `None` for a program
/// without a grammar, and for git and sed, whose writing and running forms rules already judge on
/// their own (git's subcommands; sed's `w`, `e` and `-i`, with `w /dev/stdout` and `r` left
/// to it).
pub fn not_reading(argv: &[String], expands: &[bool]) -> Option<String> {
    let name = argv.first()?.rsplit('/').next()?;
    if matches!(name, "git" | "sed") {
        return None;
    }
    let g = grammar(name)?;
    let verdict = judge(argv, expands);
    if verdict.read_only {
        return None;
    }
    let literal = judge(argv, &vec![false; argv.len()]);
    let glob_matters = match &g.syntax {
        Syntax::Custom(_) => true,
        Syntax::Getopt {
            refused, operands, ..
        } => !refused.is_empty() || *operands != Operands::Any,
    };
    (!literal.read_only || glob_matters).then(|| {
        format!(
            "{}: not a reading use of a reader, which a rule naming it does not cover",
            verdict.reason
        )
    })
}

fn refuse(kind: Kind, reason: String) -> Verdict {
    Verdict {
        kind,
        read_only: false,
        reason,
    }
}

/// Ok when the arguments are a read-only use under the grammar.
pub fn check_grammar(g: &Grammar, args: &Args) -> Result<(), String> {
    match &g.syntax {
        Syntax::Custom(check) => check(args),
        Syntax::Getopt {
            spec,
            refused,
            operands,
            check,
        } => {
            // With POSIXLY_CORRECT set, options after the first operand are operands; without it
            // they are options. Both readings must be read-only.
            let modes: &[Mode] = if spec.permute {
                &[Mode::Permute, Mode::Posix]
            } else {
                &[Mode::Posix]
            };
            for &mode in modes {
                let parsed = getopt::parse(args.words, spec, mode)?;
                check_parsed(&parsed, args, refused, *operands)?;
                if let Some(check) = check {
                    check(&parsed, args)?;
                }
            }
            Ok(())
        }
    }
}

fn check_parsed(
    parsed: &Parsed,
    args: &Args,
    refused: &[(&str, &str)],
    operands: Operands,
) -> Result<(), String> {
    for opt in parsed.opts() {
        if let Some((_, why)) = refused
            .iter()
            .find(|(names, _)| names.split_whitespace().any(|n| n == opt.name))
        {
            return Err(
                if opt.spelled.starts_with(&opt.name) && opt.value.is_none() {
                    format!("{} {why}", opt.name)
                } else {
                    format!("{} ({}) {why}", opt.name, opt.spelled)
                },
            );
        }
        for at in std::iter::once(opt.index).chain(opt.value_index) {
            if args.expands(at) {
                return Err(format!("{} may expand to other words", args.words[at]));
            }
        }
    }
    let count = parsed.operands().count();
    if let Operands::AtMost(max) = operands {
        if count > max {
            let extra: Vec<&str> = parsed.operands().skip(max).map(|(w, _)| w).collect();
            return Err(match max {
                0 => format!("takes no operand here ({})", extra.join(" ")),
                1 => format!(
                    "a second operand ({}) is an output file or changes state",
                    extra.join(" ")
                ),
                _ => format!("too many operands ({})", extra.join(" ")),
            });
        }
    }
    glob_operands(parsed, args, operands)
}

/// An operand bash may expand can become several operands, or an option when a file name starts
/// with `-`: allowed only where any number of operands is, and only once options have ended
/// unless the word cannot expand to something starting with `-`.
fn glob_operands(parsed: &Parsed, args: &Args, operands: Operands) -> Result<(), String> {
    for (word, at) in parsed.operands() {
        if !args.expands(at) {
            continue;
        }
        if operands != Operands::Any {
            return Err(format!("{word} may expand to several operands"));
        }
        // In the permuting walk only `--` ends the options; in the POSIX walk the first operand
        // does too, and after that the tool reads every word as an operand.
        let options_ended = parsed.end_of_options.is_some_and(|end| end < at);
        if may_expand_to_option(word) && !options_ended {
            return Err(format!(
                "{word} may expand to a file name that is an option"
            ));
        }
    }
    Ok(())
}

/// For custom parsers: a word bash may expand is refused unless it is a plain operand that
/// cannot expand to an option.
fn plain_glob(word: &str, expands: bool) -> Result<(), String> {
    if expands && may_expand_to_option(word) {
        Err(format!(
            "{word} may expand to a file name that is an option"
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
