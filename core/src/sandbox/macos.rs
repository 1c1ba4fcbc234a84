//! The macOS form of the sandbox: a `sandbox-exec` (Seatbelt) profile with the meaning of the Linux
//! one. Everything is allowed except writes outside the writable roots and the devices, writes to the
//! protected paths, and (with the network off) IP networking and Unix sockets outside the writable roots
//! and the caller's `unixSockets`.
//!
//! Paths are never written into the profile text: they are passed as `-D` parameters, so a directory
//! name cannot change the profile. `sandbox-exec` is called by absolute path so a `PATH` entry cannot
//! replace it. The text is generated and unit-tested on every platform; running it needs macOS, which
//! is built by the release workflow and not tested on this project's CI machine (see the README).

use super::policy::{FsPolicy, WRITABLE_DEVICES, WRITABLE_DEVICE_DIRS};

pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile and its parameters for `policy`.
pub fn profile(policy: &FsPolicy, network: bool) -> (String, Vec<(String, String)>) {
    let mut params = Vec::new();
    let mut allowed = Vec::new();
    for (i, root) in policy.writable_roots.iter().enumerate() {
        let key = format!("WRITABLE_ROOT_{i}");
        allowed.push(format!("(subpath (param \"{key}\"))"));
        params.push((key, root.display().to_string()));
    }
    for dev in WRITABLE_DEVICES {
        allowed.push(format!("(literal \"{dev}\")"));
    }
    for dir in WRITABLE_DEVICE_DIRS {
        allowed.push(format!("(subpath \"{dir}\")"));
    }
    // macOS terminals are /dev/ttys*.
    allowed.push("(regex #\"^/dev/ttys[0-9]+$\")".to_string());
    let mut sockets = Vec::new();
    for (i, s) in policy.unix_sockets.iter().enumerate() {
        let key = format!("UNIX_SOCKET_{i}");
        sockets.push(format!("(subpath (param \"{key}\"))"));
        params.push((key, s.display().to_string()));
    }
    let mut protected = Vec::new();
    for (i, p) in policy.protected.iter().enumerate() {
        let key = format!("PROTECTED_{i}");
        protected.push(format!("(subpath (param \"{key}\"))"));
        params.push((key, p.display().to_string()));
    }
    // The host's own directories in a root: not the run's, but for its own temp dir (see
    // `FsPolicy::host_dirs`).
    let mut host_dirs = Vec::new();
    for (i, d) in policy.host_dirs.iter().enumerate() {
        let key = format!("HOST_DIR_{i}");
        host_dirs.push(format!("(subpath (param \"{key}\"))"));
        params.push((key, d.display().to_string()));
    }
    let own_tmp = policy.own_tmp.as_ref().map(|t| {
        params.push(("OWN_TMP".into(), t.display().to_string()));
        "(require-not (subpath (param \"OWN_TMP\")))"
    });
    let mut text = String::from("(version 1)\n(allow default)\n");
    text.push_str("(deny file-write*\n  (require-all\n");
    for a in &allowed {
        text.push_str(&format!("    (require-not {a})\n"));
    }
    text.push_str("  ))\n");
    if !protected.is_empty() {
        text.push_str(&format!("(deny file-write* {})\n", protected.join(" ")));
    }
    if !host_dirs.is_empty() {
        text.push_str(&format!(
            "(deny file-write* (require-all (require-any {}) {}))\n",
            host_dirs.join(" "),
            own_tmp.unwrap_or("")
        ));
    }
    if !network {
        text.push_str("(deny network-outbound (remote ip))\n");
        text.push_str("(deny network-inbound (local ip))\n");
        text.push_str("(deny network-bind (local ip))\n");
        // Path filters on network-outbound match Unix socket paths only; the later allow wins.
        text.push_str("(deny network-outbound (subpath \"/\"))\n");
        let reachable: Vec<String> = (0..policy.writable_roots.len())
            .map(|i| format!("(subpath (param \"WRITABLE_ROOT_{i}\"))"))
            .chain(sockets)
            .collect();
        text.push_str(&format!(
            "(allow network-outbound {})\n",
            reachable.join(" ")
        ));
    }
    (text, params)
}

