//! One run as an engine exec: started attached, its multiplexed output split into the session's two
//! pipes, its exit code read once the output ends, its tree ended from inside the container.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use bollard::Docker;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::{engine, engine_error, scope, ContainerSpec};
use crate::error::AgentError;
use crate::kill::{KillReport, KILL_SETTLE, SESSION_MARKER_VAR};
use crate::spawn::{ExecRequest, StdinMode};

/// The shell a run's command goes to inside the container (every image a command can run in has it).
const SHELL: &str = "/bin/sh";
/// How often the kill looks again at what is left.
const POLL: Duration = Duration::from_millis(100);
/// Podman reads detach keys from an exec's stdin even without a terminal: a sequence no program
/// writes by chance, so binary input is passed through whole.
const DETACH_KEYS: &str = "ctrl-^,ctrl-_,ctrl-^,ctrl-_,ctrl-^,ctrl-_";

/// A started run: its pid as the engine reports it (the engine host's; 0 when it does not say), its
/// pipes, the wait for its exit code, and the handle that ends it.
pub struct Spawned {
    pub pid: u32,
    pub stdin: Option<Box<dyn AsyncWrite + Send + Unpin>>,
    pub stdout: Box<dyn AsyncRead + Send + Unpin>,
    pub stderr: Box<dyn AsyncRead + Send + Unpin>,
    pub exit: tokio::sync::oneshot::Receiver<std::io::Result<i64>>,
    pub exec: Arc<ContainerExec>,
}

/// What ends a run in a container: every process there that inherited its marker.
#[derive(Debug)]
pub struct ContainerExec {
    docker: Docker,
    container: String,
    marker: String,
}

/// Start `req` in the container `spec` names (or the scope's), with the session marker `marker`.
pub async fn spawn(
    req: &ExecRequest,
    spec: &ContainerSpec,
    scope: Option<&str>,
    marker: &str,
) -> Result<Spawned, AgentError> {
    spec.validate()?;
    let address = engine::address(spec.engine.as_deref());
    let docker = engine::connect(&address).await?;
    let target = scope::target(&docker, &address, spec, scope, &req.cwd).await?;
    if let Some(ws) = &target.workspace {
        if !req.cwd.starts_with(ws) {
            return Err(AgentError::new(
                crate::error::ErrorCode::InvalidCwd,
                format!(
                    "The cwd {} is outside the container's workspace {}, the only host directory bound into it. Run inside it, or give host.container.workspace a directory that holds both.",
                    req.cwd.display(),
                    ws.display()
                ),
            ));
        }
    }
    // The caller's variables and the model's; never the host's own (another system's).
    let mut env: Vec<String> = req
        .env
        .iter()
        .chain(&req.model_env)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    env.push(format!("{SESSION_MARKER_VAR}={marker}"));
    let stdin = req.stdin == StdinMode::Pipe;
    let created = docker
        .create_exec(
            &target.id,
            CreateExecOptions {
                cmd: Some(vec![SHELL.to_string(), "-c".into(), req.command.clone()]),
                env: Some(env),
                working_dir: Some(req.cwd.display().to_string()),
                attach_stdin: Some(stdin),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                detach_keys: Some(DETACH_KEYS.to_string()),
                ..Default::default()
            },
        )
        .await
        .map_err(|e| engine_error("could not start the run (exec create)", e))?;
    let started = docker
        .start_exec(
            &created.id,
            Some(StartExecOptions {
                detach: false,
                ..Default::default()
            }),
        )
        .await
        .map_err(|e| engine_error("could not start the run (exec start)", e))?;
    let StartExecResults::Attached { mut output, input } = started else {
        return Err(engine_error(
            "started the run detached",
            "no output to read",
        ));
    };
    let pid = docker
        .inspect_exec(&created.id)
        .await
        .ok()
        .and_then(|i| i.pid)
        .and_then(|p| u32::try_from(p).ok())
        .unwrap_or(0);
    let (out_r, mut out_w) = tokio::io::duplex(256 * 1024);
    let (err_r, mut err_w) = tokio::io::duplex(256 * 1024);
    let (exit_tx, exit_rx) = tokio::sync::oneshot::channel();
    let (waiter, exec_id) = (docker.clone(), created.id.clone());
    // The container and the attach live as long as the output is read.
    let keep = target.clone();
    tokio::spawn(async move {
        use bollard::container::LogOutput;
        // A write fails only when the session stopped reading: the rest is dropped, and the exit code
        // is still read.
        while let Some(item) = output.next().await {
            match item {
                Ok(LogOutput::StdOut { message } | LogOutput::Console { message }) => {
                    let _ = out_w.write_all(&message).await;
                }
                Ok(LogOutput::StdErr { message }) => {
                    let _ = err_w.write_all(&message).await;
                }
                Ok(LogOutput::StdIn { .. }) => {}
                Err(_) => break,
            }
        }
        drop((out_w, err_w));
        let code = waiter
            .inspect_exec(&exec_id)
            .await
            .map_err(std::io::Error::other)
            .and_then(|i| {
                i.exit_code
                    .ok_or_else(|| std::io::Error::other("the engine gave no exit code"))
            });
        let _ = exit_tx.send(code);
        drop(keep);
    });
    Ok(Spawned {
        pid,
        stdin: stdin.then(|| Box::new(input) as Box<dyn AsyncWrite + Send + Unpin>),
        stdout: Box::new(out_r),
        stderr: Box::new(err_r),
        exit: exit_rx,
        exec: Arc::new(ContainerExec {
            docker,
            container: target.id.clone(),
            marker: marker.to_string(),
        }),
    })
}

