//! The sandbox of a run (opt-in per `exec`): what the command can reach once it runs.
//!
//! On Linux, with no helper binary and no Docker: Landlock for the file system (everything readable,
//! writes only under the writable roots and a private temp dir), a private mount namespace where one
//! can be made (read-only binds for the paths that must never be written even inside the roots:
//! `.git/hooks`, `.git/config`, shell start-up files; a private `/dev/shm`; every mount outside the
//! roots read-only), a seccomp filter whose notifications a supervisor in the runtime
//! answers (the network cut, Unix sockets limited to the roots, and a record of every refused
//! operation), `no_new_privs`, rlimits, and a cgroup for memory and process limits where one can be
//! created. All of it is applied in the child before the
//! shell starts, for pipe and PTY runs alike. A sandbox the host cannot enforce is an error.
//!
//! Layout: `policy` decides what may be written; `landlock`, `seccomp` and `cgroup` turn the decision
//! into kernel objects in the parent; `child` applies them between fork and exec, and `handover` brings
//! its seccomp listener back; `supervisor` answers the notifications (reading the caller through
//! `caller_memory`; `file_calls` says what each file call judges and makes), with `unix_connect` and `unix_send` making the connects and sends it allows and
//! `perform` every other call it judges (never letting the kernel read the caller's memory again);
//! `capabilities` says what the host supports; `macos` writes the `sandbox-exec` profile of the same
//! policy.

#[cfg(target_os = "linux")]
mod caller_memory;
pub mod capabilities;
#[cfg(target_os = "linux")]
pub mod cgroup;
#[cfg(target_os = "linux")]
pub mod child;
#[cfg(target_os = "linux")]
mod file_calls;
#[cfg(target_os = "linux")]
mod git_index;
#[cfg(target_os = "linux")]
mod handover;
#[cfg(target_os = "linux")]
pub use handover::Handed;
#[cfg(target_os = "linux")]
pub mod hidden;
#[cfg(target_os = "linux")]
mod host_repos;
#[cfg(target_os = "linux")]
pub mod landlock;
pub mod macos;
#[cfg(target_os = "linux")]
mod namespace_stock;
#[cfg(target_os = "linux")]
mod notify_wait;
mod path_index;
#[cfg(target_os = "linux")]
mod perform;
#[cfg(unix)]
mod private_tmp;
#[cfg(unix)]
pub(crate) use private_tmp::{private_tmp, PrivateTmp};
#[cfg(unix)]
pub use private_tmp::{remove_live_tmp_dirs, tmp_parent_path};
pub mod policy;
#[cfg(target_os = "linux")]
mod privileges;
#[cfg(target_os = "linux")]
pub mod proxy;
#[cfg(target_os = "linux")]
mod read_grants;
#[cfg(target_os = "linux")]
pub mod reaper;
#[cfg(target_os = "linux")]
mod refused;
#[cfg(target_os = "linux")]
pub mod seccomp;
pub mod secrets;
#[cfg(all(test, target_os = "linux"))]
mod supervised_tests;
#[cfg(target_os = "linux")]
pub mod supervisor;
#[cfg(target_os = "linux")]
mod sysv_ipc;
#[cfg(target_os = "linux")]
pub mod unix_connect;
#[cfg(target_os = "linux")]
mod unix_send;

use std::path::{Path, PathBuf};

use crate::error::{AgentError, ErrorCode};

/// The process limit of a sandboxed run that asks for none (tasks at once, threads included), where
/// the host can hold a run to a limit of its own (a pids cgroup, or a user namespace's
/// `RLIMIT_NPROC`). Builds with many threads fit; a fork bomb does not reach the machine's `pid_max`.
pub const DEFAULT_PROCESSES: u64 = 2048;

/// The ceiling on inotify instances in an unprivileged run's user namespace (the user's own default
/// quota is 128, shared by every process of theirs: the agent's `fs.watch` included).
pub const INOTIFY_INSTANCES: u32 = 32;

/// The ceiling on inotify watches in an unprivileged run's user namespace: a quarter of the user's
/// own (`fs.inotify.max_user_watches`, shared by every process of theirs), at least 8192, so one run
/// watching every file it can read leaves the agent and other runs theirs.
pub fn inotify_watches() -> u64 {
    let user = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(8192 * 4);
    (user / 4).max(8192)
}

/// Resource limits of a sandboxed run. Each is optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceLimits {
    /// CPU seconds per process (`RLIMIT_CPU`: SIGXCPU, then SIGKILL a second later).
    pub cpu_seconds: Option<u64>,
    /// Memory of the whole run (a cgroup), or address space per process where no cgroup can be made.
    pub memory_bytes: Option<u64>,
    /// Processes of the run at once (the cgroup `pids` controller).
    pub processes: Option<u64>,
    /// Largest file a process may write (`RLIMIT_FSIZE`: SIGXFSZ).
    pub file_size_bytes: Option<u64>,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
}

/// The network of a run allowed by domain (see `proxy`): host patterns (`example.com`,
/// `*.example.com`), refused patterns, and the loopback ports the run may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainPolicy {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub allow_localhost: Vec<u16>,
    /// Asked for a name no pattern decides (`true` allows); without it such names are refused.
    pub on_request: Option<NetworkAsker>,
}

/// An answer of the host's, to come.
pub type Answer = std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>;

/// The host's callback for a name no pattern decides: `(host, port)` to an answer, `true` allowing.
#[derive(Clone)]
pub struct NetworkAsker(pub std::sync::Arc<dyn Fn(String, u16) -> Answer + Send + Sync>);

impl PartialEq for NetworkAsker {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for NetworkAsker {}
impl std::fmt::Debug for NetworkAsker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetworkAsker")
    }
}

/// What the caller asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSpec {
    /// Directories the run may write beneath; `None` means the cwd. The private temp dir is always
    /// added.
    pub writable_roots: Option<Vec<PathBuf>>,
    /// Network access (IP sockets of any kind, and every Unix socket). Off, a run reaches only the
    /// Unix sockets under its writable roots and in `unix_sockets`.
    pub network: bool,
    /// Unix socket files (or directories of them) the run may connect to with the network off:
    /// absolute paths as the caller gave them.
    pub unix_sockets: Vec<PathBuf>,
    pub limits: ResourceLimits,
    /// Variables that look like credentials (see `secrets`) the run still inherits, by name.
    pub pass_env: Vec<String>,
    /// Nothing of the run outlives its command: when the shell exits, every process it left in the
    /// run's PID namespace is killed (a confined "yes", see `confine`). Otherwise background jobs
    /// live on until they end, as they do unsandboxed.
    pub ends_with_command: bool,
    /// Files and directories the run may not read (absolute; see `hidden`), on top of the default
    /// credential locations.
    pub deny_read: Vec<PathBuf>,
    /// Paths brought back inside what `deny_read` or the default set hides (absolute).
    pub allow_read: Vec<PathBuf>,
    /// Paths and globs inside the writable roots that stay read-only (absolute, or relative to each
    /// root; `*`, `**`, `?` and `[...]` as in `globset`).
    pub deny_write: Vec<String>,
    /// The network by domain, through the sandbox's proxy (`network` stays false: nothing else).
    pub domains: Option<DomainPolicy>,
}

impl SandboxSpec {
    /// Fix the writable roots against the directory the host chose: no roots means that directory,
    /// and relative roots are beneath it, whatever directory the run itself starts in (a tracked cwd,
    /// a model's workdir). A run that starts outside its roots runs there read-only.
    pub fn pin_roots(&mut self, host_cwd: &Path) {
        let roots = self
            .writable_roots
            .take()
            .unwrap_or_else(|| vec![host_cwd.to_path_buf()]);
        let pin = |r: PathBuf| if r.is_absolute() { r } else { host_cwd.join(r) };
        self.writable_roots = Some(roots.into_iter().map(pin).collect());
        self.deny_read = std::mem::take(&mut self.deny_read)
            .into_iter()
            .map(pin)
            .collect();
        self.allow_read = std::mem::take(&mut self.allow_read)
            .into_iter()
            .map(pin)
            .collect();
    }
}

