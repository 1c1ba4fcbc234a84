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
const BUNFIG_KEYS: &[&str] = &["preload", "plugins"];

/// Why a package manager run in `dir` may run a program its configuration names, if it may.
pub fn runs_commands(dir: &Path, home: Option<&str>) -> Option<String> {
    for name in [
        "NODE_OPTIONS",
        "npm_config_node_options",
        "npm_config_script_shell",
    ] {
        if std::env::var_os(name).is_some_and(|v| !v.is_empty()) {
            return Some(format!(
                "{name} in the environment makes the package manager run more than its script"
            ));
        }
    }
    for (file, keys) in config_files(dir, home) {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Some(format!(
                    "{} could not be read ({e}): what it sets is unknown",
                    file.display()
                ))
            }
        };
        if let Some(key) = names_a_program(&text, keys) {
            return Some(format!(
                "{} sets {key}, which makes the package manager run or load a program",
                file.display()
            ));
        }
    }
    None
}

/// The config files a package manager reads in `dir`: in it and in each directory above it, and in
/// the user's home; each with the settings that matter in it.
fn config_files(dir: &Path, home: Option<&str>) -> Vec<(PathBuf, &'static [&'static str])> {
    let home = home.map(Path::new);
    let mut files = Vec::new();
    let mut add = |d: &Path| {
        let npmrc = if Some(d) == home {
            HOME_NPMRC_KEYS
        } else {
            NPMRC_KEYS
        };
        files.push((d.join(".npmrc"), npmrc));
        files.push((d.join(".yarnrc.yml"), YARNRC_KEYS));
        files.push((d.join(".yarnrc"), YARNRC_KEYS));
        files.push((d.join("bunfig.toml"), BUNFIG_KEYS));
    };
    for d in dir.ancestors() {
        add(d);
    }
    if let Some(h) = home {
        if !dir.starts_with(h) {
            add(h);
        }
        files.push((h.join(".config/npm/npmrc"), HOME_NPMRC_KEYS));
    }
    files
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
        let key = line[..at]
            .trim()
            .trim_matches(['"', '\''])
            .to_ascii_lowercase()
            .replace('_', "-");
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
