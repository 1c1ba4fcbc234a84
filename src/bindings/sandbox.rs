//! The sandbox from JS: the `sandbox` option of `exec` (checked key by key, so a misspelt key is an
//! error rather than a weaker sandbox), the report in the outcome, and `sandboxCapabilities()`.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi::ValueType;
use napi_derive::napi;

use super::errors::BindResult;
use super::fields::Fields;
use crate::error::AgentError;
use crate::sandbox::{ResourceLimits, SandboxReport, SandboxSpec};

/// `sandbox` of `exec`: `true` for the defaults, or the settings.
#[napi(object, js_name = "SandboxOptions")]
pub struct JsSandboxOptions {
    /// Directories the command may write beneath (default: the cwd). A private temp dir, also
    /// `$TMPDIR`, is always writable. `[]` makes everything else read-only.
    pub writable_roots: Option<Vec<String>>,
    /// Networking (default false). Off: no IP sockets, and only the Unix sockets under the writable
    /// roots or in `unixSockets`. On: every socket. By domain: `{allow: ['registry.npmjs.org',
    /// '*.github.com'], deny?, allowLocalhost?: [8080]}`: HTTP, HTTPS and SOCKS5 through the sandbox's
    /// proxy (the proxy variables are set), to the allowed names only; everything else refused.
    #[napi(ts_type = "boolean | SandboxNetwork")]
    pub network: Option<serde_json::Value>,
    /// Unix socket files (or directories of them) outside the roots that the command may connect to
    /// while the network is off, such as an ssh-agent's. Absolute paths.
    pub unix_sockets: Option<Vec<String>>,
    #[napi(ts_type = "SandboxLimits")]
    pub limits: Option<JsSandboxLimits>,
    /// Names of inherited variables that look like credentials (`*KEY*`, `*TOKEN*`, `*SECRET*`,
    /// `*PASSWORD*`, `AWS_*`, `GH_*`, ... see the README) that the command still gets. By default a
    /// sandboxed run inherits none of them (the report's `droppedEnv` names what was left out);
    /// variables given in `env` itself are always passed.
    pub pass_env: Option<Vec<String>>,
    /// Files and directories the command may not read (`~` for the home directory; relative to the
    /// cwd), on top of the credential locations hidden by default (`~/.ssh`, `~/.aws`, `~/.netrc`...,
    /// see the README). Needs a mount namespace for the run (`ERR_SANDBOX_UNAVAILABLE` without one).
    pub deny_read: Option<Vec<String>>,
    /// Paths brought back inside what `denyRead` or the default set hides, e.g. `~/.ssh/known_hosts`.
    pub allow_read: Option<Vec<String>>,
    /// Paths or globs inside the writable roots that stay read-only, e.g. `.env`, `secrets/**`,
    /// `*.pem` (relative ones apply in each root; `~` for the home directory).
    pub deny_write: Option<Vec<String>>,
}

/// `sandbox.network` by domain.
#[napi(object, js_name = "SandboxNetwork")]
pub struct JsSandboxNetwork {
    /// Host patterns the command may reach: `example.com`, or `*.example.com` for its subdomains.
    pub allow: Option<Vec<String>>,
    /// Patterns refused even where `allow` matches.
    pub deny: Option<Vec<String>>,
    /// Ports on this machine (loopback) the command may reach through the proxy.
    pub allow_localhost: Option<Vec<u32>>,
    /// Asked once per host and port for a name no pattern decides; no answer within
    /// `requestTimeoutMs` (default 120000) or a throw refuses it.
    #[napi(
        ts_type = "(request: NetworkRequest) => 'allow-once' | 'allow-always' | 'deny' | Promise<'allow-once' | 'allow-always' | 'deny'>"
    )]
    pub on_request: Option<serde_json::Value>,
    pub request_timeout_ms: Option<f64>,
}

