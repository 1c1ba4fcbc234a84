//! The child's environment: the host's (unless the caller opts out), then the caller's, then the
//! non-interactive defaults of CONTRACT section 2 for pipe runs, the terminal type for PTY runs, and
//! the session marker that lets the kill path find processes which left the process group.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use crate::error::{AgentError, ErrorCode};

/// Added to pipe runs unless the caller or the host set them: nothing may wait for a pager, an editor
/// or a credential prompt that nobody will answer.
pub const PIPE_DEFAULTS: [(&str, &str); 4] = [
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// Every process a session starts inherits this variable, so the kill path can recognise the
/// session's processes in `/proc` even after they left its process group.
pub const SESSION_MARKER_VAR: &str = "AGENT_EXEC_SESSION";

/// Check one caller-supplied variable.
pub fn validate_env_entry(key: &str, value: &str) -> Result<(), AgentError> {
    if key.is_empty() {
        return Err(AgentError::new(
            ErrorCode::InvalidEnv,
            "An env key is empty. Every key must be a non-empty name such as \"NODE_ENV\".",
        ));
    }
    if key.contains('=') {
        return Err(AgentError::new(
      ErrorCode::InvalidEnv,
      format!("The env key \"{key}\" contains '='. Put the name in the key and the value in the value."),
    ));
    }
    if key.contains('\0') || value.contains('\0') {
        return Err(AgentError::new(
      ErrorCode::NulByte,
      format!("The env variable \"{}\" contains a NUL byte, which no process can receive. Remove it.", key.replace('\0', "\\0")),
    ));
    }
    Ok(())
}

pub struct EnvPlan<'a> {
    pub inherit: bool,
    pub caller: &'a [(String, String)],
    pub pty: bool,
    pub cwd: &'a Path,
    pub marker: &'a str,
}

/// Build the complete environment for the child.
pub fn build_env(plan: &EnvPlan<'_>) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = if plan.inherit {
        std::env::vars_os().collect()
    } else {
        BTreeMap::new()
    };
    for (k, v) in plan.caller {
        env.insert(k.into(), v.into());
    }
    if plan.pty {
        env.entry("TERM".into())
            .or_insert_with(|| "xterm-256color".into());
    } else {
        for (k, v) in PIPE_DEFAULTS {
            env.entry(k.into()).or_insert_with(|| v.into());
        }
    }
    env.insert("PWD".into(), plan.cwd.as_os_str().to_owned());
    env.insert(SESSION_MARKER_VAR.into(), plan.marker.into());
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_wins_over_host_and_defaults_fill_gaps() {
        let caller = vec![
            ("PAGER".to_string(), "less".to_string()),
            ("X_A".into(), "1".into()),
        ];
        let env = build_env(&EnvPlan {
            inherit: false,
            caller: &caller,
            pty: false,
            cwd: Path::new("/tmp"),
            marker: "m1",
        });
        assert_eq!(env.get(&OsString::from("PAGER")).unwrap(), "less");
        assert_eq!(env.get(&OsString::from("GIT_PAGER")).unwrap(), "cat");
        assert_eq!(
            env.get(&OsString::from("GIT_TERMINAL_PROMPT")).unwrap(),
            "0"
        );
        assert_eq!(env.get(&OsString::from("X_A")).unwrap(), "1");
        assert_eq!(env.get(&OsString::from("PWD")).unwrap(), "/tmp");
        assert_eq!(env.get(&OsString::from(SESSION_MARKER_VAR)).unwrap(), "m1");
        assert!(!env.contains_key(&OsString::from("HOME")) || std::env::var_os("HOME").is_none());
    }

    #[test]
    fn pty_runs_get_a_terminal_type_and_no_pager_defaults() {
        let env = build_env(&EnvPlan {
            inherit: false,
            caller: &[],
            pty: true,
            cwd: Path::new("/"),
            marker: "m",
        });
        assert_eq!(env.get(&OsString::from("TERM")).unwrap(), "xterm-256color");
        assert!(!env.contains_key(&OsString::from("PAGER")));
    }

    #[test]
    fn inherit_copies_the_host_env() {
        let env = build_env(&EnvPlan {
            inherit: true,
            caller: &[],
            pty: false,
            cwd: Path::new("/"),
            marker: "m",
        });
        assert_eq!(
            env.get(&OsString::from("PATH")),
            std::env::var_os("PATH").as_ref()
        );
    }

    #[test]
    fn rejects_bad_keys_and_nul_bytes() {
        assert_eq!(
            validate_env_entry("", "x").unwrap_err().code,
            ErrorCode::InvalidEnv
        );
        assert_eq!(
            validate_env_entry("A=B", "x").unwrap_err().code,
            ErrorCode::InvalidEnv
        );
        assert_eq!(
            validate_env_entry("A", "x\0y").unwrap_err().code,
            ErrorCode::NulByte
        );
        assert!(validate_env_entry("A", "").is_ok());
    }
}
