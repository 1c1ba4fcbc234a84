//! System calls no command needs, refused in every sandboxed run, after Docker's default seccomp
//! profile: they change the system, reach past the sandbox, or are large attack surface.
//!
//! Most are also refused by the kernel for want of a capability (the child has none, see
//! `privileges`); refusing them in the filter as well means a kernel bug behind one is out of reach,
//! and each attempt is recorded. The filter sends them to the supervisor (they are rare, so the round
//! trip costs nothing that matters), which answers `EPERM` and records the call and the rule.
//!
//! One is refused by the filter alone, unrecorded: `clone3`, whose flags are in memory a filter cannot
//! read. It answers `ENOSYS`, on which the C libraries fall back to `clone`, whose flags the filter
//! does read (and only a `clone` asking for a new namespace goes to the supervisor). Recording it
//! would record every thread a program starts.

/// Why a call is refused, as a report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    Mounts,
    Namespaces,
    Keyrings,
    Devices,
    Clock,
    Hostname,
    Administration,
    KernelInterface,
    OtherProcesses,
    DeviceControl,
    Leases,
    FileAttributes,
    HostIpc,
}

impl Why {
    pub fn describe(self) -> &'static str {
        match self {
            Why::Mounts => "no mounts in the sandbox",
            Why::Namespaces => "no new namespaces in the sandbox",
            Why::Keyrings => "no kernel keyrings in the sandbox",
            Why::Devices => "no device files in the sandbox",
            Why::Clock => "no clock changes in the sandbox",
            Why::Hostname => "no hostname changes in the sandbox",
            Why::Administration => "no system administration in the sandbox",
            Why::KernelInterface => "a kernel interface the sandbox does not offer",
            Why::OtherProcesses => "no changes to processes outside the caller",
            Why::DeviceControl => {
                "no terminal input injection, console or loop device control in the sandbox"
            }
            Why::Leases => "no file leases in the sandbox (a lease stalls the host's next open)",
            Why::HostIpc => {
                "no use of the host's POSIX message queues (the run has no IPC namespace of its own)"
            }
            Why::FileAttributes => {
                "no inode flags, versions or file-system attributes changed in the sandbox (a file's owner may change them through a descriptor opened for reading)"
            }
        }
    }
}

/// Newer calls have one number on every architecture; `libc` does not name all of them.
const SYS_OPEN_TREE: libc::c_long = 428;
const SYS_MOVE_MOUNT: libc::c_long = 429;
const SYS_FSOPEN: libc::c_long = 430;
const SYS_FSCONFIG: libc::c_long = 431;
const SYS_FSMOUNT: libc::c_long = 432;
const SYS_FSPICK: libc::c_long = 433;
const SYS_MOUNT_SETATTR: libc::c_long = 442;
/// kexec_file_load, which the libc crate does not name for aarch64 musl.
#[cfg(target_arch = "x86_64")]
const SYS_KEXEC_FILE_LOAD: libc::c_long = 320;
#[cfg(target_arch = "aarch64")]
const SYS_KEXEC_FILE_LOAD: libc::c_long = 294;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYS_KEXEC_FILE_LOAD: libc::c_long = libc::SYS_kexec_file_load;
const SYS_OPEN_TREE_ATTR: libc::c_long = 467;
/// `file_setattr` (Linux 6.17): `FS_IOC_FSSETXATTR` by path.
pub const SYS_FILE_SETATTR: libc::c_long = 469;
pub const SYS_CLONE3: libc::c_long = 435;

