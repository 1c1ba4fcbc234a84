//! Prefix rules on runners. `Bash(npm test:*)` is meant to allow the project's tests with extra
//! arguments; it must not allow the runner's own options that change what runs: npm's
//! `--node-options`, `--script-shell`, `--prefix`, make's `-f`/`-C`/`VAR=value`, cargo's `--config`,
//! go's `-exec`/`-toolexec`, pytest's `-p`, or node options passed through after `--`. Each runner has
//! a grammar of the options that only shape output or selection, as read-only tools have; an option
//! outside it makes the rule miss (the command is then asked).

/// How the words after a rule's prefix are read for one runner.
struct Grammar {
    /// Options that take no value.
    flags: &'static [&'static str],
    /// Options that take a value (`--opt v` or `--opt=v`; one-letter ones also `-jN`). A next word
    /// that reads as an option (`-f`, `--script-shell=x`) is never taken as the value: the runner
    /// may read it as one (make's `-l` and npm's options take none then, cargo's `--test` lists
    /// tests), so it is judged as an option itself.
    values: &'static [&'static str],
    /// Options of `values` whose value is attached only (`-Otarget`, `--output-sync=target`): the
    /// next word is an operand of its own (make reads `-O SHELL=x` as `-O` and an assignment).
    attached_only: &'static [&'static str],
    /// Operands may not be `NAME=value` (make: a variable that overrides the makefile's).
    no_assignments: bool,
    /// After `--` the words go to the program the runner starts: allowed unless they load code
    /// into node.
    passthrough_checked: bool,
}

const NPM: Grammar = Grammar {
    flags: &[
        "-s",
        "--silent",
        "-q",
        "--quiet",
        "-d",
        "-dd",
        "-ddd",
        "--verbose",
        "--if-present",
        "--color",
        "--no-color",
        "--json",
        "--ws",
        "--workspaces",
        "--include-workspace-root",
        "--foreground-scripts",
        "--ignore-scripts",
        "--no-fund",
        "--no-audit",
        "--no-progress",
        "--frozen-lockfile",
        "--immutable",
        "--offline",
        "--prefer-offline",
    ],
    values: &["--loglevel", "--reporter", "--workspace", "-w", "--filter"],
    attached_only: &[],
    no_assignments: false,
    passthrough_checked: true,
};

const MAKE: Grammar = Grammar {
    flags: &[
        "-k",
        "--keep-going",
        "-s",
        "--silent",
        "--quiet",
        "-n",
        "--dry-run",
        "--just-print",
        "-q",
        "--question",
        "-B",
        "--always-make",
        "-w",
        "--print-directory",
        "--no-print-directory",
        "-i",
        "--ignore-errors",
        "-S",
        "--no-keep-going",
        "-r",
        "--no-builtin-rules",
        "-R",
        "--no-builtin-variables",
        "-j",
        "--jobs",
    ],
    values: &[
        "-j",
        "--jobs",
        "-l",
        "--load-average",
        "-O",
        "--output-sync",
    ],
    attached_only: &["-O", "--output-sync"],
    no_assignments: true,
    passthrough_checked: false,
};

const CARGO: Grammar = Grammar {
    flags: &[
        "--release",
        "-r",
        "--workspace",
        "--all",
        "--lib",
        "--bins",
        "--tests",
        "--benches",
        "--examples",
        "--all-targets",
        "--doc",
        "--all-features",
        "--no-default-features",
        "--no-run",
        "--no-fail-fast",
        "-q",
        "--quiet",
        "-v",
        "-vv",
        "--verbose",
        "--locked",
        "--frozen",
        "--offline",
        "--timings",
        "--keep-going",
        "--ignore-rust-version",
    ],
    values: &[
        "-p",
        "--package",
        "--bin",
        "--test",
        "--bench",
        "--example",
        "--features",
        "-F",
        "--color",
        "-j",
        "--jobs",
        "--target",
        "--target-dir",
        "--profile",
        "--message-format",
        "--exclude",
    ],
    attached_only: &[],
    no_assignments: false,
    passthrough_checked: false,
};

