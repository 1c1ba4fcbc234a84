//! An index a run puts in place in a git directory of the host's (git writes `index.lock`, then
//! renames it over `index`). The host's git trusts what it reads there: it checks paths when it adds
//! an entry, not when it reads one, so an entry named `.git/hooks/pre-commit` or `../outside/x` had
//! the host's `git restore .` write a hook and a file outside the roots (outside round eight), and a
//! cache-tree (the `TREE` extension) that disagreed with the entries put content the host never saw
//! into its next commit. The supervisor makes such a rename itself (see `perform`): it reads the
//! file, refuses it if an entry's path is one git would not check out, and puts in place a copy of
//! its own without the optional extensions (the cache-tree, resolve-undo, untracked and fsmonitor
//! caches, offsets: git rebuilds what it needs), so nothing the run wrote after the check is what
//! lands.

use crate::git_layout::{be32, read_index};

/// Why git would not check out `path` (an index entry's, with its `mode`), if it would not: the
/// rules of git's `verify_path` with `core.protectNTFS` and `core.protectHFS` on (a component that
/// is `.git` however spelled: case, trailing dots and spaces, an NTFS stream name or short name,
/// ignorable Unicode; `.` and `..`; an empty component; an absolute path; a backslash), and a
/// symbolic link named `.gitmodules`.
pub fn unsafe_path(path: &[u8], mode: u32) -> Option<String> {
    let shown = String::from_utf8_lossy(path);
    let bad = |what: &str| Some(format!("an entry {shown:?} {what}"));
    if path.is_empty() {
        return bad("with no path");
    }
    if path[0] == b'/' {
        return bad("with an absolute path");
    }
    if path.contains(&b'\\') {
        return bad("with a backslash (a separator to git on Windows)");
    }
    // A sparse index names a directory with a trailing slash.
    let is_dir = mode & 0o170000 == 0o040000;
    let path = if is_dir {
        path.strip_suffix(b"/").unwrap_or(path)
    } else {
        path
    };
    let parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
    for part in &parts {
        match *part {
            b"" => return bad("with an empty component"),
            b"." | b".." => return bad("that leaves its directory (. or ..)"),
            _ if is_dot_git(part) => return bad("inside a git directory (.git)"),
            _ => {}
        }
    }
    let last = parts.last().copied().unwrap_or_default();
    if mode & 0o170000 == 0o120000 && last.eq_ignore_ascii_case(b".gitmodules") {
        return bad("a symbolic link named .gitmodules");
    }
    None
}

/// Whether a path component names `.git` to some file system: without the code points HFS+ ignores,
/// up to an NTFS stream (`:`), without trailing dots and spaces, in any case; or NTFS's short name
/// `git~1`.
fn is_dot_git(part: &[u8]) -> bool {
    let text = String::from_utf8_lossy(part);
    let kept: String = text.chars().filter(|c| !is_hfs_ignorable(*c)).collect();
    let name = kept.split(':').next().unwrap_or_default();
    let name = name.trim_end_matches([' ', '.']);
    name.eq_ignore_ascii_case(".git") || name.eq_ignore_ascii_case("git~1")
}

/// The code points HFS+ leaves out of a name when it compares names (git's `is_hfs_dotgit`).
fn is_hfs_ignorable(c: char) -> bool {
    matches!(
        u32::from(c),
        0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff
    )
}

