//! What the forked child does to enter its sandbox, between fork and exec.
//!
//! Everything that allocates or can fail for ordinary reasons (paths, rules, the filter program, the
//! cgroup) was prepared by the parent; here only system calls remain, in this order: join the cgroup,
//! enter a mount namespace (everything outside the roots read-only, the private `/dev/shm`, the
//! protected paths read-only), set the rlimits, `no_new_privs`,
//! Landlock, then the seccomp filter, whose notification fd goes back to the parent over a socket.
//! The filter comes last because every path-writing call after it waits for the supervisor, which only
//! starts once the spawn returns.
//!
//! A failing step returns its errno with the step number in the bits above it, so the parent can say
//! which step the host refused (`std` carries only an errno across the fork).

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

/// The steps, numbered for the error the parent reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Step {
    Cgroup = 1,
    Rlimit = 2,
    Unshare = 3,
    UserMap = 4,
    Mount = 5,
    NoNewPrivs = 6,
    Landlock = 7,
    Seccomp = 8,
    SendListener = 9,
    ReadOnlyMounts = 10,
    EnterCwd = 11,
    DropCapabilities = 12,
    ProcessNamespace = 13,
    ProcMount = 14,
    Devices = 15,
    ProxyListener = 16,
}

impl Step {
    fn from_code(code: i32) -> Option<Step> {
        Some(match code {
            1 => Step::Cgroup,
            2 => Step::Rlimit,
            3 => Step::Unshare,
            4 => Step::UserMap,
            5 => Step::Mount,
            6 => Step::NoNewPrivs,
            7 => Step::Landlock,
            8 => Step::Seccomp,
            9 => Step::SendListener,
            10 => Step::ReadOnlyMounts,
            11 => Step::EnterCwd,
            12 => Step::DropCapabilities,
            13 => Step::ProcessNamespace,
            14 => Step::ProcMount,
            15 => Step::Devices,
            16 => Step::ProxyListener,
            _ => return None,
        })
    }

    pub fn describe(self) -> &'static str {
        match self {
            Step::Cgroup => "joining the run's cgroup",
            Step::Rlimit => "setting the resource limits",
            Step::Unshare => "entering a private mount namespace",
            Step::UserMap => "mapping the user into its namespace",
            Step::Mount => {
                "setting up the run's mounts (protected paths read-only, a private /dev/shm)"
            }
            Step::NoNewPrivs => "setting no_new_privs",
            Step::Landlock => "applying the Landlock ruleset",
            Step::Seccomp => "installing the seccomp filter",
            Step::SendListener => "handing the seccomp listener to the runtime",
            Step::ReadOnlyMounts => "making the mounts outside the writable roots read-only",
            Step::EnterCwd => "entering the working directory again after the mounts",
            Step::DropCapabilities => "dropping every capability",
            Step::ProcessNamespace => "starting the run's PID namespace (its init and its shell)",
            Step::ProcMount => "mounting /proc for the run's PID namespace",
            Step::Devices => "making the run's own /dev (device binds, a private devpts)",
            Step::ProxyListener => {
                "making the proxy's listening socket on the loopback of the run's network namespace"
            }
        }
    }
}

const STEP_SHIFT: i32 = 16;

/// Split an error that came back from the child into its step and the OS error.
pub fn decode(e: &std::io::Error) -> Option<(Step, std::io::Error)> {
    let raw = e.raw_os_error()?;
    let step = Step::from_code(raw >> STEP_SHIFT)?;
    Some((step, std::io::Error::from_raw_os_error(raw & 0xffff)))
}

fn fail(step: Step) -> std::io::Error {
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    std::io::Error::from_raw_os_error(((step as i32) << STEP_SHIFT) | (errno & 0xffff))
}

fn check(rc: libc::c_long, step: Step) -> std::io::Result<()> {
    if rc < 0 {
        Err(fail(step))
    } else {
        Ok(())
    }
}

/// A user namespace for an unprivileged user: its own uid and gid mapped to themselves.
#[derive(Debug)]
pub struct UserMaps {
    pub uid_map: Vec<u8>,
    pub gid_map: Vec<u8>,
    /// The namespace's own ceiling on inotify instances (`/proc/sys/user/max_inotify_instances`,
    /// a decimal), so a run cannot use up its user's shared quota; best effort.
    pub inotify_instances: Option<Vec<u8>>,
    /// The same for inotify watches (`max_inotify_watches`): one instance can hold the user's
    /// whole quota of watches (every file under `/usr`), and the agent's `fs.watch` then fails.
    pub inotify_watches: Option<Vec<u8>>,
}

/// A path bound read-only over itself, with the flags its mount already has (a remount inside a
/// user namespace must keep them).
#[derive(Debug)]
pub struct ReadOnlyBind {
    pub path: CString,
    pub keep_flags: libc::c_ulong,
}

