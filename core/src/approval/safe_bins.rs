//! Safe bins: stdin-only filters that may run without an allowlist entry.
//!
//! A use is safe only when it cannot name a file: every positional is bounded by the profile
//! (zero for the pure filters, so they read stdin), flags that read or write files are refused,
//! and anything the parser does not recognise is refused rather than guessed at.

use std::path::{Path, PathBuf};

/// On by default. jq, grep and sort have profiles but must be opted into.
pub const DEFAULT_SAFE_BINS: [&str; 6] = ["cut", "uniq", "head", "tail", "tr", "wc"];

/// PATH is never trusted: a safe bin must live directly in one of these.
pub const DEFAULT_TRUSTED_DIRS: [&str; 2] = ["/bin", "/usr/bin"];

/// What one filter accepts. Flag lists are space-separated and written as typed: `-n --lines`.
#[derive(Debug)]
pub struct SafeBinProfile {
    pub name: &'static str,
    pub min_positional: usize,
    pub max_positional: Option<usize>,
    /// Flags that take a value (`-n 5`, `-n5`, `--lines=5`, `--lines 5`).
    pub allowed_value_flags: &'static str,
    /// Long flags whose value is optional and can only be attached (`--color=auto`).
    pub optional_value_flags: &'static str,
    /// Flags that take no value.
    pub allowed_flags: &'static str,
    /// Known flags that read or write files; named so abbreviations of them are caught.
    pub denied_flags: &'static str,
    /// Value flags whose values may hold glob characters (see [`has_glob`]).
    pub glob_ok_values: &'static str,
    /// Whether positionals may hold glob characters (jq programs, tr sets).
    pub glob_ok_positionals: bool,
}

/// The common case: reads stdin only, takes no operands, denies nothing it knows.
const fn filter(
    name: &'static str,
    flags: &'static str,
    value_flags: &'static str,
) -> SafeBinProfile {
    SafeBinProfile {
        name,
        min_positional: 0,
        max_positional: Some(0),
        allowed_value_flags: value_flags,
        optional_value_flags: "",
        allowed_flags: flags,
        denied_flags: "",
        glob_ok_values: "",
        glob_ok_positionals: false,
    }
}

// GNU coreutils / grep / jq 1.7 options. Anything left out (e.g. `tail -f`, `jq --arg`, `head -5`)
// is refused, which only means the person is asked.
#[rustfmt::skip]
static PROFILES: &[SafeBinProfile] = &[
    SafeBinProfile {
        glob_ok_values: "-d --delimiter",
        ..filter(
            "cut",
            "-n -s --only-delimited --complement -z --zero-terminated",
            "-b --bytes -c --characters -f --fields -d --delimiter --output-delimiter",
        )
    },
    // A second uniq operand is an output file, hence no operands at all.
    SafeBinProfile {
        optional_value_flags: "--all-repeated --group",
        ..filter(
            "uniq",
            "-c --count -d --repeated -D -i --ignore-case -u --unique -z --zero-terminated",
            "-f --skip-fields -s --skip-chars -w --check-chars",
        )
    },
    filter("head", "-q --quiet --silent -v --verbose -z --zero-terminated", "-n --lines -c --bytes"),
    filter("tail", "-q --quiet --silent -v --verbose -z --zero-terminated", "-n --lines -c --bytes"),
    SafeBinProfile {
        min_positional: 1,
        max_positional: Some(2),
        glob_ok_positionals: true,
        ..filter("tr", "-c -C --complement -d --delete -s --squeeze-repeats -t --truncate-set1", "")
    },
    SafeBinProfile {
        denied_flags: "--files0-from",
        ..filter("wc", "-c --bytes -m --chars -l --lines -L --max-line-length -w --words", "--total")
    },
    // The one operand is the program; a further operand would be an input file.
    SafeBinProfile {
        min_positional: 1,
        max_positional: Some(1),
        denied_flags: "--argfile --from-file --library-path --rawfile --slurpfile -L -f",
        glob_ok_positionals: true,
        ..filter(
            "jq",
            "-a --ascii-output -c --compact-output -C --color-output -e --exit-status \
             -j --join-output -M --monochrome-output -n --null-input -r --raw-output \
             --raw-output0 -R --raw-input -s --slurp -S --sort-keys --seq --stream \
             --stream-errors --tab --unbuffered",
            "--indent",
        )
    },
    // The pattern must come through -e, so every operand would be a file.
    SafeBinProfile {
        optional_value_flags: "--color --colour",
        denied_flags: "--dereference-recursive --directories --exclude-from --file --recursive \
                       -R -d -f -r",
        glob_ok_values: "-e --regexp",
        ..filter(
            "grep",
            "-E --extended-regexp -F --fixed-strings -G --basic-regexp -P --perl-regexp \
             -i -y --ignore-case --no-ignore-case -v --invert-match -w --word-regexp \
             -x --line-regexp -c --count -o --only-matching -q --quiet --silent \
             -s --no-messages -b --byte-offset -n --line-number -H --with-filename \
             -h --no-filename -T --initial-tab -Z --null -z --null-data -a --text \
             -U --binary --line-buffered -l --files-with-matches -L --files-without-match",
            "-e --regexp -m --max-count -A --after-context -B --before-context -C --context \
             --label --binary-files",
        )
    },
    SafeBinProfile {
        optional_value_flags: "--check",
        denied_flags: "--compress-program --files0-from --output --random-source \
                       --temporary-directory -T -o",
        ..filter(
            "sort",
            "-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case \
             -g --general-numeric-sort -i --ignore-nonprinting -M --month-sort \
             -h --human-numeric-sort -n --numeric-sort -R --random-sort -r --reverse \
             -V --version-sort -c -C -m --merge -s --stable -u --unique -z --zero-terminated \
             --debug",
            "-k --key -t --field-separator -S --buffer-size --parallel --batch-size --sort",
        )
    },
];

