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
//! be read fails closed. The hooks directory git would use (the common dir's `hooks`, and each
//! submodule's) counts too: any executable file there other than git's `*.sample` files is a hook
//! git may run. Results are cached per directory and reused while every file and directory looked
//! at keeps its modification time, inode, mode and change time.

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
    // A man viewer's program (`git help`, `git status --help`), help's and instaweb's browser and
    // server, send-email's commands, a merge or diff tool's path, trailer commands, an archive
    // format's filter (`tar.tgz.command`, which `git archive` and `upload-archive` run).
    "man.path",
    "help.browser",
    "instaweb.httpd",
    "instaweb.browser",
    "sendemail.sendmailcmd",
    "sendemail.smtpserver",
    "sendemail.tocmd",
    "sendemail.cccmd",
    "sendemail.headercmd",
    "mergetool.path",
    "difftool.path",
    "trailer.command",
    "trailer.cmd",
    "tar.command",
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
    // Settings that make read-only commands fetch or pick a transport (see `fetches_or_connects`).
    "partialclone",
    "promisor",
    "insteadof",
    "helper",
    "protocol",
    "vcs",
    "::",
];

/// One `section[.subsection].key = value` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub section: String,
    pub subsection: Option<String>,
    pub key: String,
    pub value: Option<String>,
}

/// A forgiving parser of git's config syntax: section headers (also followed by an entry on the
/// same line), `key = value` with quotes, escapes and continuation lines, comments.
pub(crate) fn parse(text: &str) -> Vec<Entry> {
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
        if value.trim_start().starts_with('!') {
            return Some(format!("{name} is a shell alias"));
        }
        // An alias of git's own words: its options are the command line's (`ls-remote
        // --upload-pack=...`, `log --output=...`, `-c core.pager=...`), judged as typed ones are.
        // The words are split on blanks with quotes taken out (fail closed: a quoted blank only
        // makes more words).
        let words: Vec<String> = value
            .split_whitespace()
            .map(|w| w.replace(['\'', '"'], ""))
            .collect();
        let mut argv = vec!["git".to_string()];
        argv.extend(words.iter().cloned());
        let own_options = words.iter().any(|w| {
            w == "-c"
                || w == "-C"
                || [
                    "--config-env",
                    "--exec-path",
                    "--git-dir",
                    "--work-tree",
                    "-c",
                ]
                .iter()
                .any(|o| w.starts_with(o))
        });
        let runs = super::command_options::runs(&["git".to_string()], &argv);
        return (own_options || runs.is_some()).then(|| {
            format!(
                "{name} = {value}: {}",
                runs.unwrap_or_else(|| {
                    "git options that change the repository or the configuration".into()
                })
            )
        });
    }
    let generic = format!("{}.{}", e.section, e.key);
    // `submodule.<name>.update = !command` runs it on `git submodule update`.
    if generic == "submodule.update" && value.trim_start().starts_with('!') {
        return Some(format!("{name} runs a command on git submodule update"));
    }
    if !trusted {
        if let Some(why) = fetches_or_connects(&generic, value) {
            return Some(format!("{name} {why}"));
        }
    }
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

/// Why a repository's setting `generic` (section.key, subsection removed) set to `value` makes git
/// fetch or connect with a program, if it does: a partial clone (`extensions.partialClone`,
/// `remote.*.promisor`) fetches missing objects lazily on `git log -p`, `show` or `diff`, through
/// whatever the remote's URL names; a `transport::address` URL (`ext::sh -c ...`, `fd::`) or
/// `remote.*.vcs` runs a remote helper; `protocol.allow` / `protocol.*.allow` opens transports
/// such as `ext`; `url.*.insteadOf` rewrites URLs into them; `credential.helper` is a program.
/// Only the repository's own files are judged so: in the user's global config these are the
/// user's own choices (credential helpers and insteadOf rewrites are common there).
fn fetches_or_connects(generic: &str, value: &str) -> Option<&'static str> {
    let off = matches!(value.to_lowercase().as_str(), "false" | "no" | "off" | "0");
    match generic {
        "extensions.partialclone" => Some("makes git fetch missing objects lazily"),
        "remote.promisor" if !off => Some("makes git fetch missing objects lazily"),
        "remote.url" | "remote.pushurl" if value.contains("::") => {
            Some("names a transport helper, which git runs")
        }
        "remote.vcs" => Some("names a remote helper, which git runs"),
        "protocol.allow" => Some("allows transports (ext:: runs a command)"),
        "url.insteadof" | "url.pushinsteadof" => {
            Some("rewrites URLs, possibly into a transport that runs a command")
        }
        "credential.helper" if !value.is_empty() => Some("makes git run a credential helper"),
        _ => None,
    }
}