const GO: Grammar = Grammar {
    flags: &[
        "-v",
        "-race",
        "-cover",
        "-short",
        "-benchmem",
        "-failfast",
        "-json",
        "-a",
        "-x",
        "-n",
        "-trimpath",
        "-args",
    ],
    values: &[
        "-run",
        "-skip",
        "-count",
        "-timeout",
        "-bench",
        "-benchtime",
        "-p",
        "-parallel",
        "-tags",
        "-coverprofile",
        "-covermode",
        "-coverpkg",
        "-mod",
        "-cpu",
        "-shuffle",
        "-o",
    ],
    attached_only: &[],
    no_assignments: false,
    passthrough_checked: false,
};

const PYTEST: Grammar = Grammar {
    flags: &[
        "-q",
        "--quiet",
        "-v",
        "-vv",
        "-vvv",
        "--verbose",
        "-x",
        "--exitfirst",
        "-s",
        "--lf",
        "--last-failed",
        "--ff",
        "--failed-first",
        "--nf",
        "--new-first",
        "--sw",
        "--stepwise",
        "--no-header",
        "--no-summary",
        "--collect-only",
        "--co",
        "--disable-warnings",
        "-l",
        "--showlocals",
        "--strict-markers",
        "--runxfail",
    ],
    values: &[
        "-k",
        "-m",
        "--maxfail",
        "--tb",
        "-r",
        "--durations",
        "-n",
        "--numprocesses",
        "--color",
        // Not `--junitxml`: it writes its report to any path (outside round six: it was allowed
        // where its spelling `--junit-xml` was not).
        "--capture",
    ],
    attached_only: &[],
    no_assignments: false,
    passthrough_checked: false,
};

/// The options a package manager's script may be passed after `--` (`npm test -- --watch`): what the
/// common test runners (node's, jest, vitest, mocha) take to choose, shape and report tests. The
/// script is often `node`, which hands every option it does not know to V8, and V8's flags include
/// some that write files (`--redirect-code-traces-to`, `--logfile`, the profilers' outputs): any other
/// option misses (fail closed), as do a reporter that is not a built-in name (a module path loads
/// code) and an output file.
const PASSTHROUGH_OPTIONS: &[&str] = &[
    // node --test
    "--test",
    "--test-only",
    "--test-name-pattern",
    "--test-skip-pattern",
    "--test-concurrency",
    "--test-timeout",
    "--test-shard",
    "--test-force-exit",
    "--test-update-snapshots",
    "--experimental-test-coverage",
    "--experimental-test-snapshots",
    "--test-coverage-include",
    "--test-coverage-exclude",
    "--test-coverage-branches",
    "--test-coverage-functions",
    "--test-coverage-lines",
    "--watch",
    "--test-reporter",
    // jest
    "--watchall",
    "--coverage",
    "--collectcoverage",
    "--ci",
    "--runinband",
    "-i",
    "--verbose",
    "--silent",
    "--bail",
    "-b",
    "--testnamepattern",
    "-t",
    "--testpathpattern",
    "--testpathignorepatterns",
    "--updatesnapshot",
    "--onlychanged",
    "-o",
    "--detectopenhandles",
    "--forceexit",
    "--maxworkers",
    "-w",
    "--colors",
    "--no-cache",
    "--passwithnotests",
    "--listtests",
    "--changedsince",
    "--findrelatedtests",
    "--lastcommit",
    "--logheapusage",
    "--nostacktrace",
    "--randomize",
    "--seed",
    "--shard",
    "--testtimeout",
    "--usestderr",
    "--errorondeprecated",
    "--no-watchman",
    "--reporters",
    // vitest
    "--run",
    "--update",
    "--retry",
    "--changed",
    "--reporter",
    "--no-file-parallelism",
    "--pool",
    "--project",
    "--no-isolate",
    // mocha
    "--grep",
    "-g",
    "--fgrep",
    "-f",
    "--invert",
    "-r",
    "--timeout",
    "--slow",
    "-s",
    "--recursive",
    "--parallel",
    "-j",
    "--jobs",
    "--exit",
    "--retries",
    "--forbid-only",
    "--forbid-pending",
    "--full-trace",
    "--check-leaks",
    "--sort",
    "--dry-run",
    "--color",
    "--no-color",
    "-R",
    // any of them
    "--help",
    "-h",
    "--version",
    "--quiet",
    "-q",
    "-v",
];

/// Options whose value names a reporter, or vitest's worker pool: a module by any other name (mocha
/// falls back to `require(path.resolve(name))`: `-R evilrep` loads `./evilrep.js`).
const REPORTER_OPTIONS: &[&str] = &[
    "--test-reporter",
    "--reporter",
    "--reporters",
    "-R",
    "--pool",
];

