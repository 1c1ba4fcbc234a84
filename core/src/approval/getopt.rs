//! Walks an argv the way GNU `getopt_long` does, so a caller can judge the options a tool will
//! actually see rather than the spellings someone thought of.
//!
//! Exists because checking arguments by their spelled-out form misses every other spelling the tool
//! accepts: bundled short flags (`-uo FILE`), attached values (`-oFILE`), `--opt=value`, unique
//! prefixes of long options (`--out=FILE`), and options after operands (GNU permutation). The parser
//! knows a tool's whole option set (as its own getopt string and long-option table), resolves each
//! argument to the option the tool would pick, and reports anything it does not know as an error.

/// Whether an option takes a value, as in `struct option.has_arg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HasArg {
    No,
    /// `-o FILE`, `-oFILE`, `--output FILE`, `--output=FILE`.
    Required,
    /// Attached only: `-i.bak`, `--in-place=.bak`; a following argument is never taken.
    Optional,
}

/// How a tool reads its arguments.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The getopt short-option string: `"n:c::qz"` (`:` required value, `::` optional value).
    pub short: &'static str,
    /// Long options, space-separated: `name` (no value), `name=` (required), `name=?` (optional).
    /// Aliases of one option are joined with `|` (`color|colour=?`); the first is its name.
    pub long: &'static str,
    /// Whether a unique prefix of a long option selects it (getopt_long: yes; clap, lexopt: no).
    pub abbreviations: bool,
    /// Whether options may follow operands (GNU permutation). Tools whose getopt string starts
    /// with `+` (env, timeout, xargs...) stop at the first operand.
    pub permute: bool,
}

impl Spec {
    /// A GNU tool: getopt_long with abbreviations and permutation.
    pub const fn gnu(short: &'static str, long: &'static str) -> Spec {
        Spec {
            short,
            long,
            abbreviations: true,
            permute: true,
        }
    }
}

/// Whether the walk permutes (GNU default) or stops at the first operand (`POSIXLY_CORRECT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Permute,
    Posix,
}

/// What one argument turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Opt(Opt),
    /// A non-option argument and its index in the argv walked.
    Operand(String, usize),
}

/// One option as the tool sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// `-o` or `--output` (a long option by its first alias, whatever prefix was typed).
    pub name: String,
    pub value: Option<String>,
    /// The argument as typed, for reasons (`-uoout.txt`, `--out=x`).
    pub spelled: String,
    /// Index of the argument that holds the option.
    pub index: usize,
    /// Index of the separate argument holding its value (`-o FILE`), if any.
    pub value_index: Option<usize>,
}

/// The walked argv.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub items: Vec<Item>,
    /// Index of a `--` that ended the options.
    pub end_of_options: Option<usize>,
}

impl Parsed {
    pub fn opts(&self) -> impl Iterator<Item = &Opt> {
        self.items.iter().filter_map(|i| match i {
            Item::Opt(o) => Some(o),
            Item::Operand(..) => None,
        })
    }

    pub fn operands(&self) -> impl Iterator<Item = (&str, usize)> {
        self.items.iter().filter_map(|i| match i {
            Item::Operand(s, at) => Some((s.as_str(), *at)),
            Item::Opt(_) => None,
        })
    }

    /// Whether an option (by its short or long name) was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.opts().any(|o| names.contains(&o.name.as_str()))
    }
}

/// What the tool does with a short option character, from its getopt string.
pub fn short_arg(spec: &str, c: char) -> Option<HasArg> {
    if c == ':' || c == '+' || c == '-' {
        return None;
    }
    let chars: Vec<char> = spec.chars().collect();
    let at = chars.iter().position(|&x| x == c)?;
    Some(match (chars.get(at + 1), chars.get(at + 2)) {
        (Some(':'), Some(':')) => HasArg::Optional,
        (Some(':'), _) => HasArg::Required,
        _ => HasArg::No,
    })
}

