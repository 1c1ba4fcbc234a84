//! The seccomp filter of a sandboxed run: which system calls go to the supervisor.
//!
//! Only `clone3` is refused by the filter itself (see `refused`). Calls that may write the file system (an `open` with write
//! flags, `mkdir`, `unlink`, `rename`, ...), calls that change metadata (`chmod`, `chown`, `utimensat`,
//! extended attributes: Landlock does not cover these) and, with the network off, `socket` for any family but
//! `AF_UNIX`, `connect` and the sends that may name an address (`sendto` with one, `sendmsg`,
//! `sendmmsg`), and always the calls no command needs (`refused`: mounts, namespaces, keyrings,
//! io_uring, ...) become user notifications: the supervisor in the runtime decides,
//! answers, and records what it refused with the rule that refused it. Landlock and the read-only mounts
//! enforce the same file rules in the kernel, so a call the supervisor lets through is still checked.
//!
//! Why a notification filter rather than `SECCOMP_RET_ERRNO` for the network: the report names the
//! operation and the process from the kernel's own data, not from an error message. Why seccomp and not a
//! network namespace: it needs no user namespace (containers often forbid them), keeps `AF_UNIX`
//! sockets (ssh-agent, X11, language servers) working, and loopback is cut too, so a sandboxed command
//! cannot reach a database or a dev server on the host.
//!
//! The program is compiled by `seccompiler` (arch check, argument masks); its trace action is then
//! rewritten into `SECCOMP_RET_USER_NOTIF`, which `seccompiler` has no variant for.

use std::collections::BTreeMap;

use super::refused;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The trace value our notifications are compiled with before the rewrite.
const NOTIFY_MARK: u32 = 0xae;
const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;
const BPF_RET_K: u16 = 0x06;

/// Flags of `open` that can change a file: write access, creation, truncation.
const WRITE_ACCESS: [u64; 2] = [libc::O_WRONLY as u64, libc::O_RDWR as u64];
const WRITE_FLAGS: [u64; 2] = [libc::O_CREAT as u64, libc::O_TRUNC as u64];

fn target_arch() -> Result<TargetArch, String> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        format!(
            "seccomp filters are not built for {}",
            std::env::consts::ARCH
        )
    })
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> SeccompCondition {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).expect("valid condition")
}

/// Rules matching an `open`-like call whose flags (argument `arg`) ask for writing.
fn write_open_rules(arg: u8) -> Vec<SeccompRule> {
    let mut rules = Vec::new();
    for access in WRITE_ACCESS {
        rules.push(
            SeccompRule::new(vec![condition(
                arg,
                SeccompCmpOp::MaskedEq(libc::O_ACCMODE as u64),
                access,
            )])
            .expect("rule"),
        );
    }
    for flag in WRITE_FLAGS {
        rules.push(
            SeccompRule::new(vec![condition(arg, SeccompCmpOp::MaskedEq(flag), flag)])
                .expect("rule"),
        );
    }
    rules
}

/// System calls that create, change or remove a path, and always go to the supervisor.
fn path_writing_calls() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_openat2,
        libc::SYS_mkdirat,
        libc::SYS_mknodat,
        libc::SYS_unlinkat,
        libc::SYS_renameat2,
        libc::SYS_linkat,
        libc::SYS_symlinkat,
        libc::SYS_truncate,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_creat,
        libc::SYS_mkdir,
        libc::SYS_mknod,
        libc::SYS_unlink,
        libc::SYS_rmdir,
        libc::SYS_rename,
        libc::SYS_renameat,
        libc::SYS_link,
        libc::SYS_symlink,
    ]);
    #[cfg(not(target_arch = "x86_64"))]
    calls.push(libc::SYS_renameat);
    calls
}

/// A syscall number as seccompiler keys it (`c_long` is 32 bits on some targets).
#[allow(clippy::useless_conversion)]
fn nr(call: libc::c_long) -> i64 {
    i64::from(call)
}

/// Newer calls have one number on every architecture (the unified table since Linux 5.1); `libc`
/// does not name all of them yet.
pub const SYS_FCHMODAT2: libc::c_long = 452;
pub const SYS_SETXATTRAT: libc::c_long = 463;
pub const SYS_REMOVEXATTRAT: libc::c_long = 466;

/// System calls that change a file's metadata (mode, owner, times, extended attributes), by path or
/// by fd. Landlock does not restrict these, so the supervisor does.
fn metadata_calls() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_fchmodat,
        SYS_FCHMODAT2,
        libc::SYS_fchmod,
        libc::SYS_fchownat,
        libc::SYS_fchown,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_SETXATTRAT,
        SYS_REMOVEXATTRAT,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    calls
}

