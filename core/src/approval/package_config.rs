//! Whether a JavaScript package manager run in a directory would run a program its configuration
//! files name, as `git_config` answers for git.
//!
//! `Bash(npm run test:*)` names the project's test script; what else npm runs is set by files a
//! command can write in one call and the next call obeys: a `.npmrc` with `node-options=--require
//! ./x.js` or `script-shell=./x`, a `.yarnrc.yml` whose `yarnPath` is the program that runs as yarn,
//! a `bunfig.toml` that preloads a module. An allowed `find -fprintf .npmrc ...` followed by an allowed
//! `npm run test` ran the file. So before npm, npx, pnpm, yarn or bun is judged exact, the config files
//! they read from the directory up to `/` (the project's, and any above it) and the user's own are
//! read, and a setting that names a program or module makes the command inexact. An unreadable file
//! fails closed.

use std::path::{Path, PathBuf};

/// The package managers whose config files are read here.
pub const PACKAGE_MANAGERS: &[&str] = &[
    "npm", "npx", "pnpm", "pnpx", "yarn", "yarnpkg", "bun", "bunx",
];

/// npm's (and pnpm's, which reads `.npmrc` too) settings that name a program to run, a module to
/// load, or another config or prefix to take programs from (`_` read as `-`, case ignored).
const NPMRC_KEYS: &[&str] = &[
    "node-options",
    "script-shell",
    "shell",
    "git",
    "editor",
    "browser",
    "viewer",
    "init-module",
    "onload-script",
    "userconfig",
    "globalconfig",
    "prefix",
    "globalignorefile",
    "node-gyp",
    "npm-path",
    "pnpmfile",
    "global-pnpmfile",
    "hooks",
];

/// Of those, the ones that count in the user's own `~/.npmrc`, where `prefix`, `editor`, `git` and
/// the other program paths are a person's everyday setup (`prefix=~/.npm-global`): the ones that
/// load code into every run.
const HOME_NPMRC_KEYS: &[&str] = &[
    "node-options",
    "script-shell",
    "onload-script",
    "node-gyp",
    "npm-path",
    "pnpmfile",
    "global-pnpmfile",
    "hooks",
];

/// `.yarnrc.yml` (yarn 2+) and `.yarnrc` (yarn 1) settings of the same kind.
const YARNRC_KEYS: &[&str] = &[
    "yarnpath",
    "yarn-path",
    "plugins",
    "injectenvironmentfiles",
    "nodeoptions",
];

/// `bunfig.toml` settings that load code before the program (`preload`, also under `[test]`).
const BUNFIG_KEYS: &[&str] = &["preload", "plugins", "shell"];

/// `pnpm-workspace.yaml` settings of the same kind (pnpm 10 reads its settings there too).
const PNPM_WORKSPACE_KEYS: &[&str] = &[
    "nodeoptions",
    "scriptshell",
    "pnpmfile",
    "globalpnpmfile",
    "hooks",
    "shellemulator",
];

/// How a config file is read. An ini (`.npmrc`) is read line by line, a key's quotes decoded as npm's
/// reader decodes them (`"node\u002doptions"` is `node-options`). A YAML or TOML file has flow
/// mappings, explicit keys, dotted keys and inline tables (`{yarnPath: x}`, `test.preload = [...]`):
/// rather than parse every form, its whole text is searched for the names, escapes decoded and `-`,
/// `_` and case ignored, so a comment naming one asks too (fail closed).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Ini,
    Text,
}

/// Files whose presence alone makes a package manager load code: pnpm's `.pnpmfile.cjs` (hooks it
/// runs on every command) and yarn 4's `.env.yarn` (variables, `NODE_OPTIONS` among them, put in every
/// script's environment).
const LOADED_FILES: &[&str] = &[".pnpmfile.cjs", ".pnpmfile.mjs", ".env.yarn"];

