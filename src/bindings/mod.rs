//! The only code that touches napi: JS values in, typed errors and plain objects out.

pub mod approval;
pub mod container;
pub mod errors;
pub mod exec;
pub mod fields;
pub mod forward;
pub mod options;
pub mod preflight;
pub mod sandbox;
pub mod sessions;
pub mod tool_policy;
pub mod tracking;
