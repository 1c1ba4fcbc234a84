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
