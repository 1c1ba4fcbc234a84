//! The warden of an existing container (`host.container.id`): a container this process did not make
//! outlives it, and so would its runs if this process were SIGKILLed. So before the first run there,
//! one exec of ours per container reads a stdin this process holds open through its attach; when
//! this process ends (however) the engine closes that stdin and the warden SIGKILLs, from inside,
//! every process that carries one of this process's run markers, then exits. A warden found gone
//! (the container restarted) is started again before the next run.

use std::collections::HashMap;
use std::pin::Pin;

use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::Docker;
use tokio::io::AsyncWrite;

use super::engine_error;
use super::exec::{exec_running, SHELL};
use crate::error::AgentError;
use crate::kill::SESSION_MARKER_VAR;

/// Wait for the end of stdin, then SIGKILL every process whose marker starts with `$2` (this host's
/// token), a few rounds for what forks meanwhile. `$1` is the marker variable.
const WARDEN_SCRIPT: &str = r#"cat > /dev/null
for round in 1 2 3 4 5; do
  found=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    grep -qz "^$1=$2-" "$d/environ" 2>/dev/null || continue
    kill -KILL "$p" 2>/dev/null && found=1
  done
  [ -n "$found" ] || exit 0
  sleep 0.1
done"#;

/// A warden's exec and the stdin that keeps it waiting.
struct Warden {
    exec_id: String,
    _stdin: Pin<Box<dyn AsyncWrite + Send>>,
}

/// Make sure the container `container` of the engine at `address` has this process's warden.
pub async fn ensure(
    docker: &Docker,
    address: &str,
    container: &str,
    host_token: &str,
) -> Result<(), AgentError> {
    static WARDENS: tokio::sync::Mutex<Option<HashMap<(String, String), Warden>>> =
        tokio::sync::Mutex::const_new(None);
    let mut wardens = WARDENS.lock().await;
    let wardens = wardens.get_or_insert_with(HashMap::new);
    let key = (address.to_string(), container.to_string());
    if let Some(w) = wardens.get(&key) {
        if exec_running(docker, &w.exec_id).await {
            return Ok(());
        }
        wardens.remove(&key);
    }
    let created = docker
        .create_exec(
            container,
            CreateExecOptions {
                cmd: Some(vec![
                    SHELL.to_string(),
                    "-c".into(),
                    WARDEN_SCRIPT.into(),
                    "agent-exec-warden".into(),
                    SESSION_MARKER_VAR.into(),
                    host_token.into(),
                ]),
                attach_stdin: Some(true),
                attach_stdout: Some(false),
                attach_stderr: Some(false),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| engine_error("could not guard the container (warden exec create)", e))?;
    let started = docker
        .start_exec(&created.id, None)
        .await
        .map_err(|e| engine_error("could not guard the container (warden exec start)", e))?;
    let StartExecResults::Attached { input, .. } = started else {
        return Err(engine_error(
            "started the container's warden detached",
            "no stdin to hold",
        ));
    };
    wardens.insert(
        key,
        Warden {
            exec_id: created.id,
            _stdin: input,
        },
    );
    Ok(())
}
