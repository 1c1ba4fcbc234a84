//! The Landlock read grants that keep credential files unreadable, including those that appear or
//! are replaced while a run lives. Hiding by mounts (`hidden`) covers what is there when the run
//! starts: a file the host later replaces by a rename (`git credential-store`, an editor's save)
//! detaches the mount that covered it, and a file made afterwards (`~/.vault-token`, a new `~/.aws/`)
//! was never covered. Landlock grants by inode and cannot take a grant back, so instead of reading
//! files beneath `/`, a run reads files beneath each entry of the directories on the way to a
//! credential location (`/`, `/home`, the home, `~/.config`...), never the locations themselves:
//! what appears in those directories later has no grant and cannot be read, whoever made it.
//! Listing, executing and writing keep their rules (`landlock`).
//!
//! A directory on the way that a writable root holds (or is) is not walked: the run makes files
//! there and must read them back, so that root is granted whole and its credentials rely on the
//! mounts alone. The mounts a run makes for itself under a walked directory (its `/proc`, its
//! `/dev`) are granted by the child, which alone has them. The listing is reused while the walked
//! directories keep their identity and modification time.

use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where a layer's reads are withheld, and what it walks to withhold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Directories whose entries are granted one by one (each an ancestor of a withheld path).
    pub walked: Vec<PathBuf>,
    /// Credential locations: never granted, whether they exist or not.
    pub withheld: Vec<PathBuf>,
    /// `allowRead` paths inside withheld ones: granted whole.
    pub brought_back: Vec<PathBuf>,
}

impl Layout {
    /// Nothing to withhold: no layer is needed.
    pub fn is_empty(&self) -> bool {
        self.withheld.is_empty()
    }
}

/// The layout for credential locations `candidates` (absolute; existing or not), minus those under
/// an `allow_read` path or holding a path the run works in (`works_in`: its cwd and roots), with
/// the walk stopping at the `writable` roots.
pub fn layout(
    candidates: &[PathBuf],
    allow_read: &[PathBuf],
    works_in: &[PathBuf],
    writable: &[PathBuf],
) -> Layout {
    let allowed: Vec<PathBuf> = allow_read.iter().map(|p| resolved(p)).collect();
    let works_in: Vec<PathBuf> = works_in.iter().map(|p| resolved(p)).collect();
    let writable: Vec<PathBuf> = writable.iter().map(|p| resolved(p)).collect();
    let mut withheld: Vec<PathBuf> = Vec::new();
    for c in candidates {
        let c = resolved(c);
        let allowed_whole = allowed.iter().any(|a| c.starts_with(a));
        let worked_in = works_in.iter().any(|w| w.starts_with(&c));
        if !allowed_whole && !worked_in && !withheld.contains(&c) {
            withheld.push(c);
        }
    }
    // An outer location covers the inner ones.
    let outer: Vec<PathBuf> = withheld
        .iter()
        .filter(|c| !withheld.iter().any(|o| o != *c && c.starts_with(o)))
        .cloned()
        .collect();
    let mut walked: Vec<PathBuf> = Vec::new();
    for c in &outer {
        for a in c.ancestors().skip(1) {
            let in_writable = writable.iter().any(|w| a.starts_with(w));
            if !in_writable && !walked.iter().any(|w| w == a) {
                walked.push(a.to_path_buf());
            }
        }
    }
    walked.sort();
    let mut brought_back: Vec<PathBuf> = allowed
        .into_iter()
        .filter(|a| outer.iter().any(|c| a.starts_with(c) && a != c))
        .collect();
    brought_back.sort();
    brought_back.dedup();
    Layout {
        walked,
        withheld: outer,
        brought_back,
    }
}

/// `path` with its longest existing prefix resolved (links, `..`) and the rest appended as named:
/// a location that does not exist yet is where it would be made.
fn resolved(path: &Path) -> PathBuf {
    let path = super::policy::normalize(path);
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let mut at: &Path = &path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (at.parent(), at.components().next_back()) {
            (Some(parent), Some(Component::Normal(name))) => {
                rest.push(name);
                at = parent;
            }
            _ => return path,
        }
    }
}