/// Is `dir` a git directory as git's own discovery checks one (`is_git_directory` in git's
/// `setup.c`): a `HEAD` that is a symbolic ref or an object name, an `objects` directory and a `refs`
/// directory (in `commondir` for a worktree's). An empty `.git`, or a directory with only some of
/// these, is not one: git looks further up, and so does the analyzer.
fn is_git_directory(dir: &Path) -> bool {
    let head_ok = std::fs::symlink_metadata(dir.join("HEAD")).is_ok_and(|m| {
        m.file_type().is_symlink()
            || (m.is_file()
                && std::fs::read_to_string(dir.join("HEAD")).is_ok_and(|t| {
                    let t = t.trim();
                    t.starts_with("ref:")
                        || (t.len() >= 40 && t.chars().all(|c| c.is_ascii_hexdigit()))
                }))
    });
    if !head_ok {
        return false;
    }
    let common = std::fs::read_to_string(dir.join("commondir"))
        .map(|c| dir.join(c.trim()))
        .unwrap_or_else(|_| dir.to_path_buf());
    common.join("objects").is_dir() && common.join("refs").is_dir()
}

/// What git's discovery finds for a command in a directory.
enum Discovered {
    /// The repository's git directory.
    GitDir(PathBuf),
    /// No repository: git runs outside one.
    Nothing,
    /// Something git would stop on that the analyzer does not follow (a `.git` file it cannot
    /// read): fail closed.
    Unsure(String),
}

/// The git directory for `dir`, found as git finds it: in `dir` and each parent, a `.git` file
/// (`gitdir: PATH`) or a `.git` directory that is a valid git directory, else the directory itself
/// when it is a bare repository; invalid ones are passed over, as git passes them over.
fn find_git_dir(dir: &Path) -> Discovered {
    for d in dir.ancestors() {
        let dot = d.join(".git");
        match std::fs::metadata(&dot) {
            Ok(m) if m.is_file() => {
                let Ok(text) = std::fs::read_to_string(&dot) else {
                    return Discovered::Unsure(format!("{} cannot be read", dot.display()));
                };
                let Some(target) = text.trim().strip_prefix("gitdir:") else {
                    return Discovered::Unsure(format!("{} is not a gitdir file", dot.display()));
                };
                return Discovered::GitDir(d.join(target.trim()));
            }
            Ok(m) if m.is_dir() && is_git_directory(&dot) => return Discovered::GitDir(dot),
            _ => {}
        }
        if is_git_directory(d) {
            return Discovered::GitDir(d.to_path_buf());
        }
    }
    Discovered::Nothing
}

/// What git reads in `dir` that can make it run a program: the config files, each with whether
/// it is the user's own (trusted), and the hooks directories of the repository and of its
/// submodules.
struct Sources {
    configs: Vec<(PathBuf, bool)>,
    hooks: Vec<PathBuf>,
    /// Why not every source could be found (an index that does not read as one).
    unsure: Option<String>,
}

/// The work tree of `git_dir`: the directory holding it when it is a `.git`, or, for a linked
/// worktree's (`.git/worktrees/<name>`), the directory its `gitdir` file names the `.git` of. None
/// for a bare repository.
fn work_tree_of(git_dir: &Path) -> Option<PathBuf> {
    if git_dir.ends_with(".git") {
        return git_dir.parent().map(Path::to_path_buf);
    }
    let named = std::fs::read_to_string(git_dir.join("gitdir")).ok()?;
    let dot_git = git_dir.join(named.trim());
    dot_git.parent().map(Path::to_path_buf)
}

/// The git directories of the repositories embedded in `work_tree` (whose git directory is
/// `git_dir`): each gitlink of its index with a repository at its path, and theirs in turn, a few
/// levels deep and a few hundred at most (a walk must end whatever the tree holds; past the bound,
/// an error, so the caller fails closed).
fn embedded_repositories(work_tree: &Path, git_dir: &Path) -> Result<Vec<PathBuf>, String> {
    const DEPTH: usize = 6;
    const MOST: usize = 512;
    let mut found: Vec<PathBuf> = Vec::new();
    let mut level = vec![(work_tree.to_path_buf(), git_dir.to_path_buf())];
    for _ in 0..DEPTH {
        let mut next = Vec::new();
        for (tree, dir) in level {
            for link in crate::git_layout::gitlink_paths(&dir)? {
                let dot_git = tree.join(&link).join(".git");
                let sub = if dot_git.is_file() {
                    std::fs::read_to_string(&dot_git).ok().and_then(|t| {
                        let named = t.strip_prefix("gitdir:")?.trim().to_string();
                        Some(dot_git.parent()?.join(named))
                    })
                } else {
                    dot_git.is_dir().then_some(dot_git)
                };
                let Some(sub) = sub else { continue };
                if found.contains(&sub) {
                    continue;
                }
                if found.len() >= MOST {
                    return Err(format!("more than {MOST} embedded repositories"));
                }
                // A git directory with a `commondir` (a worktree's) reads its config and hooks there.
                if let Ok(common) = std::fs::read_to_string(sub.join("commondir")) {
                    let common = sub.join(common.trim());
                    if !found.contains(&common) {
                        found.push(common);
                    }
                }
                found.push(sub.clone());
                next.push((tree.join(&link), sub));
            }
        }
        if next.is_empty() {
            return Ok(found);
        }
        level = next;
    }
    Err(format!("repositories embedded more than {DEPTH} deep"))
}

