//! agent-exec: a native shell runtime for TypeScript agents.
//!
//! The core (`spawn`, `session`, `output`, `kill`) knows nothing of Node and is tested with plain
//! `cargo test`; `bindings` is the only module that touches napi.

pub mod approval;
pub mod bindings;
pub mod error;
pub mod kill;
pub mod output;
pub mod preflight;
pub mod sandbox;
pub mod session;
pub mod spawn;
#[cfg(test)]
mod test_rng;