/// What a walked directory was when its entries were granted: a change of either means an entry
/// came, went or was replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
}

fn stamp(dir: &Path) -> Option<Stamp> {
    let m = std::fs::symlink_metadata(dir).ok()?;
    Some(Stamp {
        dev: m.dev(),
        ino: m.ino(),
        mtime: (m.mtime(), m.mtime_nsec()),
    })
}

/// A change made in the clock tick of the stamp could leave the same time behind: a listing made
/// from a directory changed this recently is not reused.
const SETTLED_NS: i128 = 50_000_000;

/// What a layout is made from: the credential locations and the run's `allowRead`, places it works
/// in and writable roots, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    pub candidates: Vec<PathBuf>,
    pub allow_read: Vec<PathBuf>,
    pub works_in: Vec<PathBuf>,
    pub writable: Vec<PathBuf>,
}

struct Listed {
    inputs: Inputs,
    layout: Layout,
    stamps: Vec<Option<Stamp>>,
    reusable: bool,
    paths: Arc<Vec<PathBuf>>,
}

/// Listings kept for reuse (runs in different projects can need different ones).
const KEPT: usize = 8;

static LISTED: Mutex<Vec<Listed>> = Mutex::new(Vec::new());

/// The paths to grant `ReadFile` on whole for a run (see `list`), or `None` with nothing to
/// withhold. Resolving the locations and listing the directories on the way to them is done again
/// only when one of those directories changed (its identity or modification time: an entry came,
/// went, was replaced or became a link), so a run pays a `stat` of each.
pub fn granted(inputs: Inputs) -> Option<Arc<Vec<PathBuf>>> {
    {
        let listed = LISTED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = listed.iter().find(|l| l.reusable && l.inputs == inputs) {
            let now: Vec<Option<Stamp>> = l.layout.walked.iter().map(|d| stamp(d)).collect();
            if now == l.stamps {
                return (!l.layout.is_empty()).then(|| l.paths.clone());
            }
        }
    }
    let resolve = || {
        layout(
            &inputs.candidates,
            &inputs.allow_read,
            &inputs.works_in,
            &inputs.writable,
        )
    };
    // Stamped between two resolutions: a change before the stamp shows as two layouts (then the
    // listing is not reused), one after it as a new stamp at the next run.
    let layout = resolve();
    let stamps: Vec<Option<Stamp>> = layout.walked.iter().map(|d| stamp(d)).collect();
    let settled = resolve() == layout;
    let paths = Arc::new(list(&layout));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0);
    let reusable = settled
        && stamps.iter().flatten().all(|s| {
            let at = s.mtime.0 as i128 * 1_000_000_000 + s.mtime.1 as i128;
            now - at > SETTLED_NS
        });
    let empty = layout.is_empty();
    let mut listed = LISTED.lock().unwrap_or_else(|p| p.into_inner());
    listed.retain(|l| l.inputs != inputs);
    if listed.len() >= KEPT {
        listed.remove(0);
    }
    listed.push(Listed {
        inputs,
        layout,
        stamps,
        reusable,
        paths: paths.clone(),
    });
    (!empty).then_some(paths)
}

/// The paths `layout` grants whole, as the file system is now: every entry of each walked directory
/// that is neither walked nor withheld nor a link (a link's target is granted where it lives, or
/// not at all), and the paths brought back. A directory that cannot be listed (not a directory, or
/// not ours to list) is granted whole: as readable as its permissions make it.
fn list(layout: &Layout) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in &layout.walked {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(_) => {
                out.push(dir.clone());
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_link = entry.file_type().map(|t| t.is_symlink()).unwrap_or(true);
            if !is_link && !layout.walked.contains(&path) && !layout.withheld.contains(&path) {
                out.push(path);
            }
        }
    }
    out.extend(layout.brought_back.iter().cloned());
    out
}