fn listed(list: &str, flag: &str) -> bool {
    list.split_whitespace().any(|f| f == flag)
}

/// The profile for a lowercase executable name.
pub fn profile(name: &str) -> Option<&'static SafeBinProfile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The command runs through the shell, which expands unquoted glob and brace words: the
/// evaluation refuses those before a profile is consulted (see `evaluate`). A glob character that
/// reaches the profile was quoted; it still signals an attempt to name files, so it is refused
/// everywhere except where the tool itself gives it a non-file meaning: a grep `-e` pattern, the jq
/// program, tr sets and a cut `-d` delimiter.
fn has_glob(arg: &str) -> bool {
    arg.contains(['*', '?', '[', ']'])
}

/// jq can read the environment, and load modules from disk, from inside the program itself.
fn jq_program_problem(program: &str) -> Option<&'static str> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let words = program
        .split(|c: char| !is_ident(c))
        .filter(|w| !w.is_empty());
    for word in words {
        match word {
            "env" | "ENV" => return Some("program reads the environment"),
            "import" | "include" => return Some("program loads modules"),
            _ => {}
        }
    }
    None
}

enum Kind {
    Value,
    OptionalValue,
    Plain,
    Denied,
}

impl SafeBinProfile {
    fn kind(&self, flag: &str) -> Option<Kind> {
        if listed(self.denied_flags, flag) {
            Some(Kind::Denied)
        } else if listed(self.allowed_value_flags, flag) {
            Some(Kind::Value)
        } else if listed(self.optional_value_flags, flag) {
            Some(Kind::OptionalValue)
        } else if listed(self.allowed_flags, flag) {
            Some(Kind::Plain)
        } else {
            None
        }
    }

    fn long_flags(&self) -> impl Iterator<Item = &'static str> + '_ {
        [
            self.denied_flags,
            self.allowed_value_flags,
            self.optional_value_flags,
            self.allowed_flags,
        ]
        .into_iter()
        .flat_map(str::split_whitespace)
        .filter(|f| f.starts_with("--"))
    }

