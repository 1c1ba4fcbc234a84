//! git: read-only by subcommand and flag. Global options are git's own (`-C`, `--git-dir`...);
//! `-c`/`--config-env` (can set a pager, an external diff, an fsmonitor hook) and `--paginate`
//! are refused. Each read-only subcommand has an allowlist of options, matched by exact spelling:
//! git would accept an abbreviation (`--outp`), but an abbreviated or unknown option is not
//! read-only here. Values: `--opt=value` and `--opt value` for options that take one, attached
//! only (`--stat=80`, `-uno`) for options whose value is optional.

use super::{plain_glob, refuse, Args, Kind, Verdict};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Operands {
    Any,
    /// Only with `-l`/`--list`; otherwise an operand names a branch or tag to create.
    ListOnly,
    /// None at all.
    None,
}

struct Sub {
    name: &'static str,
    kind: Kind,
    flags: &'static [&'static [&'static str]],
    /// Options that take a value: `--opt=v`, `--opt v`, `-xv`, `-x v`.
    values: &'static [&'static [&'static str]],
    /// Options whose value is optional and attached only: `--abbrev=7`, `-uno`.
    optional: &'static [&'static str],
    /// Options that take the next argument unless they are last (`--contains [commit]`).
    last_default: &'static [&'static str],
    refused: &'static [(&'static str, &'static str)],
    /// `-5` for `-n 5`.
    numeric: bool,
    /// Single-letter flags may be bundled (`-sb`): parse-options commands.
    bundling: bool,
    operands: Operands,
}

const DIFF_REFUSED: &[(&str, &str)] = &[
    ("--output", "writes to a file"),
    ("--ext-diff", "runs an external diff program"),
    ("--textconv", "runs textconv filter programs"),
    ("--show-signature", "runs gpg"),
];

const REV_FLAGS: &[&str] = &[
    "--all",
    "--branches",
    "--tags",
    "--remotes",
    "--reverse",
    "--first-parent",
    "--merges",
    "--no-merges",
    "--follow",
    "--full-history",
    "--date-order",
    "--topo-order",
    "--author-date-order",
    "--left-right",
    "--left-only",
    "--right-only",
    "--cherry-pick",
    "--cherry-mark",
    "--cherry",
    "--boundary",
    "--no-walk",
    "--walk-reflogs",
    "-g",
    "--ancestry-path",
    "--simplify-by-decoration",
    "--dense",
    "--sparse",
    "--simplify-merges",
    "--show-pulls",
    "--regexp-ignore-case",
    "-i",
    "--extended-regexp",
    "-E",
    "--fixed-strings",
    "-F",
    "--perl-regexp",
    "-P",
    "--all-match",
    "--invert-grep",
    "--not",
    "--root",
    "--count",
    "--parents",
    "--children",
    "--objects",
    "--objects-edge",
    "--single-worktree",
    "--reflog",
    "--stdin",
    "--in-commit-order",
    "--no-kept-objects",
    "--bisect",
    "--use-mailmap",
    "--mailmap",
    "--no-mailmap",
    "--source",
    "--oneline",
    "--graph",
    "--decorate",
    "--no-decorate",
    "--abbrev-commit",
    "--no-abbrev-commit",
    "--relative-date",
    "--notes",
    "--no-notes",
    "--pretty",
    "--log-size",
    "--clear-decorations",
    "--exclude-first-parent-only",
    "--timestamp",
    "--header",
    "--quiet",
    "-q",
];

const REV_VALUES: &[&str] = &[
    "--format",
    "--date",
    "--since",
    "--after",
    "--until",
    "--before",
    "--author",
    "--committer",
    "--grep",
    "-n",
    "--max-count",
    "--skip",
    "--max-age",
    "--min-age",
    "--exclude",
    "--glob",
    "--max-parents",
    "--min-parents",
    "--encoding",
    "-L",
    "--grep-reflog",
    "--since-as-filter",
    "--decorate-refs",
    "--decorate-refs-exclude",
];