/// `path` opened for a Landlock rule, not through a link (`None` when it is gone).
pub fn open_for_rule(path: &Path) -> Option<OwnedFd> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .ok()
        .map(OwnedFd::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(p: &Path) -> PathBuf {
        std::fs::canonicalize(p).unwrap()
    }

    #[test]
    fn the_walk_goes_down_to_each_location_and_stops_at_writable_roots() {
        let t = tempfile::tempdir().unwrap();
        let home = real(t.path());
        std::fs::create_dir_all(home.join(".config/gh")).unwrap();
        std::fs::create_dir_all(home.join("project")).unwrap();
        std::fs::create_dir_all(home.join("dotfiles/cfg")).unwrap();
        std::fs::write(home.join(".netrc"), "x").unwrap();
        let candidates = vec![
            home.join(".netrc"),
            home.join(".config/gh"),
            home.join(".aws"),
            home.join(".config/gh/hosts.yml"),
        ];
        let l = layout(
            &candidates,
            &[],
            &[home.join("project")],
            &[home.join("project")],
        );
        // Every ancestor of each location is walked; the locations themselves are withheld, once
        // (an inner one is covered by its outer one), whether they exist or not.
        assert!(l.walked.contains(&home));
        assert!(l.walked.contains(&home.join(".config")));
        assert!(l.walked.contains(&PathBuf::from("/")));
        assert!(!l.walked.contains(&home.join("project")));
        assert!(l.withheld.contains(&home.join(".aws")));
        assert!(l.withheld.contains(&home.join(".config/gh")));
        assert!(!l.withheld.contains(&home.join(".config/gh/hosts.yml")));
        // The listing grants the siblings, never a walked directory or a location.
        let granted = list(&l);
        assert!(granted.contains(&home.join("project")));
        assert!(granted.contains(&home.join("dotfiles")));
        for no in [
            home.join(".netrc"),
            home.join(".config"),
            home.join(".config/gh"),
        ] {
            assert!(!granted.contains(&no), "{}", no.display());
        }
        // A writable root that holds the locations stops the walk there: it is granted whole.
        let l = layout(
            &candidates,
            &[],
            std::slice::from_ref(&home),
            std::slice::from_ref(&home),
        );
        assert!(!l.walked.contains(&home));
        assert!(!l.walked.contains(&home.join(".config")));
        assert!(list(&l).contains(&home));
    }

    #[test]
    fn allowed_paths_come_back_and_links_are_followed_to_where_a_location_would_be() {
        let t = tempfile::tempdir().unwrap();
        let home = real(t.path());
        std::fs::create_dir_all(home.join("dotfiles/config")).unwrap();
        std::os::unix::fs::symlink(home.join("dotfiles/config"), home.join(".config")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/known_hosts"), "k").unwrap();
        let candidates = vec![home.join(".ssh"), home.join(".config/gh/hosts.yml")];
        let l = layout(&candidates, &[home.join(".ssh/known_hosts")], &[], &[]);
        assert_eq!(l.brought_back, vec![home.join(".ssh/known_hosts")]);
        // `.config` is a link: the location is where it would be made, in the link's target.
        assert!(l
            .withheld
            .contains(&home.join("dotfiles/config/gh/hosts.yml")));
        assert!(l.walked.contains(&home.join("dotfiles/config")));
        let granted = list(&l);
        // The link itself is never granted (its target is granted where it lives, or not at all).
        assert!(!granted.contains(&home.join(".config")));
        assert!(granted.contains(&home.join(".ssh/known_hosts")));
        // A location that holds the run's cwd is not withheld; nor one allowRead names whole.
        let l = layout(&candidates, &[home.join(".ssh")], &[], &[]);
        assert!(!l.withheld.contains(&home.join(".ssh")));
        let l = layout(&candidates, &[], &[home.join(".ssh/work")], &[]);
        assert!(!l.withheld.contains(&home.join(".ssh")));
    }
}
