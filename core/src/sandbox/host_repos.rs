//! The host's git repositories wherever they are under the roots, found by the supervisor when a write
//! reaches one, not by a scan at the start (a root can hold a monorepo's worth of nested repositories,
//! vendored checkouts, `node_modules` with `.git` directories).
//!
//! Why: the host's git obeys what is in a repository's git directory (hooks, config, `commondir`,
//! `info/`, `config.worktree`, a worktree's `gitdir`), and it recurses on its own into nested
//! repositories a gitlink in the index names (`git status` runs `git status` in each). The start-up
//! scan protects the roots' own repositories and the submodules `.gitmodules` names; this module covers
//! the rest by one rule: a git directory born before the run is the host's, and so is its metadata.
//! A repository the run makes (`git init`, a clone) is born after: the run's, writable as before,
//! except inside one of the host's work trees, where the host's git would enter it.
//!
//! "Born": the inode's birth time (`statx` `STATX_BTIME`), which nothing can set, so a renamed or moved
//! git directory keeps its age. A file system that does not report it (NFS, some FUSE) makes every git
//! directory the host's: fail closed (a run's own `git init` there cannot write its config). A `.git`
//! directory an earlier run of this host made (its `mkdir` let through, noted here, and born after
//! that) stays the runs': `git init demo`, then `git -C demo remote add ...` in the next command.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use super::policy::RunStart;

/// The entries of a git directory the host's git obeys (as `policy::PROTECTED_GIT_ENTRIES`).
const METADATA: [&str; 5] = super::policy::PROTECTED_GIT_ENTRIES;

/// `.git` directories this host's runs made, with when each `mkdir` was let through (newest last).
static MADE_BY_RUNS: std::sync::Mutex<std::collections::VecDeque<(PathBuf, RunStart)>> =
    std::sync::Mutex::new(std::collections::VecDeque::new());
/// Enough for every repository an agent session makes; the oldest are forgotten first.
const MADE_BY_RUNS_KEPT: usize = 4096;

/// Note that a run's `mkdir` of the `.git` at `path` (in the caller's view) was let through.
pub fn note_made(path: &Path) {
    let mut made = MADE_BY_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    if made.len() >= MADE_BY_RUNS_KEPT {
        made.pop_front();
    }
    made.push_back((path.to_path_buf(), RunStart::now()));
}

/// Whether the entry at `path` (caller's view; `seen` reaches it) is the host's: born before the
/// run and not a `.git` an earlier run made (noted at that path, and born no earlier than the note).
pub fn hosts(path: &Path, start: RunStart, seen: &impl Fn(&Path) -> PathBuf) -> bool {
    match birth(&seen(path)) {
        Birth::Missing => false,
        Birth::Unknown => true,
        Birth::At(born) => {
            born < (start.sec, start.nsec)
                && !MADE_BY_RUNS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .any(|(p, noted)| p == path && born >= (noted.sec, noted.nsec))
        }
    }
}

/// What a write must not do to the host's repositories, if `path` (in the caller's view; `seen` turns
/// such a path into one the supervisor can look at) breaks it: the rule's words for the report.
/// `op` is the supervisor's operation name; `makes_git` says the call makes an entry named `.git`.
pub fn refusal(
    op: &str,
    path: &Path,
    makes_git: bool,
    start: RunStart,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    for git_dir in git_dirs_whose_metadata(path, &seen) {
        if hosts(&git_dir, start, &seen) {
            return Some(format!(
                "git metadata of the host's repository {} (hooks, config, info, commondir, worktrees)",
                git_dir.display()
            ));
        }
    }
    if path.file_name() == Some(OsStr::new(".git"))
        && matches!(op, "remove" | "rename")
        && hosts(path, start, &seen)
    {
        return Some(format!(
            "the .git entry of the host's repository {} stays where it is",
            path.display()
        ));
    }
    // A host work tree moved or removed whole: a directory of the run's could take its place (its
    // `.git` then the run's), and the host's git there would obey it.
    if matches!(op, "remove" | "rename") && hosts(&path.join(".git"), start, &seen) {
        return Some(format!(
            "the host's work tree {} stays where it is",
            path.display()
        ));
    }
    if makes_git {
        if let Some(work_tree) = host_work_tree_around(path, start, &seen) {
            return Some(format!(
                "a repository inside the host's work tree {}: the host's git would enter it and run its configuration",
                work_tree.display()
            ));
        }
    }
    None
}

