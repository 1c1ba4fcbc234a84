//! Ending a run's whole process tree, and what the child does right after fork so that it can be.

pub mod child_setup;
pub mod tree;

pub use tree::{KillReport, KillTarget};
