//! Whether git, run in a directory, would run a command because of its configuration: a
//! repository's `core.fsmonitor` runs on `git status`, `diff.external` on `git diff`, `core.pager`
//! and `pager.*` in a terminal, `!` aliases, filter drivers, hooks. A cloned repository is the
//! attacker's, so a git command there is only known exactly when no configuration it reads can
//! start a program.
//!
//! Read here: the repository's `config` (and `config.worktree`, and the common dir's for linked
//! worktrees), the global (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) and system
//! (`/etc/gitconfig`) files, and every file they include (`include.path`, `includeIf.*.path`,
//! whatever the condition). Repository files are also scanned as plain text for the words of
//! those settings, so a spelling the parser misreads still counts. A file that exists but cannot
//! be read fails closed. Results are cached per directory and reused while every file read keeps
//! its modification time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Settings (section, or section.key; lowercased, subsection removed) that make git run a program.
const RUNS_PROGRAM: &[&str] = &[
    "core.fsmonitor",
    "core.pager",
    "core.sshcommand",
    "core.hookspath",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "diff.external",
    "diff.textconv",
    "diff.command",
    "pager",
    "filter",
    "merge.driver",
    "sequence.editor",
    "gpg.program",
    "uploadpack.packobjectshook",
    "remote.uploadpack",
    "remote.receivepack",
    "difftool.cmd",
    "mergetool.cmd",
    "man.cmd",
    "browser.cmd",
    "web.browser",
    "interactive.difffilter",
    "ssh.variant",
];

/// Words whose presence anywhere in a repository's own config file is enough to distrust it.
const SUSPECT_WORDS: &[&str] = &[
    "fsmonitor",
    "pager",
    "sshcommand",
    "hookspath",
    "external",
    "textconv",
    "command",
    "editor",
    "askpass",
    "gitproxy",
    "filter",
    "driver",
    "program",
    "packobjectshook",
    "uploadpack",
    "receivepack",
    "cmd",
    "browser",
    "variant",
];

/// One `section[.subsection].key = value` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    section: String,
    subsection: Option<String>,
    key: String,
    value: Option<String>,
}

/// A forgiving parser of git's config syntax: section headers (also followed by an entry on the
/// same line), `key = value` with quotes, escapes and continuation lines, comments.
fn parse(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut subsection = None;
    let mut lines = text.trim_start_matches('\u{feff}').lines();
    while let Some(line) = lines.next() {
        let mut rest = line.trim_start();
        if let Some(header) = rest.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                continue;
            };
            let inside = &header[..end];
            rest = header[end + 1..].trim_start();
            match inside.split_once(|c: char| c.is_whitespace()) {
                Some((s, sub)) => {
                    section = s.to_lowercase();
                    subsection = Some(sub.trim().trim_matches('"').to_string());
                }
                None => match inside.split_once('.') {
                    Some((s, sub)) => {
                        section = s.to_lowercase();
                        subsection = Some(sub.to_lowercase());
                    }
                    None => {
                        section = inside.to_lowercase();
                        subsection = None;
                    }
                },
            }
        }
        if rest.is_empty() || rest.starts_with(['#', ';']) {
            continue;
        }
        let (key, raw) = match rest.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.to_string())),
            None => (rest.trim(), None),
        };
        let value = raw.map(|mut v| {
            // Continuation: a value line ending in an unescaped backslash goes on.
            while v.trim_end().ends_with('\\') && !v.trim_end().ends_with("\\\\") {
                let t = v.trim_end();
                v = t[..t.len() - 1].to_string();
                match lines.next() {
                    Some(next) => v.push_str(next),
                    None => break,
                }
            }
            unquote(&v)
        });
        out.push(Entry {
            section: section.clone(),
            subsection: subsection.clone(),
            key: key.to_lowercase(),
            value,
        });
    }
    out
}

