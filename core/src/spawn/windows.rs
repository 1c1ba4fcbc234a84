//! Windows runs over pipes: tokio's `Command`, created suspended, put into a Job Object of its own, then
//! resumed, so that not even its first child can start outside the job (see `kill::job`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::process::Stdio;
use std::sync::Arc;

use tokio::process::Command;
use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, CREATE_NO_WINDOW, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME,
};

use super::pipes::spawn_error;
use super::process::{Io, Process, Waiter, Writer};
use super::request::{ExecRequest, StdinMode};
use super::shell::ShellConfig;
use super::windows_args::is_cmd;
use crate::error::{AgentError, ErrorCode};
use crate::kill::job::Job;

/// Spawn `req` under `shell` with pipes, inside a new job.
pub fn spawn_pipes(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
) -> Result<Process, AgentError> {
    let job = Job::new().map_err(|e| job_error(&e))?;
    let mut cmd = Command::new(&shell.program);
    cmd.args(&shell.args);
    if is_cmd(&shell.program) {
        // cmd.exe splits its command line its own way: the command goes whole inside one pair of
        // quotes, which `/s` strips.
        cmd.raw_arg(format!("\"{}\"", req.shell_script()));
    } else {
        cmd.arg(req.shell_script().as_ref());
    }
    cmd.current_dir(&req.cwd)
        .env_clear()
        .envs(env)
        .stdin(match req.stdin {
            StdinMode::Closed => Stdio::null(),
            StdinMode::Pipe => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .creation_flags(CREATE_SUSPENDED | CREATE_NO_WINDOW);
    let mut child = cmd
        .spawn()
        .map_err(|e| spawn_error(&shell.program, req, &e))?;
    let pid = child.id().ok_or_else(|| {
        AgentError::new(
            ErrorCode::SpawnFailed,
            "The child exited before its pid was read.",
        )
    })?;
    let handle = child
        .raw_handle()
        .expect("a child not yet waited for has a handle");
    if let Err(e) = job.assign(handle).and_then(|()| resume(pid)) {
        // Never let it run outside a job: it has not run a single instruction yet.
        let _ = child.start_kill();
        return Err(job_error(&e));
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let stdin = child.stdin.take();
    Ok(Process {
        pid,
        io: Io::Pipes {
            stdin: stdin.map(|s| Box::new(s) as Writer),
            stdout: Box::new(stdout),
            stderr: Box::new(stderr),
        },
        waiter: Waiter::Tokio(Box::new(child)),
        job: Some(Arc::new(job)),
    })
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
