//! The supervisor of a sandboxed run: answers the seccomp notifications of its processes, refuses what
//! the policy forbids, and keeps a record of each refusal (operation, path, rule, process).
//!
//! It is woken by the run's notification fd, on a thread of the run's own while few runs are
//! supervised (else on the async runtime; `notify_wait` says why), and ends when the last process
//! using the filter is gone. File paths are read from the caller's memory and resolved the way the
//! kernel will resolve them (the caller's cwd or directory fd, symbolic links, `/proc/self` as the
//! caller); a path that cannot be resolved is refused with the error the kernel would give. A call
//! judged is then made by the supervisor itself (`perform`). A record is therefore never a guess: every
//! entry is an operation the supervisor itself refused.

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::caller_memory;
use super::file_calls::{
    file_call, is_write_open, open_flags_text, read_open_how, FileCall, OpenHow, AT_FDCWD,
};
use super::notify_wait;
use super::perform::{self, in_view};
use super::policy::{DenyRule, FsPolicy};
use super::unix_connect;
use super::unix_send::{self, Message, To};

pub use super::SandboxDenial as Denial;

/// Refusals of one run. Repeats are counted, not stored again; distinct entries are capped.
#[derive(Debug, Default)]
pub struct DenialLog {
    entries: Mutex<Vec<Denial>>,
    dropped: std::sync::atomic::AtomicU64,
}

const MAX_DISTINCT_DENIALS: usize = 200;