/// One entry of a long-option table: its aliases and whether it takes a value.
#[derive(Debug, Clone, Copy)]
pub struct LongOpt {
    pub aliases: &'static str,
    pub has_arg: HasArg,
}

impl LongOpt {
    /// The option's own name, with its dashes.
    pub fn name(&self) -> String {
        format!("--{}", self.aliases.split('|').next().unwrap_or(""))
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        self.aliases.split('|')
    }
}

/// The long options of a spec string.
pub fn long_opts(long: &'static str) -> impl Iterator<Item = LongOpt> {
    long.split_whitespace().map(|entry| {
        let (aliases, has_arg) = if let Some(a) = entry.strip_suffix("=?") {
            (a, HasArg::Optional)
        } else if let Some(a) = entry.strip_suffix('=') {
            (a, HasArg::Required)
        } else {
            (entry, HasArg::No)
        };
        LongOpt { aliases, has_arg }
    })
}

/// getopt_long's choice for `--name`: an exact name wins, else a unique prefix (aliases of one
/// option count once); several candidates are ambiguous.
pub fn resolve_long(spec: &Spec, name: &str) -> Result<LongOpt, String> {
    if let Some(exact) = long_opts(spec.long).find(|o| o.names().any(|n| n == name)) {
        return Ok(exact);
    }
    if !spec.abbreviations || name.is_empty() {
        return Err(format!("unknown option --{name}"));
    }
    let candidates: Vec<LongOpt> = long_opts(spec.long)
        .filter(|o| o.names().any(|n| n.starts_with(name)))
        .collect();
    match candidates.as_slice() {
        [] => Err(format!("unknown option --{name}")),
        [one] => Ok(*one),
        many => Err(format!(
            "ambiguous option --{name} ({})",
            many.iter()
                .map(LongOpt::name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Walk `args` (argv without argv[0]) as the tool would. An unknown or ambiguous option, a missing
/// value or a value given to an option that takes none is an error naming it.
pub fn parse(args: &[String], spec: &Spec, mode: Mode) -> Result<Parsed, String> {
    let permute = spec.permute && mode == Mode::Permute;
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if parsed.end_of_options.is_some() || arg == "-" || !arg.starts_with('-') {
            parsed.items.push(Item::Operand(arg.clone(), i));
            if !permute && parsed.end_of_options.is_none() {
                parsed.end_of_options = Some(i);
            }
            i += 1;
            continue;
        }
        if arg == "--" {
            parsed.end_of_options = Some(i);
            i += 1;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let opt = resolve_long(spec, name)?;
            let mut value_index = None;
            let value = match (opt.has_arg, attached) {
                (HasArg::No, Some(_)) => {
                    return Err(format!("option {} takes no value ({arg})", opt.name()))
                }
                (HasArg::No, None) | (HasArg::Optional, None) => None,
                (_, Some(v)) => Some(v),
                (HasArg::Required, None) => {
                    let v = args
                        .get(i + 1)
                        .ok_or_else(|| format!("option {} needs a value", opt.name()))?;
                    value_index = Some(i + 1);
                    Some(v.clone())
                }
            };
            parsed.items.push(Item::Opt(Opt {
                name: opt.name(),
                value,
                spelled: arg.clone(),
                index: i,
                value_index,
            }));
            i += value_index.map_or(1, |_| 2);
            continue;
        }
        // A cluster of short options; one that takes a value ends it.
        let cluster: Vec<char> = arg[1..].chars().collect();
        let mut next = i + 1;
        for (j, &c) in cluster.iter().enumerate() {
            let has_arg = short_arg(spec.short, c).ok_or_else(|| {
                if cluster.len() == 1 {
                    format!("unknown option -{c}")
                } else {
                    format!("unknown option -{c} (in {arg})")
                }
            })?;
            let rest: String = cluster[j + 1..].iter().collect();
            let mut value_index = None;
            let value = match has_arg {
                HasArg::No => None,
                HasArg::Optional => (!rest.is_empty()).then_some(rest),
                HasArg::Required if !rest.is_empty() => Some(rest),
                HasArg::Required => {
                    let v = args
                        .get(i + 1)
                        .ok_or_else(|| format!("option -{c} needs a value"))?;
                    value_index = Some(i + 1);
                    next = i + 2;
                    Some(v.clone())
                }
            };
            let ends = has_arg != HasArg::No;
            parsed.items.push(Item::Opt(Opt {
                name: format!("-{c}"),
                value,
                spelled: arg.clone(),
                index: i,
                value_index,
            }));
            if ends {
                break;
            }
        }
        i = next;
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Spec = Spec::gnu(
        "bcCdfghik:mMno:rRsS:t:T:uVz",
        "output= sort= stable check=? compress-program= unique",
    );

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn names(s: &str, mode: Mode) -> Result<Vec<String>, String> {
        let p = parse(&args(s), &SORT, mode)?;
        Ok(p.items
            .iter()
            .map(|i| match i {
                Item::Opt(o) => match &o.value {
                    Some(v) => format!("{}={v}", o.name),
                    None => o.name.clone(),
                },
                Item::Operand(s, _) => s.clone(),
            })
            .collect())
    }

    #[test]
    fn every_spelling_of_a_value_option() {
        for s in [
            "-o F",
            "-oF",
            "-uo F",
            "-uoF",
            "--output F",
            "--output=F",
            "--out=F",
            "--o F",
        ] {
            let got = names(s, Mode::Permute).unwrap();
            assert!(
                got.contains(&"-o=F".to_string()) || got.contains(&"--output=F".into()),
                "{s}: {got:?}"
            );
        }
        assert_eq!(names("-uoF", Mode::Permute).unwrap(), vec!["-u", "-o=F"]);
    }

    #[test]
    fn long_resolution_follows_getopt_long() {
        assert_eq!(
            names("--s x", Mode::Permute).unwrap_err(),
            "ambiguous option --s (--sort, --stable)"
        );
        assert_eq!(names("--so=x", Mode::Permute).unwrap(), vec!["--sort=x"]);
        assert_eq!(names("--uniq", Mode::Permute).unwrap(), vec!["--unique"]);
        assert_eq!(names("--check", Mode::Permute).unwrap(), vec!["--check"]);
        assert_eq!(
            names("--check x", Mode::Permute).unwrap(),
            vec!["--check", "x"]
        );
        assert_eq!(
            names("--unique=1", Mode::Permute).unwrap_err(),
            "option --unique takes no value (--unique=1)"
        );
        assert_eq!(
            names("--nope", Mode::Permute).unwrap_err(),
            "unknown option --nope"
        );
        assert_eq!(names("-x", Mode::Permute).unwrap_err(), "unknown option -x");
        assert_eq!(
            names("-o", Mode::Permute).unwrap_err(),
            "option -o needs a value"
        );
        let exact = Spec::gnu("", "out output=");
        let p = parse(&args("--out"), &exact, Mode::Permute).unwrap();
        assert!(matches!(&p.items[0], Item::Opt(o) if o.name == "--out"));
        let aliased = Spec::gnu("", "color|colour=? context=");
        let p = parse(&args("--col=always"), &aliased, Mode::Permute).unwrap();
        assert!(matches!(&p.items[0], Item::Opt(o) if o.name == "--color"));
    }

    #[test]
    fn operands_dashes_and_permutation() {
        assert_eq!(
            names("in -o out - x", Mode::Permute).unwrap(),
            vec!["in", "-o=out", "-", "x"]
        );
        assert_eq!(
            names("in -o out", Mode::Posix).unwrap(),
            vec!["in", "-o", "out"]
        );
        assert_eq!(names("-- -o x", Mode::Permute).unwrap(), vec!["-o", "x"]);
        let p = parse(&args("a -- b"), &SORT, Mode::Permute).unwrap();
        assert_eq!(p.end_of_options, Some(1));
    }
}
