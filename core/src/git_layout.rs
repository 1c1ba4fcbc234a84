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
}