fn sources(dir: &Path, home: Option<&str>) -> Sources {
    let mut files = Vec::new();
    let mut hooks = Vec::new();
    let mut unsure = None;
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
    if let Discovered::GitDir(git_dir) = find_git_dir(dir) {
        let common = std::fs::read_to_string(git_dir.join("commondir"))
            .map(|c| git_dir.join(c.trim()))
            .unwrap_or_else(|_| git_dir.clone());
        files.push((common.join("config"), false));
        files.push((git_dir.join("config.worktree"), false));
        // Hooks live in the common dir (a linked worktree shares its main repository's); the
        // worktree's own git dir is looked at too, at the cost of one stat.
        hooks.push(common.join("hooks"));
        if git_dir != common {
            hooks.push(git_dir.join("hooks"));
        }
        // `git status` and `git diff` recurse into submodules, which read their own config and
        // run their own hooks.
        for sub in crate::git_layout::submodule_git_dirs(&common) {
            files.push((sub.join("config"), false));
            files.push((sub.join("config.worktree"), false));
            hooks.push(sub.join("hooks"));
        }
        // Every gitlink of the index, `.gitmodules` or not, and theirs in turn: git recurses into
        // an embedded repository too, and reads its config (a `.git` directory in the work tree, or
        // the directory a `.git` file names).
        if let Some(work_tree) = work_tree_of(&git_dir) {
            match embedded_repositories(&work_tree, &git_dir) {
                Ok(subs) => {
                    for sub in subs {
                        files.push((sub.join("config"), false));
                        files.push((sub.join("config.worktree"), false));
                        hooks.push(sub.join("hooks"));
                    }
                }
                Err(why) => unsure = Some(why),
            }
        }
        // Submodules not absorbed into `modules/` keep a `.git` directory in their work tree.
        if let Some(work_tree) = git_dir.parent().filter(|_| git_dir.ends_with(".git")) {
            if let Ok(text) = std::fs::read_to_string(work_tree.join(".gitmodules")) {
                for line in text.lines() {
                    let Some((key, value)) = line.split_once('=') else {
                        continue;
                    };
                    let sub = work_tree.join(value.trim()).join(".git");
                    if key.trim() == "path" && sub.is_dir() {
                        files.push((sub.join("config"), false));
                        hooks.push(sub.join("hooks"));
                    }
                }
            }
        }
    }
    Sources {
        configs: files,
        hooks,
        unsure,
    }
}

/// What a cached verdict assumes of one path (symlinks followed): its modification time, and on
/// Unix its inode, mode and change time too, since `chmod +x` on a hook, or a file renamed over
/// another with the same modification time, leaves the modification time alone. `None` when the
/// path does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64, u32, i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    Some(Stamp {
        modified: m.modified().ok(),
        #[cfg(unix)]
        inode: (m.dev(), m.ino(), m.mode(), m.ctime(), m.ctime_nsec()),
    })
}

/// Whether git may run the file `m` describes as a hook (git checks `access(X_OK)`: any execute
/// bit may do, for root).
fn executable(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        m.is_file() && m.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        m.is_file()
    }
}

