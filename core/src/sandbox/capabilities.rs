//! What this host can enforce, probed once per process, so an agent can decide before it asks and a
//! request the host cannot honour is refused instead of run unsandboxed.

use std::sync::OnceLock;

#[cfg(target_os = "linux")]
use super::cgroup::{self, CgroupHost};

/// Why a sandbox cannot start inside another.
pub const NESTED: &str = "this process already runs inside a sandbox with a seccomp supervisor (agent-exec's or another tool's), and the kernel allows one per process tree, so sandboxes do not nest";

#[derive(Debug, Clone)]
pub struct Capabilities {
    /// The Landlock ABI of the kernel (0: none). The file rules need 1; TCP rules 4; scopes 6.
    pub landlock_abi: u32,
    /// seccomp filters with user notifications (the network cut and the denial reports).
    pub seccomp: bool,
    /// A user namespace can be created (an unprivileged mount namespace for the protected paths).
    pub user_namespaces: bool,
    /// A run can get a mount namespace of its own with bind mounts in it (read-only protected paths,
    /// the private /dev/shm): as root with CAP_SYS_ADMIN, or through a user namespace. Probed: a root
    /// in a container often lacks the capability.
    pub mount_namespace: bool,
    /// In that namespace every mount can be made read-only and the roots writable again
    /// (`mount_setattr`, Linux 5.12), so the kernel refuses what the supervisor's check might miss.
    pub read_only_mounts: bool,
    /// The run can have PID, IPC and UTS namespaces of its own, with a `/proc` of its PID namespace
    /// (as root, or in a user namespace; a container's masked `/proc` can forbid the mount).
    pub process_namespaces: bool,
    /// In that mount namespace a `/dev` of the run's own can be made: a tmpfs with a devpts instance
    /// of its own, moved over the host's.
    pub private_dev: bool,
    /// A network namespace of the run's own can be made (the network cut for abstract Unix sockets).
    pub network_namespace: bool,
    /// A cgroup for the run's memory and process limits, if one can be created here.
    #[cfg(target_os = "linux")]
    pub cgroup: Option<CgroupHost>,
    pub is_root: bool,
    /// Why a sandbox cannot be had at all (empty when it can).
    pub problems: Vec<String>,
}

impl Capabilities {
    /// Can a sandbox (file rules, network cut, reports) be enforced here?
    pub fn enforceable(&self) -> bool {
        self.problems.is_empty()
    }

    /// Can a run's process limit be `RLIMIT_NPROC` in a user namespace of its own (entered with its
    /// mount namespace), where it counts the run's processes only? Not for root, whom it does not bind.
    pub fn process_limit_in_user_namespace(&self) -> bool {
        !self.is_root && self.user_namespaces && self.mount_namespace
    }
}

/// The host's capabilities, probed on first use.
pub fn get() -> &'static Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    CAPS.get_or_init(probe)
}

#[cfg(target_os = "linux")]
fn probe() -> Capabilities {
    let landlock_abi = super::landlock::kernel_abi();
    let seccomp = super::seccomp::user_notification_supported();
    // SAFETY: geteuid cannot fail.
    let is_root = unsafe { libc::geteuid() } == 0;
    let user_namespaces = probe_user_namespace();
    // The read-only probe does everything the plain one does, so one forked child settles both
    // where it succeeds.
    // An operator's switch (like AGENT_EXEC_NO_PID_NAMESPACE below): runs as on a host that cannot
    // make mount namespaces, to test or debug the fallbacks.
    let no_mounts = std::env::var_os("AGENT_EXEC_NO_MOUNT_NAMESPACE").is_some_and(|v| v == "1");
    let could = (is_root || user_namespaces) && !no_mounts;
    let read_only_mounts = could && probe_mount_namespace(is_root, true);
    let mount_namespace = read_only_mounts || (could && probe_mount_namespace(is_root, false));
    // An operator's switch, for a host where the namespaces misbehave (the filter then refuses
    // changes to other processes instead).
    let switched_off = std::env::var_os("AGENT_EXEC_NO_PID_NAMESPACE").is_some_and(|v| v == "1");
    let process_namespaces = mount_namespace && !switched_off && probe_process_namespaces(is_root);
    let private_dev = mount_namespace && probe_private_dev(is_root);
    let network_namespace = mount_namespace && probe_network_namespace(is_root);
    let mut problems = Vec::new();
    if landlock_abi == 0 {
        problems.push(
            "Landlock is not enabled in this kernel (Linux 5.13 or newer with landlock in the lsm= boot list)"
                .to_string(),
        );
    }
    if !seccomp {
        problems.push(
            "seccomp user notifications are not available (Linux 5.0 or newer with CONFIG_SECCOMP_FILTER)"
                .to_string(),
        );
    } else if !probe_listener() {
        problems.push(NESTED.to_string());
    }
    Capabilities {
        landlock_abi,
        seccomp,
        user_namespaces,
        mount_namespace,
        read_only_mounts,
        process_namespaces,
        private_dev,
        network_namespace,
        cgroup: cgroup::detect(),
        is_root,
        problems,
    }
}

