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

use std::collections::{BTreeMap, BTreeSet};

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

/// A rule of one condition on a 32-bit argument.
fn rule(arg: u8, op: SeccompCmpOp, value: u64) -> SeccompRule {
    SeccompRule::new(vec![condition(arg, op, value)]).expect("rule")
}

/// A rule matching when every bit of `flags` is set in argument `arg`.
fn all_set(arg: u8, flags: u64) -> SeccompRule {
    rule(arg, SeccompCmpOp::MaskedEq(flags), flags)
}

/// Rules matching an `open`-like call whose flags (argument `arg`) ask for writing.
fn write_open_rules(arg: u8) -> Vec<SeccompRule> {
    let mut rules = Vec::new();
    for access in WRITE_ACCESS {
        rules.push(rule(
            arg,
            SeccompCmpOp::MaskedEq(libc::O_ACCMODE as u64),
            access,
        ));
    }
    for flag in WRITE_FLAGS {
        rules.push(all_set(arg, flag));
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
    // x86_64 adds its older calls below.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
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

/// The metadata calls that act on an open descriptor only. Where every mount the run can reach
/// outside its roots and every protected path inside them is read-only (see `build_filter`), the
/// kernel refuses these itself (`EROFS`), so they need no round trip: a file the run could open for
/// writing is one it may change, and one it could open only for reading is on a read-only mount.
/// (`utimensat` with no path is `futimens`: conditional, see `conditional_rules`.) `fchmod` only
/// when it sets no execute, setuid, setgid or sticky bit and no group or world write (also
/// conditional): a repository of the host's that the start-up scan did not find (nested in a root)
/// is not bound read-only, an execute bit is what turns a hook the host disabled back on
/// (`host_repos`), and a write bit would open its config to other users; `tar x`'s `fchmod 644` of
/// each file stays the kernel's. Extended attributes through a descriptor are the supervisor's
/// always: `system.posix_acl_access` gives group and world write as `fchmod` would, and no common
/// build sets them on every file.
fn fd_metadata_calls() -> [libc::c_long; 1] {
    [libc::SYS_fchown]
}

/// System calls that go to the supervisor whatever their arguments.
fn unconditional_calls(network: bool, fd_metadata_by_kernel: bool) -> BTreeSet<i64> {
    let by_kernel = |call: &libc::c_long| {
        fd_metadata_by_kernel
            && (fd_metadata_calls().contains(call)
                || *call == libc::SYS_utimensat
                || *call == libc::SYS_fchmod)
    };
    let mut calls: BTreeSet<i64> = path_writing_calls()
        .into_iter()
        .chain(metadata_calls().into_iter().filter(|c| !by_kernel(c)))
        // Calls no command needs (see `refused`): the supervisor refuses and records them.
        .chain(refused::always().into_iter().map(|(call, _, _)| call))
        .chain(refused::timex_calls().into_iter().map(|(call, _, _)| call))
        // Told, not judged: creations the supervisor makes need the caller's umask (`perform`).
        .chain([libc::SYS_umask])
        .map(nr)
        .collect();
    if !network {
        // Every connect: the address is in the caller's memory, which a filter cannot read, and only
        // Unix sockets exist with the network off. The supervisor connects the allowed ones itself.
        // Every sendmsg and sendmmsg: their headers (and the address they may name) are in memory
        // too, which may change after the check; the supervisor makes them (see `unix_send`).
        calls.extend([libc::SYS_connect, libc::SYS_sendmsg, libc::SYS_sendmmsg].map(nr));
        // Every bind: an abstract name is not a file Landlock can refuse, and where the run has no
        // network namespace of its own, one it listens on is reachable from outside.
        calls.insert(nr(libc::SYS_bind));
    }
    calls
}

/// System calls that go to the supervisor when their arguments say so, as `seccompiler` rules.
fn conditional_rules(
    network: bool,
    other_processes: bool,
    fd_metadata_by_kernel: bool,
) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if fd_metadata_by_kernel {
        // `utimensat` naming a path (its pointer, a register fixed at the call, is set); with none it
        // is `futimens` on the descriptor, which the kernel decides (see `fd_metadata_calls`).
        rules.insert(
            nr(libc::SYS_utimensat),
            vec![SeccompRule::new(vec![SeccompCondition::new(
                1,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::Ne,
                0,
            )
            .expect("valid condition")])
            .expect("rule")],
        );
    }
    if fd_metadata_by_kernel {
        // `fchmod` asking for an execute, setuid, setgid or sticky bit, or for group or world write
        // (see `fd_metadata_calls`).
        rules.insert(
            nr(libc::SYS_fchmod),
            [0o100, 0o010, 0o001, 0o4000, 0o2000, 0o1000, 0o020, 0o002]
                .map(|bit| all_set(1, bit))
                .to_vec(),
        );
    }
    rules.insert(nr(libc::SYS_openat), write_open_rules(2));
    #[cfg(target_arch = "x86_64")]
    rules.insert(nr(libc::SYS_open), write_open_rules(1));
    // A change to another process (target argument not 0) goes to the supervisor, which lets the
    // caller's own pid through. Not in a PID namespace of the run's own: every process it can name is
    // its own (and the pids it names are not the supervisor's).
    for (call, _, target, needs) in refused::other_process_calls()
        .into_iter()
        .filter(|_| other_processes)
    {
        let mut conditions = vec![condition(target as u8, SeccompCmpOp::Ne, 0)];
        if let Some(n) = needs {
            conditions.push(
                SeccompCondition::new(n as u8, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                    .expect("valid condition"),
            );
        }
        rules.insert(nr(call), vec![SeccompRule::new(conditions).expect("rule")]);
    }
    // What the host's programs share without namespaces of the run's own (see `refused`).
    for (call, _, _) in refused::shared_without_namespaces()
        .into_iter()
        .filter(|_| other_processes)
    {
        rules.insert(nr(call), Vec::new());
    }
    // System V IPC without an IPC namespace of the run's own (see `sysv_ipc`).
    for (call, _) in super::sysv_ipc::CALLS
        .into_iter()
        .filter(|_| other_processes)
    {
        rules.insert(nr(call), Vec::new());
    }
    for call in [libc::SYS_unshare, libc::SYS_clone] {
        let any_namespace = refused::namespace_flags_of(call)
            .map(|(flag, _)| all_set(0, flag as u64))
            .collect();
        rules.insert(nr(call), any_namespace);
    }
    // Terminal injection, console and loop device requests (see `refused`): the request is a 32-bit
    // argument, compared as such.
    // The file systems' requests (see `refused`): their family by the type byte, to the supervisor,
    // which lets the reads through (rare: `lsattr`). The reflink clones `cp` makes of every file
    // stay the kernel's (a condition each of their family's rule): they write only into a file
    // opened for writing.
    let file_system_families = refused::FILE_SYSTEM_IOCTL_FAMILIES
        .iter()
        .map(|(family, _)| {
            let kept = refused::FILE_SYSTEM_IOCTLS_UNSEEN
                .iter()
                .filter(|(request, _)| request & 0xff00 == *family)
                .map(|(request, _)| condition(1, SeccompCmpOp::Ne, *request as u64));
            let in_family = condition(1, SeccompCmpOp::MaskedEq(0xff00), *family as u64);
            SeccompRule::new(std::iter::once(in_family).chain(kept).collect()).expect("rule")
        });
    rules.insert(
        nr(libc::SYS_ioctl),
        refused::REFUSED_IOCTLS
            .iter()
            .map(|(mask, value, _)| rule(1, SeccompCmpOp::MaskedEq(*mask as u64), *value as u64))
            .chain(file_system_families)
            .collect(),
    );
    // Leases are refused; locks are judged by their file (the host's files are not the run's to
    // block).
    rules.insert(
        nr(libc::SYS_fcntl),
        refused::LOCK_COMMANDS
            .iter()
            .map(|(cmd, _)| *cmd)
            .chain([libc::F_SETLEASE])
            .chain(refused::RW_HINT_COMMANDS.iter().map(|(cmd, _)| *cmd))
            .map(|cmd| rule(1, SeccompCmpOp::Eq, cmd as u64))
            .collect(),
    );
    // flock with LOCK_SH or LOCK_EX (an unlock passes).
    rules.insert(
        nr(libc::SYS_flock),
        [libc::LOCK_SH, libc::LOCK_EX]
            .iter()
            .map(|&op| all_set(1, op as u64))
            .collect(),
    );
    if !network {
        rules.insert(
            nr(libc::SYS_socket),
            vec![rule(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)],
        );
        // A sendto whose address pointer and length are both set (its registers, fixed at the call):
        // judged like a connect, then made by the supervisor (see `unix_send`).
        rules.insert(
            nr(libc::SYS_sendto),
            vec![SeccompRule::new(vec![
                SeccompCondition::new(4, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                    .expect("valid condition"),
                condition(5, SeccompCmpOp::Ne, 0),
            ])
            .expect("rule")],
        );
    }
    rules
}

/// `AUDIT_ARCH_*` of the target, as `seccomp_data.arch` holds it.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_JA: u16 = 0x05;
/// The bit that marks an x32 system call number on x86_64 (`__X32_SYSCALL_BIT`); no number of
/// aarch64's has it either.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// Offsets in `struct seccomp_data`.
const NR_AT: u32 = 0;
const ARCH_AT: u32 = 4;

fn insn(code: u16, jt: u8, jf: u8, k: u32) -> seccompiler::sock_filter {
    seccompiler::sock_filter { code, jt, jf, k }
}

/// A block that sends each of `calls` to the supervisor with one comparison apiece, placed before
/// `seccompiler`'s program, which handles everything else; and kills a process making an x32 call.
///
/// Why by hand: `seccompiler` spends about five instructions on each call (its rule chain), and the
/// kernel checks and compiles a filter in time that grows with its length, at every sandboxed spawn:
/// some 80 unconditional calls cost about 0.2 ms per run that way. Here they take one `jeq` each, all
/// jumping to one notification return. A call of another architecture skips the block and meets
/// `seccompiler`'s own architecture check.
fn dispatch_block(calls: &BTreeSet<i64>) -> Result<Vec<seccompiler::sock_filter>, String> {
    let n = calls.len();
    // The longest jumps: from the architecture check past the block, from the x32 check to its
    // return. Conditional jumps reach 255 instructions.
    if n + 5 > 255 {
        return Err(format!(
            "{n} system calls are too many for one dispatch block"
        ));
    }
    let mut block = vec![
        insn(BPF_LD_W_ABS, 0, 0, ARCH_AT),
        // Not this architecture: on to seccompiler's program (past everything below).
        insn(BPF_JEQ_K, 0, (n + 5) as u8, AUDIT_ARCH),
        insn(BPF_LD_W_ABS, 0, 0, NR_AT),
        // x32 calls come with x86_64's architecture and numbers of their own, which no rule names:
        // where a kernel has that ABI they would all be let through. Killed, as a foreign
        // architecture's are.
        insn(BPF_JGE_K, (n + 2) as u8, 0, X32_SYSCALL_BIT),
    ];
    for (i, &call) in calls.iter().enumerate() {
        let call = u32::try_from(call).map_err(|_| format!("system call {call} out of range"))?;
        // From comparison i, the notification return is n - i instructions on.
        block.push(insn(BPF_JEQ_K, (n - i) as u8, 0, call));
    }
    block.push(insn(BPF_JA, 0, 0, 2));
    block.push(insn(BPF_RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF));
    block.push(insn(BPF_RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS));
    Ok(block)
}

/// Compile the filter for a run: file writes always, the network when it is off, the calls no
/// command needs always.
/// `other_processes`: send changes to another process's limits and scheduling to the supervisor (for a
/// run that sees the host's processes).
///
/// `fd_metadata_by_kernel`: the caller has made every mount the run can reach outside its roots, and
/// every protected path, read-only, so the metadata calls on descriptors are left to the kernel (see
/// `fd_metadata_calls`); its refusals of them (`EROFS`) are then not recorded.
pub fn build_filter(
    network: bool,
    other_processes: bool,
    fd_metadata_by_kernel: bool,
) -> Result<BpfProgram, String> {
    let filter = SeccompFilter::new(
        conditional_rules(network, other_processes, fd_metadata_by_kernel),
        SeccompAction::Allow,
        SeccompAction::Trace(NOTIFY_MARK),
        target_arch()?,
    )
    .map_err(|e| format!("the seccomp filter could not be built: {e}"))?;
    let mut rules: BpfProgram = filter
        .try_into()
        .map_err(|e| format!("the seccomp filter could not be compiled: {e}"))?;
    let mut rewritten = 0;
    for insn in rules.iter_mut() {
        if insn.code == BPF_RET_K && insn.k == SECCOMP_RET_TRACE | NOTIFY_MARK {
            insn.k = libc::SECCOMP_RET_USER_NOTIF;
            rewritten += 1;
        }
    }
    if rewritten == 0 {
        return Err("the seccomp filter has no notification return".into());
    }
    let mut program = dispatch_block(&unconditional_calls(network, fd_metadata_by_kernel))?;
    program.extend(rules);
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
///
/// Where the kernel has it (Linux 5.19), `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`: once the supervisor
/// has taken a call, the caller waits for the answer through any signal but a fatal one. The
/// supervisor makes most judged calls itself (`perform`); without the flag a signal could end the
/// wait after the call was made, and the restarted call would meet its own result (`EEXIST`).
pub fn install_in_child(program: &[seccompiler::sock_filter]) -> std::io::Result<libc::c_int> {
    const SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
    let listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    match install(program, listener | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => install(program, listener),
        other => other,
    }
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
            let p = build_filter(network, true, false).unwrap();
            assert!(p
                .iter()
                .any(|i| i.code == BPF_RET_K && i.k == libc::SECCOMP_RET_USER_NOTIF));
            assert!(!p
                .iter()
                .any(|i| i.code == BPF_RET_K && i.k & 0xffff_0000 == SECCOMP_RET_TRACE));
        }
        // The network rules add instructions.
        assert!(
            build_filter(false, true, false).unwrap().len()
                > build_filter(true, true, false).unwrap().len()
        );
        assert!(
            build_filter(true, true, false).unwrap().len()
                > build_filter(true, false, false).unwrap().len()
        );
    }

    /// What the kernel answers for a call: the program run by a small classic-BPF interpreter over a
    /// `seccomp_data` (nr, arch, instruction pointer, six arguments). Panics on an instruction it does
    /// not know, so a new kind of output from `seccompiler` is noticed here.
    fn run(
        program: &[seccompiler::sock_filter],
        arch: u32,
        call: libc::c_long,
        args: [u64; 6],
    ) -> u32 {
        let mut data = Vec::new();
        data.extend_from_slice(&(call as u32).to_ne_bytes());
        data.extend_from_slice(&arch.to_ne_bytes());
        data.extend_from_slice(&0u64.to_ne_bytes());
        for a in args {
            data.extend_from_slice(&a.to_ne_bytes());
        }
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let i = &program[pc];
            pc += 1;
            let jump = |taken: bool| if taken { i.jt as usize } else { i.jf as usize };
            match i.code {
                0x20 => {
                    let at = i.k as usize;
                    acc = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                }
                0x54 => acc &= i.k,
                0x05 => pc += i.k as usize,
                0x15 => pc += jump(acc == i.k),
                0x25 => pc += jump(acc > i.k),
                0x35 => pc += jump(acc >= i.k),
                0x45 => pc += jump(acc & i.k != 0),
                0x06 => return i.k,
                other => panic!("instruction {other:#x} at {}", pc - 1),
            }
        }
    }

    #[test]
    fn metadata_through_a_descriptor_is_the_kernels_only_when_asked() {
        const NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
        const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
        let path = 0x7fff_0000_1000u64;
        for by_kernel in [false, true] {
            let p = build_filter(false, true, by_kernel).unwrap();
            let call = |nr: libc::c_long, a: [u64; 6]| run(&p, AUDIT_ARCH, nr, a);
            let fd_answer = if by_kernel { ALLOW } else { NOTIFY };
            for nr in fd_metadata_calls() {
                assert_eq!(call(nr, [3, 0o755, 0, 0, 0, 0]), fd_answer, "call {nr}");
            }
            // fchmod: an execute, set-id, group or world write bit is always judged; a plain mode as
            // the others.
            for mode in [
                0o755, 0o100, 0o001, 0o4644, 0o2644, 0o1644, 0o666, 0o664, 0o646,
            ] {
                assert_eq!(
                    call(libc::SYS_fchmod, [3, mode, 0, 0, 0, 0]),
                    NOTIFY,
                    "{mode:o}"
                );
            }
            for mode in [0o644, 0o600, 0o444, 0] {
                assert_eq!(
                    call(libc::SYS_fchmod, [3, mode, 0, 0, 0, 0]),
                    fd_answer,
                    "{mode:o}"
                );
            }
            // futimens (no path) follows the descriptor calls; a path is always judged, whatever
            // the bits above 32 of the pointer.
            assert_eq!(call(libc::SYS_utimensat, [3, 0, 0, 0, 0, 0]), fd_answer);
            assert_eq!(call(libc::SYS_utimensat, [3, path, 0, 0, 0, 0]), NOTIFY);
            assert_eq!(call(libc::SYS_utimensat, [3, 1 << 40, 0, 0, 0, 0]), NOTIFY);
            // Path-based metadata calls always go to the supervisor (they are the refusals a run
            // makes by mistake, and are recorded).
            for nr in [
                libc::SYS_fchmodat,
                SYS_FCHMODAT2,
                libc::SYS_fchownat,
                libc::SYS_setxattr,
                libc::SYS_lsetxattr,
                libc::SYS_removexattr,
                SYS_SETXATTRAT,
            ] {
                assert_eq!(call(nr, [3, path, 0, 0, 0, 0]), NOTIFY, "call {nr}");
            }
        }
    }

    #[test]
    // ioctl requests are c_ulong with glibc and c_int with musl: the cast is needed on one.
    #[allow(clippy::unnecessary_cast)]
    fn the_filter_sends_exactly_the_calls_it_should_to_the_supervisor() {
        const NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
        const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
        let args = |a0: u64, a1: u64, a2: u64, a4: u64, a5: u64| [a0, a1, a2, 0, a4, a5];
        let none = [0u64; 6];
        for network in [false, true] {
            let p = build_filter(network, true, false).unwrap();
            let call = |nr: libc::c_long, a: [u64; 6]| run(&p, AUDIT_ARCH, nr, a);
            for &nr in &unconditional_calls(network, false) {
                assert_eq!(call(nr as libc::c_long, none), NOTIFY, "call {nr}");
            }
            for nr in [
                libc::SYS_read,
                libc::SYS_write,
                libc::SYS_getpid,
                libc::SYS_execve,
                refused::SYS_CLONE3,
            ] {
                assert_eq!(call(nr, none), ALLOW, "call {nr}");
            }
            let wr = libc::O_WRONLY as u64;
            assert_eq!(
                call(libc::SYS_openat, args(0, 0, libc::O_RDONLY as u64, 0, 0)),
                ALLOW
            );
            assert_eq!(call(libc::SYS_openat, args(0, 0, wr, 0, 0)), NOTIFY);
            assert_eq!(
                call(libc::SYS_openat, args(0, 0, libc::O_CREAT as u64, 0, 0)),
                NOTIFY
            );
            // Terminal injection and console/loop requests go to the supervisor; a terminal's
            // everyday requests do not.
            for request in [0x4008_6602u32, 0x4008_6604, 0x401c_5820, 0xc018_9436] {
                let got = call(libc::SYS_ioctl, args(0, request as u64, 0, 0, 0));
                assert_eq!(got, NOTIFY, "ioctl {request:#x}");
            }
            for (request, _) in refused::FILE_SYSTEM_IOCTLS_UNSEEN {
                let got = call(libc::SYS_ioctl, args(0, request as u64, 0, 0, 0));
                assert_eq!(got, ALLOW, "ioctl {request:#x}");
            }
            for request in [libc::TIOCSTI, 0x541c, 0x5606, 0x4c00, 0x4c80] {
                let got = call(libc::SYS_ioctl, args(0, request as u64, 0, 0, 0));
                assert_eq!(got, NOTIFY, "ioctl {request:#x}");
            }
            for request in [
                libc::TIOCGWINSZ,
                libc::TCGETS,
                libc::TIOCSWINSZ,
                libc::FIONREAD,
            ] {
                let got = call(libc::SYS_ioctl, args(0, request as u64, 0, 0, 0));
                assert_eq!(got, ALLOW, "ioctl {request:#x}");
            }
            // Leases and locks are judged; other fcntl commands and unlocks are not.
            for cmd in [
                libc::F_SETLEASE,
                libc::F_SETLK,
                libc::F_SETLKW,
                libc::F_OFD_SETLK,
            ] {
                assert_eq!(call(libc::SYS_fcntl, args(3, cmd as u64, 0, 0, 0)), NOTIFY);
            }
            for cmd in [
                libc::F_GETFL,
                libc::F_SETFD,
                libc::F_GETLK,
                libc::F_DUPFD_CLOEXEC,
            ] {
                assert_eq!(call(libc::SYS_fcntl, args(3, cmd as u64, 0, 0, 0)), ALLOW);
            }
            for op in [libc::LOCK_SH, libc::LOCK_EX | libc::LOCK_NB] {
                assert_eq!(call(libc::SYS_flock, args(3, op as u64, 0, 0, 0)), NOTIFY);
            }
            assert_eq!(
                call(libc::SYS_flock, args(3, libc::LOCK_UN as u64, 0, 0, 0)),
                ALLOW
            );
            let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
            assert_eq!(call(libc::SYS_clone, args(thread, 0, 0, 0, 0)), ALLOW);
            assert_eq!(
                call(
                    libc::SYS_clone,
                    args(libc::CLONE_NEWUSER as u64, 0, 0, 0, 0)
                ),
                NOTIFY
            );
            assert_eq!(
                call(
                    libc::SYS_unshare,
                    args(libc::CLONE_FILES as u64, 0, 0, 0, 0)
                ),
                ALLOW
            );
            assert_eq!(
                call(
                    libc::SYS_unshare,
                    args(libc::CLONE_NEWNS as u64, 0, 0, 0, 0)
                ),
                NOTIFY
            );
            // 0x80: CLONE_NEWTIME for unshare, part of the exit signal for clone.
            assert_eq!(call(libc::SYS_unshare, args(0x80, 0, 0, 0, 0)), NOTIFY);
            assert_eq!(call(libc::SYS_clone, args(0x80 | 17, 0, 0, 0, 0)), ALLOW);
            // Changes to another process go to the supervisor; to the caller (0), or a read, do not.
            assert_eq!(call(libc::SYS_prlimit64, args(1, 0, 0x7000, 0, 0)), NOTIFY);
            assert_eq!(call(libc::SYS_prlimit64, args(1, 0, 0, 0, 0)), ALLOW);
            // Without namespaces of its own, the host's message queues go to the supervisor.
            assert_eq!(call(libc::SYS_mq_unlink, args(0x7000, 0, 0, 0, 0)), NOTIFY);
            assert_eq!(call(libc::SYS_mq_open, args(0x7000, 0, 0, 0, 0)), NOTIFY);
            // ... and so does System V IPC (the supervisor keeps the objects the run made).
            for (nr, _) in super::super::sysv_ipc::CALLS {
                assert_eq!(call(nr, args(5, 0, 0, 0, 0)), NOTIFY);
            }
            assert_eq!(call(libc::SYS_fcntl, args(3, 1036, 0x7000, 0, 0)), NOTIFY);
            assert_eq!(call(libc::SYS_fcntl, args(3, 1035, 0x7000, 0, 0)), ALLOW);
            assert_eq!(call(libc::SYS_prlimit64, args(0, 0, 0x7000, 0, 0)), ALLOW);
            assert_eq!(call(libc::SYS_setpriority, args(0, 77, 5, 0, 0)), NOTIFY);
            assert_eq!(call(libc::SYS_setpriority, args(0, 0, 5, 0, 0)), ALLOW);
            assert_eq!(
                call(libc::SYS_sched_setaffinity, args(9, 8, 0x7000, 0, 0)),
                NOTIFY
            );
            assert_eq!(
                call(libc::SYS_sched_setaffinity, args(0, 8, 0x7000, 0, 0)),
                ALLOW
            );
            let off = |when_off: u32| if network { ALLOW } else { when_off };
            let inet = libc::AF_INET as u64;
            assert_eq!(call(libc::SYS_socket, args(inet, 0, 0, 0, 0)), off(NOTIFY));
            assert_eq!(
                call(libc::SYS_socket, args(libc::AF_UNIX as u64, 0, 0, 0, 0)),
                ALLOW
            );
            assert_eq!(call(libc::SYS_connect, none), off(NOTIFY));
            assert_eq!(call(libc::SYS_sendmsg, none), off(NOTIFY));
            assert_eq!(call(libc::SYS_sendmmsg, none), off(NOTIFY));
            // sendto: only with an address pointer (any of its 64 bits) and a length.
            assert_eq!(call(libc::SYS_sendto, args(3, 0, 1, 0, 0)), ALLOW);
            assert_eq!(
                call(libc::SYS_sendto, args(3, 0, 1, 0x7ff0_0000_0000, 0)),
                ALLOW
            );
            assert_eq!(
                call(libc::SYS_sendto, args(3, 0, 1, 0x7ff0_0000_0000, 16)),
                off(NOTIFY)
            );
            assert_eq!(
                call(libc::SYS_sendto, args(3, 0, 1, 0x1000, 16)),
                off(NOTIFY)
            );
            // x32 numbers (x86_64's architecture, a table of their own) would match no rule: killed.
            #[cfg(target_arch = "x86_64")]
            {
                let x32 = |nr: libc::c_long| nr | 0x4000_0000;
                let kill = libc::SECCOMP_RET_KILL_PROCESS;
                assert_eq!(call(x32(libc::SYS_openat), args(0, 0, wr, 0, 0)), kill);
                assert_eq!(call(x32(libc::SYS_getpid), none), kill);
            }
            // Another architecture's numbers are not ours to judge: the process is killed.
            assert_eq!(
                run(&p, 0x4000_0003, libc::SYS_read, none),
                libc::SECCOMP_RET_KILL_PROCESS
            );
            assert_eq!(
                // 83: a number no rule of either architecture names (x86_64's mkdir).
                run(&p, 0x4000_0003, 83, none),
                libc::SECCOMP_RET_KILL_PROCESS
            );
            // The kernel checks and compiles it at every sandboxed spawn: keep it short.
            // (The device, lease and lock rules of the small world took it from about 330 to 400,
            // the file systems' ioctl families and the write hints to 455; a run without
            // namespaces of its own adds System V IPC's calls, to 510.)
            assert!(p.len() < 520, "{} instructions", p.len());
            let own_namespaces = build_filter(network, false, false).unwrap();
            assert!(
                own_namespaces.len() < 470,
                "{} instructions",
                own_namespaces.len()
            );
            // With an IPC namespace of its own the run's System V objects are its own: the kernel's.
            for (nr, _) in super::super::sysv_ipc::CALLS {
                assert_eq!(
                    run(&own_namespaces, AUDIT_ARCH, nr, args(5, 0, 0, 0, 0)),
                    ALLOW
                );
            }
        }
        let c3 = build_clone3_refusal().unwrap();
        assert_eq!(
            run(&c3, AUDIT_ARCH, refused::SYS_CLONE3, none),
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        );
        assert_eq!(
            run(&c3, AUDIT_ARCH, libc::SYS_clone, none),
            libc::SECCOMP_RET_ALLOW
        );
    }

    #[test]
    fn the_test_process_is_not_filtered() {
        // cargo test runs outside any sandbox; a filtered process would see listeners refused.
        assert!(!already_filtered());
    }
}
