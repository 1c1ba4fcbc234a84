//! `classifyCommand`: what a command does, per segment (search, read, list, neutral, other), and whether
//! the whole command is read-only, with the reasons. Built on the approval analysis, so a command that
//! does not parse is never read-only.

use super::analyze::{analyze, Analysis, Context, Segment};

pub use super::readonly::Kind;
use super::readonly::{grammar, judge};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentClass {
    pub argv: Vec<String>,
    pub kind: Kind,
    pub read_only: bool,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub parsed: bool,
    pub segments: Vec<SegmentClass>,
    /// Every non-neutral segment searches, reads or lists.
    pub is_search_or_read: bool,
    /// Nothing in the command can write, delete, execute other programs or reach the network.
    pub is_read_only: bool,
    pub reasons: Vec<String>,
}

fn base(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// Directories whose programs are the system's own.
pub(super) const SYSTEM_DIRS: [&str; 5] =
    ["/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"];

/// Environment variables a read-only command may set: see `env_names`.
fn harmless_env(name: &str, value: &str) -> bool {
    super::env_names::is_harmless_assignment(name, value)
}

/// Why the wrappers the analysis removed (`env`, `nice`, `timeout`...) keep the command from being
/// read-only: the prefix is parsed again, strictly, and must end exactly where the analysis says
/// the real command starts, so an option the analysis skipped cannot hide a different command
/// (`env -vu cat rm -rf x` runs `rm`).
fn wrapper_problem(s: &Segment) -> Option<String> {
    let prefix = &s.argv[s.prefix_words..s.argv.len().saturating_sub(s.effective_argv.len())];
    if let Some((w, _)) = prefix
        .iter()
        .zip(&s.expands[s.prefix_words..])
        .find(|(_, expands)| **expands)
    {
        return Some(format!("{w} may expand to other words"));
    }
    let mut j = 0;
    for wrapper in &s.wrappers {
        let Some(word) = prefix.get(j) else {
            return Some(format!("{wrapper}: the wrapper could not be parsed"));
        };
        if base(word) != wrapper {
            return Some(format!("{wrapper}: the wrapper could not be parsed"));
        }
        j += 1;
        let is = |k: usize, f: &dyn Fn(&str) -> bool| prefix.get(k).is_some_and(|w| f(w));
        match wrapper.as_str() {
            "env" => loop {
                match prefix.get(j).map(String::as_str) {
                    Some("-u") if is(j + 1, &|_| true) => j += 2,
                    Some(a) if a.starts_with("--unset=") => j += 1,
                    Some("--") => j += 1,
                    Some(a) if !a.starts_with('-') && a.contains('=') => {
                        let (name, value) = a.split_once('=').unwrap_or((a, ""));
                        if !harmless_env(name, value) {
                            return Some(format!(
                                "env sets {name}, which can change what the command runs"
                            ));
                        }
                        j += 1;
                    }
                    _ => break,
                }
            },
            "nice" => match prefix.get(j).map(String::as_str) {
                Some("-n") if is(j + 1, &|w| w.parse::<i32>().is_ok()) => j += 2,
                Some(a)
                    if a.strip_prefix("-n")
                        .or_else(|| a.strip_prefix("--adjustment="))
                        .or_else(|| a.strip_prefix('-'))
                        .is_some_and(|n| n.parse::<i32>().is_ok()) =>
                {
                    j += 1
                }
                _ => {}
            },
            "timeout" => {
                loop {
                    match prefix.get(j).map(String::as_str) {
                        Some("-s" | "-k") if is(j + 1, &|_| true) => j += 2,
                        Some("--preserve-status" | "--foreground" | "-v" | "--verbose") => j += 1,
                        Some(a)
                            if a.starts_with("--signal=")
                                || a.starts_with("--kill-after=")
                                || (a.len() > 2
                                    && (a.starts_with("-s") || a.starts_with("-k"))) =>
                        {
                            j += 1
                        }
                        _ => break,
                    }
                }
                // The duration.
                if is(j, &|w| !w.starts_with('-')) {
                    j += 1;
                }
            }
            "stdbuf" => {
                while let Some(a) = prefix.get(j).map(String::as_str) {
                    if matches!(a, "-i" | "-o" | "-e") && is(j + 1, &|_| true) {
                        j += 2;
                    } else if ["-i", "-o", "-e", "--input=", "--output=", "--error="]
                        .iter()
                        .any(|p| a.starts_with(p) && a.len() > p.len())
                    {
                        j += 1;
                    } else {
                        break;
                    }
                }
            }
            "time" => {
                if is(j, &|w| w == "-p") {
                    j += 1;
                }
            }
            "busybox" | "toybox" => {}
            "nohup" => return Some("nohup writes nohup.out when output is a terminal".into()),
            "command" | "exec" | "builtin" => {
                if is(j, &|w| w == "--") {
                    j += 1;
                }
            }
            other => return Some(format!("{other} is not allowed around a read-only command")),
        }
    }
    (j != prefix.len()).then(|| {
        format!(
            "the wrapper options ({}) are not allowed for a read-only command",
            prefix[..].join(" ")
        )
    })
}

/// A program named by a path must be the system's own: `./sort` or `bin/cat` is a file of the
/// workspace that merely shares a name.
fn not_system_program(argv: &[String]) -> Option<String> {
    let first = argv.first()?;
    let name = base(first);
    let system = SYSTEM_DIRS
        .iter()
        .any(|d| first.strip_prefix(d) == Some(&format!("/{name}")));
    (first.contains('/') && !system)
        .then(|| format!("{first} is not the system's {name}, and is not known to be read-only"))
}

/// `SYSTEM_DIRS` with symlinks followed (`/bin` is `/usr/bin` on merged-usr systems), once.
fn real_system_dirs() -> &'static [std::path::PathBuf] {
    static DIRS: std::sync::OnceLock<Vec<std::path::PathBuf>> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        SYSTEM_DIRS
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .collect()
    })
}