const DIFF_FLAGS: &[&str] = &[
    "-p",
    "-u",
    "--patch",
    "-s",
    "--no-patch",
    "--raw",
    "--patch-with-raw",
    "--patch-with-stat",
    "--stat",
    "--shortstat",
    "--numstat",
    "--compact-summary",
    "--dirstat",
    "--summary",
    "--name-only",
    "--name-status",
    "-z",
    "--full-index",
    "--binary",
    "--no-abbrev",
    "--abbrev",
    "--no-color",
    "--color",
    "--word-diff",
    "--color-words",
    "--color-moved",
    "--no-color-moved",
    "--no-renames",
    "--find-renames",
    "-M",
    "--find-copies",
    "-C",
    "--find-copies-harder",
    "--irreversible-delete",
    "-D",
    "--minimal",
    "--patience",
    "--histogram",
    "--text",
    "-a",
    "--ignore-cr-at-eol",
    "--ignore-space-at-eol",
    "--ignore-space-change",
    "-b",
    "--ignore-all-space",
    "-w",
    "--ignore-blank-lines",
    "--indent-heuristic",
    "--no-indent-heuristic",
    "--function-context",
    "-W",
    "--exit-code",
    "--check",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules",
    "--submodule",
    "--no-prefix",
    "--default-prefix",
    "-R",
    "--relative",
    "--no-relative",
    "--cc",
    "-c",
    "-m",
    "--combined-all-paths",
    "--full-diff",
    "-t",
    "-r",
    "--merge-base",
    "--cached",
    "--staged",
    "--no-index",
    "-1",
    "-2",
    "-3",
    "--base",
    "--ours",
    "--theirs",
    "--ita-invisible-in-index",
    "--ita-visible-in-index",
    "--remerge-diff",
    "--no-diff-merges",
];

const DIFF_VALUES: &[&str] = &[
    "-U",
    "--unified",
    "-S",
    "-G",
    "--diff-filter",
    "--src-prefix",
    "--dst-prefix",
    "--line-prefix",
    "--diff-algorithm",
    "--anchored",
    "--inter-hunk-context",
    "--word-diff-regex",
    "--diff-merges",
    "-O",
    "--find-object",
    "--pickaxe-regex",
    "--stat-width",
    "--stat-name-width",
    "--stat-count",
    "--stat-graph-width",
    "-l",
];

const DIFF_OPTIONAL: &[&str] = &[
    "--stat",
    "--abbrev",
    "--color",
    "--word-diff",
    "--dirstat",
    "--relative",
    "--submodule",
    "--ignore-submodules",
    "--color-moved",
    "--find-renames",
    "-M",
    "--find-copies",
    "-C",
    "--break-rewrites",
    "-B",
    "--notes",
    "--pretty",
    "--decorate",
    "--expand-tabs",
    "--branches",
    "--tags",
    "--remotes",
    "-X",
    "--color-moved-ws",
];

const LIST_FILTER_LAST_DEFAULT: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
];

const fn sub(name: &'static str, kind: Kind) -> Sub {
    Sub {
        name,
        kind,
        flags: &[],
        values: &[],
        optional: &[],
        last_default: &[],
        refused: &[],
        numeric: false,
        bundling: false,
        operands: Operands::Any,
    }
}

const LOG_LIKE: Sub = Sub {
    flags: &[REV_FLAGS, DIFF_FLAGS],
    values: &[REV_VALUES, DIFF_VALUES],
    optional: DIFF_OPTIONAL,
    refused: DIFF_REFUSED,
    numeric: true,
    ..sub("log", Kind::Read)
};