/// A value without comments, quotes and escapes, trimmed as git trims it.
fn unquote(v: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = v.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// Why `entry` makes git run a program, if it does.
fn runs_program(e: &Entry, trusted: bool) -> Option<String> {
    let name = match &e.subsection {
        Some(sub) => format!("{}.{sub}.{}", e.section, e.key),
        None => format!("{}.{}", e.section, e.key),
    };
    let value = e.value.as_deref().unwrap_or("true");
    if e.section == "alias" {
        return value
            .starts_with('!')
            .then(|| format!("{name} is a shell alias"));
    }
    let generic = format!("{}.{}", e.section, e.key);
    let hit = RUNS_PROGRAM
        .iter()
        .any(|k| *k == generic || *k == e.section);
    if !hit
        || matches!(
            value.to_lowercase().as_str(),
            "false" | "no" | "off" | "0" | ""
        )
    {
        return None;
    }
    // git-lfs installs its filter in the user's own global config.
    if trusted && e.section == "filter" && e.subsection.as_deref() == Some("lfs") {
        return None;
    }
    Some(format!("{name} makes git run a program"))
}

/// The git directory for `dir`: `.git` (a directory, or a file naming one) in `dir` or a parent.
fn find_git_dir(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        let dot = d.join(".git");
        if dot.is_dir() {
            return Some(dot);
        }
        if dot.is_file() {
            let text = std::fs::read_to_string(&dot).ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            return Some(d.join(target));
        }
        // A bare repository.
        if d.join("HEAD").is_file() && d.join("objects").is_dir() && d.join("config").is_file() {
            return Some(d.to_path_buf());
        }
    }
    None
}

/// The config files git reads in `dir`, each with whether it is the user's own (trusted).
fn config_files(dir: &Path, home: Option<&str>) -> Vec<(PathBuf, bool)> {
    let mut files = Vec::new();
    let system = std::env::var_os("GIT_CONFIG_SYSTEM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/etc/gitconfig"));
    files.push((system, true));
    if let Some(global) = std::env::var_os("GIT_CONFIG_GLOBAL") {
        files.push((PathBuf::from(global), true));
    } else {
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.map(|h| Path::new(h).join(".config")));
        if let Some(x) = xdg {
            files.push((x.join("git/config"), true));
        }
        if let Some(h) = home {
            files.push((Path::new(h).join(".gitconfig"), true));
        }
    }
    if let Some(git_dir) = find_git_dir(dir) {
        let common = std::fs::read_to_string(git_dir.join("commondir"))
            .map(|c| git_dir.join(c.trim()))
            .unwrap_or_else(|_| git_dir.clone());
        files.push((common.join("config"), false));
        files.push((git_dir.join("config.worktree"), false));
    }
    files
}

/// Check one file and what it includes; every file looked at is added to `seen` with its mtime.
fn check_file(
    path: &Path,
    trusted: bool,
    home: Option<&str>,
    seen: &mut Vec<(PathBuf, Option<SystemTime>)>,
    depth: usize,
) -> Option<String> {
    if depth > 10 {
        return Some(format!("{} includes too deeply", path.display()));
    }
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    seen.push((path.to_path_buf(), mtime));
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            return Some(format!(
                "git config {} cannot be read ({e})",
                path.display()
            ))
        }
    };
    if !trusted {
        let lower = text.to_lowercase();
        if let Some(w) = SUSPECT_WORDS.iter().find(|w| lower.contains(*w)) {
            return Some(format!(
                "the repository's git config {} mentions {w}, a setting that can run a program",
                path.display()
            ));
        }
    }
    for e in parse(&text) {
        if let Some(why) = runs_program(&e, trusted) {
            return Some(format!("{why} ({})", path.display()));
        }
        let include = (e.section == "include" || e.section == "includeif") && e.key == "path";
        if let (true, Some(p)) = (include, e.value.as_deref()) {
            let target = match (p.strip_prefix("~/"), home) {
                (Some(rest), Some(h)) => Path::new(h).join(rest),
                _ => path.parent().unwrap_or(Path::new("/")).join(p),
            };
            if let Some(why) = check_file(&target, trusted, home, seen, depth + 1) {
                return Some(why);
            }
        }
    }
    None
}

type Cached = (Vec<(PathBuf, Option<SystemTime>)>, Option<String>);

