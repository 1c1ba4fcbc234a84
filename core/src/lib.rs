//! agent-exec-core: the runtime of agent-exec, without Node.
//!
//! `spawn` starts a shell (pipes or a PTY, sandboxed or not), `session` drives a run (pumps, timeout,
//! drain, kill) and keeps the registry, `output` decodes and caps what it prints, `kill` ends whole
//! trees, `approval` decides whether a command may run, `sandbox` what it can reach once it runs, and
//! `error` is the typed error every layer returns. `exec` is the pipeline over them all (gate, start,
//! foreground, yield or background) that every caller goes through. The Node addon (the crate at the repository root)
//! is a thin layer of bindings over this; the Rust tests here run with plain `cargo test`.

pub mod approval;
pub mod confine;
pub mod container;
pub mod error;
pub mod exec;
pub mod git_layout;
pub mod kill;
pub mod output;
pub mod preflight;
pub mod sandbox;
pub mod session;
pub mod spawn;
#[cfg(test)]
mod test_needs;
#[cfg(test)]
mod test_rng;
pub mod util;
