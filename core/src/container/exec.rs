//! One run as an engine exec: started attached, its multiplexed output split into the session's two
//! pipes, its exit code read once the output ends, its tree ended from inside the container.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bollard::exec::{CreateExecOptions, ResizeExecOptions, StartExecOptions, StartExecResults};
use bollard::models::ExecConfig;
use bollard::Docker;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::{engine, engine_error, scope, warden, ContainerSpec};
use crate::error::AgentError;
use crate::kill::{KillReport, KILL_SETTLE, SESSION_MARKER_VAR};
use crate::spawn::env::PIPE_DEFAULTS;
use crate::spawn::process::Io;
use crate::spawn::request::{cwd_trap_line, PtySize};
use crate::spawn::{ExecRequest, StdinMode};

/// The shell a run's command goes to inside the container (every image a command can run in has it).
pub(super) const SHELL: &str = "/bin/sh";
/// How often the kill looks again at what is left.
const POLL: Duration = Duration::from_millis(100);
/// Between the two looks that must both find nothing before a kill says nothing is left.
const CONFIRM_PAUSE: Duration = Duration::from_millis(20);
/// Podman reads detach keys from an exec's stdin even without a terminal: a sequence no program
/// writes by chance, so binary input is passed through whole.
const DETACH_KEYS: &str = "ctrl-^,ctrl-_,ctrl-^,ctrl-_,ctrl-^,ctrl-_";

/// Where a run in a container reports its last directory (`trackCwd`): a file of the container's
/// own, named by the run's marker, read and removed by the runtime after the run.
const CWD_REPORT_DIR: &str = "/tmp";
/// The variable that carries `ContainerSpec::path_prepend` into the run, spent by its first line.
const PREPEND_VAR: &str = "AGENT_EXEC_PREPEND_PATH";
/// How long reading a run's cwd report may take before the run's end is reported without it.
const CWD_READ_LIMIT: Duration = Duration::from_secs(5);

/// A started run: its pid as the engine reports it (the engine host's; 0 when it does not say), its
/// pipes or terminal, the wait for its exit code, and the handle that ends it.
pub struct Spawned {
    pub pid: u32,
    pub io: Io,
    pub exit: tokio::sync::oneshot::Receiver<std::io::Result<i64>>,
    pub exec: Arc<ContainerExec>,
    /// Where the run reports its last directory in the container (`trackCwd`).
    pub cwd_report: Option<std::path::PathBuf>,
    /// What the caller should know about the start (a terminal left at the engine's size).
    pub warnings: Vec<String>,
}

/// What ends a run in a container: every process there that inherited its marker.
#[derive(Debug)]
pub struct ContainerExec {
    docker: Docker,
    container: String,
    marker: String,
    /// The host directory bound at the same path (a container made from an image): the only
    /// directories a run's last cwd may name for the next run.
    workspace: Option<std::path::PathBuf>,
}

/// A run's terminal in the container (an exec with `Tty`): the attach's raw output and input, and the
/// engine's resize of the exec's terminal.
pub struct ContainerTty {
    output: tokio::sync::Mutex<Box<dyn AsyncRead + Send + Unpin>>,
    input: tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>,
    docker: Docker,
    exec_id: String,
}

impl ContainerTty {
    /// Output as the terminal shows it; `Ok(0)` at its end.
    pub async fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.output.lock().await.read(buf).await
    }

    pub async fn write_all(&self, data: &[u8]) -> std::io::Result<()> {
        let mut input = self.input.lock().await;
        input.write_all(data).await?;
        input.flush().await
    }

    /// The engine resizes the exec's terminal (its programs get SIGWINCH).
    pub async fn resize(&self, size: PtySize) -> Result<(), AgentError> {
        resize(&self.docker, &self.exec_id, size).await
    }
}

