//! Which environment variables a host run drops from what it inherits, and which a model may not set
//! through the tools' `env` parameter: one table, so the JavaScript layer holds no list of its own.
//!
//! Three classes, each a superset of OpenClaw B's:
//! - [`Class::Inherited`]: B's "dangerous inherited" keys. Host runs that ask for it drop them from the
//!   host's environment, and a model may not set them.
//! - [`Class::RunsCode`]: variables that make a shell, a tool or an interpreter run code or load a
//!   library (a pager, an editor, git's config and helpers, startup files, preload options). A model
//!   may not set them; the host's own values are kept.
//! - [`Class::Override`]: proxy, TLS trust and package-index overrides: a model may not redirect where
//!   a command connects or whom it trusts.
//!
//! Names compare case-insensitively (`http_proxy` is `HTTP_PROXY`), as B compares them.

/// Why a variable is on the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Inherited,
    RunsCode,
    Override,
}

enum Name {
    Exact(&'static str),
    Prefix(&'static str),
    Suffix(&'static str),
}

use Class::*;
use Name::*;

/// The table. Order matters only between overlapping patterns: the first match decides.
const RULES: &[(Name, Class)] = &[
    // OpenClaw B's dangerous inherited keys.
    (Exact("NODE_OPTIONS"), Inherited),
    (Exact("NODE_PATH"), Inherited),
    (Exact("PYTHONPATH"), Inherited),
    (Exact("PYTHONHOME"), Inherited),
    (Exact("PYTHONSTARTUP"), Inherited),
    (Exact("PERL5LIB"), Inherited),
    (Exact("PERL5OPT"), Inherited),
    (Exact("RUBYLIB"), Inherited),
    (Exact("RUBYOPT"), Inherited),
    (Exact("BASH_ENV"), Inherited),
    (Exact("ENV"), Inherited),
    (Exact("ZDOTDIR"), Inherited),
    (Exact("PROMPT_COMMAND"), Inherited),
    (Exact("SHELL"), Inherited),
    (Exact("IFS"), Inherited),
    (Exact("SSLKEYLOGFILE"), Inherited),
    (Exact("GIT_SSH"), Inherited),
    (Exact("GIT_SSH_COMMAND"), Inherited),
    (Exact("GIT_EXEC_PATH"), Inherited),
    (Exact("GIT_CONFIG_GLOBAL"), Inherited),
    (Exact("GIT_CONFIG_SYSTEM"), Inherited),
    (Exact("GIT_CONFIG_PARAMETERS"), Inherited),
    (Exact("GIT_ASKPASS"), Inherited),
    (Prefix("LD_"), Inherited),
    (Prefix("DYLD_"), Inherited),
    (Prefix("BASH_FUNC_"), Inherited),
    // Proxies, TLS trust, package indexes (B's blocked override keys, and more of the same kind).
    (Exact("HTTP_PROXY"), Override),
    (Exact("HTTPS_PROXY"), Override),
    (Exact("ALL_PROXY"), Override),
    (Exact("FTP_PROXY"), Override),
    (Exact("NO_PROXY"), Override),
    (Exact("NODE_TLS_REJECT_UNAUTHORIZED"), Override),
    (Exact("NODE_EXTRA_CA_CERTS"), Override),
    (Exact("SSL_CERT_FILE"), Override),
    (Exact("SSL_CERT_DIR"), Override),
    (Exact("REQUESTS_CA_BUNDLE"), Override),
    (Exact("CURL_CA_BUNDLE"), Override),
    (Exact("GIT_SSL_NO_VERIFY"), Override),
    (Exact("GIT_SSL_CAINFO"), Override),
    (Exact("GIT_PROXY_COMMAND"), Override),
    (Exact("PIP_INDEX_URL"), Override),
    (Exact("PIP_EXTRA_INDEX_URL"), Override),
    (Exact("PIP_TRUSTED_HOST"), Override),
    (Exact("UV_INDEX_URL"), Override),
    (Exact("UV_EXTRA_INDEX_URL"), Override),
    // Shells: startup code, traced commands, option sets, how words split and commands are found.
    (Exact("SHELLOPTS"), RunsCode),
    (Exact("BASHOPTS"), RunsCode),
    (Exact("PS4"), RunsCode),
    (Exact("PS1"), RunsCode),
    (Exact("PS0"), RunsCode),
    (Exact("CDPATH"), RunsCode),
    (Exact("GLOBIGNORE"), RunsCode),
    (Exact("EXECIGNORE"), RunsCode),
    (Exact("BASH_XTRACEFD"), RunsCode),
    (Exact("INPUTRC"), RunsCode),
    (Exact("PATH"), RunsCode),
    // Pagers and editors that tools start on their own.
    (Exact("PAGER"), RunsCode),
    (Exact("MANPAGER"), RunsCode),
    (Suffix("_PAGER"), RunsCode),
    (Exact("LESS"), RunsCode),
    (Exact("LESSOPEN"), RunsCode),
    (Exact("LESSCLOSE"), RunsCode),
    (Exact("LESSKEY"), RunsCode),
    (Exact("LESSKEYIN"), RunsCode),
    (Exact("EDITOR"), RunsCode),
    (Exact("VISUAL"), RunsCode),
    (Exact("SUDO_EDITOR"), RunsCode),
    (Exact("SUDO_ASKPASS"), RunsCode),
    (Exact("SSH_ASKPASS"), RunsCode),
    (Suffix("_EDITOR"), RunsCode),
    // Interpreters and runtimes that load code or options from the environment.
    (Exact("PYTHONWARNINGS"), RunsCode),
    (Exact("PYTHONBREAKPOINT"), RunsCode),
    (Exact("PYTHONUSERBASE"), RunsCode),
    (Exact("PYTHONINSPECT"), RunsCode),
    (Exact("PERLLIB"), RunsCode),
    (Exact("PERL5DB"), RunsCode),
    (Exact("BUNDLE_GEMFILE"), RunsCode),
    (Exact("JAVA_TOOL_OPTIONS"), RunsCode),
    (Exact("_JAVA_OPTIONS"), RunsCode),
    (Exact("JDK_JAVA_OPTIONS"), RunsCode),
    (Exact("CLASSPATH"), RunsCode),
    (Exact("MAVEN_OPTS"), RunsCode),
    (Exact("GRADLE_OPTS"), RunsCode),
    (Exact("GCONV_PATH"), RunsCode),
    (Prefix("NPM_CONFIG_"), RunsCode),
    // git: its config (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_DIR's config), helpers, hooks, diff
    // drivers. Every GIT_ variable but the identity and prompt ones below.
    (Prefix("GIT_"), RunsCode),
    // The runtime's own switches and hooks (`AGENT_EXEC_OUTER_BASH_ENV`, which the tracked-cwd
    // start-up file sources as BASH_ENV; the sandbox's modes): the host's to set, never the model's.
    (Prefix("AGENT_EXEC_"), RunsCode),
];

/// git variables a model may set: who commits, and whether git may prompt.
const GIT_HARMLESS: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_FLUSH",
    "GIT_LFS_SKIP_SMUDGE",
];

/// The class of `key`, if it is on the list.
pub fn class_of(key: &str) -> Option<Class> {
    let upper = key.to_ascii_uppercase();
    if GIT_HARMLESS.contains(&upper.as_str()) {
        return None;
    }
    RULES.iter().find_map(|(name, class)| {
        let hit = match name {
            Exact(n) => upper == *n,
            Prefix(p) => upper.starts_with(p),
            Suffix(s) => upper.ends_with(s) && upper.len() > s.len(),
        };
        hit.then_some(*class)
    })
}

/// Whether a host run that drops dangerous inherited variables drops `key` (B's list).
pub fn drop_when_inherited(key: &str) -> bool {
    class_of(key) == Some(Class::Inherited)
}

/// Whether a model may set `key` through the tools' `env` parameter.
pub fn model_may_set(key: &str) -> bool {
    class_of(key).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_compare_case_insensitively() {
        assert_eq!(class_of("ld_preload"), Some(Inherited));
        assert_eq!(class_of("https_proxy"), Some(Override));
        assert_eq!(class_of("Http_Proxy"), Some(Override));
        assert_eq!(class_of("classpath"), Some(RunsCode));
    }

    #[test]
    fn every_variable_the_issue_names_is_refused() {
        for key in [
            "BASH_ENV",
            "ENV",
            "BASH_FUNC_ls%%",
            "SHELLOPTS",
            "PS4",
            "PROMPT_COMMAND",
            "IFS",
            "PATH",
            "LD_PRELOAD",
            "DYLD_INSERT_LIBRARIES",
            "GIT_CONFIG_COUNT",
            "GIT_CONFIG_KEY_0",
            "GIT_CONFIG_VALUE_0",
            "GIT_CONFIG_PARAMETERS",
            "GIT_EXTERNAL_DIFF",
            "GIT_PAGER",
            "GIT_DIR",
            "GIT_SSH_COMMAND",
            "PAGER",
            "SYSTEMD_PAGER",
            "MANPAGER",
            "LESSOPEN",
            "LESSCLOSE",
            "EDITOR",
            "VISUAL",
            "GIT_SEQUENCE_EDITOR",
            "NODE_OPTIONS",
            "PYTHONSTARTUP",
            "PERL5OPT",
            "CLASSPATH",
            "JAVA_TOOL_OPTIONS",
            "npm_config_script_shell",
            "HTTPS_PROXY",
            "NODE_TLS_REJECT_UNAUTHORIZED",
        ] {
            assert!(!model_may_set(key), "{key} may be set");
        }
    }

    #[test]
    fn ordinary_variables_and_git_identity_may_be_set() {
        for key in [
            "NODE_ENV",
            "DEBUG",
            "CI",
            "LANG",
            "TZ",
            "GIT_AUTHOR_NAME",
            "git_committer_email",
            "GIT_TERMINAL_PROMPT",
            "MY_PAGER_COUNT",
            "_PAGER",
        ] {
            assert!(model_may_set(key), "{key} refused");
        }
    }

    #[test]
    fn only_bs_inherited_list_is_dropped_from_the_host() {
        assert!(drop_when_inherited("NODE_OPTIONS"));
        assert!(drop_when_inherited("LD_LIBRARY_PATH"));
        // The host's own pager, proxy and classpath are the host's business.
        assert!(!drop_when_inherited("PAGER"));
        assert!(!drop_when_inherited("HTTPS_PROXY"));
        assert!(!drop_when_inherited("CLASSPATH"));
    }
}