#[napi(object, js_name = "SandboxLimits")]
pub struct JsSandboxLimits {
    /// CPU seconds per process.
    pub cpu_seconds: Option<f64>,
    /// Memory of the whole run in bytes (at least 4 MiB).
    pub memory_bytes: Option<f64>,
    /// Processes of the run at once.
    pub processes: Option<f64>,
    /// Largest file a process may write, in bytes.
    pub file_size_bytes: Option<f64>,
    /// Open files per process.
    pub open_files: Option<f64>,
}

const SANDBOX_KEYS: [&str; 8] = [
    "writableRoots",
    "network",
    "unixSockets",
    "limits",
    "passEnv",
    "denyRead",
    "allowRead",
    "denyWrite",
];
const LIMIT_KEYS: [&str; 5] = [
    "cpuSeconds",
    "memoryBytes",
    "processes",
    "fileSizeBytes",
    "openFiles",
];
const MIN_MEMORY: u64 = 4 << 20;

pub(crate) fn unknown_key(
    obj: &Object,
    allowed: &[&str],
    what: &str,
) -> Result<Option<AgentError>> {
    for key in Object::keys(obj)? {
        if !allowed.contains(&key.as_str()) {
            return Ok(Some(AgentError::invalid_option(format!(
                "{what} has no setting \"{key}\". The settings are {}.",
                allowed.join(", ")
            ))));
        }
    }
    Ok(None)
}

/// A whole number of at least `min`.
fn count(f: &Fields, name: &str, min: u64) -> BindResult<Option<u64>> {
    let Some(n) = f.non_negative(name)? else {
        return Ok(None);
    };
    if n.fract() != 0.0 || n < min as f64 || n > u64::MAX as f64 {
        return Err(AgentError::invalid_option(format!(
            "sandbox.limits.{name} must be a whole number of at least {min}, but it is {n}."
        ))
        .into());
    }
    Ok(Some(n as u64))
}

/// Read the `sandbox` option (`None` when absent or `false`).
pub fn parse_sandbox(f: &Fields) -> BindResult<Option<SandboxSpec>> {
    let Some((t, _)) = f.object("sandbox")? else {
        return Ok(None);
    };
    match t {
        ValueType::Boolean => {
            let on = f.obj.get::<bool>("sandbox")?.unwrap_or(false);
            return Ok(on.then(SandboxSpec::default));
        }
        ValueType::Object => {}
        _ => {
            return Err(AgentError::invalid_option(
                "The sandbox option must be true, false or an object { writableRoots, network, unixSockets, limits }.",
            ).into())
        }
    }
    let obj: Object = f.obj.get("sandbox")?.expect("checked above");
    if let Some(e) = unknown_key(&obj, &SANDBOX_KEYS, "The sandbox option")? {
        return Err(e.into());
    }
    let sf = Fields { obj };
    let mut spec = SandboxSpec::default();
    if sf.object("writableRoots")?.is_some() {
        let roots = sf.strings_or("writableRoots", || {
            "sandbox.writableRoots must be an array of directory paths.".into()
        })?;
        no_empty_path("writableRoots", &roots, " Give real directories.")?;
        spec.writable_roots = Some(roots.into_iter().map(PathBuf::from).collect());
    }
    match sf.object("network")? {
        None => {}
        Some((ValueType::Boolean, _)) => spec.network = sf.boolean("network")?.unwrap_or(false),
        Some((ValueType::Object, _)) => spec.domains = Some(parse_domains(&sf)?),
        Some(_) => {
            return Err(AgentError::invalid_option(
                "sandbox.network must be true, false, or { allow: [\"example.com\", \"*.example.com\"], deny, allowLocalhost: [8080] }.",
            )
            .into())
        }
    }
    if sf.object("unixSockets")?.is_some() {
        let sockets = sf.strings_or("unixSockets", || {
            "sandbox.unixSockets must be an array of absolute paths of Unix sockets (or directories of them).".into()
        })?;
        no_empty_path(
            "unixSockets",
            &sockets,
            " Give the sockets' absolute paths.",
        )?;
        spec.unix_sockets = sockets.into_iter().map(PathBuf::from).collect();
    }
    spec.pass_env = sf.strings_or("passEnv", || {
        "sandbox.passEnv must be an array of variable names, such as [\"NPM_TOKEN\"].".into()
    })?;
    spec.deny_read = path_list(&sf, "denyRead")?
        .into_iter()
        .map(PathBuf::from)
        .collect();
    spec.allow_read = path_list(&sf, "allowRead")?
        .into_iter()
        .map(PathBuf::from)
        .collect();
    spec.deny_write = path_list(&sf, "denyWrite")?;
    match sf.object("limits")? {
        None => {}
        Some((ValueType::Object, _)) => {
            let lo: Object = sf.obj.get("limits")?.expect("checked above");
            if let Some(e) = unknown_key(&lo, &LIMIT_KEYS, "sandbox.limits")? {
                return Err(e.into());
            }
            let lf = Fields { obj: lo };
            spec.limits = ResourceLimits {
                cpu_seconds: count(&lf, "cpuSeconds", 1)?,
                memory_bytes: count(&lf, "memoryBytes", MIN_MEMORY)?,
                processes: count(&lf, "processes", 1)?,
                file_size_bytes: count(&lf, "fileSizeBytes", 1)?,
                open_files: count(&lf, "openFiles", 1)?,
            };
        }
        Some(_) => return Err(AgentError::invalid_option(
            "sandbox.limits must be an object such as { memoryBytes: 536870912, processes: 256 }.",
        )
        .into()),
    }
    Ok(Some(spec))
}