/// Why the program known as `names` (typed as `name`), run in `dir`, may run a program or load
/// code that a config file of the project names, for the programs whose files are read here:
/// package managers (`runs_commands`), cargo (`cargo_runs_commands`) and Maven
/// (`maven_runs_commands`). `dir` is `None` after a `cd` the analyzer did not follow: the files
/// there are unknown.
pub fn runs_from_config(
    names: &[String],
    name: &str,
    dir: Option<&Path>,
    home: Option<&str>,
) -> Option<String> {
    let is = |list: &[&str]| crate::approval::program_names::any_in(names, list);
    let check: fn(&Path, Option<&str>) -> Option<String> = if is(PACKAGE_MANAGERS) {
        runs_commands
    } else if is(&["cargo"]) {
        cargo_runs_commands
    } else if is(&["mvn", "mvnd", "mvnDebug"]) {
        |dir, _| maven_runs_commands(dir)
    } else {
        return None;
    };
    match dir {
        Some(dir) => check(dir, home),
        None => Some(format!(
            "after cd, {name} reads config files in a directory the analyzer did not check"
        )),
    }
}

/// Why a package manager run in `dir` may run a program its configuration names, if it may.
pub fn runs_commands(dir: &Path, home: Option<&str>) -> Option<String> {
    for d in dir.ancestors() {
        for name in LOADED_FILES {
            let file = d.join(name);
            if std::fs::symlink_metadata(&file).is_ok() {
                return Some(format!(
                    "{} makes the package manager load it (code or variables) on every command",
                    file.display()
                ));
            }
        }
    }
    let mut files = config_files(dir, home);
    // The agent's own environment is its owner's setup, not the command's (npm puts `npm_config_*`
    // in the environment of every script it runs, an agent started by `npm start` included): the
    // files it points npm at are read like the others.
    for (name, under) in [
        ("npm_config_prefix", "etc/npmrc"),
        ("npm_config_globalconfig", ""),
        ("npm_config_userconfig", ""),
        ("NPM_CONFIG_PREFIX", "etc/npmrc"),
        ("NPM_CONFIG_GLOBALCONFIG", ""),
        ("NPM_CONFIG_USERCONFIG", ""),
    ] {
        if let Some(value) = std::env::var_os(name).filter(|v| !v.is_empty()) {
            let file = match under {
                "" => PathBuf::from(value),
                under => PathBuf::from(value).join(under),
            };
            files.push((file, NPMRC_KEYS, Reading::Ini));
        }
    }
    // Where npm finds its global config: the built-in places, and what a user or project file moves
    // it to (`prefix`, `globalconfig`), read in turn.
    let mut at = 0;
    while at < files.len() {
        let (file, _, reading) = files[at].clone();
        at += 1;
        if reading != Reading::Ini {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (key, value) in ini_settings(&text) {
            let moved = match key.as_str() {
                "prefix" => Some(expand_home(&value, home).join("etc/npmrc")),
                "globalconfig" | "userconfig" => Some(expand_home(&value, home)),
                _ => None,
            };
            if let Some(m) = moved.filter(|m| !files.iter().any(|(f, _, _)| f == m)) {
                if files.len() < 64 {
                    files.push((m, NPMRC_KEYS, Reading::Ini));
                }
            }
        }
    }
    for (file, keys, reading) in files {
        let text = match read_config(&file) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(why) => return Some(why),
        };
        let found = match reading {
            Reading::Ini => names_a_program(&text, keys),
            Reading::Text => mentions(&text, keys),
        };
        if let Some(key) = found {
            return Some(format!(
                "{} sets {key}, which makes the package manager run or load a program",
                file.display()
            ));
        }
    }
    None
}

/// cargo's settings that name the program it runs as (or around) rustc and rustdoc: cargo asks
/// rustc for the target's details in every command, `cargo metadata` and `cargo tree` included,
/// through the wrapper (an outside round ran a planted `rustc-wrapper` that way).
const CARGO_KEYS: &[&str] = &[
    "rustc-wrapper",
    "rustc-workspace-wrapper",
    "rustc",
    "rustdoc",
];

