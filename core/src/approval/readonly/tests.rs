//! The grammars against generated spellings of every refused option, the issue's cases, and
//! random argv.

use super::*;
use crate::approval::getopt::{long_opts, resolve_long, short_arg, HasArg};

fn words(argv: &[&str]) -> Vec<String> {
    argv.iter().map(|s| s.to_string()).collect()
}

/// Judge a whole argv, nothing expanding.
fn verdict(argv: &[&str]) -> Verdict {
    let w = words(argv);
    judge(&w, &vec![false; w.len()])
}

#[test]
fn every_example_is_read_only() {
    for g in grammars() {
        let mut argv = vec![g.name];
        argv.extend_from_slice(g.example);
        let v = verdict(&argv);
        assert!(v.read_only, "{argv:?}: {}", v.reason);
        assert_eq!(v.kind, g.kind, "{argv:?}");
    }
}

#[test]
fn every_refused_option_is_an_option_of_its_spec() {
    for g in grammars() {
        let Syntax::Getopt { spec, refused, .. } = &g.syntax else {
            continue;
        };
        for (names, _) in refused.iter() {
            for n in names.split_whitespace() {
                let known = match n.strip_prefix("--") {
                    Some(long) => long_opts(spec.long).any(|o| o.names().any(|a| a == long)),
                    None => short_arg(spec.short, n.chars().nth(1).unwrap()).is_some(),
                };
                assert!(known, "{}: refused {n} is not in its spec", g.name);
            }
        }
    }
}

/// The commands the classifier ever calls read-only are exactly those with a grammar (and git),
/// so a command added without one stays "not known". Dropped commands stay dropped.
#[test]
fn only_commands_with_a_grammar_are_read_only() {
    for name in [
        "less", "more", "env", "xargs", "nice", "timeout", "nohup", "fd", "fdfind", "ag", "ack",
        "bat", "exa", "eza", "lsof", "locate", "tee", "rm", "sh", "bash", "python3", "node",
    ] {
        let v = verdict(&[name, "x"]);
        assert!(!v.read_only, "{name}");
        assert!(grammar(name).is_none(), "{name}");
    }
    let mut names: Vec<&str> = grammars().map(|g| g.name).collect();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), count, "a command has two grammars");
    // Each read-only table entry the classifier had before (minus the dropped ones) has one.
    for name in [
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "find",
        "which",
        "whereis",
        "cat",
        "head",
        "tail",
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
        "ls",
        "tree",
        "du",
        "df",
        "ps",
        "echo",
        "printf",
        "true",
        "false",
        "cd",
        "pwd",
        "test",
        "[",
        ":",
        "sleep",
        "date",
        "whoami",
        "id",
        "uname",
        "hostname",
        "printenv",
        "seq",
        "expr",
        "type",
    ] {
        assert!(grammar(name).is_some(), "{name} has no grammar");
    }
}

/// Every spelling getopt_long accepts for an option: short alone, attached, bundled after a flag,
/// long with a separate or attached value, and every prefix that resolves to it.
fn spellings(spec: &Spec, name: &str, flag: Option<char>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    if let Some(long) = name.strip_prefix("--") {
        let opt = long_opts(spec.long)
            .find(|o| o.names().any(|n| n == long))
            .unwrap();
        let mut prefixes: Vec<String> = (1..=long.len())
            .map(|n| long[..n].to_string())
            .filter(|p| {
                p == long
                    || (spec.abbreviations
                        && resolve_long(spec, p).is_ok_and(|o| o.aliases == opt.aliases))
            })
            .collect();
        prefixes.dedup();
        for p in prefixes {
            match opt.has_arg {
                HasArg::No => out.push(v(&[&format!("--{p}")])),
                HasArg::Required => {
                    out.push(v(&[&format!("--{p}"), "F"]));
                    out.push(v(&[&format!("--{p}=F")]));
                }
                HasArg::Optional => {
                    out.push(v(&[&format!("--{p}")]));
                    out.push(v(&[&format!("--{p}=F")]));
                }
            }
        }
    } else {
        let c = name.chars().nth(1).unwrap();
        let bundles: Vec<String> = std::iter::once(format!("-{c}"))
            .chain(flag.map(|f| format!("-{f}{c}")))
            .collect();
        for b in bundles {
            match short_arg(spec.short, c).unwrap() {
                HasArg::No => {
                    out.push(v(&[&b]));
                    if let Some(f) = flag {
                        out.push(v(&[&format!("{b}{f}")]));
                    }
                }
                HasArg::Required => {
                    out.push(v(&[&b, "F"]));
                    out.push(v(&[&format!("{b}F")]));
                }
                HasArg::Optional => {
                    out.push(v(&[&b]));
                    out.push(v(&[&format!("{b}F")]));
                }
            }
        }
    }
    out
}

