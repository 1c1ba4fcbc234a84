//! The last step of a sandboxed child before exec: give up every capability, for good.
//!
//! A root caller's child starts with every capability, and a child in a user namespace of its own has
//! every capability there; either could undo parts of its sandbox or reach past it (`CAP_SYS_ADMIN`
//! mounts, `CAP_DAC_OVERRIDE` ignores file modes, `CAP_SYS_PTRACE`, `CAP_NET_ADMIN`, ...). So, after the
//! mounts, Landlock and the seccomp filter (which need some of them), the child:
//!
//! 1. locks the securebits so that uid 0 gains no capability at exec (`SECBIT_NOROOT`), a change of uid
//!    does not touch capabilities (`SECBIT_NO_SETUID_FIXUP`), and no ambient capability can be raised;
//! 2. empties the bounding set, so no file capability can ever grant one;
//! 3. clears the ambient set, then the inheritable, permitted and effective sets (`capset`).
//!
//! Steps 1 and 2 need `CAP_SETPCAP`; a caller without it (a normal user, no user namespace) has no
//! capability to give up, and `no_new_privs` already keeps setuid and file capabilities from granting
//! any, so it skips them. Either way the command runs with no capability, as root or not.
//!
//! Only system calls here: it runs between fork and exec.

/// `struct __user_cap_header_struct` and `__user_cap_data_struct` of `capget(2)`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_SETPCAP: u32 = 8;

/// `SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP`, `SECBIT_NO_CAP_AMBIENT_RAISE` and the locks of all three
/// and of `SECBIT_KEEP_CAPS` (left off).
pub const LOCKED_SECUREBITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80;

fn check(rc: libc::c_int) -> Result<(), i32> {
    if rc < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EPERM))
    } else {
        Ok(())
    }
}

/// Drop every capability of the calling process for good (see the module doc). Returns the errno of
/// the step that failed.
pub fn drop_all() -> Result<(), i32> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget fills two data structs for version 3.
    check(unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } as i32)?;
    if data[0].effective & (1 << CAP_SETPCAP) != 0 {
        // SAFETY: prctl with integer arguments.
        check(unsafe { libc::prctl(libc::PR_SET_SECUREBITS, LOCKED_SECUREBITS, 0, 0, 0) })?;
        for cap in 0..64 {
            // SAFETY: prctl with integer arguments; EINVAL past the last capability this kernel has.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINVAL) => break,
                    e => return Err(e.unwrap_or(libc::EPERM)),
                }
            }
        }
    }
    // SAFETY: prctl with integer arguments. EINVAL: a kernel without ambient capabilities (before
    // 4.3), where there is nothing to clear.
    let ambient = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    if ambient < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
        return check(ambient);
    }
    let none = [CapData::default(); 2];
    // SAFETY: capset reads the header and two data structs.
    check(unsafe { libc::syscall(libc::SYS_capset, &mut header, none.as_ptr()) } as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The capability sets and securebits of a forked child after `drop_all`, read from its
    /// `/proc/self/status` (the child writes them to a pipe and exits).
    #[test]
    fn a_child_keeps_no_capability() {
        use std::io::Read;
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new("/bin/cat");
        cmd.arg("/proc/self/status")
            .stdout(std::process::Stdio::piped());
        // SAFETY: drop_all makes only system calls.
        unsafe {
            cmd.pre_exec(|| drop_all().map_err(std::io::Error::from_raw_os_error));
        }
        let mut child = cmd.spawn().unwrap();
        let mut status = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut status)
            .unwrap();
        assert!(child.wait().unwrap().success());
        for key in ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"] {
            let line = status.lines().find(|l| l.starts_with(key)).unwrap();
            assert!(line.ends_with("0000000000000000"), "{line}");
        }
        // SAFETY: geteuid has no arguments.
        if unsafe { libc::geteuid() } == 0 {
            let bnd = status.lines().find(|l| l.starts_with("CapBnd:")).unwrap();
            assert!(bnd.ends_with("0000000000000000"), "{bnd}");
        }
    }
}
