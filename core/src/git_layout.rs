//! Where git keeps the repositories of a repository's submodules, for the two places that must see
//! all of them: the approval gate (their config can name programs `git status` runs, as it recurses
//! into them) and the sandbox (their config and hooks must stay the host's).

use std::path::{Path, PathBuf};

/// The git directories of the submodules that `common` (a repository's common git directory) keeps
/// under `modules/`, nested ones included. A submodule named with slashes (`libs/a`) nests without
/// being a repository, so a directory without `HEAD` is searched too. Bounded: submodules of
/// submodules rarely go deep, and a walk must end whatever the tree holds.
pub fn submodule_git_dirs(common: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![common.join("modules")];
    for _ in 0..6 {
        let mut next = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if !p.is_dir() {
                    continue;
                }
                if p.join("HEAD").exists() {
                    next.push(p.join("modules"));
                    found.push(p);
                } else {
                    next.push(p);
                }
            }
        }
        dirs = next;
    }
    found
}

/// The paths (relative to the work tree) of the index's gitlinks, the entries of mode 160000: the
/// submodules `git status` and `git diff` recurse into, those `.gitmodules` names and those it does
/// not (a repository committed inside another as an "embedded repository": git warns, and still
/// recurses into it, reading its config). Read from the index file of `git_dir` (versions 2 to 4,
/// SHA-1 or SHA-256 object names) and from any shared index a split index keeps beside it. Cached by
/// each file's identity and size and modification time: an index can be megabytes, and the gate asks
/// on every git command. `Err` when a file cannot be read as an index (the caller fails closed).
pub fn gitlink_paths(git_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = vec![git_dir.join("index")];
    if let Ok(entries) = std::fs::read_dir(git_dir) {
        for e in entries.flatten() {
            if e.file_name()
                .as_encoded_bytes()
                .starts_with(b"sharedindex.")
            {
                files.push(e.path());
            }
        }
    }
    let mut found = Vec::new();
    for file in files {
        found.extend(gitlinks_of(&file)?);
    }
    found.sort();
    found.dedup();
    Ok(found)
}

type IndexStamp = (u64, u64, u64, i64, i64);

/// Each index file read: its stamp, and the gitlinks it held.
type IndexCache = std::sync::Mutex<std::collections::HashMap<PathBuf, (IndexStamp, Vec<PathBuf>)>>;

fn index_cache() -> &'static IndexCache {
    static CACHE: std::sync::OnceLock<IndexCache> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

fn gitlinks_of(file: &Path) -> Result<Vec<PathBuf>, String> {
    let Ok(meta) = std::fs::metadata(file) else {
        // No index yet (a fresh repository): no gitlinks.
        return Ok(Vec::new());
    };
    let stamp = index_stamp(&meta);
    if let Ok(map) = index_cache().lock() {
        if let Some((seen, links)) = map.get(file) {
            if *seen == stamp {
                return Ok(links.clone());
            }
        }
    }
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let links = parse_gitlinks(&bytes).map_err(|why| format!("{}: {why}", file.display()))?;
    if let Ok(mut map) = index_cache().lock() {
        if map.len() > 256 {
            map.clear();
        }
        map.insert(file.to_path_buf(), (stamp, links.clone()));
    }
    Ok(links)
}

#[cfg(unix)]
fn index_stamp(meta: &std::fs::Metadata) -> IndexStamp {
    use std::os::unix::fs::MetadataExt;
    (
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
    )
}

#[cfg(not(unix))]
fn index_stamp(meta: &std::fs::Metadata) -> IndexStamp {
    let modified = meta
        .modified()
        .ok()
        .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default();
    (
        0,
        0,
        meta.len(),
        modified.as_secs() as i64,
        modified.subsec_nanos() as i64,
    )
}