#[derive(Debug)]
pub struct MountPlan {
    pub user: Option<UserMaps>,
    /// Directories covered by an empty read-only tmpfs (other runs' temp dirs, the session logs,
    /// credential directories and `denyRead`).
    pub hidden: Vec<HiddenDir>,
    /// Files covered by an empty file nobody may read (credential files and `denyRead`).
    pub hidden_files: Vec<HiddenFile>,
    /// Paths bound over themselves, writable: a mount point cannot be renamed, removed or replaced
    /// (`EBUSY`), so a repository's `.git` directory stays where the host's git looks for it.
    pub pinned: Vec<CString>,
    pub read_only: Vec<ReadOnlyBind>,
    /// A directory of the run's to bind, and where: over `/dev/shm` (links resolved).
    pub private_shm: Option<(CString, CString)>,
    /// When set, every mount is made read-only and these (the writable roots) are bound writable
    /// again: a metadata call that races the supervisor's check meets `EROFS` outside the roots.
    pub writable_binds: Option<Vec<CString>>,
    /// The run's working directory, entered again once the mounts are in place: the child changed into
    /// it before this step, on the mount that is now covered.
    pub cwd: CString,
    /// PID, IPC and UTS namespaces of the run's own, with an init that reaps (see `reaper`).
    pub process_namespaces: Option<ProcessNamespaces>,
    /// A network namespace of the run's own (the network is off): no interfaces, and abstract Unix
    /// socket names private to the run, so nothing it binds can be reached from outside.
    pub network_namespace: bool,
    /// The run's own `/dev` (see [`DevPlan`]), mounted over the host's.
    pub dev: Option<DevPlan>,
    /// Network, IPC and UTS namespaces made ahead for this run (see `namespace_stock`), entered
    /// instead of made by its first spawn attempt (released after it): only where all three are
    /// wanted and no user namespace owns them.
    pub premade: Option<super::namespace_stock::Premade>,
}

/// The remount that seals what hides a path: read-only, nothing to run, no devices, no set-id.
const SEALED: libc::c_ulong = libc::MS_BIND
    | libc::MS_REMOUNT
    | libc::MS_RDONLY
    | libc::MS_NOSUID
    | libc::MS_NODEV
    | libc::MS_NOEXEC;

/// At most this many paths come back inside one hidden directory (their descriptors are held in a
/// fixed array: nothing is allocated between clone and exec).
pub const MAX_KEPT: usize = 16;

/// A directory the run does not see into: covered by an empty tmpfs, read-only, whose top gets
/// `mode` (0000: nobody may list it; 0111: only the paths brought back can be reached); `keep`
/// (the run's own temp dir, `allowRead` paths) is bound back at its place, after `make_dirs`
/// (their missing ancestors inside, outermost first) are made.
#[derive(Debug)]
pub struct HiddenDir {
    pub path: CString,
    pub mode: libc::mode_t,
    pub keep: Vec<KeptPath>,
    pub make_dirs: Vec<CString>,
}

/// A path brought back inside a hidden directory.
#[derive(Debug)]
pub struct KeptPath {
    pub path: CString,
    pub is_dir: bool,
}

/// A file the run may not read: `empty` (an empty file of mode 0000 in the run's temp dir) bound
/// over it, read-only.
#[derive(Debug)]
pub struct HiddenFile {
    pub path: CString,
    pub empty: CString,
}

/// A minimal `/dev`: built on a tmpfs at `staging` (a directory of the run's temp dir, which the
/// host's mount namespace never sees filled), then moved over `/dev`. Only what is put in is there:
/// the bit buckets and randomness bound from the host, `/dev/tty`, a devpts instance of the run's own
/// (or, for a PTY run, only its own terminal), `shm`, and the `fd`/`std*` links. No consoles, serial
/// ports, loop devices, `userfaultfd`, `kvm` or disks.
#[derive(Debug)]
pub struct DevPlan {
    pub staging: CString,
    /// `<staging>/pts`.
    pub staging_pts: CString,
    /// Host device nodes bound in: (host path, path in the staging tmpfs).
    pub nodes: Vec<(CString, CString)>,
    /// Links made in the staging tmpfs: (target, link path).
    pub links: Vec<(CString, CString)>,
    /// `<staging>/shm`, and the run's directory bound over it (POSIX shared memory stays private).
    pub shm: (CString, Option<CString>),
    /// The Landlock rights the run's devpts gets (its ptys are opened for reading and writing); the
    /// host's `/dev/pts` rule does not reach it, as Landlock rules follow inodes.
    pub pts_rights: u64,
}

