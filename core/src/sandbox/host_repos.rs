//! The host's git repositories wherever they are under the roots, found by the supervisor when a write
//! reaches one, not by a scan at the start (a root can hold a monorepo's worth of nested repositories,
//! vendored checkouts, `node_modules` with `.git` directories).
//!
//! Why: the host's git obeys what is in a repository's git directory (hooks, config, `commondir`,
//! `info/`, `config.worktree`, a worktree's `gitdir`), and it recurses on its own into nested
//! repositories a gitlink in the index names (`git status` runs `git status` in each). The start-up
//! scan protects the roots' own repositories and the submodules `.gitmodules` names; this module covers
//! the rest by one rule: a git directory is the host's unless a run of this host made it.
//! A repository the run makes (`git init`, a clone) is the run's, writable as before, except inside
//! one of the host's work trees, where the host's git would enter it.
//!
//! "Made by a run": every `mkdir` a run makes goes through the supervisor, which notes the directory
//! it made by identity (device, inode and birth time, `statx` `STATX_BTIME`, which nothing can set:
//! an inode number freed and reused is born again). A path is not enough: a repository the host
//! makes later where a run once made one, or makes while a run is alive, is the host's. A `.git`
//! directory a run made stays the runs' in later runs of the same host (`git init demo`, then
//! `git -C demo remote add ...` in the next command); other directories a run made (a bare
//! repository's) are remembered for as long as room allows. A file system that does not report
//! birth times (NFS, some FUSE) makes every git directory the host's: fail closed (a run's own
//! `git init` there cannot write its config).

use std::collections::{HashSet, VecDeque};
use std::ffi::{CStr, OsStr};
use std::os::fd::RawFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// The entries of a git directory the host's git obeys (as `policy::PROTECTED_GIT_ENTRIES`).
const METADATA: [&str; 7] = super::policy::PROTECTED_GIT_ENTRIES;

/// A directory by identity: its device and inode, and when it was born (an inode number is reused
/// once freed; with its birth time it is not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DirId {
    dev: (u32, u32),
    ino: u64,
    born: (i64, u32),
}

/// Directories this host's runs made, oldest first in each queue; `index` holds both queues.
struct Made {
    git: VecDeque<DirId>,
    other: VecDeque<DirId>,
    index: HashSet<DirId>,
}

static MADE_BY_RUNS: Mutex<Option<Made>> = Mutex::new(None);
/// `.git` directories kept: enough for every repository an agent session makes.
const GIT_KEPT: usize = 4096;
/// Other directories kept (a bare repository is one of them until it has `HEAD` and `objects`):
/// a build that makes more forgets the oldest, which then count as the host's (fail closed).
const OTHER_KEPT: usize = 65_536;

/// Note that a run made the directory `id` (`git`: named `.git`).
pub fn note_made(id: DirId, git: bool) {
    let mut made = MADE_BY_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    let made = made.get_or_insert_with(|| Made {
        git: VecDeque::new(),
        other: VecDeque::new(),
        index: HashSet::new(),
    });
    let (queue, kept) = if git {
        (&mut made.git, GIT_KEPT)
    } else {
        (&mut made.other, OTHER_KEPT)
    };
    if queue.len() >= kept {
        if let Some(old) = queue.pop_front() {
            made.index.remove(&old);
        }
    }
    queue.push_back(id);
    made.index.insert(id);
}

/// Paths where a directory of the host's was until a run removed it or moved it away, newest last
/// (`index` holds the same paths). The host's tools know their directories by path: a directory a
/// run makes there later is the run's by identity, but the host's git run at that path (an agent's,
/// a shell prompt's) would obey a repository made in it (outside round seven: `mv src src.old;
/// mv mine src`, with `mine/.git` configured, ran the run's `core.fsmonitor` in the host's next `git
/// status` in `src`).
struct Vacated {
    order: VecDeque<PathBuf>,
    index: HashSet<PathBuf>,
}

static VACATED: Mutex<Option<Vacated>> = Mutex::new(None);
/// Vacated paths kept: a run that removes more forgets the oldest.
const VACATED_KEPT: usize = 65_536;

