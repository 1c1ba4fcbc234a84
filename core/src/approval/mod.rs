//! Exec approvals: shell analysis, executable resolution, allowlist globs, safe bins, policy, store.

pub mod analyze;
pub mod blind_spots;
pub mod classify;
pub mod command_options;
mod differential;
mod differential_bash;
pub mod dispatch;
pub mod env_names;
pub mod evaluate;
pub mod gate;
pub mod getopt;
pub mod git_config;
pub mod glob;
pub mod inline_eval;
pub mod lexer;
pub mod package_config;
pub mod policy;
pub mod program_names;
pub mod readonly;
pub mod resolve;
pub mod rules;
pub mod runners;
pub mod safe_bins;
pub mod script_binding;
pub mod store;
pub mod use_log;

/// The home directory the analyzer's tests run with: one that does not exist, so no user's git
/// config (and no unreadable `/root` when the tests run as a normal user) changes what they see.
#[cfg(test)]
pub(crate) const TEST_HOME: &str = "/nonexistent/agent-exec-test-home";