/// Calls refused whatever their arguments, with their names and why.
pub fn always() -> Vec<(libc::c_long, &'static str, Why)> {
    // x86_64 adds its older calls below.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut calls = vec![
        (libc::SYS_mount, "mount", Why::Mounts),
        (libc::SYS_umount2, "umount2", Why::Mounts),
        (libc::SYS_pivot_root, "pivot_root", Why::Mounts),
        (SYS_OPEN_TREE, "open_tree", Why::Mounts),
        (SYS_OPEN_TREE_ATTR, "open_tree_attr", Why::Mounts),
        (SYS_MOVE_MOUNT, "move_mount", Why::Mounts),
        (SYS_FSOPEN, "fsopen", Why::Mounts),
        (SYS_FSCONFIG, "fsconfig", Why::Mounts),
        (SYS_FSMOUNT, "fsmount", Why::Mounts),
        (SYS_FSPICK, "fspick", Why::Mounts),
        (SYS_MOUNT_SETATTR, "mount_setattr", Why::Mounts),
        (SYS_FILE_SETATTR, "file_setattr", Why::FileAttributes),
        (libc::SYS_setns, "setns", Why::Namespaces),
        (libc::SYS_add_key, "add_key", Why::Keyrings),
        (libc::SYS_keyctl, "keyctl", Why::Keyrings),
        (libc::SYS_request_key, "request_key", Why::Keyrings),
        (libc::SYS_clock_settime, "clock_settime", Why::Clock),
        (libc::SYS_settimeofday, "settimeofday", Why::Clock),
        (libc::SYS_sethostname, "sethostname", Why::Hostname),
        (libc::SYS_setdomainname, "setdomainname", Why::Hostname),
        (libc::SYS_reboot, "reboot", Why::Administration),
        (libc::SYS_kexec_load, "kexec_load", Why::Administration),
        (SYS_KEXEC_FILE_LOAD, "kexec_file_load", Why::Administration),
        (libc::SYS_init_module, "init_module", Why::Administration),
        (libc::SYS_finit_module, "finit_module", Why::Administration),
        (
            libc::SYS_delete_module,
            "delete_module",
            Why::Administration,
        ),
        (libc::SYS_swapon, "swapon", Why::Administration),
        (libc::SYS_swapoff, "swapoff", Why::Administration),
        (libc::SYS_acct, "acct", Why::Administration),
        (libc::SYS_syslog, "syslog", Why::Administration),
        (libc::SYS_bpf, "bpf", Why::KernelInterface),
        (
            libc::SYS_perf_event_open,
            "perf_event_open",
            Why::KernelInterface,
        ),
        (
            libc::SYS_fanotify_init,
            "fanotify_init",
            Why::KernelInterface,
        ),
        (
            libc::SYS_open_by_handle_at,
            "open_by_handle_at",
            Why::KernelInterface,
        ),
        (libc::SYS_userfaultfd, "userfaultfd", Why::KernelInterface),
        // io_uring makes its own calls (files, sockets) where no filter sees them.
        (
            libc::SYS_io_uring_setup,
            "io_uring_setup",
            Why::KernelInterface,
        ),
        (
            libc::SYS_io_uring_enter,
            "io_uring_enter",
            Why::KernelInterface,
        ),
        (
            libc::SYS_io_uring_register,
            "io_uring_register",
            Why::KernelInterface,
        ),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        (libc::SYS_iopl, "iopl", Why::Administration),
        (libc::SYS_ioperm, "ioperm", Why::Administration),
    ]);
    calls
}