/// Note that a run removes or moves away the host's directory at `path` (caller's view).
pub fn note_vacated(path: &Path) {
    let mut vacated = VACATED.lock().unwrap_or_else(|e| e.into_inner());
    let vacated = vacated.get_or_insert_with(|| Vacated {
        order: VecDeque::new(),
        index: HashSet::new(),
    });
    if vacated.index.contains(path) {
        return;
    }
    if vacated.order.len() >= VACATED_KEPT {
        if let Some(old) = vacated.order.pop_front() {
            vacated.index.remove(&old);
        }
    }
    vacated.order.push_back(path.to_path_buf());
    vacated.index.insert(path.to_path_buf());
}

/// The path at or above `path` where a directory of the host's was until a run removed it or moved
/// it away, if any.
pub fn vacated_at_or_above(path: &Path) -> Option<PathBuf> {
    let vacated = VACATED.lock().unwrap_or_else(|e| e.into_inner());
    let vacated = vacated.as_ref()?;
    path.ancestors()
        .find(|a| vacated.index.contains(*a))
        .map(Path::to_path_buf)
}

fn made_by_runs(id: &DirId) -> bool {
    let made = MADE_BY_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    made.as_ref().is_some_and(|m| m.index.contains(id))
}

/// The identity of the entry `name` in the directory `dir` (a link is not followed), if the file
/// system tells its birth time.
pub fn identity_at(dir: RawFd, name: &CStr) -> Result<Option<DirId>, i32> {
    statx_identity(dir, name, libc::AT_SYMLINK_NOFOLLOW)
}

/// `statx` of `name` in `dir` with `flags`, asking for `mask`.
pub(super) fn statx_at(
    dir: RawFd,
    name: &CStr,
    flags: libc::c_int,
    mask: libc::c_uint,
) -> Result<libc::statx, i32> {
    // SAFETY: statx writes one struct statx; all-zero is a valid value of it.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated name and a struct statx alive for the call. (The system call, not
    // glibc's wrapper: the prebuilt addon runs on glibc 2.17, which has none.)
    let rc = unsafe {
        libc::syscall(
            libc::SYS_statx,
            dir,
            name.as_ptr(),
            flags,
            mask,
            &mut stx as *mut libc::statx,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    Ok(stx)
}

/// `statx` of `name` in `dir` with `flags`: the identity, if the file system tells a birth time.
fn statx_identity(dir: RawFd, name: &CStr, flags: libc::c_int) -> Result<Option<DirId>, i32> {
    let stx = statx_at(dir, name, flags, libc::STATX_BTIME | libc::STATX_INO)?;
    if stx.stx_mask & libc::STATX_BTIME == 0 {
        return Ok(None);
    }
    Ok(Some(DirId {
        dev: (stx.stx_dev_major, stx.stx_dev_minor),
        ino: stx.stx_ino,
        born: (stx.stx_btime.tv_sec, stx.stx_btime.tv_nsec),
    }))
}

/// The identity of the entry at `seen` (a path the supervisor can look at).
fn identity(seen: &Path) -> Result<Option<DirId>, i32> {
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(seen.as_os_str()))
        .map_err(|_| libc::EINVAL)?;
    identity_at(libc::AT_FDCWD, &c)
}

/// When the kernel's coarse clock (the one file systems stamp births with) says it is now.
pub fn coarse_now() -> (i64, u32) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    (ts.tv_sec, ts.tv_nsec as u32)
}

/// Note `file`, a `HEAD` (or its `HEAD.lock`, renamed into place) a run's open just made: born no
/// earlier than `since`, when the open began, so an existing file opened with `O_CREAT` is not
/// taken for the run's.
pub fn note_made_head(file: &std::os::fd::OwnedFd, since: (i64, u32)) {
    let fd = std::os::fd::AsRawFd::as_raw_fd(file);
    if let Ok(Some(id)) = statx_identity(fd, c"", libc::AT_EMPTY_PATH) {
        if id.born >= since {
            note_made(id, true);
        }
    }
}

