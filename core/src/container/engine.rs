//! One engine client per address, made on first use and kept: `bollard` multiplexes requests over
//! its connection pool, so a hundred sessions share it.

use std::collections::HashMap;
use std::sync::Mutex;

use bollard::Docker;

use crate::error::AgentError;

/// The address a run names, `DOCKER_HOST`, or the local Docker socket, in that order.
pub fn address(named: Option<&str>) -> String {
    named
        .map(str::to_string)
        .or_else(|| std::env::var("DOCKER_HOST").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "unix:///var/run/docker.sock".to_string())
}

/// The client of the engine at `address`, version negotiated with it once.
pub async fn connect(address: &str) -> Result<Docker, AgentError> {
    static CLIENTS: Mutex<Option<HashMap<String, Docker>>> = Mutex::new(None);
    if let Some(d) = CLIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(address)
    {
        return Ok(d.clone());
    }
    let unreachable = |e: &dyn std::fmt::Display| {
        super::engine_error(
            &format!("at {address} could not be reached"),
            format!(
                "{e}. Start it (Docker, or `podman system service`), or name another with host.container.engine or DOCKER_HOST"
            ),
        )
    };
    let client = Docker::connect_with_host(address).map_err(|e| unreachable(&e))?;
    let client = client
        .negotiate_version()
        .await
        .map_err(|e| unreachable(&e))?;
    CLIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(address.to_string(), client.clone());
    Ok(client)
}