/// Calls that change another process when their target is not 0 (the caller): its limits, priority,
/// CPUs, scheduling or I/O class, or memory placement. Without a PID namespace the sandbox sees the
/// host's processes, the agent among them (`prlimit --pid $PPID --cpu=1:1` would SIGKILL it). The
/// argument holding the target, and one that must be set for the call to change anything (`prlimit64`
/// with no new limit only reads).
pub fn other_process_calls() -> [(libc::c_long, &'static str, usize, Option<usize>); 9] {
    [
        (libc::SYS_prlimit64, "prlimit64", 0, Some(2)),
        (libc::SYS_setpriority, "setpriority", 1, None),
        (libc::SYS_sched_setaffinity, "sched_setaffinity", 0, None),
        (libc::SYS_sched_setscheduler, "sched_setscheduler", 0, None),
        (libc::SYS_sched_setparam, "sched_setparam", 0, None),
        (libc::SYS_sched_setattr, "sched_setattr", 0, None),
        (libc::SYS_ioprio_set, "ioprio_set", 1, None),
        (libc::SYS_migrate_pages, "migrate_pages", 0, None),
        (libc::SYS_move_pages, "move_pages", 0, None),
    ]
}

/// Calls that reach what the host's other programs share when the run has no namespaces of its own
/// (no IPC namespace): sent to the supervisor only then, and refused. POSIX message queues are the
/// IPC namespace's, named like files but not files to Landlock: `mq_unlink` removed another
/// program's queue; `mq_open` with `O_CREAT` made a queue in the host's namespace before Landlock
/// refused the open (the queue stayed, counted against the user's `RLIMIT_MSGQUEUE` until the
/// agent's own queues failed), and one opened for reading is drained by `mq_receive`.
pub fn shared_without_namespaces() -> [(libc::c_long, &'static str, Why); 2] {
    [
        (libc::SYS_mq_unlink, "mq_unlink", Why::HostIpc),
        (libc::SYS_mq_open, "mq_open", Why::HostIpc),
    ]
}

/// `fcntl` commands that set a file's write-lifetime hint (`F_SET_RW_HINT`, and the older
/// `F_SET_FILE_RW_HINT`): the kernel lets a file's owner set it through a descriptor opened for
/// reading, on any mount, read-only ones included. Refused always.
pub const RW_HINT_COMMANDS: [(libc::c_int, &str); 2] =
    [(1036, "F_SET_RW_HINT"), (1038, "F_SET_FILE_RW_HINT")];

/// A refusal of a change to another process: `is_caller` says whether a target id is the caller's own
/// process or thread (those pass).
pub fn judge_other_process(
    nr: libc::c_long,
    args: &[u64; 6],
    is_caller: impl Fn(u32) -> bool,
) -> Option<(String, Why)> {
    let (_, name, target, needs) = other_process_calls().into_iter().find(|c| c.0 == nr)?;
    let who = args[target] as u32;
    if who == 0 || needs.is_some_and(|n| args[n] == 0) || is_caller(who) {
        return None;
    }
    Some((format!("{name}(pid {})", who as i32), Why::OtherProcesses))
}

/// Calls that set the clock only when the `modes` of their `struct timex` say so (`adjtimex` with
/// none only reads it, as `ntptime` and `timedatectl` do): the argument holding it.
pub fn timex_calls() -> [(libc::c_long, &'static str, usize); 2] {
    [
        (libc::SYS_adjtimex, "adjtimex", 0),
        (libc::SYS_clock_adjtime, "clock_adjtime", 1),
    ]
}

/// `ioctl` requests refused whatever the device (a mask over the request number, the value under it,
/// a name): pushing input into a terminal (`TIOCSTI`), the console's own requests (`TIOCLINUX`,
/// `TIOCCONS`, every `VT_*` and `KD*`), and every loop device request (`LOOP_*`, `LOOP_CTL_*`). A run's
/// own `/dev` has none of these devices; this holds where it cannot have one, and against a
/// descriptor a run was handed.
pub const REFUSED_IOCTLS: [(u32, u32, &str); 6] = [
    (0xffff_ffff, 0x5412, "TIOCSTI"),
    (0xffff_ffff, 0x541c, "TIOCLINUX"),
    (0xffff_ffff, 0x541d, "TIOCCONS"),
    (0xffff_ff00, 0x5600, "VT_*"),
    (0xffff_ff00, 0x4b00, "KD*"),
    (0xffff_ff00, 0x4c00, "LOOP_*"),
];

/// The file systems' own `ioctl` families (the type byte of the request, and a name): the generic
/// `FS_IOC_*` and ext2/3/4's (`'f'`), inode versions (`'v'`), XFS's and `fsxattr` (`'X'`), btrfs's
/// (with `FICLONE`), f2fs's. Their requests change inode flags (`chattr`'s `FS_IOC_SETFLAGS`: `+S`,
/// `+A`, `+d` on a host file), versions, project ids, fs-verity (a file made read-only for good),
/// encryption policies and keys, subvolumes and snapshots. The kernel lets a file's owner make most
/// of them through a descriptor opened for reading: Landlock does not cover them, and only a
/// read-only mount (a run's mount namespace) refused them. Refused in every family, bar the requests
/// that only read (`FILE_SYSTEM_IOCTL_READS`) and the clones into a file opened for writing
/// (`FILE_SYSTEM_IOCTLS_UNSEEN`).
pub const FILE_SYSTEM_IOCTL_FAMILIES: [(u32, &str); 5] = [
    (0x6600, "FS_IOC/EXT4_IOC"),
    (0x7600, "FS_IOC_*VERSION"),
    (0x5800, "XFS_IOC/FS_IOC_FS*XATTR"),
    (0x9400, "BTRFS_IOC"),
    (0xf500, "F2FS_IOC"),
];

/// The requests of those families that only read: a run keeps them (they reach the supervisor, which
/// lets them through).
pub const FILE_SYSTEM_IOCTL_READS: [(u32, &str); 13] = [
    (0x8008_6601, "FS_IOC_GETFLAGS"),
    (0x8004_6601, "FS_IOC32_GETFLAGS"),
    (0x8008_7601, "FS_IOC_GETVERSION"),
    (0x8004_7601, "FS_IOC32_GETVERSION"),
    (0x801c_581f, "FS_IOC_FSGETXATTR"),
    (0xc020_660b, "FS_IOC_FIEMAP"),
    (0x400c_6615, "FS_IOC_GET_ENCRYPTION_POLICY"),
    (0xc009_6616, "FS_IOC_GET_ENCRYPTION_POLICY_EX"),
    (0xc080_661a, "FS_IOC_GET_ENCRYPTION_KEY_STATUS"),
    (0x8010_661b, "FS_IOC_GET_ENCRYPTION_NONCE"),
    (0xc004_6686, "FS_IOC_MEASURE_VERITY"),
    (0xc028_6687, "FS_IOC_READ_VERITY_METADATA"),
    (0x8100_9431, "FS_IOC_GETFSLABEL"),
];

/// The requests of those families a run keeps that the filter does not even send to the
/// supervisor: `cp`'s reflink clones (`FICLONE`, `FICLONERANGE`), one per file copied, which write
/// only into a descriptor the run opened for writing.
pub const FILE_SYSTEM_IOCTLS_UNSEEN: [(u32, &str); 2] =
    [(0x4004_9409, "FICLONE"), (0x4020_940d, "FICLONERANGE")];

/// Whether `request` is one of the file systems' requests a run may not make (see above).
pub fn changes_file_system_attributes(request: u32) -> Option<&'static str> {
    let (_, family) = FILE_SYSTEM_IOCTL_FAMILIES
        .iter()
        .find(|(family, _)| request & 0xff00 == *family)?;
    let kept = FILE_SYSTEM_IOCTL_READS
        .iter()
        .chain(&FILE_SYSTEM_IOCTLS_UNSEEN)
        .any(|(r, _)| *r == request);
    (!kept).then_some(*family)
}

/// `fcntl` commands that take or change a lock (their files are judged by the supervisor: a run locks
/// only what it may write), and `F_SETLEASE`, refused outright.
pub const LOCK_COMMANDS: [(libc::c_int, &str); 4] = [
    (libc::F_SETLK, "F_SETLK"),
    (libc::F_SETLKW, "F_SETLKW"),
    (libc::F_OFD_SETLK, "F_OFD_SETLK"),
    (libc::F_OFD_SETLKW, "F_OFD_SETLKW"),
];

/// The flags of `clone` and `unshare` that make a namespace.
pub const NAMESPACE_FLAGS: [(libc::c_int, &str); 8] = [
    (libc::CLONE_NEWNS, "CLONE_NEWNS"),
    (libc::CLONE_NEWUTS, "CLONE_NEWUTS"),
    (libc::CLONE_NEWIPC, "CLONE_NEWIPC"),
    (libc::CLONE_NEWUSER, "CLONE_NEWUSER"),
    (libc::CLONE_NEWPID, "CLONE_NEWPID"),
    (libc::CLONE_NEWNET, "CLONE_NEWNET"),
    (libc::CLONE_NEWCGROUP, "CLONE_NEWCGROUP"),
    (0x80, "CLONE_NEWTIME"),
];

/// The namespace flags a call takes: `clone`'s low byte is the exit signal (`CSIGNAL`), so
/// `CLONE_NEWTIME` (0x80, inside it) is `unshare`'s and `clone3`'s only.
pub fn namespace_flags_of(call: libc::c_long) -> impl Iterator<Item = (libc::c_int, &'static str)> {
    let csignal = if call == libc::SYS_clone { 0xff } else { 0 };
    NAMESPACE_FLAGS
        .into_iter()
        .filter(move |(f, _)| f & csignal == 0)
}

/// The namespace flags of call `call` in `flags`, as a report lists them (`CLONE_NEWNS|CLONE_NEWUSER`),
/// or `None`.
pub fn namespace_flags(call: libc::c_long, flags: u64) -> Option<String> {
    let names: Vec<&str> = namespace_flags_of(call)
        .filter(|(f, _)| flags & *f as u64 != 0)
        .map(|(_, n)| n)
        .collect();
    (!names.is_empty()).then(|| names.join("|"))
}

/// The device type a `mknod` mode asks for, if it is a character or block device.
pub fn device_kind(mode: u64) -> Option<&'static str> {
    match mode as u32 & libc::S_IFMT {
        libc::S_IFCHR => Some("S_IFCHR"),
        libc::S_IFBLK => Some("S_IFBLK"),
        _ => None,
    }
}

/// A refusal of this module's: the call as a report names it, and why. `timex_modes` reads the
/// `modes` field of the `struct timex` at an address of the caller's (`None`: unreadable).
pub fn judge(
    nr: libc::c_long,
    args: &[u64; 6],
    timex_modes: impl Fn(u64) -> Option<u32>,
) -> Option<(String, Why)> {
    // (The calls shared without namespaces reach the supervisor only in that mode: refused there.)
    let mut refused_always = always().into_iter().chain(shared_without_namespaces());
    if let Some((_, name, why)) = refused_always.find(|(n, _, _)| *n == nr) {
        return Some((name.to_string(), why));
    }
    if let Some((_, name, arg)) = timex_calls().into_iter().find(|(n, _, _)| *n == nr) {
        // An unreadable struct is the kernel's EFAULT; modes 0 only reads the clock.
        return match timex_modes(args[arg]) {
            Some(m) if m != 0 => Some((format!("{name}(modes {m:#x})"), Why::Clock)),
            _ => None,
        };
    }
    match nr {
        libc::SYS_unshare | libc::SYS_clone => {
            let flags = namespace_flags(nr, args[0])?;
            let name = if nr == libc::SYS_clone {
                "clone"
            } else {
                "unshare"
            };
            Some((format!("{name}({flags})"), Why::Namespaces))
        }
        libc::SYS_mknodat => device_kind(args[2]).map(|k| (format!("mknodat({k})"), Why::Devices)),
        libc::SYS_ioctl => {
            let request = args[1] as u32;
            if let Some(family) = changes_file_system_attributes(request) {
                return Some((
                    format!("ioctl({family}, {request:#x})"),
                    Why::FileAttributes,
                ));
            }
            REFUSED_IOCTLS
                .iter()
                .find(|(mask, value, _)| request & mask == *value)
                .map(|(_, _, name)| (format!("ioctl({name}, {request:#x})"), Why::DeviceControl))
        }
        libc::SYS_fcntl if args[1] as libc::c_int == libc::F_SETLEASE => {
            Some(("fcntl(F_SETLEASE)".into(), Why::Leases))
        }
        libc::SYS_fcntl => RW_HINT_COMMANDS
            .iter()
            .find(|(cmd, _)| args[1] as libc::c_int == *cmd)
            .map(|(_, name)| (format!("fcntl({name})"), Why::FileAttributes)),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mknod => device_kind(args[1]).map(|k| (format!("mknod({k})"), Why::Devices)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_env = "gnu")]
    fn the_hand_numbered_call_is_the_one_glibc_targets_name() {
        assert_eq!(SYS_KEXEC_FILE_LOAD, libc::SYS_kexec_file_load);
    }

    #[test]
    fn changes_to_other_processes_are_refused_and_to_the_caller_pass() {
        let args = |a0: u64, a1: u64, a2: u64| [a0, a1, a2, 0, 0, 0];
        let caller = |p: u32| p == 4242;
        assert_eq!(
            judge_other_process(libc::SYS_prlimit64, &args(1, 0, 0x7000), caller),
            Some(("prlimit64(pid 1)".into(), Why::OtherProcesses))
        );
        // Reading another's limits, the caller's own, and pid 0 pass.
        assert_eq!(
            judge_other_process(libc::SYS_prlimit64, &args(1, 0, 0), caller),
            None
        );
        assert_eq!(
            judge_other_process(libc::SYS_prlimit64, &args(4242, 0, 0x7000), caller),
            None
        );
        assert_eq!(
            judge_other_process(libc::SYS_prlimit64, &args(0, 0, 0x7000), caller),
            None
        );
        assert_eq!(
            judge_other_process(libc::SYS_setpriority, &args(0, 77, 10), caller),
            Some(("setpriority(pid 77)".into(), Why::OtherProcesses))
        );
        assert_eq!(
            judge_other_process(libc::SYS_setpriority, &args(0, 0, 10), caller),
            None
        );
        assert_eq!(
            judge_other_process(libc::SYS_sched_setaffinity, &args(99, 8, 0x7000), caller),
            Some(("sched_setaffinity(pid 99)".into(), Why::OtherProcesses))
        );
        assert_eq!(
            judge_other_process(libc::SYS_getpid, &args(99, 0, 0), caller),
            None
        );
    }

    #[test]
    fn calls_are_refused_by_what_they_ask_for() {
        let none = |_| None;
        let args = |a0: u64, a1: u64, a2: u64| [a0, a1, a2, 0, 0, 0];
        assert_eq!(
            judge(libc::SYS_mount, &args(0, 0, 0), none),
            Some(("mount".into(), Why::Mounts))
        );
        // A clone for a thread or a fork passes; one for a namespace does not.
        let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_FILES) as u64;
        assert_eq!(judge(libc::SYS_clone, &args(thread, 0, 0), none), None);
        assert_eq!(
            judge(
                libc::SYS_unshare,
                &args((libc::CLONE_NEWNS | libc::CLONE_NEWUSER) as u64, 0, 0),
                none
            ),
            Some(("unshare(CLONE_NEWNS|CLONE_NEWUSER)".into(), Why::Namespaces))
        );
        assert_eq!(
            judge(
                libc::SYS_unshare,
                &args(libc::CLONE_FILES as u64, 0, 0),
                none
            ),
            None
        );
        // 0x80 is CLONE_NEWTIME for unshare, part of the exit signal for clone.
        assert_eq!(
            judge(libc::SYS_unshare, &args(0x80, 0, 0), none),
            Some(("unshare(CLONE_NEWTIME)".into(), Why::Namespaces))
        );
        let fork = 0x80 | libc::SIGCHLD as u64;
        assert_eq!(judge(libc::SYS_clone, &args(fork, 0, 0), none), None);
        // mknodat: devices are refused, FIFOs and files are the path rules' business.
        let chr = (libc::S_IFCHR | 0o600) as u64;
        assert_eq!(
            judge(libc::SYS_mknodat, &args(0, 0, chr), none),
            Some(("mknodat(S_IFCHR)".into(), Why::Devices))
        );
        assert_eq!(
            judge(
                libc::SYS_mknodat,
                &args(0, 0, (libc::S_IFIFO | 0o600) as u64),
                none
            ),
            None
        );
        // adjtimex reads the clock with modes 0, sets it otherwise.
        assert_eq!(judge(libc::SYS_adjtimex, &args(8, 0, 0), |_| Some(0)), None);
        assert_eq!(
            judge(libc::SYS_adjtimex, &args(8, 0, 0), |_| Some(1)),
            Some(("adjtimex(modes 0x1)".into(), Why::Clock))
        );
        assert_eq!(judge(libc::SYS_getpid, &args(0, 0, 0), none), None);
    }

    #[test]
    // ioctl requests are c_ulong with glibc and c_int with musl: the cast is needed on one.
    #[allow(clippy::unnecessary_cast)]
    fn terminal_injection_console_and_loop_ioctls_and_leases_are_refused() {
        let none = |_| None;
        let ioctl = |request: u64| judge(libc::SYS_ioctl, &[3, request, 0, 0, 0, 0], none);
        for (request, name) in [
            (libc::TIOCSTI, "TIOCSTI"),
            (0x541c, "TIOCLINUX"),
            (0x5606, "VT_ACTIVATE"),
            (0x4b3a, "KDSETMODE"),
            (0x4c00, "LOOP_SET_FD"),
            (0x4c80, "LOOP_CTL_ADD"),
        ] {
            let got = ioctl(request as u64);
            assert!(
                matches!(&got, Some((_, Why::DeviceControl))),
                "{name}: {got:?}"
            );
        }
        // The file systems' requests that change a file, by any descriptor; their reads pass.
        for (request, name) in [
            (0x4008_6602u32, "FS_IOC_SETFLAGS"),
            (0x4004_6602, "FS_IOC32_SETFLAGS"),
            (0x4008_7602, "FS_IOC_SETVERSION"),
            (0x4008_6604, "EXT4_IOC_SETVERSION"),
            (0x401c_5820, "FS_IOC_FSSETXATTR"),
            (0x4080_6685, "FS_IOC_ENABLE_VERITY"),
            (0x800c_6613, "FS_IOC_SET_ENCRYPTION_POLICY"),
            (0x4010_6614, "FS_IOC_GET_ENCRYPTION_PWSALT"),
            (0x0000_6609, "EXT4_IOC_MIGRATE"),
            (0xc018_9436, "FIDEDUPERANGE"),
            (0x5000_9401, "BTRFS_IOC_SNAP_CREATE"),
        ] {
            let got = ioctl(request as u64);
            assert!(
                matches!(&got, Some((_, Why::FileAttributes))),
                "{name}: {got:?}"
            );
        }
        for (request, name) in FILE_SYSTEM_IOCTL_READS
            .into_iter()
            .chain(FILE_SYSTEM_IOCTLS_UNSEEN)
        {
            assert_eq!(ioctl(request as u64), None, "{name}");
        }
        assert!(matches!(
            judge(SYS_FILE_SETATTR, &[0; 6], none),
            Some((_, Why::FileAttributes))
        ));
        assert!(matches!(
            judge(libc::SYS_fcntl, &[3, 1036, 0, 0, 0, 0], none),
            Some((_, Why::FileAttributes))
        ));
        assert_eq!(judge(libc::SYS_fcntl, &[3, 1035, 0, 0, 0, 0], none), None);
        for call in [libc::SYS_mq_unlink, libc::SYS_mq_open] {
            assert!(matches!(
                judge(call, &[0; 6], none),
                Some((_, Why::HostIpc))
            ));
        }
        // What terminals and programs use every day passes: window size, attributes, FIONREAD.
        for request in [
            libc::TIOCGWINSZ,
            libc::TIOCSWINSZ,
            libc::TCGETS,
            libc::TCSETS,
            libc::FIONREAD,
        ] {
            assert_eq!(ioctl(request as u64), None, "{request:#x}");
        }
        // The high bits of a 64-bit argument do not hide a request.
        assert!(ioctl(0xffff_ffff_0000_5412).is_some());
        assert_eq!(
            judge(
                libc::SYS_fcntl,
                &[3, libc::F_SETLEASE as u64, 1, 0, 0, 0],
                none
            ),
            Some(("fcntl(F_SETLEASE)".into(), Why::Leases))
        );
        assert_eq!(
            judge(
                libc::SYS_fcntl,
                &[3, libc::F_GETLEASE as u64, 0, 0, 0, 0],
                none
            ),
            None
        );
    }
}
