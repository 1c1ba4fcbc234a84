//! The container host (issue 37): a run inside a container of a Docker Engine API (Docker, Podman's
//! `podman system service`, a remote engine), behind the same session machinery as a local run.
//!
//! - [`engine`]: one client per engine address (`DOCKER_HOST` form), through `bollard`.
//! - [`scope`]: the container of a scope, made from an image on first use, the run's workspace bound
//!   in at the same path, reused by the scope's later runs; or a container the caller names, used as
//!   it is. A container we make dies with this process: its main process reads a stdin we hold open
//!   through an attach, so when we die (SIGKILL included) the engine closes it, the container exits
//!   and the engine removes it (`AutoRemove`).
//! - [`warden`]: in a container we did not make (`id`), one exec of ours that waits on a stdin we
//!   hold and, when we die, kills every process carrying one of our run markers.
//! - [`exec`]: one run as an engine exec, its output demultiplexed into the session's pipes, its exit
//!   code read when the output ends, and its whole tree ended from inside the container: every
//!   process that inherited the run's marker variable (the Engine API has no exec kill).
//!
//! Approvals are decided before anything is sent to the engine (`exec::execute` gates first).

mod engine;
mod exec;
mod scope;
mod warden;

pub use exec::{spawn, ContainerExec, ContainerTty, Spawned};

use std::path::PathBuf;

use crate::error::{AgentError, ErrorCode};

/// Where a run goes instead of this machine's shell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerSpec {
    /// Make the scope's container from this image (the engine's name for it: `localhost/x:tag`, an
    /// id, or a registry name the engine may pull).
    pub image: Option<String>,
    /// Or run in this existing container (id or name), as it is: nothing is made, bound or removed.
    pub id: Option<String>,
    /// The engine (`unix:///run/podman/podman.sock`, `tcp://host:2375`); default `DOCKER_HOST`, else
    /// the local Docker socket.
    pub engine: Option<String>,
    /// The engine's TLS certificates (`ca.pem`, `cert.pem`, `key.pem`), as `DOCKER_CERT_PATH` names
    /// them: a `tcp://` engine is then reached over TLS.
    pub cert_path: Option<PathBuf>,
    /// The host directory bound into a container made from `image`, at the same path (default: the
    /// first run's cwd). Each run's cwd must be inside it.
    pub workspace: Option<PathBuf>,
    /// The container's network (`none`, `host`, `bridge`, a network's name); default the engine's.
    pub network: Option<String>,
    /// Leave a container made from `image` behind when this process ends (default: removed).
    pub keep: bool,
    /// Directories put before the container's own PATH (OpenClaw's `pathPrepend`); this machine's
    /// PATH never goes in, it names another system's directories.
    pub path_prepend: Vec<String>,
}

impl ContainerSpec {
    pub fn validate(&self) -> Result<(), AgentError> {
        match (&self.image, &self.id) {
            (Some(_), Some(_)) => Err(AgentError::invalid_option(
                "host.container takes an image (a container is made for the scope) or an id (an existing container), not both.",
            )),
            (None, None) => Err(AgentError::invalid_option(
                "host.container needs an image (a container is made for the scope) or an id (an existing container).",
            )),
            _ => Ok(()),
        }?;
        // An entry is one directory of a PATH: no separator, nothing a variable cannot hold.
        if let Some(bad) = self
            .path_prepend
            .iter()
            .find(|d| d.is_empty() || d.contains([':', '\0']))
        {
            return Err(AgentError::invalid_option(format!(
                "host.container.pathPrepend entries are single directories: \"{}\" is empty or holds ':' or a NUL byte.",
                bad.escape_debug()
            )));
        }
        Ok(())
    }
}

/// An engine's refusal or absence, as the caller's typed error.
pub(crate) fn engine_error(what: &str, e: impl std::fmt::Display) -> AgentError {
    AgentError::new(
        ErrorCode::ContainerEngine,
        format!("The container engine {what}: {e}"),
    )
}

#[cfg(test)]
mod tests;