/// The gitlink paths of an index file's bytes. The object name's length is not in the file: an
/// entry is tried with SHA-1's, then SHA-256's, and the one under which every entry parses and the
/// entries end where the extensions (or the trailing checksum) begin is taken.
fn parse_gitlinks(bytes: &[u8]) -> Result<Vec<PathBuf>, String> {
    const GITLINK: u32 = 0o160000;
    let mut links = Vec::new();
    read_index(bytes, |mode, _, path| {
        if mode & 0o170000 == GITLINK {
            let text = std::str::from_utf8(path).map_err(|_| "a gitlink path is not UTF-8")?;
            links.push(PathBuf::from(text));
        }
        Ok(())
    })?;
    Ok(links)
}

/// An index file's layout as read: where its entries end and how long its object names (and its
/// final checksum) are: 20 bytes (SHA-1) or 32 (SHA-256).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLayout {
    pub entries_end: usize,
    pub hash_len: usize,
}

/// Read an index file (versions 2 to 4), giving each entry's mode, object name and path to `each`
/// (the first error it returns ends the reading). The object name length is the one with which the entries
/// end exactly where the extensions and final checksum begin.
pub fn read_index(
    bytes: &[u8],
    mut each: impl FnMut(u32, &[u8], &[u8]) -> Result<(), String>,
) -> Result<IndexLayout, String> {
    if bytes.len() < 12 || &bytes[..4] != b"DIRC" {
        return Err("not an index (no DIRC signature)".into());
    }
    let version = be32(bytes, 4).unwrap_or(0);
    if !(2..=4).contains(&version) {
        return Err(format!(
            "index version {version}, which this reader does not know"
        ));
    }
    let count = be32(bytes, 8).unwrap_or(0) as usize;
    let mut last_error = String::new();
    for hash in [20usize, 32] {
        // Entries are read once the length is known to fit: a first pass gives nothing out.
        match entries(bytes, version, count, hash, &mut |_, _, _| Ok(())) {
            Ok(end) if ends_cleanly(bytes, end, hash) => {
                entries(bytes, version, count, hash, &mut each)?;
                return Ok(IndexLayout {
                    entries_end: end,
                    hash_len: hash,
                });
            }
            // The reading that got furthest says most: an entry running past the end is what
            // reading with the other name length usually comes to.
            Ok(_) if last_error.is_empty() => {
                last_error = "entries do not end where the index's tail begins".into()
            }
            Err(why) if last_error.is_empty() || !why.contains("past the end") => last_error = why,
            _ => {}
        }
    }
    Err(last_error)
}

/// The big-endian 32-bit number at `at`, if the bytes hold one there.
pub fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Whether `end` is where an index's extensions or its final checksum of `hash` bytes begin.
pub fn ends_cleanly(bytes: &[u8], end: usize, hash: usize) -> bool {
    let mut at = end;
    while at + hash < bytes.len() {
        // An extension: a 4-byte signature and a 4-byte length, then its data.
        let Some(len) = be32(bytes, at + 4) else {
            return false;
        };
        at += 8 + len as usize;
    }
    at + hash == bytes.len()
}

/// What is given each index entry's mode, object name and path; an error ends the reading.
type EachEntry<'a> = dyn FnMut(u32, &[u8], &[u8]) -> Result<(), String> + 'a;