/// What the run's init needs: the host's lifeline (read end) and where the host's command line lies.
#[derive(Debug, Clone, Copy)]
pub struct ProcessNamespaces {
    pub lifeline: std::os::fd::RawFd,
    pub arg_range: Option<(usize, usize)>,
    /// The data of the namespace's `/proc` mount (see [`ChildPlan::mount_proc`]).
    pub proc_options: &'static std::ffi::CStr,
    /// The init leaves (and the kernel ends every process of the namespace) as soon as the shell
    /// is gone, not once nothing is left.
    pub leave_with_shell: bool,
}

/// `/proc` options that hide from the command the processes it may not inspect (`hidepid=2`): its
/// namespace's init, which shares the host's memory and would show the agent's command line in
/// `/proc/1/cmdline`. Members of the mount's `gid` group are exempt, root's group 0 by default, so a
/// root caller's mount names a group it is not in.
pub fn proc_options(is_root: bool) -> &'static std::ffi::CStr {
    static OPTIONS: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();
    OPTIONS.get_or_init(|| {
        if !is_root {
            return c"hidepid=2".to_owned();
        }
        let mut held: Vec<libc::gid_t> = nix::unistd::getgroups()
            .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
            .unwrap_or_default();
        // SAFETY: getgid/getegid cannot fail.
        held.extend(unsafe { [libc::getgid(), libc::getegid()] });
        let gid = (1..65534u32)
            .rev()
            .find(|g| !held.contains(g))
            .unwrap_or(65533);
        std::ffi::CString::new(format!("hidepid=2,gid={gid}")).expect("no NUL in digits")
    })
}

/// `mount(2)` of `source` (or none) on `target` with `flags`, no file system type or data: the binds,
/// remounts and propagation changes a run's mount namespace gets (and the capability probe tries).
pub fn bind(
    source: Option<&std::ffi::CStr>,
    target: &std::ffi::CStr,
    flags: libc::c_ulong,
) -> libc::c_long {
    let source = source.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: mount reads NUL-terminated strings that outlive the call.
    unsafe {
        libc::mount(
            source,
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        ) as libc::c_long
    }
}

/// `mount(2)` of a file system of `kind` (a tmpfs, a devpts instance, `/proc`) on `target`, with
/// `flags` and its options `data`: what a run's own `/dev`, its covers and its `/proc` are made of
/// (and what the capability probes try).
pub fn mount_fs(
    kind: &std::ffi::CStr,
    target: &std::ffi::CStr,
    flags: libc::c_ulong,
    data: Option<&std::ffi::CStr>,
) -> libc::c_long {
    let data = data.map_or(std::ptr::null(), |d| d.as_ptr().cast());
    // SAFETY: mount reads NUL-terminated strings that outlive the call.
    unsafe {
        libc::mount(kind.as_ptr(), target.as_ptr(), kind.as_ptr(), flags, data) as libc::c_long
    }
}

/// The options of the tmpfs a run's own `/dev` is built on.
pub const DEV_TMPFS_OPTIONS: &std::ffi::CStr = c"mode=0755,size=64k";

/// The options of a run's own devpts instance.
/// At most 256 terminals (`max`): the kernel's pool of ptys (`kernel.pty.max`) is the machine's,
/// and a run opening `/dev/ptmx` in a loop left none for other runs or a container's devpts.
pub const DEVPTS_OPTIONS: &std::ffi::CStr = c"newinstance,ptmxmode=0666,mode=0620,max=256";

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// Set (`read_only`) or clear the read-only flag of the mount at `path` and every mount below it.
pub fn set_read_only_tree(path: &std::ffi::CStr, read_only: bool) -> libc::c_long {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr reads the path and `size_of::<MountAttr>()` bytes of `attr`.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    }
}

/// The type of `setrlimit`'s resource argument: glibc has its own enum type, musl a plain int.
#[cfg(target_env = "gnu")]
pub type RlimitResource = libc::__rlimit_resource_t;
#[cfg(not(target_env = "gnu"))]
pub type RlimitResource = libc::c_int;

/// Everything the child applies, prepared by the parent.
pub struct ChildPlan {
    /// The run's cgroups' join files ([`super::cgroup::join_file`]), which the child writes itself into.
    pub cgroup_joins: Vec<OwnedFd>,
    /// The run's own v2 cgroup, which a clone can put the child in at birth (then no join is made).
    pub cgroup_dir: Option<OwnedFd>,
    pub rlimits: Vec<(RlimitResource, libc::rlim_t, libc::rlim_t)>,
    pub mounts: Option<MountPlan>,
    pub landlock: OwnedFd,
    pub landlock_flags: u32,
    /// The rights the run gets in the mounts it makes for itself (its `/proc`, its `/dev`) when it
    /// reads files by entry (see `read_grants`): no rule made before them reaches them. 0: none.
    pub own_mount_rights: u64,
    pub filter: seccompiler::BpfProgram,
    /// Where the run has no `/dev` of its own: the Landlock rights its own terminal gets (fd 0, when
    /// it is a pty), added in the child, which alone knows it. No other pty is granted.
    pub terminal_rights: Option<u64>,
    /// Answers `clone3` with ENOSYS (see `refused`); installed just before `filter`.
    pub clone3_filter: seccompiler::BpfProgram,
    pub listener_socket: OwnedFd,
    /// The port the sandbox's proxy listens on inside the run's own network namespace (network by
    /// domain): the child makes that socket there, so the run's loopback holds the proxy and nothing
    /// else, and hands it to the runtime, which serves it from the host's network.
    pub proxy_port: Option<u16>,
}

