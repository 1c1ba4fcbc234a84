//! `processTracking()`: how this host finds every process of a run for its kill.

use napi_derive::napi;

#[napi(object, js_name = "ProcessTracking")]
pub struct JsProcessTracking {
    /// `"cgroup"`: every run is born in a cgroup of its own, so a descendant that clears the session
    /// marker and calls `setsid` is still killed with it. `"marker"`: runs are found by their process
    /// group, their session and the `AGENT_EXEC_SESSION` variable, which such a descendant escapes.
    #[napi(ts_type = "'cgroup' | 'marker'")]
    pub mechanism: String,
    /// 1 or 2 with cgroups.
    pub cgroup_version: Option<u32>,
    /// How a pipe run enters its cgroup without a fork: `"clone3"` (cgroup v2, `CLONE_INTO_CGROUP`)
    /// or `"thread"` (cgroup v1, the spawning thread moves in around the spawn). Absent: pipe runs
    /// fork and join before exec (about 3 ms more a run), or there is no cgroup.
    #[napi(ts_type = "'clone3' | 'thread'")]
    pub pipe_spawn: Option<String>,
    /// Why cgroups are not used, when they are not.
    pub reason: Option<String>,
    /// The directory runs' cgroups are made in (`agent-exec-<host pid>-...`).
    pub cgroup_parent: Option<String>,
    /// How a run's exit is awaited: `"io_uring"` (one ring for every run, kernel 6.7+: a live pipe
    /// session holds only its two pipes), `"pidfd"` (a descriptor per run: three per pipe session),
    /// or `"process"` (the platform's child handle).
    #[napi(ts_type = "'io_uring' | 'pidfd' | 'process'")]
    pub exit_watch: String,
}

/// How runs are tracked on this host (probed once: a cgroup is made and removed).
#[napi]
pub fn process_tracking() -> JsProcessTracking {
    #[cfg(target_os = "linux")]
    {
        let r = crate::spawn::tracking::report();
        JsProcessTracking {
            mechanism: r.mechanism.to_string(),
            cgroup_version: r.cgroup_version.map(u32::from),
            pipe_spawn: r.pipe_spawn.map(str::to_string),
            reason: r.reason,
            cgroup_parent: r.parent.map(|p| p.display().to_string()),
            exit_watch: if crate::spawn::exit_watch::ring_available() {
                "io_uring"
            } else {
                "pidfd"
            }
            .to_string(),
        }
    }
    #[cfg(not(target_os = "linux"))]
    JsProcessTracking {
        mechanism: "marker".to_string(),
        cgroup_version: None,
        pipe_spawn: None,
        reason: Some(format!(
            "cgroups exist only on Linux; on {} runs are found by their process group",
            std::env::consts::OS
        )),
        cgroup_parent: None,
        exit_watch: "process".to_string(),
    }
}