const NETWORK_KEYS: [&str; 5] = [
    "allow",
    "deny",
    "allowLocalhost",
    "onRequest",
    "requestTimeoutMs",
];

/// What `sandbox.network.onRequest` receives.
#[napi(object, js_name = "NetworkRequest")]
pub struct JsNetworkRequest {
    pub host: String,
    pub port: u32,
}

type NetworkAskFn = napi::threadsafe_function::ThreadsafeFunction<
    JsNetworkRequest,
    Either<String, Promise<String>>,
    JsNetworkRequest,
    napi::Status,
    false,
>;

/// `onRequest` as the proxy's asker: `allow-once` and `allow-always` allow (the run keeps the
/// answer for that host and port), anything else, a throw or no answer within the deadline refuses.
fn network_asker(tsfn: NetworkAskFn, timeout: std::time::Duration) -> crate::sandbox::NetworkAsker {
    let tsfn = std::sync::Arc::new(tsfn);
    crate::sandbox::NetworkAsker(std::sync::Arc::new(move |host: String, port: u16| {
        let tsfn = tsfn.clone();
        Box::pin(async move {
            let ask = async {
                let returned = tsfn
                    .call_async_catch(JsNetworkRequest {
                        host,
                        port: port.into(),
                    })
                    .await
                    .ok()?;
                let answer = match returned {
                    Either::A(s) => s,
                    Either::B(p) => p.await.ok()?,
                };
                Some(answer == "allow-once" || answer == "allow-always")
            };
            matches!(tokio::time::timeout(timeout, ask).await, Ok(Some(true)))
        })
    }))
}