/// In a network namespace of the run's own (system calls only): bring its loopback up and listen on
/// 127.0.0.1:`port`. The socket's fd, or -1 with errno set.
fn listen_on_loopback(port: u16) -> libc::c_long {
    // SAFETY: socket, ioctl, bind and listen on our own socket and stack buffers; the socket is closed
    // on every failure.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return -1;
        }
        let fail = |fd: libc::c_int| {
            let e = *libc::__errno_location();
            libc::close(fd);
            *libc::__errno_location() = e;
            -1
        };
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) < 0 {
            return fail(fd);
        }
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) < 0 {
            return fail(fd);
        }
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(fd, (&addr as *const libc::sockaddr_in).cast(), len) < 0
            || libc::listen(fd, 1024) < 0
        {
            return fail(fd);
        }
        fd as libc::c_long
    }
}

fn write_fd(fd: libc::c_int, bytes: &[u8]) -> libc::c_long {
    // SAFETY: write from a live buffer.
    unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) as libc::c_long }
}

fn write_proc_file(path: &[u8], bytes: &[u8]) -> libc::c_long {
    // SAFETY: `path` is NUL-terminated by the caller; the fd is closed before returning.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return -1;
        }
        let rc = write_fd(fd, bytes);
        libc::close(fd);
        rc
    }
}

impl ChildPlan {
    /// Let go of the namespaces made ahead for this run (see [`super::namespace_stock::Premade::release`]):
    /// after a spawn attempt that shared our memory has returned, or before one that forks.
    pub fn release_premade(&self) {
        if let Some(p) = self.mounts.as_ref().and_then(|m| m.premade.as_ref()) {
            p.release();
        }
    }

    /// How a clone that can name a cgroup (`CLONE_INTO_CGROUP`) should: into the run's own v2 cgroup
    /// where it has one (the join would wait out an RCU grace period after a pause), else `None`.
    pub fn cgroup_to_be_born_in(&self) -> Option<std::os::fd::RawFd> {
        self.cgroup_dir.as_ref().map(|d| d.as_raw_fd())
    }

    /// Apply the plan to the calling (forked, single-threaded) process. With process namespaces it
    /// splits into the relay, the namespace's init and the shell (see `reaper`); it returns in the
    /// shell.
    pub fn apply(&self) -> std::io::Result<()> {
        // A forked child has its standard descriptors in place: fd 0 is the terminal of a PTY run.
        self.enter(Some(0), false)?;
        if let Some(ns) = self.mounts.as_ref().and_then(|m| m.process_namespaces) {
            // Returns in the shell only, pid 2 of the new namespace.
            super::reaper::split(ns.lifeline, ns.arg_range, ns.leave_with_shell).map_err(
                |errno| {
                    std::io::Error::from_raw_os_error(
                        ((Step::ProcessNamespace as i32) << STEP_SHIFT) | errno,
                    )
                },
            )?;
            Self::mount_proc(ns.proc_options)?;
        }
        self.reopen_null_in_view()?;
        self.finish()
    }

