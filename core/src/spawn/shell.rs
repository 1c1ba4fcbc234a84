//! Which shell runs the command, as OpenClaw B chooses it: `$SHELL -c`, fish replaced by bash (or sh),
//! `sh` when `$SHELL` is unset, never a login shell.

use std::path::{Path, PathBuf};

use crate::error::{AgentError, ErrorCode};

/// The shell program and the arguments that precede the command string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellConfig {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Set when `$SHELL` could not be used and another shell was picked.
    pub warning: Option<String>,
}

impl ShellConfig {
    /// The shell's arguments followed by `script`, as an exec of the shell takes them.
    pub fn args_with<'a>(&'a self, script: &'a str) -> Vec<&'a std::ffi::OsStr> {
        self.args
            .iter()
            .map(|a| a.as_ref())
            .chain(std::iter::once(script.as_ref()))
            .collect()
    }

    /// The shell run under `wrapper` (a sandbox that works by wrapping the shell), or as it is.
    pub fn wrapped(self, wrapper: Option<crate::sandbox::ShellWrapper>) -> ShellConfig {
        let Some(w) = wrapper else {
            return self;
        };
        let mut args = w.args;
        args.push(self.program.display().to_string());
        args.extend(self.args);
        ShellConfig {
            program: w.program,
            args,
            warning: self.warning,
        }
    }
}

/// Resolve the shell. `requested` is the caller's `shell` option; `env_shell` is `$SHELL`; `path` is
/// the `PATH` used to look names up.
pub fn resolve_shell(
    requested: Option<&str>,
    env_shell: Option<&str>,
    path: Option<&str>,
) -> Result<ShellConfig, AgentError> {
    if let Some(name) = requested {
        let name = name.trim();
        if name.is_empty() {
            return Err(AgentError::new(
        ErrorCode::UnknownShell,
        "The shell option is empty. Pass a shell name such as \"bash\" or an absolute path, or leave it out to use $SHELL.",
      ));
        }
        let program = find_executable(name, path).ok_or_else(|| {
      AgentError::new(
        ErrorCode::UnknownShell,
        format!("Shell \"{name}\" was not found or is not executable. Pass an installed shell such as \"bash\" or \"sh\", or an absolute path."),
      )
    })?;
        return Ok(config_for(replace_fish(program, path), None));
    }

    // Windows never reads $SHELL, as OpenClaw B: there it is Git Bash's or MSYS's POSIX path
    // (`/usr/bin/bash`), which cmd-style quoting and the Job Object cannot run as a shell.
    let env_shell = if cfg!(windows) { None } else { env_shell };
    let from_env = env_shell.map(str::trim).filter(|s| !s.is_empty());
    match from_env {
        None => Ok(config_for(default_sh(path), None)),
        Some(shell) => match find_executable(shell, path) {
            Some(program) => Ok(config_for(replace_fish(program, path), None)),
            None => {
                let fallback = default_sh(path);
                let warning = format!(
                    "Warning: $SHELL ({shell}) is not executable; using {}.",
                    fallback.display()
                );
                Ok(config_for(fallback, Some(warning)))
            }
        },
    }
}

fn config_for(program: PathBuf, warning: Option<String>) -> ShellConfig {
    #[cfg(windows)]
    let args = if is_powershell(&program) {
        vec![
            "-NoProfile".into(),
            "-NonInteractive".into(),
            "-Command".into(),
        ]
    } else {
        vec!["/d".into(), "/s".into(), "/c".into()]
    };
    #[cfg(not(windows))]
    let args = vec!["-c".to_string()];
    ShellConfig {
        program,
        args,
        warning,
    }
}

#[cfg(windows)]
fn is_powershell(program: &Path) -> bool {
    let name = program
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name == "pwsh" || name == "powershell"
}

/// fish does not take POSIX `-c` scripts: use bash, else sh, else fish itself.
fn replace_fish(program: PathBuf, path: Option<&str>) -> PathBuf {
    let is_fish = program.file_name().is_some_and(|n| n == "fish");
    if !is_fish {
        return program;
    }
    find_executable("bash", path)
        .or_else(|| find_executable("sh", path))
        .unwrap_or(program)
}

