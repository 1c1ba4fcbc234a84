//! From a validated request to a running child: shell choice, environment, working directory, and the
//! spawn itself. [`process::spawn`] is the one entry: it picks the way (pipes, PTY, fork-free or not,
//! namespaced or not) and returns one [`process::Process`] handle.

pub mod child_setup;
#[cfg(target_os = "linux")]
pub mod clone3;
#[cfg(windows)]
pub mod conpty;
pub mod env;
pub mod env_policy;
#[cfg(target_os = "linux")]
pub mod exit_watch;
#[cfg(target_os = "linux")]
pub mod namespaced;
pub mod pipes;
#[cfg(target_os = "linux")]
pub mod posix;
pub mod process;
#[cfg(unix)]
pub mod pty;
/// On Windows the terminal is a ConPTY, driven through the same `PtyMaster` calls.
#[cfg(windows)]
pub use conpty as pty;
pub mod request;
pub mod sandboxed;
pub mod shell;
#[cfg(target_os = "linux")]
pub mod tracking;
#[cfg(windows)]
pub mod windows;
// Plain string functions, compiled and tested everywhere; used by the Windows spawn.
#[cfg_attr(not(windows), allow(dead_code))]
pub mod windows_args;

pub use request::{ExecRequest, StdinMode};