/// `sandbox.network` as an object: the network by domain, through the sandbox's proxy.
fn parse_domains(sf: &Fields) -> BindResult<crate::sandbox::DomainPolicy> {
    let obj: Object = sf.obj.get("network")?.expect("checked by the caller");
    if let Some(e) = unknown_key(&obj, &NETWORK_KEYS, "sandbox.network")? {
        return Err(e.into());
    }
    let nf = Fields { obj };
    let list = |name: &str| {
        nf.strings_or(name, || format!(
            "sandbox.network.{name} must be an array of host patterns, such as [\"registry.npmjs.org\", \"*.github.com\"]."
        ))
    };
    let bad_ports = || {
        AgentError::invalid_option(
            "sandbox.network.allowLocalhost must be an array of port numbers (1-65535) on this machine the command may reach, such as [5432].",
        )
    };
    let mut ports = Vec::new();
    if let Some((t, value)) = nf.object("allowLocalhost")? {
        if t != ValueType::Object || !value.is_array()? {
            return Err(bad_ports().into());
        }
        let arr: Array = nf.obj.get("allowLocalhost")?.expect("checked above");
        for i in 0..arr.len() {
            let n: Option<f64> = arr.get(i).ok().flatten();
            match n {
                Some(n) if n.fract() == 0.0 && (1.0..=65535.0).contains(&n) => ports.push(n as u16),
                _ => return Err(bad_ports().into()),
            }
        }
    }
    let timeout = std::time::Duration::from_millis(
        nf.non_negative("requestTimeoutMs")?.unwrap_or(120_000.0) as u64,
    );
    let on_request = if nf.function("onRequest")? {
        let tsfn: NetworkAskFn = nf.obj.get("onRequest")?.expect("checked to be a function");
        Some(network_asker(tsfn, timeout))
    } else {
        None
    };
    Ok(crate::sandbox::DomainPolicy {
        allow: list("allow")?,
        deny: list("deny")?,
        allow_localhost: ports,
        on_request,
    })
}

/// `sandbox.<name>`: an array of paths, `~` or `~/...` meaning the home directory.
fn path_list(sf: &Fields, name: &str) -> BindResult<Vec<String>> {
    let paths = sf.strings_or(name, || {
        format!("sandbox.{name} must be an array of paths, such as [\"~/.ssh\", \".env\"].")
    })?;
    no_empty_path(name, &paths, "")?;
    let home = std::env::var("HOME").ok().filter(|h| !h.is_empty());
    paths
        .into_iter()
        .map(|p| {
            match (p.strip_prefix('~'), &home) {
                (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                    Ok(format!("{h}{rest}"))
                }
                (Some(rest), None) if rest.is_empty() || rest.starts_with('/') => {
                    Err(AgentError::invalid_option(format!(
                        "sandbox.{name} has {p:?}, but HOME is not set, so ~ means nothing. Give an absolute path."
                    ))
                    .into())
                }
                _ => Ok(p),
            }
        })
        .collect()
}

/// `sandbox.<name>` holds no empty path and none with a NUL byte (`advice` follows the complaint).
fn no_empty_path(name: &str, paths: &[String], advice: &str) -> BindResult<()> {
    match paths.iter().find(|p| p.is_empty() || p.contains('\0')) {
        Some(bad) => Err(AgentError::invalid_option(format!(
            "sandbox.{name} has an empty path or one with a NUL byte ({bad:?}).{advice}"
        ))
        .into()),
        None => Ok(()),
    }
}

/// One operation the sandbox refused.
#[napi(object, js_name = "SandboxDenial")]
#[derive(Clone)]
pub struct JsSandboxDenial {
    /// `write`, `mkdir`, `mknod`, `remove`, `rename`, `link`, `symlink`, `truncate`, `chmod`, `chown`,
    /// `utime`, `xattr`, `connect`, `send` (a datagram's destination), `lock`, `ipc` (another
    /// program's System V object, where the run has no IPC namespace), `network` or `syscall` (a
    /// system call no command needs).
    pub operation: String,
    pub path: Option<String>,
    /// The system call and its flags or family, e.g. `openat(O_WRONLY|O_CREAT|O_TRUNC)`, `socket(AF_INET)`,
    /// `connect(AF_UNIX)`, `sendto(AF_UNIX)`, `unshare(CLONE_NEWNS)`, `mknodat(S_IFCHR)`, `mount`.
    pub detail: String,
    /// The rule that refused it: `outside the writable roots`, `protected path <p>`, `network is off`,
    /// `outside the writable roots and unixSockets` (a Unix socket), or for a `syscall` one such as
    /// `no mounts in the sandbox`.
    pub rule: String,
    pub pid: u32,
    /// How many times the same operation was refused.
    pub count: u32,
}