/// A short flag of the grammar that takes no value and is not refused, to bundle with.
fn harmless_flag(spec: &Spec, refused: &[(&str, &str)]) -> Option<char> {
    spec.short.chars().find(|&c| {
        c.is_ascii_alphabetic()
            && short_arg(spec.short, c) == Some(HasArg::No)
            && !refused
                .iter()
                .any(|(n, _)| n.split_whitespace().any(|n| n == format!("-{c}")))
    })
}

#[test]
fn generated_corpus_of_refused_spellings() {
    let mut total = 0;
    let mut wrong = Vec::new();
    for g in grammars() {
        let Syntax::Getopt { spec, refused, .. } = &g.syntax else {
            continue;
        };
        let flag = harmless_flag(spec, refused);
        for (names, _) in refused.iter() {
            for name in names.split_whitespace() {
                for spelling in spellings(spec, name, flag) {
                    // Before the operands, and (where the tool permutes) after them.
                    let mut placements = vec![[spelling.clone(), words(g.example)].concat()];
                    if spec.permute {
                        placements.push([words(g.example), spelling.clone()].concat());
                    }
                    for args in placements {
                        total += 1;
                        let mut argv = vec![g.name.to_string()];
                        argv.extend(args);
                        let v = judge(&argv, &vec![false; argv.len()]);
                        let named = names.split_whitespace().any(|n| v.reason.contains(n));
                        if v.read_only || !named {
                            wrong.push(format!("{argv:?}: {v:?}"));
                        }
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(total > 300, "only {total} spellings");
}

#[test]
fn the_issue_cases() {
    let not_read_only: &[&[&str]] = &[
        // Output operands.
        &["uniq", "in.txt", "out.txt"],
        &["uniq", "-c", "in.txt", "out.txt"],
        &["uniq", "in.txt", "-c", "out.txt"],
        &["xxd", "a", "b"],
        &["xxd", "a", "-c", "16"],
        &["tr", "a", "b", "c"],
        &["base64", "a", "b"],
        // Bundled and attached short options.
        &["sort", "-oout.txt", "in.txt"],
        &["sort", "-uo", "out.txt", "in.txt"],
        &["sort", "-uoout.txt", "in.txt"],
        &["sort", "in.txt", "-o", "out.txt"],
        &["sort", "--out=x", "in.txt"],
        &["sort", "--compress-program=sh"],
        &["sort", "--compress=sh"],
        // State-changing forms.
        &["date", "-s", "2020-01-01"],
        &["date", "--set=2020-01-01"],
        &["date", "--se", "x"],
        &["date", "0101000020"],
        &["date", "-u", "0101000020"],
        &["hostname", "foo"],
        &["hostname", "-F", "/etc/x"],
        &["hostname", "-b"],
        // Options that write.
        &["file", "-C", "-m", "magic"],
        &["file", "--comp", "-m", "magic"],
        &["yq", "-i", ".a=1", "f.yaml"],
        &["yq", "--in-place", ".a=1", "f.yaml"],
        &["yq", "--in-p", ".a=1", "f.yaml"],
        &["yq", "-s", ".a", "f.yaml"],
        &["tree", "-o", "out.txt"],
        &["tree", "-ao", "out.txt"],
        &["diff", "-l", "a", "b"],
        &["df", "--sync"],
        // sed.
        &["sed", "-i", "s/a/b/", "f"],
        &["sed", "-ibak", "s/a/b/", "f"],
        &["sed", "-ni", "p", "f"],
        &["sed", "--in-pl", "s/a/b/", "f"],
        &["sed", "-f", "script.sed", "f"],
        &["sed", "-n", "w out", "f"],
        &["sed", "-e", "p", "-e", "w out", "f"],
        &["sed", "--expression=1W out", "f"],
        &["sed", "--expr", "e date", "f"],
        &["sed", "s/a/b/w out", "f"],
        &["sed", "s/a/b/e", "f"],
        &["sed", "r /etc/passwd", "f"],
        &["sed", "R x", "f"],
        // awk.
        &["awk", "{ system(\"rm x\") }", "f"],
        &["awk", "{ \"date\" | getline d }"],
        &["awk", "{ print | \"sh\" }"],
        &["awk", "{ print > \"out\" }", "f"],
        &["awk", "-f", "prog.awk", "f"],
        &["awk", "-i", "inc.awk", "{print}"],
        &["awk", "-finc.awk", "f"],
        // Builtins that evaluate subscripts.
        &["printf", "-v", "a[$(id)]", "x"],
        &["printf", "-va[$(id)]", "x"],
        // The last `-v` counts.
        &["printf", "-v", "x", "-v", "a[$(id)]", "y"],
        &["printf", "-vx", "-va[$(id)]", "y"],
        &["test", "-v", "a[$(id)]"],
        &["[", "-v", "a[$(id)]", "]"],
        // find.
        &["find", ".", "-delete"],
        &["find", ".", "-exec", "rm", "{}", ";"],
        &["find", ".", "-fprint", "out"],
        &["find", ".", "-okdir", "rm", "{}", ";"],
        &["find", ".", "-newerXY", "x"],
        // rg.
        &["rg", "--pre", "./script", "x"],
        &["rg", "--pre=./script", "x"],
        &["rg", "-z", "x"],
        &["rg", "-iz", "x"],
        &["rg", "--pr=x", "x"],
        // git.
        &["git", "grep", "-O", "x"],
        &["git", "grep", "-Ovim", "x"],
        &["git", "grep", "--open-files-in-pager", "x"],
        &["git", "grep", "--open", "x"],
        &["git", "reflog", "expire", "--all"],
        &["git", "reflog", "delete", "HEAD@{1}"],
        &["git", "diff", "--output=p.txt"],
        &["git", "diff", "--outp=p.txt"],
        &["git", "log", "--ext-diff"],
        &["git", "branch", "new"],
        &["git", "branch", "-D", "main"],
        &["git", "branch", "--contains", "HEAD", "new"],
        &["git", "tag", "v1"],
        &["git", "branch", "("],
        &["git", "tag", "-d", "v1"],
        &["git", "remote", "add", "x", "url"],
        &["git", "remote", "show", "origin"],
        &["git", "-c", "core.pager=x", "log"],
        &["git", "log", "--format=%H %G?"],
        &["git", "log", "--pretty", "format:%GS"],
        &["git", "log", "--show-signature"],
        &["git", "branch", "--format=%(signature)"],
        &["git", "push"],
        &["git", "stash"],
        &["git", "stash", "pop"],
        &["git", "stash", "drop"],
        &["git", "stash", "list", "--ext-diff"],
        &["git", "config", "user.name", "x"],
        &["git", "config", "--unset", "core.pager"],
        &["git", "config", "--edit"],
        &["git", "config", "set", "core.pager", "x"],
        &["git", "config", "--get", "x", "--add"],
        &["git", "worktree", "add", "../x"],
        &["git", "worktree", "remove", "x"],
        &["git", "worktree", "list", "--lock"],
        &["git", "count-objects", "x"],
        &["git", "for-each-ref", "--format=%(signature)"],
        // Dropped.
        &["less", "f"],
        &["more", "f"],
        &["xargs", "grep", "x"],
        &["env"],
    ];
    let mut wrong = Vec::new();
    for argv in not_read_only {
        let v = verdict(argv);
        if v.read_only {
            wrong.push(format!("{argv:?} should not be read-only"));
        }
    }
    let read_only_cases: &[&[&str]] = &[
        &["awk", "$1 > 0"],
        &["awk", "$1 > 0", "f"],
        &["awk", "-F:", "{ if ($3 > 1000) print $1 }", "/etc/passwd"],
        &["sed", "-n", "1p", "error.log"],
        &["sed", "-n", "1p", "write.log"],
        &["sed", "-n", "-e", "1p", "error.log", "w.txt"],
        &["sed", "--quiet", "--expression=/x/p", "f"],
        &["git", "tag", "-l", "v*"],
        &["git", "tag", "--list", "v*"],
        &["git", "remote", "get-url", "origin"],
        &["git", "remote", "-v"],
        &["git", "branch", "--contains", "HEAD"],
        &["git", "branch", "--merged", "main"],
        &["git", "branch", "-a"],
        &["git", "status", "-sb"],
        &["git", "status", "--porcelain=v2", "-uno"],
        &["git", "log", "--oneline", "-5"],
        &["git", "log", "-n", "5", "--format=%H", "--", "src"],
        &["git", "show", "HEAD:README.md"],
        &["git", "diff", "--stat", "HEAD~1"],
        &["git", "grep", "-n", "foo"],
        &["git", "grep", "(", "-e", "a", "--or", "-e", "b", ")"],
        &["git", "rev-parse", "--abbrev-ref", "HEAD"],
        &["git", "reflog"],
        &["git", "reflog", "show", "-5"],
        &["git", "stash", "list"],
        &["git", "stash", "list", "--oneline"],
        &["git", "show-ref"],
        &["git", "show-ref", "--heads", "-s"],
        &["git", "config", "--get", "user.name"],
        &["git", "config", "--show-origin", "--list"],
        &["git", "config", "get", "user.email"],
        &[
            "git",
            "config",
            "--file",
            ".gitmodules",
            "--get-regexp",
            "path",
        ],
        &["git", "for-each-ref", "--format=%(refname)", "refs/heads"],
        &["git", "for-each-ref", "--sort=-committerdate", "--count=5"],
        &["git", "worktree", "list"],
        &["git", "worktree", "list", "--porcelain"],
        &["git", "count-objects", "-vH"],
        &["sort", "in.txt"],
        &["sort", "-u", "-k2", "in.txt"],
        &["uniq", "in.txt"],
        &["uniq", "-c"],
        &["xxd", "f"],
        &["xxd", "-c16", "-l", "32", "f"],
        &["date"],
        &["date", "+%Y-%m-%d"],
        &["date", "-d", "yesterday", "+%s"],
        &["hostname"],
        &["hostname", "-f"],
        &["printf", "-v", "x", "%s", "y"],
        &["test", "-v", "HOME"],
        &["find", ".", "-name", "-delete"],
        &[
            "find",
            "src",
            "-type",
            "f",
            "-newermt",
            "2020-01-01",
            "-print0",
        ],
        &["tail", "-f", "log"],
        &["file", "-b", "--mime-type", "f"],
        &["jq", "-r", "--arg", "x", "y", ".a", "f"],
        &["yq", "-y", ".a", "f.yaml"],
        &["rg", "-n", "-g", "*.rs", "foo"],
        &["ls", "-la", "--color=auto"],
        &["ps", "aux"],
        &["echo", "hello"],
    ];
    for argv in read_only_cases {
        let v = verdict(argv);
        if !v.read_only {
            wrong.push(format!("{argv:?} should be read-only: {}", v.reason));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn globs_count_as_unknown_words() {
    let judge_with = |argv: &[&str], expands: &[bool]| judge(&words(argv), expands);
    // `uniq *.txt` can expand to two files, the second an output.
    assert!(!judge_with(&["uniq", "a*.txt"], &[false, true]).read_only);
    // `sort *` can expand to `-ofile`.
    assert!(!judge_with(&["sort", "*"], &[false, true]).read_only);
    assert!(judge_with(&["sort", "--", "*"], &[false, false, true]).read_only);
    assert!(judge_with(&["wc", "-l", "src/*.rs"], &[false, false, true]).read_only);
    // The sed script itself.
    assert!(!judge_with(&["sed", "-n", "p*", "f"], &[false, false, true, false]).read_only);
    assert!(!judge_with(&["find", "*", "-name", "x"], &[false, true, false, false]).read_only);
    assert!(!judge_with(&["git", "diff", "*"], &[false, false, true]).read_only);
    assert!(judge_with(&["git", "diff", "--", "*"], &[false, false, false, true]).read_only);
    // Files named `-v` and `a[$(id)]` make `printf *` evaluate the subscript.
    assert!(!judge_with(&["printf", "*"], &[false, true]).read_only);
    assert!(judge_with(&["printf", "%s\n", "*"], &[false, false, true]).read_only);
}

use crate::test_rng::Rng;

/// The words a grammar knows: its options in their spellings, with values, and some operands.
fn vocabulary(g: &Grammar) -> Vec<String> {
    let mut vocab: Vec<String> = [
        "f",
        "-",
        "--",
        "x=1",
        "+%s",
        "1",
        "a b",
        "{",
        "*",
        "-5",
        "p",
        "w",
        "$1 > 0",
        ".",
        "-\u{e9}x",
        "--\u{e9}=\u{e9}",
        "-n\u{e9}",
        "log",
        "tag",
        "-l",
        "show",
        "get-url",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    vocab.extend(g.example.iter().map(|s| s.to_string()));
    if let Syntax::Getopt { spec, .. } = &g.syntax {
        for c in spec.short.chars().filter(|c| *c != ':') {
            vocab.push(format!("-{c}"));
            vocab.push(format!("-{c}v"));
        }
        for o in long_opts(spec.long) {
            vocab.push(o.name());
            vocab.push(format!("{}=v", o.name()));
        }
    }
    vocab
}

#[test]
fn random_argv_never_panics_and_unknown_options_are_refused() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Grammars with no options at all (echo, test, expr...) cannot meet an unknown one.
    let takes_any = |g: &Grammar| {
        matches!(
            g.name,
            "echo" | "true" | "false" | ":" | "expr" | "test" | "[" | "ps"
        )
    };
    for g in grammars().chain(std::iter::once(&GIT_FOR_TESTS)) {
        let vocab = vocabulary(g);
        for round in 0..300 {
            let len = (rng.next() % 7) as usize;
            let mut argv = vec![g.name.to_string()];
            argv.extend((0..len).map(|_| vocab[rng.below(vocab.len())].clone()));
            let expands: Vec<bool> = argv.iter().map(|_| rng.next().is_multiple_of(9)).collect();
            let _ = judge(&argv, &expands);
            if takes_any(g) {
                continue;
            }
            // An unknown option first, where it cannot be another option's value.
            let unknown = if round % 2 == 0 {
                "--zz-unknown-option".to_string()
            } else {
                "-\u{e9}".to_string()
            };
            let mut with_unknown = vec![g.name.to_string(), unknown];
            with_unknown.extend(argv[1..].iter().cloned());
            let v = judge(&with_unknown, &vec![false; with_unknown.len()]);
            assert!(!v.read_only, "{with_unknown:?}: {}", v.reason);
        }
    }
}

/// git has no table entry; the property test runs it through the same loop.
static GIT_FOR_TESTS: Grammar = Grammar {
    name: "git",
    kind: Kind::Read,
    syntax: Syntax::Custom(super::custom::any_args),
    example: &[
        "log",
        "--oneline",
        "-n",
        "3",
        "status",
        "-s",
        "tag",
        "-l",
        "branch",
    ],
};

/// The generated spellings are what the real tools accept: every refused spelling of `sort -o`
/// writes its file and every spelling of `sed -i` edits in place, with the tools on this machine.
#[test]
fn refused_spellings_really_write_with_the_real_tools() {
    use std::path::Path;
    use std::process::Command;
    let spelled = |name: &str, option: &str| {
        let g = grammar(name).unwrap();
        let Syntax::Getopt { spec, refused, .. } = &g.syntax else {
            unreachable!()
        };
        spellings(spec, option, harmless_flag(spec, refused))
    };
    let run = |program: &str, args: &[String], dir: &Path| {
        let status = Command::new(program)
            .args(args)
            .current_dir(dir)
            .env_remove("POSIXLY_CORRECT")
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "{program} {args:?}");
    };
    if Path::new("/usr/bin/sort").is_file() {
        let mut checked = 0;
        for option in ["-o", "--output"] {
            for spelling in spelled("sort", option) {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("in.txt"), "b\na\n").unwrap();
                let args = [spelling.clone(), words(&["in.txt"])].concat();
                run("/usr/bin/sort", &args, dir.path());
                assert!(dir.path().join("F").is_file(), "sort {args:?} wrote no F");
                checked += 1;
            }
        }
        assert!(checked >= 8, "{checked}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("in.txt"), "a\n").unwrap();
        run("/usr/bin/uniq", &words(&["in.txt", "out.txt"]), dir.path());
        assert!(
            dir.path().join("out.txt").is_file(),
            "uniq in out writes out"
        );
    }
    if Path::new("/usr/bin/sed").is_file() {
        for option in ["-i", "--in-place"] {
            for spelling in spelled("sed", option) {
                let dir = tempfile::tempdir().unwrap();
                std::fs::write(dir.path().join("f"), "a\n").unwrap();
                let args = [spelling.clone(), words(&["s/a/b/", "f"])].concat();
                run("/usr/bin/sed", &args, dir.path());
                let text = std::fs::read_to_string(dir.path().join("f")).unwrap();
                assert_eq!(text, "b\n", "sed {args:?} did not edit in place");
            }
        }
    }
}
