//! System V IPC of a run that has no IPC namespace of its own (no PID namespace here, see
//! `child::enter_mount_namespace`: the two come together).
//!
//! Shared memory segments, semaphore sets and message queues are named by numbers any process of
//! the machine can list (`ipcs`, `/proc/sysvipc`) and use as far as their modes allow, and Landlock
//! does not cover them. Without a namespace of its own a run could attach the host's segments for
//! writing, change or remove its semaphores, or drain its queues: the host's programs' state, as
//! shared as a file outside the roots. So, in that mode only, every System V call goes to the
//! supervisor, which keeps the objects the run made:
//!
//! - the calls that make or find an object by key (`shmget`, `semget`, `msgget`) are made by the
//!   supervisor, which notes what a creation returns; finding an existing object that is not the
//!   run's fails `EACCES`, recorded;
//! - the calls that take an object's id (attach, operate, send, receive, control) pass when the id
//!   is one the run made, or when they only read (`IPC_STAT`, `GETVAL`, `shmat(SHM_RDONLY)`, a
//!   queue's `MSG_COPY`): the sandbox protects writes, not what can be read. The id is a register
//!   value, so letting the call through cannot be raced;
//! - what the run made is removed when its last process is gone, as its own namespace's objects
//!   would be with it (they would otherwise outlive the run, holding memory).
//!
//! A run keeps the keys it makes while it lives: a host program asking for the same key then gets
//! the run's object, as it would get a file the run made in its roots.

use std::collections::HashSet;
use std::sync::Mutex;

/// The three kinds of object, each with its own numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    SharedMemory,
    Semaphores,
    Queue,
}

impl Kind {
    /// The system call of this kind that ends in `call` (`ctl` of shared memory is `shmctl`).
    fn call(self, call: &str) -> String {
        let prefix = match self {
            Kind::SharedMemory => "shm",
            Kind::Semaphores => "sem",
            Kind::Queue => "msg",
        };
        format!("{prefix}{call}")
    }
}

/// The calls sent to the supervisor in this mode, as a report names them.
pub const CALLS: [(libc::c_long, &str); 11] = [
    (libc::SYS_shmget, "shmget"),
    (libc::SYS_shmat, "shmat"),
    (libc::SYS_shmctl, "shmctl"),
    (libc::SYS_semget, "semget"),
    (libc::SYS_semop, "semop"),
    (libc::SYS_semtimedop, "semtimedop"),
    (libc::SYS_semctl, "semctl"),
    (libc::SYS_msgget, "msgget"),
    (libc::SYS_msgsnd, "msgsnd"),
    (libc::SYS_msgrcv, "msgrcv"),
    (libc::SYS_msgctl, "msgctl"),
];

/// The bit glibc adds to every control command (the 64-bit layout of the structures).
const IPC_64: i32 = 0x100;
/// `msgrcv`'s flag that copies a message without taking it off the queue.
const MSG_COPY: i32 = 0o40000;

/// Control commands that only read, per kind (`IPC_STAT`, `IPC_INFO` and each kind's own).
fn reads(kind: Kind, cmd: i32) -> bool {
    let cmd = cmd & !IPC_64;
    if cmd == libc::IPC_STAT || cmd == libc::IPC_INFO {
        return true;
    }
    match kind {
        // SHM_STAT, SHM_INFO, SHM_STAT_ANY
        Kind::SharedMemory => matches!(cmd, 13..=15),
        // GETPID, GETVAL, GETALL, GETNCNT, GETZCNT, SEM_STAT, SEM_INFO, SEM_STAT_ANY
        Kind::Semaphores => matches!(cmd, 11..=15 | 18..=20),
        // MSG_STAT, MSG_INFO, MSG_STAT_ANY
        Kind::Queue => matches!(cmd, 11..=13),
    }
}

/// What the supervisor does with one call.
#[derive(Debug, PartialEq, Eq)]
pub enum Judgment {
    /// Let the kernel make it.
    Continue,
    /// Answer with this value (an id the supervisor's own call returned).
    Value(i64),
    /// Fail with this errno, as the kernel did for the supervisor's own call.
    Fail(i32),
    /// Refuse: the object is another program's. The call as a report names it.
    Refuse(String),
}