/// Which limit ended (or refused part of) a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    Cpu,
    Memory,
    Processes,
    FileSize,
}

impl LimitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Cpu => "cpu",
            LimitKind::Memory => "memory",
            LimitKind::Processes => "processes",
            LimitKind::FileSize => "fileSize",
        }
    }
}

/// One operation the sandbox refused, with how often the same one was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxDenial {
    /// `write`, `mkdir`, `mknod`, `remove`, `rename`, `link`, `symlink`, `truncate`, `chmod`, `chown`,
    /// `utime`, `xattr`, `connect` or `network`.
    pub operation: String,
    /// The resolved path, for file operations.
    pub path: Option<String>,
    /// The system call and what it asked for (`openat(O_WRONLY|O_CREAT)`, `socket(AF_INET)`,
    /// `connect(AF_UNIX)`).
    pub detail: String,
    /// The rule that refused it.
    pub rule: String,
    /// The first process that tried.
    pub pid: u32,
    pub count: u32,
}

/// What a sandboxed run reports with its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxReport {
    pub tmp_dir: String,
    pub writable_roots: Vec<String>,
    pub protected_paths: Vec<String>,
    pub network: bool,
    /// Unix sockets outside the roots the run may connect to (with the network off).
    pub unix_sockets: Vec<String>,
    /// The Landlock ABI in force.
    pub landlock_abi: u32,
    /// How each part was enforced, e.g. `landlock`, `seccomp`, `read-only binds`, `cgroup v2`.
    pub mechanisms: Vec<String>,
    pub denials: Vec<SandboxDenial>,
    /// Distinct denials beyond the record's cap.
    pub denials_dropped: u64,
    pub limit_exceeded: Option<LimitKind>,
    /// What the limit did, in a sentence (`the memory limit (64 MiB) ended the run: ...`).
    pub limit_message: Option<String>,
    /// Variables the run did not inherit because they look like credentials (names, never values).
    pub dropped_env: Vec<String>,
}

pub fn unavailable(detail: impl std::fmt::Display) -> AgentError {
    AgentError::new(
        ErrorCode::SandboxUnavailable,
        format!(
            "This host cannot enforce the requested sandbox: {detail}. Nothing was run. Call sandboxCapabilities() to see what it supports, or run without the sandbox option."
        ),
    )
}

impl SandboxReport {
    /// What every platform reports about a run's sandbox; refusals and limits are filled in after.
    #[cfg(unix)]
    pub(crate) fn describing(
        policy: &policy::FsPolicy,
        tmp_dir: &Path,
        network: bool,
        landlock_abi: u32,
        mechanisms: Vec<String>,
    ) -> SandboxReport {
        let shown = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect();
        SandboxReport {
            tmp_dir: tmp_dir.display().to_string(),
            writable_roots: shown(&policy.writable_roots),
            protected_paths: shown(&policy.protected),
            network,
            unix_sockets: shown(&policy.unix_sockets),
            landlock_abi,
            mechanisms,
            denials: Vec::new(),
            denials_dropped: 0,
            limit_exceeded: None,
            limit_message: None,
            dropped_env: Vec::new(),
        }
    }
}

/// Bytes for people: `64 MiB`, `1.5 GiB`, `1000 bytes`.
/// A program the shell must run under (`sandbox-exec -p <profile> ... --` on macOS): the spawn runs
/// `program args... <shell> <shell args>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellWrapper {
    pub program: PathBuf,
    pub args: Vec<String>,
}

pub fn format_bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            let v = n as f64 / size as f64;
            return if n.is_multiple_of(size) {
                format!("{} {unit}", n / size)
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{n} bytes")
}

#[cfg(not(unix))]
pub fn remove_live_tmp_dirs() {}

/// The variables every sandboxed run gets: its temp dir under the three usual names, and markers a
/// script can test (as Codex's `CODEX_SANDBOX_NETWORK_DISABLED`).
#[cfg(unix)]
pub(crate) fn sandbox_env(tmp: &Path, network: bool) -> Vec<(String, String)> {
    let tmp = tmp.display().to_string();
    let mut env = vec![
        ("TMPDIR".to_string(), tmp.clone()),
        ("TMP".to_string(), tmp.clone()),
        ("TEMP".to_string(), tmp),
        ("AGENT_EXEC_SANDBOX".to_string(), "1".to_string()),
    ];
    if !network {
        env.push((
            "AGENT_EXEC_SANDBOX_NETWORK_DISABLED".to_string(),
            "1".to_string(),
        ));
    }
    env
}

/// Canonical writable roots for a request: the caller's (or the cwd), each an existing directory.
pub fn resolve_roots(spec: &SandboxSpec, cwd: &Path) -> Result<Vec<PathBuf>, AgentError> {
    let asked = spec
        .writable_roots
        .clone()
        .unwrap_or_else(|| vec![cwd.to_path_buf()]);
    let mut roots = Vec::new();
    for r in asked {
        let shown = r.display().to_string();
        let abs = if r.is_absolute() { r } else { cwd.join(r) };
        match std::fs::canonicalize(&abs) {
            Ok(c) if c.is_dir() => roots.push(c),
            Ok(_) => {
                return Err(AgentError::invalid_option(format!(
                "sandbox.writableRoots: {shown} is not a directory. Give the directory to allow writes beneath."
            )))
            }
            Err(_) => {
                return Err(AgentError::invalid_option(format!(
                    "sandbox.writableRoots: {shown} does not exist. Create it first or leave it out."
                )))
            }
        }
    }
    Ok(roots)
}