/// Signal every live process of the run in the container (0: signal none) and print their pids (the
/// container's): those that inherited the run's marker, zombies left out.
const KILL_SCRIPT: &str = r#"sig=$1 mark="$2=$3" found=
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$$" ] && continue
  grep -qzxF "$mark" "$d/environ" 2>/dev/null || continue
  case $(cat "$d/stat" 2>/dev/null) in *") Z "*|"") continue ;; esac
  [ "$sig" = 0 ] || kill -"$sig" "$p" 2>/dev/null
  found="$found $p"
done
echo "$found""#;

impl ContainerExec {
    /// Send `signal` (a name, or 0) to the run's processes; their pids in the container, or `None`
    /// when the engine could not be asked (the container is gone: so is every process it held).
    async fn signal(&self, signal: &str) -> Option<Vec<u32>> {
        let created = self
            .docker
            .create_exec(
                &self.container,
                CreateExecOptions {
                    cmd: Some(vec![
                        SHELL.to_string(),
                        "-c".into(),
                        KILL_SCRIPT.into(),
                        "agent-exec-kill".into(),
                        signal.to_string(),
                        SESSION_MARKER_VAR.to_string(),
                        self.marker.clone(),
                    ]),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .ok()?;
        let StartExecResults::Attached { mut output, .. } =
            self.docker.start_exec(&created.id, None).await.ok()?
        else {
            return None;
        };
        let mut text = Vec::new();
        while let Some(Ok(chunk)) = output.next().await {
            if let bollard::container::LogOutput::StdOut { message } = chunk {
                text.extend_from_slice(&message);
            }
        }
        Some(
            String::from_utf8_lossy(&text)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect(),
        )
    }

    /// SIGTERM the run's processes, wait up to `grace` for them to end, then SIGKILL what is left.
    pub async fn kill_tree(&self, grace: Duration) -> KillReport {
        let mut report = KillReport::default();
        let none_left = |found: Option<Vec<u32>>| found.is_none_or(|f| f.is_empty());
        if none_left(self.signal("TERM").await) {
            return report;
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            tokio::time::sleep(POLL).await;
            if none_left(self.signal("0").await) {
                return report;
            }
        }
        report.escalated = true;
        let deadline = Instant::now() + KILL_SETTLE;
        loop {
            let left = self.signal("KILL").await.unwrap_or_default();
            if left.is_empty() || Instant::now() >= deadline {
                // Pids as the container numbers them: what can be said of a remote engine's.
                report.survivors = left;
                return report;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// SIGKILL the run's processes, not waiting (the host is going away): on the runtime if one is
    /// running here.
    pub fn kill_now(self: &Arc<Self>) {
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let me = self.clone();
            rt.spawn(async move { me.signal("KILL").await });
        }
    }
}