/// The built-in reporters and pools of node's test runner, jest, vitest and mocha: the only values
/// those options may take.
const BUILT_IN_REPORTERS: &[&str] = &[
    "spec",
    "tap",
    "dot",
    "junit",
    "lcov",
    "default",
    "summary",
    "github-actions",
    "basic",
    "verbose",
    "json",
    "tap-flat",
    "hanging-process",
    "html",
    "list",
    "min",
    "nyan",
    "landing",
    "progress",
    "doc",
    "json-stream",
    "markdown",
    "xunit",
    "threads",
    "forks",
    "vmThreads",
    "vmForks",
];

/// Why the words after `--` given to a package manager's script are not known to be harmless.
fn passthrough_problem(words: &[String]) -> Option<String> {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        i += 1;
        if !w.starts_with('-') || w == "-" {
            continue;
        }
        let (name, value) = w
            .split_once('=')
            .map_or((w.as_str(), None), |(n, v)| (n, Some(v)));
        // `--testNamePattern` and `--test_name_pattern` as their programs read them.
        let key = if name.starts_with("--") {
            name.to_ascii_lowercase().replace('_', "-")
        } else {
            name.to_string()
        };
        if !PASSTHROUGH_OPTIONS.contains(&key.as_str()) {
            return Some(format!(
                "{name} to its script, an option no test runner's list here knows (node hands those to V8, whose flags can write files)"
            ));
        }
        if REPORTER_OPTIONS.contains(&key.as_str()) {
            let value = match value {
                Some(v) => Some(v),
                None => {
                    i += 1;
                    words.get(i - 1).map(String::as_str)
                }
            };
            if let Some(v) = value.filter(|v| !BUILT_IN_REPORTERS.contains(v)) {
                return Some(format!(
                    "{name} {v} to its script: a reporter or pool that is not a built-in one is code it loads"
                ));
            }
        }
    }
    None
}

/// Node options that load or run code, or write a file of the option's choosing, which `npm test --
/// ...` would pass to a `node` script (`--test-reporter=data:text/javascript,...` runs inline code;
/// a config file names more options; `--test-reporter-destination=~/.bashrc` writes there).
const NODE_CODE_OPTIONS: &[&str] = &[
    "--test-reporter",
    "--test-reporter-destination",
    "--test-global-setup",
    "--experimental-config-file",
    "--experimental-default-config-file",
    "--cpu-prof-dir",
    "--heap-prof-dir",
    "--diagnostic-dir",
    "--report-dir",
    "--report-directory",
    "--report-filename",
    "--tls-keylog",
    "--logfile",
    "--trace-event-file-pattern",
    "--build-snapshot-config",
    "--experimental-sea-config",
    "--openssl-shared-config",
    "--localstorage-file",
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-e",
    "--eval",
    "-p",
    "--print",
    "--env-file",
    "--env-file-if-exists",
    "--inspect",
    "--inspect-brk",
    "--inspect-port",
    "--inspect-wait",
    "--experimental-policy",
    "--experimental-vm-modules",
    "--conditions",
    "-C",
    "--input-type",
    "--snapshot-blob",
    "--build-snapshot",
    "--openssl-config",
    "--redirect-warnings",
];

/// The grammar of the runner a rule prefix names, and how many of the prefix's words are the
/// runner and its subcommand.
fn grammar_for(prefix: &[&str]) -> Option<&'static Grammar> {
    let program = prefix.first()?.rsplit('/').next()?;
    match program {
        "npm" | "pnpm" | "yarn" | "bun" | "npx" | "bunx" => Some(&NPM),
        "make" | "gmake" => Some(&MAKE),
        "cargo" => Some(&CARGO),
        "go" => Some(&GO),
        "pytest" | "py.test" => Some(&PYTEST),
        p if p.starts_with("python") && prefix.get(1) == Some(&"-m") => match prefix.get(2) {
            Some(&"pytest") => Some(&PYTEST),
            _ => None,
        },
        _ => None,
    }
}

