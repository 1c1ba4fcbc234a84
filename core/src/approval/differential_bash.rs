//! The analyzer against bash itself, by construction: generated commands run under real bash with
//! `PATH` starting at recording stubs (each simple command of a line names its own stub, `s0`,
//! `s1`...; each run writes its argv NUL-separated to a file of its own). Whenever the analyzer
//! claims to know a simple command exactly (analysis ok, not inexact, not blocked, no word bash
//! may expand), the argv bash ran for that stub must be the claimed one; when every command of a
//! line is claimed and none can be skipped (no `||`, no `!`), each must have run. Heredoc bodies
//! hide commands (stub `h`): bash running one in a line the analyzer accepted means the analyzer
//! misread where the body ends.
//!
//! The generator mixes quoting (single, double, escapes, `$'..'`, `$".."`), braces, globs,
//! tildes, assignments, comments, heredocs (quoted and not, with backslash-newline and
//! terminator look-alikes), line continuations, wrappers (env, nice, timeout, stdbuf, command,
//! builtin, exec, time), groups and compounds (`{ ..; }`, `if`, `while`, `!`), `sh -c` scripts,
//! and shell state set by one command for the next (`PATH=`, `BASH_CMDS[..]=`, `hash -p`,
//! `printf -v`, `declare`, `export`, `jobs -x`). Commands run in batches: one bash process evaluates many lines, each in its own
//! subshell with its own record directory. Lines are generated until `DIFF_COMMANDS` of them
//! (default 10,000) are accepted by the analyzer with something to check, and all of those run.

#![cfg(all(test, unix))]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use super::analyze::{analyze, Analysis, Context};

/// The shared generator, the number of the next simple command's stub, the stubs a line surely
/// runs whatever else happens in it (after `;`, at the top level), and how deep in `bash -c` the
/// generator is.
struct Rng(crate::test_rng::Rng, usize, Vec<String>, usize);

impl std::ops::Deref for Rng {
    type Target = crate::test_rng::Rng;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Rng {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(crate::test_rng::Rng(seed), 0, Vec::new(), 0)
    }

    /// The next simple command's own stub.
    fn stub(&mut self) -> String {
        self.1 += 1;
        format!("s{}", self.1 - 1)
    }
}

/// Stubs per line (`s0`..`s63`); a line never has more simple commands than this.
const STUBS: usize = 64;
const PLAIN: &[&str] = &[
    "a", "b", "-x", "--flag", "--k=v", "x.y", "A=1", "9", "%", "@", ":", ",", "+", "é", "=", "a=b",
];
/// Characters for quoted parts (single quotes drop `'`; double quotes escape what they must).
const ANY: &[&str] = &[
    "a", " ", ";", "|", "&", "$", "`", "\\", "\"", "(", ")", "<", ">", "*", "?", "[", "#", "~",
    "{", "}", "!", ",", "\t", "'", "n", "x41", "E", "O", "F",
];

fn part(r: &mut Rng) -> String {
    match r.below(12) {
        0..=3 => r.pick(PLAIN).to_string(),
        4 => {
            let body: String = (0..r.below(4))
                .map(|_| r.pick(ANY))
                .filter(|s| *s != "'")
                .collect();
            format!("'{body}'")
        }
        5 => {
            let mut body = String::new();
            for _ in 0..r.below(4) {
                match r.pick(ANY) {
                    "\"" => body.push_str("\\\""),
                    "\\" => body.push_str(if r.chance(50) { "\\\\" } else { "\\q" }),
                    "$" => body.push_str(if r.chance(70) { "\\$" } else { "$" }),
                    "`" => body.push_str("\\`"),
                    "!" => body.push('.'),
                    s => body.push_str(s),
                }
            }
            format!("\"{body}\"")
        }
        6 => format!("\\{}", r.pick(ANY)),
        // ANSI-C and locale quoting: bash decodes them; the analyzer must not claim them.
        7 => format!("$'{}'", r.pick(&["\\x72m", "a\\nb", "\\'", "\\\\", "x"])),
        8 => format!("$\"{}\"", r.pick(&["a", "b c"])),
        // Braces, globs, tildes.
        9 => r
            .pick(&[
                "{a,b}", "{1..3}", "x{,y}", "{a}", "*", "s?", "[ab]", "~", "~/x", "~root", "~+",
            ])
            .to_string(),
        10 => r.pick(&["#c", "a#b", "$", "5$", "a$"]).to_string(),
        _ => r
            .pick(&["'a b'", "\"c d\"", "e\\ f", "''", "\"\""])
            .to_string(),
    }
}