/// What a sandboxed run reports.
#[napi(object, js_name = "SandboxReport")]
#[derive(Clone)]
pub struct JsSandboxReport {
    /// The run's private temp dir (`$TMPDIR`), removed with the session.
    pub tmp_dir: String,
    pub writable_roots: Vec<String>,
    /// Paths inside the roots that stayed read-only.
    pub protected_paths: Vec<String>,
    pub network: bool,
    /// Unix sockets outside the roots the run may connect to (with the network off).
    pub unix_sockets: Vec<String>,
    pub landlock_abi: u32,
    /// How each part was enforced.
    pub mechanisms: Vec<String>,
    #[napi(ts_type = "Array<SandboxDenial>")]
    pub denials: Vec<JsSandboxDenial>,
    /// Distinct denials beyond the 200 recorded.
    pub denials_dropped: f64,
    #[napi(ts_type = "'cpu' | 'memory' | 'processes' | 'fileSize'")]
    pub limit_exceeded: Option<String>,
    pub limit_message: Option<String>,
    /// Variables the run did not inherit because their names look like credentials (names only).
    pub dropped_env: Vec<String>,
}

impl From<SandboxReport> for JsSandboxReport {
    fn from(r: SandboxReport) -> Self {
        JsSandboxReport {
            tmp_dir: r.tmp_dir,
            writable_roots: r.writable_roots,
            protected_paths: r.protected_paths,
            network: r.network,
            unix_sockets: r.unix_sockets,
            landlock_abi: r.landlock_abi,
            mechanisms: r.mechanisms,
            denials: r
                .denials
                .into_iter()
                .map(|d| JsSandboxDenial {
                    operation: d.operation,
                    path: d.path,
                    detail: d.detail,
                    rule: d.rule,
                    pid: d.pid,
                    count: d.count,
                })
                .collect(),
            denials_dropped: r.denials_dropped as f64,
            limit_exceeded: r.limit_exceeded.map(|l| l.as_str().to_string()),
            limit_message: r.limit_message,
            dropped_env: r.dropped_env,
        }
    }
}

/// What this host can enforce.
#[napi(object, js_name = "SandboxCapabilities")]
pub struct JsSandboxCapabilities {
    pub platform: String,
    /// True when `exec({sandbox})` can run here (file rules, network cut, reports).
    pub enforceable: bool,
    /// Why not, when it cannot.
    pub problems: Vec<String>,
    /// The kernel's Landlock ABI (0: none); 4 adds TCP rules, 6 signal and socket scopes.
    pub landlock_abi: u32,
    /// seccomp filters with user notifications.
    pub seccomp: bool,
    pub user_namespaces: bool,
    /// A run can have a mount namespace of its own (root with CAP_SYS_ADMIN, or a user namespace;
    /// tried, not assumed): protected paths are bound read-only and runs that have one get a private
    /// `/dev/shm`. Otherwise only the supervisor guards the protected paths.
    pub read_only_binds: bool,
    /// Runs with a mount namespace of their own (root runs; unprivileged ones that have one for their
    /// protected paths or process limit) get every mount outside the writable roots read-only
    /// (`mount_setattr`), so the kernel refuses what a race against the supervisor's check could slip
    /// through.
    pub read_only_mounts: bool,
    /// Runs get PID, IPC and UTS namespaces of their own (root, or a user namespace; tried, not
    /// assumed): the host's processes are invisible, its SysV IPC and hostname out of reach, and an
    /// init that dies with the host takes every process of the run with it. Otherwise the filter
    /// refuses changes to other processes' limits and scheduling.
    pub process_namespaces: bool,
    /// Runs get a `/dev` of their own (a tmpfs with the bit buckets, randomness, `/dev/tty`, a devpts
    /// instance of their own or only their own terminal): no other terminal, console, loop device,
    /// `userfaultfd`, `kvm` or disk is there. Otherwise Landlock grants device ioctls only on those
    /// nodes and the filter refuses terminal injection, console and loop device ioctls.
    pub private_dev: bool,
    /// Runs with the network off get a network namespace of their own: no interfaces, and abstract
    /// Unix socket names private to the run (nothing it listens on can be reached from outside).
    /// Otherwise the filter refuses IP sockets and abstract connects, but not an abstract `bind`.
    pub network_namespace: bool,
    /// Reads can be taken away (`denyRead`, and the credential locations hidden by default: `~/.ssh`,
    /// `~/.aws`, ...): runs get a mount namespace. Otherwise those stay readable, and `denyRead` is
    /// `ERR_SANDBOX_UNAVAILABLE`.
    pub deny_read: bool,
    /// `network: {allow: [...]}` can be enforced: TCP through the run's own proxy, every other
    /// connection refused by the seccomp supervisor (Linux).
    pub network_by_domain: bool,
    pub no_new_privs: bool,
    pub rlimits: bool,
    /// `1` or `2` when a per-run cgroup can be created.
    pub cgroup_version: Option<u32>,
    /// How each limit is enforced here: `cgroup`, `rlimit`, or absent when it cannot be.
    #[napi(ts_type = "SandboxLimitMechanisms")]
    pub limits: JsLimitMechanisms,
}