    /// GNU getopt_long: an exact name wins, else a unique prefix. Denied flags take part, so
    /// `--out` is recognised as `--output` rather than slipping through as unknown.
    fn resolve_long(&self, name: &str) -> Result<&'static str, String> {
        if let Some(exact) = self.long_flags().find(|f| *f == name) {
            return Ok(exact);
        }
        let mut candidates: Vec<&str> = self.long_flags().filter(|f| f.starts_with(name)).collect();
        candidates.sort_unstable();
        candidates.dedup();
        match candidates.as_slice() {
            [] => Err(format!("unknown option {name}")),
            [one] => Ok(one),
            many => Err(format!("ambiguous option {name} ({})", many.join(", "))),
        }
    }

    fn check_value(&self, flag: &str, value: &str) -> Result<(), String> {
        if has_glob(value) && !listed(self.glob_ok_values, flag) {
            return Err(format!("glob character in value of {flag}"));
        }
        Ok(())
    }

    /// Check the arguments after argv[0].
    pub fn check_args(&self, args: &[String]) -> Result<(), String> {
        let mut positionals: Vec<&str> = Vec::new();
        let mut options_done = false;
        let mut iter = args.iter();
        while let Some(arg) = iter.next() {
            let arg = arg.as_str();
            if options_done || arg == "-" || !arg.starts_with('-') {
                // `-` is stdin, which is exactly what a filter is meant to read.
                if arg != "-" {
                    positionals.push(arg);
                }
                continue;
            }
            if arg == "--" {
                options_done = true;
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, v)) => (format!("--{n}"), Some(v)),
                    None => (arg.to_string(), None),
                };
                let flag = self.resolve_long(&name)?;
                match self.kind(flag) {
                    Some(Kind::Denied) => return Err(format!("denied flag {flag}")),
                    Some(Kind::Value) => {
                        let value = match attached {
                            Some(v) => v,
                            None => iter.next().ok_or_else(|| format!("{flag} needs a value"))?,
                        };
                        self.check_value(flag, value)?;
                    }
                    Some(Kind::OptionalValue) => {
                        if let Some(v) = attached {
                            self.check_value(flag, v)?;
                        }
                    }
                    Some(Kind::Plain) if attached.is_some() => {
                        return Err(format!("{flag} takes no value"))
                    }
                    Some(Kind::Plain) => {}
                    None => return Err(format!("unknown option {name}")),
                }
                continue;
            }
            // A cluster of short flags; a value flag ends it, taking the rest or the next arg.
            let cluster: Vec<char> = arg[1..].chars().collect();
            for (i, c) in cluster.iter().enumerate() {
                let flag = format!("-{c}");
                match self.kind(&flag) {
                    Some(Kind::Denied) => return Err(format!("denied flag {flag}")),
                    Some(Kind::Value) => {
                        let rest: String = cluster[i + 1..].iter().collect();
                        let value = if rest.is_empty() {
                            iter.next()
                                .ok_or_else(|| format!("{flag} needs a value"))?
                                .clone()
                        } else {
                            rest
                        };
                        self.check_value(&flag, &value)?;
                        break;
                    }
                    Some(Kind::Plain) => {}
                    Some(Kind::OptionalValue) | None => {
                        return Err(format!("unknown option {flag}"))
                    }
                }
            }
        }

        if positionals.len() < self.min_positional {
            return Err("missing operand".into());
        }
        if self
            .max_positional
            .is_some_and(|max| positionals.len() > max)
        {
            return Err("too many operands".into());
        }
        for p in &positionals {
            if has_glob(p) && !self.glob_ok_positionals {
                return Err(format!("glob character in operand {p}"));
            }
        }
        if self.name == "jq" {
            if let Some(problem) = positionals.first().and_then(|p| jq_program_problem(p)) {
                return Err(problem.into());
            }
        }
        Ok(())
    }
}

fn in_trusted_dir(path: &Path, trusted_dirs: &[PathBuf]) -> bool {
    let Some(parent) = path.parent() else {
        return false;
    };
    // Compare directories, not the file: /bin may be a link to /usr/bin, but a link named
    // `head` in a trusted directory pointing elsewhere is still what that directory offers.
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let parent = canon(parent);
    trusted_dirs.iter().any(|d| canon(d) == parent)
}

