//! Whole-tree kill on Windows: every run is assigned to a Job Object of its own before its first
//! instruction runs (it is created suspended), so everything it starts is in the job too, whatever it
//! does with consoles or process groups. The job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when
//! the last handle goes (the session is removed, or the host dies however it dies) the kernel ends every
//! process still in it, so no orphan outlives the host.
//!
//! Windows has no SIGTERM a console program must honour: `kill_tree` ends the job at once with
//! `TerminateJobObject`, and the grace period only bounds the wait for the processes to be gone.

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::sync::Arc;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicProcessIdList,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_PROCESS_ID_LIST, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};

use super::{KillReport, KILL_SETTLE};

/// The exit code every process of a terminated job gets (what `taskkill /F` gives, 1).
const TERMINATED: u32 = 1;
const POLL: Duration = Duration::from_millis(20);
/// The most process ids one query makes room for.
const MAX_LISTED: usize = 1 << 20;

/// A Job Object that kills what is in it when its last handle closes.
pub struct Job(OwnedHandle);

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Job({:?})", self.0.as_raw_handle())
    }
}

impl Job {
    /// A new, unnamed job with kill-on-close set.
    pub fn new() -> std::io::Result<Job> {
        // SAFETY: both pointers may be null (default security, no name); the handle is owned below.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh handle nothing else owns.
        let job = Job(unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) });
        // SAFETY: all-zero is a valid value of this plain C struct.
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the pointer and length describe `info`, which outlives the call.
        let ok = unsafe {
            SetInformationJobObject(
                job.handle(),
                JobObjectExtendedLimitInformation,
                &info as *const _ as *const core::ffi::c_void,
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    fn handle(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }

    /// Put a (still suspended) process into the job; its future children are born in it.
    pub fn assign(&self, process: RawHandle) -> std::io::Result<()> {
        // SAFETY: both handles are valid for the call; the process handle is the caller's.
        if unsafe { AssignProcessToJobObject(self.handle(), process as HANDLE) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// End every process in the job.
    pub fn terminate(&self) {
        // SAFETY: a valid job handle.
        unsafe { TerminateJobObject(self.handle(), TERMINATED) };
    }

    /// The ids of the processes in the job now (those that have exited are not listed).
    pub fn pids(&self) -> Vec<u32> {
        let header = std::mem::offset_of!(JOBOBJECT_BASIC_PROCESS_ID_LIST, ProcessIdList)
            / std::mem::size_of::<usize>();
        let mut room = 64usize;
        loop {
            // usize-aligned room for the header and `room` ids.
            let mut buf = vec![0usize; header + room];
            let bytes = (buf.len() * std::mem::size_of::<usize>()) as u32;
            // SAFETY: the buffer is `bytes` long and aligned for the struct; the kernel writes at most that.
            let ok = unsafe {
                QueryInformationJobObject(
                    self.handle(),
                    JobObjectBasicProcessIdList,
                    buf.as_mut_ptr() as *mut core::ffi::c_void,
                    bytes,
                    std::ptr::null_mut(),
                )
            };
            // SAFETY: the buffer starts with the struct's header, written by the kernel (or zeroed).
            let list = unsafe { &*(buf.as_ptr() as *const JOBOBJECT_BASIC_PROCESS_ID_LIST) };
            let (assigned, listed) = (
                list.NumberOfAssignedProcesses as usize,
                list.NumberOfProcessIdsInList as usize,
            );
            // The call fails with ERROR_MORE_DATA when the room is short, and says how much is needed.
            let short = ok == 0 && assigned > room;
            if short && room < MAX_LISTED {
                room = assigned + 16;
                continue;
            }
            if ok == 0 && !short {
                return Vec::new();
            }
            return buf[header..header + listed.min(room)]
                .iter()
                .map(|&p| p as u32)
                .collect();
        }
    }
}

/// Which processes belong to a run: the run's job (none only where the job could not be made, and
/// then the run's own process alone).
#[derive(Debug, Clone)]
pub struct KillTarget {
    /// The run's first process (the shell).
    pub pid: u32,
    pub job: Option<Arc<Job>>,
}

impl KillTarget {
    /// Live processes of the run.
    pub fn live_processes(&self) -> Vec<u32> {
        match &self.job {
            Some(job) => job.pids(),
            None => Vec::new(),
        }
    }

    /// Whether a process of the run remains, those in `except` aside.
    pub fn may_have_members_besides(&self, except: &[u32]) -> bool {
        self.live_processes().iter().any(|p| !except.contains(p))
    }

    pub fn is_alive(&self) -> bool {
        !self.live_processes().is_empty()
    }

    /// End the whole job now.
    pub fn kill_now(&self) {
        if let Some(job) = &self.job {
            job.terminate();
        }
    }

    /// End the whole job and wait (at most `grace` plus a settle time) until no process is left in it.
    pub async fn kill_tree(&self, grace: Duration) -> KillReport {
        let mut report = KillReport::default();
        if !self.is_alive() {
            return report;
        }
        report.escalated = true;
        self.kill_now();
        let deadline = Instant::now() + grace.max(POLL) + KILL_SETTLE;
        loop {
            let live = self.live_processes();
            if live.is_empty() {
                return report;
            }
            if Instant::now() >= deadline {
                report.survivors = live;
                return report;
            }
            // Again: a process may have been starting while the job was ended.
            self.kill_now();
            tokio::time::sleep(POLL).await;
        }
    }
}