async fn resize(docker: &Docker, exec_id: &str, size: PtySize) -> Result<(), AgentError> {
    docker
        .resize_exec(
            exec_id,
            ResizeExecOptions {
                height: size.rows,
                width: size.cols,
            },
        )
        .await
        .map_err(|e| engine_error("could not resize the run's terminal", e))
}

/// The variables of a run in a container: the caller's and the model's, never the host's own (they
/// describe another system); the pipe defaults or `TERM` as a local run gets them; the marker.
fn run_env(
    req: &ExecRequest,
    spec: &ContainerSpec,
    marker: &str,
    cwd_report: Option<&str>,
) -> Vec<String> {
    let mut env: Vec<(String, String)> = req.env.iter().chain(&req.model_env).cloned().collect();
    let has = |env: &[(String, String)], k: &str| env.iter().any(|(n, _)| n == k);
    if req.pty.is_some() {
        if !has(&env, "TERM") {
            env.push(("TERM".into(), "xterm-256color".into()));
        }
    } else {
        for (k, v) in PIPE_DEFAULTS {
            if !has(&env, k) {
                env.push((k.into(), v.into()));
            }
        }
    }
    if !spec.path_prepend.is_empty() {
        env.push((PREPEND_VAR.into(), spec.path_prepend.join(":")));
    }
    if let Some(file) = cwd_report {
        env.push(("AGENT_EXEC_CWD_FILE".into(), file.into()));
    }
    env.push((SESSION_MARKER_VAR.into(), marker.into()));
    env.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
}