/// Why the words `rest`, after a rule prefix `prefix` (its words), make the rule miss, if they do.
/// `expands` says which of `rest` bash may expand (braces, globs): such a word can become any
/// option (`{--config,x}`, a file named `-p evil` matched by `*`), so it misses too.
pub fn problem(prefix: &[&str], rest: &[String], expands: &[bool]) -> Option<String> {
    let g = grammar_for(prefix)?;
    let runner = prefix.join(" ");
    if let Some((w, _)) = rest.iter().zip(expands).find(|(_, e)| **e) {
        return Some(format!(
            "{w} may expand into options of `{runner}` (braces or a glob)"
        ));
    }
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        if w == "--" {
            // make reads `VAR=value` as an assignment after `--` too (`make test -- SHELL=./x`).
            if g.no_assignments {
                if let Some(a) = rest[i + 1..]
                    .iter()
                    .find(|a| a.contains('=') && !a.starts_with('='))
                {
                    return Some(format!(
                        "{a} sets a variable of `{runner}` (after `--` too), which can change what it runs"
                    ));
                }
            }
            if g.passthrough_checked {
                if let Some(opt) = rest[i + 1..].iter().find(|a| loads_code_into_node(a)) {
                    return Some(format!(
                        "`{runner}` passes {opt} to node, which loads code with it"
                    ));
                }
                if let Some(why) = passthrough_problem(&rest[i + 1..]) {
                    return Some(format!("`{runner}` passes {why}"));
                }
            }
            return None;
        }
        if !w.starts_with('-') || w == "-" {
            if g.no_assignments && w.contains('=') && !w.starts_with('=') {
                return Some(format!(
                    "{w} sets a variable of `{runner}`, which can change what it runs"
                ));
            }
            i += 1;
            continue;
        }
        let (name, attached) = match w.split_once('=') {
            Some((n, _)) => (n, true),
            None => (w.as_str(), false),
        };
        if g.flags.contains(&name) && !attached {
            i += 1;
        } else if g.values.contains(&name) {
            i += 1;
            // The next word is the value unless the runner may read it otherwise: as an option
            // (judged as one on the next turn), as make's variable assignment (`SHELL=./x`, judged
            // as an operand), or after an option whose value is attached only.
            let takes_next = !attached
                && !g.attached_only.contains(&name)
                && rest
                    .get(i)
                    .is_some_and(|v| !(v.starts_with('-') || g.no_assignments && v.contains('=')));
            if takes_next {
                i += 1;
            }
        } else if let Some(v) = g
            .values
            .iter()
            .find(|v| v.len() == 2 && !w.starts_with("--") && w.len() > 2 && w.starts_with(*v))
        {
            // `-j4`, `-kEXPR`: a one-letter option with its value attached.
            let _ = v;
            i += 1;
        } else {
            return Some(format!(
                "{w} is not an option `{runner}` may take under a prefix rule (it can change what runs)"
            ));
        }
    }
    None
}

