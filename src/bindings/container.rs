//! The container host from JS: the `host` option of `exec` (`{ container: {...} }`), checked key by key.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi::ValueType;
use napi_derive::napi;

use super::errors::BindResult;
use super::fields::Fields;
use super::sandbox::unknown_key;
use crate::container::ContainerSpec;
use crate::error::{AgentError, ErrorCode};

/// `host` of `exec`: where the run goes instead of this machine's shell.
#[napi(object, js_name = "ExecHost")]
pub struct JsExecHost {
    #[napi(ts_type = "ContainerHost")]
    pub container: Option<serde_json::Value>,
}

/// `host.container`: a container of a Docker Engine API (Docker, Podman, a remote engine).
#[napi(object, js_name = "ContainerHost")]
pub struct JsContainerHost {
    /// Make the scope's container from this image on its first run (reused by its later runs,
    /// removed when this process ends unless `keep`), the workspace bound in at the same path.
    pub image: Option<String>,
    /// Or run in this existing container (id or name), as it is.
    pub id: Option<String>,
    /// The engine: `unix:///run/podman/podman.sock`, `tcp://host:2375`; default `DOCKER_HOST`, else
    /// the local Docker socket.
    pub engine: Option<String>,
    /// The engine's TLS certificates: a directory with `ca.pem`, `cert.pem` and `key.pem` (as
    /// `DOCKER_CERT_PATH`); a `tcp://` engine is then reached over TLS (Linux builds).
    pub cert_path: Option<String>,
    /// The host directory bound into a container made from `image` (default: the first run's
    /// cwd); every run's cwd must be inside it.
    pub workspace: Option<String>,
    /// The container's network: `none`, `host`, `bridge` or a network's name (default the engine's).
    pub network: Option<String>,
    /// Keep a container made from `image` after this process ends.
    pub keep: Option<bool>,
    /// Directories put before the container's own PATH (this machine's PATH never goes in).
    pub path_prepend: Option<Vec<String>>,
}

const HOST_KEYS: [&str; 1] = ["container"];
const CONTAINER_KEYS: [&str; 8] = [
    "image",
    "id",
    "engine",
    "certPath",
    "workspace",
    "network",
    "keep",
    "pathPrepend",
];

/// The object option `name` of `f` with only the `keys` it may have (`None` when absent); `what` and
/// `shape` name it and its form in the error when it is something else.
fn settings<'a>(
    f: &Fields<'a>,
    name: &str,
    keys: &[&str],
    what: &str,
    shape: &str,
) -> BindResult<Option<Fields<'a>>> {
    let Some((t, _)) = f.object(name)? else {
        return Ok(None);
    };
    if t != ValueType::Object {
        return Err(
            AgentError::invalid_option(format!("{what} must be an object {shape}.")).into(),
        );
    }
    let obj: Object = f.obj.get(name)?.expect("checked above");
    if let Some(e) = unknown_key(&obj, keys, what)? {
        return Err(e.into());
    }
    Ok(Some(Fields { obj }))
}

/// Read the `host` option (`None` when absent: this machine).
pub fn parse_host(f: &Fields) -> BindResult<Option<ContainerSpec>> {
    const CONTAINER_SHAPE: &str =
        "{ image | id, engine?, certPath?, workspace?, network?, keep?, pathPrepend? }";
    let host_shape = format!("{{ container: {CONTAINER_SHAPE} }}");
    let Some(hf) = settings(f, "host", &HOST_KEYS, "The host option", &host_shape)? else {
        return Ok(None);
    };
    let Some(cf) = settings(
        &hf,
        "container",
        &CONTAINER_KEYS,
        "host.container",
        CONTAINER_SHAPE,
    )?
    else {
        return Err(AgentError::invalid_option(
            "The host option needs container: { image | id, ... }.",
        )
        .into());
    };
    let text = |name: &str| cf.string(name, ErrorCode::InvalidOption);
    let absolute = |name: &str| -> BindResult<Option<PathBuf>> {
        match text(name)? {
            Some(p) if !std::path::Path::new(&p).is_absolute() => Err(AgentError::invalid_option(
                format!("host.container.{name} must be an absolute path, but it is \"{p}\"."),
            )
            .into()),
            p => Ok(p.map(PathBuf::from)),
        }
    };
    let workspace = absolute("workspace")?;
    let spec = ContainerSpec {
        image: text("image")?,
        id: text("id")?,
        engine: text("engine")?,
        cert_path: absolute("certPath")?,
        workspace,
        network: text("network")?,
        keep: cf.boolean("keep")?.unwrap_or(false),
        path_prepend: cf.strings_or("pathPrepend", || {
            "host.container.pathPrepend must be an array of directory names (strings).".into()
        })?,
    };
    spec.validate()?;
    Ok(Some(spec))
}