/// The argv that runs `program args...` under the profile.
pub fn command_prefix(policy: &FsPolicy, network: bool) -> Vec<String> {
    let (text, params) = profile(policy, network);
    let mut argv = vec![SANDBOX_EXEC.to_string(), "-p".to_string(), text];
    for (k, v) in params {
        argv.push("-D".to_string());
        argv.push(format!("{k}={v}"));
    }
    argv.push("--".to_string());
    argv
}

/// A prepared macOS sandbox: the shell is started through `sandbox-exec` with the profile.
#[cfg(target_os = "macos")]
pub struct Armed {
    env: Vec<(String, String)>,
    tmp: super::PrivateTmp,
    policy: FsPolicy,
    network: bool,
    dropped_env: std::sync::OnceLock<Vec<String>>,
}

#[cfg(target_os = "macos")]
pub fn prepare(
    spec: &super::SandboxSpec,
    cwd: &std::path::Path,
    home: Option<&std::path::Path>,
    log_dir: Option<&std::path::Path>,
    _name: &str,
    _tracked_by: Option<u8>,
) -> Result<Armed, crate::error::AgentError> {
    use super::unavailable;
    if spec.limits != super::ResourceLimits::default() {
        return Err(unavailable(
            "resource limits are not implemented on macOS yet",
        ));
    }
    if spec.domains.is_some() {
        return Err(unavailable(
            "sandbox.network by domain is not implemented on macOS yet (true or false are)",
        ));
    }
    if !spec.deny_read.is_empty() || !spec.allow_read.is_empty() {
        return Err(unavailable(
            "sandbox.denyRead and allowRead are not implemented on macOS yet",
        ));
    }
    if spec
        .deny_write
        .iter()
        .any(|e| e.contains(['*', '?', '[', '{']))
    {
        return Err(unavailable(
            "sandbox.denyWrite globs are not implemented on macOS yet (paths are)",
        ));
    }
    if !std::path::Path::new(SANDBOX_EXEC).exists() {
        return Err(unavailable(format!("{SANDBOX_EXEC} is missing")));
    }
    let mut roots = super::resolve_roots(spec, cwd)?;
    let tmp = super::private_tmp()?;
    let tmp_path = tmp.path().to_path_buf();
    roots.push(tmp_path.clone());
    let env = super::sandbox_env(&tmp_path, spec.network);
    let host_dirs: Vec<&std::path::Path> = tmp_path.parent().into_iter().chain(log_dir).collect();
    Ok(Armed {
        env,
        tmp,
        policy: FsPolicy::new(roots, home)
            .with_unix_sockets(super::resolve_unix_sockets(spec)?)
            .with_deny_write(&spec.deny_write)
            .map_err(crate::error::AgentError::invalid_option)?
            .with_host_dirs(&host_dirs, &tmp_path),
        network: spec.network,
        dropped_env: std::sync::OnceLock::new(),
    })
}

#[cfg(target_os = "macos")]
impl Armed {
    pub fn env(&self) -> &[(String, String)] {
        &self.env
    }

    pub fn tmp_dir(&self) -> &std::path::Path {
        self.tmp.path()
    }

    /// The run ended: its temp dir goes now, not with the session.
    pub fn release_tmp(&self) {
        self.tmp.release();
    }

    /// `sandbox-exec -p <profile> -D ... --`, which the shell runs under.
    pub fn shell_wrapper(&self) -> Option<super::ShellWrapper> {
        Some(super::ShellWrapper {
            program: SANDBOX_EXEC.into(),
            args: command_prefix(&self.policy, self.network)
                .into_iter()
                .skip(1)
                .collect(),
        })
    }

    pub fn after_spawn(&self) -> Result<(), crate::error::AgentError> {
        Ok(())
    }

    pub fn cgroup_procs_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// Nothing is hidden from reads on macOS yet (denyRead is refused there).
    pub fn hides(&self, _dir: &std::path::Path) -> bool {
        false
    }

