//! Nothing outlives the host. Two mechanisms, because no single one covers every way Node can end:
//!
//! - `Registry::kill_all_now`, run from Node's environment cleanup hook, ends every running session when Node
//!   exits normally or through an uncaught exception.
//! - A watchdog process, started once per host, notices the host's death by the end of a pipe only the
//!   host holds, whatever killed it (SIGKILL included), then kills every process carrying one of this
//!   host's session markers (`<host token>-...`) and every process in one of this host's run cgroups
//!   (`agent-exec-<host pid>-*`, which also holds descendants that cleared the marker). It is the Node
//!   binary itself running a short script, so nothing extra ships. It runs in its own session, so
//!   signals aimed at the host's terminal or process group do not reach it.

use std::sync::{Mutex, OnceLock};

const SCRIPT: &str = r#"
const fs = require('fs');
const prefix = Buffer.from('\0AGENT_EXEC_SESSION=' + process.env.AGENT_EXEC_HOST_TOKEN + '-');
const cgroupParents = process.argv.slice(2);
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => {});
function hostCgroups() {
  const dirs = [];
  for (const parent of cgroupParents) {
    let names = [];
    try { names = fs.readdirSync(parent); } catch { continue; }
    for (const n of names) if (n.startsWith('agent-exec-' + process.argv[1] + '-')) dirs.push(parent + '/' + n);
  }
  return dirs;
}
function inCgroups() {
  const out = [];
  for (const dir of hostCgroups()) {
    try { fs.writeFileSync(dir + '/cgroup.kill', '1'); } catch {}
    let procs = '';
    try { procs = fs.readFileSync(dir + '/cgroup.procs', 'utf8'); } catch { continue; }
    for (const l of procs.split('\n')) if (/^\d+$/.test(l)) out.push(Number(l));
  }
  return out;
}
function marked() {
  const out = inCgroups();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    let env;
    try { env = Buffer.concat([Buffer.from('\0'), fs.readFileSync('/proc/' + d + '/environ')]); } catch { continue; }
    if (env.includes(prefix)) out.push(Number(d));
  }
  return out;
}
function removeCgroups() {
  let left = 0;
  for (const dir of hostCgroups()) {
    try { fs.rmdirSync(dir); } catch { left++; }
  }
  return left;
}
function sweep() {
  for (let round = 0; round < 50; round++) {
    const pids = marked();
    if (pids.length === 0) break;
    for (const p of pids) {
      try { process.kill(-p, 'SIGKILL'); } catch {}
      try { process.kill(p, 'SIGKILL'); } catch {}
    }
  }
  // The private temp dirs of the host's sandboxed runs (`agent-exec-sandbox-<ns>-<host pid>-*`).
  const tmpParent = process.env.AGENT_EXEC_TMP_PARENT;
  if (tmpParent) {
    const mine = new RegExp('^agent-exec-sandbox-\\d+-' + process.argv[1] + '-');
    let names = [];
    try { names = fs.readdirSync(tmpParent); } catch {}
    for (const n of names) if (mine.test(n)) { try { fs.rmSync(tmpParent + '/' + n, { recursive: true, force: true }); } catch {} }
  }
  // Output logs and cwd reports the host did not get to remove (`run-<host pid>-*`, `cwd-<host pid>-*`)
  // in the default log dir and any other the host named on the pipe.
  const owned = new RegExp('^(run|cwd)-' + process.argv[1] + '-');
  for (const dir of logDirs) {
    let names = [];
    try { names = fs.readdirSync(dir); } catch {}
    for (const n of names) if (owned.test(n)) { try { fs.unlinkSync(dir + '/' + n); } catch {} }
  }
  // The host's cgroups empty a moment after their last process is reaped.
  let tries = 0;
  const tidy = () => {
    if (removeCgroups() === 0 || ++tries >= 40) process.exit(0);
    setTimeout(tidy, 50);
  };
  tidy();
}
// The host writes each log dir it uses besides the default, one per line.
const logDirs = new Set(process.env.AGENT_EXEC_LOG_DIR ? [process.env.AGENT_EXEC_LOG_DIR] : []);
let partial = '';
process.stdin.on('data', (d) => {
  const lines = (partial + d.toString('utf8')).split('\n');
  partial = lines.pop();
  for (const l of lines) if (l.startsWith('/')) logDirs.add(l);
});
process.stdin.on('end', sweep);
process.stdin.on('error', sweep);
process.stdin.resume();
"#;

