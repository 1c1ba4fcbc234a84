//! agent-exec: a native shell runtime for TypeScript agents, as a Node addon.
//!
//! The runtime is the `agent-exec-core` crate (`core/`), which knows nothing of Node; this crate holds
//! the napi `bindings` and the `watchdog` (a Node process that ends the host's runs when the host
//! dies). The core's modules are re-exported under their own names.

pub use agent_exec_core::{
    approval, container, error, exec, kill, output, preflight, sandbox, session, spawn,
};

pub mod bindings;
pub mod watchdog;
