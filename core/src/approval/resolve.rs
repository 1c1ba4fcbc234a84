//! Which file bash runs for a command name: looked up on the `PATH` the command will have (a
//! `PATH=` prefix changes it; empty and relative entries are relative to the command's directory),
//! then symlinks and `..` followed by the kernel's rules, never removed lexically (`link/../x` is
//! next to where `link` points, not next to `link`). Names bash runs as builtins are not files.

use std::path::{Path, PathBuf};

/// Bash's builtins (enabled by default): bash runs these itself whatever `PATH` holds.
pub const BASH_BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

pub fn is_builtin(name: &str) -> bool {
    BASH_BUILTINS.contains(&name)
}

/// The file `name` names for bash: a name with `/` relative to `cwd`, a bare name on `path_var`.
/// `None` when there is none (bash then fails to run anything).
pub fn lookup(name: &str, path_var: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    if name.is_empty() {
        return None;
    }
    if name.contains('/') {
        let p = cwd.join(name);
        return crate::spawn::shell::is_executable(&p).then_some(p);
    }
    let path_var = path_var?;
    path_var
        .split(':')
        .map(|dir| match dir {
            "" => cwd.to_path_buf(),
            d => cwd.join(d),
        })
        .map(|dir| dir.join(name))
        .find(|candidate| crate::spawn::shell::is_executable(candidate))
}

/// The file that actually runs: every symlink followed and `..` taken physically.
pub fn real_file(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok()
}

/// How a walk of a path's links (see `walk_links`) ended.
#[derive(Debug, PartialEq, Eq)]
pub enum LinkWalk {
    /// A place on the way was one the caller looks for.
    Hit,
    /// The path the walk came to, every link replaced.
    End(PathBuf),
    /// More than 40 links: not a path a person reads.
    TooLong,
}

/// Walk the absolute `path` as the kernel does, a component at a time, each link replaced by its
/// target and `..` taken physically, asking `hit` of every place on the way (links are read with
/// `readlink`, never resolved all at once: `/proc/self` and its kin are then read as the analyzer's
/// own process, and the question is usually whether the path goes through them at all).
pub fn walk_links(path: &Path, hit: impl Fn(&Path) -> bool) -> LinkWalk {
    let mut at = path.to_path_buf();
    let mut hops = 0;
    'walk: loop {
        let mut prefix = PathBuf::from("/");
        if hit(&prefix) {
            return LinkWalk::Hit;
        }
        let parts: Vec<std::ffi::OsString> = at
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(n) => Some(n.to_os_string()),
                std::path::Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect();
        for (i, part) in parts.iter().enumerate() {
            if part == ".." {
                prefix.pop();
                continue;
            }
            prefix.push(part);
            if hit(&prefix) {
                return LinkWalk::Hit;
            }
            let Ok(target) = std::fs::read_link(&prefix) else {
                continue;
            };
            hops += 1;
            if hops > 40 {
                return LinkWalk::TooLong;
            }
            let mut next = prefix.parent().unwrap_or(Path::new("/")).join(target);
            for rest in &parts[i + 1..] {
                next.push(rest);
            }
            at = next;
            continue 'walk;
        }
        return LinkWalk::End(prefix);
    }
}

/// Real names that are the same program under another name (Debian's alternatives).
const IMPLEMENTATIONS: &[(&str, &[&str])] = &[
    ("awk", &["mawk", "gawk", "nawk", "original-awk"]),
    ("sh", &["dash", "bash"]),
    // Debian's alternatives name the package that provides the program.
    ("which", &["which.debianutils"]),
];

/// Whether a file whose real name is `real` is the program `name` (`cat` that is `touch` is not).
pub fn same_program(name: &str, real: &str) -> bool {
    name == real
        || IMPLEMENTATIONS
            .iter()
            .any(|(n, impls)| *n == name && impls.contains(&real))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    #[test]
    fn path_prefix_relative_entries_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("deep/inner")).unwrap();
        let tool = root.join("deep/tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        symlink(&tool, root.join("bin/cat")).unwrap();
        symlink(root.join("deep/inner"), root.join("link")).unwrap();
        // A relative PATH entry is relative to the command's directory.
        let found = lookup("cat", Some("bin:/usr/bin"), &root).unwrap();
        assert_eq!(found, root.join("bin/cat"));
        assert_eq!(real_file(&found).unwrap(), tool);
        assert_eq!(
            lookup("cat", Some(":/nonexistent"), &root.join("bin")),
            Some(root.join("bin/cat"))
        );
        // `link/../tool` is deep/tool (the kernel follows link first), not ./tool.
        let through = lookup("link/../tool", None, &root).unwrap();
        assert_eq!(real_file(&through).unwrap(), tool);
        assert!(lookup("cat", Some("/nonexistent"), &root).is_none());
        assert!(lookup("cat", None, &root).is_none());
        assert!(same_program("awk", "mawk"));
        assert!(!same_program("cat", "touch"));
        assert!(is_builtin("eval") && !is_builtin("rm"));
    }
}