#[cfg(not(target_os = "linux"))]
fn probe() -> Capabilities {
    let mut problems = Vec::new();
    if !cfg!(target_os = "macos") {
        problems.push(format!(
            "the sandbox is not implemented on {} yet",
            std::env::consts::OS
        ));
    } else if !std::path::Path::new(super::macos::SANDBOX_EXEC).exists() {
        problems.push(format!("{} is missing", super::macos::SANDBOX_EXEC));
    }
    Capabilities {
        landlock_abi: 0,
        seccomp: false,
        user_namespaces: false,
        mount_namespace: false,
        read_only_mounts: false,
        process_namespaces: false,
        private_dev: false,
        network_namespace: false,
        is_root: false,
        problems,
    }
}

/// Run `step` in a forked child that exits right after it: true when it succeeded. For what cannot be
/// tried in this (multi-threaded) process without changing it for good.
#[cfg(target_os = "linux")]
fn probe_in_child(mut step: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static) -> bool {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `step` makes only system calls; the child never returns to Rust code after it.
    unsafe {
        cmd.pre_exec(move || {
            step()?;
            libc::_exit(0);
        });
    }
    match cmd.spawn() {
        Ok(mut child) => child.wait().map(|s| s.success()).unwrap_or(false),
        Err(_) => false,
    }
}

/// `unshare(CLONE_NEWUSER)` is the only reliable test: sysctls, AppArmor and container seccomp profiles
/// can each forbid it.
#[cfg(target_os = "linux")]
fn probe_user_namespace() -> bool {
    // SAFETY: unshare is a plain system call in the forked child.
    probe_in_child(|| match unsafe { libc::unshare(libc::CLONE_NEWUSER) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    })
}

/// The steps a run's mount namespace takes: unshare it (in a user namespace unless root), keep its
/// mounts from propagating back, and bind a directory over itself; with `read_only`, also make every
/// mount read-only and the bound directory writable again.
#[cfg(target_os = "linux")]
fn probe_mount_namespace(is_root: bool, read_only: bool) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let dir = std::env::temp_dir();
    let Ok(dir) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    let flags = if is_root {
        libc::CLONE_NEWNS
    } else {
        libc::CLONE_NEWNS | libc::CLONE_NEWUSER
    };
    probe_in_child(move || {
        use super::child::{bind, set_read_only_tree};
        let ok = |rc: libc::c_long| match rc {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        };
        // SAFETY: unshare of the forked child.
        ok(unsafe { libc::unshare(flags) } as libc::c_long)?;
        ok(bind(None, c"/", libc::MS_REC | libc::MS_SLAVE))?;
        if read_only {
            ok(set_read_only_tree(c"/", true))?;
        }
        // Recursive, as a run binds its roots: a plain bind of a directory that holds mounts this
        // user namespace may not reveal (a container engine's storage under /tmp, locked here) fails.
        ok(bind(Some(&dir), &dir, libc::MS_BIND | libc::MS_REC))?;
        if read_only {
            ok(set_read_only_tree(&dir, false))?;
        }
        Ok(())
    })
}

/// The steps of a run's PID namespace: unshare it with the others (and a user namespace unless root,
/// mapped as a run's is), fork its first process, and mount a `/proc` of it from inside.
#[cfg(target_os = "linux")]
fn probe_process_namespaces(is_root: bool) -> bool {
    let flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    let maps = run_maps();
    probe_in_child(move || {
        use super::child::{bind, mount_fs};
        let ok = |rc: libc::c_long| match rc {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        };
        unshare_as_a_run(is_root, flags, &maps)?;
        ok(bind(None, c"/", libc::MS_REC | libc::MS_SLAVE))?;
        // SAFETY: a raw fork and a wait, in the forked child.
        unsafe {
            let pid = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0, 0, 0, 0);
            if pid == 0 {
                let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let rc = mount_fs(c"proc", c"/proc", proc_flags, None);
                libc::_exit(if rc == 0 { 0 } else { 1 });
            }
            if pid < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut status = 0;
            if libc::waitpid(pid as libc::pid_t, &mut status, 0) < 0
                || !libc::WIFEXITED(status)
                || libc::WEXITSTATUS(status) != 0
            {
                return Err(std::io::Error::from_raw_os_error(libc::EPERM));
            }
        }
        Ok(())
    })
}