fn cache() -> &'static Mutex<HashMap<PathBuf, Cached>> {
    static CACHE: std::sync::OnceLock<Mutex<HashMap<PathBuf, Cached>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Why git run in `dir` could run a program its configuration names, or `None` when no config
/// file it reads can.
pub fn runs_commands(dir: &Path, home: Option<&str>) -> Option<String> {
    let key = dir.to_path_buf();
    let files = config_files(dir, home);
    if let Ok(map) = cache().lock() {
        if let Some((seen, verdict)) = map.get(&key) {
            let fresh = seen
                .iter()
                .all(|(p, t)| std::fs::metadata(p).and_then(|m| m.modified()).ok() == *t)
                && files.iter().all(|(f, _)| seen.iter().any(|(p, _)| p == f));
            if fresh {
                return verdict.clone();
            }
        }
    }
    let mut seen = Vec::new();
    let verdict = files
        .iter()
        .find_map(|(f, trusted)| check_file(f, *trusted, home, &mut seen, 0));
    if let Ok(mut map) = cache().lock() {
        if map.len() > 1024 {
            map.clear();
        }
        map.insert(key, (seen, verdict.clone()));
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), config).unwrap();
        std::fs::create_dir_all(dir.path().join("sub/deeper")).unwrap();
        dir
    }

    #[test]
    fn settings_that_run_programs_are_found() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().to_str();
        let plain = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/x.git\n[alias]\n\tst = status\n";
        assert_eq!(runs_commands(repo(plain).path(), h), None);
        for config in [
            "[core]\n\tfsmonitor = ./x\n",
            "[core] fsmonitor = ./x\n",
            "[CORE]\n\tFsMonitor = \"./x\"\n",
            "[core]\n\tpager = ./x\n",
            "[diff]\n\texternal = ./x\n",
            "[diff \"x\"]\n\ttextconv = ./x\n",
            "[pager]\n\tlog = ./x\n",
            "[alias]\n\tx = !./x\n",
            "[alias]\n\tx = \"!./x\"\n",
            "[filter \"x\"]\n\tclean = ./x\n",
            "[core]\n\thooksPath = .hooks\n",
            "[core]\n\tsshCommand = ./x\n",
        ] {
            let r = repo(config);
            assert!(runs_commands(r.path(), h).is_some(), "{config}");
            assert!(
                runs_commands(&r.path().join("sub/deeper"), h).is_some(),
                "{config} from a subdirectory"
            );
        }
        // Includes are followed, whatever their condition.
        let r = repo("[includeIf \"gitdir:/nowhere/\"]\n\tpath = ../evil.cfg\n");
        std::fs::write(r.path().join("evil.cfg"), "[diff]\nexternal = ./x\n").unwrap();
        assert!(runs_commands(r.path(), h).is_some());
        // The user's own global config is read too (git-lfs's filter excepted).
        std::fs::write(
            home.path().join(".gitconfig"),
            "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n",
        )
        .unwrap();
        assert_eq!(runs_commands(repo(plain).path(), h), None);
        std::fs::write(home.path().join(".gitconfig"), "[core]\n\tpager = less\n").unwrap();
        assert!(runs_commands(repo(plain).path(), h).is_some());
    }

    #[test]
    fn the_cache_follows_modification_times() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().to_str();
        let r = repo("[core]\n\tbare = false\n");
        assert_eq!(runs_commands(r.path(), h), None);
        std::fs::write(
            r.path().join(".git/config"),
            "[core]\n\tfsmonitor = ./payload-longer\n",
        )
        .unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(r.path().join(".git/config"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(runs_commands(r.path(), h).is_some());
    }

    #[test]
    fn parser_reads_headers_quotes_and_continuations() {
        let e = parse("[a \"Sub\"] k = \"v ; x\" ; c\n[b.c]\nK2 = one\\\n two\nflag\n");
        assert_eq!(e[0].subsection.as_deref(), Some("Sub"));
        assert_eq!(e[0].value.as_deref(), Some("v ; x"));
        assert_eq!(e[1].section, "b");
        assert_eq!(e[1].key, "k2");
        assert_eq!(e[1].value.as_deref(), Some("one two"));
        assert_eq!(e[2].value, None);
    }
}