static SUBS: &[Sub] = &[
    LOG_LIKE,
    Sub {
        name: "show",
        ..LOG_LIKE
    },
    Sub {
        name: "whatchanged",
        ..LOG_LIKE
    },
    Sub {
        name: "rev-list",
        ..LOG_LIKE
    },
    DIFF,
    Sub {
        flags: &[&[
            "-s",
            "--short",
            "-b",
            "--branch",
            "--long",
            "-v",
            "--verbose",
            "-z",
            "--null",
            "--no-column",
            "--ahead-behind",
            "--no-ahead-behind",
            "--renames",
            "--no-renames",
            "--show-stash",
            "--porcelain",
            "--column",
            "--untracked-files",
            "-u",
            "--ignored",
            "--ignore-submodules",
            "--find-renames",
        ]],
        optional: &[
            "--porcelain",
            "--column",
            "--untracked-files",
            "-u",
            "--ignored",
            "--ignore-submodules",
            "--find-renames",
            "-M",
        ],
        bundling: true,
        ..sub("status", Kind::List)
    },
    Sub {
        flags: &[&[
            "-a",
            "-r",
            "-l",
            "--list",
            "-v",
            "-vv",
            "--verbose",
            "--all",
            "--remotes",
            "--show-current",
            "-i",
            "--ignore-case",
            "--no-column",
            "--column",
            "--no-color",
            "--color",
            "--abbrev",
            "--no-abbrev",
            "--omit-empty",
        ]],
        values: &[&["--sort", "--format"]],
        optional: &["--column", "--color", "--abbrev"],
        last_default: LIST_FILTER_LAST_DEFAULT,
        bundling: true,
        operands: Operands::ListOnly,
        ..sub("branch", Kind::List)
    },
    Sub {
        flags: &[&[
            "-l",
            "--list",
            "-n",
            "-i",
            "--ignore-case",
            "--no-column",
            "--column",
            "--no-color",
            "--color",
            "--omit-empty",
        ]],
        values: &[&["--sort", "--format"]],
        optional: &["-n", "--column", "--color"],
        last_default: LIST_FILTER_LAST_DEFAULT,
        bundling: true,
        operands: Operands::ListOnly,
        ..sub("tag", Kind::List)
    },
    Sub {
        flags: &[&[
            "-i",
            "--ignore-case",
            "-I",
            "-w",
            "--word-regexp",
            "-v",
            "--invert-match",
            "-n",
            "--line-number",
            "-l",
            "--files-with-matches",
            "--name-only",
            "-L",
            "--files-without-match",
            "-c",
            "--count",
            "-h",
            "-H",
            "--full-name",
            "-E",
            "--extended-regexp",
            "-G",
            "--basic-regexp",
            "-F",
            "--fixed-strings",
            "-P",
            "--perl-regexp",
            "--heading",
            "--break",
            "--cached",
            "--untracked",
            "--no-index",
            "--index",
            "--recurse-submodules",
            "--all-match",
            "--and",
            "--or",
            "--not",
            "(",
            ")",
            "-o",
            "--only-matching",
            "-p",
            "--show-function",
            "-W",
            "--function-context",
            "--no-color",
            "--color",
            "--column",
            "-z",
            "--null",
            "-q",
            "--quiet",
            "--exclude-standard",
            "--no-exclude-standard",
            "-a",
            "--text",
            "--no-textconv",
        ]],
        values: &[&[
            "-e",
            "-f",
            "-A",
            "-B",
            "-C",
            "--after-context",
            "--before-context",
            "--context",
            "--max-depth",
            "--threads",
            "-m",
            "--max-count",
        ]],
        optional: &["--color"],
        refused: &[
            ("-O", "opens the matches in a pager or editor"),
            (
                "--open-files-in-pager",
                "opens the matches in a pager or editor",
            ),
            ("--textconv", "runs textconv filter programs"),
        ],
        numeric: true,
        bundling: true,
        ..sub("grep", Kind::Search)
    },
    Sub {
        flags: &[&[
            "--git-dir",
            "--show-toplevel",
            "--abbrev-ref",
            "--short",
            "--verify",
            "-q",
            "--quiet",
            "--is-inside-work-tree",
            "--is-inside-git-dir",
            "--is-bare-repository",
            "--is-shallow-repository",
            "--show-prefix",
            "--show-cdup",
            "--symbolic",
            "--symbolic-full-name",
            "--all",
            "--branches",
            "--tags",
            "--remotes",
            "--git-common-dir",
            "--absolute-git-dir",
            "--show-superproject-working-tree",
            "--shared-index-path",
            "--sq",
            "--not",
            "--show-object-format",
            "--show-ref-format",
            "--local-env-vars",
            "--revs-only",
            "--no-revs",
            "--flags",
            "--no-flags",
        ]],
        values: &[&[
            "--default",
            "--prefix",
            "--git-path",
            "--resolve-git-dir",
            "--disambiguate",
        ]],
        optional: &[
            "--abbrev-ref",
            "--short",
            "--branches",
            "--tags",
            "--remotes",
            "--path-format",
            "--show-object-format",
            "--since",
            "--after",
            "--until",
            "--before",
            "--exclude",
            "--glob",
        ],
        ..sub("rev-parse", Kind::Read)
    },
    Sub {
        flags: &[&[
            "-c",
            "--cached",
            "-d",
            "--deleted",
            "-m",
            "--modified",
            "-o",
            "--others",
            "-i",
            "--ignored",
            "-s",
            "--stage",
            "-u",
            "--unmerged",
            "-k",
            "--killed",
            "-z",
            "-t",
            "-v",
            "-f",
            "--directory",
            "--no-empty-directory",
            "--eol",
            "--deduplicate",
            "--exclude-standard",
            "--error-unmatch",
            "--full-name",
            "--recurse-submodules",
            "--abbrev",
            "--debug",
            "--sparse",
        ]],
        values: &[&[
            "-x",
            "--exclude",
            "-X",
            "--exclude-from",
            "--exclude-per-directory",
            "--format",
            "--with-tree",
        ]],
        optional: &["--abbrev"],
        bundling: true,
        ..sub("ls-files", Kind::List)
    },
    Sub {
        flags: &[&[
            "-d",
            "-r",
            "-t",
            "-l",
            "--long",
            "-z",
            "--name-only",
            "--name-status",
            "--object-only",
            "--full-name",
            "--full-tree",
            "--abbrev",
        ]],
        values: &[&["--format"]],
        optional: &["--abbrev"],
        bundling: true,
        ..sub("ls-tree", Kind::List)
    },
    Sub {
        flags: &[&[
            "--all",
            "--tags",
            "--contains",
            "--abbrev",
            "--exact-match",
            "--debug",
            "--long",
            "--always",
            "--first-parent",
            "--dirty",
            "--broken",
        ]],
        values: &[&["--candidates", "--match", "--exclude"]],
        optional: &["--abbrev", "--dirty", "--broken"],
        ..sub("describe", Kind::Read)
    },
    Sub {
        flags: &[
            &[
                "-n",
                "--numbered",
                "-s",
                "--summary",
                "-e",
                "--email",
                "-c",
                "--committer",
                "-w",
            ],
            REV_FLAGS,
        ],
        values: &[&["--group", "--format"], REV_VALUES],
        optional: &["-w"],
        numeric: true,
        ..sub("shortlog", Kind::Read)
    },
    Sub {
        flags: &[&[
            "-t",
            "-s",
            "-e",
            "-p",
            "--batch",
            "--batch-check",
            "--batch-all-objects",
            "--buffer",
            "--follow-symlinks",
            "--unordered",
            "--allow-unknown-type",
            "-Z",
            "--batch-command",
        ]],
        optional: &["--batch", "--batch-check", "--batch-command"],
        refused: &[
            ("--textconv", "runs textconv filter programs"),
            ("--filters", "runs smudge filter programs"),
        ],
        ..sub("cat-file", Kind::Read)
    },
    Sub {
        flags: &[&[
            "--all",
            "--octopus",
            "--independent",
            "--is-ancestor",
            "--fork-point",
        ]],
        bundling: true,
        ..sub("merge-base", Kind::Read)
    },
    Sub {
        flags: &[&[
            "-b",
            "--root",
            "--show-stats",
            "-f",
            "--show-name",
            "-n",
            "--show-number",
            "-s",
            "--show-email",
            "-e",
            "-w",
            "-l",
            "-t",
            "-p",
            "--porcelain",
            "--line-porcelain",
            "--incremental",
            "-c",
            "--score-debug",
            "--first-parent",
            "--color-lines",
            "--color-by-age",
            "--progress",
            "--no-progress",
            "--no-textconv",
            "-M",
            "-C",
            "--abbrev",
        ]],
        values: &[&[
            "-L",
            "-S",
            "--contents",
            "--date",
            "--ignore-rev",
            "--ignore-revs-file",
            "--encoding",
            "--reverse",
        ]],
        optional: &["-M", "-C", "--abbrev"],
        refused: &[("--textconv", "runs textconv filter programs")],
        ..sub("blame", Kind::Read)
    },
    Sub {
        flags: &[&[
            "--head",
            "--heads",
            "--branches",
            "--tags",
            "-d",
            "--dereference",
            "-s",
            "--hash",
            "--abbrev",
            "--verify",
            "-q",
            "--quiet",
            "--exists",
            "--exclude-existing",
        ]],
        optional: &["--hash", "--abbrev", "--exclude-existing"],
        ..sub("show-ref", Kind::List)
    },
    Sub {
        flags: &[&[
            "-s",
            "--shell",
            "-p",
            "--perl",
            "--python",
            "--tcl",
            "--ignore-case",
            "--omit-empty",
            "--stdin",
        ]],
        values: &[&["--count", "--sort", "--format", "--exclude"]],
        last_default: LIST_FILTER_LAST_DEFAULT,
        ..sub("for-each-ref", Kind::List)
    },
    Sub {
        flags: &[&["-v", "--verbose", "-H", "--human-readable"]],
        bundling: true,
        operands: Operands::None,
        ..sub("count-objects", Kind::Read)
    },
];