/// The file that runs must be the system's program of that name: a `cat` found first on `PATH`
/// in a workspace directory, or a symlink named `cat` to `touch`, is judged by what it is.
/// Builtins run inside bash whatever `PATH` holds.
fn not_the_named_program(s: &Segment) -> Option<String> {
    let r = &s.resolution;
    if r.builtin {
        return None;
    }
    let real = r.resolved_path.as_ref()?;
    let name = base(&r.raw_executable);
    let real_name = real.file_name()?.to_string_lossy();
    let system = real
        .parent()
        .is_some_and(|dir| real_system_dirs().iter().any(|d| d == dir));
    if !super::resolve::same_program(name, &real_name) || !system {
        return Some(format!(
            "{name} runs {}, which is not the system's {name}",
            real.display()
        ));
    }
    None
}

/// `xargs` runs a command built from its input (which may add options): never read-only, but
/// its kind is that of the command it feeds.
fn classify_xargs(argv: Vec<String>, args: &[String]) -> SegmentClass {
    let inner = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(|a| base(a).to_string())
        .unwrap_or_else(|| "echo".into());
    SegmentClass {
        argv,
        kind: grammar(&inner).map_or(Kind::Other, |g| g.kind),
        read_only: false,
        reasons: vec![format!(
            "xargs runs {inner} with arguments read from its input; it is never read-only"
        )],
    }
}

fn classify_segment(s: &Segment, depth: usize) -> SegmentClass {
    let argv = s.argv.clone();
    if let Some(b) = &s.blocked {
        return SegmentClass {
            argv,
            kind: Kind::Other,
            read_only: false,
            reasons: vec![b.clone()],
        };
    }
    let problem = s
        .inexact
        .clone()
        .or_else(|| {
            super::env_names::first_harmful(
                s.assignments.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            )
            .map(|n| format!("{n}=... can change what the command runs"))
        })
        .or_else(|| wrapper_problem(s))
        .or_else(|| not_system_program(&s.effective_argv))
        .or_else(|| not_the_named_program(s));
    if let Some(inner) = &s.inner {
        let c = from_analysis(inner, depth + 1);
        let kind = if c.is_search_or_read {
            Kind::Read
        } else {
            Kind::Other
        };
        let reasons =
            std::iter::once("shell -c: classified by its script".to_string()).chain(c.reasons);
        return match problem {
            Some(why) if c.is_read_only => SegmentClass {
                argv,
                kind,
                read_only: false,
                reasons: vec![why],
            },
            _ => SegmentClass {
                argv,
                kind,
                read_only: c.is_read_only,
                reasons: reasons.collect(),
            },
        };
    }
    let eff = &s.effective_argv;
    let Some(first) = eff.first() else {
        // An assignment-only segment: read-only only when it sets nothing that matters.
        return SegmentClass {
            argv,
            kind: Kind::Neutral,
            read_only: problem.is_none(),
            reasons: vec![problem.unwrap_or_else(|| "empty".into())],
        };
    };
    let name = base(first);
    if name == "xargs" {
        return classify_xargs(argv, &eff[1..]);
    }
    let offset = s.argv.len() - eff.len();
    let expands = s.expands.get(offset..).unwrap_or(&[]);
    let verdict = judge(eff, expands);
    match problem {
        Some(why) if verdict.read_only => SegmentClass {
            argv,
            kind: verdict.kind,
            read_only: false,
            reasons: vec![why],
        },
        _ => SegmentClass {
            argv,
            kind: verdict.kind,
            read_only: verdict.read_only,
            reasons: vec![verdict.reason],
        },
    }
}