/// The git directories whose metadata `path` is (or is inside): the one named `.git` (see
/// `metadata_of`), and any directory that is a git directory by its content (a bare repository, the
/// target of a `gitdir:` file: `HEAD` and `objects` in it) followed by a metadata name.
fn git_dirs_whose_metadata(path: &Path, seen: &impl Fn(&Path) -> PathBuf) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = metadata_of(path).into_iter().collect();
    let parts: Vec<Component> = path.components().collect();
    for k in 1..parts.len() {
        let name = parts[k].as_os_str();
        let is_metadata = METADATA.iter().any(|m| name == OsStr::new(m))
            || (name == "worktrees"
                && parts.get(k + 2).is_some_and(|e| {
                    super::policy::PROTECTED_WORKTREE_ENTRIES
                        .iter()
                        .any(|w| e.as_os_str() == OsStr::new(w))
                }));
        if !is_metadata {
            continue;
        }
        let dir: PathBuf = parts[..k].iter().collect();
        if dir.file_name() != Some(OsStr::new(".git")) && is_git_dir(&seen(&dir)) {
            out.push(dir);
        }
    }
    out
}

/// Whether `dir` holds a repository's own files (`HEAD` and `objects`), whatever its name.
fn is_git_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join("HEAD")).is_ok_and(|m| !m.is_dir())
        && std::fs::symlink_metadata(dir.join("objects")).is_ok_and(|m| m.is_dir())
}

/// Whether `dir` (caller's view) is a git directory of the host's by its content (`HEAD` and
/// `objects`: a bare repository, the target of a `gitdir:` file), born before the run.
pub fn is_hosts_git_dir(dir: &Path, start: RunStart, seen: impl Fn(&Path) -> PathBuf) -> bool {
    is_git_dir(&seen(dir)) && hosts(dir, start, &seen)
}

/// The entries that make a directory a git directory to git (with `refs`), and to this module's
/// look at content (`is_git_dir`).
const CORE: [&str; 3] = ["HEAD", "objects", "refs"];

/// `path` (caller's view) is a host git directory's `HEAD`, `objects` or `refs`, which a removal or
/// a rename would take away: the directory would then no longer be a repository by its content,
/// its hooks and config writable, and put back with them planted (git never moves these away).
pub fn core_taken_away(
    path: &Path,
    start: RunStart,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?;
    (CORE.contains(&name) && is_hosts_git_dir(dir, start, &seen)).then(|| {
        format!(
            "{name} of the host's git directory {} stays where it is",
            dir.display()
        )
    })
}

/// A file named `HEAD` made inside a host work tree, outside every git directory: with `objects`
/// and `refs` beside it, git takes its directory for a (bare) repository and obeys its `config`
/// when run there, as it would a `.git` of the run's. A git directory's own `HEAD` (under a `.git`,
/// or in a git directory of the host's by content) stays writable (`git checkout`).
pub fn head_outside_git_dirs(
    path: &Path,
    start: RunStart,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    if path.file_name() != Some(OsStr::new("HEAD"))
        || path.components().any(|c| c.as_os_str() == ".git")
    {
        return None;
    }
    let dir = path.parent()?;
    if is_hosts_git_dir(dir, start, &seen) {
        return None;
    }
    let work_tree = host_work_tree_around(path, start, &seen)?;
    Some(format!(
        "a HEAD file inside the host's work tree {}: a directory with HEAD, objects and refs is a repository to git, whose config the host's git would obey",
        work_tree.display()
    ))
}

/// A directory moved (renamed) from outside one of the host's work trees into it, if `to` is in
/// one and `from` is not: it may hold a repository of the run's making (made where that was
/// allowed), which a gitlink in the host's index would make the host's git enter.
pub fn moved_in(
    from: &Path,
    to: &Path,
    start: RunStart,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    if !std::fs::symlink_metadata(seen(from)).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let work_tree = host_work_tree_around(to, start, &seen)?;
    (!from.starts_with(&work_tree)).then(|| {
        format!(
            "a directory moved into the host's work tree {} from outside it (it may hold a repository the host's git would enter)",
            work_tree.display()
        )
    })
}

