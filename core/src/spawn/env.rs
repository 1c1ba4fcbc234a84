//! The child's environment: the host's (unless the caller opts out), then the caller's, then the
//! non-interactive defaults of CONTRACT section 2 for pipe runs, the terminal type for PTY runs, and
//! the session marker that lets the kill path find processes which left the process group.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use super::env_policy::{class_of, Class};
use crate::error::{AgentError, ErrorCode};

/// Added to pipe runs unless the caller or the host set them: nothing may wait for a pager, an editor
/// or a credential prompt that nobody will answer.
pub const PIPE_DEFAULTS: [(&str, &str); 4] = [
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// Every process a session starts inherits this variable (the kill path's), so the kill path can
/// recognise the session's processes in `/proc` even after they left its process group.
pub use crate::kill::SESSION_MARKER_VAR;

/// Whether a host run that drops dangerous inherited variables drops `key` (see [`super::env_policy`]).
pub fn is_dangerous_key(key: &str) -> bool {
    super::env_policy::drop_when_inherited(key)
}

fn is_portable_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// OpenClaw B's checks of a model-supplied env, with its error texts.
pub fn validate_model_env(env: &[(String, String)]) -> Result<(), AgentError> {
    let forbidden = |m: String| Err(AgentError::new(ErrorCode::EnvForbidden, m));
    if env.iter().any(|(k, _)| k.eq_ignore_ascii_case("PATH")) {
        return forbidden(
            "Security Violation: Custom 'PATH' variable is forbidden during host execution.".into(),
        );
    }
    // A single code-loading variable is named on its own; proxy and trust overrides, or several at
    // once, are listed (B's two texts).
    let mut refused: Vec<(&str, Class)> = env
        .iter()
        .filter_map(|(k, _)| class_of(k).map(|c| (k.as_str(), c)))
        .collect();
    refused.sort_unstable_by_key(|(k, _)| *k);
    match refused.as_slice() {
        [] => {}
        [(one, class)] if *class != Class::Override => {
            return forbidden(format!(
            "Security Violation: Environment variable '{one}' is forbidden during host execution."
        ))
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(k, _)| *k).collect();
            return forbidden(format!(
                "Security Violation: blocked override keys: {}.",
                names.join(", ")
            ));
        }
    }
    let mut odd: Vec<&str> = env
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !is_portable_key(k))
        .collect();
    if !odd.is_empty() {
        odd.sort_unstable();
        return forbidden(format!(
            "Security Violation: invalid non-portable override keys: {}.",
            odd.join(", ")
        ));
    }
    Ok(())
}

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
    /// Drop the dangerous variables from the inherited environment.
    pub drop_dangerous: bool,
    /// Model-supplied overrides (already validated), applied before `caller`.
    pub model: &'a [(String, String)],
    pub caller: &'a [(String, String)],
    pub pty: bool,
    pub cwd: &'a Path,
    pub marker: &'a str,
    /// Where the shell's EXIT trap writes its final directory (cwd tracking).
    pub cwd_report: Option<&'a Path>,
    /// bash's `BASH_ENV` file that sets that trap (see `request::bash_cwd_trap`).
    pub cwd_trap_file: Option<&'a Path>,
    /// A sandboxed run: inherited and model variables that look like credentials are left out,
    /// except these names (see `sandbox::secrets`). `None`: nothing is left out for that reason.
    pub secrets_passed: Option<&'a [String]>,
}