/// Where the entries end, each given to `each` with its mode.
fn entries(
    bytes: &[u8],
    version: u32,
    count: usize,
    hash: usize,
    each: &mut EachEntry,
) -> Result<usize, String> {
    let short = || "an entry runs past the end of the file".to_string();
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(bytes, at + 24).ok_or_else(short)?;
        at += 40 + hash;
        let flags = bytes
            .get(at..at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(short)?;
        at += 2;
        if version >= 3 && flags & 0x4000 != 0 {
            at += 2;
        }
        // The name's length is the one in the flags, as git reads it (the bytes up to a NUL only
        // when the field is full, 0xFFF): a NUL elsewhere would make this reader and git disagree
        // on the name and on where the next entry starts (outside round nine: `sub/.gitX` with a
        // length of 8 was `sub/.git` to git's checkout), so one is refused.
        let declared = usize::from(flags & 0x0fff);
        let name_at = |from: usize, len: Option<usize>| -> Result<usize, String> {
            match len {
                Some(len) => {
                    let name = bytes.get(from..from + len).ok_or_else(short)?;
                    if name.contains(&0) || bytes.get(from + len) != Some(&0) {
                        return Err("a name's length disagrees with where it ends".into());
                    }
                    Ok(len)
                }
                None => bytes
                    .get(from..)
                    .and_then(|r| r.iter().position(|b| *b == 0))
                    .ok_or_else(short),
            }
        };
        let full = declared == 0x0fff;
        let path = if version == 4 {
            // A varint: how many bytes of the previous path to drop, then the rest of this one.
            let mut strip: usize = 0;
            loop {
                let b = *bytes.get(at).ok_or_else(short)?;
                at += 1;
                strip = (strip << 7) | usize::from(b & 0x7f);
                if b & 0x80 == 0 {
                    break;
                }
                strip += 1;
            }
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or("a path strips more than it has")?;
            let rest = if full {
                None
            } else {
                Some(
                    declared
                        .checked_sub(keep)
                        .ok_or("a name's length is shorter than the part it keeps")?,
                )
            };
            let rest = name_at(at, rest)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&bytes[at..at + rest]);
            at += rest + 1;
            path
        } else {
            let len = name_at(at, (!full).then_some(declared))?;
            let path = bytes[at..at + len].to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 from the entry's start.
            at = start + ((at + len - start + 8) & !7);
            path
        };
        if at > bytes.len() {
            return Err(short());
        }
        each(mode, &bytes[start + 40..start + 40 + hash], &path)?;
        previous = path;
    }
    Ok(at)
}

/// Run git in `dir` with a fixed identity (for tests that make repositories); false when git is
/// missing or fails.
#[cfg(test)]
pub fn git_in(dir: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@e")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@e")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_and_slash_named_submodules_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path();
        for repo in ["modules/a", "modules/libs/b", "modules/a/modules/c"] {
            std::fs::create_dir_all(git.join(repo)).unwrap();
            std::fs::write(git.join(repo).join("HEAD"), "ref: refs/heads/main\n").unwrap();
        }
        let mut found = submodule_git_dirs(git);
        found.sort();
        assert_eq!(
            found,
            ["modules/a", "modules/a/modules/c", "modules/libs/b"].map(|r| git.join(r))
        );
        assert!(submodule_git_dirs(&git.join("nothing")).is_empty());
    }

    fn git(dir: &Path, args: &[&str]) {
        assert!(git_in(dir, args), "git {args:?} in {}", dir.display());
    }

    /// A repository holding a gitlink at `at`, and files around it, in index `version`.
    fn repository_with_gitlink(version: &str, object_format: &str, at: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(
            d,
            &["init", "-q", &format!("--object-format={object_format}")],
        );
        git(d, &["config", "index.version", version]);
        for f in ["a.txt", "deep/er/b.txt", "zz.txt"] {
            std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
            std::fs::write(d.join(f), f).unwrap();
        }
        let oid = if object_format == "sha256" {
            "1".repeat(64)
        } else {
            "1".repeat(40)
        };
        git(d, &["add", "."]);
        git(
            d,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{oid},{at}"),
            ],
        );
        dir
    }

    #[test]
    fn gitlinks_are_read_from_the_index_in_every_version_and_object_format() {
        if std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_err()
        {
            return;
        }
        for version in ["2", "3", "4"] {
            for format in ["sha1", "sha256"] {
                let dir = repository_with_gitlink(version, format, "deep/embedded");
                let got = gitlink_paths(&dir.path().join(".git")).unwrap();
                assert_eq!(
                    got,
                    vec![PathBuf::from("deep/embedded")],
                    "v{version} {format}"
                );
            }
        }
        // No index yet: none.
        let fresh = tempfile::tempdir().unwrap();
        git(fresh.path(), &["init", "-q"]);
        assert_eq!(gitlink_paths(&fresh.path().join(".git")), Ok(Vec::new()));
        // Not an index: an error, never "none".
        std::fs::write(fresh.path().join(".git/index"), b"garbage").unwrap();
        assert!(gitlink_paths(&fresh.path().join(".git")).is_err());
    }
}
