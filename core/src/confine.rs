//! Confinement of a "yes" the approval gate gave on analysis alone (the read-only class, a safe bin).
//!
//! The analyzer models bash, git and a list of tools; every round of outside testing found something
//! it modelled wrong. So a command let through without anyone trusting it by name runs where a wrong
//! verdict cannot hurt: a read-only sandbox (nothing writable but its private temp dir, no network,
//! its own processes only, gone when it ends), with git told to take no optional locks and to run no
//! hooks and no fsmonitor. What the user trusted by name (allowlist entries, allow rules, the
//! handler's answers) runs as configured.

use crate::approval::gate::Confinement;
use crate::sandbox::SandboxSpec;
use crate::spawn::ExecRequest;

/// Variables a confined run gets: git's read-only behaviour, as `git status` in an editor's
/// background takes it (`GIT_OPTIONAL_LOCKS=0`), and no program of the repository's config run
/// (`core.fsmonitor`, hooks) through `GIT_CONFIG_*`, which outranks every config file.
pub const GIT_READ_ONLY_ENV: [(&str, &str); 6] = [
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_CONFIG_COUNT", "2"),
    ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
    ("GIT_CONFIG_VALUE_0", "false"),
    ("GIT_CONFIG_KEY_1", "core.hooksPath"),
    ("GIT_CONFIG_VALUE_1", "/dev/null"),
];

/// Confine `request` for a "yes" on analysis alone. Where the host can enforce a sandbox, the run's
/// sandbox becomes read-only (a sandbox the caller asked for is tightened: no writable roots, no
/// network, no Unix sockets; its limits stay). Where it cannot, nothing changes and the answer says
/// why only the analysis held.
pub fn confine_read_only(request: &mut ExecRequest) -> Confinement {
    let caps = crate::sandbox::capabilities::get();
    if !caps.enforceable() {
        return Confinement::AnalysisOnly(format!(
            "this host cannot make a sandbox ({}), so only the analysis held",
            caps.problems.join("; ")
        ));
    }
    let spec = request.sandbox.get_or_insert_with(SandboxSpec::default);
    spec.writable_roots = Some(Vec::new());
    spec.network = false;
    spec.unix_sockets.clear();
    spec.ends_with_command = true;
    for (k, v) in GIT_READ_ONLY_ENV {
        request.env.retain(|(name, _)| name != k);
        request.env.push((k.to_string(), v.to_string()));
    }
    Confinement::ReadOnlySandbox
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_made_read_only_and_a_callers_sandbox_tightened() {
        let mut plain = ExecRequest::new("git status");
        let mut asked = ExecRequest::new("ls");
        asked.sandbox = Some(SandboxSpec {
            writable_roots: Some(vec!["/tmp".into()]),
            network: true,
            unix_sockets: vec!["/run/x.sock".into()],
            limits: crate::sandbox::ResourceLimits {
                cpu_seconds: Some(5),
                ..Default::default()
            },
            pass_env: Vec::new(),
            ends_with_command: false,
            ..Default::default()
        });
        asked.env.push(("GIT_CONFIG_COUNT".into(), "9".into()));
        for r in [&mut plain, &mut asked] {
            match confine_read_only(r) {
                Confinement::ReadOnlySandbox => {
                    let s = r.sandbox.as_ref().unwrap();
                    assert_eq!(s.writable_roots.as_deref(), Some(&[][..]));
                    assert!(!s.network && s.unix_sockets.is_empty() && s.ends_with_command);
                    assert_eq!(r.env_var("GIT_OPTIONAL_LOCKS").as_deref(), Some("0"));
                    assert_eq!(r.env_var("GIT_CONFIG_COUNT").as_deref(), Some("2"));
                    assert_eq!(
                        r.env
                            .iter()
                            .filter(|(k, _)| k == "GIT_CONFIG_COUNT")
                            .count(),
                        1
                    );
                }
                Confinement::AnalysisOnly(why) => {
                    assert!(!crate::sandbox::capabilities::get().enforceable(), "{why}");
                    assert!(r.sandbox.is_none() || r.sandbox.as_ref().unwrap().network);
                }
            }
        }
        if let Some(s) = &asked.sandbox {
            if !s.network {
                assert_eq!(s.limits.cpu_seconds, Some(5), "the caller's limits stay");
            }
        }
    }
}