/// The first hook git could run from the hooks directory `hooks`: an entry that is, or links to,
/// an executable regular file. git runs hooks on commands that look read-only (`git status`,
/// `git diff` and `git describe --dirty` refresh the index and run `post-index-change`; ref
/// updates run `reference-transaction`), and a repository made by an earlier, sandboxed command
/// holds whatever hooks that command wrote. git's own `*.sample` files match no hook's name and
/// never run. Every path looked at is added to `seen`; one that cannot be read fails closed.
fn hook_in(hooks: &Path, seen: &mut Vec<(PathBuf, Option<Stamp>)>) -> Option<String> {
    seen.push((hooks.to_path_buf(), stamp(hooks)));
    match std::fs::metadata(hooks) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            return Some(format!(
                "the git hooks directory {} cannot be checked ({e})",
                hooks.display()
            ))
        }
    }
    let entries = match std::fs::read_dir(hooks) {
        Ok(entries) => entries,
        Err(e) => {
            return Some(format!(
                "the git hooks directory {} cannot be read ({e})",
                hooks.display()
            ))
        }
    };
    for entry in entries {
        let path = match entry {
            Ok(entry) => entry.path(),
            Err(e) => {
                return Some(format!(
                    "the git hooks directory {} cannot be read ({e})",
                    hooks.display()
                ))
            }
        };
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".sample"))
        {
            continue;
        }
        seen.push((path.clone(), stamp(&path)));
        match std::fs::metadata(&path) {
            Ok(m) if executable(&m) => {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                return Some(format!(
                    "the git hook {name} ({}) is executable, and git runs hooks on commands that look read-only",
                    path.display()
                ));
            }
            Ok(_) => {}
            // A dangling symlink runs nothing (its stamp changes when the target appears).
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Some(format!(
                    "the git hook {} cannot be checked ({e})",
                    path.display()
                ))
            }
        }
    }
    None
}

/// Check one file and what it includes; every file looked at is added to `seen` with its mtime,
/// and every alias it defines to `aliases`.
fn check_file(
    path: &Path,
    trusted: bool,
    home: Option<&str>,
    seen: &mut Vec<(PathBuf, Option<Stamp>)>,
    aliases: &mut Vec<String>,
    depth: usize,
) -> Option<String> {
    if depth > 10 {
        return Some(format!("{} includes too deeply", path.display()));
    }
    seen.push((path.to_path_buf(), stamp(path)));
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
        if e.section == "alias" && !aliases.contains(&e.key) {
            aliases.push(e.key.clone());
        }
        let include = (e.section == "include" || e.section == "includeif") && e.key == "path";
        if let (true, Some(p)) = (include, e.value.as_deref()) {
            let target = match (p.strip_prefix("~/"), home) {
                (Some(rest), Some(h)) => Path::new(h).join(rest),
                _ => path.parent().unwrap_or(Path::new("/")).join(p),
            };
            if let Some(why) = check_file(&target, trusted, home, seen, aliases, depth + 1) {
                return Some(why);
            }
        }
    }
    None
}

type Cached = (Vec<(PathBuf, Option<Stamp>)>, Checked);

/// What git's configuration in a directory was found to hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// Why git could run a program its configuration names, if it could.
    pub runs: Option<String>,
    /// The alias names it defines (lowercase, as git compares them), read up to the first setting
    /// that runs a program. A git command whose subcommand is one runs what the alias says with the
    /// command's own arguments after it (`alias.rx = rebase`, then `git rx -x CMD`), which the
    /// analyzer does not re-read as the aliased command.
    pub aliases: Vec<String>,
}

fn cache() -> &'static Mutex<HashMap<PathBuf, Cached>> {
    static CACHE: std::sync::OnceLock<Mutex<HashMap<PathBuf, Cached>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Why git run in `dir` could run a program its configuration names, or `None` when no config
/// file it reads can.
pub fn runs_commands(dir: &Path, home: Option<&str>) -> Option<String> {
    check(dir, home).runs
}