/// Whether the entry at `path` (caller's view; `seen` reaches it) is the host's: there, and not a
/// directory a run of this host made (see the module's note). One whose identity cannot be told is
/// the host's. A directory a run made that holds a `HEAD` is a repository whoever made that `HEAD`:
/// the host's git filling an empty directory of the run's (`git init x` where the run made
/// `x/.git`) makes the host's repository there.
pub fn hosts(path: &Path, seen: &impl Fn(&Path) -> PathBuf) -> bool {
    match whose(&seen(path)) {
        Whose::Nobody => false,
        Whose::Host => true,
        Whose::Runs => whose(&seen(&path.join("HEAD"))) == Whose::Host,
    }
}

/// Who made an entry, as far as the supervisor can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whose {
    /// It is not there.
    Nobody,
    /// The host, or someone whose entry's identity cannot be told (fail closed).
    Host,
    /// A run of this host (noted by identity).
    Runs,
}

/// Who made the entry at `seen` (a path the supervisor can look at).
fn whose(seen: &Path) -> Whose {
    match identity(seen) {
        Err(libc::ENOENT | libc::ENOTDIR) => Whose::Nobody,
        Err(_) | Ok(None) => Whose::Host,
        Ok(Some(id)) if made_by_runs(&id) => Whose::Runs,
        Ok(Some(_)) => Whose::Host,
    }
}

/// The rule a write to `path` (caller's view) breaks when it makes or changes a tool's config (see
/// `policy::PROTECTED_AT_ANY_DEPTH`: `rust-toolchain.toml`, `.cargo/`, `.npmrc`...) in a directory
/// of the host's: the directory the tool would find it in is there and no run made it (each such
/// name on the path is judged).
/// `home`: the user's home, whose `.cargo` is cargo's home (its config and programs are protected as
/// home entries; its registry cache is written by builds).
pub fn tool_config_in_hosts_dir(
    path: &Path,
    home: Option<&Path>,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    let mut dir = PathBuf::new();
    for part in path.iter() {
        let name = super::policy::PROTECTED_AT_ANY_DEPTH
            .iter()
            .find(|n| std::ffi::OsStr::new(n) == part);
        if let Some(name) = name {
            let cargo_home = *name == ".cargo" && home == Some(dir.as_path());
            if !cargo_home && whose(&seen(&dir)) == Whose::Host {
                return Some(format!(
                    "{name} in {}, a directory of the host's: host tools run what it names",
                    dir.display()
                ));
            }
        }
        dir.push(part);
    }
    None
}

/// The rule a write to `path` (caller's view) breaks when it makes or changes, at the top of a work
/// tree of the host's inside the roots, what the host's editors, agents and hooks run there
/// (`policy::PROTECTED_IN_ROOTS`: `.vscode/`, `.claude/`, `.envrc`, `.husky/`...). The top of each
/// root has these protected by path from the start; a root above the projects (`~/code`, a
/// monorepo's parent) had its projects' own writable (outside round seven). `root`: the writable
/// root `path` is in; `on_the_way`: the call makes a file, link or node, or moves a directory, at
/// its name, so an entry on the way to a protected one (`.hg` for `.hg/hgrc`) counts too.
/// Judged by name first: only a name of the list below some directory costs a look at whether that
/// directory's `.git` is the host's.
pub fn project_config_in_work_tree(
    path: &Path,
    root: &Path,
    on_the_way: bool,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    // The list's entries by component, split once.
    static ENTRIES: std::sync::OnceLock<Vec<(&'static str, Vec<&'static OsStr>)>> =
        std::sync::OnceLock::new();
    let entries = ENTRIES.get_or_init(|| {
        super::policy::PROTECTED_IN_ROOTS
            .iter()
            .map(|e| (*e, Path::new(e).iter().collect()))
            .collect()
    });
    let below: Vec<&OsStr> = path.strip_prefix(root).ok()?.iter().collect();
    for k in 0..below.len() {
        let rest = &below[k..];
        let entry = entries
            .iter()
            .find(|(_, parts)| rest.starts_with(parts) || (on_the_way && parts.starts_with(rest)));
        let Some((entry, _)) = entry else {
            continue;
        };
        let dir: PathBuf = root.join(below[..k].iter().collect::<PathBuf>());
        if hosts(&dir.join(".git"), &seen) {
            return Some(format!(
                "{entry} at the top of the host's work tree {}: what editors, agents and hooks run there",
                dir.display()
            ));
        }
    }
    None
}

