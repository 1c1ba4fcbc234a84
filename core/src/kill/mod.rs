//! Ending a run's whole process tree, and what the child does right after fork so that it can be.

pub mod tree;

pub use tree::{KillReport, KillTarget};

/// The variable every process of a run inherits (`<host pid>-<session id>-<start ms>`), by which the
/// kill path finds descendants that left the run's process group. Spawn sets it; kill reads it.
pub const SESSION_MARKER_VAR: &str = "AGENT_EXEC_SESSION";