/// OpenClaw B's safe-bin check: Ok when `argv` is a safe use of a trusted filter.
pub fn safe_bin_usage(
    argv: &[String],
    resolved_path: Option<&Path>,
    safe_bins: &[String],
    trusted_dirs: &[PathBuf],
) -> Result<(), String> {
    let first = argv.first().ok_or("empty command")?;
    let Some(path) = resolved_path else {
        return Err(format!("{first}: executable not resolved"));
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .ok_or_else(|| format!("{first}: no executable name in {}", path.display()))?;
    if !safe_bins.iter().any(|b| b.trim().to_lowercase() == name) {
        return Err(format!("{name}: not a safe bin"));
    }
    let profile = profile(&name).ok_or_else(|| format!("{name}: no safe-bin profile"))?;
    if !in_trusted_dir(path, trusted_dirs) {
        return Err(format!(
            "{name}: not in a trusted directory ({})",
            path.display()
        ));
    }
    if !path.is_file() {
        return Err(format!("{name}: {} does not exist", path.display()));
    }
    profile
        .check_args(&argv[1..])
        .map_err(|why| format!("{name}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    fn all_bins() -> Vec<String> {
        PROFILES.iter().map(|p| p.name.to_string()).collect()
    }

    /// A trusted directory holding a stand-in file for every profiled binary, so the table does
    /// not depend on what this machine has installed.
    fn fake_bin_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for p in PROFILES {
            std::fs::write(dir.path().join(p.name), "").unwrap();
        }
        dir
    }

    fn check(dir: &Path, argv: &[&str]) -> Result<(), String> {
        let argv = args(argv);
        let path = dir.join(&argv[0]);
        safe_bin_usage(&argv, Some(&path), &all_bins(), &[dir.to_path_buf()])
    }

    #[test]
    fn argument_table() {
        let dir = fake_bin_dir();
        #[rustfmt::skip]
        let cases: &[(&[&str], Result<(), &str>)] = &[
            // head / tail
            (&["head"], Ok(())),
            (&["head", "-n", "5"], Ok(())),
            (&["head", "-n5"], Ok(())),
            (&["head", "--lines=5"], Ok(())),
            (&["head", "--lines", "5"], Ok(())),
            (&["head", "--lin", "5"], Ok(())),
            (&["head", "-qz"], Ok(())),
            (&["head", "-qn", "3"], Ok(())),
            (&["head", "-qn3"], Ok(())),
            (&["head", "-"], Ok(())),
            (&["head", "-n"], Err("head: -n needs a value")),
            (&["head", "file.txt"], Err("head: too many operands")),
            (&["head", "--", "-n"], Err("head: too many operands")),
            (&["head", "-x"], Err("head: unknown option -x")),
            (&["head", "--follow"], Err("head: unknown option --follow")),
            (&["head", "--quiet=1"], Err("head: --quiet takes no value")),
            (&["head", "-n", "*"], Err("head: glob character in value of -n")),
            (&["tail", "-n", "+3"], Ok(())),
            (&["tail", "-c", "10", "-v"], Ok(())),
            (&["tail", "-f"], Err("tail: unknown option -f")),
            (&["tail", "/etc/passwd"], Err("tail: too many operands")),
            // tr
            (&["tr", "a-z", "A-Z"], Ok(())),
            (&["tr", "-d", "[:space:]"], Ok(())),
            (&["tr", "-cs", "[:alnum:]", "\\n"], Ok(())),
            (&["tr", "--del", "x"], Ok(())),
            (&["tr"], Err("tr: missing operand")),
            (&["tr", "a", "b", "c"], Err("tr: too many operands")),
            // wc
            (&["wc", "-l"], Ok(())),
            (&["wc", "-lwc"], Ok(())),
            (&["wc", "--total=never", "-l"], Ok(())),
            (&["wc", "--files0-from=list"], Err("wc: denied flag --files0-from")),
            (&["wc", "--files0", "list"], Err("wc: denied flag --files0-from")),
            (&["wc", "*.rs"], Err("wc: too many operands")),
            // cut
            (&["cut", "-d", ",", "-f", "1,3"], Ok(())),
            (&["cut", "-d*", "-f2"], Ok(())),
            (&["cut", "-f", "1-", "--output-delimiter=|"], Ok(())),
            (&["cut", "-c1-3", "--complement", "-s"], Ok(())),
            (&["cut", "-f", "*"], Err("cut: glob character in value of -f")),
            (&["cut", "-f1", "data.csv"], Err("cut: too many operands")),
            // uniq
            (&["uniq", "-c"], Ok(())),
            (&["uniq", "-f", "2", "-s3", "-w", "4", "-iu"], Ok(())),
            (&["uniq", "--all-repeated=separate"], Ok(())),
            (&["uniq", "--group"], Ok(())),
            (&["uniq", "--skip-c=2"], Ok(())),
            (&["uniq", "--skip", "2"], Err("uniq: ambiguous option --skip (--skip-chars, --skip-fields)")),
            (&["uniq", "in.txt", "out.txt"], Err("uniq: too many operands")),
            // sort
            (&["sort", "-rn", "-k2,2", "-t", ":"], Ok(())),
            (&["sort", "-u", "--key=1"], Ok(())),
            (&["sort", "-o", "out"], Err("sort: denied flag -o")),
            (&["sort", "-ro", "out"], Err("sort: denied flag -o")),
            (&["sort", "--output=out"], Err("sort: denied flag --output")),
            (&["sort", "--out", "x"], Err("sort: denied flag --output")),
            (&["sort", "-T", "/tmp"], Err("sort: denied flag -T")),
            (&["sort", "--compress-program=sh"], Err("sort: denied flag --compress-program")),
            (&["sort", "--random-source=/dev/zero"], Err("sort: denied flag --random-source")),
            (&["sort", "--s", "x"], Err("sort: ambiguous option --s (--sort, --stable)")),
            // grep
            (&["grep", "-e", "foo"], Ok(())),
            (&["grep", "-i", "-e", "a.*b", "-e", "[0-9]+"], Ok(())),
            (&["grep", "--regexp=x?", "-c"], Ok(())),
            (&["grep", "-ie*"], Ok(())),
            (&["grep", "--color=auto", "-e", "x"], Ok(())),
            (&["grep", "foo"], Err("grep: too many operands")),
            (&["grep", "-e", "x", "file"], Err("grep: too many operands")),
            (&["grep", "-r", "-e", "x"], Err("grep: denied flag -r")),
            (&["grep", "-ir", "-e", "x"], Err("grep: denied flag -r")),
            (&["grep", "-f", "pats"], Err("grep: denied flag -f")),
            (&["grep", "--recursive", "-e", "x"], Err("grep: denied flag --recursive")),
            (&["grep", "--file=pats"], Err("grep: denied flag --file")),
            (&["grep", "--exclude-f=x", "-e", "y"], Err("grep: denied flag --exclude-from")),
            (&["grep", "--fil", "-e", "y"], Err("grep: ambiguous option --fil (--file, --files-with-matches, --files-without-match)")),
            (&["grep", "-l", "-e", "y"], Ok(())),
            (&["grep", "-m", "*", "-e", "x"], Err("grep: glob character in value of -m")),
            // jq
            (&["jq", "."], Ok(())),
            (&["jq", "-r", ".items[] | .name"], Ok(())),
            (&["jq", "-rc", "--indent", "2", ".[0]"], Ok(())),
            (&["jq", "-n", "[1,2] | map(.*2)"], Ok(())),
            (&["jq", ".environment"], Ok(())),
            (&["jq"], Err("jq: missing operand")),
            (&["jq", ".", "secrets.json"], Err("jq: too many operands")),
            (&["jq", "env.HOME"], Err("jq: program reads the environment")),
            (&["jq", "-n", "$ENV.PATH"], Err("jq: program reads the environment")),
            (&["jq", "include \"x\"; ."], Err("jq: program loads modules")),
            (&["jq", "-f", "prog.jq"], Err("jq: denied flag -f")),
            (&["jq", "--rawfile", "a", "b", "."], Err("jq: denied flag --rawfile")),
            (&["jq", "--slurpf", "a", "b", "."], Err("jq: denied flag --slurpfile")),
            (&["jq", "-L", "/tmp", "."], Err("jq: denied flag -L")),
        ];
        for (argv, expected) in cases {
            let got = check(dir.path(), argv);
            let expected = expected.map_err(|e| e.to_string());
            assert_eq!(got, expected, "argv {argv:?}");
        }
    }

    #[test]
    fn where_the_binary_lives() {
        let dir = fake_bin_dir();
        let bins = all_bins();
        let trusted = vec![dir.path().to_path_buf()];
        let argv = args(&["head", "-n", "1"]);

        let untrusted = tempfile::tempdir().unwrap();
        let elsewhere = untrusted.path().join("head");
        std::fs::write(&elsewhere, "").unwrap();
        let err = safe_bin_usage(&argv, Some(&elsewhere), &bins, &trusted).unwrap_err();
        assert_eq!(
            err,
            format!("head: not in a trusted directory ({})", elsewhere.display())
        );

        let err = safe_bin_usage(&argv, None, &bins, &trusted).unwrap_err();
        assert_eq!(err, "head: executable not resolved");

        let missing = dir.path().join("HEAD");
        let err = safe_bin_usage(&argv, Some(&missing), &bins, &trusted).unwrap_err();
        assert_eq!(err, format!("head: {} does not exist", missing.display()));

        // A subdirectory of a trusted directory is not trusted.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let nested = dir.path().join("sub").join("head");
        std::fs::write(&nested, "").unwrap();
        assert!(safe_bin_usage(&argv, Some(&nested), &bins, &trusted).is_err());

        // argv[0] may be a path or a different spelling; the resolved basename decides.
        let spelled = args(&["./HEAD", "-n", "1"]);
        assert_eq!(
            safe_bin_usage(&spelled, Some(&dir.path().join("head")), &bins, &trusted),
            Ok(())
        );
    }

    #[test]
    fn real_trusted_dirs() {
        let trusted: Vec<PathBuf> = DEFAULT_TRUSTED_DIRS.iter().map(PathBuf::from).collect();
        let bins: Vec<String> = DEFAULT_SAFE_BINS.iter().map(|s| s.to_string()).collect();
        let argv = args(&["head", "-n", "2"]);
        if Path::new("/usr/bin/head").is_file() {
            assert_eq!(
                safe_bin_usage(&argv, Some(Path::new("/usr/bin/head")), &bins, &trusted),
                Ok(())
            );
        }
        let err = safe_bin_usage(&argv, Some(Path::new("/tmp/head")), &bins, &trusted).unwrap_err();
        assert_eq!(err, "head: not in a trusted directory (/tmp/head)");
    }

    #[test]
    fn membership_and_profiles() {
        let dir = fake_bin_dir();
        std::fs::write(dir.path().join("cat"), "").unwrap();
        let trusted = vec![dir.path().to_path_buf()];
        let defaults: Vec<String> = DEFAULT_SAFE_BINS.iter().map(|s| s.to_string()).collect();

        // grep, sort and jq are profiled but opt-in.
        let grep = args(&["grep", "-e", "x"]);
        let err = safe_bin_usage(&grep, Some(&dir.path().join("grep")), &defaults, &trusted);
        assert_eq!(err, Err("grep: not a safe bin".into()));
        let opted = vec![" GREP ".to_string()];
        assert_eq!(
            safe_bin_usage(&grep, Some(&dir.path().join("grep")), &opted, &trusted),
            Ok(())
        );

        let cat = args(&["cat"]);
        let with_cat = vec!["cat".to_string()];
        let err = safe_bin_usage(&cat, Some(&dir.path().join("cat")), &with_cat, &trusted);
        assert_eq!(err, Err("cat: no safe-bin profile".into()));

        assert!(safe_bin_usage(&[], None, &defaults, &trusted).is_err());
    }

    #[test]
    fn every_default_has_a_profile() {
        for name in DEFAULT_SAFE_BINS
            .iter()
            .chain(["jq", "grep", "sort"].iter())
        {
            assert!(profile(name).is_some(), "{name}");
        }
    }
}