/// The id maps of a run's user namespace, formatted before the fork (a forked child of a threaded
/// process must not allocate).
#[cfg(target_os = "linux")]
fn run_maps() -> [String; 2] {
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    [format!("{uid} {uid} 1"), format!("{gid} {gid} 1")]
}

/// Enter namespaces `extra`, in a user namespace mapped as a run's is unless root: the first step of
/// the probes below.
#[cfg(target_os = "linux")]
fn unshare_as_a_run(is_root: bool, extra: libc::c_int, maps: &[String; 2]) -> std::io::Result<()> {
    let flags = if is_root {
        extra
    } else {
        extra | libc::CLONE_NEWUSER
    };
    // SAFETY: unshare and writes of our own maps, in a forked child.
    unsafe {
        if libc::unshare(flags) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if !is_root {
            for (file, map) in [
                (c"/proc/self/setgroups", "deny"),
                (c"/proc/self/uid_map", maps[0].as_str()),
                (c"/proc/self/gid_map", maps[1].as_str()),
            ] {
                let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 || libc::write(fd, map.as_ptr().cast(), map.len()) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(fd);
            }
        }
    }
    Ok(())
}

/// The steps of a run's own `/dev`: a tmpfs, and a devpts instance of its own inside it.
#[cfg(target_os = "linux")]
fn probe_private_dev(is_root: bool) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(dir) = tempfile::tempdir() else {
        return false;
    };
    let pts = dir.path().join("pts");
    let (Ok(dir_c), Ok(pts_c)) = (
        std::ffi::CString::new(dir.path().as_os_str().as_bytes()),
        std::ffi::CString::new(pts.as_os_str().as_bytes()),
    ) else {
        return false;
    };
    let maps = run_maps();
    probe_in_child(move || {
        let ok = |rc: libc::c_int| match rc {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        };
        use super::child::{bind, mount_fs, DEVPTS_OPTIONS, DEV_TMPFS_OPTIONS};
        unshare_as_a_run(is_root, libc::CLONE_NEWNS, &maps)?;
        ok(bind(None, c"/", libc::MS_REC | libc::MS_SLAVE) as libc::c_int)?;
        let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
        ok(mount_fs(c"tmpfs", &dir_c, flags, Some(DEV_TMPFS_OPTIONS)) as libc::c_int)?;
        // SAFETY: mkdir with a NUL-terminated path, in a forked child.
        ok(unsafe { libc::mkdir(pts_c.as_ptr(), 0o755) })?;
        ok(mount_fs(c"devpts", &pts_c, flags, Some(DEVPTS_OPTIONS)) as libc::c_int)
    })
}

/// A network namespace of the run's own (in a user namespace unless root).
#[cfg(target_os = "linux")]
fn probe_network_namespace(is_root: bool) -> bool {
    let maps = run_maps();
    probe_in_child(move || unshare_as_a_run(is_root, libc::CLONE_NEWNS | libc::CLONE_NEWNET, &maps))
}

/// Can a seccomp supervisor start here? Not under a filter that already has one (a sandbox inside a
/// sandbox). Probed only when this process is filtered at all.
#[cfg(target_os = "linux")]
fn probe_listener() -> bool {
    if !super::seccomp::already_filtered() {
        return true;
    }
    let program = super::seccomp::allow_all();
    probe_in_child(move || {
        // SAFETY: prctl with plain integer arguments in the forked child.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        super::seccomp::install_in_child(&program).map(|_| ())
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn problems_are_listed_exactly_when_a_sandbox_cannot_be_had() {
        let caps = super::get();
        assert_eq!(caps.enforceable(), caps.problems.is_empty());
        #[cfg(target_os = "linux")]
        {
            let abi = super::super::landlock::kernel_abi();
            assert_eq!(caps.landlock_abi, abi);
            assert_eq!(
                abi == 0,
                caps.problems.iter().any(|p| p.starts_with("Landlock")),
                "{:?}",
                caps.problems
            );
            // Probed, and only tried where it could work.
            assert!(!caps.mount_namespace || caps.is_root || caps.user_namespaces);
        }
    }
}