/// Compile the filter for a run: file writes always, the network when it is off.
pub fn build_filter(network: bool) -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(nr(libc::SYS_openat), write_open_rules(2));
    #[cfg(target_arch = "x86_64")]
    rules.insert(nr(libc::SYS_open), write_open_rules(1));
    for call in path_writing_calls().into_iter().chain(metadata_calls()) {
        rules.insert(nr(call), Vec::new());
    }
    // Calls no command needs (see `refused`): the supervisor refuses and records them.
    for (call, _, _) in refused::always() {
        rules.insert(nr(call), Vec::new());
    }
    for (call, _, _) in refused::timex_calls() {
        rules.insert(nr(call), Vec::new());
    }
    for call in [libc::SYS_unshare, libc::SYS_clone] {
        let any_namespace = refused::NAMESPACE_FLAGS
            .iter()
            .map(|&(flag, _)| {
                let flag = flag as u64;
                SeccompRule::new(vec![condition(0, SeccompCmpOp::MaskedEq(flag), flag)])
                    .expect("rule")
            })
            .collect();
        rules.insert(nr(call), any_namespace);
    }
    if !network {
        rules.insert(
            nr(libc::SYS_socket),
            vec![
                SeccompRule::new(vec![condition(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)])
                    .expect("rule"),
            ],
        );
        // Every connect: the address is in the caller's memory, which a filter cannot read, and only
        // Unix sockets exist with the network off. The supervisor connects the allowed ones itself.
        rules.insert(nr(libc::SYS_connect), Vec::new());
        // Sends that may name an address, which the supervisor judges like a connect's and then makes
        // itself (see `unix_send`): a `sendto` whose address pointer and length are both set (its
        // registers, fixed at the call), and every `sendmsg` and `sendmmsg` (their headers are in
        // memory, which may change after the check).
        rules.insert(
            nr(libc::SYS_sendto),
            vec![SeccompRule::new(vec![
                SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                    .expect("valid condition"),
                condition(5, SeccompCmpOp::Ne, 0),
            ])
            .expect("rule")],
        );
        rules.insert(nr(libc::SYS_sendmsg), Vec::new());
        rules.insert(nr(libc::SYS_sendmmsg), Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Trace(NOTIFY_MARK),
        target_arch()?,
    )
    .map_err(|e| format!("the seccomp filter could not be built: {e}"))?;
    let mut program: BpfProgram = filter
        .try_into()
        .map_err(|e| format!("the seccomp filter could not be compiled: {e}"))?;
    let mut rewritten = 0;
    for insn in program.iter_mut() {
        if insn.code == BPF_RET_K && insn.k == SECCOMP_RET_TRACE | NOTIFY_MARK {
            insn.k = libc::SECCOMP_RET_USER_NOTIF;
            rewritten += 1;
        }
    }
    if rewritten == 0 {
        return Err("the seccomp filter has no notification return".into());
    }
    Ok(program)
}

/// The filter that answers `clone3` with `ENOSYS` by itself (see `refused`): installed beside the
/// notifying one, since a `seccompiler` filter has one action for all its matches.
pub fn build_clone3_refusal() -> Result<BpfProgram, String> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(nr(refused::SYS_CLONE3), Vec::new());
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        target_arch()?,
    )
    .map_err(|e| format!("the clone3 filter could not be built: {e}"))?;
    filter
        .try_into()
        .map_err(|e| format!("the clone3 filter could not be compiled: {e}"))
}

/// Install `program` on the calling thread, with no listener. Runs in the forked child.
pub fn install_plain_in_child(program: &[seccompiler::sock_filter]) -> std::io::Result<()> {
    install(program, 0).map(|_| ())
}

/// Install `program` on the calling thread and return the notification fd.
///
/// Runs in the forked child, so it only makes system calls. `no_new_privs` must already be set.
pub fn install_in_child(program: &[seccompiler::sock_filter]) -> std::io::Result<libc::c_int> {
    install(program, libc::SECCOMP_FILTER_FLAG_NEW_LISTENER)
}

fn install(
    program: &[seccompiler::sock_filter],
    flags: libc::c_ulong,
) -> std::io::Result<libc::c_int> {
    #[repr(C)]
    struct SockFprog {
        len: libc::c_ushort,
        filter: *const seccompiler::sock_filter,
    }
    let prog = SockFprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr(),
    };
    // SAFETY: the kernel copies the program from `prog`, which outlives the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &prog as *const SockFprog,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd as libc::c_int)
}

/// Does this kernel deliver seccomp user notifications (Linux 5.0)?
pub fn user_notification_supported() -> bool {
    let mut sizes = libc::seccomp_notif_sizes {
        seccomp_notif: 0,
        seccomp_notif_resp: 0,
        seccomp_data: 0,
    };
    // SAFETY: SECCOMP_GET_NOTIF_SIZES fills the struct the pointer refers to.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_NOTIF_SIZES,
            0,
            &mut sizes as *mut libc::seccomp_notif_sizes,
        )
    };
    rc == 0 && sizes.seccomp_notif as usize >= std::mem::size_of::<libc::seccomp_notif>()
}

/// Is this process itself under a seccomp filter? (Then a new listener may be refused: the kernel
/// allows one per filter chain.)
pub fn already_filtered() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Seccomp:") && l.trim_end().ends_with('2'))
        })
        .unwrap_or(false)
}

/// A filter that allows everything, for probing whether a listener can be had.
pub fn allow_all() -> BpfProgram {
    vec![seccompiler::sock_filter {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_ALLOW,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_compiles_with_notifications_and_no_trace_left() {
        for network in [true, false] {
            let p = build_filter(network).unwrap();
            assert!(p
                .iter()
                .any(|i| i.code == BPF_RET_K && i.k == libc::SECCOMP_RET_USER_NOTIF));
            assert!(!p
                .iter()
                .any(|i| i.code == BPF_RET_K && i.k & 0xffff_0000 == SECCOMP_RET_TRACE));
        }
        // The network rules add instructions.
        assert!(build_filter(false).unwrap().len() > build_filter(true).unwrap().len());
    }

    #[test]
    fn the_test_process_is_not_filtered() {
        // cargo test runs outside any sandbox; a filtered process would see listeners refused.
        assert!(!already_filtered());
    }
}
