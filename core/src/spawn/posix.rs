//! Linux pipe spawn without fork: `posix_spawn` with `POSIX_SPAWN_SETSID` (or `clone3` into the run's
//! tracking cgroup, see [`super::clone3`]), and exit detection by [`super::exit_watch`].
//!
//! Why not `tokio::process` with a `pre_exec(setsid)`: a `pre_exec` hook forces a real `fork()` of the
//! whole Node process (tens of MiB of page tables) and made `exec("true")` cost 4 ms; `posix_spawn`
//! (glibc uses `clone(CLONE_VM|CLONE_VFORK)`) takes it to about 1.3 ms, under Node's own
//! `child_process.spawn`. `setsid` is still applied, by the spawn attributes instead of a hook.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use tokio::net::unix::pipe;

pub struct PosixChild {
    pub pid: u32,
    pub stdin: Option<pipe::Sender>,
    pub stdout: pipe::Receiver,
    pub stderr: pipe::Receiver,
    pub exit: super::exit_watch::ExitWaiter,
}

pub(crate) fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in an argument"))
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// Owns the spawn file actions and attributes so they are destroyed on every path.
struct SpawnSetup {
    actions: libc::posix_spawn_file_actions_t,
    attr: libc::posix_spawnattr_t,
}

impl Drop for SpawnSetup {
    fn drop(&mut self) {
        // SAFETY: both were initialised in `spawn` before this value existed.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
            libc::posix_spawnattr_destroy(&mut self.attr);
        }
    }
}

/// Start `program` with pipes. With a tracking cgroup the child is born inside it; where that cannot be
/// done without a fork here (no `clone3` entry for this architecture, a kernel that refuses it, a v1
/// thread that cannot move), the error is `ENOSYS` and the caller takes the forking path, which joins
/// the cgroup before exec.
pub fn spawn(
    program: &Path,
    args: &[&std::ffi::OsStr],
    cwd: &Path,
    env: &BTreeMap<OsString, OsString>,
    stdin_pipe: bool,
    tracking: Option<&super::tracking::TrackingCgroup>,
) -> io::Result<PosixChild> {
    // Decided before any pipe or string is made: the forking path makes its own.
    if tracking.is_some_and(|cg| cg.version() == 2 && !super::tracking::clone3_usable()) {
        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
    }
    let strings = ExecStrings::new(program, args, env)?;
    let (prog, argv, envp) = (&strings.program, &strings.argv, &strings.envp);
    let cwd_c = cstring(cwd.as_os_str().as_bytes())?;

    let pipes = StdioPipes::new(stdin_pipe)?;
    let stdio = [pipes.in_r.as_fd(), pipes.out_w.as_fd(), pipes.err_w.as_fd()];
    let plain = || posix_spawn_child(prog, argv, envp, &cwd_c, stdio);
    let (pid, pidfd) = match tracking {
        None => (plain()?, None),
        Some(cg) if cg.version() == 1 => match cg.spawn_from_inside(plain) {
            Ok(spawned) => (spawned?, None),
            Err(e) => {
                tracing::debug!("a spawning thread could not enter the run's cgroup: {e}");
                return Err(io::Error::from_raw_os_error(libc::ENOSYS));
            }
        },
        Some(cg) => {
            let plan = super::clone3::Plan {
                program: prog,
                argv: argv.as_ptr() as *const *const libc::c_char,
                envp: envp.as_ptr() as *const *const libc::c_char,
                cwd: &cwd_c,
                stdio,
                terminal: false,
                cgroup: cg.dir_fd(),
            };
            match super::clone3::spawn(&plan) {
                Ok(s) => (s.pid, Some(s.pidfd)),
                Err(super::clone3::SpawnError::Child(e)) => return Err(e),
                Err(super::clone3::SpawnError::Clone(e)) if lasting_refusal(&e) => {
                    tracing::warn!("clone3 into a cgroup failed ({e}); pipe runs fork instead");
                    super::tracking::mark_clone3_broken();
                    return Err(io::Error::from_raw_os_error(libc::ENOSYS));
                }
                Err(super::clone3::SpawnError::Clone(e)) => return Err(e),
            }
        }
    };
    // Our copies of the child's ends close here, so its output can reach its end.
    PosixChild::new(
        pid,
        pidfd,
        pipes.in_w,
        pipes.out_r.into(),
        pipes.err_r.into(),
    )
}