/// The git directory whose metadata `path` is (or is inside), if it is: `<...>/.git` followed by
/// one of [`METADATA`], by `worktrees/<name>/` and one of its entries, or by `modules/...` (a
/// submodule's git directory, at any depth) and one of [`METADATA`].
fn metadata_of(path: &Path) -> Option<PathBuf> {
    let parts: Vec<Component> = path.components().collect();
    let at = parts.iter().position(|c| c.as_os_str() == ".git")?;
    let git_dir: PathBuf = parts[..=at].iter().collect();
    let rest: Vec<&OsStr> = parts[at + 1..].iter().map(|c| c.as_os_str()).collect();
    let is = |c: &OsStr, names: &[&str]| names.iter().any(|n| c == OsStr::new(n));
    let metadata = match rest.first() {
        None => false,
        Some(first) if is(first, &METADATA) => true,
        Some(first) if *first == "worktrees" => rest
            .get(2)
            .is_some_and(|e| is(e, &super::policy::PROTECTED_WORKTREE_ENTRIES)),
        // A submodule's name may have slashes: any metadata name below `modules` counts (a
        // submodule named `config` is taken for metadata too: fail closed).
        Some(first) if *first == "modules" => rest[1..].iter().any(|c| is(c, &METADATA)),
        Some(_) => false,
    };
    metadata.then_some(git_dir)
}

/// When the entry at `seen` was born, if the file system says.
enum Birth {
    Missing,
    Unknown,
    At((i64, i64)),
}

fn birth(seen: &Path) -> Birth {
    let Ok(c) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(seen.as_os_str()))
    else {
        return Birth::Unknown;
    };
    // SAFETY: statx writes one struct statx; all-zero is a valid value of it.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a struct statx alive for the call. (The system call, not
    // glibc's wrapper: the prebuilt addon runs on glibc 2.17, which has none.)
    let rc = unsafe {
        libc::syscall(
            libc::SYS_statx,
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_BTIME,
            &mut stx as *mut libc::statx,
        )
    };
    if rc != 0 {
        return match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR) => Birth::Missing,
            _ => Birth::Unknown,
        };
    }
    if stx.stx_mask & libc::STATX_BTIME == 0 {
        return Birth::Unknown;
    }
    Birth::At((stx.stx_btime.tv_sec, i64::from(stx.stx_btime.tv_nsec)))
}