fn word(r: &mut Rng) -> String {
    (0..1 + r.below(2)).map(|_| part(r)).collect()
}

/// A simple command: optional `!`, assignments, wrappers, a stub, words; `last` may use `exec`.
fn simple(r: &mut Rng, last: bool) -> String {
    let mut out = Vec::new();
    if r.chance(8) {
        out.push("!".to_string());
    }
    while r.chance(15) {
        out.push(format!(
            "{}={}",
            r.pick(&["A", "LANG", "LC_ALL", "B_1"]),
            word(r)
        ));
    }
    while r.chance(25) {
        let w = r.pick(&[
            "env",
            "env -u A",
            "env A=1",
            "env -- A=2",
            "nice",
            "nice -n 5",
            "timeout 5",
            "timeout -s KILL 5",
            "stdbuf -oL",
            "command",
            "command --",
            "builtin command",
            "time",
            "time -p",
            "exec",
        ]);
        if w == "exec" && !last {
            continue;
        }
        out.push(w.to_string());
    }
    out.push(r.stub());
    for _ in 0..r.below(4) {
        out.push(word(r));
    }
    out.join(" ")
}

/// Single-quote a script for `sh -c`.
fn quote(script: &str) -> String {
    format!("'{}'", script.replace('\'', "'\\''"))
}

fn unit(r: &mut Rng, last: bool) -> String {
    match r.below(17) {
        5 => format!("echo x | xargs {}", simple(r, false)),
        6 => format!("eval {}", simple(r, false)),
        7 => format!("find . -maxdepth 0 -exec {} \\;", simple(r, false)),
        0 => format!("{{ {}; }}", simple(r, false)),
        1 => format!("if {}; then {}; fi", simple(r, false), simple(r, false)),
        2 => format!("while false; do {}; done", simple(r, false)),
        3 => format!("sh -c {}", quote(&simple(r, false))),
        4 => {
            r.3 += 1;
            let script = line(r, 0);
            r.3 -= 1;
            format!("bash -c {}", quote(&script))
        }
        8 => {
            // Shell state set by one command and used by the next: the command after it must not
            // be claimed unless the state cannot change it (LANG).
            let next = r.1;
            let setter = match r.below(9) {
                0 => "PATH=/nonexistent".to_string(),
                1 => format!("BASH_CMDS[s{next}]=/bin/true"),
                2 => format!("hash -p /bin/true s{next}"),
                3 => "printf -v PATH %s /nonexistent".to_string(),
                4 => "declare PATH=/nonexistent".to_string(),
                5 => "typeset -x PATH=/nonexistent".to_string(),
                6 => "LANG=C".to_string(),
                // A builtin that runs a command (its own stub: it is not claimed).
                7 => format!("jobs -x {} a", r.stub()),
                _ => "export PATH=/nonexistent".to_string(),
            };
            let then = simple(r, last);
            if r.3 == 0 {
                // After `;` at the top level it runs, whatever came before: if the analyzer claims
                // it, bash must have run that stub (not another program by that name).
                r.2.push(format!("s{next}"));
            }
            format!("{setter}; {then}")
        }
        _ => simple(r, last),
    }
}