/// Why cargo run in `dir` may run a program a project's configuration names, if it may: a
/// `.cargo/config.toml` (or `.cargo/config`) in `dir` or a directory above it that names rustc or
/// a wrapper, or a `rust-toolchain(.toml)` naming a toolchain by `path` (rustup, which every `cargo`
/// is, then runs that directory's `cargo`). The user's own `~/.cargo/config.toml` is their setup
/// (`rustc-wrapper = "sccache"`) and is not read. Text search, as for TOML above: fail closed.
pub fn cargo_runs_commands(dir: &Path, home: Option<&str>) -> Option<String> {
    let home = home.map(Path::new);
    for d in dir.ancestors().filter(|d| Some(*d) != home) {
        let files: [(PathBuf, &[&str]); 4] = [
            (d.join(".cargo/config.toml"), CARGO_KEYS),
            (d.join(".cargo/config"), CARGO_KEYS),
            (d.join("rust-toolchain.toml"), &["path"]),
            (d.join("rust-toolchain"), &["path"]),
        ];
        for (file, keys) in files {
            let text = match read_config(&file) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(why) => return Some(why),
            };
            if let Some(key) = mentions(&text, keys) {
                return Some(format!(
                    "{} sets {key}, which makes cargo run the program it names",
                    file.display()
                ));
            }
        }
    }
    None
}

/// Why Maven run in `dir` may load code the project's `.mvn/` names, if it may: `jvm.config` holds
/// options for the JVM that runs Maven itself (`-agentpath:./x.so` loaded native code in a plain
/// `mvn -v`), and `extensions.xml` names core extensions loaded at start. Maven reads them from the
/// nearest `.mvn` in `dir` or above it; any such file makes the command inexact (fail closed).
pub fn maven_runs_commands(dir: &Path) -> Option<String> {
    let found = dir.ancestors().find_map(|d| {
        ["jvm.config", "extensions.xml"]
            .iter()
            .map(|n| d.join(".mvn").join(n))
            .find(|f| std::fs::symlink_metadata(f).is_ok())
    })?;
    Some(format!(
        "{} gives Maven's own JVM options or extensions, which load code before any goal",
        found.display()
    ))
}

/// A config file's text, `None` where there is none; a file that is there but cannot be read (a
/// directory of that name, no permission) is an error naming it: what it sets is unknown.
fn read_config(file: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!(
            "{} could not be read ({e}): what it sets is unknown",
            file.display()
        )),
    }
}

/// The config files a package manager reads in `dir`: in it and in each directory above it, and in
/// the user's home; each with the settings that matter in it.
type ConfigFile = (PathBuf, &'static [&'static str], Reading);

fn config_files(dir: &Path, home: Option<&str>) -> Vec<ConfigFile> {
    let home = home.map(Path::new);
    let mut files: Vec<ConfigFile> = Vec::new();
    let mut add = |d: &Path| {
        let npmrc = if Some(d) == home {
            HOME_NPMRC_KEYS
        } else {
            NPMRC_KEYS
        };
        files.push((d.join(".npmrc"), npmrc, Reading::Ini));
        files.push((d.join(".yarnrc.yml"), YARNRC_KEYS, Reading::Text));
        files.push((d.join(".yarnrc"), YARNRC_KEYS, Reading::Text));
        files.push((d.join("bunfig.toml"), BUNFIG_KEYS, Reading::Text));
        files.push((
            d.join("pnpm-workspace.yaml"),
            PNPM_WORKSPACE_KEYS,
            Reading::Text,
        ));
    };
    for d in dir.ancestors() {
        add(d);
    }
    if let Some(h) = home {
        if !dir.starts_with(h) {
            add(h);
        }
        files.push((h.join(".config/npm/npmrc"), HOME_NPMRC_KEYS, Reading::Ini));
        files.push((h.join(".config/pnpm/rc"), HOME_NPMRC_KEYS, Reading::Ini));
        files.push((h.join(".bunfig.toml"), BUNFIG_KEYS, Reading::Text));
        files.push((h.join(".config/bunfig.toml"), BUNFIG_KEYS, Reading::Text));
    }
    // npm's global config where Node is commonly installed (more where a `prefix` moves it, above).
    for global in ["/etc/npmrc", "/usr/etc/npmrc", "/usr/local/etc/npmrc"] {
        files.push((PathBuf::from(global), NPMRC_KEYS, Reading::Ini));
    }
    files
}