#[napi(object, js_name = "SandboxLimitMechanisms")]
pub struct JsLimitMechanisms {
    #[napi(ts_type = "'rlimit' | undefined")]
    pub cpu_seconds: Option<String>,
    #[napi(ts_type = "'cgroup' | 'rlimit-data' | undefined")]
    pub memory_bytes: Option<String>,
    #[napi(ts_type = "'cgroup' | 'rlimit-userns' | undefined")]
    pub processes: Option<String>,
    #[napi(ts_type = "'rlimit' | undefined")]
    pub file_size_bytes: Option<String>,
    #[napi(ts_type = "'rlimit' | undefined")]
    pub open_files: Option<String>,
}

/// What this host can enforce for `exec({ sandbox })`: an agent can check before it asks. Asking for
/// a sandbox the host cannot enforce is an `ERR_SANDBOX_UNAVAILABLE` error, never an unsandboxed run.
#[napi]
pub fn sandbox_capabilities() -> JsSandboxCapabilities {
    let caps = crate::sandbox::capabilities::get();
    let linux = cfg!(target_os = "linux");
    let ok = caps.enforceable();
    let rl = |on: bool, how: &str| (ok && on).then(|| how.to_string());
    #[cfg(target_os = "linux")]
    let (cg_version, cg_memory, cg_pids) = match &caps.cgroup {
        Some(h) => (Some(h.version() as u32), h.has_memory(), h.has_pids()),
        None => (None, false, false),
    };
    #[cfg(not(target_os = "linux"))]
    let (cg_version, cg_memory, cg_pids) = (None, false, false);
    let processes = if cg_pids {
        rl(true, "cgroup")
    } else {
        rl(
            linux && caps.process_limit_in_user_namespace(),
            "rlimit-userns",
        )
    };
    JsSandboxCapabilities {
        platform: std::env::consts::OS.to_string(),
        enforceable: ok,
        problems: caps.problems.clone(),
        landlock_abi: caps.landlock_abi,
        seccomp: caps.seccomp,
        user_namespaces: caps.user_namespaces,
        read_only_binds: caps.mount_namespace,
        read_only_mounts: caps.read_only_mounts,
        process_namespaces: caps.process_namespaces,
        private_dev: caps.private_dev,
        deny_read: caps.mount_namespace,
        network_by_domain: linux && caps.enforceable(),
        network_namespace: caps.network_namespace,
        no_new_privs: linux,
        rlimits: linux,
        cgroup_version: cg_version,
        limits: JsLimitMechanisms {
            cpu_seconds: rl(linux, "rlimit"),
            memory_bytes: if cg_memory {
                rl(true, "cgroup")
            } else {
                rl(linux, "rlimit-data")
            },
            processes,
            file_size_bytes: rl(linux, "rlimit"),
            open_files: rl(linux, "rlimit"),
        },
    }
}