fn loads_code_into_node(arg: &str) -> bool {
    // Node reads `_` in an option's name as `-` (`--test_reporter`).
    let name = arg
        .split_once('=')
        .map_or(arg, |(n, _)| n)
        .replace('_', "-");
    NODE_CODE_OPTIONS.contains(&name.as_str())
        || NODE_CODE_OPTIONS
            .iter()
            .any(|o| o.len() == 2 && !arg.starts_with("--") && arg.len() > 2 && arg.starts_with(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(prefix: &str, rest: &str) -> Option<String> {
        let p: Vec<&str> = prefix.split_whitespace().collect();
        let r: Vec<String> = rest.split_whitespace().map(String::from).collect();
        let plain = vec![false; r.len()];
        problem(&p, &r, &plain)
    }

    #[test]
    fn words_that_expand_miss() {
        let rest = vec!["{--config,x}".to_string()];
        assert!(problem(&["cargo", "test"], &rest, &[true]).is_some());
        assert!(problem(&["ls"], &rest, &[true]).is_none());
    }

    #[test]
    fn runner_options_that_change_what_runs_miss() {
        for (prefix, rest) in [
            ("npm test", "--node-options=--import=data:text/javascript,x"),
            ("npm test", "--script-shell=/tmp/x"),
            ("npm test", "--prefix /tmp/other"),
            ("npm test", "-C /tmp/other"),
            ("npm test", "-- --require=./evil.js"),
            ("npm test", "-- -r ./evil.js"),
            ("npm run test", "-- --import ./x.mjs"),
            ("npm run test", "-- --test-reporter=data:text/javascript,x"),
            ("npm run test", "-- --test_reporter=./evil.mjs"),
            ("npm test", "-- --test-reporter-destination=/root/.bashrc"),
            ("npm test", "-- --experimental-config-file=evil.json"),
            ("npm test", "-- --test-global-setup=./evil.mjs"),
            (
                "npm run test",
                "-- --redirect-code-traces --redirect-code-traces-to=/tmp/v --print-code",
            ),
            ("npm test", "-- --prof"),
            ("npm test", "-- --reporter ./evil.js"),
            ("npm test", "-- --reporter=mod/x"),
            ("npm test", "-- -R @scope/reporter"),
            ("npm test", "-- --outputFile=/root/.bashrc"),
            ("npm run test", "-- -R evilrep"),
            ("npm run test", "-- --reporter=evilrep"),
            ("npm run test", "-- -u ./evilui.js"),
            ("npm run test", "-- --pool=./x.js"),
            ("npm test", "--userconfig /tmp/npmrc"),
            ("make test", "-f /tmp/Makefile"),
            ("make test", "-C /tmp"),
            ("make test", "SHELL=/tmp/x"),
            ("make", "--eval=x"),
            ("make test", "-- SHELL=./x"),
            ("make test", "-- x=$(shell touch C)"),
            ("cargo test", "--config target.x.runner=/tmp/x"),
            ("cargo test", "-Z unstable-options"),
            ("cargo test", "--manifest-path /tmp/Cargo.toml"),
            ("go test", "-exec /tmp/x"),
            ("go test", "-toolexec=/tmp/x"),
            ("pytest", "-p evil_plugin"),
            ("pytest", "-c /tmp/pytest.ini"),
            ("python3 -m pytest", "--rootdir=/tmp -o x=y"),
            // A word that reads as an option or an assignment is never the previous option's value.
            ("make test", "-l -f evil.mk"),
            ("make test", "--load-average --file=evil.mk"),
            ("make test", "-O SHELL=./payload.sh"),
            ("make test", "--output-sync SHELL=./payload.sh"),
            ("make test", "-l SHELL=./payload.sh"),
            ("make test", "-j -C evilmk"),
            ("npm test", "--reporter --script-shell=./payload.sh"),
            ("npm test", "--loglevel --node-options=--require=./x.js"),
            ("npm test", "--reporter -- --require ./x.js"),
            ("cargo test", "--test --config target.x.runner=./x"),
            ("cargo test", "--bin --manifest-path /tmp/Cargo.toml"),
            ("cargo test", "--example -Zunstable-options"),
            ("cargo test", "--bench --config x"),
            ("pytest", "-k -p evil_plugin"),
        ] {
            assert!(check(prefix, rest).is_some(), "{prefix} {rest}");
        }
        for (prefix, rest) in [
            ("npm test", ""),
            ("npm test", "--silent"),
            ("npm run test", "-- --watch --coverage"),
            ("npm test", "-- -t 'adds numbers' --runInBand src/a.test.js"),
            ("npm test", "-- --reporter dot --test-name-pattern=x"),
            ("npm test", "-- src/a.test.js"),
            ("make test", "-j4 -k all"),
            ("make", "check --no-print-directory"),
            ("cargo test", "--release -p core -- --nocapture"),
            ("cargo test", "--features=x --all-targets"),
            ("go test", "-v -run TestX -count=1 ./..."),
            ("pytest", "-q -k slow tests/"),
            ("python -m pytest", "-x --maxfail=2"),
            ("ls", "--anything -f /tmp"),
            ("make test", "-l 2 -k"),
            ("make test", "-Otarget all"),
            ("make test", "-O all"),
            ("make test", "--output-sync=line"),
            ("cargo test", "--test integration -- --nocapture"),
            ("cargo test", "--bin app"),
            ("npm test", "--reporter dot"),
        ] {
            assert_eq!(check(prefix, rest), None, "{prefix} {rest}");
        }
    }
}

/// Programs whose executable says nothing of what they run: shells, interpreters, package runners,
/// build tools and command wrappers. An allowlist entry for one (`/usr/bin/python3`, npm's
/// `npm-cli.js`) would let every script or command it can start run unasked, so `allow-always` does
/// not store one (see `gate::build_request`).
const CODE_RUNNERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "ash",
    "busybox",
    "node",
    "nodejs",
    "deno",
    "bun",
    "bunx",
    "npm",
    "npx",
    "pnpm",
    "pnpx",
    "yarn",
    "yarnpkg",
    "corepack",
    "python",
    "pypy",
    "ruby",
    "perl",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "Rscript",
    "java",
    "jshell",
    "kotlin",
    "scala",
    "groovy",
    "dotnet",
    "pwsh",
    "osascript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "make",
    "gmake",
    "cmake",
    "ninja",
    "cargo",
    "go",
    "gradle",
    "mvn",
    "ant",
    "rake",
    "bundle",
    "pip",
    "pipx",
    "uv",
    "poetry",
    "tox",
    "nox",
    "env",
    "xargs",
    "sudo",
    "doas",
    "su",
    "nohup",
    "nice",
    "ionice",
    "timeout",
    "stdbuf",
    "time",
    "watch",
    "flock",
    "setsid",
    "chroot",
    "unshare",
    "nsenter",
    "runuser",
    "ssh",
    "docker",
    "podman",
    "kubectl",
    "parallel",
    "script",
    "expect",
    "gdb",
    "strace",
    "ltrace",
    "valgrind",
    // Programs that run the program or command line in their arguments (also by their other names:
    // `linux64`, the loader's file name, `fakeroot-sysv`, `editor`; see `program_names`), and
    // editors, multiplexers and debuggers that run shell commands.
    "setarch",
    "ld.so",
    "start-stop-daemon",
    "capsh",
    "setpriv",
    "fakeroot",
    "faketime",
    "eatmydata",
    "unbuffer",
    "catchsegv",
    "taskset",
    "chrt",
    "prlimit",
    "perf",
    "firejail",
    "bwrap",
    "systemd-run",
    "pkexec",
    "dbus-run-session",
    "dbus-launch",
    "xvfb-run",
    "tmux",
    "screen",
    "vim",
    "vi",
    "view",
    "ex",
    "nvim",
    "emacs",
    "ed",
    "pdb",
    "pydoc",
    "wish",
    "run-parts",
    "man",
    "gdbtui",
    // Database shells (`\!`, `system`, `.shell` run shell commands) and TypeScript runners; the
    // dispatchers (`dispatch::DISPATCHERS`) are code runners too.
    "psql",
    "mysql",
    "mariadb",
    "tsx",
    "ts-node",
];

/// Whether an executable (a path or a name) is a [`CODE_RUNNERS`] program: by its name, with a
/// version (`python3.11`, `ruby3.1`), or as a runner's own script (`npm-cli.js`, `yarn.js`).
pub fn is_code_runner(executable: &str) -> bool {
    let name = executable.rsplit('/').next().unwrap_or(executable);
    let stem = name
        .strip_suffix(".js")
        .or_else(|| name.strip_suffix(".cjs"))
        .or_else(|| name.strip_suffix(".mjs"))
        .or_else(|| name.strip_suffix(".exe"))
        .unwrap_or(name);
    let stem = stem.strip_suffix("-cli").unwrap_or(stem);
    // A Python module run as a program (`pdb3` is `/usr/lib/python3.11/pdb.py`).
    let stem = stem.strip_suffix(".py").unwrap_or(stem);
    // By every name the program is known by (`vim.basic` is vim, `ld-linux-x86-64.so.2` the
    // loader), and with a version after the name: python3, python3.11, ruby3.1, node20, lua5.4.
    let names = super::program_names::names(stem, "");
    super::program_names::any_in(&names, CODE_RUNNERS)
        || super::program_names::any_in(&names, super::dispatch::DISPATCHERS)
}

#[cfg(test)]
mod code_runner_tests {
    use super::is_code_runner;

    #[test]
    fn runners_are_known_by_name_version_and_script() {
        for r in [
            "/usr/bin/python3.11",
            "python3",
            "/usr/lib/node_modules/npm/bin/npm-cli.js",
            "/usr/bin/node",
            "yarn.js",
            "/bin/bash",
            "ruby3.1",
            "/usr/bin/env",
            "lua5.4",
            // Another name for a runner, or a program that runs the one it is given.
            "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
            "/usr/bin/setarch",
            "/usr/bin/vim.basic",
            "/usr/bin/tmux",
            "/usr/sbin/start-stop-daemon",
            "/usr/bin/fakeroot-sysv",
            "/usr/lib/python3.11/pdb.py",
            "/usr/bin/tclsh8.6",
        ] {
            assert!(is_code_runner(r), "{r}");
        }
        for p in [
            "/usr/bin/uname",
            "ls",
            "/home/u/proj/build.sh",
            "wc",
            "/usr/bin/head",
            "nodes",
            "/usr/bin/git",
        ] {
            assert!(!is_code_runner(p), "{p}");
        }
    }
}