/// `~/x` with the home put in; a relative path stays as it is.
fn expand_home(value: &str, home: Option<&str>) -> PathBuf {
    match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => Path::new(h).join(rest),
        _ => PathBuf::from(value),
    }
}

/// An ini text's `key = value` settings, keys as `ini_key` reads them.
fn ini_settings(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.starts_with(['#', ';', '[']) {
                return None;
            }
            let (k, v) = line.split_once('=')?;
            Some((ini_key(k), v.trim().trim_matches(['"', '\'']).to_string()))
        })
        .collect()
}

/// A key as npm's ini reader takes it: a double-quoted one decoded as JSON (`"node\u002doptions"`),
/// a single-quoted one taken as written; then lowercased, `_` as `-`.
fn ini_key(raw: &str) -> String {
    let raw = raw.trim();
    let decoded = if raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"') {
        serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.trim_matches('"').to_string())
    } else {
        raw.trim_matches('\'').to_string()
    };
    decoded.to_ascii_lowercase().replace('_', "-")
}

/// The first of `keys` that `text` mentions anywhere, escapes (`\u0050`, `\x50`) decoded, and `-`,
/// `_`, quotes and case ignored.
fn mentions(text: &str, keys: &[&str]) -> Option<String> {
    let decoded = decode_escapes(text);
    let plain: String = decoded
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '"' | '\''))
        .flat_map(char::to_lowercase)
        .collect();
    keys.iter()
        .find(|k| plain.contains(&k.replace(['-', '_'], "")))
        .map(|k| k.to_string())
}

