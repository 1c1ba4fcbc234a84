//! A list of paths that answers "which of them is this path equal to or under?" in the path's depth,
//! not the list's length.
//!
//! The supervisor asks it on every write a run makes (the protected paths: a root's start-up files,
//! its git metadata, each `denyWrite` path, for every root), and a scan of `Path::starts_with` over
//! the list, which compares component by component, was the largest part of the supervisor's own
//! time (about 2 of the 7 us it spent deciding a file creation; issue 36's profile). Here the path's
//! own ancestors are looked up by their bytes instead, once normalized the way `Path::components`
//! reads a path (repeated and trailing separators and `.` dropped), so the answer is the one the scan
//! gave: the first entry of the list, in its order, that the path starts with. Unix paths only (the
//! sandbox is Linux's and macOS's): ancestors end at a `/`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The index of a list of paths, built on its first lookup. The list must not change after that
/// (the sandbox's policy is fixed once the run starts).
#[derive(Default, Clone)]
pub struct PathIndex {
    first_at: OnceLock<HashMap<Vec<u8>, usize>>,
}

impl PathIndex {
    /// The first of `list` that `path` is equal to or under, as `list.iter().find(|p|
    /// path.starts_with(p))` answers. `list` is the one every earlier lookup was given.
    pub fn first_containing<'a>(&self, list: &'a [PathBuf], path: &Path) -> Option<&'a PathBuf> {
        let index = self.first_at.get_or_init(|| {
            let mut index = HashMap::with_capacity(list.len());
            for (i, p) in list.iter().enumerate() {
                index.entry(normalized(p)).or_insert(i);
            }
            index
        });
        debug_assert!(
            index.len() <= list.len(),
            "the list changed after it was indexed"
        );
        if index.is_empty() {
            return None;
        }
        let path = normalized(path);
        let mut best: Option<usize> = None;
        let mut consider = |prefix: &[u8]| {
            if let Some(&i) = index.get(prefix) {
                best = Some(best.map_or(i, |b| b.min(i)));
            }
        };
        // Every ancestor ends just before a separator; the root ("/") is the one that keeps its own.
        for (at, _) in path.iter().enumerate().filter(|(_, &b)| b == b'/') {
            consider(if at == 0 { b"/" } else { &path[..at] });
        }
        consider(&path);
        best.map(|i| &list[i])
    }
}

/// The path's bytes as its components spell them: `a//b/./c/` is `a/b/c`.
fn normalized(path: &Path) -> Vec<u8> {
    path.components()
        .collect::<PathBuf>()
        .into_os_string()
        .into_encoded_bytes()
}

impl PartialEq for PathIndex {
    /// A cache of the list beside it: two policies are equal by their lists.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for PathIndex {}

impl std::fmt::Debug for PathIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PathIndex")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer is the linear scan's for every pair of a generated list and path, spellings with
    /// repeated separators, `.`, trailing slashes, `..` (a plain component to both) and the root included.
    #[test]
    fn answers_as_a_scan_of_starts_with_does() {
        let parts = ["a", "b", ".git", "hooks", "..", ".", "", "ab", "a.b"];
        let mut spellings = vec![PathBuf::from("/")];
        for x in parts {
            for y in parts {
                for z in ["", "c", "hooks/"] {
                    spellings.push(PathBuf::from(format!("/{x}/{y}/{z}")));
                    spellings.push(PathBuf::from(format!("/{x}//{y}/./{z}")));
                }
            }
        }
        // Lists of several sizes and orders, so the "first in the list" rule is exercised.
        for (n, step) in [(1, 7), (5, 3), (40, 11), (spellings.len(), 1)] {
            let list: Vec<PathBuf> = (0..n)
                .map(|i| spellings[(i * step + 3) % spellings.len()].clone())
                .collect();
            let index = PathIndex::default();
            for path in &spellings {
                let scan = list.iter().find(|p| path.starts_with(p));
                assert_eq!(
                    index.first_containing(&list, path),
                    scan,
                    "{path:?} in {list:?}"
                );
            }
        }
    }

    #[test]
    fn an_empty_list_contains_nothing() {
        assert_eq!(
            PathIndex::default().first_containing(&[], Path::new("/a")),
            None
        );
    }
}