/// A command line: units joined by operators, maybe a heredoc, maybe a continuation.
fn line(r: &mut Rng, heredoc_chance: usize) -> String {
    let n = 1 + r.below(3);
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push_str(r.pick(&[" && ", " ; ", " | ", " || ", ";", "|"]));
        }
        s.push_str(&unit(r, i == n - 1));
    }
    if r.chance(4) {
        // A continuation somewhere between words.
        if let Some(at) = s.find(' ') {
            s.insert_str(at, " \\\n");
        }
    }
    if r.chance(3) {
        s.push_str(" # trailing comment");
    }
    if r.chance(heredoc_chance) {
        let delim = r.pick(&[
            "EOF",
            "'EOF'",
            "\"EOF\"",
            "\\EOF",
            "E\"O\"F",
            "-EOF",
            "\"EO\\\\F\"",
            "\"E\\$OF\"",
        ]);
        let (spec, end) = match delim {
            "-EOF" => ("-EOF".to_string(), "\tEOF"),
            // Quote removal in double quotes: `\\` is `\`, `\$` is `$`. The last line is bash's
            // terminator or the delimiter as written (a lexer that kept the backslash ends there,
            // after bash ran what followed bash's terminator in the body).
            "\"EO\\\\F\"" => (
                delim.to_string(),
                if r.chance(50) { "EO\\F" } else { "EO\\\\F" },
            ),
            "\"E\\$OF\"" => (
                delim.to_string(),
                if r.chance(50) { "E$OF" } else { "E\\$OF" },
            ),
            d => (d.to_string(), "EOF"),
        };
        s.push_str(&format!(" <<{spec}\n"));
        for _ in 0..r.below(4) {
            let body = r.pick(&[
                "plain",
                "$x",
                "a\\",
                "EO\\",
                "F",
                "EOF\\",
                "\\$(h hidden)",
                "EO\\\\F",
                "E\\$OF",
                "EO\\F",
                "E$OF",
                "$\\",
                "(h hidden)",
                "`h hidden`",
                "EOF ",
                " EOF",
                "\tEOF",
                "h after",
            ]);
            s.push_str(body);
            s.push('\n');
        }
        s.push_str(end);
        if r.chance(50) {
            s.push('\n');
        }
    }
    s
}

/// The claims: stub name to the argv the analyzer says bash runs for it.
fn claims(
    a: &Analysis,
    stubs: &Path,
    out: &mut HashMap<String, Vec<String>>,
    all_exact: &mut bool,
) {
    for s in a.segments() {
        let exact = s.inexact.is_none() && s.blocked.is_none() && !s.expands.iter().any(|e| *e);
        if let Some(inner) = &s.inner {
            if !inner.ok {
                *all_exact = false;
            } else {
                claims(inner, stubs, out, all_exact);
            }
            if !exact {
                *all_exact = false;
            }
            continue;
        }
        let is_stub = s
            .resolution
            .resolved_path
            .as_deref()
            .is_some_and(|p| p.parent() == Some(stubs));
        if !exact || !is_stub {
            *all_exact = false;
            continue;
        }
        let mut argv = s.effective_argv.clone();
        argv[0] = argv[0].rsplit('/').next().unwrap_or(&argv[0]).to_string();
        out.insert(argv[0].clone(), argv);
    }
}

/// A temp dir with the recording stubs, and a runner of lines under bash.
struct Stubs {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    stubs: std::path::PathBuf,
    home: String,
    path: String,
}

/// What bash ran for one line: stub name to the argvs it ran with.
type Ran = HashMap<String, Vec<Vec<String>>>;