/// `git stash list [log options]`: the stash's reflog; every other stash subcommand changes it.
fn check_stash(args: &Args) -> Result<(), String> {
    match args.words.first().map(String::as_str) {
        Some("list") => check_sub(
            &LOG_LIKE,
            &Args {
                words: &args.words[1..],
                expands: args.expands.get(1..).unwrap_or(&[]),
            },
        ),
        Some(other) => Err(format!("{other} changes the stash")),
        None => Err("without a subcommand it pushes a stash".into()),
    }
}

/// `git worktree list [--porcelain] [-v] [-z] [--expire TIME]`.
fn check_worktree(args: &Args) -> Result<(), String> {
    let w = args.words;
    if w.first().map(String::as_str) != Some("list") {
        return Err("only `worktree list` is read-only".into());
    }
    let mut i = 1;
    while let Some(a) = w.get(i) {
        if args.expands(i) {
            return Err(format!("{a} may expand to other words"));
        }
        match a.as_str() {
            "--porcelain" | "-v" | "--verbose" | "-z" => i += 1,
            "--expire" if w.get(i + 1).is_some() && !args.expands(i + 1) => i += 2,
            s if s.starts_with("--expire=") => i += 1,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(())
}

/// `git config` reading values: `--get`, `--get-all`, `--get-regexp`, `--get-urlmatch`, `--list`
/// (and git 2.46's `get` and `list`), with the scope, type and output options. Anything that
/// writes, edits (an editor) or is not known is refused.
fn check_config(args: &Args) -> Result<(), String> {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "-l",
        "--list",
    ];
    const FLAGS: &[&str] = &[
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "-z",
        "--null",
        "--includes",
        "--no-includes",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
        "--all",
        "--fixed-value",
    ];
    const VALUES: &[&str] = &[
        "-f",
        "--file",
        "--blob",
        "--type",
        "--default",
        "--value",
        "--url",
    ];
    let w = args.words;
    let mut i = 0;
    let mut reads = false;
    if matches!(w.first().map(String::as_str), Some("get" | "list")) {
        reads = true;
        i = 1;
    }
    while let Some(a) = w.get(i) {
        if args.expands(i) {
            return Err(format!("{a} may expand to other words"));
        }
        let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
        if READS.contains(&a.as_str()) {
            reads = true;
            i += 1;
        } else if FLAGS.contains(&a.as_str()) {
            i += 1;
        } else if VALUES.contains(&name) {
            if name != a.as_str() {
                i += 1;
            } else if w.get(i + 1).is_some() && !args.expands(i + 1) {
                i += 2;
            } else {
                return Err(format!("{a} needs a value"));
            }
        } else if a.starts_with('-') {
            return Err(format!("{a} may change the configuration"));
        } else {
            // A name or a pattern.
            i += 1;
        }
    }
    if reads {
        Ok(())
    } else {
        Err("without --get or --list it may set a value".into())
    }
}

const DIFF: Sub = Sub {
    flags: &[DIFF_FLAGS, &["--quiet", "-q"]],
    values: &[DIFF_VALUES],
    optional: DIFF_OPTIONAL,
    refused: DIFF_REFUSED,
    ..sub("diff", Kind::Read)
};

fn listed(lists: &[&[&str]], a: &str) -> bool {
    lists.iter().any(|l| l.contains(&a))
}

pub fn judge(args: &Args) -> Verdict {
    let w = args.words;
    let mut i = 0;
    while let Some(a) = w.get(i) {
        if args.expands(i) {
            return refuse(Kind::Other, format!("git: {a} may expand to other words"));
        }
        match a.as_str() {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => {
                if args.expands(i + 1) {
                    return refuse(Kind::Other, format!("git: {a} may expand to other words"));
                }
                i += 2
            }
            "-c" | "--config-env" => {
                return refuse(
                    Kind::Other,
                    format!("git {a} can set a pager or an external command"),
                )
            }
            "-p" | "--paginate" => {
                return refuse(Kind::Other, "git --paginate runs a pager".into())
            }
            "--no-pager"
            | "-P"
            | "--no-replace-objects"
            | "--no-optional-locks"
            | "--no-advice"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--bare"
            | "--no-lazy-fetch" => i += 1,
            "--version" | "-v" | "--help" | "-h" | "--exec-path" | "--html-path" | "--man-path"
            | "--info-path" => {
                return Verdict {
                    kind: Kind::Neutral,
                    read_only: true,
                    reason: format!("git {a} prints information"),
                }
            }
            s if s.starts_with("--git-dir=")
                || s.starts_with("--work-tree=")
                || s.starts_with("--namespace=") =>
            {
                i += 1
            }
            s if s.starts_with('-') => {
                return refuse(Kind::Other, format!("git: unknown global option {s}"))
            }
            _ => break,
        }
    }
    let Some(name) = w.get(i) else {
        return Verdict {
            kind: Kind::Neutral,
            read_only: true,
            reason: "git without a subcommand prints help".into(),
        };
    };
    let rest = Args {
        words: &w[i + 1..],
        expands: args.expands.get(i + 1..).unwrap_or(&[]),
    };
    let result = match name.as_str() {
        "remote" => Some((Kind::List, check_remote(&rest))),
        "stash" => Some((Kind::Read, check_stash(&rest))),
        "worktree" => Some((Kind::List, check_worktree(&rest))),
        "config" => Some((Kind::Read, check_config(&rest))),
        "reflog" => Some((Kind::Read, check_reflog(&rest))),
        _ => SUBS
            .iter()
            .find(|s| s.name == name)
            .map(|s| (s.kind, check_sub(s, &rest))),
    };
    match result {
        None => refuse(Kind::Other, format!("git {name} may change the repository")),
        Some((kind, Ok(()))) => Verdict {
            kind,
            read_only: true,
            reason: format!("git {name} is read-only"),
        },
        Some((_, Err(why))) => refuse(Kind::Other, format!("git {name}: {why}")),
    }
}

fn check_sub(sub: &Sub, args: &Args) -> Result<(), String> {
    let w = args.words;
    let mut i = 0;
    let mut operands: Vec<usize> = Vec::new();
    let mut dashdash = false;
    let mut list = false;
    while let Some(a) = w.get(i) {
        // git grep's `( ... )` group its boolean expressions; elsewhere they are operands.
        let paren = sub.name == "grep" && (a == "(" || a == ")");
        if dashdash || a == "-" || !a.starts_with('-') || paren {
            // After `--` a glob can only be a path.
            if !dashdash {
                plain_glob(a, args.expands(i))?;
            }
            if !paren {
                operands.push(i);
            }
            i += 1;
            continue;
        }
        if a == "--" {
            dashdash = true;
            i += 1;
            continue;
        }
        if args.expands(i) {
            return Err(format!("{a} may expand to other words"));
        }
        let (name, attached) = if a.starts_with("--") {
            match a.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (a.as_str(), None),
            }
        } else if let Some((at, _)) = a.char_indices().nth(2) {
            (&a[..at], Some(&a[at..]))
        } else {
            (a.as_str(), None)
        };
        if let Some((_, why)) = sub.refused.iter().find(|(r, _)| *r == name) {
            return Err(format!("{a} {why}"));
        }
        if name == "-l" || name == "--list" {
            list = true;
        }
        if name == "--format" || name == "--pretty" {
            let value = attached.or_else(|| w.get(i + 1).map(String::as_str));
            if value.is_some_and(verifies_signatures) {
                return Err(format!(
                    "{a}: the format verifies signatures, which runs gpg"
                ));
            }
        }
        let takes_value = |v: &str| -> Result<usize, String> {
            match attached {
                Some(_) => Ok(1),
                None if w.get(i + 1).is_some() => {
                    if args.expands(i + 1) {
                        return Err(format!("{} may expand to other words", w[i + 1]));
                    }
                    Ok(2)
                }
                None => Err(format!("{v} needs a value")),
            }
        };
        let numeric = sub.numeric && a[1..].chars().all(|c| c.is_ascii_digit());
        if listed(sub.flags, a) || numeric {
            i += 1;
        } else if listed(sub.values, name) {
            i += takes_value(name)?;
        } else if sub.last_default.contains(&name) {
            i += if attached.is_some() || w.get(i + 1).is_none() {
                1
            } else {
                takes_value(name)?
            };
        } else if sub.optional.contains(&name) && attached.is_some() {
            i += 1;
        } else if sub.bundling
            && !a.starts_with("--")
            && a[1..].chars().all(|c| listed(sub.flags, &format!("-{c}")))
        {
            if a[1..].contains('l') {
                list = true;
            }
            i += 1;
        } else {
            return Err(format!("unknown or abbreviated option {a}"));
        }
    }
    match sub.operands {
        Operands::Any => Ok(()),
        Operands::ListOnly if operands.is_empty() || list => Ok(()),
        Operands::ListOnly => Err(format!(
            "without --list, {} creates a {}",
            w[operands[0]], sub.name
        )),
        Operands::None if operands.is_empty() => Ok(()),
        Operands::None => Err(format!("{} takes no operands", sub.name)),
    }
}