/// The write end of the watchdog's stdin; held for the host's whole life.
static WATCHDOG: OnceLock<Mutex<Option<std::process::ChildStdin>>> = OnceLock::new();

/// Start the watchdog once (Linux; elsewhere the cleanup hook is all there is). `cgroup_parents` are
/// the directories where this host makes its runs' cgroups.
pub fn ensure_watchdog(cgroup_parents: impl FnOnce() -> Vec<std::path::PathBuf>) {
    let mut started = false;
    let pipe = WATCHDOG.get_or_init(|| {
        started = true;
        Mutex::new(start(cgroup_parents()))
    });
    if started {
        // Dirs named before the watchdog existed; one named from now on is sent by watch_log_dir.
        let dirs = LOG_DIRS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut pipe = pipe.lock().unwrap_or_else(|e| e.into_inner());
        for dir in &dirs {
            send_log_dir(&mut pipe, dir);
        }
    }
}

/// Log dirs other than the default that runs of this host used (`logDir`), for the watchdog.
static LOG_DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Tell the watchdog about a log dir besides the default, so it removes this host's logs there too.
pub fn watch_log_dir(dir: &std::path::Path) {
    let Ok(dir) = std::path::absolute(dir) else {
        return;
    };
    {
        let mut dirs = LOG_DIRS.lock().unwrap_or_else(|e| e.into_inner());
        if dirs.contains(&dir) {
            return;
        }
        dirs.push(dir.clone());
    }
    // Not started yet: ensure_watchdog sends every dir named so far once it is.
    if let Some(pipe) = WATCHDOG.get() {
        send_log_dir(&mut pipe.lock().unwrap_or_else(|e| e.into_inner()), &dir);
    }
}

fn send_log_dir(pipe: &mut Option<std::process::ChildStdin>, dir: &std::path::Path) {
    use std::io::Write;
    let Some(line) = dir.to_str().filter(|s| !s.contains('\n')) else {
        return; // not a name the line protocol can carry; its logs stay to the host's own cleanup
    };
    if let Some(stdin) = pipe.as_mut() {
        let _ = writeln!(stdin, "{line}");
    }
}

/// Whether a watchdog is running for this host.
pub fn watchdog_running() -> bool {
    WATCHDOG
        .get()
        .is_some_and(|m| m.lock().map(|g| g.is_some()).unwrap_or(false))
}

#[cfg(target_os = "linux")]
fn start(cgroup_parents: Vec<std::path::PathBuf>) -> Option<std::process::ChildStdin> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new(exe);
    cmd.arg("-e")
        .arg(SCRIPT)
        .arg(std::process::id().to_string())
        .args(cgroup_parents)
        // An Electron host runs the script as plain Node.
        .env("ELECTRON_RUN_AS_NODE", "1")
        .env("AGENT_EXEC_TMP_PARENT", crate::sandbox::tmp_parent_path())
        // How this host's run markers start (`<pid>x<random>`, `kill::host_token`).
        .env("AGENT_EXEC_HOST_TOKEN", crate::kill::host_token())
        .env(
            "AGENT_EXEC_LOG_DIR",
            crate::output::spool::default_log_dir(),
        )
        .env_remove("NODE_OPTIONS")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    match cmd.spawn() {
        Ok(mut child) => {
            let stdin = child.stdin.take();
            // It outlives every handle we could keep; init reaps it after the host is gone.
            std::mem::forget(child);
            stdin
        }
        Err(e) => {
            tracing::warn!("agent-exec: could not start the orphan watchdog: {e}");
            None
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn start(_cgroup_parents: Vec<std::path::PathBuf>) -> Option<std::process::ChildStdin> {
    let _ = SCRIPT;
    None
}