impl PosixChild {
    /// The parent's side of a spawned child: the wait for its exit (through its pidfd, if the
    /// spawn made one and the shared ring is not there), and our ends of its pipes.
    pub(crate) fn new(
        pid: libc::pid_t,
        pidfd: Option<OwnedFd>,
        stdin: Option<OwnedFd>,
        stdout: OwnedFd,
        stderr: OwnedFd,
    ) -> io::Result<PosixChild> {
        Ok(PosixChild {
            pid: pid as u32,
            stdin: match stdin {
                Some(w) => Some(pipe::Sender::from_owned_fd(w)?),
                None => None,
            },
            stdout: pipe::Receiver::from_owned_fd(stdout)?,
            stderr: pipe::Receiver::from_owned_fd(stderr)?,
            exit: super::exit_watch::ExitWaiter::new(pid, pidfd)?,
        })
    }
}

/// The strings of one exec, as execve takes them: the program, and NUL-terminated arrays of pointers
/// into the owned argument and environment strings.
pub(crate) struct ExecStrings {
    pub program: CString,
    _owned: Vec<CString>,
    pub argv: Vec<*mut libc::c_char>,
    pub envp: Vec<*mut libc::c_char>,
}

impl ExecStrings {
    pub(crate) fn new(
        program: &Path,
        args: &[&std::ffi::OsStr],
        env: &BTreeMap<OsString, OsString>,
    ) -> io::Result<ExecStrings> {
        let prog = cstring(program.as_os_str().as_bytes())?;
        let mut owned = vec![prog.clone()];
        for a in args {
            owned.push(cstring(a.as_bytes())?);
        }
        let argc = owned.len();
        for (k, v) in env {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            owned.push(cstring(&kv)?);
        }
        // The pointers stay valid: a CString's bytes do not move when the vector holding it does.
        let ptrs = |list: &[CString]| -> Vec<*mut libc::c_char> {
            list.iter()
                .map(|c| c.as_ptr() as *mut libc::c_char)
                .chain(std::iter::once(std::ptr::null_mut()))
                .collect()
        };
        Ok(ExecStrings {
            program: prog,
            argv: ptrs(&owned[..argc]),
            envp: ptrs(&owned[argc..]),
            _owned: owned,
        })
    }
}

/// The pipes of a piped run: our ends and the child's (stdin is `/dev/null` unless piped).
pub(crate) struct StdioPipes {
    pub in_r: OwnedFd,
    pub in_w: Option<OwnedFd>,
    pub out_r: std::io::PipeReader,
    pub out_w: std::io::PipeWriter,
    pub err_r: std::io::PipeReader,
    pub err_w: std::io::PipeWriter,
}

impl StdioPipes {
    pub(crate) fn new(stdin_pipe: bool) -> io::Result<StdioPipes> {
        // std pipes are close-on-exec; dup2 onto 0..2 in the child clears that for the copies only.
        let (out_r, out_w) = std::io::pipe()?;
        let (err_r, err_w) = std::io::pipe()?;
        // Bigger pipes mean fewer wake-ups per megabyte when a command floods its output.
        for fd in [out_r.as_raw_fd(), err_r.as_raw_fd()] {
            // SAFETY: F_SETPIPE_SZ on a pipe we own; failure (a lower limit) just keeps the default.
            unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, 1 << 20) };
        }
        let (in_r, in_w): (OwnedFd, Option<OwnedFd>) = if stdin_pipe {
            let (r, w) = std::io::pipe()?;
            (r.into(), Some(w.into()))
        } else {
            (std::fs::File::open("/dev/null")?.into(), None)
        };
        Ok(StdioPipes {
            in_r,
            in_w,
            out_r,
            out_w,
            err_r,
            err_w,
        })
    }
}

/// A refusal of `clone3` that later runs would meet too: the kernel lacks it or refuses the cgroup.
pub(crate) fn lasting_refusal(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::ENOSYS
                | libc::E2BIG
                | libc::EINVAL
                | libc::EOPNOTSUPP
                | libc::EPERM
                | libc::EACCES
                | libc::EBUSY
        )
    )
}