impl DenialLog {
    pub(crate) fn record(&self, d: Denial) {
        let mut e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(same) = e
            .iter_mut()
            .find(|x| x.operation == d.operation && x.path == d.path && x.detail == d.detail)
        {
            same.count += 1;
        } else if e.len() < MAX_DISTINCT_DENIALS {
            e.push(d);
        } else {
            self.dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> (Vec<Denial>, u64) {
        let e = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        (
            e.clone(),
            self.dropped.load(std::sync::atomic::Ordering::Relaxed),
        )
    }
}

/// A first refusal of `operation` by process `pid`.
fn denial(operation: &str, path: Option<String>, detail: String, rule: String, pid: u32) -> Denial {
    Denial {
        operation: operation.into(),
        path,
        detail,
        rule,
        pid,
        count: 1,
    }
}

/// What the supervisor answers.
#[derive(Debug)]
enum Verdict {
    /// Let the kernel run the call (and apply Landlock and the mounts).
    Continue,
    /// Fail the call with this errno, and record why.
    Deny(i32, Denial),
    /// Fail the call with this errno, as the kernel would have (nothing was refused).
    Fail(i32),
    /// Answer the call with this value, as the kernel would have, without making it.
    Value(i64),
    /// Make the connection for the caller (see `unix_connect`); `fd` is the caller's socket.
    Connect { fd: i32, to: ConnectTo },
    /// Make the send for the caller (see `unix_send`).
    Send(Box<SendJob>),
    /// Make the judged call for the caller, on the judged copy of its arguments (see `perform`).
    Perform(Box<perform::Job>),
}

/// A `sendto`, `sendmsg` or `sendmmsg` the supervisor makes, as read once from the caller.
#[derive(Debug, PartialEq, Eq)]
struct SendJob {
    /// The system call, as a report names it.
    call: &'static str,
    /// The caller's socket.
    fd: i32,
    flags: i32,
    /// The messages to send, in order, each with its checked destination.
    messages: Vec<(Message, To)>,
    /// `sendmmsg`: the refusal of the message after these, recorded once they are sent (the call
    /// answers how many were).
    refused_next: Option<Denial>,
    /// `sendmmsg`: the caller's array, where the length sent of each message is stored.
    msgvec: Option<u64>,
}

#[derive(Debug, PartialEq, Eq)]
enum ConnectTo {
    /// A Unix socket file the policy allows: absolute, links resolved.
    Path(PathBuf),
    /// An address the policy does not judge, as the caller gave it.
    AsGiven(Vec<u8>),
}

/// Connects and sends a run may have waiting at once (each holds a blocking thread).
const MAX_IN_FLIGHT: usize = 16;

/// The same for all runs together: half the runtime's blocking pool (tokio's default is 512
/// threads). Forty runs of sixteen waiting FIFO opens each took the whole pool, and another
/// session's FIFO open then hung until its timeout.
const MAX_IN_FLIGHT_ALL_RUNS: usize = 256;

/// Blocking calls made for every run of this process, waiting now.
static IN_FLIGHT_ALL_RUNS: AtomicUsize = AtomicUsize::new(0);

/// A place among the blocking calls one run, and all runs together, may have waiting at once:
/// taken before a call is handed to the blocking pool, given back when the call is done (dropped).
struct BlockingSlot {
    run: Arc<AtomicUsize>,
    all: &'static AtomicUsize,
}

impl BlockingSlot {
    /// A place, if the run has fewer than `per_run` calls waiting and all runs fewer than
    /// `all_runs`.
    fn take(
        run: &Arc<AtomicUsize>,
        all: &'static AtomicUsize,
        per_run: usize,
        all_runs: usize,
    ) -> Option<BlockingSlot> {
        if run.fetch_add(1, Ordering::AcqRel) >= per_run {
            run.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        if all.fetch_add(1, Ordering::AcqRel) >= all_runs {
            all.fetch_sub(1, Ordering::AcqRel);
            run.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(BlockingSlot {
            run: run.clone(),
            all,
        })
    }
}

impl Drop for BlockingSlot {
    fn drop(&mut self) {
        self.run.fetch_sub(1, Ordering::AcqRel);
        self.all.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Start supervising `listener`: its notifications are answered on a thread of the run's own while
/// there are few runs, else on the current runtime (see `notify_wait` for why), and connects and
/// sends made for the caller, which can block, on the runtime's blocking pool.
pub fn spawn(
    listener: OwnedFd,
    policy: Arc<FsPolicy>,
    network: bool,
    proxy: Option<std::net::SocketAddr>,
    clients: Option<Arc<super::proxy::Clients>>,
    log: Arc<DenialLog>,
    shares_host_ipc: bool,
) -> std::io::Result<()> {
    sync_wake_up(&listener);
    let runtime = tokio::runtime::Handle::current();
    let listener = Arc::new(listener);
    let server = Server {
        listener: listener.clone(),
        policy,
        network,
        proxy,
        clients,
        log,
        in_flight: Arc::new(AtomicUsize::new(0)),
        blocking: runtime.clone(),
        caller: Arc::new(perform::Caller::default()),
        ipc: shares_host_ipc.then(super::sysv_ipc::RunObjects::default),
    };
    notify_wait::wait_on(listener, move || server.serve_pending(), &runtime)?;
    Ok(())
}

/// What answers one run's notifications: its policy and record, and the connects and sends it has
/// in flight on the runtime's blocking pool.
struct Server {
    listener: Arc<OwnedFd>,
    policy: Arc<FsPolicy>,
    network: bool,
    proxy: Option<std::net::SocketAddr>,
    clients: Option<Arc<super::proxy::Clients>>,
    log: Arc<DenialLog>,
    in_flight: Arc<AtomicUsize>,
    blocking: tokio::runtime::Handle,
    /// The run's root and umask, for the calls made for it.
    caller: Arc<perform::Caller>,
    /// The System V objects the run made, where it has no IPC namespace of its own (removed when
    /// the server goes, that is when the run's last process has).
    ipc: Option<super::sysv_ipc::RunObjects>,
}

impl Server {
    /// Everything pending now; then the waiter waits again, unless the filter's users are gone.
    fn serve_pending(&self) -> notify_wait::Served {
        loop {
            let state = state_now(&self.listener);
            if state & libc::POLLIN == 0 {
                return if state & libc::POLLHUP != 0 {
                    notify_wait::Served::Done
                } else {
                    notify_wait::Served::More
                };
            }
            // SAFETY: RECV fills a zeroed seccomp_notif; a notification is pending, and only this
            // server takes the run's, so it does not block.
            let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            let rc = unsafe {
                libc::ioctl(
                    self.listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_RECV,
                    &mut req,
                )
            };
            // Below 0: ENOENT, the caller died before we read its call.
            if rc >= 0 {
                self.answer_call(req);
            }
        }
    }

    fn answer_call(&self, req: libc::seccomp_notif) {
        if req.data.nr as libc::c_long == libc::SYS_umask {
            // Told before the change is made: later creations read their caller's umask.
            self.caller.umask_called();
            answer(&self.listener, req.id, Answer::Continue);
            return;
        }
        if let Some(judgment) = self
            .ipc
            .as_ref()
            .and_then(|ipc| ipc.judge(req.data.nr as libc::c_long, &req.data.args))
        {
            self.answer_ipc(req, judgment);
            return;
        }
        // The run's root, opened once (its processes cannot change it), for every lookup and call.
        let root = self
            .caller
            .root(req.pid, || id_valid(&self.listener, req.id))
            .ok();
        let verdict = decide(
            &req,
            &self.policy,
            self.network,
            self.proxy,
            root.as_deref(),
        );
        // What a verdict does beyond letting the call through (a record, a refusal, a connect or send
        // made for the caller) rests on what was read from the caller's memory, which was the
        // caller's only if its call is still live. Letting it through needs no such check (one ioctl
        // less on every write): the kernel refuses an answer to a call that is gone.
        if !matches!(verdict, Verdict::Continue) && !id_valid(&self.listener, req.id) {
            return;
        }
        match verdict {
            Verdict::Continue => answer(&self.listener, req.id, Answer::Continue),
            Verdict::Deny(errno, denial) => {
                self.log.record(denial);
                answer(&self.listener, req.id, Answer::Error(errno));
            }
            Verdict::Fail(errno) => answer(&self.listener, req.id, Answer::Error(errno)),
            Verdict::Value(v) => answer(&self.listener, req.id, Answer::Value(v)),
            Verdict::Perform(job) => {
                let still_waiting = || id_valid(&self.listener, req.id);
                match perform::perform(&job, &self.caller, req.pid, false, still_waiting) {
                    perform::Outcome::Blocks => self.hand_over(req, Verdict::Perform(job)),
                    outcome => {
                        record_refused(&self.log, &job, &outcome, req.pid);
                        reply_with(&self.listener, req.id, outcome)
                    }
                }
            }
            verdict @ (Verdict::Connect { .. } | Verdict::Send(_)) => self.hand_over(req, verdict),
        }
    }

    fn answer_ipc(&self, req: libc::seccomp_notif, judgment: super::sysv_ipc::Judgment) {
        use super::sysv_ipc::Judgment;
        let reply = match judgment {
            Judgment::Continue => Answer::Continue,
            Judgment::Value(v) => Answer::Value(v),
            Judgment::Fail(errno) => Answer::Error(errno),
            Judgment::Refuse(detail) => {
                self.log.record(denial(
                    "ipc",
                    None,
                    detail,
                    "another program's System V IPC object: read only (the run has no IPC namespace of its own)".into(),
                    req.pid,
                ));
                Answer::Error(libc::EACCES)
            }
        };
        answer(&self.listener, req.id, reply);
    }

    /// A connect or a send can block (a full listener or receiver), so not here; and a run may hold
    /// only a few blocking threads that way, or it could starve every session's blocking work.
    /// Beyond them the caller hears EAGAIN, as from a full listener.
    fn hand_over(&self, req: libc::seccomp_notif, verdict: Verdict) {
        let slot = BlockingSlot::take(
            &self.in_flight,
            &IN_FLIGHT_ALL_RUNS,
            MAX_IN_FLIGHT,
            MAX_IN_FLIGHT_ALL_RUNS,
        );
        let Some(slot) = slot else {
            answer(&self.listener, req.id, Answer::Error(libc::EAGAIN));
            return;
        };
        let job = BlockingJob {
            listener: self.listener.clone(),
            id: req.id,
            answered: false,
            _slot: slot,
        };
        let (log, clients) = (self.log.clone(), self.clients.clone());
        let caller = self.caller.clone();
        self.blocking.spawn_blocking(move || {
            // Moved in whole (its drop answers a caller left unanswered).
            let mut job = job;
            match verdict {
                Verdict::Connect { fd: socket, to } => {
                    let result =
                        connect_for(&job.listener, &req, socket, &to, &log, clients.as_deref());
                    let reply = result.map_or_else(Answer::Error, |()| Answer::Success);
                    answer(&job.listener, req.id, reply);
                }
                Verdict::Send(send) => send_for(&job.listener, &req, *send, &log),
                Verdict::Perform(call) => {
                    let still_waiting = || id_valid(&job.listener, req.id);
                    let outcome = perform::perform(&call, &caller, req.pid, true, still_waiting);
                    record_refused(&log, &call, &outcome, req.pid);
                    reply_with(&job.listener, req.id, outcome);
                }
                _ => unreachable!("only connects, sends and waiting opens are made here"),
            }
            job.answered = true;
        });
    }
}

/// A connect or send handed to the runtime's blocking pool. Should the runtime drop it unrun (it is
/// shutting down), the caller is still answered (`EAGAIN`) rather than left waiting for good.
struct BlockingJob {
    listener: Arc<OwnedFd>,
    id: u64,
    answered: bool,
    /// Given back after the answer (fields drop after `drop` runs).
    _slot: BlockingSlot,
}

impl Drop for BlockingJob {
    fn drop(&mut self) {
        if !self.answered {
            answer(&self.listener, self.id, Answer::Error(libc::EAGAIN));
        }
    }
}

/// Ask the kernel to hand each notification to the supervisor, and its answer back to the caller, on
/// the CPU the waker runs on (Linux 6.6, `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`): the caller is blocked
/// while it waits anyway, so a wake-up on another CPU only adds the scheduler's latency to every call.
/// Older kernels refuse the flag; the notifications then work as before.
fn sync_wake_up(listener: &OwnedFd) {
    const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
    let flags: u64 = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
    // SAFETY: SET_FLAGS reads one u64 by value from the argument.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            flags,
        )
    };
}

enum Answer {
    Continue,
    Success,
    /// Success with this return value (bytes or messages sent).
    Value(i64),
    Error(i32),
}

fn answer(fd: &OwnedFd, id: u64, a: Answer) {
    let mut resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: 0,
        flags: 0,
    };
    match a {
        Answer::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        Answer::Success => {}
        Answer::Value(v) => resp.val = v,
        Answer::Error(errno) => resp.error = -errno,
    }
    // SAFETY: SEND reads the response; ENOENT (caller gone) needs no handling.
    unsafe { libc::ioctl(fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
}

/// Answer a call the supervisor made with what it came to.
/// Record a refusal made at the call itself (see `perform::Outcome::Refused`), naming the path the
/// call would have made (a rename's destination).
fn record_refused(log: &DenialLog, job: &perform::Job, outcome: &perform::Outcome, pid: u32) {
    let perform::Outcome::Refused { rule, .. } = outcome else {
        return;
    };
    let (op, detail) = match job.act {
        perform::Act::Rename { .. } => ("rename", "rename"),
        _ => ("write", "write"),
    };
    let path = job.targets.iter().rev().find_map(|t| match t {
        perform::Target::Path(p) => Some(p.display().to_string()),
        _ => None,
    });
    log.record(denial(op, path, detail.into(), rule.clone(), pid));
}

fn reply_with(listener: &OwnedFd, id: u64, outcome: perform::Outcome) {
    match outcome {
        perform::Outcome::Value(v) => answer(listener, id, Answer::Value(v)),
        perform::Outcome::Error(errno) => answer(listener, id, Answer::Error(errno)),
        perform::Outcome::File { file, cloexec } => {
            match perform::send_file(listener, id, &file, cloexec) {
                Ok(None) => {}
                Ok(Some(number)) => answer(listener, id, Answer::Value(i64::from(number))),
                // ENOENT: the caller is gone. Else the fd could not be given (EMFILE): the
                // call's error, as the kernel's open would have given it.
                Err(errno) => answer(listener, id, Answer::Error(errno)),
            }
        }
        perform::Outcome::Blocks => answer(listener, id, Answer::Error(libc::EAGAIN)),
        // Recorded where the job is known (`record_refused`).
        perform::Outcome::Refused { errno, .. } => answer(listener, id, Answer::Error(errno)),
    }
}

/// The refusal when the supervisor may not take the caller's socket: the kernel's ptrace rules (Yama)
/// keep it from the caller's fds.
fn ptrace_denial(op: &str, path: Option<String>, detail: String, pid: u32) -> Denial {
    denial(
        op,
        path,
        detail,
        "the supervisor may not take this process's socket (ptrace restrictions)".into(),
        pid,
    )
}

/// Connect the caller's socket `socket` as decided, from the supervisor (see `unix_connect`). A TCP
/// connection (to the proxy: nowhere else is allowed) is noted in `clients` before the caller hears
/// the answer, so the proxy can name the process in what it refuses.
fn connect_for(
    notif: &OwnedFd,
    req: &libc::seccomp_notif,
    socket: i32,
    to: &ConnectTo,
    log: &DenialLog,
    clients: Option<&super::proxy::Clients>,
) -> Result<(), i32> {
    let taken = match unix_connect::take_socket(req.pid, socket, || id_valid(notif, req.id)) {
        Ok(s) => s,
        Err(libc::EPERM) => {
            let path = match to {
                ConnectTo::Path(p) => Some(p.display().to_string()),
                ConnectTo::AsGiven(_) => None,
            };
            let detail = "connect(AF_UNIX)".into();
            log.record(ptrace_denial("connect", path, detail, req.pid));
            return Err(libc::EPERM);
        }
        Err(e) => return Err(e),
    };
    let result = match to {
        ConnectTo::Path(path) => {
            let root = unix_connect::open_root(req.pid, || id_valid(notif, req.id))?;
            unix_connect::connect_path(&taken, &root, path)
        }
        ConnectTo::AsGiven(addr) => unix_connect::connect_as_given(&taken, addr),
    };
    // A non-blocking socket's connect is under way (its port is already its own).
    if let (Ok(()) | Err(libc::EINPROGRESS), Some(clients)) = (result, clients) {
        if let Some(port) = inet_port(&taken) {
            clients.note(port, req.pid);
        }
    }
    result
}

/// The local port of an IP socket (`None` for any other).
fn inet_port(socket: &OwnedFd) -> Option<u16> {
    let mut storage = [0u8; std::mem::size_of::<libc::sockaddr_storage>()];
    let mut len = storage.len() as libc::socklen_t;
    // SAFETY: getsockname writes at most `len` bytes into `storage` and the length it wrote to `len`.
    let rc =
        unsafe { libc::getsockname(socket.as_raw_fd(), storage.as_mut_ptr().cast(), &mut len) };
    (rc == 0)
        .then(|| inet_address(&storage[..(len as usize).min(storage.len())]))
        .flatten()
        .map(|a| a.port())
}

/// Make a send as decided, from the supervisor (see `unix_send`), and answer it; a `SIGPIPE` the
/// kernel would have sent follows the answer, so the caller sees it after its call returns.
fn send_for(notif: &OwnedFd, req: &libc::seccomp_notif, job: SendJob, log: &DenialLog) {
    let still_waiting = || id_valid(notif, req.id);
    let taken = unix_send::Caller::open(req.pid, still_waiting)
        .and_then(|c| c.take(job.fd).map(|s| (c, s)));
    let (caller, socket) = match taken {
        Ok(t) => t,
        Err(e) => {
            if e == libc::EPERM {
                let detail = format!("{}(AF_UNIX)", job.call);
                log.record(ptrace_denial("send", None, detail, req.pid));
            }
            return answer(notif, req.id, Answer::Error(e));
        }
    };
    let mut sent = 0usize;
    let mut last = 0usize;
    for (i, (msg, to)) in job.messages.iter().enumerate() {
        let r = unix_send::send(&caller, &socket, msg, to, job.flags, &still_waiting);
        match r.result {
            Ok(n) => {
                if let Some(v) = job.msgvec {
                    let at = unix_send::sent_length_at(v, i);
                    caller_memory::write(req.pid, at, &(n as u32).to_ne_bytes());
                }
                sent += 1;
                last = n;
            }
            Err(e) => {
                // `sendmmsg` answers how many went before the one that failed, if any did.
                let reply = match sent {
                    0 => Answer::Error(e),
                    n => Answer::Value(n as i64),
                };
                answer(notif, req.id, reply);
                return deliver_sigpipe(&caller, r.sigpipe);
            }
        }
    }
    if let Some(d) = job.refused_next {
        log.record(d);
    }
    let value = if job.msgvec.is_some() { sent } else { last };
    answer(notif, req.id, Answer::Value(value as i64));
}

fn deliver_sigpipe(caller: &unix_send::Caller, sigpipe: bool) {
    if let (true, Some(tgid)) = (sigpipe, caller.tgid()) {
        // SAFETY: tgkill of the calling thread, named by its thread group too (so a reused tid
        // elsewhere is not hit).
        unsafe { libc::syscall(libc::SYS_tgkill, tgid, caller.tid, libc::SIGPIPE) };
    }
}

/// A destination address as judged with the network off, for `connect` and the sends alike.
enum Judged {
    /// A Unix socket file the policy allows: absolute, links resolved.
    Path(PathBuf),
    /// `AF_UNSPEC` (a `connect` with it dissolves a datagram association).
    Unspecified,
    /// Too short or too long for its family: the kernel fails it.
    Malformed,
}

/// Judge the address `addr` that call `call` (an `op` in reports) of process `pid` names: only Unix
/// socket files under the writable roots or in `unixSockets`; other families are the network.
fn judge_address(
    pid: u32,
    op: &str,
    call: &str,
    addr: &[u8],
    policy: &FsPolicy,
) -> Result<Judged, Verdict> {
    match unix_connect::family(addr) {
        None => return Ok(Judged::Malformed),
        Some(f) if f == libc::AF_UNSPEC as u16 => return Ok(Judged::Unspecified),
        Some(f) if f != libc::AF_UNIX as u16 => {
            return Err(Verdict::Deny(
                libc::EACCES,
                denial(
                    "network",
                    None,
                    format!("{call}({})", family_name(f.into())),
                    "network is off".into(),
                    pid,
                ),
            ))
        }
        Some(_) => {}
    }
    let raw = match unix_connect::parse(addr) {
        unix_connect::Address::Other => return Ok(Judged::Malformed),
        unix_connect::Address::Abstract(name) => {
            return Err(Verdict::Deny(
                libc::EPERM,
                denial(
                    op,
                    None,
                    format!("{call}(AF_UNIX @{})", String::from_utf8_lossy(&name)),
                    "network is off (abstract Unix sockets included)".into(),
                    pid,
                ),
            ))
        }
        unix_connect::Address::Path(raw) => raw,
    };
    let Some(path) = resolve(pid, AT_FDCWD, &raw, true) else {
        return Err(Verdict::Fail(libc::ENOENT));
    };
    if std::fs::symlink_metadata(in_view(pid, &path)).is_err() {
        // Nothing there to reach in the caller's view (a hidden directory's socket is not there
        // either): the kernel's answer, and nothing to report.
        return Err(Verdict::Fail(libc::ENOENT));
    }
    match policy.check_connect(&path) {
        Ok(()) => Ok(Judged::Path(path)),
        Err(rule) => Err(Verdict::Deny(
            libc::EACCES,
            denial(
                op,
                Some(path.display().to_string()),
                format!("{call}(AF_UNIX)"),
                rule.describe(),
                pid,
            ),
        )),
    }
}

/// The socket address a `connect` or `bind` of process `pid` names (`len` bytes at `at`), or the
/// kernel's answer to one no Unix socket can have (too long) or that cannot be read.
fn socket_address(pid: u32, at: u64, len: u64) -> Result<Vec<u8>, Verdict> {
    let len = len as usize;
    if len > unix_connect::MAX_ADDRESS {
        return Err(Verdict::Fail(libc::EINVAL));
    }
    caller_memory::read_exact(pid, at, len).map_err(|_| Verdict::Fail(libc::EFAULT))
}

/// A `connect` with the network off: only Unix sockets exist, and only some may be reached. With the
/// network by domain, TCP reaches the sandbox's proxy and nothing else: the supervisor makes that
/// connect itself, with its own copy of the proxy's address (the caller's may change after the check).
fn decide_connect(
    req: &libc::seccomp_notif,
    policy: &FsPolicy,
    proxy: Option<std::net::SocketAddr>,
) -> Verdict {
    let (pid, a) = (req.pid, req.data.args);
    let socket = a[0] as i32;
    let addr = match socket_address(pid, a[1], a[2]) {
        Ok(addr) => addr,
        Err(v) => return v,
    };
    match to_proxy(pid, "connect", &addr, proxy) {
        Some(Ok(p)) => {
            return Verdict::Connect {
                fd: socket,
                to: ConnectTo::AsGiven(sockaddr_bytes(p, family_of(&addr))),
            }
        }
        Some(Err(refused)) => return refused,
        None => {}
    }
    let to = match judge_address(pid, "connect", "connect", &addr, policy) {
        Ok(Judged::Path(path)) => ConnectTo::Path(path),
        // Connected as given: the kernel dissolves an association or fails the address.
        Ok(Judged::Unspecified | Judged::Malformed) => ConnectTo::AsGiven(addr),
        Err(v) => return v,
    };
    Verdict::Connect { fd: socket, to }
}

/// With the network by domain (`proxy` set), where an IP address `addr` of `call` may go: the proxy
/// (its own address, as the supervisor connects to it), or a refusal that names the address. `None`
/// when there is no proxy or `addr` is not IP.
fn to_proxy(
    pid: u32,
    call: &str,
    addr: &[u8],
    proxy: Option<std::net::SocketAddr>,
) -> Option<Result<std::net::SocketAddr, Verdict>> {
    let (p, ip) = (proxy?, inet_address(addr)?);
    if ip.port() == p.port() && ip.ip().to_canonical() == p.ip() {
        return Some(Ok(p));
    }
    Some(Err(Verdict::Deny(
        libc::EACCES,
        denial(
            "network",
            Some(ip.to_string()),
            format!("{call}({})", family_name(family_of(addr))),
            "a direct connection around the sandbox's proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name it)".into(),
            pid,
        ),
    )))
}

/// Where one message of a send may go, or the answer that refuses it.
fn judge_message(
    pid: u32,
    call: &str,
    msg: &Message,
    policy: &FsPolicy,
    proxy: Option<std::net::SocketAddr>,
) -> Result<To, Verdict> {
    let Some(addr) = &msg.name else {
        return Ok(To::Peer);
    };
    // With the network by domain only TCP sockets exist, and an address on a TCP send is a
    // fast-open connect: to the proxy it is sent without the address, elsewhere refused.
    if let Some(to) = to_proxy(pid, call, addr, proxy) {
        return to.map(|_| To::Peer);
    }
    match judge_address(pid, "send", call, addr, policy)? {
        Judged::Path(path) => Ok(To::Path(path)),
        // A send names a peer; AF_UNSPEC names none (and on an IP socket would mean AF_INET).
        Judged::Unspecified => Err(Verdict::Deny(
            libc::EACCES,
            denial(
                "network",
                None,
                format!("{call}(AF_UNSPEC)"),
                "network is off".into(),
                pid,
            ),
        )),
        Judged::Malformed => Err(Verdict::Fail(libc::EINVAL)),
    }
}

/// A `sendto` that names an address (the filter lets the others through), or any `sendmsg` or
/// `sendmmsg`, with the network off: each message's destination is judged as `connect` judges one,
/// and the supervisor makes the sends it allows (see `unix_send` for why it must). With the network by
/// domain an IP destination (a TCP fast-open) may only be the proxy, and is sent without it.
fn decide_send(
    req: &libc::seccomp_notif,
    policy: &FsPolicy,
    proxy: Option<std::net::SocketAddr>,
) -> Verdict {
    let (pid, a) = (req.pid, req.data.args);
    let nr = req.data.nr as libc::c_long;
    let (call, read, flags, msgvec) = match nr {
        libc::SYS_sendto => (
            "sendto",
            unix_send::read_sendto(pid, &a).map(|m| vec![Ok(m)]),
            a[3],
            None,
        ),
        libc::SYS_sendmsg => (
            "sendmsg",
            unix_send::read_sendmsg(pid, a[1]).map(|m| vec![Ok(m)]),
            a[2],
            None,
        ),
        _ => (
            "sendmmsg",
            unix_send::read_sendmmsg(pid, a[1], a[2]),
            a[3],
            Some(a[1]),
        ),
    };
    let read = match read {
        Ok(r) => r,
        Err(e) => return Verdict::Fail(e),
    };
    let mut messages = Vec::new();
    let mut refused_next = None;
    for m in read {
        let judged = m.map_err(Verdict::Fail).and_then(|m| {
            let to = judge_message(pid, call, &m, policy, proxy)?;
            Ok((m, to))
        });
        match judged {
            Ok(ok) => messages.push(ok),
            // The first message refused: the call fails as a whole.
            Err(v) if messages.is_empty() => return v,
            // A later one: those before it are sent, and the call answers how many.
            Err(v) => {
                if let Verdict::Deny(_, d) = v {
                    refused_next = Some(d);
                }
                break;
            }
        }
    }
    Verdict::Send(Box::new(SendJob {
        call,
        fd: a[0] as i32,
        flags: flags as i32,
        messages,
        refused_next,
        msgvec,
    }))
}

/// The notification fd's state now (a `poll` with no wait): `POLLIN` while a notification waits
/// (checked before RECV, which would otherwise block), `POLLHUP` once every process using the filter
/// is gone.
fn state_now(fd: &OwnedFd) -> libc::c_short {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll on one fd, no wait.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    if n > 0 {
        p.revents
    } else {
        0
    }
}

/// Is the notification still for a live call (so the pid we read from was the caller's)?
fn id_valid(fd: &OwnedFd, id: u64) -> bool {
    let mut id = id;
    // SAFETY: ID_VALID reads a u64.
    unsafe { libc::ioctl(fd.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id) == 0 }
}

/// The address family of a `sockaddr` (0 when too short).
fn family_of(addr: &[u8]) -> u64 {
    unix_connect::family(addr).map_or(0, u64::from)
}

/// An IPv4 or IPv6 `sockaddr` as an address and port.
fn inet_address(addr: &[u8]) -> Option<std::net::SocketAddr> {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
    match unix_connect::family(addr)? as i32 {
        libc::AF_INET if addr.len() >= 8 => {
            let port = u16::from_be_bytes([addr[2], addr[3]]);
            let ip = Ipv4Addr::new(addr[4], addr[5], addr[6], addr[7]);
            Some(SocketAddr::from((ip, port)))
        }
        libc::AF_INET6 if addr.len() >= 24 => {
            let port = u16::from_be_bytes([addr[2], addr[3]]);
            let mut o = [0u8; 16];
            o.copy_from_slice(&addr[8..24]);
            Some(SocketAddr::from((Ipv6Addr::from(o), port)))
        }
        _ => None,
    }
}

/// The proxy's address `addr` as a `sockaddr` of the caller's `family`: an IPv6 socket (a dual-stack
/// client's: Java makes them by default) reaches the IPv4 proxy by its v4-mapped form, and an IPv4
/// `sockaddr` on it would be EINVAL.
fn sockaddr_bytes(addr: std::net::SocketAddr, family: u64) -> Vec<u8> {
    let v4 = match addr.ip() {
        std::net::IpAddr::V4(v4) => v4,
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED),
    };
    if family == libc::AF_INET6 as u64 {
        let mut out = vec![0u8; std::mem::size_of::<libc::sockaddr_in6>()];
        out[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        out[2..4].copy_from_slice(&addr.port().to_be_bytes());
        out[8..24].copy_from_slice(&v4.to_ipv6_mapped().octets());
        return out;
    }
    let mut out = vec![0u8; std::mem::size_of::<libc::sockaddr_in>()];
    out[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
    out[2..4].copy_from_slice(&addr.port().to_be_bytes());
    out[4..8].copy_from_slice(&v4.octets());
    out
}

fn family_name(family: u64) -> String {
    match family as i32 {
        libc::AF_UNSPEC => "AF_UNSPEC".into(),
        libc::AF_INET => "AF_INET".into(),
        libc::AF_INET6 => "AF_INET6".into(),
        libc::AF_NETLINK => "AF_NETLINK".into(),
        libc::AF_PACKET => "AF_PACKET".into(),
        libc::AF_VSOCK => "AF_VSOCK".into(),
        libc::AF_BLUETOOTH => "AF_BLUETOOTH".into(),
        other => format!("family {other}"),
    }
}

/// `root`: the caller's root, where the run's is open already (else each lookup opens it).
fn decide(
    req: &libc::seccomp_notif,
    policy: &FsPolicy,
    network: bool,
    proxy: Option<std::net::SocketAddr>,
    root: Option<&OwnedFd>,
) -> Verdict {
    let nr = req.data.nr as libc::c_long;
    let a = req.data.args;
    let pid = req.pid;
    let modes = |at: u64| {
        let b = caller_memory::read_exact(pid, at, 4).ok()?;
        Some(u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    };
    if let Some((detail, why)) = super::refused::judge(nr, &a, modes) {
        let rule = why.describe().to_string();
        return Verdict::Deny(libc::EPERM, denial("syscall", None, detail, rule, pid));
    }
    let is_caller =
        |who: u32| who == pid || super::unix_connect::thread_group(pid).is_some_and(|g| g == who);
    if let Some((detail, why)) = super::refused::judge_other_process(nr, &a, is_caller) {
        let rule = why.describe().to_string();
        return Verdict::Deny(libc::EPERM, denial("syscall", None, detail, rule, pid));
    }
    // `openat2`'s `open_how`, read once: its flags, mode and resolve flags are judged and used from
    // this copy only (the caller's other threads can rewrite the struct meanwhile).
    let how = if nr == libc::SYS_openat2 {
        match read_open_how(pid, a[2], a[3]) {
            Ok(how) => Some(how),
            Err(errno) => return Verdict::Fail(errno),
        }
    } else {
        None
    };
    match nr {
        // Network by domain: TCP sockets, which can reach the proxy and nothing else (below).
        libc::SYS_socket
            if !network
                && proxy.is_some()
                && matches!(a[0] as i32, libc::AF_INET | libc::AF_INET6)
                && (a[1] as i32 & 0xf) == libc::SOCK_STREAM =>
        {
            return Verdict::Continue
        }
        libc::SYS_socket if !network => {
            return Verdict::Deny(
                libc::EACCES,
                denial(
                    "network",
                    None,
                    format!("socket({})", family_name(a[0])),
                    if proxy.is_some() {
                        "only TCP connections through the sandbox's proxy (no UDP, raw or other sockets)".into()
                    } else {
                        "network is off".into()
                    },
                    pid,
                ),
            )
        }
        libc::SYS_connect if !network => return decide_connect(req, policy, proxy),
        libc::SYS_bind if !network => return decide_bind(req, policy, proxy.is_some()),
        libc::SYS_flock | libc::SYS_fcntl => return decide_lock(req, policy),
        libc::SYS_sendto | libc::SYS_sendmsg | libc::SYS_sendmmsg if !network => {
            return decide_send(req, policy, proxy)
        }
        libc::SYS_openat2 => {
            let Some(how) = how else {
                unreachable!("read above for every openat2")
            };
            if !is_write_open(how.flags) {
                // Not let through (the kernel would read `open_how` again, which another thread may
                // have made an open for writing by then), and not made here either: the supervisor is
                // not under the run's Landlock rules or its `/proc`'s `hidepid`, so an open made for
                // the caller read credentials the run may not read and the agent's own `/proc/1`
                // (its environment and memory). Programs fall back to `openat` on ENOSYS, as on
                // kernels before 5.6; the kernel decides those.
                return Verdict::Fail(libc::ENOSYS);
            }
            // RESOLVE_IN_ROOT makes the dirfd the root the path and its links resolve in, which the
            // supervisor's walk does not model. The other resolve flags only restrict the lookup.
            if how.resolve & libc::RESOLVE_IN_ROOT != 0 {
                return Verdict::Deny(
                    libc::EPERM,
                    denial(
                        "write",
                        None,
                        format!("openat2({}, RESOLVE_IN_ROOT)", open_flags_text(how.flags)),
                        "a write open resolved inside a root of the caller's choosing is not judged (RESOLVE_IN_ROOT)".into(),
                        pid,
                    ),
                );
            }
        }
        _ => {}
    }
    // A file call: judged by its paths, then made by the supervisor itself (see `perform`), since the
    // kernel would read its paths and arguments again, after another thread could rewrite them.
    let FileCall {
        op,
        detail,
        paths,
        act,
        as_named,
    } = match file_call(nr, &a, pid, how) {
        Ok(Some(call)) => call,
        Ok(None) => return Verdict::Continue,
        Err(errno) => return Verdict::Fail(errno),
    };
    let mut act = act;
    let mut targets: Vec<perform::Target> = Vec::new();
    // Calls that can make a file named `.git` (a `gitdir:` pointer, or a repository moved into place):
    // the arguments that name what is made. A `mkdir` of one (git init, git clone) is not among them.
    // A `renameat2` that exchanges the two names, or leaves a whiteout, makes both.
    let swaps = nr == libc::SYS_renameat2
        && a[4] & u64::from(libc::RENAME_EXCHANGE | libc::RENAME_WHITEOUT) != 0;
    let makes_entry: &[usize] = match op {
        "write" | "symlink" | "link" | "mknod" => &[0],
        "rename" if swaps => &[0, 1],
        "rename" => &[1],
        _ => &[],
    };
    // A mode with set-user-ID or set-group-ID bits that this call gives a file (see `set_id_mode`).
    let set_id = set_id_mode(nr, &a, how);
    // The first path judged (a rename's source, when its destination is judged).
    let mut resolved: Option<PathBuf> = None;
    // A rename or link that makes a name inside a host's git directory, and one that puts an
    // index in place there (see `perform::Job`).
    let mut regular_only = false;
    let mut index_in_place = false;
    // Directories of the host's the call removes or moves away (see `host_repos::note_vacated`).
    let mut vacating: Vec<PathBuf> = Vec::new();
    for (i, arg) in paths.into_iter().enumerate() {
        let raw = if arg.addr == 0 {
            Vec::new()
        } else {
            // Memory the supervisor cannot read is memory the kernel cannot either (or a path over
            // PATH_MAX): the call fails, and nothing unjudged goes through.
            match caller_memory::read_path_or_errno(pid, arg.addr) {
                Ok(raw) => raw,
                Err(errno) => return Verdict::Fail(errno),
            }
        };
        // `open("name/", ...)`: the kernel wants a directory there (and creates none).
        if i == 0 && raw.last() == Some(&b'/') {
            if let perform::Act::Open { dir_only, .. } = &mut act {
                *dir_only = true;
            }
        }
        let mut proc_link: ProcLink = None;
        let trusted = &policy.writable_roots;
        let by_fd = raw.is_empty() && arg.empty_is_fd;
        let resolution = if by_fd {
            // The caller's file as its link reads now: judged, and the call made on that file
            // only (the caller may put another file at the number meanwhile).
            match fd_link_text(pid, arg.dirfd) {
                Ok(seen) => {
                    let resolution = resolve_fd_text(pid, &seen, trusted);
                    let fd = arg.dirfd as i32;
                    targets.push(perform::Target::Fd { fd, seen });
                    resolution
                }
                Err(errno) => Err(errno),
            }
        } else {
            let link = &mut proc_link;
            resolve_noting(pid, root, arg.dirfd, &raw, arg.follow, trusted, link)
        };
        if let Some((link, seen)) = proc_link.clone() {
            targets.push(perform::Target::ProcLink { link, seen });
        }
        let path = match resolution {
            Ok(Some(path)) => path,
            // A pipe or socket reopened through `/proc/<pid>/fd`: no name is made or changed.
            Ok(None) => continue,
            // Where the write would land cannot be said: refused with the error the kernel would
            // give in the caller's view (fail closed; nothing to record, nothing was judged).
            Err(errno) => return Verdict::Fail(errno),
        };
        let seen = in_view(pid, &path);
        // A mount point of the run's view is not the run's to move or remove: the supervisor's
        // thread is in the host's namespace, where the kernel would let the rename through and
        // detach the run's mount (a hidden file then lies at a name nothing hides).
        if (op == "remove" || (op == "rename" && i <= 1)) && perform::is_mount_point(&seen) {
            return Verdict::Deny(
                libc::EBUSY,
                denial(
                    op,
                    Some(path.display().to_string()),
                    detail,
                    MOUNT_POINT_RULE.into(),
                    pid,
                ),
            );
        }
        // A set-user-ID or set-group-ID file of the run's would run with its owner's identity for
        // whoever runs it later (root's, when the run is root's); a set-group-ID directory only
        // passes its group on, and stays allowed.
        if let Some(mode) = set_id.filter(|_| i == 0) {
            let file = op != "chmod" || std::fs::metadata(&seen).is_ok_and(|m| !m.is_dir());
            if file {
                return Verdict::Deny(
                    libc::EPERM,
                    denial(
                        op,
                        Some(path.display().to_string()),
                        format!("{detail} mode {mode:o}"),
                        "no set-user-ID or set-group-ID files in the sandbox".into(),
                        pid,
                    ),
                );
            }
        }
        if op == "mkdir" && std::fs::symlink_metadata(&seen).is_ok() {
            // The kernel's answer (`mkdir -p` of a directory that is there): nothing was refused.
            return Verdict::Fail(libc::EEXIST);
        }
        // (A plain rename onto an existing directory needs a directory: it stays one.)
        if makes_entry.contains(&i)
            && path.file_name() == Some(OsStr::new(".git"))
            && (swaps || !seen.is_dir())
        {
            return Verdict::Deny(
                libc::EPERM,
                denial(
                    op,
                    Some(path.display().to_string()),
                    detail,
                    GIT_FILE_RULE.into(),
                    pid,
                ),
            );
        }
        // An open for writing writes contents (a device's included); every other call changes a
        // name or metadata, which a device's are not the run's to change.
        let checked = if op == "write" {
            policy.check_write(&path)
        } else {
            policy.check_change(&path)
        };
        if let Err(rule) = checked {
            let errno = match (op, &rule) {
                // A link's source outside the roots: the link would give that file the roots'
                // rights (a host file written through its new name). The supervisor makes the link
                // itself, outside the run's Landlock domain, so it answers what Landlock would
                // (`EXDEV`: a link may not give a file rights its own place lacks), as the kernel
                // does across the mounts of a mount namespace; pnpm and `cp -al` then copy.
                ("link", DenyRule::OutsideWritableRoots | DenyRule::SocketOutside) if i == 1 => {
                    libc::EXDEV
                }
                _ if changes_metadata(op) => libc::EPERM,
                (_, DenyRule::Protected(_)) => libc::EROFS,
                (_, DenyRule::OutsideWritableRoots | DenyRule::SocketOutside) => libc::EACCES,
            };
            return Verdict::Deny(
                errno,
                denial(
                    op,
                    Some(path.display().to_string()),
                    detail,
                    rule.describe(),
                    pid,
                ),
            );
        }
        if op == "write"
            && !policy.own_devpts
            && super::policy::is_pty_multiplexer(&path)
            && super::policy::host_pty_pool_is_low()
        {
            // ENOSPC: what the kernel answers when the pool is empty.
            return Verdict::Deny(
                libc::ENOSPC,
                denial(
                    op,
                    Some(path.display().to_string()),
                    detail,
                    "the machine's pty pool is down to the part kept for the host (kernel.pty.reserve; the run has no devpts of its own)".into(),
                    pid,
                ),
            );
        }
        // A file, link or node made where a protected path's parent should be, or a directory moved
        // there: the protected path would then be reached through it, somewhere nothing protects.
        // (An existing directory is not replaced by a file, link or node: `O_TMPFILE` names one.)
        // The path comparison first: the `statx` through the caller's root is then made only for
        // a name on the way to a protected path, not for every creation (issue 36: it was a tenth
        // of the supervisor's time per created file).
        let replaces_dir =
            || op == "rename" || !std::fs::symlink_metadata(&seen).is_ok_and(|m| m.is_dir());
        if makes_entry.contains(&i) {
            if let Some(protected) = policy
                .on_the_way_to_protected(&path)
                .filter(|_| replaces_dir())
            {
                let (errno, copy) = if op == "rename" {
                    (libc::EXDEV, " (a directory moved there is copied instead)")
                } else {
                    (libc::EPERM, "")
                };
                return Verdict::Deny(
                    errno,
                    denial(
                        op,
                        Some(path.display().to_string()),
                        detail,
                        format!(
                            "a directory on the way to the protected path {} is not replaced{copy}",
                            protected.display()
                        ),
                        pid,
                    ),
                );
            }
        }
        let makes_git = (op == "mkdir" || makes_entry.contains(&i))
            && path.file_name() == Some(OsStr::new(".git"));
        let seen = |p: &Path| in_view(pid, p);
        let own_tmp = policy.own_tmp.as_deref();
        // The writable root the path lies in: once for the checks below that look up to it.
        let root = outermost_containing(&policy.writable_roots, &path);
        let host_repo = super::host_repos::refusal(op, &path, makes_git, own_tmp, seen)
            .or_else(|| {
                // A tool's config (`rust-toolchain.toml`, `.cargo/`, `.npmrc`...) in a directory
                // of the host's, at any depth.
                super::host_repos::tool_config_in_hosts_dir(&path, policy.home.as_deref(), seen)
            })
            .or_else(|| {
                // An editor's, agent's or hook manager's config at the top of a work tree of the
                // host's below a root's top (a root above the projects).
                let root = root?;
                let on_the_way = makes_entry.contains(&i) && op != "mkdir";
                super::host_repos::project_config_in_work_tree(&path, root, on_the_way, seen)
            })
            .map(|rule| {
                let errno = if changes_metadata(op) {
                    libc::EPERM
                } else {
                    libc::EROFS
                };
                (errno, rule)
            })
            .or_else(|| {
                // A host git directory's core entries taken away (removed, or renamed from).
                let away = op == "remove" || (op == "rename" && (i == 0 || swaps));
                let core = |p: &Path| super::host_repos::core_taken_away(p, |q| in_view(pid, q));
                away.then(|| core(&path))
                    .flatten()
                    .map(|rule| (libc::EROFS, rule))
            })
            .or_else(|| {
                // A bare repository's HEAD made inside a host work tree.
                let makes = makes_entry.contains(&i);
                let head = |p: &Path| {
                    super::host_repos::head_outside_git_dirs(p, own_tmp, |q| in_view(pid, q))
                };
                makes
                    .then(|| head(&path))
                    .flatten()
                    .map(|rule| (libc::EPERM, rule))
            })
            .or_else(|| {
                // A link, node, or a directory or special file moved in, inside a host's git
                // directory (see `host_repos::special_in_hosts_git_dir`).
                let from = resolved.as_deref();
                let made = made_in_hosts_git_dir(op, i, &path, from, swaps, root, pid);
                regular_only |= made.inside;
                index_in_place |= made.index;
                made.rule.map(|rule| (libc::EPERM, rule))
            })
            .or_else(|| {
                // The host's index written other than through its lock file (where the supervisor
                // reads it, see `git_index`).
                index_written_in_place(op, i, &path, root, pid).map(|rule| (libc::EPERM, rule))
            })
            .or_else(|| {
                // A directory a rename moves, judged by what is below it and where that would
                // land (either way, for an exchange): at the new name, the source resolved.
                let from = resolved.as_ref().filter(|_| op == "rename" && i == 1)?;
                moved_tree_refusal(from, &path, policy, pid)
                    .or_else(|| swaps.then(|| moved_tree_refusal(&path, from, policy, pid))?)
                    .map(|rule| (libc::EXDEV, rule))
            })
            .or_else(|| {
                // The directory a rename moves (either way, for an exchange) into a host work tree,
                // or, one of the host's, under one a run made: EXDEV, so `mv` copies it instead
                // (and the copy's `.git`, if any, is judged; the copy is the run's).
                let from = resolved.as_ref().filter(|_| op == "rename" && i == 1)?;
                let moved = |from: &Path, to: &Path| {
                    let seen = |p: &Path| in_view(pid, p);
                    super::host_repos::moved_in(from, to, seen)
                        .or_else(|| super::host_repos::host_dir_under_runs(from, to, seen))
                };
                moved(from, &path)
                    .or_else(|| swaps.then(|| moved(&path, from)).flatten())
                    .map(|rule| (libc::EXDEV, rule))
            });
        if let Some((errno, rule)) = host_repo {
            return Verdict::Deny(
                errno,
                denial(op, Some(path.display().to_string()), detail, rule, pid),
            );
        }
        // (A rename's destination that is a directory is replaced, or exchanged.)
        let takes_away = op == "remove" || op == "rename";
        if takes_away
            && std::fs::symlink_metadata(in_view(pid, &path)).is_ok_and(|m| m.is_dir())
            && super::host_repos::hosts_dir(&path, own_tmp, &|p: &Path| in_view(pid, p))
        {
            vacating.push(path.clone());
        }
        if proc_link.is_none() && !by_fd {
            targets.push(perform::Target::Path(path.clone()));
        }
        resolved.get_or_insert(path);
    }
    // Noted when the call is judged (made or not): the path is only the more guarded.
    for path in &vacating {
        super::host_repos::note_vacated(path);
    }
    Verdict::Perform(Box::new(perform::Job {
        act,
        targets,
        as_named,
        regular_only,
        index_in_place,
    }))
}

/// What a call makes inside a host's git directory, as `made_in_hosts_git_dir` finds it.
#[derive(Default)]
struct MadeInGitDir {
    /// The name made lies inside one (a rename or link there is made on the regular file checked,
    /// see `perform::Job::regular_only`).
    inside: bool,
    /// It is an index, put in place by a rename (see `perform::Job::index_in_place`).
    index: bool,
    /// The rule it breaks.
    rule: Option<String>,
}

/// What the name `op` makes inside a host's git directory is, and the rule it breaks if it puts
/// there what git itself never makes: a link or node (`symlink`, `mknod`: judged at the name made,
/// `i == 0`), or, judged at a call's second path (`i == 1`, when both are resolved), a link to what
/// is no regular file (`linkat` of a symlink makes another), a rename of what is no regular file (a
/// directory could hold links), either way for an exchange, or an index linked into place (git
/// renames its lock file there; a link would leave the run another name to write it through).
/// `resolved`: the call's first path; `root`: the writable root the path is in.
fn made_in_hosts_git_dir(
    op: &str,
    i: usize,
    path: &Path,
    resolved: Option<&Path>,
    swaps: bool,
    root: Option<&Path>,
    pid: u32,
) -> MadeInGitDir {
    let seen = |p: &Path| in_view(pid, p);
    let regular = |p: &Path| std::fs::symlink_metadata(seen(p)).is_ok_and(|m| m.is_file());
    let git_dir_of = |made: &Path| super::host_repos::inside_hosts_git_dir(made, root, seen);
    let rule =
        |git_dir: &Path, kind: &str| super::host_repos::special_in_hosts_git_dir(git_dir, kind);
    // (made, what it is made from, if that must be a regular file)
    let made: Vec<(&Path, Option<&Path>)> = match (op, i, resolved) {
        ("symlink" | "mknod", 0, _) => vec![(path, None)],
        ("link", 1, Some(new)) => vec![(new, Some(path))],
        ("rename", 1, Some(from)) if swaps => vec![(path, Some(from)), (from, Some(path))],
        ("rename", 1, Some(from)) => vec![(path, Some(from))],
        _ => return MadeInGitDir::default(),
    };
    let mut found = MadeInGitDir::default();
    for (name, source) in made {
        let Some(git_dir) = git_dir_of(name) else {
            continue;
        };
        found.inside = true;
        let index = super::host_repos::is_index_place(name, &git_dir);
        found.index |= index;
        let kind = match (op, source) {
            ("symlink", _) => "a symbolic link".to_string(),
            ("mknod", _) => "a FIFO, socket or device node".to_string(),
            // (The denial names the link's source: say where it was to be linked.)
            ("link", Some(source)) if !regular(source) => {
                format!("a link to what is no regular file, as {},", name.display())
            }
            ("link", _) if index => format!("an index linked into place, as {},", name.display()),
            (_, Some(source)) if !regular(source) => "a directory or special file moved in".into(),
            _ => continue,
        };
        found.rule = Some(rule(&git_dir, &kind));
        return found;
    }
    found
}

/// Why a call may not write the index of a host's git directory in place (an open for writing, a
/// truncation) or link it elsewhere (to be written through the new name), if it is one: git writes
/// its index through `index.lock`, renamed into place, which is where the supervisor reads and
/// checks it (`git_index`). A split index's `sharedindex.*` likewise (it is refused in place too).
fn index_written_in_place(
    op: &str,
    i: usize,
    path: &Path,
    root: Option<&Path>,
    pid: u32,
) -> Option<String> {
    let name = path.file_name()?.as_encoded_bytes();
    let index = name == b"index" || name.starts_with(b"sharedindex.");
    if !index || !matches!((op, i), ("write" | "truncate", 0) | ("link", 1)) {
        return None;
    }
    let seen = |p: &Path| in_view(pid, p);
    let git_dir = super::host_repos::inside_hosts_git_dir(path, root, seen)?;
    if name == b"index" && !super::host_repos::is_index_place(path, &git_dir) {
        return None;
    }
    Some(format!(
        "the index of the host's git directory {} is written through its lock file (renamed into place, where the supervisor reads it), not in place",
        git_dir.display()
    ))
}

/// Entries below a directory a rename moves that the supervisor reads before it gives up (and
/// answers as if one were refused: the directory is copied, not moved).
const MOVED_TREE_BUDGET: usize = 20_000;

/// What is wrong with moving the directory `from` to `to` (both in the caller's view), judged by
/// what lies below it: a protected path there (a `denyWrite` match, a home entry, a host
/// repository's metadata) would be moved away whole, or one would be made at its place under `to`,
/// past the check each write there gets; and a work tree of the host's below it could be put aside
/// for a repository of the run's. Refused with `EXDEV`, so `mv` copies the directory instead and
/// each file of the copy, and each removal of the original, is judged on its own. A directory too
/// large to look through, or with a part the supervisor cannot read, is treated the same (fail
/// closed; the copy still works).
fn moved_tree_refusal(from: &Path, to: &Path, policy: &FsPolicy, pid: u32) -> Option<String> {
    let seen = |p: &Path| in_view(pid, p);
    if !std::fs::symlink_metadata(seen(from)).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    // Moved to where the host's directory was (see `host_repos::note_vacated`): no repository
    // with it, at any depth.
    let replaces_hosts = std::fs::symlink_metadata(seen(to)).is_ok_and(|m| m.is_dir())
        && super::host_repos::hosts_dir(to, policy.own_tmp.as_deref(), &seen);
    let into_vacated = replaces_hosts || super::host_repos::vacated_at_or_above(to).is_some();
    let moved_repository = |holds: bool| super::host_repos::repository_moved_to_vacated(to, holds);
    if into_vacated {
        if let Some(rule) = moved_repository(super::host_repos::is_git_dir_at(&seen(from))) {
            return Some(rule);
        }
    }
    if super::host_repos::is_hosts_git_dir(from, seen) {
        return Some(format!(
            "the host's git directory {} is copied, not moved (a repository of the command's could take its place)",
            from.display()
        ));
    }
    let mut pending = vec![from.to_path_buf()];
    let mut read = 0usize;
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(seen(&at)) else {
            return Some(format!(
                "a directory with a part that could not be looked through ({}) is copied, not moved",
                at.display()
            ));
        };
        for entry in entries.flatten() {
            read += 1;
            if read > MOVED_TREE_BUDGET {
                return Some(format!(
                    "a directory of more than {MOVED_TREE_BUDGET} entries is copied, not moved (it was not looked through)"
                ));
            }
            let below = at.join(entry.file_name());
            // A hidden file (an empty file mounted over it) or another mount of the run's view:
            // the mount would move with the directory in this run, but the next run hides names,
            // and the new one is not among them.
            if perform::is_mount_point(&seen(&below)) {
                return Some(format!(
                    "a directory holding a mount point of the run's view ({}: a hidden or read-only path) is copied, not moved",
                    below.display()
                ));
            }
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && super::host_repos::is_hosts_git_dir(&below, seen) {
                return Some(format!(
                    "a directory holding the host's git directory {} is copied, not moved",
                    below.display()
                ));
            }
            if into_vacated {
                let repository = entry.file_name() == ".git"
                    || (is_dir && super::host_repos::is_git_dir_at(&seen(&below)));
                if let Some(rule) = moved_repository(repository) {
                    return Some(rule);
                }
            }
            if entry.file_name() == ".git" && super::host_repos::hosts(&below, &seen) {
                return Some(format!(
                    "a directory holding the host's work tree {} is copied, not moved (a repository of the command's could take its place)",
                    at.display()
                ));
            }
            let landing = to.join(below.strip_prefix(from).unwrap_or(&below));
            for (place, moved) in [(&below, "moved away"), (&landing, "made")] {
                if let Err(rule @ DenyRule::Protected(_)) = policy.check_write(place) {
                    return Some(format!(
                        "a directory whose move would leave a protected path {moved} ({}: {}) is copied, not moved",
                        place.display(),
                        rule.describe()
                    ));
                }
            }
            if is_dir {
                pending.push(below);
            }
        }
    }
    None
}

/// The rule a rename or removal of a mount point of the run's view is refused by.
const MOUNT_POINT_RULE: &str = "a mount point of the run's view (a hidden file or directory, a read-only bind, a root) is not moved or removed";

/// The rule a call that would make a file (or socket) named `.git` is refused by.
const GIT_FILE_RULE: &str = "a .git file would repoint git to a repository of the command's making";

/// Whether the supervisor's operation `op` changes metadata (refused with `EPERM`, as the kernel
/// refuses a mode or owner change) rather than a name or content (`EROFS`, `EACCES`).
fn changes_metadata(op: &str) -> bool {
    matches!(op, "chmod" | "chown" | "utime" | "xattr")
}

/// The mode, when it has set-user-ID or set-group-ID bits, that call `nr` gives a file: `chmod` and
/// its kin, or a creation (`open` with `O_CREAT` or `O_TMPFILE`, `creat`, `mknod`).
fn set_id_mode(nr: libc::c_long, a: &[u64; 6], how: Option<OpenHow>) -> Option<u64> {
    let creates = |flags: u64| {
        // (O_TMPFILE holds O_DIRECTORY's bit: all of it, not any.)
        let tmpfile = libc::O_TMPFILE as u64;
        flags & libc::O_CREAT as u64 != 0 || flags & tmpfile == tmpfile
    };
    let mode = match nr {
        libc::SYS_fchmodat | super::seccomp::SYS_FCHMODAT2 | libc::SYS_mknodat => a[2],
        libc::SYS_fchmod => a[1],
        libc::SYS_openat if creates(a[2]) => a[3],
        libc::SYS_openat2 => {
            let how = how?;
            if !creates(how.flags) {
                return None;
            }
            how.mode
        }
        #[cfg(target_arch = "x86_64")]
        libc::SYS_chmod | libc::SYS_creat | libc::SYS_mknod => a[1],
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open if creates(a[1]) => a[2],
        _ => return None,
    };
    (mode & u64::from(libc::S_ISUID | libc::S_ISGID) != 0).then_some(mode & 0o7777)
}

/// A `bind` with the network off: a socket file is Landlock's to allow (under the roots only); an
/// abstract name is refused, since nothing may connect to one with the network off and, without a
/// network namespace of the run's own, a name it listens on is reachable from outside (or squats a
/// name host clients use: X11, D-Bus).
fn decide_bind(req: &libc::seccomp_notif, policy: &FsPolicy, by_proxy: bool) -> Verdict {
    let (pid, a) = (req.pid, req.data.args);
    let addr = match socket_address(pid, a[1], a[2]) {
        Ok(addr) => addr,
        Err(v) => return v,
    };
    // With the network by domain the run shares the host's network stack: it listens on no IP
    // socket (Landlock refuses TCP binds as well; this names the refusal).
    if let (true, Some(ip)) = (by_proxy, inet_address(&addr)) {
        return Verdict::Deny(
            libc::EACCES,
            denial(
                "bind",
                Some(ip.to_string()),
                format!("bind({})", family_name(family_of(&addr))),
                "the network is by domain: the run listens on no IP socket".into(),
                pid,
            ),
        );
    }
    match unix_connect::parse(&addr) {
        unix_connect::Address::Abstract(name) => Verdict::Deny(
            libc::EPERM,
            denial(
                "bind",
                None,
                format!("bind(AF_UNIX @{})", String::from_utf8_lossy(&name)),
                "network is off (no listening on abstract Unix socket names)".into(),
                pid,
            ),
        ),
        // A socket file is a new entry like any other: not at a protected path, and never `.git`.
        unix_connect::Address::Path(raw) => {
            let path = match resolve_within(pid, AT_FDCWD, &raw, false, &policy.writable_roots) {
                Ok(Some(path)) => path,
                // A name that is an open file's /proc link: taken, as the kernel says of any.
                Ok(None) => return Verdict::Fail(libc::EADDRINUSE),
                Err(errno) => return Verdict::Fail(errno),
            };
            let refused = if path.file_name() == Some(OsStr::new(".git")) {
                Some((libc::EPERM, GIT_FILE_RULE.into()))
            } else {
                policy
                    .check_change(&path)
                    .err()
                    .map(|rule| match rule {
                        DenyRule::Protected(_) => (libc::EROFS, rule.describe()),
                        _ => (libc::EACCES, rule.describe()),
                    })
                    .or_else(|| {
                        super::host_repos::refusal("mknod", &path, false, None, |p| in_view(pid, p))
                            .map(|rule| (libc::EROFS, rule))
                    })
            };
            match refused {
                // Made by the supervisor, on the judged path (see `perform`).
                None => Verdict::Perform(Box::new(perform::Job {
                    act: perform::Act::Bind {
                        socket: a[0] as i32,
                    },
                    targets: vec![perform::Target::Path(path)],
                    as_named: None,
                    regular_only: false,
                    index_in_place: false,
                })),
                Some((errno, rule)) => Verdict::Deny(
                    errno,
                    denial(
                        "bind",
                        Some(path.display().to_string()),
                        "bind(AF_UNIX)".into(),
                        rule,
                        pid,
                    ),
                ),
            }
        }
        // No room for a name (`addrlen` at most the family, a fixed register): an autobind at most.
        _ if addr.len() <= 2 => Verdict::Continue,
        // Another family, or an address too long: with the network off every socket the run has
        // is a Unix one (or a TCP one for the proxy, refused above), which the kernel answers
        // EINVAL; never let through, since the kernel would read the address again.
        _ => Verdict::Fail(libc::EINVAL),
    }
}

/// A lock (`flock`, or an `fcntl` lock command) on a file the run may not write is refused: a read
/// lock or `flock` on a file of the host's would block the host's own lockers (package managers,
/// editors, git) for as long as the run lives. Unlocks, and locks on pipes and sockets, pass.
fn decide_lock(req: &libc::seccomp_notif, policy: &FsPolicy) -> Verdict {
    let (pid, a) = (req.pid, req.data.args);
    let nr = req.data.nr as libc::c_long;
    let call = if nr == libc::SYS_flock {
        "flock".to_string()
    } else {
        let cmd = a[1] as libc::c_int;
        let Some((_, name)) = super::refused::LOCK_COMMANDS
            .iter()
            .find(|(c, _)| *c == cmd)
        else {
            return Verdict::Continue;
        };
        format!("fcntl({name})")
    };
    // `struct flock` starts with `l_type` (a short): F_UNLCK releases. Read once, and never let
    // through on its word alone: the kernel reads the struct again, after another thread of the
    // caller may have made the unlock a lock.
    let unlock = nr != libc::SYS_flock
        && caller_memory::read_exact(pid, a[2], 2)
            .is_ok_and(|b| i16::from_ne_bytes([b[0], b[1]]) == libc::F_UNLCK as i16);
    let path = match resolve_fd(pid, a[0] as i64, &policy.writable_roots) {
        Ok(Some(path)) => path,
        // A pipe or socket; or a file whose directory is gone (a temp file unlinked after its
        // open, a common pattern): no file the host's lockers can open by name.
        Ok(None) | Err(_) => return Verdict::Continue,
    };
    match policy.check_write(&path) {
        Ok(()) => Verdict::Continue,
        // No lock on such a file can be the run's: releasing one releases nothing, as the kernel's
        // unlock would (answered here, not let through).
        Err(_) if unlock => Verdict::Value(0),
        Err(rule) => Verdict::Deny(
            libc::ENOLCK,
            denial(
                "lock",
                Some(path.display().to_string()),
                call,
                rule.describe(),
                pid,
            ),
        ),
    }
}

/// Resolve `raw` as process `pid` would: relative to its cwd or `dirfd`, through symbolic links (the
/// final one only when `follow`), in its own view of the file system (see [`Resolution`]). `None`
/// when the kernel will fail the call anyway (a missing parent) or the path leads somewhere that is
/// not a path (a pipe).
pub(crate) fn resolve(pid: u32, dirfd: i64, raw: &[u8], follow: bool) -> Option<PathBuf> {
    resolve_within(pid, dirfd, raw, follow, &[]).ok().flatten()
}

/// What a path a caller names leads to, looked up in the caller's view, not the supervisor's: its
/// mount namespace has a `/dev`, `/dev/shm`, `/proc` and hidden directories of its own, so a name
/// that means one file to the run can mean another, or nothing, on the host (a link in the run's
/// private `/dev/shm` into a root; `/proc/<pid>/cwd` of a pid of the run's PID namespace). Every
/// lookup goes through `/proc/<caller>/root`, the caller's root in its own namespaces.
/// `Ok(None)`: not a path (a pipe or socket behind `/proc/<pid>/fd/N`): no name is made or changed.
/// `Err(errno)`: it cannot be resolved; the kernel would fail the call with that error in the same
/// view, and a supervisor that cannot say where a write lands refuses it (fail closed).
type Resolution = Result<Option<PathBuf>, i32>;

/// `resolve`, told which directories need no second look: the outermost writable roots, canonical
/// when the run started, whose parents the run cannot change (they are outside every root), so no
/// component up to them can have become a link. A path inside one is walked from it, which saves the
/// `statx` of every component above it on each call (most of the supervisor's cost for a write in a
/// deep root; issue 36). (They are at the same place in the run's view: bound over themselves.)
fn resolve_within(
    pid: u32,
    dirfd: i64,
    raw: &[u8],
    follow: bool,
    trusted: &[PathBuf],
) -> Resolution {
    resolve_noting(pid, None, dirfd, raw, follow, trusted, &mut None)
}

/// `resolve_within`, noting an open file's `/proc` link the final component went through.
fn resolve_noting(
    pid: u32,
    root: Option<&OwnedFd>,
    dirfd: i64,
    raw: &[u8],
    follow: bool,
    trusted: &[PathBuf],
    proc_link: &mut ProcLink,
) -> Resolution {
    if raw.is_empty() {
        return Err(libc::ENOENT);
    }
    let raw = Path::new(OsStr::from_bytes(raw));
    let start = if raw.is_absolute() {
        PathBuf::from("/")
    } else {
        // The kernel names the directory as the caller sees it (a path in its mount namespace).
        let base = fd_link_text(pid, dirfd)?;
        if !base.is_absolute() {
            // A pipe or socket as the directory.
            return Err(libc::ENOTDIR);
        }
        base
    };
    walk_noting(pid, root, &start.join(raw), follow, trusted, proc_link)
}

fn read_link_errno(path: impl AsRef<Path>) -> Result<PathBuf, i32> {
    let read = || std::fs::read_link(&path).map_err(|e| e.raw_os_error().unwrap_or(libc::ENOENT));
    match read() {
        // A caller's `/proc` link hidden by its being non-dumpable: the supervisor's capabilities
        // (permitted, not effective, on a serving thread) may look.
        Err(libc::EACCES | libc::EPERM) => perform::with_capabilities(read),
        other => other,
    }
}

/// The file behind fd `fd` of process `pid`, in its view. `trusted` as for `resolve_within` (the
/// kernel's name for the file is canonical already).
fn resolve_fd(pid: u32, fd: i64, trusted: &[PathBuf]) -> Resolution {
    resolve_fd_text(pid, &fd_link_text(pid, fd)?, trusted)
}

/// What the `/proc` link of the caller's fd `fd` (`AT_FDCWD`: its cwd) reads.
fn fd_link_text(pid: u32, fd: i64) -> Result<PathBuf, i32> {
    read_link_errno(perform::fd_link(pid, fd as i32))
}

/// `resolve_fd` of a link text read already: the one judged is the one the call is checked against.
fn resolve_fd_text(pid: u32, target: &Path, trusted: &[PathBuf]) -> Resolution {
    let target = target.to_path_buf();
    // `pipe:[123]`, `socket:[..]`, `anon_inode:..`; and a memfd (`/memfd:name (deleted)`), which
    // no other process can reach by a name.
    if !target.is_absolute() || target.as_os_str().as_bytes().starts_with(b"/memfd:") {
        return Ok(None);
    }
    // The file itself: its name is canonical, and a descriptor on a link (`O_PATH|O_NOFOLLOW`)
    // means the link, not what it points to.
    walk(pid, &target, false, trusted)
}

/// A `/proc` link's target that is no path (`pipe:[123]`, `socket:[..]`, `anon_inode:[eventfd]`,
/// `net:[4026531840]`): one word with a colon, no slash.
fn names_no_path(target: &Path) -> bool {
    let t = target.as_os_str().as_bytes();
    !t.contains(&b'/') && t.contains(&b':')
}

/// The caller's process and thread ids as its own `/proc` numbers them (its PID namespace's, for
/// `/proc/self` and `/proc/thread-self` in its view), and whether that namespace is the run's own
/// (below the supervisor's). Read once per walk, from `/proc/<pid>/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CallerIds {
    tgid: u32,
    tid: u32,
    own_namespace: bool,
}

impl CallerIds {
    fn read(pid: u32) -> Result<CallerIds, i32> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_err(|e| e.raw_os_error().unwrap_or(libc::ESRCH))?;
        // Each namespace's id, from the supervisor's down to the caller's own.
        let tgids = unix_connect::status_numbers(&status, "NStgid:");
        let tids = unix_connect::status_numbers(&status, "NSpid:");
        match (tgids.last(), tids.last()) {
            (Some(&tgid), Some(&tid)) => Ok(CallerIds {
                tgid,
                tid,
                own_namespace: tids.len() > 1,
            }),
            _ => Err(libc::ESRCH),
        }
    }

    /// `read`, once for a walk: `ids` holds what was read already.
    fn once(pid: u32, ids: &mut Option<CallerIds>) -> Result<CallerIds, i32> {
        if let Some(known) = ids {
            return Ok(*known);
        }
        let read = CallerIds::read(pid)?;
        *ids = Some(read);
        Ok(read)
    }

    /// Whether the caller may follow the links of process `n` (its `fd/*`, `cwd`, `root`, `exe`):
    /// the kernel lets a process do so only where its ptrace rules allow, and the run's Landlock
    /// domain allows only processes of its own domain. The supervisor is a thread of the agent's
    /// process, which passes every such check for the agent itself and for the namespace's init, so
    /// it checks for the caller: its own process and threads; in a PID namespace of the run's own,
    /// every process but its init (pid 1, outside the run's Landlock domain); without one, nothing
    /// else (which processes are the run's cannot be told there, so none is: a pipe of the agent's,
    /// its terminal or an unsandboxed session's stdin was reopened for writing through
    /// `/proc/<agent>/fd/<n>`).
    fn may_look_into(&self, n: u32) -> bool {
        n == self.tgid || n == self.tid || (self.own_namespace && n != 1)
    }
}

/// The process `/proc/<n>/...` names (in the caller's view), when `path` is beneath one.
fn proc_entry_of(path: &Path) -> Option<u32> {
    let mut parts = path.components().skip(1);
    (parts.next()?.as_os_str() == "proc")
        .then(|| parts.next()?.as_os_str().to_str()?.parse().ok())
        .flatten()
}

/// Resolve `path` (absolute, in the caller's view) component by component as the kernel would, the
/// final link followed only when `follow`.
fn walk(pid: u32, path: &Path, follow: bool, trusted: &[PathBuf]) -> Resolution {
    walk_noting(pid, None, path, follow, trusted, &mut None)
}

/// A `/proc/<pid>/fd/<n>` link the final component of a path went through, and what it read: the
/// open file the call reaches (which may have no name: a pipe, a deleted file).
type ProcLink = Option<(PathBuf, PathBuf)>;

/// Whether `link` (in the caller's view) is an open file's `/proc` link: `/proc/<pid>/fd/<n>` or
/// `/proc/<pid>/task/<tid>/fd/<n>`.
fn is_fd_link(link: &Path) -> bool {
    link.starts_with("/proc")
        && link
            .parent()
            .is_some_and(|p| p.file_name() == Some(OsStr::new("fd")))
}

/// Whether `link` (in the caller's view) is a process's root link, `/proc/<pid>/root` (or a
/// thread's, `/proc/<pid>/task/<tid>/root`).
fn is_root_link(link: &Path) -> bool {
    link.starts_with("/proc")
        && link.file_name() == Some(OsStr::new("root"))
        && link != Path::new("/proc/root")
}

/// `walk`, noting in `proc_link` an open file's `/proc` link the final component went through.
fn walk_noting(
    pid: u32,
    root: Option<&OwnedFd>,
    path: &Path,
    follow: bool,
    trusted: &[PathBuf],
    proc_link: &mut ProcLink,
) -> Resolution {
    // Start at the trusted directory the path is in, when it names no `..` that could leave it.
    let start = (!path
        .components()
        .any(|c| c == std::path::Component::ParentDir))
    .then(|| outermost_containing(trusted, path))
    .flatten();
    let (mut out, rest) = match start {
        Some(root) => (root.to_path_buf(), path.strip_prefix(root).unwrap_or(path)),
        None => (PathBuf::from("/"), path),
    };
    let mut pending: Vec<std::ffi::OsString> = rest
        .components()
        .rev()
        .filter_map(|c| match c {
            std::path::Component::RootDir => None,
            other => Some(other.as_os_str().to_os_string()),
        })
        .collect();
    // Each lookup is made relative to the caller's root and without effective capabilities: a
    // directory the caller may not search, or a process its /proc hides from it, is not there for the
    // walk either (a root supervisor would see both).
    let opened;
    let root = match root {
        Some(root) => root,
        None => {
            opened = unix_connect::open_root(pid, || true)?;
            &opened
        }
    };
    let _identity = perform::CallerIdentity::assume()?;
    let mut links = 0;
    let mut caller: Option<CallerIds> = None;
    while let Some(c) = pending.pop() {
        if c == "." || c.is_empty() {
            continue;
        }
        if c == ".." {
            out.pop();
            continue;
        }
        if out == Path::new("/proc") && (c == "self" || c == "thread-self") {
            let CallerIds { tgid, tid, .. } = CallerIds::once(pid, &mut caller)?;
            out = if c == "self" {
                PathBuf::from(format!("/proc/{tgid}"))
            } else {
                PathBuf::from(format!("/proc/{tgid}/task/{tid}"))
            };
            continue;
        }
        let candidate = out.join(&c);
        let last = pending.iter().all(|p| p == "." || p.is_empty());
        if last && !follow {
            return Ok(Some(candidate));
        }
        match stat_at(root, &candidate, false) {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
                links += 1;
                if links > 40 {
                    return Err(libc::ELOOP);
                }
                if let Some(n) = proc_entry_of(&candidate) {
                    if !CallerIds::once(pid, &mut caller)?.may_look_into(n) {
                        return Err(libc::EACCES);
                    }
                }
                let target = read_link_at(root, &candidate)?;
                if is_root_link(&candidate) && !is_the_root(root, &candidate) {
                    // Another process's root that is not the caller's (the namespace's init sits
                    // in the host's view): its text names a path in a view the supervisor does not
                    // judge, and a write the kernel would take there is refused (fail closed).
                    return Err(libc::EACCES);
                }
                if last && is_fd_link(&candidate) {
                    *proc_link = Some((candidate.clone(), target.clone()));
                    // A memfd has no name any other process can reach: the open file only.
                    if target.as_os_str().as_bytes().starts_with(b"/memfd:") {
                        return Ok(None);
                    }
                }
                if target.is_absolute() {
                    out = PathBuf::from("/");
                } else if candidate.starts_with("/proc") && names_no_path(&target) {
                    // `pipe:[123]`, `socket:[..]`, `anon_inode:..`: not a path; with more of the
                    // path after it, the kernel fails the lookup. (`/proc/net` is `self/net`, an
                    // ordinary relative link, resolved like any other.)
                    return if last { Ok(None) } else { Err(libc::ENOTDIR) };
                }
                for t in target.components().rev() {
                    if t != std::path::Component::RootDir {
                        pending.push(t.as_os_str().to_os_string());
                    }
                }
            }
            Ok(_) => out = candidate,
            Err(libc::ENOENT) if last => return Ok(Some(candidate)),
            Err(e) => return Err(e),
        }
    }
    Ok(Some(out))
}

/// `stat` of `path` beneath `root`, its final link followed only when `follow`.
fn stat_at(root: &OwnedFd, path: &Path, follow: bool) -> Result<libc::stat, i32> {
    let c = perform::beneath_root(path)?;
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: fstatat fills a zeroed stat; root is an open directory.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(root.as_raw_fd(), c.as_ptr(), &mut st, flags) } < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ENOENT));
    }
    Ok(st)
}