fn default_sh(path: Option<&str>) -> PathBuf {
    #[cfg(windows)]
    {
        windows_shell(|name| std::env::var(name).ok(), path)
    }
    #[cfg(not(windows))]
    find_executable("sh", path).unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

/// The Windows shell as OpenClaw B picks it: PowerShell 7 where it is installed
/// (`%ProgramFiles%`, `%ProgramW6432%`, then `pwsh` on `PATH`), then Windows PowerShell 5.1
/// (`%SystemRoot%\System32\WindowsPowerShell\v1.0`, then `powershell` on `PATH`), and `cmd.exe`
/// (`%ComSpec%`) on a system with no PowerShell at all. `var` reads an environment variable.
#[cfg_attr(not(windows), allow(dead_code))]
fn windows_shell(var: impl Fn(&str) -> Option<String>, path: Option<&str>) -> PathBuf {
    let under = |root: &str, rest: &str| {
        var(root)
            .filter(|r| !r.is_empty())
            .map(|r| PathBuf::from(format!("{r}\\{rest}")))
    };
    let candidates = [
        under("ProgramFiles", "PowerShell\\7\\pwsh.exe"),
        under("ProgramW6432", "PowerShell\\7\\pwsh.exe"),
        find_executable("pwsh.exe", path),
        under(
            "SystemRoot",
            "System32\\WindowsPowerShell\\v1.0\\powershell.exe",
        ),
        find_executable("powershell.exe", path),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| is_executable(p))
        .or_else(|| var("ComSpec").filter(|c| !c.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("cmd.exe"))
}

/// Look a program up: a name with a separator is taken as a path, a bare name is searched on `path`.
pub fn find_executable(name: &str, path: Option<&str>) -> Option<PathBuf> {
    if name.contains('/') || (cfg!(windows) && name.contains('\\')) {
        let p = PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    let path = path
        .map(str::to_string)
        .or_else(|| std::env::var("PATH").ok())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

pub fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).is_ok()
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn unset_shell_gives_sh() {
        let s = resolve_shell(None, None, None).unwrap();
        assert_eq!(s.program.file_name().unwrap(), "sh");
        assert_eq!(s.args, vec!["-c"]);
        assert!(s.warning.is_none());
        let s = resolve_shell(None, Some("  "), None).unwrap();
        assert_eq!(s.program.file_name().unwrap(), "sh");
    }

    #[test]
    fn env_shell_is_used_and_fish_is_replaced() {
        let s = resolve_shell(None, Some("/bin/bash"), None).unwrap();
        assert_eq!(s.program, PathBuf::from("/bin/bash"));
        let dir = tempfile::tempdir().unwrap();
        let fish = dir.path().join("fish");
        std::fs::write(&fish, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fish, std::fs::Permissions::from_mode(0o755)).unwrap();
        let s = resolve_shell(None, Some(fish.to_str().unwrap()), None).unwrap();
        assert_eq!(s.program.file_name().unwrap(), "bash");
    }

    #[test]
    fn broken_env_shell_falls_back_with_a_warning() {
        let s = resolve_shell(None, Some("/nonexistent/zsh"), None).unwrap();
        assert_eq!(s.program.file_name().unwrap(), "sh");
        assert!(s.warning.unwrap().contains("/nonexistent/zsh"));
    }

    #[test]
    fn windows_shell_order_is_pwsh_7_then_windows_powershell_then_cmd() {
        // The Windows paths are joined with backslashes; on Linux such a path is one file name inside
        // the temp dir, which is enough to check the order.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root").display().to_string();
        let make = |rest: &str| {
            let p = PathBuf::from(format!("{root}\\{rest}"));
            std::fs::write(&p, "").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let vars = |comspec: Option<&str>| {
            let root = root.clone();
            let comspec = comspec.map(str::to_string);
            move |name: &str| match name {
                "ProgramFiles" | "ProgramW6432" | "SystemRoot" => Some(root.clone()),
                "ComSpec" => comspec.clone(),
                _ => None,
            }
        };
        let empty = Some("/nonexistent");
        assert_eq!(windows_shell(vars(None), empty), PathBuf::from("cmd.exe"));
        assert_eq!(
            windows_shell(vars(Some("C:\\Windows\\system32\\cmd.exe")), empty),
            PathBuf::from("C:\\Windows\\system32\\cmd.exe")
        );
        let ps51 = make("System32\\WindowsPowerShell\\v1.0\\powershell.exe");
        assert_eq!(windows_shell(vars(None), empty), ps51);
        let bin = tempfile::tempdir().unwrap();
        std::fs::write(bin.path().join("pwsh.exe"), "").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            bin.path().join("pwsh.exe"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let on_path = bin.path().display().to_string();
        assert_eq!(
            windows_shell(vars(None), Some(&on_path)),
            bin.path().join("pwsh.exe")
        );
        let pwsh7 = make("PowerShell\\7\\pwsh.exe");
        assert_eq!(windows_shell(vars(None), Some(&on_path)), pwsh7);
    }

    #[test]
    fn unknown_requested_shell_is_an_error() {
        let e = resolve_shell(Some("no-such-shell-xyz"), None, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownShell);
        assert!(e.message.contains("no-such-shell-xyz"));
        let e = resolve_shell(Some(""), None, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownShell);
        assert_eq!(
            resolve_shell(Some("bash"), None, None)
                .unwrap()
                .program
                .file_name()
                .unwrap(),
            "bash"
        );
    }
}