    /// Seatbelt reports denials to the system log only, so none are listed here.
    pub fn report(
        &self,
        _exit_code: Option<i32>,
        _exit_signal: Option<&str>,
    ) -> super::SandboxReport {
        super::SandboxReport {
            dropped_env: self.dropped_env.get().cloned().unwrap_or_default(),
            ..super::SandboxReport::describing(
                &self.policy,
                self.tmp.path(),
                self.network,
                0,
                vec!["sandbox-exec".to_string()],
            )
        }
    }

    /// Record the credentials' names the run's environment left out (for the report).
    pub fn set_dropped_env(&self, names: Vec<String>) {
        let _ = self.dropped_env.set(names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn policy() -> FsPolicy {
        FsPolicy {
            writable_roots: vec![PathBuf::from("/work/a \"b\""), PathBuf::from("/tmp/x")],
            protected: vec![PathBuf::from("/work/a \"b\"/.git/hooks")],
            git_entries: Vec::new(),
            home: None,
            unix_sockets: vec![PathBuf::from("/run/agent.sock")],
            private_shm: None,
            deny_write_globs: Default::default(),
            protected_index: Default::default(),
            own_devpts: false,
            host_dirs: Vec::new(),
            own_tmp: None,
        }
    }

    #[test]
    fn the_hosts_own_directories_are_not_written_but_for_the_runs_temp_dir() {
        let mut p = policy();
        p.host_dirs = vec![PathBuf::from("/tmp/x/agent-exec-sandbox-501")];
        p.own_tmp = Some(PathBuf::from("/tmp/x/agent-exec-sandbox-501/run"));
        let (text, params) = profile(&p, true);
        assert!(text.contains("(deny file-write* (require-all (require-any (subpath (param \"HOST_DIR_0\"))) (require-not (subpath (param \"OWN_TMP\")))))"), "{text}");
        assert!(params.contains(&("HOST_DIR_0".into(), "/tmp/x/agent-exec-sandbox-501".into())));
        assert!(!profile(&policy(), true).0.contains("HOST_DIR"));
    }

    #[test]
    fn paths_are_parameters_never_profile_text() {
        let (text, params) = profile(&policy(), false);
        assert!(!text.contains("/work"), "{text}");
        assert_eq!(
            params,
            vec![
                ("WRITABLE_ROOT_0".to_string(), "/work/a \"b\"".to_string()),
                ("WRITABLE_ROOT_1".to_string(), "/tmp/x".to_string()),
                ("UNIX_SOCKET_0".to_string(), "/run/agent.sock".to_string()),
                (
                    "PROTECTED_0".to_string(),
                    "/work/a \"b\"/.git/hooks".to_string()
                ),
            ]
        );
        assert!(text.contains("(require-not (subpath (param \"WRITABLE_ROOT_1\")))"));
        assert!(text.contains("(deny file-write* (subpath (param \"PROTECTED_0\")))"));
        assert!(text.contains("(require-not (literal \"/dev/null\"))"));
    }

    #[test]
    fn the_network_rules_follow_the_option() {
        let (off, _) = profile(&policy(), false);
        let (on, _) = profile(&policy(), true);
        assert!(off.contains("(deny network-outbound (remote ip))"));
        assert!(off.contains("(deny network-outbound (subpath \"/\"))\n(allow network-outbound (subpath (param \"WRITABLE_ROOT_0\")) (subpath (param \"WRITABLE_ROOT_1\")) (subpath (param \"UNIX_SOCKET_0\")))"), "{off}");
        assert!(!on.contains("network-outbound"));
        // Balanced parentheses: a profile sandbox-exec can parse at all.
        for t in [&off, &on] {
            let depth = t.chars().fold(0i32, |d, c| match c {
                '(' => d + 1,
                ')' => d - 1,
                _ => d,
            });
            assert_eq!(depth, 0, "{t}");
        }
    }

    #[test]
    fn the_prefix_calls_sandbox_exec_by_absolute_path() {
        let argv = command_prefix(&policy(), true);
        assert_eq!(argv[0], "/usr/bin/sandbox-exec");
        assert_eq!(argv[1], "-p");
        assert_eq!(argv.last().unwrap(), "--");
        assert!(argv.contains(&"WRITABLE_ROOT_1=/tmp/x".to_string()));
    }
}