/// The text of link `path` beneath `root`.
fn read_link_at(root: &OwnedFd, path: &Path) -> Result<PathBuf, i32> {
    let c = perform::beneath_root(path)?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: readlinkat writes at most buf.len() bytes into buf.
    let n = unsafe {
        libc::readlinkat(
            root.as_raw_fd(),
            c.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ENOENT));
    }
    buf.truncate(n as usize);
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

/// Whether the root link `link` (beneath `root`) leads to `root` itself.
fn is_the_root(root: &OwnedFd, link: &Path) -> bool {
    let Ok(target) = stat_at(root, link, true) else {
        return false;
    };
    // SAFETY: fstat fills a zeroed stat of an open fd.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::fstat(root.as_raw_fd(), &mut st) };
    rc == 0 && (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino)
}

/// The root of `roots` that holds `path` and lies in no other root (a root inside another could be
/// renamed or replaced by the run), if any.
fn outermost_containing<'a>(roots: &'a [PathBuf], path: &Path) -> Option<&'a Path> {
    roots
        .iter()
        .filter(|r| path.starts_with(r))
        .find(|r| !roots.iter().any(|o| o != *r && r.starts_with(o)))
        .map(PathBuf::as_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> u32 {
        std::process::id()
    }

    #[test]
    fn another_processs_proc_links_are_not_followed_for_a_caller_outside_a_pid_namespace() {
        assert_eq!(proc_entry_of(Path::new("/proc/42/fd/3")), Some(42));
        assert_eq!(proc_entry_of(Path::new("/proc/42")), Some(42));
        assert_eq!(proc_entry_of(Path::new("/proc/self/fd/3")), None);
        assert_eq!(proc_entry_of(Path::new("/tmp/proc/42/fd")), None);
        // This test process is in the host's namespace: itself only.
        let ids = CallerIds::read(me()).unwrap();
        assert!(!ids.own_namespace);
        assert!(ids.may_look_into(me()));
        assert!(!ids.may_look_into(1));
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let looked = ids.may_look_into(other.id());
        let _ = other.kill();
        let _ = other.wait();
        assert!(!looked);
        // In a PID namespace of the run's own, its other processes but the init.
        let nested = CallerIds {
            own_namespace: true,
            ..ids
        };
        assert!(nested.may_look_into(7) && !nested.may_look_into(1));
        // The kernel's answer for a lookup its ptrace rules refuse, through the whole walk.
        let link = format!("/proc/{}/fd/0", std::process::id());
        assert!(walk(me(), Path::new(&link), true, &[]).is_ok());
        assert_eq!(
            walk(me(), Path::new("/proc/1/fd/0"), true, &[]),
            Err(libc::EACCES)
        );
    }

    #[test]
    fn relative_paths_resolve_against_the_callers_cwd_and_dirfd() {
        let cwd = std::fs::canonicalize(std::env::current_dir().unwrap()).unwrap();
        assert_eq!(
            resolve(me(), AT_FDCWD, b"new-file", false),
            Some(cwd.join("new-file"))
        );
        assert_eq!(
            resolve(me(), AT_FDCWD, b"missing-dir/new-file", false),
            None,
            "a missing parent is left to the kernel"
        );
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::File::open(dir.path()).unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            resolve(me(), d.as_raw_fd() as i64, b"x/../y", false),
            None,
            "a missing parent is left to the kernel"
        );
        assert_eq!(
            resolve(me(), d.as_raw_fd() as i64, b"y", false),
            Some(real.join("y"))
        );
    }

    #[test]
    fn links_are_followed_in_parents_and_in_the_final_part_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(real.join("target")).unwrap();
        std::os::unix::fs::symlink("/etc", real.join("out")).unwrap();
        std::os::unix::fs::symlink("target", real.join("in")).unwrap();
        let p = |s: &str| real.join(s).into_os_string().into_vec();
        use std::os::unix::ffi::OsStringExt;
        assert_eq!(
            resolve(me(), AT_FDCWD, &p("out/passwd"), false),
            Some(PathBuf::from("/etc/passwd"))
        );
        assert_eq!(
            resolve(me(), AT_FDCWD, &p("in/new"), false),
            Some(real.join("target/new"))
        );
        assert_eq!(
            resolve(me(), AT_FDCWD, &p("out"), false),
            Some(real.join("out"))
        );
        assert_eq!(
            resolve(me(), AT_FDCWD, &p("out"), true),
            Some(PathBuf::from("/etc"))
        );
    }

    #[test]
    fn a_walk_from_a_trusted_root_resolves_as_a_walk_from_the_top() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let inner = root.join("inner");
        std::fs::create_dir_all(inner.join("deep/er")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        std::os::unix::fs::symlink("deep", inner.join("link")).unwrap();
        std::os::unix::fs::symlink("../..", inner.join("up")).unwrap();
        // A root inside another is not trusted: the outer one is where the walk starts.
        let roots = [inner.clone(), root.clone()];
        assert_eq!(
            outermost_containing(&roots, &inner.join("x")),
            Some(root.as_path())
        );
        assert_eq!(outermost_containing(&roots, Path::new("/etc/passwd")), None);
        for rel in [
            "new-file",
            "out/passwd",
            "inner/link/er/file",
            "inner/up/escaped",
            "inner/deep/../deep/er/f",
            "inner/missing/new",
            "inner",
        ] {
            let path = root.join(rel);
            for follow in [false, true] {
                assert_eq!(
                    walk(me(), &path, follow, &roots),
                    walk(me(), &path, follow, &[]),
                    "{rel} follow={follow}"
                );
            }
        }
        // Through a link inside the root the walk leaves it, as the kernel would.
        assert_eq!(
            walk(me(), &root.join("out/passwd"), true, &roots),
            Ok(Some(PathBuf::from("/etc/passwd")))
        );
    }

    #[test]
    fn proc_self_means_the_caller_and_pipes_are_not_paths() {
        let (r, _w) = std::io::pipe().unwrap();
        let link = format!("/proc/self/fd/{}", r.as_raw_fd());
        assert_eq!(resolve(me(), AT_FDCWD, link.as_bytes(), true), None);
        let f = tempfile::NamedTempFile::new().unwrap();
        let real = std::fs::canonicalize(f.path()).unwrap();
        let link = format!("/proc/self/fd/{}", f.as_file().as_raw_fd());
        assert_eq!(resolve(me(), AT_FDCWD, link.as_bytes(), true), Some(real));
    }

    #[test]
    fn write_flags_are_recognised() {
        assert!(!is_write_open(libc::O_RDONLY as u64));
        assert!(!is_write_open((libc::O_RDONLY | libc::O_CLOEXEC) as u64));
        assert!(is_write_open(libc::O_WRONLY as u64));
        assert!(is_write_open(libc::O_RDWR as u64));
        assert!(is_write_open((libc::O_RDONLY | libc::O_CREAT) as u64));
        assert!(is_write_open((libc::O_RDONLY | libc::O_TRUNC) as u64));
        // The access mode is a field, not bits: other flags beside it change nothing.
        assert!(is_write_open((libc::O_WRONLY | libc::O_APPEND) as u64));
        assert!(is_write_open((libc::O_RDWR | libc::O_CLOEXEC) as u64));
        assert!(!is_write_open(
            (libc::O_RDONLY | libc::O_APPEND | libc::O_CLOEXEC) as u64
        ));
        assert!(!is_write_open(libc::O_PATH as u64));
        for (flags, text) in [
            (
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
                "O_WRONLY|O_CREAT|O_TRUNC",
            ),
            (libc::O_RDWR, "O_RDWR"),
            (libc::O_RDWR | libc::O_APPEND, "O_RDWR|O_APPEND"),
            (
                libc::O_RDONLY | libc::O_CREAT | libc::O_EXCL,
                "O_RDONLY|O_CREAT|O_EXCL",
            ),
            (libc::O_WRONLY | libc::O_CLOEXEC, "O_WRONLY"),
        ] {
            assert_eq!(open_flags_text(flags as u64), text);
        }
    }

    /// Forty runs of sixteen waiting FIFO opens took the runtime's whole blocking pool: a run gets
    /// at most `per_run` places, and all runs together at most `all_runs`, each given back when its
    /// call is done.
    #[test]
    fn blocking_calls_are_capped_per_run_and_across_runs() {
        static ALL: AtomicUsize = AtomicUsize::new(0);
        let runs: Vec<Arc<AtomicUsize>> = (0..5).map(|_| Arc::new(AtomicUsize::new(0))).collect();
        let take = |run: &Arc<AtomicUsize>| BlockingSlot::take(run, &ALL, 4, 10);
        let mut held: Vec<BlockingSlot> = (0..4).map(|_| take(&runs[0]).unwrap()).collect();
        assert!(take(&runs[0]).is_none(), "a fifth place for one run");
        held.extend((0..4).map(|_| take(&runs[1]).unwrap()));
        held.extend((0..2).map(|_| take(&runs[2]).unwrap()));
        assert_eq!(ALL.load(Ordering::Acquire), 10);
        assert!(take(&runs[3]).is_none(), "past the cap of all runs");
        // A refusal takes nothing.
        assert_eq!(runs[3].load(Ordering::Acquire), 0);
        assert_eq!(ALL.load(Ordering::Acquire), 10);
        // A call done gives its place back, to any run.
        held.pop();
        assert!(take(&runs[4]).is_some_and(|slot| {
            drop(slot);
            true
        }));
        drop(held);
        assert_eq!(ALL.load(Ordering::Acquire), 0);
        assert!(runs.iter().all(|r| r.load(Ordering::Acquire) == 0));
    }

    #[test]
    fn repeated_denials_are_counted_once() {
        let log = DenialLog::default();
        let d = Denial {
            operation: "write".into(),
            path: Some("/etc/x".into()),
            detail: "openat(O_WRONLY)".into(),
            rule: "outside the writable roots".into(),
            pid: 1,
            count: 1,
        };
        log.record(d.clone());
        log.record(d);
        let (entries, dropped) = log.snapshot();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].count, 2);
        assert_eq!(dropped, 0);
    }

    #[test]
    fn distinct_denials_are_kept_up_to_the_cap_and_the_rest_counted() {
        let log = DenialLog::default();
        let extra = 7;
        for i in 0..MAX_DISTINCT_DENIALS + extra {
            log.record(denial(
                "write",
                Some(format!("/etc/x{i}")),
                "openat(O_WRONLY)".into(),
                "outside the writable roots".into(),
                1,
            ));
        }
        // A repeat of a kept one is still counted on it, not dropped.
        log.record(denial(
            "write",
            Some("/etc/x0".into()),
            "openat(O_WRONLY)".into(),
            "outside the writable roots".into(),
            1,
        ));
        let (entries, dropped) = log.snapshot();
        assert_eq!(entries.len(), MAX_DISTINCT_DENIALS);
        assert_eq!(dropped, extra as u64);
        assert_eq!(entries[0].count, 2);
    }
}