/// The nearest directory above `path` whose `.git` is the host's, up to `/`: inside the roots a
/// gitlink in the host's index could name a repository made there, and below a host work tree
/// (whose `.git` may lie above the roots: a package of a monorepo) the host's git run in that
/// directory would find the run's repository first.
fn host_work_tree_around(
    path: &Path,
    start: RunStart,
    seen: &impl Fn(&Path) -> PathBuf,
) -> Option<PathBuf> {
    let mut dir = path.parent()?;
    loop {
        if hosts(&dir.join(".git"), start, seen) {
            return Some(dir.to_path_buf());
        }
        dir = dir.parent()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_told_by_name_at_any_depth() {
        let yes = [
            "/r/.git/config",
            "/r/.git/hooks",
            "/r/.git/hooks/post-checkout",
            "/r/.git/info/attributes",
            "/r/.git/commondir",
            "/r/.git/config.worktree",
            "/r/vendor/lib/.git/hooks/pre-commit",
            "/r/.git/worktrees/wt/gitdir",
            "/r/.git/worktrees/wt/commondir",
            "/r/.git/modules/a/b/config",
            "/r/.git/modules/sm/hooks/x",
        ];
        for p in yes {
            assert!(metadata_of(Path::new(p)).is_some(), "{p}");
        }
        assert_eq!(
            metadata_of(Path::new("/r/vendor/lib/.git/hooks/x")),
            Some(PathBuf::from("/r/vendor/lib/.git"))
        );
        let no = [
            "/r/.git",
            "/r/.git/index",
            "/r/.git/objects/ab/cdef",
            "/r/.git/refs/heads/main",
            "/r/.git/HEAD",
            "/r/.git/worktrees/wt/index",
            "/r/.git/modules/sm/objects/x",
            "/r/src/config",
            "/r/hooks/x",
        ];
        for p in no {
            assert!(metadata_of(Path::new(p)).is_none(), "{p}");
        }
    }

    #[test]
    fn a_git_dir_born_before_the_run_is_the_hosts_and_one_born_after_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let host = root.join("vendor/lib/.git");
        std::fs::create_dir_all(host.join("hooks")).unwrap();
        // A tick of the coarse clock passes between the host's repository and the run's start.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let start = RunStart::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let own = root.join("mine/.git");
        std::fs::create_dir_all(own.join("hooks")).unwrap();
        let same = |p: &Path| p.to_path_buf();
        let refused = |op: &str, p: &Path, makes_git: bool| refusal(op, p, makes_git, start, same);
        assert!(
            hosts(&host, start, &same),
            "the host's git dir was not seen as the host's"
        );
        assert!(refused("write", &host.join("hooks/post-checkout"), false).is_some());
        assert!(refused("write", &host.join("config"), false).is_some());
        assert!(refused("write", &host.join("index"), false).is_none());
        assert!(refused("rename", &host, false).is_some());
        assert!(refused("remove", &host, false).is_some());
        // The run's own repository is its own.
        assert!(refused("write", &own.join("hooks/post-checkout"), false).is_none());
        assert!(refused("write", &own.join("config"), false).is_none());
        assert!(refused("remove", &own, false).is_none());
        // A repository made inside the host's work tree, at any depth; not outside one.
        let inner = root.join("vendor/lib/src/evil/.git");
        std::fs::create_dir_all(inner.parent().unwrap()).unwrap();
        let why = refused("mkdir", &inner, true).expect("a repository inside the host's");
        assert!(
            why.contains(&root.join("vendor/lib").display().to_string()),
            "{why}"
        );
        assert!(refused("mkdir", &root.join("fresh/.git"), true).is_none());
        // The host's work tree itself, moved or removed whole (then replaced by one of the run's).
        assert!(refused("rename", &root.join("vendor/lib"), false).is_some());
        assert!(refused("remove", &root.join("vendor/lib"), false).is_some());
        assert!(refused("rename", &root.join("mine"), false).is_none());
        // What is missing is nobody's.
        assert!(!hosts(&root.join("nothing/.git"), start, &same));
    }

    #[test]
    fn a_repository_an_earlier_run_made_stays_the_runs() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let same = |p: &Path| p.to_path_buf();
        // Run one: its mkdir of demo/.git is let through (noted), then made; another .git appears
        // in the meantime without a note (the host's).
        let demo = root.join("demo/.git");
        note_made(&demo);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::create_dir_all(demo.join("hooks")).unwrap();
        std::fs::create_dir_all(root.join("other/.git/hooks")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        // Run two starts later.
        let start = RunStart::now();
        assert!(
            !hosts(&demo, start, &same),
            "run one's repository became the host's"
        );
        assert!(refusal("write", &demo.join("config"), false, start, same).is_none());
        assert!(hosts(&root.join("other/.git"), start, &same));
        // A note does not adopt what was born before it (a host repository moved to a noted path).
        let old = root.join("old/.git");
        std::fs::create_dir_all(&old).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        note_made(&old);
        let start = RunStart::now();
        assert!(hosts(&old, start, &same));
    }

    #[test]
    fn git_dirs_are_known_by_content_and_work_trees_above_the_roots_count() {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        // A bare repository and a `gitdir:` target, named otherwise than .git; a monorepo whose
        // .git lies above the package the run works in.
        for git_dir in ["remote.git", ".repos/lib"] {
            std::fs::create_dir_all(top.join(git_dir).join("objects")).unwrap();
            std::fs::create_dir_all(top.join(git_dir).join("hooks")).unwrap();
            std::fs::write(top.join(git_dir).join("HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        std::fs::create_dir_all(top.join(".git")).unwrap();
        std::fs::create_dir_all(top.join("packages/foo")).unwrap();
        std::fs::create_dir_all(top.join("outside/x")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let start = RunStart::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::create_dir_all(top.join("packages/foo/src/config")).unwrap();
        let same = |p: &Path| p.to_path_buf();
        let refused = |op: &str, p: &Path, makes_git: bool| refusal(op, p, makes_git, start, same);
        assert!(refused("write", &top.join("remote.git/hooks/pre-receive"), false).is_some());
        assert!(refused("write", &top.join(".repos/lib/config"), false).is_some());
        assert!(refused("write", &top.join("remote.git/refs/heads/x"), false).is_none());
        // A directory named like metadata that is not in a git directory is anyone's.
        assert!(refused(
            "write",
            &top.join("packages/foo/src/config/app.json"),
            false
        )
        .is_none());
        // The package's own repository would be the one the host's git finds there first.
        let why =
            refused("mkdir", &top.join("packages/foo/.git"), true).expect("inside a monorepo");
        assert!(why.contains(&top.display().to_string()), "{why}");
        // A directory moved into the host's work tree from outside it; not one moved within it.
        std::fs::create_dir_all(top.join("packages/bar")).unwrap();
        let other = tempfile::tempdir().unwrap();
        let outside = std::fs::canonicalize(other.path()).unwrap();
        assert!(moved_in(&outside, &top.join("packages/moved"), start, same).is_some());
        assert!(moved_in(
            &top.join("packages/bar"),
            &top.join("packages/baz"),
            start,
            same
        )
        .is_none());
        // A file is no repository.
        std::fs::write(outside.join("f"), "x").unwrap();
        assert!(moved_in(&outside.join("f"), &top.join("f"), start, same).is_none());
    }
}