/// The index `bytes` as the supervisor puts it in place: refused (the reason) if it is no index git
/// reads, its checksum is wrong, an entry's path is one git would not check out (`unsafe_path`), or it
/// is a split index (its entries lie in a shared index beside it); otherwise its header and entries
/// as they are, the extensions git needs to read it (those named in lower case: a sparse index's
/// `sdir`), and a new checksum (or none, as the file had, with `index.skipHash`).
/// `previous`: the index it replaces, if there is one git reads: a `HEAD` entry it already held, as it
/// was, stays (a repository of fixtures tracked by the project).
pub fn sanitized(bytes: &[u8], previous: Option<&[u8]>) -> Result<Vec<u8>, String> {
    let known_heads = previous.map(heads_of).unwrap_or_default();
    let mut unsafe_entry: Option<String> = None;
    let mut dir_entries = false;
    let layout = read_index(bytes, |mode, oid, path| {
        dir_entries |= mode & 0o170000 == 0o040000;
        if unsafe_entry.is_none() {
            unsafe_entry = unsafe_path(path, mode).or_else(|| {
                let entry = (mode, oid.to_vec(), path.to_vec());
                (is_head(path) && !known_heads.contains(&entry)).then(|| {
                    format!(
                        "an entry {:?} new or changed: a directory with HEAD, objects and refs is a repository to git, whose config the host's git run there would obey",
                        String::from_utf8_lossy(path)
                    )
                })
            });
        }
        Ok(())
    })?;
    let hash = layout.hash_len;
    let (body, trailer) = bytes.split_at(bytes.len() - hash);
    let skip_hash = trailer.iter().all(|b| *b == 0);
    if !skip_hash && digest(hash, body) != trailer {
        return Err("an index whose checksum does not match its content".into());
    }
    if let Some(why) = unsafe_entry {
        return Err(why);
    }
    if dir_entries {
        return Err(SPARSE.into());
    }
    let mut out = bytes[..layout.entries_end].to_vec();
    let mut at = layout.entries_end;
    while at < body.len() {
        let len = be32(body, at + 4).ok_or("an extension runs past the end")? as usize;
        let whole = body
            .get(at..at + 8 + len)
            .ok_or("an extension runs past the end")?;
        match &whole[..4] {
            b"link" => return Err("a split index (its entries lie in a shared index)".into()),
            b"sdir" => return Err(SPARSE.into()),
            sig if sig[0].is_ascii_lowercase() => out.extend_from_slice(whole),
            _ => {}
        }
        at += 8 + len;
    }
    let sum = if skip_hash {
        vec![0; hash]
    } else {
        digest(hash, &out)
    };
    out.extend_from_slice(&sum);
    Ok(out)
}

const SPARSE: &str = "a sparse index (its directory entries name trees the supervisor does not read; sparse indexes are not supported for the host's repositories in the sandbox)";

/// An entry git checks out as a file named `HEAD` (in any case: a work tree on a file system that
/// folds case), which makes its directory a repository with `objects` and `refs` beside it (outside
/// round ten: entries `tools/HEAD`, `tools/config`, `tools/objects/...`, `tools/refs/...` had the
/// host's `git restore .` lay out a repository whose config the host's git in `tools/` obeyed).
fn is_head(path: &[u8]) -> bool {
    path.rsplit(|b| *b == b'/')
        .next()
        .is_some_and(|last| last.eq_ignore_ascii_case(b"HEAD"))
}

/// The `HEAD` entries of an index (mode, object name, path); none if it does not read as one.
fn heads_of(bytes: &[u8]) -> Vec<(u32, Vec<u8>, Vec<u8>)> {
    let mut heads = Vec::new();
    let read = read_index(bytes, |mode, oid, path| {
        if is_head(path) {
            heads.push((mode, oid.to_vec(), path.to_vec()));
        }
        Ok(())
    });
    if read.is_err() {
        heads.clear();
    }
    heads
}