/// The objects one run made, removed when it ends.
#[derive(Debug, Default)]
pub struct RunObjects {
    made: Mutex<HashSet<(Kind, i32)>>,
}

impl RunObjects {
    fn owns(&self, kind: Kind, id: i32) -> bool {
        self.made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(kind, id))
    }

    fn note(&self, kind: Kind, id: i32) {
        self.made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((kind, id));
    }

    fn forget(&self, kind: Kind, id: i32) {
        self.made
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(kind, id));
    }

    /// Judge (and for the key lookups, make) System V call `nr` with arguments `args`. `None` for a
    /// call that is not one of `CALLS`.
    pub fn judge(&self, nr: libc::c_long, args: &[u64; 6]) -> Option<Judgment> {
        let id = args[0] as i32;
        let (kind, name, passes) = match nr {
            libc::SYS_shmget => return Some(self.get(Kind::SharedMemory, args)),
            libc::SYS_semget => return Some(self.get(Kind::Semaphores, args)),
            libc::SYS_msgget => return Some(self.get(Kind::Queue, args)),
            libc::SYS_shmat => (
                Kind::SharedMemory,
                "shmat",
                args[2] as i32 & libc::SHM_RDONLY != 0,
            ),
            libc::SYS_shmctl => return Some(self.control(Kind::SharedMemory, id, args[1] as i32)),
            libc::SYS_semctl => return Some(self.control(Kind::Semaphores, id, args[2] as i32)),
            libc::SYS_msgctl => return Some(self.control(Kind::Queue, id, args[1] as i32)),
            libc::SYS_semop => (Kind::Semaphores, "semop", false),
            libc::SYS_semtimedop => (Kind::Semaphores, "semtimedop", false),
            libc::SYS_msgsnd => (Kind::Queue, "msgsnd", false),
            libc::SYS_msgrcv => (Kind::Queue, "msgrcv", args[4] as i32 & MSG_COPY != 0),
            _ => return None,
        };
        Some(if passes || self.owns(kind, id) {
            Judgment::Continue
        } else {
            Judgment::Refuse(format!("{name}(id {id})"))
        })
    }

    /// A control call: reads pass; the rest only on the run's own objects. A removal is made here,
    /// so the object is no longer the run's once it is gone.
    fn control(&self, kind: Kind, id: i32, cmd: i32) -> Judgment {
        if reads(kind, cmd) {
            return Judgment::Continue;
        }
        if !self.owns(kind, id) {
            let name = kind.call("ctl");
            return Judgment::Refuse(format!("{name}(id {id}, {})", command_name(cmd)));
        }
        if cmd & !IPC_64 != libc::IPC_RMID {
            return Judgment::Continue;
        }
        match remove(kind, id) {
            Ok(()) => {
                self.forget(kind, id);
                Judgment::Value(0)
            }
            Err(errno) => Judgment::Fail(errno),
        }
    }

    /// A `*get`: made here. A creation's object is noted as the run's; an existing object found by
    /// key passes only if it is the run's.
    fn get(&self, kind: Kind, args: &[u64; 6]) -> Judgment {
        let key = args[0] as libc::key_t;
        let flags_at = if kind == Kind::Queue { 1 } else { 2 };
        let flags = args[flags_at] as i32;
        let second = args[1];
        let call = |flags: i32| get(kind, key, second, flags);
        // A new object: the private key always makes one, and so does an exclusive creation.
        if key == libc::IPC_PRIVATE
            || flags & (libc::IPC_CREAT | libc::IPC_EXCL) == libc::IPC_CREAT | libc::IPC_EXCL
        {
            return match call(flags) {
                Ok(id) => {
                    self.note(kind, id);
                    Judgment::Value(id as i64)
                }
                Err(errno) => Judgment::Fail(errno),
            };
        }
        // A creation unless the key exists: try to create it; if it exists, it is found below.
        // (Removed between the two calls, it is tried again a few times.)
        for _ in 0..4 {
            if flags & libc::IPC_CREAT != 0 {
                match call(flags | libc::IPC_EXCL) {
                    Ok(id) => {
                        self.note(kind, id);
                        return Judgment::Value(id as i64);
                    }
                    Err(libc::EEXIST) => {}
                    Err(errno) => return Judgment::Fail(errno),
                }
            }
            match call(flags & !libc::IPC_CREAT) {
                Ok(id) if self.owns(kind, id) => return Judgment::Value(id as i64),
                Ok(id) => {
                    let name = kind.call("get");
                    return Judgment::Refuse(format!("{name}(key {key:#x}: id {id})"));
                }
                Err(libc::ENOENT) if flags & libc::IPC_CREAT != 0 => continue,
                Err(errno) => return Judgment::Fail(errno),
            }
        }
        Judgment::Fail(libc::EAGAIN)
    }
}