/// Why a rename may not move the directory `from` to `to` (both in the caller's view), if it would
/// put a directory of the host's under one a run made: a tool's config the run writes in its own
/// directory would then be found by the host's tools walking up from the host's (`mv crates c2;
/// mkdir crates; mv c2/foo crates/foo`, then `crates/rust-toolchain.toml`). Refused with `EXDEV`,
/// so `mv` copies it: the copy is the run's.
pub fn host_dir_under_runs(
    from: &Path,
    to: &Path,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    if !std::fs::symlink_metadata(seen(from)).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    if whose(&seen(from)) == Whose::Runs {
        return None;
    }
    let under = to
        .ancestors()
        .skip(1)
        .find(|a| whose(&seen(a)) == Whose::Runs)?;
    Some(format!(
        "{} is a directory of the host's, not moved under {}, which a run made (a tool's config there would apply to it)",
        from.display(),
        under.display()
    ))
}

/// What a write must not do to the host's repositories, if `path` (in the caller's view; `seen` turns
/// such a path into one the supervisor can look at) breaks it: the rule's words for the report.
/// `op` is the supervisor's operation name; `makes_git` says the call makes an entry named `.git`.
/// `own_tmp`: the run's private temp dir, the run's own although the host made it.
pub fn refusal(
    op: &str,
    path: &Path,
    makes_git: bool,
    own_tmp: Option<&Path>,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    for git_dir in git_dirs_whose_metadata(path, &seen) {
        if hosts(&git_dir, &seen) {
            return Some(format!(
                "git metadata of the host's repository {} (hooks, config, info, commondir, worktrees)",
                git_dir.display()
            ));
        }
    }
    if path.file_name() == Some(OsStr::new(".git"))
        && matches!(op, "remove" | "rename")
        && hosts(path, &seen)
    {
        return Some(format!(
            "the .git entry of the host's repository {} stays where it is",
            path.display()
        ));
    }
    // A host work tree moved or removed whole: a directory of the run's could take its place (its
    // `.git` then the run's), and the host's git there would obey it.
    if matches!(op, "remove" | "rename") && hosts(&path.join(".git"), &seen) {
        return Some(format!(
            "the host's work tree {} stays where it is",
            path.display()
        ));
    }
    if makes_git {
        if let Some(work_tree) = host_work_tree_around(path, &seen) {
            return Some(format!(
                "a repository inside the host's work tree {}: the host's git would enter it and run its configuration",
                work_tree.display()
            ));
        }
        // git finds a repository by walking up from where it runs: one made in a directory of the
        // host's (a root that is no work tree, `$HOME`) would be found by the host's git run there
        // or in any directory below, all of them the host's (an agent's `git status` at start-up,
        // a shell prompt's). A repository in a directory the run made is the run's own.
        let dir = path.parent()?;
        if hosts_dir(dir, own_tmp, &seen) {
            return Some(format!(
                "a repository made in {}, a directory of the host's: the host's git run there or below would obey its configuration (make it in a new directory, or outside the sandbox)",
                dir.display()
            ));
        }
        if let Some(was) = vacated_at_or_above(dir) {
            return Some(vacated_rule(&was));
        }
    }
    None
}

/// The words for a repository made or moved where the host's directory `was`.
fn vacated_rule(was: &Path) -> String {
    format!(
        "a repository where the host's directory {} was until a run removed it or moved it away: the host's git run at that path would obey its configuration",
        was.display()
    )
}

/// Why a directory holding a repository (its `.git`, or itself one by content: `holds_repository`)
/// may not be moved to `to` (caller's view), where the host's directory was (or is, replaced by the
/// move), as for `refusal`.
pub fn repository_moved_to_vacated(to: &Path, holds_repository: bool) -> Option<String> {
    if !holds_repository {
        return None;
    }
    Some(vacated_rule(
        &vacated_at_or_above(to).unwrap_or_else(|| to.to_path_buf()),
    ))
}

/// Whether `dir` (a path the supervisor can look at) is a git directory by its content.
pub fn is_git_dir_at(dir: &Path) -> bool {
    is_git_dir(dir)
}