/// Build the complete environment for the child.
pub fn build_env(plan: &EnvPlan<'_>) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = if plan.inherit {
        std::env::vars_os()
            .filter(|(k, _)| !(plan.drop_dangerous && is_dangerous_key(&k.to_string_lossy())))
            .collect()
    } else {
        BTreeMap::new()
    };
    for (k, v) in plan.model {
        env.insert(k.into(), v.into());
    }
    if let Some(passed) = plan.secrets_passed {
        use crate::sandbox::secrets::{is_secret, passed_on};
        env.retain(|k, v| {
            let k = k.to_string_lossy();
            !is_secret(&k, &v.to_string_lossy()) || passed_on(&k, passed)
        });
    }
    // The caller's own variables are passed on by name: kept, credentials or not.
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
    if let Some(report) = plan.cwd_report {
        env.insert("AGENT_EXEC_CWD_FILE".into(), report.as_os_str().to_owned());
    }
    if let Some(file) = plan.cwd_trap_file {
        // The caller's own BASH_ENV is kept aside; our file restores it and reads it.
        if let Some(outer) = env.remove(std::ffi::OsStr::new("BASH_ENV")) {
            env.insert("AGENT_EXEC_OUTER_BASH_ENV".into(), outer);
        }
        env.insert("BASH_ENV".into(), file.as_os_str().to_owned());
    }
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
            drop_dangerous: false,
            model: &[],
            caller: &caller,
            pty: false,
            cwd: Path::new("/tmp"),
            marker: "m1",
            cwd_report: None,
            cwd_trap_file: None,
            secrets_passed: None,
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
            drop_dangerous: false,
            model: &[],
            caller: &[],
            pty: true,
            cwd: Path::new("/"),
            marker: "m",
            cwd_report: None,
            cwd_trap_file: None,
            secrets_passed: None,
        });
        assert_eq!(env.get(&OsString::from("TERM")).unwrap(), "xterm-256color");
        assert!(!env.contains_key(&OsString::from("PAGER")));
    }

    #[test]
    fn inherit_copies_the_host_env() {
        let env = build_env(&EnvPlan {
            inherit: true,
            drop_dangerous: false,
            model: &[],
            caller: &[],
            pty: false,
            cwd: Path::new("/"),
            marker: "m",
            cwd_report: None,
            cwd_trap_file: None,
            secrets_passed: None,
        });
        assert_eq!(
            env.get(&OsString::from("PATH")),
            std::env::var_os("PATH").as_ref()
        );
    }

    #[test]
    fn model_env_policy_texts() {
        let kv = |k: &str| (k.to_string(), "x".to_string());
        let msg = |env: Vec<(String, String)>| validate_model_env(&env).unwrap_err().message;
        assert_eq!(
            msg(vec![kv("Path")]),
            "Security Violation: Custom 'PATH' variable is forbidden during host execution."
        );
        assert_eq!(
            msg(vec![kv("LD_PRELOAD")]),
            "Security Violation: Environment variable 'LD_PRELOAD' is forbidden during host execution."
        );
        assert_eq!(
            msg(vec![kv("NODE_OPTIONS"), kv("BASH_ENV")]),
            "Security Violation: blocked override keys: BASH_ENV, NODE_OPTIONS."
        );
        assert_eq!(
            msg(vec![kv("A-B"), kv("1X")]),
            "Security Violation: invalid non-portable override keys: 1X, A-B."
        );
        assert_eq!(
            msg(vec![kv("CLASSPATH")]),
            "Security Violation: Environment variable 'CLASSPATH' is forbidden during host execution."
        );
        assert_eq!(
            msg(vec![kv("HTTPS_PROXY")]),
            "Security Violation: blocked override keys: HTTPS_PROXY."
        );
        assert_eq!(
            msg(vec![kv("NODE_TLS_REJECT_UNAUTHORIZED"), kv("HTTP_PROXY")]),
            "Security Violation: blocked override keys: HTTP_PROXY, NODE_TLS_REJECT_UNAUTHORIZED."
        );
        assert!(validate_model_env(&[kv("FOO_1")]).is_ok());
        assert!(validate_model_env(&[kv("GIT_AUTHOR_NAME")]).is_ok());
        assert_eq!(
            validate_model_env(&[kv("IFS")]).unwrap_err().code,
            ErrorCode::EnvForbidden
        );
    }

    #[test]
    fn dangerous_inherited_keys_are_dropped_on_request() {
        let env = build_env(&EnvPlan {
            inherit: true,
            drop_dangerous: true,
            model: &[("M".into(), "1".into())],
            caller: &[("M".into(), "2".into())],
            pty: false,
            cwd: Path::new("/"),
            marker: "m",
            cwd_report: None,
            cwd_trap_file: None,
            secrets_passed: None,
        });
        assert!(env.keys().all(|k| !is_dangerous_key(&k.to_string_lossy())));
        assert_eq!(
            env.get(&OsString::from("M")).unwrap(),
            "2",
            "the caller's env wins over the model's"
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