    /// Standard descriptors that are the host's `/dev/null` reopened in the run's view, once its
    /// mounts are in place: the host opened them before the run's mount namespace existed, so they
    /// still stand on the host's writable `/dev`, and where the kernel decides metadata calls through
    /// a descriptor (every mount outside the roots read-only, see `seccomp::fd_metadata_calls`) a root
    /// run's `fchmod(0, 0640)` or `futimens(0)` changed the host's `/dev/null` for every other
    /// program. Reopened by name, they stand on the run's read-only bind like any `/dev/null` it opens.
    /// Only with a mount namespace (without one, the supervisor judges those calls by path). The
    /// calling process must have a descriptor table of its own.
    pub fn reopen_null_in_view(&self) -> std::io::Result<()> {
        if self.mounts.is_none() {
            return Ok(());
        }
        for fd in 0..=2 {
            // SAFETY: fstat fills a zeroed stat of an open descriptor (or fails for a closed one).
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(fd, &mut st) } < 0
                || st.st_mode & libc::S_IFMT != libc::S_IFCHR
                || st.st_rdev != libc::makedev(1, 3)
            {
                continue;
            }
            // SAFETY: fcntl with an integer command reads nothing.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if flags < 0 {
                continue;
            }
            let access = flags & libc::O_ACCMODE;
            // SAFETY: open reads the path; the new descriptor is ours until it is moved to `fd`.
            let new = unsafe { libc::open(c"/dev/null".as_ptr(), access | libc::O_NOCTTY) };
            check(new as libc::c_long, Step::Devices)?;
            // SAFETY: dup2 onto a standard descriptor of this process's own table, then our copy
            // closed.
            let moved = unsafe { libc::dup2(new, fd) };
            unsafe { libc::close(new) };
            check(moved as libc::c_long, Step::Devices)?;
        }
        Ok(())
    }

    /// The process namespaces this plan enters, if any.
    pub fn process_namespaces(&self) -> Option<ProcessNamespaces> {
        self.mounts.as_ref().and_then(|m| m.process_namespaces)
    }

    /// The first steps, in the process that will start the namespace's processes: join the cgroups
    /// (unless `born_in` its own already, by the clone), enter the namespaces (the PID namespace then
    /// holds this process's children, not itself), set up the mounts and enter the working directory
    /// again. `terminal`: a descriptor that may be the run's terminal (a `/dev/pts/N` of the host's),
    /// which its own `/dev` then keeps.
    pub fn enter(&self, terminal: Option<libc::c_int>, born_in: bool) -> std::io::Result<()> {
        if !born_in {
            for fd in &self.cgroup_joins {
                check(write_fd(fd.as_raw_fd(), b"0"), Step::Cgroup)?;
            }
        }
        if let Some(m) = &self.mounts {
            self.enter_mount_namespace(m, terminal)?;
        }
        Ok(())
    }

    /// A `/proc` of the run's PID namespace, mounted from inside it (procfs shows the namespace of
    /// whoever mounts it), so the host's processes are not there to be read. `options` (see
    /// [`proc_options`]) also hide the processes the command may not inspect.
    pub fn mount_proc(options: &std::ffi::CStr) -> std::io::Result<()> {
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        // A kernel or a policy that refuses the option still gets the namespace's own /proc.
        if mount_fs(c"proc", c"/proc", flags, Some(options)) == 0 {
            return Ok(());
        }
        check(mount_fs(c"proc", c"/proc", flags, None), Step::ProcMount)
    }

    /// The last steps, in the process that execs the shell: limits, `no_new_privs`, Landlock, the
    /// filters (the listener handed to the runtime over the plan's socket), and no capabilities.
    pub fn finish(&self) -> std::io::Result<()> {
        // A forked child has its standard descriptors in place: fd 0 is the terminal of a PTY run.
        self.finish_with(Some(0), |listener, proxy| {
            let handed = super::handover::give(self.listener_socket.as_raw_fd(), listener, proxy);
            // SAFETY: our own copies; the runtime holds its own once handed over.
            unsafe {
                libc::close(listener);
                if proxy >= 0 {
                    libc::close(proxy);
                }
            }
            handed
        })
    }

    /// [`ChildPlan::finish`], with `terminal` the descriptor that may be the run's terminal (a pty of
    /// the host's, granted to the run alone where it has no `/dev` of its own), and `hand` giving the
    /// runtime the filter's listener and the proxy's listening socket, or -1 where the run has none (a
    /// negative return is a failure with errno set). A process that shares the runtime's descriptor
    /// table just says which descriptors they are.
    pub fn finish_with(
        &self,
        terminal: Option<libc::c_int>,
        hand: impl FnOnce(libc::c_int, libc::c_int) -> libc::c_long,
    ) -> std::io::Result<()> {
        // First, while the process may still bind and bring an interface up (Landlock, the filter and
        // the capabilities' drop below would refuse it).
        let proxy = match self.proxy_port {
            Some(port) => {
                let fd = listen_on_loopback(port);
                check(fd, Step::ProxyListener)?;
                fd as libc::c_int
            }
            None => -1,
        };
        // The namespaces come before the rlimits: a user namespace records its creator's
        // RLIMIT_NPROC as the ceiling for everything inside it, so the run's own (lower) process limit
        // must be set after, where it counts the run's processes only.
        for &(resource, soft, hard) in &self.rlimits {
            let lim = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            // SAFETY: setrlimit reads the struct.
            check(
                unsafe { libc::setrlimit(resource, &lim) } as libc::c_long,
                Step::Rlimit,
            )?;
        }
        // SAFETY: prctl with plain integer arguments.
        check(
            unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } as libc::c_long,
            Step::NoNewPrivs,
        )?;
        // The run's own /proc and /dev, mounted by now, where files are read by entry: whatever is
        // mounted there in the run's view (the host's, when it has none, is granted already).
        for own in [c"/proc", c"/dev"] {
            check(
                self.allow_in_landlock(own, self.own_mount_rights),
                Step::Landlock,
            )?;
        }
        if let (Some(rights), Some(fd)) = (self.terminal_rights, terminal) {
            let mut buf = [0u8; 32];
            if let Some(tty) = terminal_path(fd, &mut buf) {
                check(self.allow_in_landlock(tty, rights), Step::Landlock)?;
            }
        }
        // SAFETY: the ruleset fd is open for the life of the plan.
        check(
            unsafe {
                libc::syscall(
                    libc::SYS_landlock_restrict_self,
                    self.landlock.as_raw_fd(),
                    self.landlock_flags,
                )
            },
            Step::Landlock,
        )?;
        super::seccomp::install_plain_in_child(&self.clone3_filter)
            .map_err(|_| fail(Step::Seccomp))?;
        let listener =
            super::seccomp::install_in_child(&self.filter).map_err(|_| fail(Step::Seccomp))?;
        check(hand(listener, proxy), Step::SendListener)?;
        // Last: the steps above need capabilities a root caller (or a user namespace) has.
        super::privileges::drop_all().map_err(|errno| {
            std::io::Error::from_raw_os_error(
                ((Step::DropCapabilities as i32) << STEP_SHIFT) | errno,
            )
        })
    }

    fn enter_mount_namespace(
        &self,
        m: &MountPlan,
        terminal: Option<libc::c_int>,
    ) -> std::io::Result<()> {
        let mut flags = libc::CLONE_NEWNS;
        if m.user.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        if m.network_namespace {
            flags |= libc::CLONE_NEWNET;
        }
        if m.process_namespaces.is_some() {
            flags |= libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
        }
        if m.premade.as_ref().is_some_and(|p| p.enter()) {
            flags &= !super::namespace_stock::Premade::FLAGS;
        }
        // SAFETY: unshare of the calling process, which is single-threaded after fork.
        check(
            unsafe { libc::unshare(flags) } as libc::c_long,
            Step::Unshare,
        )?;
        if let Some(u) = &m.user {
            check(
                write_proc_file(b"/proc/self/setgroups\0", b"deny"),
                Step::UserMap,
            )?;
            check(
                write_proc_file(b"/proc/self/uid_map\0", &u.uid_map),
                Step::UserMap,
            )?;
            check(
                write_proc_file(b"/proc/self/gid_map\0", &u.gid_map),
                Step::UserMap,
            )?;
            // A kernel without per-namespace ucounts refuses these; the run goes on without.
            if let Some(n) = &u.inotify_instances {
                let _ = write_proc_file(b"/proc/sys/user/max_inotify_instances\0", n);
            }
            if let Some(n) = &u.inotify_watches {
                let _ = write_proc_file(b"/proc/sys/user/max_inotify_watches\0", n);
            }
        }
        // Our binds must not propagate back to the host's namespace.
        check(bind(None, c"/", libc::MS_REC | libc::MS_SLAVE), Step::Mount)?;
        if let Some(roots) = &m.writable_binds {
            check(set_read_only_tree(c"/", true), Step::ReadOnlyMounts)?;
            for r in roots {
                let step = Step::ReadOnlyMounts;
                check(bind(Some(r), r, libc::MS_BIND | libc::MS_REC), step)?;
                check(set_read_only_tree(r, false), step)?;
            }
        }
        if let Some((backing, at)) = &m.private_shm {
            check(bind(Some(backing), at, libc::MS_BIND), Step::Mount)?;
        }
        if let Some(dev) = &m.dev {
            self.make_dev(dev, terminal)?;
        }
        for h in &m.hidden {
            self.hide(h)?;
        }
        for f in &m.hidden_files {
            let step = Step::Mount;
            check(bind(Some(&f.empty), &f.path, libc::MS_BIND), step)?;
            check(bind(None, &f.path, SEALED), step)?;
        }
        for p in &m.pinned {
            check(bind(Some(p), p, libc::MS_BIND), Step::Mount)?;
        }
        for b in &m.read_only {
            let p = b.path.as_c_str();
            check(bind(Some(p), p, libc::MS_BIND | libc::MS_REC), Step::Mount)?;
            let read_only = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | b.keep_flags;
            check(bind(None, p, read_only), Step::Mount)?;
        }
        // SAFETY: chdir with a NUL-terminated path.
        check(
            unsafe { libc::chdir(m.cwd.as_ptr()) } as libc::c_long,
            Step::EnterCwd,
        )?;
        Ok(())
    }

    /// Build the run's `/dev` (see [`DevPlan`]) and move it over the host's.
    fn make_dev(&self, dev: &DevPlan, terminal: Option<libc::c_int>) -> std::io::Result<()> {
        let step = Step::Devices;
        let flags = libc::MS_NOSUID | libc::MS_NOEXEC;
        check(
            mount_fs(c"tmpfs", &dev.staging, flags, Some(DEV_TMPFS_OPTIONS)),
            step,
        )?;
        // A bind keeps the flags of the mount it comes from: the host's /dev is read-only here by
        // now, so the devices' mode, owner and times (the host's) cannot be changed through them,
        // while their data flows as ever (a device's reads and writes do not depend on the mount).
        for (host, staged) in &dev.nodes {
            check(make_file(staged), step)?;
            check(bind(Some(host), staged, libc::MS_BIND), step)?;
        }
        for (target, link) in &dev.links {
            // SAFETY: symlink with NUL-terminated strings.
            check(
                unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) } as libc::c_long,
                step,
            )?;
        }
        check(make_dir(&dev.staging_pts), step)?;
        let mut own = [0u8; 512];
        match terminal.and_then(|fd| own_terminal(fd, &dev.staging_pts, &mut own)) {
            Some((host, staged)) => {
                // A PTY run keeps its terminal at its own name, and sees no other pty.
                check(
                    mount_fs(
                        c"tmpfs",
                        &dev.staging_pts,
                        flags,
                        Some(c"mode=0755,size=4k"),
                    ),
                    step,
                )?;
                check(make_file(staged), step)?;
                check(bind(Some(host), staged, libc::MS_BIND), step)?;
            }
            None => {
                check(
                    mount_fs(c"devpts", &dev.staging_pts, flags, Some(DEVPTS_OPTIONS)),
                    step,
                )?;
            }
        }
        check(
            self.allow_in_landlock(&dev.staging_pts, dev.pts_rights),
            step,
        )?;
        let (shm, backing) = &dev.shm;
        check(make_dir(shm), step)?;
        if let Some(backing) = backing {
            check(bind(Some(backing), shm, libc::MS_BIND), step)?;
        }
        let read_only = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID;
        check(bind(None, &dev.staging, read_only | libc::MS_NOEXEC), step)?;
        // SAFETY: mount(MS_MOVE) with NUL-terminated strings.
        check(
            unsafe {
                libc::mount(
                    dev.staging.as_ptr(),
                    c"/dev".as_ptr(),
                    std::ptr::null(),
                    libc::MS_MOVE,
                    std::ptr::null(),
                )
            } as libc::c_long,
            step,
        )
    }

    /// Cover `h.path` with an empty read-only tmpfs, bringing each of `h.keep` back through a
    /// descriptor opened before it was covered.
    fn hide(&self, h: &HiddenDir) -> std::io::Result<()> {
        let step = Step::Mount;
        let mut fds: [libc::c_int; MAX_KEPT] = [-1; MAX_KEPT];
        let close_all = |fds: &[libc::c_int; MAX_KEPT]| {
            for &fd in fds.iter().filter(|&&fd| fd >= 0) {
                // SAFETY: our own descriptor.
                unsafe { libc::close(fd) };
            }
        };
        for (slot, k) in fds.iter_mut().zip(&h.keep) {
            let dir = if k.is_dir { libc::O_DIRECTORY } else { 0 };
            // SAFETY: open with a NUL-terminated path.
            let fd = unsafe { libc::open(k.path.as_ptr(), libc::O_PATH | dir | libc::O_CLOEXEC) };
            if fd < 0 {
                let e = fail(step);
                close_all(&fds);
                return Err(e);
            }
            *slot = fd;
        }
        let rc = mount_fs(
            c"tmpfs",
            &h.path,
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            Some(c"mode=0700,size=16k"),
        );
        let result = check(rc, step).and_then(|()| {
            for d in &h.make_dirs {
                check(make_dir(d), step)?;
            }
            for (&fd, k) in fds.iter().zip(&h.keep) {
                if k.is_dir {
                    check(make_dir(&k.path), step)?;
                } else {
                    check(make_file(&k.path), step)?;
                }
                let mut buf = [0u8; 32];
                check(
                    bind(Some(proc_fd_path(fd, &mut buf)), &k.path, libc::MS_BIND),
                    step,
                )?;
            }
            // SAFETY: chmod with a NUL-terminated path.
            check(
                unsafe { libc::chmod(h.path.as_ptr(), h.mode) } as libc::c_long,
                step,
            )?;
            check(bind(None, &h.path, SEALED), step)
        });
        close_all(&fds);
        result
    }

    /// Add a rule to the run's (not yet enforced) Landlock ruleset: `rights` beneath `path`.
    fn allow_in_landlock(&self, path: &std::ffi::CStr, rights: u64) -> libc::c_long {
        if rights == 0 {
            return 0;
        }
        /// `struct landlock_path_beneath_attr` (packed in the kernel's header).
        #[repr(C, packed)]
        struct PathBeneath {
            allowed_access: u64,
            parent_fd: i32,
        }
        // SAFETY: open with a NUL-terminated path; the fd is closed below.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            return -1;
        }
        let attr = PathBeneath {
            allowed_access: rights,
            parent_fd: fd,
        };
        // SAFETY: landlock_add_rule reads `attr` (LANDLOCK_RULE_PATH_BENEATH = 1).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.landlock.as_raw_fd(),
                1 as libc::c_int,
                &attr as *const PathBeneath,
                0u32,
            )
        };
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
        rc
    }
}

