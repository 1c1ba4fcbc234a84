//! The Landlock ruleset of a sandboxed run, built in the parent with the `landlock` crate and
//! enforced by the child (`landlock_restrict_self` on the returned fd, see `child.rs`).
//!
//! Everything is readable and executable; the writable roots get every right; the device files of
//! [`super::policy`] can be opened for writing. With the network off, TCP bind and connect are handled
//! with no rule (denied) as a second wall behind the seccomp filter, and abstract Unix sockets outside the
//! sandbox cannot be reached. Signals to processes outside the sandbox are always refused, so a
//! sandboxed command cannot kill the agent that runs it.

use std::os::fd::OwnedFd;
use std::path::Path;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};

use super::policy::{FsPolicy, WRITABLE_DEVICES};

/// The newest ABI this code knows; older kernels get the subset they support (best effort), and the
/// ABI actually in force is reported.
const TARGET_ABI: ABI = ABI::V6;

/// The ABI the running kernel offers (0 when Landlock is off or missing).
pub fn kernel_abi() -> u32 {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute only returns the version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if v < 0 {
        0
    } else {
        v as u32
    }
}

/// The ABI whose rules a run gets: the kernel's, up to the newest this code knows.
pub fn abi_in_force() -> u32 {
    kernel_abi().min(TARGET_ABI as u32)
}

fn abi_of(v: u32) -> ABI {
    ABI::from(v.min(TARGET_ABI as u32) as i32)
}

/// Build the ruleset. Returns the fd the child restricts itself with.
/// `read_by_entry`: where files are read only beneath the paths it lists (see `read_grants`), not
/// beneath `/`.
pub fn build(
    policy: &FsPolicy,
    network: bool,
    read_by_entry: Option<&[std::path::PathBuf]>,
) -> Result<OwnedFd, String> {
    let abi = abi_of(kernel_abi());
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    // Device ioctls only where a device is granted below: a read rule on / that carried them let a
    // root run without capabilities drive root's device nodes (loop devices, consoles, userfaultfd).
    let read = AccessFs::from_read(abi);
    let device_rw: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::WriteFile | ioctl_dev(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| fail("Landlock file rights", &e))?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| fail("Landlock network rights", &e))?
            .scope(Scope::AbstractUnixSocket)
            .map_err(|e| fail("Landlock socket scope", &e))?;
    }
    let mut created = ruleset
        .scope(Scope::Signal)
        .map_err(|e| fail("Landlock signal scope", &e))?
        .create()
        .map_err(|e| fail("creating the Landlock ruleset", &e))?;
    let read_on_root = match read_by_entry {
        Some(_) => read & !AccessFs::ReadFile,
        None => read,
    };
    created = created
        .add_rule(PathBeneath::new(
            PathFd::new("/").map_err(|e| fail("opening /", &e))?,
            read_on_root,
        ))
        .map_err(|e| fail("the read rule on /", &e))?;
    for path in read_by_entry.unwrap_or_default() {
        // Gone since it was listed: nothing to grant. A file takes file rights only; ReadFile is one.
        let Some(fd) = super::read_grants::open_for_rule(path) else {
            continue;
        };
        created = created
            .add_rule(PathBeneath::new(fd, AccessFs::ReadFile))
            .map_err(|e| fail(&format!("the read rule on {}", path.display()), &e))?;
    }
    for root in &policy.writable_roots {
        let fd = PathFd::new(root).map_err(|e| fail(&format!("opening {}", root.display()), &e))?;
        created = created
            .add_rule(PathBeneath::new(fd, AccessFs::from_all(abi)))
            .map_err(|e| fail(&format!("the write rule on {}", root.display()), &e))?;
    }
    // The directory mounted over /dev/shm: a Landlock walk from a file there stops at the mount's root,
    // this directory's inode, without passing the temp dir above it, so it needs its own rule.
    if let Some(shm) = policy.private_shm.as_ref().map(|s| &s.backing) {
        let fd = PathFd::new(shm).map_err(|e| fail(&format!("opening {}", shm.display()), &e))?;
        created = created
            .add_rule(PathBeneath::new(fd, AccessFs::from_all(abi)))
            .map_err(|e| fail("the write rule on the private /dev/shm", &e))?;
    }
    // Not the whole of /dev/pts (every terminal of the user's, the agent's included): the run's own
    // devpts, or its own terminal, is granted by the child, which alone knows it.
    for dev in WRITABLE_DEVICES.iter().filter(|d| Path::new(d).exists()) {
        let fd = PathFd::new(dev).map_err(|e| fail(&format!("opening {dev}"), &e))?;
        let rights = if Path::new(dev).is_dir() {
            device_rw | AccessFs::ReadDir
        } else {
            device_rw
        };
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(|e| fail(&format!("the device rule on {dev}"), &e))?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| "this kernel does not enforce Landlock".to_string())
}

/// What a run reads in the mounts it makes for itself (its `/proc`, its `/dev`) when files are read
/// by entry (see `read_grants`): nothing granted beneath `/` reaches them.
pub fn own_mount_rights() -> u64 {
    BitFlags::<AccessFs>::from(AccessFs::ReadFile).bits()
}

/// The rights on a terminal directory (the run's own devpts): its ptys are read, written and driven.
pub fn terminal_dir_rights() -> u64 {
    let abi = abi_of(kernel_abi());
    (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::ReadDir | ioctl_dev(abi)).bits()
}

/// The rights on a terminal itself (the run's own pty where it has no `/dev` of its own).
pub fn terminal_file_rights() -> u64 {
    let abi = abi_of(kernel_abi());
    (AccessFs::ReadFile | AccessFs::WriteFile | ioctl_dev(abi)).bits()
}

fn ioctl_dev(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_all(abi) & AccessFs::IoctlDev
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ruleset_builds_where_the_kernel_has_landlock() {
        if kernel_abi() == 0 {
            let policy = FsPolicy::new(vec![std::env::temp_dir()], None);
            assert!(build(&policy, false, None).is_err());
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let policy = FsPolicy::new(vec![std::fs::canonicalize(dir.path()).unwrap()], None);
        build(&policy, false, None).unwrap();
        build(&policy, true, None).unwrap();
    }
}
