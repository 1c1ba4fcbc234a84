//! The container a run executes in: the scope's, made from an image on first use and reused, or one
//! the caller names.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use bollard::models::{ContainerCreateBody, HostConfig, ResourcesUlimits};
use bollard::query_parameters::{
    AttachContainerOptions, CreateContainerOptions, RemoveContainerOptions,
};
use bollard::Docker;
use tokio::io::AsyncWrite;

use super::{engine_error, ContainerSpec};
use crate::error::AgentError;

/// The label every container this runtime makes carries (with the making process's pid beside it).
pub const LABEL: &str = "dev.agent-exec.owner";

/// A container runs go to.
pub struct Target {
    pub id: String,
    /// The host directory bound in at the same path, for a container made here.
    pub workspace: Option<PathBuf>,
    /// The attach whose stdin the container's main process reads: dropped when this process ends
    /// (or the scope's container is replaced), and the container with it.
    _lifeline: std::sync::Mutex<Option<Pin<Box<dyn AsyncWrite + Send>>>>,
}

/// The scope's container for `spec` (made on first use), or the one it names.
pub async fn target(
    docker: &Docker,
    address: &str,
    spec: &ContainerSpec,
    scope: Option<&str>,
    cwd: &Path,
) -> Result<Arc<Target>, AgentError> {
    if let Some(id) = &spec.id {
        return Ok(Arc::new(Target {
            id: id.clone(),
            workspace: None,
            _lifeline: std::sync::Mutex::new(None),
        }));
    }
    let image = spec.image.clone().unwrap_or_default();
    let workspace = spec.workspace.clone().unwrap_or_else(|| cwd.to_path_buf());
    let key = (
        address.to_string(),
        image.clone(),
        scope.unwrap_or("").to_string(),
        workspace.clone(),
        spec.network.clone(),
        spec.keep,
    );
    static SCOPES: tokio::sync::Mutex<Option<HashMap<ScopeKey, Arc<Target>>>> =
        tokio::sync::Mutex::const_new(None);
    let mut scopes = SCOPES.lock().await;
    let scopes = scopes.get_or_insert_with(HashMap::new);
    if let Some(t) = scopes.get(&key) {
        if running(docker, &t.id).await {
            return Ok(t.clone());
        }
        scopes.remove(&key);
    }
    let made = Arc::new(make(docker, &image, &workspace, spec, scope).await?);
    scopes.insert(key, made.clone());
    Ok(made)
}

type ScopeKey = (String, String, String, PathBuf, Option<String>, bool);

async fn running(docker: &Docker, id: &str) -> bool {
    docker
        .inspect_container(id, None)
        .await
        .ok()
        .and_then(|c| c.state)
        .and_then(|s| s.running)
        .unwrap_or(false)
}

/// Make, start and attach to a container of `image` whose main process lives as long as our attach.
async fn make(
    docker: &Docker,
    image: &str,
    workspace: &Path,
    spec: &ContainerSpec,
    scope: Option<&str>,
) -> Result<Target, AgentError> {
    let pid = std::process::id();
    let labels = HashMap::from([
        (LABEL.to_string(), pid.to_string()),
        (
            "dev.agent-exec.scope".to_string(),
            scope.unwrap_or("").to_string(),
        ),
    ]);
    let ws = workspace.display().to_string();
    let body = ContainerCreateBody {
        image: Some(image.to_string()),
        // Reads the stdin we hold (see the module doc). A shell stays pid 1 (a command after `cat`,
        // so it does not exec it) and reaps what the runs orphan.
        cmd: Some(vec![
            "/bin/sh".into(),
            "-c".into(),
            "cat > /dev/null; exit 0".into(),
        ]),
        open_stdin: Some(true),
        stdin_once: Some(true),
        attach_stdin: Some(true),
        labels: Some(labels),
        working_dir: Some(ws.clone()),
        host_config: Some(HostConfig {
            auto_remove: Some(!spec.keep),
            binds: Some(vec![format!("{ws}:{ws}")]),
            network_mode: spec.network.clone(),
            // Explicit: an engine's defaults may exceed what this host lets it set (runc fails then).
            ulimits: Some(ulimits()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let name = format!("agent-exec-{pid}-{}", crate::util::uuid_v4());
    let created = docker
        .create_container(
            Some(CreateContainerOptions {
                name: Some(name),
                ..Default::default()
            }),
            body,
        )
        .await
        .map_err(|e| engine_error(&format!("could not make a container of {image}"), e))?;
    let id = created.id;
    let gone = |e: bollard::errors::Error, what: &str| {
        let docker = docker.clone();
        let id = id.clone();
        // Nothing of a container that never started may stay behind.
        tokio::spawn(async move {
            let _ = docker
                .remove_container(
                    &id,
                    Some(RemoveContainerOptions {
                        force: true,
                        ..Default::default()
                    }),
                )
                .await;
        });
        engine_error(what, e)
    };
    let attached = docker
        .attach_container(
            &id,
            Some(AttachContainerOptions {
                stdin: true,
                stream: true,
                ..Default::default()
            }),
        )
        .await
        .map_err(|e| gone(e, "could not attach to the scope's container"))?;
    docker
        .start_container(&id, None)
        .await
        .map_err(|e| gone(e, &format!("could not start a container of {image}")))?;
    Ok(Target {
        id,
        workspace: Some(workspace.to_path_buf()),
        _lifeline: std::sync::Mutex::new(Some(attached.input)),
    })
}

/// Open files and processes: never more than this process may have, and at most 8192 each, a figure
/// under the hard limits engines usually run with (runc cannot raise a limit above its own, and
/// Podman's default of 1048576 fails where the engine's is lower: a container that never starts).
fn ulimits() -> Vec<ResourcesUlimits> {
    const AT_MOST: u64 = 8192;
    [("nofile", Resource::Files), ("nproc", Resource::Processes)]
        .into_iter()
        .map(|(name, resource)| {
            let limit = Some(libc_rlimit(resource).min(AT_MOST) as i64);
            ResourcesUlimits {
                name: Some(name.into()),
                soft: limit,
                hard: limit,
            }
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Resource {
    Files,
    Processes,
}

/// This process's hard limit of `resource` (a generous fallback where there is no such limit).
fn libc_rlimit(resource: Resource) -> u64 {
    #[cfg(unix)]
    {
        let r = match resource {
            Resource::Files => libc::RLIMIT_NOFILE,
            Resource::Processes => libc::RLIMIT_NPROC,
        };
        let mut l = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the struct it is given.
        if unsafe { libc::getrlimit(r, &mut l) } == 0 {
            l.rlim_max
        } else {
            65536
        }
    }
    #[cfg(not(unix))]
    {
        let _ = resource;
        65536
    }
}