/// An empty file to bind a device node, or a file brought back, over.
fn make_file(path: &std::ffi::CStr) -> libc::c_long {
    // SAFETY: open with a NUL-terminated path; the fd is closed at once.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return -1;
        }
        libc::close(fd);
    }
    0
}

fn make_dir(path: &std::ffi::CStr) -> libc::c_long {
    // SAFETY: mkdir with a NUL-terminated path.
    unsafe { libc::mkdir(path.as_ptr(), 0o755) as libc::c_long }
}

/// `/proc/self/fd/<fd>`, written into `buf` (no allocation: this runs between clone and exec).
fn proc_fd_path(fd: libc::c_int, buf: &mut [u8; 32]) -> &std::ffi::CStr {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buf[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 10];
    let (mut n, mut len) = (fd.max(0) as u32, 0);
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[PREFIX.len() + i] = digits[len - 1 - i];
    }
    buf[PREFIX.len() + len] = 0;
    std::ffi::CStr::from_bytes_until_nul(&buf[..]).unwrap_or(c"/proc/self/fd/")
}

/// If `fd` is a terminal of the host's devpts, its path (`/dev/pts/N`) written into `buf` (no
/// allocation: this runs between clone and exec).
fn terminal_path(fd: libc::c_int, buf: &mut [u8; 32]) -> Option<&std::ffi::CStr> {
    const PREFIX: &[u8] = b"/dev/pts/";
    let mut proc_buf = [0u8; 32];
    let proc_path = proc_fd_path(fd, &mut proc_buf);
    // SAFETY: readlink into a buffer of the given size from a NUL-terminated path.
    let got = unsafe { libc::readlink(proc_path.as_ptr(), buf.as_mut_ptr().cast(), buf.len() - 1) };
    if got <= PREFIX.len() as isize || got as usize >= buf.len() - 1 {
        return None;
    }
    let len = got as usize;
    let name = buf[..len].strip_prefix(PREFIX)?;
    if !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    buf[len] = 0;
    std::ffi::CStr::from_bytes_with_nul(&buf[..=len]).ok()
}

