//! `classifyCommand`: what a command does, per segment (search, read, list, neutral, other), and whether
//! the whole command is read-only, with the reasons. Built on the approval analysis, so a command that
//! does not parse is never read-only.

use super::analyze::{analyze, Analysis, Context, Segment};

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

const SEARCH: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "locate", "which",
    "whereis",
];
const READ: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "bat",
    "wc",
    "file",
    "stat",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "jq",
    "yq",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "readlink",
    "realpath",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "base64",
    "column",
    "fold",
    "rev",
    "tac",
    "paste",
    "expand",
    "basename",
    "dirname",
    "sed",
    "awk",
];
const LIST: &[&str] = &["ls", "tree", "du", "df", "exa", "eza", "lsof", "ps"];
const NEUTRAL: &[&str] = &[
    "echo", "printf", "true", "false", "cd", "pwd", "test", "[", ":", "sleep", "date", "whoami",
    "id", "uname", "hostname", "env", "printenv", "seq", "expr", "type",
];

/// Read-only git subcommands (with their own argument checks below).
const GIT_READ: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "describe",
    "shortlog",
    "cat-file",
    "grep",
    "branch",
    "tag",
    "remote",
    "reflog",
    "merge-base",
    "rev-list",
    "whatchanged",
];

fn base(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn kind_of(name: &str) -> Kind {
    if SEARCH.contains(&name) {
        Kind::Search
    } else if READ.contains(&name) {
        Kind::Read
    } else if LIST.contains(&name) {
        Kind::List
    } else if NEUTRAL.contains(&name) {
        Kind::Neutral
    } else {
        Kind::Other
    }
}

fn has_any(args: &[String], flags: &[&str]) -> Option<String> {
    args.iter().find_map(|a| {
        flags
            .iter()
            .find(|f| a == *f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
            .map(|f| f.to_string())
    })
}

/// Why the arguments make an otherwise read-only program write or run something.
fn unsafe_args(name: &str, args: &[String], depth: usize) -> Option<String> {
    match name {
        "find" => has_any(
            args,
            &[
                "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0",
                "-fprintf",
            ],
        )
        .map(|f| format!("find {f} runs commands or writes")),
        "fd" | "fdfind" => has_any(args, &["-x", "--exec", "-X", "--exec-batch"])
            .map(|f| format!("fd {f} runs commands")),
        "rg" => has_any(args, &["--pre", "--hostname-bin", "-z", "--search-zip"])
            .map(|f| format!("rg {f} runs external programs")),
        "sed" => {
            let in_place = args.iter().any(|a| {
                a.starts_with("--in-place")
                    || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('i'))
            });
            if in_place {
                Some("sed -i edits files in place".into())
            } else if args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .any(|script| sed_script_writes(script))
            {
                Some("the sed script writes files or runs commands (w, W, e)".into())
            } else {
                None
            }
        }
        "awk" => args
            .iter()
            .any(|a| {
                a.contains("system(") || a.contains('>') || a.contains("| ") || a.contains("|\"")
            })
            .then(|| "the awk program runs commands or writes files".into()),
        "sort" => has_any(args, &["-o", "--output", "--compress-program"])
            .map(|f| format!("sort {f} writes or runs programs")),
        "xargs" => None,
        _ => {
            let _ = depth;
            None
        }
    }
}

/// Whether a sed script uses a command that writes a file or runs one: `w`, `W`, `e`, or the `w`/`e`
/// flags of `s`. A heuristic over the script text; it errs towards "writes".
fn sed_script_writes(script: &str) -> bool {
    script.split([';', '\n']).any(|cmd| {
        let cmd = cmd.trim_start_matches(|c: char| c.is_ascii_digit() || " ,$!~".contains(c));
        let first = cmd.chars().next();
        if matches!(first, Some('w') | Some('W') | Some('e')) {
            return true;
        }
        if let Some(rest) = cmd.strip_prefix('s') {
            let Some(delim) = rest.chars().next() else {
                return false;
            };
            let flags = rest.rsplit(delim).next().unwrap_or("");
            return rest.matches(delim).count() >= 3
                && (flags.contains('w') || flags.contains('e'));
        }
        false
    })
}

fn classify_git(args: &[String]) -> (Kind, bool, Vec<String>) {
    // Global options before the subcommand: -C <dir>, --no-pager, --git-dir=..., -c k=v (unsafe).
    let mut i = 0;
    let mut reasons = Vec::new();
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            "-c" | "--config-env" => {
                return (
                    Kind::Other,
                    false,
                    vec![format!("git {a} can set a pager or an external command")],
                );
            }
            "-p" | "--paginate" => {
                return (
                    Kind::Other,
                    false,
                    vec!["git --paginate runs a pager".into()],
                )
            }
            s if s.starts_with("--git-dir=")
                || s.starts_with("--work-tree=")
                || s == "--no-pager"
                || s == "--no-optional-locks" =>
            {
                i += 1
            }
            s if s.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return (
            Kind::Neutral,
            true,
            vec!["git without a subcommand prints help".into()],
        );
    };
    let rest = &args[i + 1..];
    if !GIT_READ.contains(&sub.as_str()) {
        return (
            Kind::Other,
            false,
            vec![format!("git {sub} may change the repository")],
        );
    }
    if let Some(f) = has_any(
        rest,
        &["--output", "--ext-diff", "--textconv", "--exec", "-o"],
    ) {
        return (
            Kind::Other,
            false,
            vec![format!("git {sub} {f} writes files or runs programs")],
        );
    }
    let lists_only = |allowed: &[&str]| {
        rest.iter().all(|a| {
            allowed.contains(&a.as_str()) || a.starts_with("--format") || a.starts_with("--sort")
        })
    };
    let ok = match sub.as_str() {
        "branch" => lists_only(&[
            "-a",
            "-r",
            "-l",
            "--list",
            "-v",
            "-vv",
            "--all",
            "--remotes",
            "--show-current",
            "--merged",
            "--no-merged",
            "--contains",
        ]),
        "tag" => lists_only(&["-l", "--list", "-n"]),
        "remote" => lists_only(&["-v", "--verbose", "show", "get-url"]),
        _ => true,
    };
    if !ok {
        reasons.push(format!(
            "git {sub} with these arguments changes the repository"
        ));
        return (Kind::Other, false, reasons);
    }
    let kind = match sub.as_str() {
        "grep" => Kind::Search,
        "status" | "branch" | "tag" | "remote" | "ls-files" | "ls-tree" => Kind::List,
        _ => Kind::Read,
    };
    reasons.push(format!("git {sub} is read-only"));
    (kind, true, reasons)
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
    if let Some(inner) = &s.inner {
        let c = from_analysis(inner, depth + 1);
        return SegmentClass {
            argv,
            kind: if c.is_search_or_read {
                Kind::Read
            } else {
                Kind::Other
            },
            read_only: c.is_read_only,
            reasons: std::iter::once("shell -c: classified by its script".to_string())
                .chain(c.reasons)
                .collect(),
        };
    }
    let eff = &s.effective_argv;
    let Some(first) = eff.first() else {
        return SegmentClass {
            argv,
            kind: Kind::Neutral,
            read_only: true,
            reasons: vec!["empty".into()],
        };
    };
    let name = base(first);
    let args = &eff[1..];
    if name == "git" {
        let (kind, read_only, reasons) = classify_git(args);
        return SegmentClass {
            argv,
            kind,
            read_only,
            reasons,
        };
    }
    if name == "xargs" {
        // `xargs grep x` is as read-only as `grep x`; `xargs rm` is not.
        let cmd_at = args
            .iter()
            .position(|a| !a.starts_with('-'))
            .unwrap_or(args.len());
        let inner: Vec<String> = args[cmd_at..].to_vec();
        let inner_name = inner
            .first()
            .map(|s| base(s).to_string())
            .unwrap_or_else(|| "echo".into());
        let kind = kind_of(&inner_name);
        let bad = unsafe_args(&inner_name, inner.get(1..).unwrap_or(&[]), depth);
        let read_only = kind != Kind::Other && bad.is_none();
        let reason = bad.unwrap_or_else(|| {
            if read_only {
                format!("xargs feeds {inner_name}, which is {}", kind.as_str())
            } else {
                format!("xargs runs {inner_name}, which may write")
            }
        });
        return SegmentClass {
            argv,
            kind,
            read_only,
            reasons: vec![reason],
        };
    }
    let kind = kind_of(name);
    if kind == Kind::Other {
        return SegmentClass {
            argv,
            kind,
            read_only: false,
            reasons: vec![format!("{name} is not known to be read-only")],
        };
    }
    match unsafe_args(name, args, depth) {
        Some(why) => SegmentClass {
            argv,
            kind,
            read_only: false,
            reasons: vec![why],
        },
        None => SegmentClass {
            argv,
            kind,
            read_only: true,
            reasons: vec![format!("{name} is {}", kind.as_str())],
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
                home: Some("/root"),
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
            ("fd -e rs", true, true),
            ("fd -e rs --exec rm", true, false),
            ("fd -X rm", true, false),
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
            ("xargs grep foo", true, true),
            ("find . -name '*.tmp' | xargs rm", false, false),
            ("ls | xargs -0 wc -l", true, true),
            ("sudo cat /etc/shadow", false, false),
            ("env FOO=1 cat x", true, true),
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