/// SHA-1 (20 bytes) or SHA-256 (32) of `data`, as git checksums an index.
fn digest(len: usize, data: &[u8]) -> Vec<u8> {
    let algorithm = if len == 20 {
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY
    } else {
        &ring::digest::SHA256
    };
    ring::digest::digest(algorithm, data).as_ref().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn paths_git_would_not_check_out_are_told_in_every_spelling() {
        for bad in [
            ".git/hooks/pre-commit",
            "a/.git/config",
            ".GIT/hooks/x",
            ".git./hooks/x",
            ".git /x",
            "git~1/config",
            ".git::$INDEX_ALLOCATION/x",
            ".g\u{200c}it/hooks/x",
            "../outside/pwn",
            "a/../../b",
            "./x",
            "/etc/passwd",
            "a//b",
            "a/",
            "",
            "a\\b",
        ] {
            assert!(unsafe_path(bad.as_bytes(), 0o100644).is_some(), "{bad:?}");
        }
        for good in [
            "src/main.rs",
            ".github/workflows/ci.yml",
            ".gitignore",
            "a/.gitx/b",
            "a..b/c",
            "...",
        ] {
            assert_eq!(unsafe_path(good.as_bytes(), 0o100644), None, "{good:?}");
        }
        // A sparse index's directory entry; a symlink named .gitmodules.
        assert_eq!(unsafe_path(b"dir/", 0o040000), None);
        assert!(unsafe_path(b".gitmodules", 0o120000).is_some());
        assert_eq!(unsafe_path(b".gitmodules", 0o100644), None);
    }

    /// An index git itself wrote, with a cache-tree, in a repository of `hash` (sha1 or sha256).
    fn real_index(dir: &Path, format: &str) -> Option<Vec<u8>> {
        let init = format!("--object-format={format}");
        if !crate::git_layout::git_in(dir, &["init", "-q", &init]) {
            return None;
        }
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/a.rs"), "a").unwrap();
        std::fs::write(dir.join("b"), "b").unwrap();
        assert!(crate::git_layout::git_in(dir, &["add", "."]));
        assert!(crate::git_layout::git_in(dir, &["commit", "-qm", "x"]));
        Some(std::fs::read(dir.join(".git/index")).unwrap())
    }

    #[test]
    fn a_sound_index_keeps_its_entries_and_loses_its_cache_tree() {
        for format in ["sha1", "sha256"] {
            let dir = tempfile::tempdir().unwrap();
            let Some(original) = real_index(dir.path(), format) else {
                return; // no git here
            };
            assert!(
                original.windows(4).any(|w| w == b"TREE"),
                "git wrote no cache-tree"
            );
            let clean = sanitized(&original, None).unwrap();
            assert!(!clean.windows(4).any(|w| w == b"TREE"), "{format}");
            // git reads the copy as the same index.
            std::fs::write(dir.path().join(".git/index"), &clean).unwrap();
            let out = std::process::Command::new("git")
                .args(["ls-files", "-s"])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{format}: {:?}", out);
            let listed = String::from_utf8_lossy(&out.stdout);
            assert!(
                listed.contains("src/a.rs") && listed.contains("\tb\n"),
                "{listed}"
            );
            let status = std::process::Command::new("git")
                .args(["status", "--porcelain"])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&status.stdout), "", "{format}");
        }
    }

    #[test]
    fn a_head_entry_is_refused_unless_the_index_it_replaces_held_it_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let Some(before) = real_index(dir.path(), "sha1") else {
            return;
        };
        std::fs::create_dir_all(dir.path().join("fixtures/repo.git")).unwrap();
        std::fs::write(dir.path().join("fixtures/repo.git/HEAD"), "ref: x\n").unwrap();
        assert!(crate::git_layout::git_in(dir.path(), &["add", "."]));
        let with_head = std::fs::read(dir.path().join(".git/index")).unwrap();
        let why = sanitized(&with_head, Some(&before)).unwrap_err();
        assert!(why.contains("fixtures/repo.git/HEAD"), "{why}");
        // Already there as it is: kept (a project tracking a repository of fixtures).
        assert!(sanitized(&with_head, Some(&with_head)).is_ok());
        // Changed: refused again.
        std::fs::write(dir.path().join("fixtures/repo.git/HEAD"), "ref: y\n").unwrap();
        assert!(crate::git_layout::git_in(dir.path(), &["add", "."]));
        let changed = std::fs::read(dir.path().join(".git/index")).unwrap();
        assert!(sanitized(&changed, Some(&with_head)).is_err());
    }

    #[test]
    fn an_entry_git_would_not_check_out_or_a_wrong_checksum_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let Some(original) = real_index(dir.path(), "sha1") else {
            return;
        };
        // The first entry (`b`, sorted first) renamed `/`, the length kept (as the round's attack
        // kept it): its path follows the header (12 bytes) and the entry's fixed fields (62).
        let mut crafted = original.clone();
        assert_eq!(&crafted[74..76], b"b\0", "the first entry is not b");
        crafted[74] = b'/';
        // Wrong checksum first, then a right one over the crafted entry.
        assert!(sanitized(&crafted, None).unwrap_err().contains("checksum"));
        let body_len = crafted.len() - 20;
        let sum = digest(20, &crafted[..body_len]);
        crafted[body_len..].copy_from_slice(&sum);
        let why = sanitized(&crafted, None).unwrap_err();
        assert!(why.contains("absolute"), "{why}");
        assert!(sanitized(b"not an index", None).is_err());
        // A name's length field that disagrees with its NUL (git takes the field: `sub/.gitX`
        // with a length of 8 is `sub/.git` to its checkout): the first entry's length set to 0.
        let mut short = original.clone();
        assert_eq!(&short[72..74], &[0, 1], "the first entry's flags");
        short[73] = 0;
        let body_len = short.len() - 20;
        let sum = digest(20, &short[..body_len]);
        short[body_len..].copy_from_slice(&sum);
        let why = sanitized(&short, None).unwrap_err();
        assert!(why.contains("length"), "{why}");
        // A sparse index's directory entry (its tree is not read): the first entry made one.
        let mut sparse = original.clone();
        sparse[36..40].copy_from_slice(&0o040000u32.to_be_bytes());
        let body_len = sparse.len() - 20;
        let sum = digest(20, &sparse[..body_len]);
        sparse[body_len..].copy_from_slice(&sum);
        let why = sanitized(&sparse, None).unwrap_err();
        assert!(why.contains("sparse"), "{why}");
    }
}