/// The caller's `unix_sockets`, canonical where they exist (a socket may appear after the run starts).
pub fn resolve_unix_sockets(spec: &SandboxSpec) -> Result<Vec<PathBuf>, AgentError> {
    let mut out = Vec::new();
    for p in &spec.unix_sockets {
        if !p.is_absolute() {
            return Err(AgentError::invalid_option(format!(
                "sandbox.unixSockets: {} is not an absolute path. Give the socket's full path, such as /run/user/1000/ssh-agent.sock.",
                p.display()
            )));
        }
        let p = std::fs::canonicalize(p).unwrap_or_else(|_| policy::normalize(p));
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(target_os = "linux")]
pub use linux::{prepare, spawn_error, Armed};
#[cfg(target_os = "macos")]
pub use macos::{prepare, Armed};

/// Elsewhere no sandbox can be prepared, so none exists.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub enum Armed {}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
impl Armed {
    pub fn env(&self) -> &[(String, String)] {
        match *self {}
    }

    pub fn tmp_dir(&self) -> &Path {
        match *self {}
    }

    pub fn set_dropped_env(&self, _names: Vec<String>) {
        match *self {}
    }

    pub fn release_tmp(&self) {
        match *self {}
    }

    pub fn shell_wrapper(&self) -> Option<ShellWrapper> {
        match *self {}
    }

    pub fn after_spawn(&self) -> Result<(), AgentError> {
        match *self {}
    }

    pub fn cgroup_procs_files(&self) -> Vec<PathBuf> {
        match *self {}
    }

    pub fn hides(&self, _dir: &Path) -> bool {
        match *self {}
    }

    pub fn report(&self, _exit_code: Option<i32>, _exit_signal: Option<&str>) -> SandboxReport {
        match *self {}
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn prepare(
    _spec: &SandboxSpec,
    _cwd: &Path,
    _home: Option<&Path>,
    _log_dir: Option<&Path>,
    _name: &str,
    _tracked_by: Option<u8>,
) -> Result<Armed, AgentError> {
    Err(unavailable(format!(
        "the sandbox is not implemented on {}",
        std::env::consts::OS
    )))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::Path;
    use std::sync::Arc;

    use super::child::{ChildPlan, MountPlan, ReadOnlyBind, UserMaps};

    /// Processes of the sandbox's own in a run with a PID namespace, added to the run's process limit
    /// so the command keeps all of it: its init, and where the run is forked, the relay that reports
    /// the shell's exit (see `reaper`; the fork-free spawn has none).
    fn namespace_helpers() -> u64 {
        // Where `spawn::namespaced` can clone without forking (its entry is x86_64 assembly).
        if cfg!(target_arch = "x86_64") {
            1
        } else {
            2
        }
    }
    use super::policy::FsPolicy;
    use super::supervisor::DenialLog;
    use super::*;

    /// The paths `spec` and the default credential set hide, for the homes the run can name (its
    /// HOME, ours, the user's passwd entry) and the other people's on this machine, minus those a
    /// writable root is inside (hiding one would hide the run's own work; the roots are the host's
    /// choice). The cwd is not such a choice: a tool's cwd is the model's `workdir`, or the directory
    /// the last run reported under `trackCwd`, which that run could write at will (see
    /// `cwd_not_hidden`).
    fn secrets_to_hide(
        spec: &SandboxSpec,
        homes: &[std::path::PathBuf],
        roots: &[std::path::PathBuf],
    ) -> Vec<super::hidden::Hide> {
        super::hidden::plan(homes, &spec.deny_read, &spec.allow_read)
            .into_iter()
            .filter(|h| !roots.iter().any(|r| r.starts_with(&h.path)))
            .collect()
    }

    /// A run whose cwd lies in a place the sandbox hides from it is refused: it would read there
    /// what is hidden (a model's `workdir` of `~/.ssh`, or a tracked cwd a run forged, unlocked the
    /// keys), and the place is not there in its view anyway.
    fn cwd_not_hidden(real_cwd: &Path, hidden: &[&Path]) -> Result<(), AgentError> {
        match hidden.iter().find(|h| real_cwd.starts_with(h)) {
            Some(h) => Err(AgentError::new(
                crate::error::ErrorCode::InvalidCwd,
                format!(
                    "The cwd {} is inside {}, which the sandbox hides from the command (a credential location, denyRead, other runs' temp dirs or the session logs). Run the command in another directory; a place the host means the run to work in is a writable root or an allowRead path.",
                    real_cwd.display(),
                    h.display()
                ),
            )),
            None => Ok(()),
        }
    }

    /// The homes whose credentials a run may not read: its HOME, ours, the user's passwd entry, and
    /// every other person's on this machine (see `people_homes`).
    fn homes_to_cover(home: Option<&Path>) -> Vec<std::path::PathBuf> {
        let mut homes: Vec<std::path::PathBuf> = home.map(Path::to_path_buf).into_iter().collect();
        homes.extend(std::env::var_os("HOME").map(std::path::PathBuf::from));
        homes.extend(crate::util::account_home());
        if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
            homes.extend(super::hidden::people_homes(&passwd));
        }
        homes
    }

    /// Where the run reads files by entry (see `read_grants`), so that the same credential
    /// locations stay unreadable when they appear or are replaced while it lives; `None` with
    /// nothing to withhold.
    fn read_by_entry(
        spec: &SandboxSpec,
        homes: &[std::path::PathBuf],
        roots: &[std::path::PathBuf],
    ) -> Option<Arc<Vec<std::path::PathBuf>>> {
        let mut candidates = super::hidden::in_homes(homes);
        candidates.extend(spec.deny_read.iter().cloned());
        let works_in = roots.to_vec();
        super::read_grants::granted(super::read_grants::Inputs {
            candidates,
            allow_read: spec.allow_read.clone(),
            works_in,
            writable: roots.to_vec(),
        })
    }

    /// The child's side of `unreadable`: directories covered by tmpfs (with their `allowRead`
    /// paths brought back), files covered by an empty file of mode 0000 made in the run's temp dir.
    fn hide_plan(
        unreadable: &[super::hidden::Hide],
        tmp: &super::PrivateTmp,
    ) -> Result<(Vec<super::child::HiddenDir>, Vec<super::child::HiddenFile>), AgentError> {
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        let mut empty = None;
        for h in unreadable {
            if h.is_dir {
                if h.keep.len() > super::child::MAX_KEPT {
                    return Err(AgentError::invalid_option(format!(
                        "sandbox.allowRead brings back {} paths inside {}; at most {} can come back inside one hidden directory. Allow their common parent instead.",
                        h.keep.len(),
                        h.path.display(),
                        super::child::MAX_KEPT
                    )));
                }
                let mut make_dirs = Vec::new();
                for k in &h.keep {
                    for d in super::hidden::dirs_to_make(&h.path, k) {
                        let d = c_path(&d, "a directory inside a hidden one")?;
                        if !make_dirs.contains(&d) {
                            make_dirs.push(d);
                        }
                    }
                }
                dirs.push(super::child::HiddenDir {
                    path: c_path(&h.path, "a hidden path")?,
                    mode: if h.keep.is_empty() { 0o000 } else { 0o111 },
                    keep: h
                        .keep
                        .iter()
                        .map(|k| {
                            Ok(super::child::KeptPath {
                                path: c_path(k, "an allowRead path")?,
                                is_dir: k.is_dir(),
                            })
                        })
                        .collect::<Result<_, AgentError>>()?,
                    make_dirs,
                });
            } else {
                let empty = match &empty {
                    Some(e) => std::ffi::CString::clone(e),
                    None => {
                        let path = tmp.entry(super::private_tmp::UNREADABLE).map_err(|e| {
                            unavailable(format!(
                                "the empty file that hides unreadable files could not be made in {}: {e}",
                                tmp.path().display()
                            ))
                        })?;
                        let c = c_path(&path, "the private temp dir")?;
                        empty = Some(c.clone());
                        c
                    }
                };
                files.push(super::child::HiddenFile {
                    path: c_path(&h.path, "a hidden path")?,
                    empty,
                });
            }
        }
        Ok((dirs, files))
    }

    /// A sandbox made ready for one spawn: the child's plan, the environment it adds, and the run-side
    /// state (supervisor, cgroup, temp dir) that lives as long as the session.
    pub struct Armed {
        child: Arc<ChildPlan>,
        env: Vec<(String, String)>,
        /// Our end of the listener's socket, until a forking spawn starts waiting on it.
        handover_socket: std::sync::Mutex<Option<std::os::fd::OwnedFd>>,
        /// The wait for a forked child's listener (started by [`Armed::await_handover`]).
        handover: std::sync::OnceLock<std::io::Result<super::handover::Receiver>>,
        policy: Arc<FsPolicy>,
        network: bool,
        limits: ResourceLimits,
        tmp: super::PrivateTmp,
        cgroup: Option<super::cgroup::RunCgroup>,
        log: Arc<DenialLog>,
        mechanisms: Vec<String>,
        /// The memory limit is per process (RLIMIT_DATA), not the run's cgroup: no kernel count of
        /// kills exists, so the verdict reads how the run ended.
        memory_by_rlimit: bool,
        landlock_abi: u32,
        /// Credentials' names the run did not inherit.
        dropped_env: std::sync::OnceLock<Vec<String>>,
        /// The proxy of a run whose network is by domain: ended with the run.
        proxy: Option<RunProxy>,
        /// The run has no IPC namespace of its own: its System V objects are the host's kind (see
        /// `sysv_ipc`).
        shares_host_ipc: bool,
        /// The places hidden from the run (credential locations, denyRead, other runs' temp dirs
        /// and the session logs).
        hidden_paths: Vec<PathBuf>,
    }

    /// The port the proxy listens on where the run has a network namespace of its own (nothing else
    /// listens there, so a fixed, conventional port).
    const NAMESPACE_PROXY_PORT: u16 = 3128;

    /// A run's proxy: where the run reaches it, and, once it serves, its task and a second handle on
    /// its listening socket, so the run's end closes it at once (an aborted task lets go of its
    /// listener only when the runtime next polls it).
    pub struct RunProxy {
        pub addr: std::net::SocketAddr,
        /// Listening inside the run's own network namespace: the child makes the socket there and
        /// hands it over (see `child::listen_on_loopback`), and it serves from the spawn on. Else on
        /// the host's loopback, from the start.
        pub in_namespace: bool,
        proxy: Arc<super::proxy::Proxy>,
        /// Who opened which connection to it (the supervisor notes each one).
        clients: Arc<super::proxy::Clients>,
        rt: tokio::runtime::Handle,
        /// `NotYet` until it serves; `Stopped` once the run is over (a late socket is not served).
        serving: std::sync::Mutex<Serving>,
    }

    enum Serving {
        NotYet,
        On {
            task: tokio::task::AbortHandle,
            listener: std::net::TcpListener,
        },
        Stopped,
    }

    impl RunProxy {
        /// Serve connections arriving on `listener`.
        fn serve(&self, listener: std::net::TcpListener) -> Result<(), AgentError> {
            let failed = |e: std::io::Error| {
                unavailable(format!("the sandbox's proxy could not listen: {e}"))
            };
            listener.set_nonblocking(true).map_err(failed)?;
            let keep = listener.try_clone().map_err(failed)?;
            let mut serving = self.serving.lock().unwrap_or_else(|p| p.into_inner());
            if !matches!(*serving, Serving::NotYet) {
                return Ok(());
            }
            let _entered = self.rt.enter();
            let listener = tokio::net::TcpListener::from_std(listener).map_err(failed)?;
            let task = self
                .rt
                .spawn(self.proxy.clone().serve(listener))
                .abort_handle();
            *serving = Serving::On {
                task,
                listener: keep,
            };
            Ok(())
        }

        /// Stop listening now, and end the task (connections under way finish on their own).
        pub fn stop(&self) {
            use std::os::fd::AsRawFd;
            let mut serving = self.serving.lock().unwrap_or_else(|p| p.into_inner());
            if let Serving::On { task, listener } = &*serving {
                // SAFETY: shutdown of a socket we hold; it acts on the socket, which the task shares.
                unsafe { libc::shutdown(listener.as_raw_fd(), libc::SHUT_RDWR) };
                task.abort();
            }
            *serving = Serving::Stopped;
        }
    }

    impl Drop for RunProxy {
        fn drop(&mut self) {
            self.stop();
        }
    }

    /// The proxy of a run with `policy`, recording into `log`, on the async runtime: serving on the
    /// host's loopback at once, or (`in_namespace`) waiting for the socket the child makes in the
    /// run's network namespace.
    fn start_proxy(
        policy: &super::DomainPolicy,
        log: Arc<DenialLog>,
        in_namespace: bool,
    ) -> Result<RunProxy, AgentError> {
        policy.validate().map_err(AgentError::invalid_option)?;
        let rt = tokio::runtime::Handle::try_current().map_err(|_| {
            unavailable("the network by domain needs the async runtime, which is not running here")
        })?;
        let asker = policy.on_request.as_ref().map(|a| a.0.clone());
        let clients = Arc::new(super::proxy::Clients::default());
        let mut run_proxy = RunProxy {
            addr: (std::net::Ipv4Addr::LOCALHOST, NAMESPACE_PROXY_PORT).into(),
            in_namespace,
            proxy: super::proxy::Proxy::new(policy.clone(), asker, log, clients.clone()),
            clients,
            rt,
            serving: std::sync::Mutex::new(Serving::NotYet),
        };
        if !in_namespace {
            let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
                .map_err(|e| unavailable(format!("the sandbox's proxy could not listen: {e}")))?;
            run_proxy.addr = listener
                .local_addr()
                .map_err(|e| unavailable(format!("the sandbox's proxy has no address: {e}")))?;
            run_proxy.serve(listener)?;
        }
        Ok(run_proxy)
    }

    /// The variables that send a run's HTTP, HTTPS and other TCP clients to its proxy (upper and
    /// lower case, and those npm, pip and cargo read). NO_PROXY is emptied: loopback goes through the
    /// proxy too, where `allowLocalhost` decides.
    fn proxy_env(addr: std::net::SocketAddr) -> Vec<(String, String)> {
        let http = format!("http://{addr}");
        let socks = format!("socks5h://{addr}");
        let mut env = Vec::new();
        for name in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "npm_config_proxy",
            "npm_config_https_proxy",
            "PIP_PROXY",
            "CARGO_HTTP_PROXY",
            "YARN_HTTP_PROXY",
            "YARN_HTTPS_PROXY",
        ] {
            env.push((name.to_string(), http.clone()));
        }
        for name in ["ALL_PROXY", "all_proxy"] {
            env.push((name.to_string(), socks.clone()));
        }
        for name in ["NO_PROXY", "no_proxy"] {
            env.push((name.to_string(), String::new()));
        }
        env
    }

    fn statvfs_keep_flags(path: &Path) -> libc::c_ulong {
        let Ok(st) = nix::sys::statvfs::statvfs(path) else {
            return 0;
        };
        use nix::sys::statvfs::FsFlags;
        let f = st.flags();
        let mut keep = 0;
        for (have, ms) in [
            (FsFlags::ST_NOSUID, libc::MS_NOSUID),
            (FsFlags::ST_NODEV, libc::MS_NODEV),
            (FsFlags::ST_NOEXEC, libc::MS_NOEXEC),
            (FsFlags::ST_NOATIME, libc::MS_NOATIME),
            (FsFlags::ST_NODIRATIME, libc::MS_NODIRATIME),
            // ST_RELATIME (1 << 12), which nix names only for glibc.
            (FsFlags::from_bits_retain(1 << 12), libc::MS_RELATIME),
        ] {
            if f.contains(have) {
                keep |= ms;
            }
        }
        keep
    }

    /// A path for the child's system calls; `what` names it in the error.
    fn c_path(p: &Path, what: &str) -> Result<std::ffi::CString, AgentError> {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| unavailable(format!("{what} contains a NUL byte")))
    }

    /// Prepare the sandbox of one run named `name` (unique per host process) in `cwd`. `tracked_by`:
    /// the version of the tracking cgroup the run already has, if any; the sandbox then makes a
    /// cgroup of its own only for limits.
    pub fn prepare(
        spec: &SandboxSpec,
        cwd: &Path,
        home: Option<&Path>,
        log_dir: Option<&Path>,
        name: &str,
        tracked_by: Option<u8>,
    ) -> Result<Armed, AgentError> {
        // Bad input is reported as such before what the host can do.
        let mut roots = resolve_roots(spec, cwd)?;
        let sockets = resolve_unix_sockets(spec)?;
        let caps = super::capabilities::get();
        if !caps.enforceable() {
            return Err(unavailable(caps.problems.join("; ")));
        }
        let tmp = private_tmp()?;
        let tmp_path = tmp.path().to_path_buf();
        roots.push(tmp_path.clone());
        let host_dirs: Vec<&Path> = tmp_path.parent().into_iter().chain(log_dir).collect();
        let mut policy = FsPolicy::new(roots, home)
            .with_unix_sockets(sockets)
            .with_deny_write(&spec.deny_write)
            .map_err(AgentError::invalid_option)?
            .with_host_dirs(&host_dirs, &tmp_path);
        let mut mechanisms = vec![
            format!("landlock (ABI {})", super::landlock::abi_in_force()),
            "seccomp supervisor".to_string(),
            "no_new_privs".to_string(),
            "no capabilities (all sets empty, securebits locked)".to_string(),
            "system calls no command needs refused (mounts, namespaces, keyrings, ...)".to_string(),
        ];
        let mut limits = spec.limits;
        let default_processes = limits.processes.is_none();
        if default_processes {
            // A fork bomb ends against the run's own ceiling, not the machine's pid_max, wherever the
            // ceiling can be the run's alone.
            let cgroup_pids = caps.cgroup.as_ref().is_some_and(|h| h.has_pids());
            if cgroup_pids || caps.process_limit_in_user_namespace() {
                limits.processes = Some(DEFAULT_PROCESSES);
            } else {
                mechanisms.push(
                    "no default process limit here (root without a writable pids cgroup)".into(),
                );
            }
        }

        let existing: Vec<PathBuf> = policy
            .protected
            .iter()
            .filter(|p| p.exists())
            .cloned()
            .collect();
        // PID, IPC and UTS namespaces of the run's own wherever the host allows them (as root, or in
        // a user namespace): the host's processes, message queues and hostname are out of reach.
        let process_ns =
            caps.process_namespaces && caps.mount_namespace && super::reaper::lifeline().is_some();
        let mut need_user_ns = false;
        let mut rlimits = Vec::new();
        let mut rlimit_names = Vec::new();
        if let Some(n) = limits.cpu_seconds {
            // The hard limit a second later turns an ignored SIGXCPU into SIGKILL.
            rlimits.push((libc::RLIMIT_CPU, n, n.saturating_add(1)));
            rlimit_names.push("cpu");
        }
        if let Some(n) = limits.file_size_bytes {
            rlimits.push((libc::RLIMIT_FSIZE, n, n));
            rlimit_names.push("fsize");
        }
        if let Some(n) = limits.open_files {
            let hard = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .map(|(_, h)| h)
                .unwrap_or(u64::MAX);
            if n > hard && !caps.is_root {
                return Err(AgentError::invalid_option(format!(
                    "sandbox.limits.openFiles is {n}, above this process's hard limit of {hard}. Ask for {hard} or less."
                )));
            }
            rlimits.push((libc::RLIMIT_NOFILE, n, n));
            rlimit_names.push("nofile");
        }
        let cg_host = caps.cgroup.as_ref();
        let memory_in_cgroup =
            limits.memory_bytes.is_some() && cg_host.is_some_and(|h| h.has_memory());
        let pids_in_cgroup = limits.processes.is_some() && cg_host.is_some_and(|h| h.has_pids());
        let memory_by_rlimit = limits.memory_bytes.is_some() && !memory_in_cgroup;
        if let (Some(n), false) = (limits.memory_bytes, memory_in_cgroup) {
            // RLIMIT_DATA, not RLIMIT_AS: it counts the private writable memory a process has
            // (heap, anonymous mappings) and not address space only reserved, which V8, the JVM and
            // Go reserve by gigabytes at start (RLIMIT_AS kills Node at 512 MiB before it runs).
            rlimits.push((libc::RLIMIT_DATA, n, n));
            rlimit_names.push("data");
        }
        if let (Some(n), false) = (limits.processes, pids_in_cgroup) {
            // (The run's user namespace is entered with its mount namespace, so both must work.)
            if !caps.process_limit_in_user_namespace() {
                return Err(unavailable(
                    "a process limit needs a writable cgroup with the pids controller here (RLIMIT_NPROC does not bind root, and without a user namespace it would count every process of the user)",
                ));
            }
            // In a user namespace of its own, RLIMIT_NPROC counts the run's processes only.
            // (The init and the relay are counted when the shell's limit is set: a namespace makes
            // them the run's.)
            let n = n + if process_ns { namespace_helpers() } else { 0 };
            rlimits.push((libc::RLIMIT_NPROC, n, n));
            rlimit_names.push("nproc");
            need_user_ns = true;
        }
        if !rlimit_names.is_empty() {
            mechanisms.push(format!("rlimits ({})", rlimit_names.join(", ")));
        }
        // A mount namespace of the run's own is needed for read-only binds and a process limit; root
        // gets one anyway, for a private /dev/shm. (Unprivileged, it would take a user namespace, in
        // which files of other users show as nobody: not worth it for /dev/shm alone.)
        // The small world (a /dev and a network of the run's own) needs one too, so every host that can
        // make one gives each run its own.
        let mount_ns = caps.mount_namespace;
        // Not when the run works inside the host's /dev/shm: covering it would hide its own files.
        let real_cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let shm = std::fs::canonicalize(policy::SHM)
            .ok()
            .filter(|p| p.is_dir());
        let works_in = |shm: &Path| {
            real_cwd.starts_with(shm) || policy.writable_roots.iter().any(|r| r.starts_with(shm))
        };
        // The run's own /dev, unless it works inside the host's (its roots or cwd are there).
        let own_dev = mount_ns && caps.private_dev && !works_in(Path::new("/dev"));
        let private_shm = match shm.filter(|s| mount_ns && (own_dev || !works_in(s))) {
            None => None,
            Some(at) => {
                let backing = tmp.entry(super::private_tmp::SHM_BACKING).map_err(|e| {
                    unavailable(format!("the private /dev/shm could not be made: {e}"))
                })?;
                let plan = (
                    c_path(&backing, "the private /dev/shm's directory")?,
                    c_path(&at, "/dev/shm's path")?,
                );
                // In the run's own /dev, shared memory is its /dev/shm, whatever the host links there.
                let at = if own_dev {
                    PathBuf::from(policy::SHM)
                } else {
                    at
                };
                policy = policy.with_private_shm(policy::PrivateShm { at, backing });
                mechanisms.push("private /dev/shm (mount namespace)".into());
                Some(plan)
            }
        };
        let dev = if own_dev {
            let staging = tmp
                .entry(super::private_tmp::DEV_STAGING)
                .map_err(|e| unavailable(format!("the run's /dev could not be prepared: {e}")))?;
            let mut nodes = Vec::new();
            for node in policy::DEV_NODES {
                let host = Path::new(node);
                if host.exists() {
                    let name = host.file_name().expect("a device has a name");
                    nodes.push((
                        c_path(host, "a device path")?,
                        c_path(&staging.join(name), "the run's /dev")?,
                    ));
                }
            }
            let mut links = Vec::new();
            for (name, target) in policy::DEV_LINKS {
                links.push((
                    c_path(Path::new(target), "a /dev link")?,
                    c_path(&staging.join(name), "the run's /dev")?,
                ));
            }
            mechanisms.push(
                "its own /dev (null, zero, full, random, urandom, tty, a private devpts or only its own terminal, shm)"
                    .into(),
            );
            Some(super::child::DevPlan {
                staging_pts: c_path(&staging.join("pts"), "the run's /dev")?,
                shm: (
                    c_path(&staging.join("shm"), "the run's /dev")?,
                    private_shm.as_ref().map(|(backing, _)| backing.clone()),
                ),
                staging: c_path(&staging, "the run's /dev")?,
                nodes,
                links,
                pts_rights: super::landlock::terminal_dir_rights(),
            })
        } else {
            None
        };
        if dev.is_some() {
            policy = policy.with_own_devpts();
        }
        // Bound by the run's /dev when it has one.
        let private_shm = private_shm.filter(|_| dev.is_none());
        // With the network by domain the namespace's loopback holds the proxy's socket, and nothing
        // else; without a namespace the run reaches the proxy on the host's loopback (the supervisor
        // and Landlock keep every other connection out).
        let network_namespace = mount_ns && !spec.network && caps.network_namespace;
        if network_namespace && spec.domains.is_none() {
            mechanisms.push(
                "its own network namespace (no interfaces; abstract Unix socket names private to the run)"
                    .into(),
            );
        }
        let proxy_in_namespace = network_namespace && spec.domains.is_some();
        // The run's own temp dir is a root of its own, and nothing on the way to a credential: left
        // out, so runs in the same place share one listing.
        let lasting_roots: Vec<std::path::PathBuf> = policy
            .writable_roots
            .iter()
            .filter(|r| !r.starts_with(tmp.path()))
            .cloned()
            .collect();
        let homes = homes_to_cover(home);
        let read_by_entry = read_by_entry(spec, &homes, &lasting_roots);
        if read_by_entry.is_some() {
            mechanisms.push(
                "credential locations unreadable by Landlock too (files read beneath each entry of the directories on the way to them: what appears there while the run lives stays unreadable)".into(),
            );
        }
        let landlock = super::landlock::build(
            &policy,
            spec.network,
            read_by_entry.as_deref().map(|v| &v[..]),
        )
        .map_err(unavailable)?;
        // A metadata call (chmod, chown) that races the supervisor's check could reach a file outside
        // the roots (any file, as root), so every mount outside them is read-only in the namespace.
        let writable_binds = if mount_ns && caps.read_only_mounts {
            let binds = policy
                .writable_roots
                .iter()
                .map(|r| c_path(r, "a writable root"))
                .collect::<Result<Vec<_>, _>>()?;
            mechanisms.push("read-only mounts outside the roots (mount namespace)".into());
            Some(binds)
        } else {
            None
        };
        // A cgroup also tracks the run for the kill path, limits or not, where one can be made and
        // the run has no tracking cgroup already; only a cgroup that carries a limit is required.
        // (The default process limit is not worth failing a run for.)
        let default_limit = pids_in_cgroup && default_processes;
        let needed = memory_in_cgroup || (pids_in_cgroup && !default_limit);
        let track = tracked_by.is_none() && cg_host.is_some_and(|h| h.has_pids());
        if let Some(v) = tracked_by {
            mechanisms.push(format!("cgroup v{v} (tracking)"));
        }
        let made = match cg_host.filter(|_| needed || track || default_limit) {
            None => None,
            Some(host) => match super::cgroup::RunCgroup::create(
                host,
                name,
                limits.memory_bytes.filter(|_| memory_in_cgroup),
                limits
                    .processes
                    .filter(|_| pids_in_cgroup)
                    .map(|n| n + if process_ns { namespace_helpers() } else { 0 }),
            ) {
                Ok(made) => Some((host, made)),
                Err(e) if needed => {
                    return Err(unavailable(format!(
                        "the run's cgroup could not be created: {e}"
                    )))
                }
                Err(_) => None,
            },
        };
        let (cgroup, cgroup_joins, cgroup_dir) = match made {
            Some((host, (cg, fds))) => {
                // Where it cannot be opened the child joins instead, as a forked one does.
                let dir = cg.open_v2_dir().and_then(Result::ok);
                let mut what = Vec::new();
                if memory_in_cgroup {
                    what.push("memory");
                }
                if default_limit {
                    what.push("pids, the default limit");
                } else if pids_in_cgroup {
                    what.push("pids");
                }
                if what.is_empty() && tracked_by.is_none() {
                    what.push("tracking");
                }
                mechanisms.push(format!("cgroup v{} ({})", host.version(), what.join(", ")));
                (Some(cg), fds, dir)
            }
            None => {
                if default_limit {
                    // The default limit could not be had here: the report does not claim it.
                    limits.processes = None;
                    mechanisms.push(
                        "no default process limit (the run's cgroup could not be made)".into(),
                    );
                }
                (None, Vec::new(), None)
            }
        };

        // What the run may not read: credentials in every home it can name, and `denyRead`.
        let unreadable = secrets_to_hide(spec, &homes, &policy.writable_roots);
        // Every place hidden from the run, for `hides` (a cwd a run reports from one is forged).
        let mut hidden_paths: Vec<PathBuf> = unreadable.iter().map(|h| h.path.clone()).collect();
        cwd_not_hidden(
            &real_cwd,
            &unreadable
                .iter()
                .map(|h| h.path.as_path())
                .collect::<Vec<_>>(),
        )?;
        if !mount_ns {
            if !spec.deny_read.is_empty() {
                return Err(unavailable(
                    "sandbox.denyRead needs a mount namespace for the run, which this host cannot make (unprivileged user namespaces are off, or AGENT_EXEC_NO_MOUNT_NAMESPACE is set): Landlock grants reads by directory and cannot take one back. Run as root, allow user namespaces, or leave denyRead out",
                ));
            }
            if !unreadable.is_empty() {
                mechanisms.push(if read_by_entry.is_some() {
                    "credential files not hidden by mounts: no mount namespace here (their names stay listable; Landlock keeps their contents unreadable, except under a writable root)".into()
                } else {
                    "credential files NOT hidden: no mount namespace here (~/.ssh, ~/.aws... stay readable)".into()
                });
            }
        }
        let mounts = if mount_ns {
            let user = (!caps.is_root).then(|| {
                // SAFETY: getuid/getgid cannot fail.
                let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
                UserMaps {
                    uid_map: format!("{uid} {uid} 1").into_bytes(),
                    gid_map: format!("{gid} {gid} 1").into_bytes(),
                    inotify_instances: Some(INOTIFY_INSTANCES.to_string().into_bytes()),
                    inotify_watches: Some(inotify_watches().to_string().into_bytes()),
                }
            });
            // Nothing is bound inside a hidden path: it is not there to bind.
            let is_hidden = |p: &Path| unreadable.iter().any(|h| p.starts_with(&h.path));
            let mut read_only = Vec::new();
            for p in existing.iter().filter(|p| !is_hidden(p)) {
                read_only.push(ReadOnlyBind {
                    path: c_path(p, "a protected path")?,
                    keep_flags: statvfs_keep_flags(p),
                });
            }
            if !read_only.is_empty() {
                mechanisms.push("read-only binds (mount namespace)".into());
            }
            let mut pinned = Vec::new();
            for g in policy
                .git_entries
                .iter()
                .filter(|g| g.is_dir() && !is_hidden(g))
            {
                pinned.push(c_path(g, "a .git directory")?);
            }
            if !pinned.is_empty() {
                mechanisms.push(".git directories pinned in place (mount points)".into());
            }
            if user.is_some() {
                mechanisms.push(format!(
                    "inotify instances bounded to {INOTIFY_INSTANCES} in the run's user namespace"
                ));
            }
            if need_user_ns {
                mechanisms.push("user namespace (counts the run's processes)".into());
            } else if user.is_some() {
                mechanisms.push("user namespace".into());
            }
            let process_namespaces = match super::reaper::lifeline().filter(|_| process_ns) {
                Some(lifeline) => {
                    mechanisms.push(
                        "PID, IPC and UTS namespaces (host processes invisible, an init that dies with the host)"
                            .into(),
                    );
                    if spec.ends_with_command {
                        mechanisms.push(
                            "nothing outlives the command (its PID namespace ends with its shell)"
                                .into(),
                        );
                    }
                    Some(super::child::ProcessNamespaces {
                        lifeline,
                        arg_range: super::reaper::host_arg_range(),
                        proc_options: super::child::proc_options(caps.is_root),
                        leave_with_shell: spec.ends_with_command,
                    })
                }
                _ => None,
            };
            let mut hidden = Vec::new();
            // Covered by an empty directory: every other run's temp dir (the run's own is brought
            // back) and the session logs, unless a writable root is inside one of them (a cwd
            // there is refused, as in a hidden credential location).
            let tmp_parent = tmp_path.parent().map(Path::to_path_buf);
            for dir in tmp_parent.iter().map(PathBuf::as_path).chain(log_dir) {
                let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
                let own = tmp_path.starts_with(&dir);
                let works_in = policy
                    .writable_roots
                    .iter()
                    .any(|r| r.starts_with(&dir) && !(own && r.starts_with(&tmp_path)));
                if !dir.is_dir() || works_in {
                    continue;
                }
                if !(own && real_cwd.starts_with(&tmp_path)) {
                    cwd_not_hidden(&real_cwd, &[dir.as_path()])?;
                }
                let mut keep = Vec::new();
                if own {
                    keep.push(super::child::KeptPath {
                        path: c_path(&tmp_path, "the private temp dir")?,
                        is_dir: true,
                    });
                }
                hidden_paths.push(dir.clone());
                hidden.push(super::child::HiddenDir {
                    path: c_path(&dir, "a hidden directory")?,
                    mode: 0o700,
                    keep,
                    make_dirs: Vec::new(),
                });
            }
            if !hidden.is_empty() {
                mechanisms.push(
                    "other runs' temp dirs and the session logs hidden (mount namespace)".into(),
                );
            }
            let mut hidden_files = Vec::new();
            if !unreadable.is_empty() {
                let (dirs, files) = hide_plan(&unreadable, &tmp)?;
                hidden.extend(dirs);
                hidden_files = files;
                mechanisms.push(format!(
                    "{} credential or denyRead path{} hidden (mount namespace): {}",
                    unreadable.len(),
                    if unreadable.len() == 1 { "" } else { "s" },
                    unreadable
                        .iter()
                        .map(|h| h.path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            // Root's runs enter network, IPC and UTS namespaces made ahead where there are some
            // (an unprivileged run's belong to its own user namespace, made at spawn).
            let premade = (user.is_none() && network_namespace && process_namespaces.is_some())
                .then(super::namespace_stock::take)
                .flatten();
            if premade.is_some() {
                mechanisms.push(
                    "network, IPC and UTS namespaces made ahead of the run (for it alone)".into(),
                );
            }
            Some(MountPlan {
                pinned,
                hidden,
                hidden_files,
                read_only,
                private_shm,
                writable_binds,
                cwd: c_path(&real_cwd, "the cwd")?,
                premade,
                user,
                process_namespaces,
                network_namespace,
                dev,
            })
        } else {
            None
        };
        if !existing.is_empty() && mounts.is_none() {
            mechanisms.push("protected paths guarded by the supervisor only".into());
        }

        let own_pid_namespace = mounts
            .as_ref()
            .is_some_and(|m| m.process_namespaces.is_some());
        let has_own_dev = mounts.as_ref().is_some_and(|m| m.dev.is_some());
        if !own_pid_namespace {
            mechanisms.push(
                "changes to other processes (limits, priority, CPUs, scheduling) refused, and System V IPC objects other than the run's own only read (removed when the run ends): no PID or IPC namespace here"
                    .into(),
            );
        }
        // Metadata changes through a descriptor are the kernel's where everything the run can reach
        // outside its roots is on a read-only mount and every protected path is bound read-only (a
        // denyWrite glob's matches are not: the supervisor alone keeps those), and where no host
        // service can hand it a descriptor: one sent over a Unix socket refers to the host's mount,
        // writable, so with the network on (any socket file) or `unixSockets` the supervisor judges.
        let fd_metadata_by_kernel = mounts.as_ref().is_some_and(|m| m.writable_binds.is_some())
            && !policy.deny_write_globs.any()
            && !spec.network
            && spec.unix_sockets.is_empty();
        if fd_metadata_by_kernel {
            mechanisms.push(
                "metadata changes through a descriptor (fchmod without execute or set-id bits, fchown, futimens, fsetxattr) decided by the kernel: outside the roots and on protected paths everything is a read-only mount (such a refusal, EROFS, is not recorded)"
                    .into(),
            );
        }
        let filter =
            super::seccomp::build_filter(spec.network, !own_pid_namespace, fd_metadata_by_kernel)
                .map_err(unavailable)?;
        let clone3_filter = super::seccomp::build_clone3_refusal().map_err(unavailable)?;
        let (parent_socket, child_socket) = nix::sys::socket::socketpair(
            nix::sys::socket::AddressFamily::Unix,
            nix::sys::socket::SockType::Datagram,
            None,
            nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| unavailable(format!("socketpair failed: {e}")))?;

        let mut env = sandbox_env(&tmp_path, spec.network);
        let log = Arc::new(DenialLog::default());
        let proxy = match &spec.domains {
            Some(domains) => {
                let p = start_proxy(domains, log.clone(), proxy_in_namespace)?;
                env.extend(proxy_env(p.addr));
                let (place, rest) = if p.in_namespace {
                    ("inside the run's own network namespace, whose loopback holds nothing else", "no other address exists there, and every other connection, UDP and listening is refused by the supervisor and Landlock")
                } else {
                    ("on the host's loopback", "every other connection, UDP and listening refused by the supervisor and Landlock")
                };
                mechanisms.push(format!(
                    "network by domain through the sandbox's proxy at {} {place} (HTTP, HTTPS CONNECT, SOCKS5; allowed: {}); {rest}",
                    p.addr,
                    if domains.allow.is_empty() { "none".to_string() } else { domains.allow.join(", ") }
                ));
                Some(p)
            }
            None => None,
        };
        Ok(Armed {
            child: Arc::new(ChildPlan {
                cgroup_joins,
                cgroup_dir,
                rlimits,
                mounts,
                landlock,
                landlock_flags: 0,
                own_mount_rights: if read_by_entry.is_some() {
                    super::landlock::own_mount_rights()
                } else {
                    0
                },
                terminal_rights: (!has_own_dev).then(super::landlock::terminal_file_rights),
                filter,
                clone3_filter,
                listener_socket: child_socket,
                proxy_port: proxy_in_namespace.then_some(NAMESPACE_PROXY_PORT),
            }),
            env,
            handover_socket: std::sync::Mutex::new(Some(parent_socket)),
            handover: std::sync::OnceLock::new(),
            policy: Arc::new(policy),
            network: spec.network,
            limits,
            tmp,
            cgroup,
            log,
            mechanisms,
            memory_by_rlimit,
            landlock_abi: super::landlock::abi_in_force(),
            dropped_env: std::sync::OnceLock::new(),
            proxy,
            shares_host_ipc: !own_pid_namespace,
            hidden_paths,
        })
    }

    /// An error from the spawn of a sandboxed child, with the step the host refused.
    pub fn spawn_error(e: &std::io::Error) -> Option<AgentError> {
        let (step, os) = super::child::decode(e)?;
        if step == super::child::Step::Seccomp && os.raw_os_error() == Some(libc::EBUSY) {
            return Some(unavailable(super::capabilities::NESTED));
        }
        Some(unavailable(format!("{} failed: {os}", step.describe())))
    }

    impl Armed {
        /// What the child applies between fork and exec.
        pub fn child_plan(&self) -> Arc<ChildPlan> {
            self.child.clone()
        }

        /// Variables the run gets: the private temp dir and the sandbox markers.
        pub fn env(&self) -> &[(String, String)] {
            &self.env
        }

        pub fn tmp_dir(&self) -> &Path {
            self.tmp.path()
        }

        /// The run ended: its temp dir goes now, not with the session.
        pub fn release_tmp(&self) {
            self.tmp.release();
            // The run is over: so is its way out.
            if let Some(p) = &self.proxy {
                p.stop();
            }
        }

        /// Record the credentials' names the run's environment left out (for the report).
        pub fn set_dropped_env(&self, names: Vec<String>) {
            let _ = self.dropped_env.set(names);
        }

        /// None: the shell runs as chosen, the sandbox is applied in the child, not by a wrapper.
        pub fn shell_wrapper(&self) -> Option<super::ShellWrapper> {
            None
        }

        /// After the spawn: take the child's seccomp listener and start answering it.
        /// Start waiting for the listener a forked child will hand over: before the fork, as the
        /// forking thread is inside the spawn until the exec. (A spawn that shares our descriptor
        /// table needs no handover, nor this wait.)
        pub fn await_handover(&self) {
            self.handover.get_or_init(|| {
                let socket = self
                    .handover_socket
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                    .ok_or_else(|| std::io::Error::other("the handover socket is gone"))?;
                super::handover::Receiver::start(socket)
            });
        }

        pub fn after_spawn(&self) -> Result<(), AgentError> {
            let receiver = match self.handover.get() {
                Some(Ok(r)) => r,
                Some(Err(e)) => {
                    return Err(unavailable(format!(
                        "the listener handover could not start: {e}"
                    )))
                }
                None => return Err(unavailable("the listener handover was never started")),
            };
            let handed = receiver
                .take(std::time::Duration::from_secs(5))
                .map_err(|e| unavailable(format!("the seccomp listener did not arrive: {e}")))?;
            self.supervise(handed)
        }

        /// Start the supervisor on the child's filter listener, and the proxy on the socket the
        /// child made in its network namespace where it has one (a spawn that shares our descriptor
        /// table made them here; the others hand them over, see `after_spawn`).
        pub fn supervise(&self, handed: super::Handed) -> Result<(), AgentError> {
            if let Some(p) = self.proxy.as_ref().filter(|p| p.in_namespace) {
                let socket = handed.proxy.ok_or_else(|| {
                    unavailable("the proxy's socket in the run's network namespace did not arrive")
                })?;
                p.serve(std::net::TcpListener::from(socket))?;
            }
            super::supervisor::spawn(
                handed.listener,
                self.policy.clone(),
                self.network,
                self.proxy.as_ref().map(|p| p.addr),
                self.proxy.as_ref().map(|p| p.clients.clone()),
                self.log.clone(),
                self.shares_host_ipc,
            )
            .map_err(|e| unavailable(format!("the supervisor could not start: {e}")))?;
            Ok(())
        }

        /// Whether `dir` lies in a place hidden from the run: a directory the run could not have
        /// been in, so a cwd it reports there is forged (see `session::run`).
        pub fn hides(&self, dir: &Path) -> bool {
            let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            self.hidden_paths.iter().any(|h| real.starts_with(h))
        }

        /// The run's `cgroup.procs` files, for the kill path.
        pub fn cgroup_procs_files(&self) -> Vec<PathBuf> {
            self.cgroup
                .as_ref()
                .map(|c| c.procs_files())
                .unwrap_or_default()
        }

        /// The report for the outcome, given how the shell ended. Reads the cgroup's counters, then
        /// removes the cgroup if the run left nothing inside it.
        pub fn report(&self, exit_code: Option<i32>, exit_signal: Option<&str>) -> SandboxReport {
            let (denials, dropped) = self.log.snapshot();
            let (limit_exceeded, limit_message) = self.limit_verdict(exit_code, exit_signal);
            if let Some(cg) = &self.cgroup {
                cg.remove_soon();
            }
            SandboxReport {
                denials,
                denials_dropped: dropped,
                limit_exceeded,
                limit_message,
                dropped_env: self.dropped_env.get().cloned().unwrap_or_default(),
                ..SandboxReport::describing(
                    &self.policy,
                    self.tmp.path(),
                    self.network,
                    self.landlock_abi,
                    self.mechanisms.clone(),
                )
            }
        }

        /// Which limit, if any, ended the run or refused part of it. Memory and processes are the
        /// kernel's counts from the cgroup; CPU and file size are the signal the rlimit sends, seen on
        /// the shell itself or in its exit status (a shell reports a child killed by signal N as 128+N).
        fn limit_verdict(
            &self,
            exit_code: Option<i32>,
            exit_signal: Option<&str>,
        ) -> (Option<LimitKind>, Option<String>) {
            let by_signal = |sig: libc::c_int, name: &str| {
                exit_signal == Some(name) || exit_code == Some(128 + sig)
            };
            if let Some(cg) = &self.cgroup {
                let kills = cg.oom_kills();
                if kills > 0 {
                    let n = self.limits.memory_bytes.unwrap_or(0);
                    return (
                        Some(LimitKind::Memory),
                        Some(format!(
                            "the memory limit ({}) was reached: the kernel killed {} process{}",
                            format_bytes(n),
                            kills,
                            if kills == 1 { "" } else { "es" }
                        )),
                    );
                }
            }
            if let (Some(n), true) = (self.limits.memory_bytes, self.memory_by_rlimit) {
                // A program refused memory by RLIMIT_DATA most often aborts (Node and V8: SIGABRT or
                // SIGTRAP; C++'s bad_alloc: SIGABRT) or faults; the kernel keeps no count, so these
                // endings under a memory rlimit are named as the limit, said as likely.
                let ended_by = [
                    (libc::SIGABRT, "SIGABRT"),
                    (libc::SIGTRAP, "SIGTRAP"),
                    (libc::SIGSEGV, "SIGSEGV"),
                    (libc::SIGBUS, "SIGBUS"),
                    (libc::SIGKILL, "SIGKILL"),
                ]
                .into_iter()
                .find(|&(sig, name)| by_signal(sig, name));
                if let Some((_, name)) = ended_by {
                    return (
                        Some(LimitKind::Memory),
                        Some(format!(
                            "the memory limit ({}, per process) was likely reached: the run ended by {name}, as programs refused memory do",
                            format_bytes(n)
                        )),
                    );
                }
            }
            if let Some(n) = self.limits.cpu_seconds {
                if by_signal(libc::SIGXCPU, "SIGXCPU") {
                    return (
                        Some(LimitKind::Cpu),
                        Some(format!("the CPU limit ({n} s per process) was reached")),
                    );
                }
            }
            if let Some(n) = self.limits.file_size_bytes {
                if by_signal(libc::SIGXFSZ, "SIGXFSZ") {
                    return (
                        Some(LimitKind::FileSize),
                        Some(format!(
                            "the file size limit ({}) was reached",
                            format_bytes(n)
                        )),
                    );
                }
            }
            if let Some(cg) = &self.cgroup {
                let refused = cg.fork_refusals();
                if refused > 0 {
                    return (
                        Some(LimitKind::Processes),
                        Some(format!(
                            "the process limit ({}) refused {} fork{}",
                            self.limits.processes.unwrap_or(0),
                            refused,
                            if refused == 1 { "" } else { "s" }
                        )),
                    );
                }
            }
            (None, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_formatted_for_people() {
        assert_eq!(format_bytes(64 << 20), "64 MiB");
        assert_eq!(format_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(format_bytes(1000), "1000 bytes");
    }

    #[test]
    fn roots_must_be_existing_directories() {
        let dir = tempfile::tempdir().unwrap();
        let spec = SandboxSpec {
            writable_roots: Some(vec![dir.path().join("missing")]),
            ..Default::default()
        };
        let e = resolve_roots(&spec, dir.path()).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidOption);
        assert!(e.message.contains("does not exist"), "{}", e.message);
        let f = dir.path().join("file");
        std::fs::write(&f, "").unwrap();
        let spec = SandboxSpec {
            writable_roots: Some(vec![f]),
            ..Default::default()
        };
        assert!(resolve_roots(&spec, dir.path())
            .unwrap_err()
            .message
            .contains("not a directory"));
        let spec = SandboxSpec::default();
        assert_eq!(
            resolve_roots(&spec, dir.path()).unwrap(),
            vec![std::fs::canonicalize(dir.path()).unwrap()]
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod prepare_timing {
    /// Where the time of a sandboxed spawn goes before the clone (`cargo test --release --lib
    /// prepare_timing -- --ignored --nocapture`): a profiling aid, not a test.
    #[test]
    #[ignore]
    fn prepare_cost() {
        let dir = tempfile::tempdir().unwrap();
        let spec = super::SandboxSpec {
            writable_roots: None,
            network: false,
            unix_sockets: Vec::new(),
            limits: Default::default(),
            pass_env: Vec::new(),
            ends_with_command: false,
            ..Default::default()
        };
        let n = 200;
        let t = std::time::Instant::now();
        for i in 0..n {
            let a = super::prepare(
                &spec,
                dir.path(),
                None,
                None,
                &format!("agent-exec-{}-timing-{i}", std::process::id()),
                None,
            )
            .unwrap();
            drop(a);
        }
        eprintln!("prepare+drop: {:?} per run", t.elapsed() / n);
        let t = std::time::Instant::now();
        for _ in 0..n {
            let _ = super::seccomp::build_filter(false, false, false).unwrap();
        }
        eprintln!("build_filter: {:?} per run", t.elapsed() / n);
        let t = std::time::Instant::now();
        for _ in 0..n {
            let _ = super::seccomp::build_clone3_refusal().unwrap();
        }
        eprintln!("build_clone3_refusal: {:?} per run", t.elapsed() / n);
    }
}