/// Pretty formats `%G?`, `%GS`, `%GK`... and ref formats `%(signature...)` verify signatures.
fn verifies_signatures(format: &str) -> bool {
    format.contains("%G") || format.contains("%(signature")
}

/// `git remote`, `git remote -v`, `git remote get-url [--push] [--all] NAME`, and
/// `git remote show -n NAME` (without `-n` it queries the remote over the network).
fn check_remote(args: &Args) -> Result<(), String> {
    let w: Vec<&str> = args.words.iter().map(String::as_str).collect();
    if (0..w.len()).any(|i| args.expands(i)) {
        return Err("an argument may expand to other words".into());
    }
    let mut i = 0;
    while matches!(w.get(i), Some(&"-v") | Some(&"--verbose")) {
        i += 1;
    }
    let rest = &w[i..];
    match rest.first() {
        None => Ok(()),
        Some(&"get-url") => {
            let operands: Vec<&&str> = rest[1..]
                .iter()
                .filter(|a| !matches!(**a, "--push" | "--all"))
                .collect();
            match operands.as_slice() {
                [name] if !name.starts_with('-') => Ok(()),
                _ => Err("get-url takes --push, --all and one remote".into()),
            }
        }
        Some(&"show") => {
            if !rest[1..].contains(&"-n") {
                return Err("show without -n queries the remote over the network".into());
            }
            match rest[1..].iter().find(|a| a.starts_with('-') && **a != "-n") {
                Some(a) => Err(format!("unknown option {a}")),
                None => Ok(()),
            }
        }
        Some(other) => Err(format!("{other} may change the remotes")),
    }
}

/// `git reflog [show] [log options] [ref]` and `git reflog exists REF`; `expire`, `delete`,
/// `drop` and anything else that could be a subcommand are refused.
fn check_reflog(args: &Args) -> Result<(), String> {
    let w = args.words;
    match w.first().map(String::as_str) {
        None => Ok(()),
        Some("exists") => match &w[1..] {
            [r] if !r.starts_with('-') && !args.expands(1) => Ok(()),
            _ => Err("exists takes one ref".into()),
        },
        Some("show") => check_sub(
            &LOG_LIKE,
            &Args {
                words: &w[1..],
                expands: args.expands.get(1..).unwrap_or(&[]),
            },
        ),
        Some(a) if a.starts_with('-') => check_sub(&LOG_LIKE, args),
        Some(a) => Err(format!("{a} may be a subcommand that changes the reflog")),
    }
}