/// What git run in `dir` reads in its configuration: whether it could run a program (see
/// `runs_commands`), and the aliases it defines.
pub fn check(dir: &Path, home: Option<&str>) -> Checked {
    let unsure = |why: String| Checked {
        runs: Some(why),
        aliases: Vec::new(),
    };
    // Variables that move git's discovery or name programs it runs, in the host's environment (the
    // model's are judged as assignments): what git would then do is not what is checked here.
    for name in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_EXTERNAL_DIFF",
        "GIT_SSH_COMMAND",
    ] {
        if std::env::var_os(name).is_some_and(|v| !v.is_empty()) {
            return unsure(format!(
                "{name} in the environment changes which repository or program git uses"
            ));
        }
    }
    // git enters the directory as the kernel resolves it (`git -C lnk` follows the link), and
    // discovers its repository from the real path upward: so is it read here.
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let dir = real.as_path();
    if let Discovered::Unsure(why) = find_git_dir(dir) {
        return unsure(format!(
            "git's repository discovery stops on something unread: {why}"
        ));
    }
    let key = dir.to_path_buf();

    let sources = sources(dir, home);
    if let Some(why) = &sources.unsure {
        return unsure(format!(
            "git's index could not be read for its submodules: {why}"
        ));
    }
    if let Ok(map) = cache().lock() {
        if let Some((seen, checked)) = map.get(&key) {
            let fresh = seen.iter().all(|(p, t)| stamp(p) == *t)
                && sources
                    .configs
                    .iter()
                    .map(|(f, _)| f)
                    .chain(&sources.hooks)
                    .all(|f| seen.iter().any(|(p, _)| p == f));
            if fresh {
                return checked.clone();
            }
        }
    }
    let mut seen = Vec::new();
    let mut aliases = Vec::new();
    let runs = sources
        .configs
        .iter()
        .find_map(|(f, trusted)| check_file(f, *trusted, home, &mut seen, &mut aliases, 0))
        .or_else(|| sources.hooks.iter().find_map(|h| hook_in(h, &mut seen)));
    let checked = Checked { runs, aliases };
    if let Ok(mut map) = cache().lock() {
        if map.len() > 1024 {
            map.clear();
        }
        map.insert(key, (seen, checked.clone()));
    }
    checked
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use crate::git_layout::git_in;

    /// A minimal valid git directory (HEAD, objects, refs) at `git_dir`.
    fn git_dir_at(git_dir: &Path) {
        std::fs::create_dir_all(git_dir.join("objects")).unwrap();
        std::fs::create_dir_all(git_dir.join("refs/heads")).unwrap();
        std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    }

    /// A repository whose submodule `s` keeps its `.git` directory in its work tree (not absorbed).
    fn repo_with_submodule_in_work_tree() -> tempfile::TempDir {
        let dir = repo("[core]\n\tbare = false\n");
        std::fs::write(
            dir.path().join(".gitmodules"),
            "[submodule \"s\"]\n\tpath = s\n",
        )
        .unwrap();
        git_dir_at(&dir.path().join("s/.git"));
        dir
    }

    fn repo(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git_dir_at(&dir.path().join(".git"));
        std::fs::write(dir.path().join(".git/config"), config).unwrap();
        std::fs::create_dir_all(dir.path().join("sub/deeper")).unwrap();
        dir
    }

    /// What real git finds from `dir` (`git rev-parse --absolute-git-dir`), or `None` outside a
    /// repository.
    fn git_finds(dir: &Path) -> Option<PathBuf> {
        let out = std::process::Command::new("git")
            .args(["rev-parse", "--absolute-git-dir"])
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .env("GIT_CEILING_DIRECTORIES", "/nonexistent-ceiling")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", "/nonexistent")
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    }

    #[test]
    fn discovery_passes_over_what_git_passes_over() {
        let top = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(top.path()).unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&top)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git init");
        // An empty `.git` directory, a directory that looks bare (HEAD, objects, config, no refs),
        // a `.git` with HEAD but no objects: git goes on to the parent, and so must the analyzer.
        /// A subdirectory, the directories and the files made in it.
        type Case<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);
        let cases: [Case; 3] = [
            ("empty", &["empty/.git"], &[]),
            (
                "fakebare",
                &["fakebare/objects"],
                &[
                    ("fakebare/HEAD", "ref: refs/heads/main\n"),
                    ("fakebare/config", "[core]\n"),
                ],
            ),
            (
                "noobjects",
                &["noobjects/.git/refs"],
                &[("noobjects/.git/HEAD", "ref: refs/heads/x\n")],
            ),
        ];
        for (sub, dirs, files) in cases {
            for d in dirs {
                std::fs::create_dir_all(top.join(d)).unwrap();
            }
            for (f, text) in files {
                std::fs::write(top.join(f), text).unwrap();
            }
            let git = git_finds(&top.join(sub)).expect("git finds the parent repository");
            assert_eq!(git, top.join(".git"), "{sub}: git");
            match find_git_dir(&top.join(sub)) {
                Discovered::GitDir(d) => {
                    assert_eq!(std::fs::canonicalize(d).unwrap(), git, "{sub}")
                }
                _ => panic!("{sub}: the analyzer found no repository"),
            }
        }
        // A valid nested repository is found, by both.
        git_dir_at(&top.join("nested/.git"));
        assert_eq!(
            git_finds(&top.join("nested")),
            Some(top.join("nested/.git"))
        );
        assert!(
            matches!(find_git_dir(&top.join("nested")), Discovered::GitDir(d) if d == top.join("nested/.git"))
        );
        // The parent's fsmonitor is seen from the empty `.git`'s directory.
        std::fs::write(
            top.join(".git/config"),
            "[core]\n\tfsmonitor = /tmp/payload\n",
        )
        .unwrap();
        assert!(runs_commands(&top.join("empty"), None).is_some());
        // A `.git` file that is not a gitdir file: git stops there with an error; the analyzer asks.
        std::fs::create_dir_all(top.join("badfile")).unwrap();
        std::fs::write(top.join("badfile/.git"), "nonsense\n").unwrap();
        assert!(runs_commands(&top.join("badfile"), None).is_some());
    }

    /// A repository at `dir` with one commit.
    #[cfg(unix)]
    fn committed(dir: &Path) -> bool {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("f"), "f").unwrap();
        git_in(dir, &["init", "-q"])
            && git_in(dir, &["add", "f"])
            && git_in(dir, &["commit", "-qm", "f"])
    }

    #[test]
    #[cfg(unix)]
    fn repositories_embedded_in_embedded_ones_and_in_linked_worktrees_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("p");
        if std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_err()
        {
            return;
        }
        assert!(committed(&top));
        // Two levels: p/sub is embedded in p, p/sub/subsub in p/sub.
        assert!(committed(&top.join("sub/subsub")));
        assert!(committed(&top.join("sub")));
        assert!(git_in(&top.join("sub"), &["add", "subsub"]));
        assert!(git_in(&top.join("sub"), &["commit", "-qm", "s"]));
        assert!(git_in(&top, &["add", "sub"]));
        assert_eq!(runs_commands(&top, None), None);
        std::fs::write(
            top.join("sub/subsub/.git/config"),
            "[core]\n\tfsmonitor = touch x\n",
        )
        .unwrap();
        let why = runs_commands(&top, None).expect("the nested repository's fsmonitor is seen");
        assert!(why.contains("subsub/.git/config"), "{why}");
        // A linked worktree's own index: a repository embedded there only.
        let main = dir.path().join("w");
        assert!(committed(&main));
        let linked = dir.path().join("lw");
        assert!(git_in(
            &main,
            &["worktree", "add", "-q", linked.to_str().unwrap()]
        ));
        assert!(committed(&linked.join("inner")));
        assert!(git_in(&linked, &["add", "inner"]));
        assert_eq!(runs_commands(&linked, None), None);
        std::fs::write(
            linked.join("inner/.git/config"),
            "[core]\n\tfsmonitor = touch x\n",
        )
        .unwrap();
        let why = runs_commands(&linked, None).expect("the worktree's embedded fsmonitor is seen");
        assert!(why.contains("inner/.git/config"), "{why}");
        // A repository elsewhere with a program in its config, reached two ways.
        let evil = dir.path().join("gB");
        std::fs::create_dir_all(evil.join("sub")).unwrap();
        assert!(git_in(&evil, &["init", "-q"]));
        std::fs::write(evil.join(".git/config"), "[core]\n\tfsmonitor = touch x\n").unwrap();
        // `git -C lnk` follows the link: the repository found from the real path is read.
        let clean = dir.path().join("gA");
        assert!(committed(&clean));
        std::os::unix::fs::symlink(evil.join("sub"), clean.join("lnk")).unwrap();
        let why = runs_commands(&clean.join("lnk"), None);
        assert!(why.is_some_and(|w| w.contains("gB")), "through a link");
        // An embedded repository whose `.git` file names a git directory whose `commondir` is there.
        let outer = dir.path().join("gC");
        assert!(committed(&outer));
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(wt.join("commondir"), evil.join(".git").to_str().unwrap()).unwrap();
        std::fs::create_dir_all(outer.join("emb")).unwrap();
        std::fs::write(
            outer.join("emb/.git"),
            format!("gitdir: {}\n", wt.display()),
        )
        .unwrap();
        let gitlink = format!("160000,{},emb", "1".repeat(40));
        assert!(git_in(
            &outer,
            &["update-index", "--add", "--cacheinfo", &gitlink]
        ));
        let why = runs_commands(&outer, None);
        assert!(why.is_some_and(|w| w.contains("gB")), "through a commondir");
    }

    #[test]
    fn a_submodules_own_config_is_read() {
        let dir = repo("[core]\n\tbare = false\n");
        let module = dir.path().join(".git/modules/libs/a");
        git_dir_at(&module);
        assert_eq!(runs_commands(dir.path(), None), None);
        std::fs::write(module.join("config"), "[core]\n\tfsmonitor = ./x\n").unwrap();
        let why = runs_commands(dir.path(), None).expect("the submodule's fsmonitor is seen");
        assert!(why.contains("modules"), "{why}");
        // An embedded repository: a gitlink the index holds and `.gitmodules` does not name.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(d)
                .output()
                .unwrap()
        };
        git(&["init", "-q"]);
        std::fs::create_dir_all(d.join("sub/.git")).unwrap();
        git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},sub", "1".repeat(40)),
        ]);
        assert_eq!(runs_commands(d, None), None);
        std::fs::write(d.join("sub/.git/config"), "[core]\n\tfsmonitor = touch x\n").unwrap();
        let why = runs_commands(d, None).expect("the embedded repository's fsmonitor is seen");
        assert!(why.contains("sub/.git/config"), "{why}");
        // An index that does not read as one: asked, never taken as "no submodules".
        std::fs::write(d.join(".git/index"), b"DIRC\0\0\0\x09").unwrap();
        assert!(runs_commands(d, None).is_some_and(|w| w.contains("index")));
        // A submodule whose `.git` is still a directory in its work tree.
        let dir = repo_with_submodule_in_work_tree();
        std::fs::write(
            dir.path().join("s/.git/config"),
            "[core]\n\tfsmonitor = ./x\n",
        )
        .unwrap();
        assert!(runs_commands(dir.path(), None).is_some());
    }

    #[test]
    fn settings_that_run_programs_are_found() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().to_str();
        let plain = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/x.git\n[alias]\n\tst = status\n";
        assert_eq!(runs_commands(repo(plain).path(), h), None);
        // A submodule updated by checkout, rebase or merge runs nothing.
        for e in parse("[submodule \"s\"]\n\tupdate = rebase\n") {
            assert_eq!(runs_program(&e, false), None);
        }
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
            // An alias of git's own words with an option that runs a command or writes a file.
            "[alias]\n\tlr = ls-remote --upload-pack='touch c' .\n",
            "[alias]\n\tlo = log --output=c\n",
            "[alias]\n\tst = grep -O'touch c' x\n",
            "[alias]\n\tcp = -c core.pager=./x log\n",
            "[filter \"x\"]\n\tclean = ./x\n",
            "[core]\n\thooksPath = .hooks\n",
            "[core]\n\tsshCommand = ./x\n",
            "[submodule \"s\"]\n\tupdate = !./x\n",
            "[man \"man\"]\n\tpath = ./x\n",
            "[tar \"tgz\"]\n\tcommand = ./x\n",
            "[sendemail]\n\tsendmailCmd = ./x\n",
        ] {
            for e in parse(config) {
                assert!(runs_program(&e, false).is_some(), "{config}: parsed");
            }
            let r = repo(config);
            assert!(runs_commands(r.path(), h).is_some(), "{config}");
            assert!(
                runs_commands(&r.path().join("sub/deeper"), h).is_some(),
                "{config} from a subdirectory"
            );
        }
        // Settings that make read-only commands fetch lazily or connect through a program.
        for config in [
            "[extensions]\n\tpartialClone = origin\n",
            "[remote \"origin\"]\n\turl = /tmp/x\n\tpromisor = true\n",
            "[remote \"origin\"]\n\turl = ext::sh -c ./x\n",
            "[remote \"origin\"]\n\tpushurl = fd::7\n",
            "[remote \"origin\"]\n\tvcs = x\n",
            "[protocol]\n\tallow = always\n",
            "[protocol \"ext\"]\n\tallow = always\n",
            "[url \"ext::sh -c ./x \"]\n\tinsteadOf = https://\n",
            "[url \"ext::sh -c ./x \"]\n\tpushInsteadOf = https://\n",
            "[credential]\n\thelper = !./x\n",
            "[credential \"https://example.com\"]\n\thelper = ./x\n",
        ] {
            assert!(runs_commands(repo(config).path(), h).is_some(), "{config}");
            // Read by the parser too, not only by the text scan.
            for e in parse(config) {
                let generic = format!("{}.{}", e.section, e.key);
                if !matches!(generic.as_str(), "remote.url" | "remote.pushurl")
                    || config.contains("::")
                {
                    assert!(
                        runs_program(&e, false).is_some(),
                        "{config}: {generic} passes the parser"
                    );
                }
            }
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

    /// Real git in `dir`, away from the user's and the system's config.
    #[cfg(unix)]
    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", "/nonexistent")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?} in {}", dir.display());
    }

    /// A repository made by `git init` with a file `f` committed: its hooks directory holds git's
    /// samples.
    #[cfg(unix)]
    fn real_repo(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q"]);
        std::fs::write(dir.join("f"), "x").unwrap();
        git(dir, &["add", "f"]);
        git(dir, &["commit", "-q", "-m", "x"]);
    }

    /// `f` in `dir` with the same content and a later modification time: git's next `status`
    /// refreshes the index, writes it and runs `post-index-change`.
    #[cfg(unix)]
    fn touch_later(f: &Path) {
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(f)
            .unwrap()
            .set_modified(later)
            .unwrap();
    }

    /// An executable hook at `path` that appends its name to `log`. (Hooks run through `sh` and
    /// execute bits: these tests are Unix's.)
    #[cfg(unix)]
    fn plant_hook(path: &Path, log: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(
            path,
            format!("#!/bin/sh\necho \"$0\" >> '{}'\n", log.display()),
        )
        .unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The outside tester's case: a repository an earlier (sandboxed) command made, with a hook
    /// that `git status` runs. git's samples alone are no hook.
    #[test]
    #[cfg(unix)]
    fn an_executable_hook_git_would_run_makes_git_inexact() {
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(top.path()).unwrap();
        let repo = top.join("inner");
        real_repo(&repo);
        assert_eq!(
            runs_commands(&repo, None),
            None,
            "git's samples are not hooks"
        );
        let hook = repo.join(".git/hooks/post-index-change");
        let log = top.join("log");
        plant_hook(&hook, &log);
        // Real git runs it on `git status`: the threat is real.
        touch_later(&repo.join("f"));
        git(&repo, &["status"]);
        assert!(log.exists(), "git status ran no post-index-change hook");
        let why = runs_commands(&repo, None).expect("the hook is seen");
        assert!(why.contains("post-index-change"), "{why}");
        assert!(runs_commands(&repo.join("sub-that-is-not-there"), None).is_some());
        // Through the analyzer: `cd inner; git status` is not exact.
        let ctx = crate::approval::analyze::Context {
            cwd: &top,
            path: Some("/usr/bin:/bin"),
            home: Some(crate::approval::TEST_HOME),
        };
        let a = crate::approval::analyze::analyze("cd inner; git status", &ctx);
        assert!(a.segments().nth(1).unwrap().inexact.is_some());

        // Not executable: git does not run it. Made executable later (the directory's modification
        // time does not change): the cached verdict is not reused.
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(runs_commands(&repo, None), None);
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(runs_commands(&repo, None).is_some(), "chmod +x is seen");
        // A symlink to an executable file is a hook too; a dangling one is not.
        std::fs::remove_file(&hook).unwrap();
        assert_eq!(runs_commands(&repo, None), None);
        let target = top.join("elsewhere.sh");
        std::os::unix::fs::symlink(&target, &hook).unwrap();
        assert_eq!(runs_commands(&repo, None), None);
        plant_hook(&target, &log);
        assert!(
            runs_commands(&repo, None).is_some(),
            "the link's target appeared"
        );
    }

    /// A linked worktree uses its main repository's hooks; `git status` in a superproject runs
    /// its submodules' hooks too (checked with real git).
    #[test]
    #[cfg(unix)]
    fn hooks_of_the_common_dir_and_of_submodules_are_seen() {
        let top = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(top.path()).unwrap();
        let log = top.join("log");
        let main = top.join("main");
        real_repo(&main);
        git(&main, &["worktree", "add", "-q", "../linked"]);
        let linked = top.join("linked");
        assert_eq!(runs_commands(&linked, None), None);
        plant_hook(&main.join(".git/hooks/reference-transaction"), &log);
        let why = runs_commands(&linked, None).expect("the common dir's hook is seen");
        assert!(why.contains("reference-transaction"), "{why}");

        let source = top.join("source");
        real_repo(&source);
        let outer = top.join("outer");
        real_repo(&outer);
        git(
            &outer,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                "../source",
                "libs/sm",
            ],
        );
        git(&outer, &["commit", "-q", "-m", "sm"]);
        assert_eq!(runs_commands(&outer, None), None);
        plant_hook(
            &outer.join(".git/modules/libs/sm/hooks/post-index-change"),
            &log,
        );
        touch_later(&outer.join("libs/sm/f"));
        git(&outer, &["status"]);
        let ran = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            ran.contains("modules/libs/sm/hooks/post-index-change"),
            "git status ran the submodule's hook: {ran:?}"
        );
        let why = runs_commands(&outer, None).expect("the submodule's hook is seen");
        assert!(
            why.contains("modules/libs/sm/hooks/post-index-change"),
            "{why}"
        );
        // A submodule whose `.git` is a directory in its work tree keeps its hooks there.
        let dir = repo_with_submodule_in_work_tree();
        std::fs::create_dir_all(dir.path().join("s/.git/hooks")).unwrap();
        assert_eq!(runs_commands(dir.path(), None), None);
        plant_hook(&dir.path().join("s/.git/hooks/post-checkout"), &log);
        assert!(runs_commands(dir.path(), None).is_some());
    }

    /// A hooks directory git can read but the analyzer cannot: fail closed.
    #[test]
    #[cfg(unix)]
    fn an_unreadable_hooks_directory_fails_closed() {
        use std::os::unix::fs::PermissionsExt;
        if nix::unistd::geteuid().is_root() {
            // Permissions do not bind root.
            return;
        }
        let dir = repo("[core]\n\tbare = false\n");
        let hooks = dir.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o000)).unwrap();
        let why = runs_commands(dir.path(), None);
        std::fs::set_permissions(&hooks, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(why.is_some_and(|w| w.contains("cannot be read")));
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