/// If `fd` is a terminal of the host's devpts (`/dev/pts/N`), its path and the path of the same name
/// under `staging_pts`, both written into `buf` (no allocation: this runs between clone and exec).
fn own_terminal<'b>(
    fd: libc::c_int,
    staging_pts: &std::ffi::CStr,
    buf: &'b mut [u8; 512],
) -> Option<(&'b std::ffi::CStr, &'b std::ffi::CStr)> {
    let mut link = [0u8; 32];
    let host = terminal_path(fd, &mut link)?.to_bytes();
    let name = &host[b"/dev/pts/".len()..];
    let staging = staging_pts.to_bytes();
    let host_len = host.len();
    let staged_len = staging.len() + 1 + name.len();
    if host_len + 1 + staged_len + 1 > buf.len() {
        return None;
    }
    buf[..host_len].copy_from_slice(host);
    buf[host_len] = 0;
    let s = host_len + 1;
    buf[s..s + staging.len()].copy_from_slice(staging);
    buf[s + staging.len()] = b'/';
    buf[s + staging.len() + 1..s + staged_len].copy_from_slice(name);
    buf[s + staged_len] = 0;
    let (host, staged) = buf.split_at(s);
    Some((
        std::ffi::CStr::from_bytes_with_nul(host).ok()?,
        std::ffi::CStr::from_bytes_until_nul(staged).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_paths_are_written_without_allocating() {
        let mut buf = [0u8; 32];
        assert_eq!(proc_fd_path(0, &mut buf), c"/proc/self/fd/0");
        assert_eq!(proc_fd_path(1234567, &mut buf), c"/proc/self/fd/1234567");
        assert_eq!(
            proc_fd_path(i32::MAX, &mut buf),
            c"/proc/self/fd/2147483647"
        );
    }

    #[test]
    fn step_and_errno_survive_the_encoding() {
        // SAFETY: setting errno for the test.
        unsafe { *libc::__errno_location() = libc::EPERM };
        let e = fail(Step::Mount);
        let (step, os) = decode(&e).unwrap();
        assert_eq!(step, Step::Mount);
        assert_eq!(os.raw_os_error(), Some(libc::EPERM));
        assert!(decode(&std::io::Error::from_raw_os_error(libc::ENOENT)).is_none());
    }
}