/// The script the container's shell runs: the command, after one first line of ours when needed (the
/// container's PATH extended, the cwd trap), so the command's own line numbers stay its own.
fn run_script(req: &ExecRequest, spec: &ContainerSpec) -> String {
    let mut first = String::new();
    if !spec.path_prepend.is_empty() {
        first.push_str(&format!(
            "export PATH=\"${PREPEND_VAR}:$PATH\"; unset {PREPEND_VAR}; "
        ));
    }
    if let Some(size) = req.pty {
        // The terminal sized from inside, before the command draws anything: an engine sizes an
        // exec's terminal from the API only once it runs (a race with the command's first
        // `stty size`), and Podman ignores a size given at creation.
        first.push_str(&format!(
            "stty rows {} cols {} 2>/dev/null; ",
            size.rows, size.cols
        ));
    }
    if req.cwd_report.is_some() {
        first.push_str(cwd_trap_line());
    }
    format!("{first}{}", req.command)
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
    let certs = engine::cert_dir(&address, spec.cert_path.as_deref());
    let docker = engine::connect(&address, certs.as_deref()).await?;
    let target = scope::target(&docker, &address, spec, scope, &req.cwd).await?;
    if spec.id.is_some() {
        // A container we did not make outlives us: its warden ends our runs there if we die.
        warden::ensure(&docker, &address, &target.id, crate::kill::host_token()).await?;
    }
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
    let cwd_report = req
        .cwd_report
        .is_some()
        .then(|| format!("{CWD_REPORT_DIR}/.agent-exec-cwd-{marker}"));
    let tty = req.pty;
    // A terminal always takes input (keys); pipes only when asked.
    let stdin = tty.is_some() || req.stdin == StdinMode::Pipe;
    let created = docker
        .create_exec(
            &target.id,
            ExecConfig {
                cmd: Some(vec![SHELL.to_string(), "-c".into(), run_script(req, spec)]),
                env: Some(run_env(req, spec, marker, cwd_report.as_deref())),
                working_dir: Some(req.cwd.display().to_string()),
                attach_stdin: Some(stdin),
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                tty: Some(tty.is_some()),
                console_size: tty.map(|t| vec![t.rows.into(), t.cols.into()]),
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
                tty: tty.is_some(),
                output_capacity: None,
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
    let mut warnings = Vec::new();
    if let Some(size) = tty {
        // Also through the API, for an image without `stty`. A run that already ended cannot be
        // resized, and needs no size: only a refusal for a running exec is said.
        if let Err(e) = resize(&docker, &created.id, size).await {
            if exec_running(&docker, &created.id).await {
                warnings.push(format!(
                    "Warning: the terminal may keep the engine's default size: {}",
                    e.message
                ));
            }
        }
    }
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
    let io = match tty {
        // One stream, as a terminal has: the engine merges stderr into it.
        Some(_) => Io::ContainerTty(Arc::new(ContainerTty {
            output: tokio::sync::Mutex::new(Box::new(out_r)),
            input: tokio::sync::Mutex::new(Box::new(input)),
            docker: docker.clone(),
            exec_id: created.id.clone(),
        })),
        None => Io::pipes(stdin.then_some(input), out_r, err_r),
    };
    Ok(Spawned {
        pid,
        io,
        exit: exit_rx,
        exec: Arc::new(ContainerExec {
            docker,
            container: target.id.clone(),
            marker: marker.to_string(),
            workspace: target.workspace.clone(),
        }),
        cwd_report: cwd_report.map(Into::into),
        warnings,
    })
}

/// Whether the engine says the exec `id` still runs (`false` when it cannot say).
pub(super) async fn exec_running(docker: &Docker, id: &str) -> bool {
    docker
        .inspect_exec(id)
        .await
        .ok()
        .and_then(|i| i.running)
        .unwrap_or(false)
}

/// Whether a look at the run's processes found none (or could not look: the container is gone, and
/// every process it held with it).
fn none_left(found: Option<Vec<u32>>) -> bool {
    found.is_none_or(|f| f.is_empty())
}

/// Print a run's cwd report (a regular file, not a link, at most 64 KiB) and remove it: in the
/// container, whose files only the engine can read.
const READ_CWD_SCRIPT: &str = r#"f=$1
if [ -f "$f" ] && [ ! -L "$f" ]; then head -c 65536 "$f"; fi
rm -f "$f""#;

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
        let text = self
            .run_script(
                KILL_SCRIPT,
                &[
                    "agent-exec-kill",
                    signal,
                    SESSION_MARKER_VAR,
                    self.marker.as_str(),
                ],
            )
            .await?;
        Some(
            String::from_utf8_lossy(&text)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect(),
        )
    }

    /// Run one of the runtime's own scripts in the container (`args`: `$0` first) and return what it
    /// printed; `None` when the engine could not be asked (the container is gone).
    async fn run_script(&self, script: &str, args: &[&str]) -> Option<Vec<u8>> {
        let mut cmd = vec![SHELL.to_string(), "-c".into(), script.into()];
        cmd.extend(args.iter().map(|a| a.to_string()));
        let created = self
            .docker
            .create_exec(
                &self.container,
                CreateExecOptions {
                    cmd: Some(cmd),
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
        Some(text)
    }

    /// The directory the run ended in (`trackCwd`), read from its report in the container, which is
    /// removed. Only a directory of the bound workspace is given back: it is the same path on this
    /// machine, where the next run's cwd is checked; anything else (the container's own `/`, or a
    /// report the run replaced with a link, a FIFO or a huge file) gives `None`.
    pub async fn final_cwd(&self, report: &std::path::Path) -> Option<String> {
        let report = report.display().to_string();
        let args = ["agent-exec-cwd", report.as_str()];
        let read = self.run_script(READ_CWD_SCRIPT, &args);
        let text = tokio::time::timeout(CWD_READ_LIMIT, read).await.ok()??;
        let dir = String::from_utf8(text).ok()?;
        let dir = dir.trim_end_matches('\n');
        let workspace = self.workspace.as_ref()?;
        let path = std::path::Path::new(dir);
        (path.is_absolute() && path.starts_with(workspace) && path.is_dir())
            .then(|| dir.to_string())
    }

    /// SIGTERM the run's processes, wait up to `grace` for them to end, then SIGKILL what is left.
    pub async fn kill_tree(&self, grace: Duration) -> KillReport {
        let mut report = KillReport::default();
        if none_left(self.signal("TERM").await) && self.none_left_now().await {
            return report;
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            tokio::time::sleep(POLL).await;
            if none_left(self.signal("0").await) && self.none_left_now().await {
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

    /// A second look, a moment after one that found nothing: a process caught in the middle of an
    /// exec shows no environment, so no marker, for that moment (see `kill::tree`'s reads).
    async fn none_left_now(&self) -> bool {
        tokio::time::sleep(CONFIRM_PAUSE).await;
        none_left(self.signal("0").await)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(prepend: &[&str]) -> ContainerSpec {
        ContainerSpec {
            image: Some("x".into()),
            path_prepend: prepend.iter().map(|p| p.to_string()).collect(),
            ..ContainerSpec::default()
        }
    }

    #[test]
    fn our_first_line_comes_before_the_command_and_only_with_what_asks_for_it() {
        let mut req = ExecRequest::new("echo hi\necho there");
        assert_eq!(run_script(&req, &spec(&[])), "echo hi\necho there");
        req.pty = Some(PtySize { cols: 91, rows: 27 });
        req.cwd_report = Some("/x".into());
        let script = run_script(&req, &spec(&["/opt/a", "/opt/b"]));
        let (first, rest) = script.split_once('\n').unwrap();
        assert_eq!(rest, "echo there");
        // PATH first (stty is found through it), then the size, then the trap, then the command.
        let parts: Vec<&str> = first.split("; ").collect();
        assert!(parts[0].starts_with("export PATH=\"$AGENT_EXEC_PREPEND_PATH:$PATH\""));
        assert_eq!(parts[1], "unset AGENT_EXEC_PREPEND_PATH");
        assert_eq!(parts[2], "stty rows 27 cols 91 2>/dev/null");
        assert!(parts[3].starts_with("trap 'pwd -P"));
        assert_eq!(*parts.last().unwrap(), "echo hi");
    }

    #[test]
    fn the_run_gets_the_callers_variables_and_the_defaults_of_its_kind_never_the_hosts() {
        let mut req = ExecRequest::new("true");
        req.env = vec![("PAGER".into(), "less".into())];
        req.model_env = vec![("M".into(), "1".into())];
        let env = run_env(&req, &spec(&["/opt/a", "/opt/b"]), "mark", Some("/tmp/r"));
        assert!(
            env.contains(&"PAGER=less".to_string()),
            "the caller's value wins"
        );
        assert!(!env.contains(&"PAGER=cat".to_string()));
        assert!(env.contains(&"GIT_PAGER=cat".to_string()));
        assert!(env.contains(&"M=1".to_string()));
        assert!(env.contains(&"AGENT_EXEC_PREPEND_PATH=/opt/a:/opt/b".to_string()));
        assert!(env.contains(&"AGENT_EXEC_CWD_FILE=/tmp/r".to_string()));
        assert!(env.contains(&format!("{SESSION_MARKER_VAR}=mark")));
        assert!(!env
            .iter()
            .any(|e| e.starts_with("PATH=") || e.starts_with("HOME=")));
        req.pty = Some(PtySize { cols: 80, rows: 24 });
        let env = run_env(&req, &spec(&[]), "mark", None);
        assert!(env.contains(&"TERM=xterm-256color".to_string()));
        assert!(!env.iter().any(|e| e.starts_with("GIT_PAGER=")));
        req.env.push(("TERM".into(), "vt100".into()));
        let env = run_env(&req, &spec(&[]), "mark", None);
        assert!(env.contains(&"TERM=vt100".to_string()));
        assert!(!env.contains(&"TERM=xterm-256color".to_string()));
    }

    #[test]
    fn path_prepend_entries_are_single_directories() {
        for bad in ["", "/a:/b", "/a\0b"] {
            let e = spec(&[bad]).validate().unwrap_err();
            assert_eq!(e.code, crate::error::ErrorCode::InvalidOption, "{bad:?}");
        }
        assert!(spec(&["/opt/a"]).validate().is_ok());
    }
}