impl Drop for RunObjects {
    fn drop(&mut self) {
        let made = std::mem::take(self.made.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (kind, id) in made {
            // Gone already (removed by its creator's peer, or by the host): nothing to do.
            let _ = remove(kind, id);
        }
    }
}

fn command_name(cmd: i32) -> String {
    match cmd & !IPC_64 {
        libc::IPC_RMID => "IPC_RMID".into(),
        libc::IPC_SET => "IPC_SET".into(),
        other => format!("command {other}"),
    }
}

fn result(rc: libc::c_long) -> Result<i32, i32> {
    if rc < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(rc as i32)
    }
}

/// The kernel's own `*get`, with `second` the segment size or the set's semaphore count.
fn get(kind: Kind, key: libc::key_t, second: u64, flags: i32) -> Result<i32, i32> {
    // SAFETY: the *get calls take numbers only.
    let rc = unsafe {
        match kind {
            Kind::SharedMemory => libc::syscall(libc::SYS_shmget, key, second as usize, flags),
            Kind::Semaphores => libc::syscall(libc::SYS_semget, key, second as i32, flags),
            Kind::Queue => libc::syscall(libc::SYS_msgget, key, flags),
        }
    };
    result(rc)
}

fn remove(kind: Kind, id: i32) -> Result<(), i32> {
    let null = std::ptr::null_mut::<libc::c_void>();
    // SAFETY: IPC_RMID reads no structure (the pointer is not used).
    let rc = unsafe {
        match kind {
            Kind::SharedMemory => libc::syscall(libc::SYS_shmctl, id, libc::IPC_RMID, null),
            Kind::Semaphores => libc::syscall(libc::SYS_semctl, id, 0, libc::IPC_RMID, 0),
            Kind::Queue => libc::syscall(libc::SYS_msgctl, id, libc::IPC_RMID, null),
        }
    };
    result(rc).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[u64]) -> [u64; 6] {
        let mut out = [0; 6];
        out[..a.len()].copy_from_slice(a);
        out
    }

    /// An object of another program's: made here, outside any run.
    struct Foreign(Kind, i32);
    impl Drop for Foreign {
        fn drop(&mut self) {
            let _ = remove(self.0, self.1);
        }
    }

    #[test]
    fn the_runs_own_objects_are_its_to_use_and_another_programs_only_to_read() {
        let host = Foreign(
            Kind::SharedMemory,
            get(Kind::SharedMemory, libc::IPC_PRIVATE, 4096, 0o600).unwrap(),
        );
        let run = RunObjects::default();
        let Some(Judgment::Value(own)) = run.judge(libc::SYS_shmget, &args(&[0, 4096, 0o600]))
        else {
            panic!("a private segment is made for the run")
        };
        let own = own as u64;
        let other = host.1 as u64;
        assert_eq!(
            run.judge(libc::SYS_shmat, &args(&[own, 0, 0])),
            Some(Judgment::Continue)
        );
        assert!(matches!(
            run.judge(libc::SYS_shmat, &args(&[other, 0, 0])),
            Some(Judgment::Refuse(_))
        ));
        assert_eq!(
            run.judge(libc::SYS_shmat, &args(&[other, 0, libc::SHM_RDONLY as u64])),
            Some(Judgment::Continue)
        );
        assert_eq!(
            run.judge(
                libc::SYS_shmctl,
                &args(&[other, (libc::IPC_STAT | IPC_64) as u64])
            ),
            Some(Judgment::Continue)
        );
        for cmd in [libc::IPC_RMID, libc::IPC_RMID | IPC_64, libc::IPC_SET] {
            assert!(matches!(
                run.judge(libc::SYS_shmctl, &args(&[other, cmd as u64])),
                Some(Judgment::Refuse(_))
            ));
        }
        // The run's own removal is made, and the id is no longer the run's.
        assert_eq!(
            run.judge(libc::SYS_shmctl, &args(&[own, libc::IPC_RMID as u64])),
            Some(Judgment::Value(0))
        );
        assert!(!run.owns(Kind::SharedMemory, own as i32));
        // The host's segment is still there.
        assert!(get_stat(host.1));
    }

    fn get_stat(id: i32) -> bool {
        let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
        // SAFETY: IPC_STAT fills the structure given.
        unsafe { libc::shmctl(id, libc::IPC_STAT, &mut ds) == 0 }
    }

    #[test]
    fn a_key_finds_the_runs_own_object_and_not_the_hosts() {
        // Keys of this test's own, unlikely to be in use.
        let host_key = 0x5ae0_0000 + std::process::id() as i64 % 0x10000;
        let run_key = host_key + 0x10000;
        let host = Foreign(
            Kind::Semaphores,
            get(
                Kind::Semaphores,
                host_key as i32,
                1,
                libc::IPC_CREAT | 0o600,
            )
            .unwrap(),
        );
        let run = RunObjects::default();
        let create = (libc::IPC_CREAT | 0o600) as u64;
        // The host's key, with or without IPC_CREAT: the host's set, refused.
        for flags in [create, 0o600] {
            assert!(matches!(
                run.judge(libc::SYS_semget, &args(&[host_key as u64, 1, flags])),
                Some(Judgment::Refuse(_))
            ));
        }
        let Some(Judgment::Value(own)) =
            run.judge(libc::SYS_semget, &args(&[run_key as u64, 1, create]))
        else {
            panic!("a new key makes the run's set")
        };
        assert_eq!(
            run.judge(libc::SYS_semget, &args(&[run_key as u64, 1, create])),
            Some(Judgment::Value(own)),
            "asked again, the run finds its own"
        );
        let excl = create | libc::IPC_EXCL as u64;
        assert_eq!(
            run.judge(libc::SYS_semget, &args(&[run_key as u64, 1, excl])),
            Some(Judgment::Fail(libc::EEXIST))
        );
        assert_eq!(
            run.judge(libc::SYS_semop, &args(&[own as u64, 0, 1])),
            Some(Judgment::Continue)
        );
        assert!(matches!(
            run.judge(libc::SYS_semop, &args(&[host.1 as u64, 0, 1])),
            Some(Judgment::Refuse(_))
        ));
        // SETVAL on the host's set is refused, GETVAL passes.
        assert!(matches!(
            run.judge(libc::SYS_semctl, &args(&[host.1 as u64, 0, 16, 5])),
            Some(Judgment::Refuse(_))
        ));
        assert_eq!(
            run.judge(libc::SYS_semctl, &args(&[host.1 as u64, 0, 12])),
            Some(Judgment::Continue)
        );
        // The run's end removes what it made, and only that.
        drop(run);
        assert_eq!(
            get(Kind::Semaphores, run_key as i32, 0, 0),
            Err(libc::ENOENT)
        );
        assert_eq!(get(Kind::Semaphores, host_key as i32, 0, 0), Ok(host.1));
    }

    #[test]
    fn another_programs_queue_is_not_drained_but_may_be_peeked() {
        let host = Foreign(
            Kind::Queue,
            get(Kind::Queue, libc::IPC_PRIVATE, 0, 0o600).unwrap(),
        );
        let run = RunObjects::default();
        let q = host.1 as u64;
        for nr in [libc::SYS_msgsnd, libc::SYS_msgrcv] {
            assert!(matches!(
                run.judge(nr, &args(&[q, 0, 8, 0, 0])),
                Some(Judgment::Refuse(_))
            ));
        }
        assert_eq!(
            run.judge(
                libc::SYS_msgrcv,
                &args(&[q, 0, 8, 0, (MSG_COPY | libc::IPC_NOWAIT) as u64])
            ),
            Some(Judgment::Continue)
        );
        assert_eq!(run.judge(libc::SYS_getpid, &args(&[])), None);
    }
}