impl Stubs {
    fn new() -> Stubs {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let stubs = root.join("stubs");
        let home = root.join("home");
        for d in [&stubs, &home, &root.join("links")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(stubs.join("s1"), root.join("links/ln1")).unwrap();
        for name in (0..STUBS).map(|n| format!("s{n}")).chain(["h".to_string()]) {
            use std::os::unix::fs::PermissionsExt;
            let p = stubs.join(name);
            std::fs::write(
                &p,
                "#!/bin/sh\nprintf '%s\\0' \"${0##*/}\" \"$@\" > \"$STUB_LOG/$$\"\n",
            )
            .unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Stubs {
            path: format!("{}:/usr/bin:/bin", stubs.display()),
            home: home.display().to_string(),
            _dir: dir,
            root,
            stubs,
        }
    }

    fn ctx(&self) -> Context<'_> {
        Context {
            cwd: &self.root,
            path: Some(&self.path),
            home: Some(&self.home),
        }
    }

    /// Run every line under bash: two bash processes (CI has 2 cores), each evaluating a share
    /// of the lines, each line in its own subshell and record directory.
    fn run(&self, name: &str, lines: &[&str]) -> Vec<Ran> {
        let (cmds, logs) = (
            self.root.join(name).join("cmds"),
            self.root.join(name).join("logs"),
        );
        std::fs::create_dir_all(&cmds).unwrap();
        std::fs::create_dir_all(&logs).unwrap();
        let mut scripts = vec![format!("cd \"$ROOT\" || exit 1\n"); 2];
        for (id, text) in lines.iter().enumerate() {
            std::fs::write(cmds.join(id.to_string()), text).unwrap();
            std::fs::create_dir(logs.join(id.to_string())).unwrap();
            // The line goes in through a quoted heredoc and `read` (no fork), then runs in a
            // subshell of its own.
            scripts[id % 2].push_str(&format!(
                "IFS= read -r -d '' CMD <<'__LINE_END__'\n{text}\n__LINE_END__\n( export STUB_LOG=\"{}/{id}\"; eval \"${{CMD%$'\\n'}}\" ) </dev/null >/dev/null 2>&1\n",
                logs.display(),
            ));
        }
        let children: Vec<_> = scripts
            .iter()
            .enumerate()
            .map(|(n, script)| {
                let file = self.root.join(format!("{name}-batch-{n}.sh"));
                std::fs::write(&file, format!("{script}: > {name}-done-{n}\n")).unwrap();
                Command::new("bash")
                    .arg(&file)
                    .env("ROOT", &self.root)
                    .env("PATH", &self.path)
                    .env("HOME", &self.home)
                    .env_remove("BASH_ENV")
                    .env_remove("ENV")
                    .spawn()
                    .unwrap()
            })
            .collect();
        for (n, mut child) in children.into_iter().enumerate() {
            child.wait().unwrap();
            assert!(
                self.root.join(format!("{name}-done-{n}")).exists(),
                "batch {n} did not finish"
            );
        }
        (0..lines.len())
            .map(|id| {
                let mut ran: Ran = HashMap::new();
                for e in std::fs::read_dir(logs.join(id.to_string())).unwrap() {
                    let bytes = std::fs::read(e.unwrap().path()).unwrap();
                    let mut argv: Vec<String> = bytes
                        .split(|b| *b == 0)
                        .map(|s| String::from_utf8_lossy(s).into_owned())
                        .collect();
                    argv.pop();
                    ran.entry(argv[0].clone()).or_default().push(argv);
                }
                ran
            })
            .collect()
    }
}

#[test]
fn claimed_argv_is_what_bash_runs() {
    let total: usize = std::env::var("DIFF_COMMANDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let bench = Stubs::new();
    let ctx = bench.ctx();
    let mut r = Rng::new(0x2545_f491_4f6c_dd1d);
    // (line, claims, every simple command claimed, every claimed command surely runs, the stubs
    // that run whatever happens)
    let mut cases = Vec::new();
    let mut analysed_ok = 0;
    let mut generated = 0;
    while cases.len() < total && generated < total * 10 {
        generated += 1;
        r.1 = 0;
        r.2.clear();
        let text = line(&mut r, 12);
        let surely_runs = r.2.clone();
        assert!(r.1 <= STUBS, "{text}");
        let a = analyze(&text, &ctx);
        if !a.ok {
            continue;
        }
        analysed_ok += 1;
        let mut c = HashMap::new();
        let mut all = true;
        claims(&a, &bench.stubs, &mut c, &mut all);
        if c.is_empty() && !all {
            continue;
        }
        // `||` and `!` may skip a claimed command; then only "what ran was claimed" holds.
        let sure = !text.contains("||") && !text.contains('!');
        cases.push((text, c, all, sure, surely_runs));
    }
    let started = std::time::Instant::now();
    let lines: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    let results = bench.run("claims", &lines);
    let mut disagreements = Vec::new();
    let mut checked_claims = 0;
    for ((text, claimed, all, sure, surely_runs), ran) in cases.iter().zip(&results) {
        checked_claims += claimed.len();
        // A claimed command that ran, ran with the claimed argv, once.
        let mut ok = claimed
            .iter()
            .all(|(name, argv)| ran.get(name).is_none_or(|runs| runs == &vec![argv.clone()]));
        // When nothing can be skipped, every claimed command ran.
        if *all && *sure {
            ok &= claimed.keys().all(|name| ran.contains_key(name));
        }
        // A claimed command after shell state was set ran as claimed: the state did not make bash
        // run something else by that name (or nothing at all).
        // (`!` inside a pipeline, `a | ! b`, is a syntax error that runs nothing, which the analyzer
        // does not refuse: such lines are left to the check above.)
        ok &= text.contains('!')
            || surely_runs
                .iter()
                .all(|name| !claimed.contains_key(name) || ran.contains_key(name));
        // A command from a heredoc body never runs in a line the analyzer accepted.
        ok &= !ran.contains_key("h");
        if !ok {
            disagreements.push(format!(
                "{text:?}\n  claimed {claimed:?}\n  bash ran {ran:?}"
            ));
        }
    }
    eprintln!(
        "differential: {generated} generated, {analysed_ok} analysed ok, {} run under bash with {checked_claims} claimed argvs in {:?}",
        cases.len(),
        started.elapsed()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements with bash:\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(10)].join("\n")
    );
    assert_eq!(cases.len(), total, "only {} lines ran", cases.len());
}

/// Deny rules against bash: with `Bash(s1:*)` denied and everything else allowed, every generated
/// line the rules allow runs under bash, and stub `s1` must never have run (wrapped, grouped,
/// inside `sh -c`, named by a path...). `DIFF_DENY_COMMANDS` lines (default 2,000) are run.
#[test]
fn a_deny_rule_is_never_passed_by_what_bash_runs() {
    use super::rules::{Rule, RuleSet, Verdict};
    let total: usize = std::env::var("DIFF_DENY_COMMANDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000);
    let bench = Stubs::new();
    let ctx = bench.ctx();
    let rules = RuleSet {
        deny: vec![Rule::parse("Bash(s1:*)").unwrap()],
        ask: vec![],
        allow: vec![Rule::parse("Bash(*)").unwrap()],
    };
    let mut r = Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut allowed = Vec::new();
    let (mut generated, mut denied, mut asked) = (0, 0, 0);
    while allowed.len() < total && generated < total * 20 {
        generated += 1;
        r.1 = 0;
        let mut text = line(&mut r, 12);
        // Name the denied program in other ways too: by path, through a symlink, with `..`.
        if r.chance(30) {
            let other = match r.below(4) {
                0 => format!("{}/s1 ", bench.stubs.display()),
                1 => format!("{}/links/ln1 ", bench.root.display()),
                2 => "links/ln1 ".to_string(),
                _ => "links/../stubs/s1 ".to_string(),
            };
            text = text.replacen("s1 ", &other, 1);
        }
        match rules.decide(&analyze(&text, &ctx)).verdict {
            Verdict::Allow => allowed.push(text),
            Verdict::Deny => denied += 1,
            _ => asked += 1,
        }
    }
    let lines: Vec<&str> = allowed.iter().map(String::as_str).collect();
    let results = bench.run("deny", &lines);
    let passed: Vec<String> = allowed
        .iter()
        .zip(&results)
        .filter(|(_, ran)| ran.contains_key("s1") || ran.contains_key("ln1"))
        .map(|(text, ran)| format!("{text:?}: bash ran {ran:?}"))
        .collect();
    eprintln!(
        "deny differential: {generated} generated, {denied} denied, {asked} asked, {} allowed and run",
        allowed.len()
    );
    assert!(
        passed.is_empty(),
        "{} lines ran a denied command:\n{}",
        passed.len(),
        passed[..passed.len().min(10)].join("\n")
    );
}

/// Builtins that read an operand as a variable name evaluate its subscript, `$(...)` included.
/// Every form here runs under bash with the subscript naming a stub of its own (`$(s1)`): where
/// bash ran that stub, the analyzer must not see the line exactly (else an allowlisted `test`,
/// `Bash(printf:*)` or `Bash(*)` under a deny rule would let it run unasked); the forms known to
/// run it must have run it, so the check is live; and where bash did not run it, nothing says
/// the analyzer may not be stricter.
#[test]
fn a_subscript_bash_evaluates_in_a_builtins_operand_is_never_seen_exactly() {
    // (template with NAME for the subscripted name, bash surely runs the subscript)
    let forms: &[(&str, bool)] = &[
        ("test -v NAME", true),
        ("[ -v NAME ]", true),
        ("test ! -v NAME", true),
        ("test -n x -a -v NAME", true),
        ("test x = y -o -v NAME", true),
        ("test -v a -a -v NAME", true),
        ("test \\( -v NAME \\)", true),
        ("[ ! -v NAME ]", true),
        ("test -R NAME", false),
        ("printf -v NAME x", true),
        ("printf -vNAME x", true),
        ("printf -v x -v NAME y", true),
        ("printf -vx -vNAME y", true),
        ("wait -n -p NAME", false),
        ("wait -np NAME", false),
        // Operands bash reads as integers or strings: not evaluated.
        ("test NAME -eq 1", false),
        ("[ 1 -lt NAME ]", false),
        ("test -z NAME", false),
        ("printf %d NAME", false),
        ("printf -- -v NAME", false),
    ];
    let names: &[(&str, bool)] = &[
        ("'a[$(STUB)]'", true),
        ("'a[`STUB`]'", true),
        ("'BASH_ALIASES[$(STUB)]'", true),
        ("'a[1+$(STUB)]'", true),
    ];
    // Where the command stands: alone, in a pipeline, after another command, wrapped, in `bash -c`.
    let places: &[(&str, bool)] = &[
        ("CMD", true),
        ("CMD | cat", true),
        ("echo hi; CMD", true),
        ("echo hi && CMD", true),
        ("command CMD", true),
        ("builtin CMD", true),
        ("time CMD", true),
        ("! CMD", true),
        ("bash -c \"CMD\"", true),
    ];
    let bench = Stubs::new();
    let ctx = bench.ctx();
    let mut lines = Vec::new();
    let mut expected = Vec::new();
    for (form, form_runs) in forms {
        for (name, _) in names {
            for (place, _) in places {
                let mut cmd = place.replace("CMD", &form.replace("NAME", name));
                if place.starts_with("bash -c") {
                    // Inside double quotes the substitution must be escaped to reach the inner
                    // script, and backticks with it.
                    cmd = cmd.replace('$', "\\$").replace('`', "\\`");
                }
                lines.push(cmd.replace("STUB", "s1"));
                expected.push(*form_runs);
            }
        }
    }
    let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
    let results = bench.run("names", &texts);
    let mut holes = Vec::new();
    let mut not_run = Vec::new();
    for ((text, surely), ran) in lines.iter().zip(&expected).zip(&results) {
        let a = analyze(text, &ctx);
        let ran_stub = ran.contains_key("s1");
        if ran_stub && a.ok && a.first_inexact().is_none() {
            holes.push(format!("{text:?}: seen exactly, bash ran {ran:?}"));
        }
        if *surely && !ran_stub {
            not_run.push(text.clone());
        }
    }
    assert!(
        holes.is_empty(),
        "{} lines bash evaluated a subscript in were seen exactly:\n{}",
        holes.len(),
        holes.join("\n")
    );
    assert!(
        not_run.is_empty(),
        "bash did not evaluate the subscript in:\n{}",
        not_run.join("\n")
    );
}
