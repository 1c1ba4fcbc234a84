//! Who the supervisor is while it makes a caller's call: without effective capabilities, and, for
//! a creation, with the caller's umask on a thread whose file-system context is its own.

use std::sync::{mpsc, Mutex, OnceLock};

use super::{errno, Outcome};

/// `struct __user_cap_header_struct` and `__user_cap_data_struct` of `capget(2)`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// This thread without effective capabilities while it makes a caller's call (a sandboxed command
/// has none: a root supervisor would otherwise write where file modes forbid the command to), given
/// back when dropped. `capset` on the raw system call changes the calling thread only.
pub(in crate::sandbox) struct CallerIdentity {
    restore: Option<[CapData; 2]>,
}

impl CallerIdentity {
    pub(in crate::sandbox) fn assume() -> Result<CallerIdentity, i32> {
        if NONE_EFFECTIVE.with(std::cell::Cell::get) {
            return Ok(CallerIdentity { restore: None });
        }
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let mut data = [CapData::default(); 2];
        // SAFETY: capget fills two data structs for version 3.
        if unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } < 0 {
            return Err(errno());
        }
        if data.iter().all(|d| d.effective == 0) {
            return Ok(CallerIdentity { restore: None });
        }
        let mut none = data;
        for d in &mut none {
            d.effective = 0;
        }
        // SAFETY: capset reads the header and two data structs.
        if unsafe { libc::syscall(libc::SYS_capset, &mut header, none.as_ptr()) } < 0 {
            return Err(errno());
        }
        Ok(CallerIdentity {
            restore: Some(data),
        })
    }
}

impl CallerIdentity {
    /// Drop this thread's effective capabilities for good, keeping the permitted set (so
    /// `with_capabilities` can raise them for a moment): for a thread that only serves runs, whose
    /// every call for a caller is then made as the caller without a `capset` of its own (each one
    /// commits new credentials: a few microseconds on every creation).
    pub(in crate::sandbox) fn assume_for_good() {
        if let Ok(identity) = Self::assume() {
            std::mem::forget(identity);
            NONE_EFFECTIVE.with(|n| n.set(true));
        }
    }
}

thread_local! {
    /// Set once this thread has given up its effective capabilities for good (`assume_for_good`):
    /// each `assume` then needs no `capget` (two a created file, issue 36). `with_capabilities`
    /// clears it while it raises them, and sets it again only once they are given up again.
    static NONE_EFFECTIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` with this thread's permitted capabilities effective, then give them up again: for a
/// look at a caller that only a capability allows (a process that made itself non-dumpable hides
/// its memory and `/proc` links from a supervisor without `CAP_SYS_PTRACE`).
pub(in crate::sandbox) fn with_capabilities<T>(f: impl FnOnce() -> T) -> T {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget fills two data structs for version 3.
    let known = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) } == 0;
    if !known || data.iter().all(|d| d.effective == d.permitted) {
        return f();
    }
    let mut raised = data;
    for d in &mut raised {
        d.effective = d.permitted;
    }
    // Not known to be without capabilities while they are raised (nor after, should `f` unwind
    // with them raised: the next `assume` looks again and gives them up).
    let none_before = NONE_EFFECTIVE.with(|n| n.replace(false));
    // SAFETY: capset reads the header and two data structs; raising within the permitted set.
    unsafe { libc::syscall(libc::SYS_capset, &mut header, raised.as_ptr()) };
    let result = f();
    // SAFETY: as above, back to the sets read before.
    let restored = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) } == 0;
    NONE_EFFECTIVE.with(|n| n.set(none_before && restored));
    result
}

impl Drop for CallerIdentity {
    fn drop(&mut self) {
        if let Some(data) = self.restore {
            let mut header = CapHeader {
                version: CAPABILITY_VERSION_3,
                pid: 0,
            };
            // SAFETY: as in `assume`; the permitted set was kept, so raising the effective set back
            // is allowed.
            unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
        }
    }
}

thread_local! {
    /// Whether this thread has a file-system context (umask, cwd) of its own.
    static OWN_FS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Give the calling thread a file-system context of its own (`unshare(CLONE_FS)`), so setting the
/// umask a caller's creation needs changes no other thread's. For threads that do nothing else (a
/// run's supervising thread); false if the kernel refused.
/// Whether this thread has a file-system context of its own (see `own_fs`).
pub(super) fn has_own_fs() -> bool {
    OWN_FS.with(|o| o.get())
}

pub fn own_fs() -> bool {
    if OWN_FS.with(|o| o.get()) {
        return true;
    }
    // SAFETY: unshare(CLONE_FS) copies this thread's root, cwd and umask into a context of its own.
    let ok = unsafe { libc::unshare(libc::CLONE_FS) } == 0;
    OWN_FS.with(|o| o.set(ok));
    ok
}

type Work = Box<dyn FnOnce() + Send>;

/// Run `work` on a thread with a file-system context of its own: this one if it has one, else the
/// one thread kept for that (supervisors waiting on the async runtime share it).
pub(super) fn on_own_fs(work: impl FnOnce() -> Outcome + Send + 'static) -> Outcome {
    if OWN_FS.with(|o| o.get()) {
        return work();
    }
    static CREATOR: OnceLock<Mutex<mpsc::Sender<Work>>> = OnceLock::new();
    let sender = CREATOR.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Work>();
        // Should no thread be had, the receiver is gone and each send below fails.
        let _ = std::thread::Builder::new()
            .name("agent-exec-creator".into())
            .spawn(move || {
                own_fs();
                CallerIdentity::assume_for_good();
                while let Ok(work) = rx.recv() {
                    work();
                }
            });
        Mutex::new(tx)
    });
    let (done_tx, done_rx) = mpsc::sync_channel::<Outcome>(1);
    let job: Work = Box::new(move || {
        let _ = done_tx.send(work());
    });
    let sent = sender.lock().unwrap_or_else(|e| e.into_inner()).send(job);
    match sent.map(|()| done_rx.recv()) {
        Ok(Ok(outcome)) => outcome,
        // No thread to make it with the caller's umask: the call fails as if out of resources.
        _ => Outcome::Error(libc::EAGAIN),
    }
}