/// posix_spawn of `prog` in a new session, with `stdio` as its 0..2, a clean signal state and `cwd`.
fn posix_spawn_child(
    prog: &CString,
    argv: &[*mut libc::c_char],
    envp: &[*mut libc::c_char],
    cwd_c: &CString,
    stdio: [std::os::fd::BorrowedFd<'_>; 3],
) -> io::Result<libc::pid_t> {
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer handed to posix_spawn outlives the call; the setup is destroyed by Drop.
    unsafe {
        let mut setup = SpawnSetup {
            actions: std::mem::zeroed(),
            attr: std::mem::zeroed(),
        };
        check(libc::posix_spawn_file_actions_init(&mut setup.actions))?;
        if let Err(e) = check(libc::posix_spawnattr_init(&mut setup.attr)) {
            libc::posix_spawn_file_actions_destroy(&mut setup.actions);
            std::mem::forget(setup);
            return Err(e);
        }
        check(libc::posix_spawn_file_actions_adddup2(
            &mut setup.actions,
            stdio[0].as_raw_fd(),
            0,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(
            &mut setup.actions,
            stdio[1].as_raw_fd(),
            1,
        ))?;
        check(libc::posix_spawn_file_actions_adddup2(
            &mut setup.actions,
            stdio[2].as_raw_fd(),
            2,
        ))?;
        // glibc 2.29+ (and musl 1.1.24+): looked up at run time like closefrom below, so the addon
        // loads on an older C library, where the caller forks instead.
        let Some(addchdir) = addchdir() else {
            return Err(io::Error::from_raw_os_error(libc::ENOSYS));
        };
        check(addchdir(&mut setup.actions, cwd_c.as_ptr()))?;
        // Nothing else the host holds reaches the command. Where the C library cannot close them in
        // the child, the caller forks instead (its child marks them close-on-exec).
        let Some(closefrom) = addclosefrom() else {
            return Err(io::Error::from_raw_os_error(libc::ENOSYS));
        };
        check(closefrom(&mut setup.actions, 3))?;
        // Node ignores SIGPIPE and may block signals in this thread: the child starts clean.
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        check(libc::posix_spawnattr_setsigmask(&mut setup.attr, &empty))?;
        check(libc::posix_spawnattr_setsigdefault(&mut setup.attr, &all))?;
        let flags = libc::POSIX_SPAWN_SETSID as libc::c_int
            | libc::POSIX_SPAWN_SETSIGMASK
            | libc::POSIX_SPAWN_SETSIGDEF;
        check(libc::posix_spawnattr_setflags(
            &mut setup.attr,
            flags as libc::c_short,
        ))?;
        check(libc::posix_spawn(
            &mut pid,
            prog.as_ptr(),
            &setup.actions,
            &setup.attr,
            argv.as_ptr(),
            envp.as_ptr(),
        ))?;
    }
    Ok(pid)
}

type AddCloseFrom =
    unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, libc::c_int) -> libc::c_int;
type AddChdir =
    unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const libc::c_char) -> libc::c_int;

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later).
fn addclosefrom() -> Option<AddCloseFrom> {
    static FOUND: OnceLock<Option<AddCloseFrom>> = OnceLock::new();
    // SAFETY: the C library declares this name with exactly this signature.
    unsafe { optional_libc_fn(&FOUND, c"posix_spawn_file_actions_addclosefrom_np") }
}

/// `posix_spawn_file_actions_addchdir_np` (glibc 2.29, musl 1.1.24).
fn addchdir() -> Option<AddChdir> {
    static FOUND: OnceLock<Option<AddChdir>> = OnceLock::new();
    // SAFETY: as above.
    unsafe { optional_libc_fn(&FOUND, c"posix_spawn_file_actions_addchdir_np") }
}

/// A C library function looked up at run time (once), so the prebuilt binary still loads on a C
/// library that lacks it (older glibc, musl); the caller then takes the forking spawn.
///
/// # Safety
/// `F` must be the function pointer type the C library gives `name`.
unsafe fn optional_libc_fn<F: Copy>(found: &OnceLock<Option<F>>, name: &CStr) -> Option<F> {
    assert_eq!(
        std::mem::size_of::<F>(),
        std::mem::size_of::<*mut libc::c_void>()
    );
    *found.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; a non-null result is that function (the caller's
        // promise), and F is a pointer-sized function pointer type (checked above).
        unsafe {
            let sym = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
            (!sym.is_null()).then(|| std::mem::transmute_copy::<*mut libc::c_void, F>(&sym))
        }
    })
}