/// Whether `dir` (caller's view) is a directory of the host's: there, and made neither by a run nor
/// for this run as its private temp dir (`own_tmp`).
pub fn hosts_dir(dir: &Path, own_tmp: Option<&Path>, seen: &impl Fn(&Path) -> PathBuf) -> bool {
    own_tmp != Some(dir) && whose(&seen(dir)) == Whose::Host
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
/// `objects`: a bare repository, the target of a `gitdir:` file), that no run of this host made.
pub fn is_hosts_git_dir(dir: &Path, seen: impl Fn(&Path) -> PathBuf) -> bool {
    is_git_dir(&seen(dir)) && hosts(dir, &seen)
}

/// The git directory of the host's that `path` (caller's view) lies in, if any: below the nearest
/// `.git` above it when that is the host's, or below a git directory of the host's by content (a
/// bare repository, a `gitdir:` target).
/// `within`: the writable root `path` is in (a git directory around the path is at or below it, or
/// the root lies inside one: looked at up to the root only).
pub fn inside_hosts_git_dir(
    path: &Path,
    within: Option<&Path>,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<PathBuf> {
    let inside = |dir: &Path| within.is_none_or(|root| dir.starts_with(root));
    // Below a `.git` the answer is whether that one is the host's: a git directory by content
    // nearer (a submodule's under `modules/`) is the host's or the run's as it is. No look at each
    // directory on the way (a `statx` or two each, on every object git links into place).
    if let Some(dot_git) = path
        .ancestors()
        .skip(1)
        .take_while(|dir| inside(dir))
        .find(|dir| dir.file_name() == Some(OsStr::new(".git")))
    {
        return hosts(dot_git, &seen).then(|| dot_git.to_path_buf());
    }
    path.ancestors()
        .skip(1)
        .take_while(|dir| inside(dir))
        .find(|dir| is_hosts_git_dir(dir, &seen))
        .map(Path::to_path_buf)
}

/// Whether `path`, a file named `index` in the git directory `git_dir` (or below it), is where git
/// keeps an index: in the git directory itself, a worktree's (`worktrees/<name>/`), or a submodule
/// repository's under `modules/` (not in its refs, logs or objects, where a branch may be named
/// `index`). Told by place, not by a `HEAD` beside it, which the run may move away (outside round
/// nine: a worktree's index was written in place while its `HEAD` was aside).
pub fn is_index_place(path: &Path, git_dir: &Path) -> bool {
    if path.file_name() != Some(OsStr::new("index")) {
        return false;
    }
    let Some(rel) = path.parent().and_then(|p| p.strip_prefix(git_dir).ok()) else {
        return false;
    };
    let parts: Vec<&OsStr> = rel.iter().collect();
    match parts.first().and_then(|p| p.to_str()) {
        None => true,
        Some("worktrees") => parts.len() == 2,
        Some("modules") => !parts.iter().any(|p| {
            ["refs", "logs", "objects", "info", "hooks"]
                .iter()
                .any(|n| p == &OsStr::new(n))
        }),
        Some(_) => false,
    }
}

/// What may not be put inside a host's git directory: the host's git writes its files there by
/// name, following links (`COMMIT_EDITMSG`, `FETCH_HEAD`, `MERGE_MSG`, the reflogs under `logs/`),
/// so a link the run made there had the host's next `git commit`, `fetch` or `stash` write, with the
/// host's rights, wherever it pointed (outside round seven: a reflog linked to a shell start-up
/// file appended the run's commit subject to it). Git itself makes only regular files and
/// directories there, so only those are made: no link, FIFO, socket or device node, and no
/// directory or special file moved in (a moved directory could hold links; it is copied instead,
/// each entry judged). `made`: the name the call makes; `kind`: what it makes there.
pub fn special_in_hosts_git_dir(git_dir: &Path, kind: &str) -> String {
    format!(
        "{kind} inside the host's git directory {}: the host's git writes its files there by name and would follow it",
        git_dir.display()
    )
}

/// The entries that make a directory a git directory to git (with `refs`), and to this module's
/// look at content (`is_git_dir`).
const CORE: [&str; 3] = ["HEAD", "objects", "refs"];

/// `path` (caller's view) is a host git directory's `HEAD`, `objects` or `refs`, which a removal or
/// a rename would take away: the directory would then no longer be a repository by its content,
/// its hooks and config writable, and put back with them planted (git never moves these away).
pub fn core_taken_away(path: &Path, seen: impl Fn(&Path) -> PathBuf) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let dir = path.parent()?;
    (CORE.contains(&name) && is_hosts_git_dir(dir, &seen)).then(|| {
        format!(
            "{name} of the host's git directory {} stays where it is",
            dir.display()
        )
    })
}

/// A file named `HEAD` made inside a host work tree, or in a directory of the host's, outside every
/// git directory: with `objects` and `refs` beside it, git takes its directory for a (bare)
/// repository and obeys its `config` when run there or below, as it would a `.git` of the run's
/// (the `config` may be written first, before the directory is a repository by its content). A git
/// directory's own `HEAD` (under a `.git`, or in a git directory of the host's by content) stays
/// writable (`git checkout`). `own_tmp`: as for `refusal`.
pub fn head_outside_git_dirs(
    path: &Path,
    own_tmp: Option<&Path>,
    seen: impl Fn(&Path) -> PathBuf,
) -> Option<String> {
    if path.file_name() != Some(OsStr::new("HEAD"))
        || path.components().any(|c| c.as_os_str() == ".git")
    {
        return None;
    }
    let dir = path.parent()?;
    if is_hosts_git_dir(dir, &seen) {
        return None;
    }
    if let Some(work_tree) = host_work_tree_around(path, &seen) {
        return Some(format!(
            "a HEAD file inside the host's work tree {}: a directory with HEAD, objects and refs is a repository to git, whose config the host's git would obey",
            work_tree.display()
        ));
    }
    if let Some(was) = vacated_at_or_above(dir) {
        return Some(vacated_rule(&was));
    }
    hosts_dir(dir, own_tmp, &seen).then(|| {
        format!(
            "a HEAD file in {}, a directory of the host's: a directory with HEAD, objects and refs is a repository to git, whose config the host's git run there or below would obey",
            dir.display()
        )
    })
}

/// A directory moved (renamed) from outside one of the host's work trees into it, if `to` is in
/// one and `from` is not: it may hold a repository of the run's making (made where that was
/// allowed), which a gitlink in the host's index would make the host's git enter.
pub fn moved_in(from: &Path, to: &Path, seen: impl Fn(&Path) -> PathBuf) -> Option<String> {
    if !std::fs::symlink_metadata(seen(from)).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let work_tree = host_work_tree_around(to, &seen)?;
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

/// The nearest directory above `path` whose `.git` is the host's, up to `/`: inside the roots a
/// gitlink in the host's index could name a repository made there, and below a host work tree
/// (whose `.git` may lie above the roots: a package of a monorepo) the host's git run in that
/// directory would find the run's repository first.
fn host_work_tree_around(path: &Path, seen: &impl Fn(&Path) -> PathBuf) -> Option<PathBuf> {
    let mut dir = path.parent()?;
    loop {
        if hosts(&dir.join(".git"), seen) {
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

    /// As the supervisor notes a directory a run's `mkdir` made.
    fn made_by_a_run(path: &Path) {
        std::fs::create_dir_all(path).unwrap();
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        let id = identity_at(libc::AT_FDCWD, &c)
            .unwrap()
            .expect("birth times here");
        note_made(id, path.file_name() == Some(OsStr::new(".git")));
    }

    #[test]
    fn a_tool_config_at_any_depth_is_the_hosts_in_its_directories_and_the_runs_in_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("crates/foo")).unwrap();
        made_by_a_run(&root.join("newcrate"));
        let same = |p: &Path| p.to_path_buf();
        let check =
            |p: &str, home: Option<&Path>| tool_config_in_hosts_dir(&root.join(p), home, same);
        for p in [
            "crates/foo/rust-toolchain.toml",
            "crates/foo/rust-toolchain",
            "crates/foo/.cargo",
            "crates/foo/.cargo/config.toml",
            "crates/foo/.npmrc",
            "crates/foo/.yarnrc.yml",
            "crates/foo/.hg/hgrc",
            "crates/foo/.hg",
            "crates/foo/.mise/config.toml",
            ".tool-versions",
        ] {
            let why = check(p, None).unwrap_or_else(|| panic!("{p} was let through"));
            assert!(why.contains("a directory of the host's"), "{why}");
        }
        for p in [
            "newcrate/rust-toolchain.toml",
            "newcrate/.cargo/config.toml",
            "crates/foo/src/main.rs",
            "crates/foo/Cargo.toml",
            // Not there yet: nothing to find it in (the write fails as the kernel says).
            "missing/rust-toolchain.toml",
        ] {
            assert_eq!(check(p, None), None, "{p}");
        }
        // The user's home: its .cargo is cargo's home (its entries are protected as home entries).
        assert_eq!(check(".cargo/registry/x", Some(&root)), None);
        assert!(check(".cargo/registry/x", None).is_some());
    }

    #[test]
    fn a_git_dir_no_run_made_is_the_hosts_whenever_it_was_born() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let host = root.join("vendor/lib/.git");
        std::fs::create_dir_all(host.join("hooks")).unwrap();
        let own = root.join("mine/.git");
        made_by_a_run(&own);
        std::fs::create_dir_all(own.join("hooks")).unwrap();
        let same = |p: &Path| p.to_path_buf();
        let refused = |op: &str, p: &Path, makes_git: bool| refusal(op, p, makes_git, None, same);
        assert!(
            hosts(&host, &same),
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
        // Outside every work tree, a repository made in a directory of the host's (git finds it
        // walking up from the host's directories below it), or its bare layout's HEAD; not in a
        // directory a run made, nor in the run's own temp dir.
        let plain = root.join("plain");
        std::fs::create_dir_all(plain.join("docs")).unwrap();
        let why =
            refused("mkdir", &plain.join(".git"), true).expect("a repository in the host's dir");
        assert!(why.contains("a directory of the host's"), "{why}");
        assert!(refused("rename", &plain.join(".git"), true).is_some());
        let seen = |p: &Path| p.to_path_buf();
        assert!(head_outside_git_dirs(&plain.join("HEAD"), None, seen).is_some());
        assert!(head_outside_git_dirs(&plain.join("docs/HEAD"), None, seen).is_some());
        let tmp = Some(plain.as_path());
        assert!(refusal("mkdir", &plain.join(".git"), true, tmp, same).is_none());
        assert!(head_outside_git_dirs(&plain.join("HEAD"), tmp, seen).is_none());
        let runs = root.join("scaffold");
        made_by_a_run(&runs);
        assert!(refused("mkdir", &runs.join(".git"), true).is_none());
        assert!(head_outside_git_dirs(&runs.join("HEAD"), None, seen).is_none());
        // A git directory's own HEAD stays writable (git checkout).
        assert!(head_outside_git_dirs(&host.join("HEAD"), None, seen).is_none());
        // The host's work tree itself, moved or removed whole (then replaced by one of the run's).
        assert!(refused("rename", &root.join("vendor/lib"), false).is_some());
        assert!(refused("remove", &root.join("vendor/lib"), false).is_some());
        assert!(refused("rename", &root.join("mine"), false).is_none());
        // What is missing is nobody's.
        assert!(!hosts(&root.join("nothing/.git"), &same));
        // A repository the host makes now, while a run lives, is the host's too.
        let during = root.join("late/.git");
        std::fs::create_dir_all(during.join("hooks")).unwrap();
        assert!(refused("write", &during.join("hooks/pre-commit"), false).is_some());
    }

    #[test]
    fn what_editors_and_agents_run_is_the_hosts_at_the_top_of_each_of_its_work_trees_below_a_root()
    {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let same = |p: &Path| p.to_path_buf();
        let app = root.join("app");
        std::fs::create_dir_all(app.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("notes")).unwrap();
        let mine = root.join("mine/.git");
        made_by_a_run(&mine);
        let check = |rel: &str, on_the_way: bool| {
            project_config_in_work_tree(&root.join(rel), &root, on_the_way, same)
        };
        for rel in [
            "app/.vscode/tasks.json",
            "app/.claude/settings.json",
            "app/.envrc",
            "app/.husky/pre-commit",
            "app/.vscode",
            "app/.hg/hgrc",
        ] {
            let why = check(rel, false).unwrap_or_else(|| panic!("{rel}"));
            assert!(why.contains(&app.display().to_string()), "{why}");
        }
        // On the way to a protected entry: a file or link in its place, not a directory.
        assert!(check("app/.hg", true).is_some());
        assert!(check("app/.hg", false).is_none());
        // Deeper in the work tree, in a directory that is no work tree, in the run's own
        // repository: ordinary files.
        for rel in [
            "app/src/.vscode/x",
            "app/src/main.rs",
            "notes/.vscode/tasks.json",
            "mine/.vscode/tasks.json",
            "app/.git/config",
        ] {
            assert_eq!(check(rel, true), None, "{rel}");
        }
    }

    #[test]
    fn where_a_directory_of_the_hosts_was_no_repository_is_made_or_moved() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let same = |p: &Path| p.to_path_buf();
        let src = root.join("src");
        assert_eq!(vacated_at_or_above(&src.join("sub")), None);
        note_vacated(&src);
        assert_eq!(vacated_at_or_above(&src.join("sub")), Some(src.clone()));
        assert_eq!(vacated_at_or_above(&root.join("srcx")), None);
        // The run makes src again: its own by identity, but a repository there is refused.
        made_by_a_run(&src.join("sub"));
        let why = refusal("mkdir", &src.join("sub/.git"), true, None, same).expect("refused");
        assert!(
            why.contains("until a run removed it or moved it away"),
            "{why}"
        );
        assert!(head_outside_git_dirs(&src.join("HEAD"), None, same).is_some());
        assert!(repository_moved_to_vacated(&src, true).is_some());
        assert!(repository_moved_to_vacated(&src, false).is_none());
        // Elsewhere, a repository of the run's own is as before.
        let fresh = root.join("fresh");
        made_by_a_run(&fresh);
        assert!(refusal("mkdir", &fresh.join(".git"), true, None, same).is_none());
    }

    #[test]
    fn a_run_made_repository_is_known_by_identity_not_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let same = |p: &Path| p.to_path_buf();
        // A run makes demo/.git; later runs still find it the runs'.
        let demo = root.join("demo/.git");
        made_by_a_run(&demo);
        assert!(!hosts(&demo, &same), "a run's repository became the host's");
        assert!(refusal("write", &demo.join("config"), false, None, same).is_none());
        // It is removed, and the host makes a repository at the same path: the host's (its HEAD
        // is the host's, even where the file system hands the freed inode out again in the same
        // clock tick, so the directory's identity repeats).
        std::fs::remove_dir(&demo).unwrap();
        std::fs::create_dir_all(demo.join("hooks")).unwrap();
        std::fs::write(demo.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(
            hosts(&demo, &same),
            "a path a run once used adopted the host's repository"
        );
        assert!(refusal("write", &demo.join("hooks/pre-commit"), false, None, same).is_some());
        // The host's git filling an empty directory the run made: the host's HEAD, the host's
        // repository. One whose HEAD the run made stays the run's.
        let filled = root.join("filled/.git");
        made_by_a_run(&filled);
        std::fs::write(filled.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(
            hosts(&filled, &same),
            "the host's repository in a run's directory"
        );
        let own = root.join("own/.git");
        made_by_a_run(&own);
        let since = coarse_now();
        let head = std::fs::File::create(own.join("HEAD")).unwrap();
        note_made_head(&std::os::fd::OwnedFd::from(head), since);
        assert!(
            !hosts(&own, &same),
            "the run's own HEAD made its repository the host's"
        );
        // A run's repository moved elsewhere stays the run's (its identity moves with it).
        let moved_from = root.join("a/.git");
        made_by_a_run(&moved_from);
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::rename(&moved_from, root.join("b/.git")).unwrap();
        assert!(!hosts(&root.join("b/.git"), &same));
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
        std::fs::create_dir_all(top.join("packages/foo/src/config")).unwrap();
        let same = |p: &Path| p.to_path_buf();
        let refused = |op: &str, p: &Path, makes_git: bool| refusal(op, p, makes_git, None, same);
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
        assert!(moved_in(&outside, &top.join("packages/moved"), same).is_some());
        assert!(moved_in(&top.join("packages/bar"), &top.join("packages/baz"), same).is_none());
        // A file is no repository.
        std::fs::write(outside.join("f"), "x").unwrap();
        assert!(moved_in(&outside.join("f"), &top.join("f"), same).is_none());
    }
}