/// `\uXXXX`, `\UXXXXXXXX` and `\xXX` escapes of YAML and TOML strings, decoded wherever they are.
fn decode_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let width = match (c, chars.peek()) {
            ('\\', Some('u')) => 4,
            ('\\', Some('U')) => 8,
            ('\\', Some('x')) => 2,
            _ => {
                out.push(c);
                continue;
            }
        };
        let digits: String = chars.clone().skip(1).take(width).collect();
        match u32::from_str_radix(&digits, 16)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) if digits.len() == width => {
                out.push(ch);
                for _ in 0..=width {
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The first of `keys` that `text` sets, read as an ini, YAML or TOML line `key = value` or
/// `key: value` (spaces around, `_` as `-`, case ignored; a `[section]` prefix and quotes
/// dropped). Comments (`#`, `;`) are skipped.
fn names_a_program(text: &str, keys: &[&str]) -> Option<String> {
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        // `key=value` (npmrc), `key: value` (YAML), `key = value` (TOML), `key "value"` (yarn 1).
        let Some(at) = line.find(['=', ':', ' ', '\t']) else {
            continue;
        };
        let key = ini_key(&line[..at]);
        // `//registry/:_authToken` and the like are per-registry credentials, not settings here.
        let key = key.rsplit(':').next().unwrap_or(&key).to_string();
        let plain = key.replace('-', "");
        if keys
            .iter()
            .any(|k| *k == key || k.replace('-', "") == plain)
        {
            return Some(key);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_projects_cargo_config_naming_rustc_or_a_wrapper_makes_cargo_inexact() {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("work/app");
        std::fs::create_dir_all(project.join("src")).unwrap();
        let h = home.path().to_str();
        assert_eq!(cargo_runs_commands(&project, h), None);
        // The user's own wrapper (sccache) is their setup.
        std::fs::create_dir_all(home.path().join(".cargo")).unwrap();
        std::fs::write(
            home.path().join(".cargo/config.toml"),
            "[build]\nrustc-wrapper = \"sccache\"\n",
        )
        .unwrap();
        assert_eq!(cargo_runs_commands(&project, h), None);
        for (file, text) in [
            (
                ".cargo/config.toml",
                "[build]\nrustc-wrapper = \"./w.sh\"\n",
            ),
            (
                ".cargo/config.toml",
                "build = { rustc_wrapper = \"./w.sh\" }\n",
            ),
            (".cargo/config", "build.rustc = \"./r\"\n"),
            ("rust-toolchain.toml", "[toolchain]\npath = \"./tc\"\n"),
        ] {
            let at = home.path().join("work").join(file);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(&at, text).unwrap();
            let why = cargo_runs_commands(&project.join("src"), h);
            assert!(why.is_some(), "{file}: {text}");
            std::fs::remove_file(&at).unwrap();
        }
        std::fs::write(
            project.join("rust-toolchain.toml"),
            "[toolchain]\nchannel = \"1.80\"\n",
        )
        .unwrap();
        assert_eq!(cargo_runs_commands(&project, h), None);
    }

    #[test]
    fn settings_that_run_a_program_are_found_in_the_project_and_above() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("a/b");
        std::fs::create_dir_all(&project).unwrap();
        assert_eq!(runs_commands(&project, None), None);
        std::fs::write(project.join(".npmrc"), "registry=https://r.example\n").unwrap();
        assert_eq!(runs_commands(&project, None), None);
        for (file, text) in [
            (".npmrc", "node-options=--require=./evil.js\n"),
            (".npmrc", "NODE_OPTIONS = --require ./x\n"),
            (".npmrc", "script_shell=/tmp/x\n"),
            (".yarnrc.yml", "yarnPath: ./evil.cjs\n"),
            (".yarnrc.yml", "{yarnPath: ./evil.cjs}\n"),
            (".yarnrc.yml", "? yarnPath\n: ./evil.cjs\n"),
            (".yarnrc.yml", "\"yarn\\u0050ath\": ./evil.cjs\n"),
            (".npmrc", "\"node\\u002doptions\"=--require ./x.js\n"),
            ("bunfig.toml", "test.preload = [\"./x.ts\"]\n"),
            ("bunfig.toml", "test = { preload = [\"./x.ts\"] }\n"),
            ("pnpm-workspace.yaml", "nodeOptions: \"--require ./x.js\"\n"),
            (".pnpmfile.cjs", "module.exports = {}\n"),
            (".env.yarn", "NODE_OPTIONS=--require ./x.js\n"),
            (".yarnrc", "yarn-path \"./evil.js\"\n"),
            ("bunfig.toml", "[test]\npreload = [\"./evil.ts\"]\n"),
        ] {
            let at = dir.path().join("a").join(file);
            std::fs::write(&at, text).unwrap();
            let why = runs_commands(&project, None);
            assert!(
                why.as_deref().is_some_and(|w| w.contains(file)),
                "{file}: {why:?}"
            );
            std::fs::remove_file(&at).unwrap();
        }
        // A prefix or globalconfig moves npm's global config: that file is read too.
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(elsewhere.path().join("etc")).unwrap();
        std::fs::write(
            elsewhere.path().join("etc/npmrc"),
            "node-options=--require x\n",
        )
        .unwrap();
        let home0 = tempfile::tempdir().unwrap();
        std::fs::write(
            home0.path().join(".npmrc"),
            format!("prefix={}\n", elsewhere.path().display()),
        )
        .unwrap();
        let why = runs_commands(&project, home0.path().to_str());
        assert!(
            why.is_some_and(|w| w.contains("etc/npmrc")),
            "prefix's npmrc"
        );
        // The user's own, too, for what loads code into every run; a prefix there is everyday.
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".npmrc"), "prefix=~/.npm-global\n").unwrap();
        assert_eq!(runs_commands(&project, home.path().to_str()), None);
        std::fs::write(home.path().join(".npmrc"), "script-shell=/tmp/x\n").unwrap();
        assert!(runs_commands(&project, home.path().to_str()).is_some());
        // A home above the project is read as a home.
        let in_home = home.path().join("proj");
        std::fs::create_dir_all(&in_home).unwrap();
        std::fs::write(home.path().join(".npmrc"), "prefix=~/.npm-global\n").unwrap();
        assert_eq!(runs_commands(&in_home, home.path().to_str()), None);
        std::fs::write(in_home.join(".npmrc"), "prefix=/tmp/elsewhere\n").unwrap();
        assert!(runs_commands(&in_home, home.path().to_str()).is_some());
    }
}
