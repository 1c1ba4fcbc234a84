//! One engine client per address (and TLS identity), made on first use and kept: `bollard` multiplexes
//! requests over its connection pool, so a hundred sessions share it.
//!
//! Addresses as `DOCKER_HOST` spells them: `unix://`, `npipe://` (Windows), `tcp://` (plain, or TLS
//! with client certificates: a `certPath` directory, or `DOCKER_TLS_VERIFY` with `DOCKER_CERT_PATH`
//! as Docker's CLI reads them), `https://` (TLS).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bollard::Docker;

use crate::error::AgentError;

/// How long an engine request may take before its answer starts (an exec's stream, once attached,
/// is not bounded by it).
#[cfg(target_os = "linux")]
const REQUEST_TIMEOUT_SECS: u64 = 120;

/// The address a run names, `DOCKER_HOST`, or the local Docker socket, in that order.
pub fn address(named: Option<&str>) -> String {
    named
        .map(str::to_string)
        .or_else(|| std::env::var("DOCKER_HOST").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "unix:///var/run/docker.sock".to_string())
}

/// The TLS identity of a connection: the directory holding `ca.pem`, `cert.pem` and `key.pem`.
/// Given (`certPath`), it is used; else `DOCKER_TLS_VERIFY` with `DOCKER_CERT_PATH` (default
/// `~/.docker`) for `tcp://`, as Docker's CLI does, and always for `https://`.
pub fn cert_dir(address: &str, named: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = named {
        return Some(dir.to_path_buf());
    }
    let tls_asked = address.starts_with("https://")
        || (address.starts_with("tcp://")
            && std::env::var("DOCKER_TLS_VERIFY").is_ok_and(|v| !v.is_empty()));
    if !tls_asked {
        return None;
    }
    std::env::var_os("DOCKER_CERT_PATH")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")))
}

/// The client of the engine at `address` (over TLS with the certificates in `certs`), its version
/// negotiated with the engine once.
pub async fn connect(address: &str, certs: Option<&Path>) -> Result<Docker, AgentError> {
    type Clients = HashMap<(String, Option<PathBuf>), Docker>;
    static CLIENTS: Mutex<Option<Clients>> = Mutex::new(None);
    let key = (address.to_string(), certs.map(Path::to_path_buf));
    if let Some(d) = CLIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&key)
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
    if address.starts_with("ssh://") {
        // bollard's ssh transport starts a daemonized control master (ControlPersist=yes) for each
        // connection, which would outlive this process: against "nothing outlives the host".
        return Err(AgentError::invalid_option(format!(
            "An ssh:// engine ({address}) is not built in. Forward the engine's socket instead (ssh -nNT -L /tmp/engine.sock:/run/podman/podman.sock user@host, or /var/run/docker.sock for Docker) and name it unix:///tmp/engine.sock."
        )));
    }
    let client = match certs {
        Some(dir) => tls_client(address, dir)?,
        None => Docker::connect_with_host(address).map_err(|e| unreachable(&e))?,
    };
    let client = client
        .negotiate_version()
        .await
        .map_err(|e| unreachable(&e))?;
    CLIENTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, client.clone());
    Ok(client)
}

/// A TLS client with the certificates of `dir`: the engine's CA, this client's certificate and key.
#[cfg(target_os = "linux")]
fn tls_client(address: &str, dir: &Path) -> Result<Docker, AgentError> {
    if !(address.starts_with("tcp://") || address.starts_with("https://")) {
        return Err(AgentError::invalid_option(format!(
            "host.container.certPath is for tcp:// and https:// engines; {address} is not one."
        )));
    }
    let [ca, cert, key] = ["ca.pem", "cert.pem", "key.pem"].map(|f| dir.join(f));
    if let Some(missing) = [&ca, &cert, &key].into_iter().find(|p| !p.is_file()) {
        return Err(AgentError::invalid_option(format!(
            "The engine's TLS certificates are not all there: {} is missing (a certPath or DOCKER_CERT_PATH directory holds ca.pem, cert.pem and key.pem, as Docker's CLI reads them).",
            missing.display()
        )));
    }
    Docker::connect_with_ssl(
        address,
        &key,
        &cert,
        &ca,
        REQUEST_TIMEOUT_SECS,
        bollard::API_DEFAULT_VERSION,
    )
    .map_err(|e| {
        super::engine_error(
            &format!("at {address} could not be reached over TLS"),
            format!("{e} (certificates from {})", dir.display()),
        )
    })
}

#[cfg(not(target_os = "linux"))]
fn tls_client(address: &str, _dir: &Path) -> Result<Docker, AgentError> {
    Err(AgentError::invalid_option(format!(
        "A TLS engine ({address}) is supported by the Linux builds only; here, reach the engine through a local socket (an ssh tunnel to its socket, for instance)."
    )))
}
