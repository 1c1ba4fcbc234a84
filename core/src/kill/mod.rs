//! Ending a run's whole process tree, and what the child does right after fork so that it can be.

#[cfg(windows)]
pub mod job;
#[cfg(unix)]
pub mod tree;

#[cfg(windows)]
pub use job::KillTarget;
#[cfg(unix)]
pub use tree::KillTarget;

/// What a kill left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KillReport {
    /// Processes still alive after the last round (SIGKILL; `TerminateJobObject` on Windows).
    pub survivors: Vec<u32>,
    /// Whether the hard kill was needed (something ignored SIGTERM for the whole grace period).
    pub escalated: bool,
}

/// How long processes sent the hard kill (SIGKILL, `TerminateJobObject`, or SIGKILL inside a container)
/// get to disappear before they are reported as survivors.
pub(crate) const KILL_SETTLE: std::time::Duration = std::time::Duration::from_millis(2000);

/// The variable every process of a run inherits (`<host token>-<session id>-<start ms>`), by which
/// the kill path finds descendants that left the run's process group. Spawn sets it; kill reads it.
pub const SESSION_MARKER_VAR: &str = "AGENT_EXEC_SESSION";

/// This process's part of every run marker: `<pid>x<8 random hex digits>`, letters and digits only,
/// unique to this process even among hosts on other machines that share a container engine (a
/// container's warden kills by it).
pub fn host_token() -> &'static str {
    static TOKEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TOKEN.get_or_init(|| {
        let random: String = crate::util::uuid_v4()
            .chars()
            .filter(char::is_ascii_hexdigit)
            .take(8)
            .collect();
        format!("{}x{random}", std::process::id())
    })
}
