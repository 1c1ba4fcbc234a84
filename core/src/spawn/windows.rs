//! Windows runs over pipes: the piped command, created suspended, put into a Job Object of its own, then
//! resumed, so that not even its first child can start outside the job (see `kill::job`).

use std::collections::BTreeMap;
use std::ffi::OsString;

use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, CREATE_NO_WINDOW, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME,
};

use super::pipes::{piped_command, spawn_error, PipeChild};
use super::request::ExecRequest;
use super::shell::ShellConfig;
use crate::error::{AgentError, ErrorCode};
use crate::kill::job::Job;

/// Spawn `req` under `shell` with pipes, inside a new job.
pub fn spawn_pipes(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
) -> Result<(PipeChild, Job), AgentError> {
    let job = Job::new().map_err(|e| job_error(&e))?;
    let mut cmd = piped_command(shell, req, env);
    cmd.creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    let child = cmd
        .spawn()
        .map_err(|e| spawn_error(&shell.program, req, &e))?;
    let mut p = PipeChild::taken(child)?;
    let handle = p
        .child
        .raw_handle()
        .expect("a child not yet waited for has a handle");
    if let Err(e) = job.assign(handle).and_then(|()| resume(p.pid)) {
        // Never let it run outside a job: it has not run a single instruction yet.
        let _ = p.child.start_kill();
        return Err(job_error(&e));
    }
    Ok((p, job))
}

pub fn job_error(e: &std::io::Error) -> AgentError {
    AgentError::new(
        ErrorCode::SpawnFailed,
        format!("Could not put the run into a Job Object ({e}), so its process tree could not be ended as a whole; the run was not started."),
    )
}

/// Resume every thread of a process created suspended (it has one: its first). `CreateProcess` hands
/// the thread handle back, but tokio's child does not keep it, so the thread is found by its owner.
pub fn resume(pid: u32) -> std::io::Result<()> {
    // SAFETY: a snapshot of the system's threads; the handle is closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: all-zero is a valid THREADENTRY32; dwSize is set as the API requires.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `entry` is valid for writes and sized; the snapshot handle is live.
    let mut more = unsafe { Thread32First(snapshot, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: a thread id from the snapshot; the handle is closed right after.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: a live thread handle with THREAD_SUSPEND_RESUME access.
                if unsafe { ResumeThread(thread) } != u32::MAX {
                    resumed += 1;
                }
                // SAFETY: closed once.
                unsafe { CloseHandle(thread) };
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot, &mut entry) } != 0;
    }
    // SAFETY: closed once.
    unsafe { CloseHandle(snapshot) };
    if resumed == 0 {
        return Err(std::io::Error::other(
            "the new process's first thread was not found to resume",
        ));
    }
    Ok(())
}