fn from_analysis(a: &Analysis, depth: usize) -> Classification {
    if !a.ok {
        let why = format!(
            "the command does not parse: {}",
            a.reason.clone().unwrap_or_default()
        );
        return Classification {
            parsed: false,
            segments: vec![],
            is_search_or_read: false,
            is_read_only: false,
            reasons: vec![why],
        };
    }
    let segments: Vec<SegmentClass> = a.segments().map(|s| classify_segment(s, depth)).collect();
    let is_search_or_read = segments.iter().any(|s| s.kind != Kind::Neutral)
        && segments.iter().all(|s| {
            matches!(
                s.kind,
                Kind::Search | Kind::Read | Kind::List | Kind::Neutral
            )
        });
    let is_read_only = segments.iter().all(|s| s.read_only);
    let reasons = segments.iter().flat_map(|s| s.reasons.clone()).collect();
    Classification {
        parsed: true,
        segments,
        is_search_or_read,
        is_read_only,
        reasons,
    }
}

pub fn classify(command: &str, ctx: &Context<'_>) -> Classification {
    from_analysis(&analyze(command, ctx), 0)
}

/// [`classify`] of an analysis already made (with the environment the command gets).
pub fn classify_analysis(analysis: &Analysis) -> Classification {
    from_analysis(analysis, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn c(cmd: &str) -> Classification {
        classify(
            cmd,
            &Context {
                cwd: Path::new("/"),
                path: Some("/usr/bin:/bin"),
                home: Some(crate::approval::TEST_HOME),
            },
        )
    }

    #[test]
    fn table() {
        // (command, isSearchOrRead, isReadOnly)
        let cases: &[(&str, bool, bool)] = &[
            ("ls -la", true, true),
            ("ls", true, true),
            ("tree src", true, true),
            ("du -sh .", true, true),
            ("cat package.json", true, true),
            ("head -n 20 README.md", true, true),
            ("tail -f log.txt", true, true),
            ("wc -l src/*.rs", true, true),
            ("grep -rn TODO src", true, true),
            ("rg -n 'fn main' src", true, true),
            ("rg --pre ./script pattern", true, false),
            ("rg -z pattern", true, false),
            ("find . -name '*.rs'", true, true),
            ("find . -delete", true, false),
            ("find . -name x -exec rm {} ;", true, false),
            ("find . -type f -execdir cat {} +", true, false),
            // fd was dropped from the read-only commands (its option parser is not modelled).
            ("fd -e rs", false, false),
            ("fd -X rm", false, false),
            ("sed -n 1,5p file", true, true),
            ("sed -i s/a/b/ file", true, false),
            ("sed --in-place=.bak s/a/b/ file", true, false),
            ("sed -n '1w out.txt' file", true, false),
            ("sed 's/a/b/w out.txt' file", true, false),
            ("sed -e s/x/y/g file", true, true),
            ("awk '{print $1}' file", true, true),
            ("awk '{system(\"rm x\")}' file", true, false),
            ("sort -o out.txt in.txt", true, false),
            ("sort in.txt | uniq -c", true, true),
            ("cat package.json | sh", false, false),
            ("cat x | bash -c 'rm -rf /'", false, false),
            // Shell state set by one segment: the next is not what it seems.
            ("BASH_CMDS[grep]=/bin/sh; grep -c 'touch F' x", true, false),
            ("PATH=/tmp; cat f", true, false),
            ("printf -v PATH %s /tmp; cat f", true, false),
            ("LANG=C; ls", true, true),
            ("git stash list", true, true),
            ("echo $[1+1]", false, true),
            ("which -a ls", true, true),
            ("git config --get user.name", true, true),
            ("git status", true, true),
            ("git diff HEAD~1", true, true),
            ("git log --oneline -5", true, true),
            ("git show HEAD:README.md", true, true),
            ("git -C sub status", true, true),
            ("git --no-pager log", true, true),
            ("git -c core.pager=evil log", false, false),
            ("git -c alias.x=!rm x", false, false),
            ("git push", false, false),
            ("git commit -m x", false, false),
            ("git branch", true, true),
            ("git branch -D main", false, false),
            ("git branch new-branch", false, false),
            ("git tag", true, true),
            ("git tag v1.0", false, false),
            ("git diff --output=patch.txt", false, false),
            ("git log --ext-diff", false, false),
            ("git grep foo", true, true),
            ("echo hello", false, true),
            ("echo 'a && rm -rf /'", false, true),
            ("echo \"ls; rm x\"", false, true),
            ("cd src && ls", true, true),
            ("ls && git push", false, false),
            ("ls > out.txt", false, false),
            ("cat x 2>/dev/null", false, false),
            ("cat $(ls)", false, false),
            ("echo `whoami`", false, false),
            ("rm -rf build", false, false),
            ("npm test", false, false),
            // xargs takes further arguments (options too) from its input: never read-only.
            ("xargs grep foo", true, false),
            ("find . -name '*.tmp' | xargs rm", false, false),
            ("ls | xargs -0 wc -l", true, false),
            ("sudo cat /etc/shadow", false, false),
            // An environment variable can change what runs (LD_PRELOAD, PAGER...).
            ("env FOO=1 cat x", true, false),
            ("env LANG=C cat x", true, true),
            ("timeout 5 grep -r x .", true, true),
            ("sh -c 'ls && cat x'", true, true),
            ("sh -c 'ls && rm x'", false, false),
            ("true", false, true),
            ("ps aux", true, true),
            ("jq .name package.json", true, true),
            ("curl https://example.com", false, false),
            ("python3 -c 'print(1)'", false, false),
        ];
        assert!(cases.len() >= 60);
        let mut wrong = Vec::new();
        for (cmd, search_or_read, read_only) in cases {
            let got = c(cmd);
            assert!(!got.reasons.is_empty(), "{cmd} has reasons");
            if (got.is_search_or_read, got.is_read_only) != (*search_or_read, *read_only) {
                wrong.push(format!(
                    "{cmd}: got ({}, {}) {:?}",
                    got.is_search_or_read, got.is_read_only, got.reasons
                ));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// What runs around and instead of the named program: wrappers, paths, expansions.
    #[test]
    fn wrappers_paths_and_expansions() {
        let cases: &[(&str, bool)] = &[
            // The analysis skips `-vu` as a flag and sees `cat`; env runs `rm` with `cat` unset.
            ("env -vu cat rm -rf x", false),
            ("env --un cat rm -rf x", false),
            ("env LD_PRELOAD=./x.so cat f", false),
            ("env GIT_EXTERNAL_DIFF=./x git diff", false),
            ("env LD_PRELOAD=./x.so sh -c 'cat f'", false),
            ("env -u FOO cat f", true),
            ("nice -n 5 cat f", true),
            ("timeout 5 cat f", true),
            ("timeout -s KILL 5 cat f", true),
            ("nohup cat f", false),
            ("time -p cat f", true),
            ("time -o cat cat f", false),
            ("stdbuf -oL grep x f", true),
            ("./cat f", false),
            ("bin/sort f", false),
            ("/usr/bin/cat f", true),
            ("/tmp/cat f", false),
            ("sort *", false),
            ("sort -- *", true),
            ("uniq {a,b}.txt", false),
            ("uniq 'x{a,b}.txt'", true),
            ("cat src/*.rs", true),
            ("cat *.rs", false),
            ("cat -- *.rs", true),
            ("*at f", false),
        ];
        let mut wrong = Vec::new();
        for (cmd, read_only) in cases {
            let got = c(cmd);
            if got.is_read_only != *read_only {
                wrong.push(format!("{cmd}: got {} {:?}", got.is_read_only, got.reasons));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn segments_carry_kinds_and_reasons() {
        let got = c("git status && rg x | head -n 1");
        let kinds: Vec<&str> = got.segments.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(kinds, vec!["list", "search", "read"]);
        assert_eq!(got.segments[0].reasons, vec!["git status is read-only"]);
        let bad = c("echo $(id)");
        assert!(!bad.parsed);
        assert_eq!(
            bad.reasons,
            vec!["the command does not parse: unsupported shell token: $()"]
        );
    }
}
