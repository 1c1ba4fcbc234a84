//! PTY runs on Windows: a pseudo console (ConPTY, Windows 10 1809+) between two pipes, the shell started
//! with `CreateProcessW` attached to it, suspended until it is in its Job Object.
//!
//! The pipes of a pseudo console are synchronous, so one thread per session reads the output and hands
//! it over a bounded channel (the reader waits when the session is slow to take it); writes go through
//! the blocking pool. `PtyMaster` offers the calls the session makes on a Unix PTY master: `read`,
//! `write_all`, `resize`.
//!
//! ConPTY keeps its output pipe open after the shell exits, until the console is closed; the waiter
//! closes it once the process is gone (`ClosePseudoConsole` can block until the output is drained,
//! which the reader thread is doing), so the session sees the end of output as on Unix.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::sync::{Arc, Mutex};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0};
use windows_sys::Win32::System::Console::{
    ClosePseudoConsole, CreatePseudoConsole, GetConsoleMode, GetStdHandle, ResizePseudoConsole,
    COORD, HPCON, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
};
use windows_sys::Win32::System::Pipes::CreatePipe;
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, GetExitCodeProcess,
    InitializeProcThreadAttributeList, ResumeThread, UpdateProcThreadAttribute,
    WaitForSingleObject, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    EXTENDED_STARTUPINFO_PRESENT, INFINITE, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION,
    PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

use super::request::{ExecRequest, PtySize};
use super::shell::ShellConfig;
use super::windows_args::{command_line, environment_block, wide};
use crate::error::{AgentError, ErrorCode};
use crate::kill::job::Job;

/// Output chunks in flight between the reader thread and the session.
const CHUNKS_IN_FLIGHT: usize = 16;

/// The pseudo console's handle, closed once.
struct Console(Mutex<Option<HPCON>>);

// SAFETY: an HPCON is a kernel handle value, usable from any thread; the mutex serialises close/resize.
unsafe impl Send for Console {}
// SAFETY: as above.
unsafe impl Sync for Console {}

impl Console {
    fn close(&self) {
        if let Some(hpc) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // SAFETY: a live pseudo console, closed once (taken out of the option).
            unsafe { ClosePseudoConsole(hpc) };
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.close();
    }
}

/// The session's end of the pseudo console.
pub struct PtyMaster {
    input: Arc<File>,
    /// Serialises writes, so two `write_all` calls never interleave.
    writing: tokio::sync::Mutex<()>,
    output: tokio::sync::Mutex<Output>,
    console: Arc<Console>,
}

struct Output {
    chunks: tokio::sync::mpsc::Receiver<Vec<u8>>,
    /// What a short read left of the last chunk.
    rest: Vec<u8>,
}

impl PtyMaster {
    /// Read output; `Ok(0)` once the console is closed and its output drained.
    pub async fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut out = self.output.lock().await;
        if out.rest.is_empty() {
            match out.chunks.recv().await {
                Some(chunk) => out.rest = chunk,
                None => return Ok(0),
            }
        }
        let n = out.rest.len().min(buf.len());
        buf[..n].copy_from_slice(&out.rest[..n]);
        out.rest.drain(..n);
        Ok(n)
    }

    pub async fn write_all(&self, data: &[u8]) -> std::io::Result<()> {
        let _turn = self.writing.lock().await;
        let input = self.input.clone();
        let data = data.to_vec();
        tokio::task::spawn_blocking(move || (&*input).write_all(&data))
            .await
            .map_err(std::io::Error::other)?
    }

    pub fn resize(&self, size: PtySize) -> std::io::Result<()> {
        let guard = self.console.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(hpc) = *guard else {
            return Err(std::io::Error::other("the pseudo console is closed"));
        };
        // SAFETY: a live pseudo console (the lock keeps it from being closed meanwhile).
        let hr = unsafe { ResizePseudoConsole(hpc, coord(size)) };
        if hr < 0 {
            // An HRESULT, not a Win32 error code: say it as one.
            return Err(std::io::Error::other(format!(
                "ResizePseudoConsole failed with HRESULT 0x{:08X}",
                hr as u32
            )));
        }
        Ok(())
    }
}

/// Whether any of the host's standard handles is something other than a console (a pipe or a file).
fn host_stdio_redirected() -> bool {
    [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE]
        .into_iter()
        .any(|which| {
            // SAFETY: plain queries of this process's standard handles; `mode` is valid for writes.
            let handle = unsafe { GetStdHandle(which) };
            if handle.is_null() || handle == INVALID_HANDLE_VALUE {
                return false;
            }
            let mut mode = 0u32;
            // SAFETY: a handle of this process, `mode` valid for writes; fails for non-consoles.
            unsafe { GetConsoleMode(handle, &mut mode) == 0 }
        })
}

fn coord(size: PtySize) -> COORD {
    COORD {
        X: size.cols.clamp(1, i16::MAX as u16) as i16,
        Y: size.rows.clamp(1, i16::MAX as u16) as i16,
    }
}

/// The wait for a ConPTY run's exit, which then closes its console so its output ends.
pub struct ConsoleWaiter {
    process: Arc<OwnedHandle>,
    console: Arc<Console>,
}

impl ConsoleWaiter {
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        use std::os::windows::process::ExitStatusExt;
        let process = self.process.clone();
        let code = tokio::task::spawn_blocking(move || {
            let h = process.as_raw_handle() as HANDLE;
            // SAFETY: a live process handle, owned by the Arc for the call's length.
            if unsafe { WaitForSingleObject(h, INFINITE) } != WAIT_OBJECT_0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut code = 0u32;
            // SAFETY: as above; `code` is valid for writes.
            if unsafe { GetExitCodeProcess(h, &mut code) } == 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(code)
        })
        .await
        .map_err(std::io::Error::other)??;
        let console = self.console.clone();
        // May block until the reader has drained the output: off the async workers.
        let _ = tokio::task::spawn_blocking(move || console.close()).await;
        Ok(std::process::ExitStatus::from_raw(code))
    }
}

/// A ConPTY run: its pid, the session's end of the console, its waiter, and the job it is in.
pub struct ConsoleChild {
    pub pid: u32,
    pub master: PtyMaster,
    pub waiter: ConsoleWaiter,
    pub job: Job,
}

/// Two ends of an anonymous pipe.
fn pipe() -> std::io::Result<(OwnedHandle, OwnedHandle)> {
    let (mut read, mut write): (HANDLE, HANDLE) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: both out-pointers are valid; default security (not inheritable), default size.
    if unsafe { CreatePipe(&mut read, &mut write, std::ptr::null(), 0) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh handles nothing else owns.
    Ok(unsafe {
        (
            OwnedHandle::from_raw_handle(read as RawHandle),
            OwnedHandle::from_raw_handle(write as RawHandle),
        )
    })
}

fn failed(what: &str, e: std::io::Error) -> AgentError {
    AgentError::new(
        ErrorCode::SpawnFailed,
        format!("{what} failed: {e} (ConPTY needs Windows 10 1809 or later)"),
    )
}

/// Spawn `req` under `shell` on a new pseudo console of `size`, inside a new job.
pub fn spawn_conpty(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
    size: PtySize,
) -> Result<ConsoleChild, AgentError> {
    let job = Job::new().map_err(|e| super::windows::job_error(&e))?;
    let (in_read, in_write) = pipe().map_err(|e| failed("CreatePipe", e))?;
    let (out_read, out_write) = pipe().map_err(|e| failed("CreatePipe", e))?;
    let mut hpc: HPCON = Default::default();
    // SAFETY: the pipe handles are live; `hpc` is valid for writes.
    let hr = unsafe {
        CreatePseudoConsole(
            coord(size),
            in_read.as_raw_handle() as HANDLE,
            out_write.as_raw_handle() as HANDLE,
            0,
            &mut hpc,
        )
    };
    if hr < 0 {
        return Err(failed(
            "CreatePseudoConsole",
            std::io::Error::from_raw_os_error(hr),
        ));
    }
    let console = Arc::new(Console(Mutex::new(Some(hpc))));
    // The console holds its own duplicates of its ends.
    drop(in_read);
    drop(out_write);

    let process = start_attached(shell, req, env, hpc, &job)?;
    let pid = process.1;
    let process = Arc::new(process.0);

    let (tx, rx) = tokio::sync::mpsc::channel(CHUNKS_IN_FLIGHT);
    let mut output = File::from(out_read);
    std::thread::Builder::new()
        .name("agent-exec-conpty".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match output.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.blocking_send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        })
        .map_err(|e| failed("starting the console reader", e))?;
    Ok(ConsoleChild {
        pid,
        master: PtyMaster {
            input: Arc::new(File::from(in_write)),
            writing: tokio::sync::Mutex::new(()),
            output: tokio::sync::Mutex::new(Output {
                chunks: rx,
                rest: Vec::new(),
            }),
            console: console.clone(),
        },
        waiter: ConsoleWaiter { process, console },
        job,
    })
}

/// `CreateProcessW` with the console as an attribute, suspended, into `job`, then resumed.
fn start_attached(
    shell: &ShellConfig,
    req: &ExecRequest,
    env: &BTreeMap<OsString, OsString>,
    hpc: HPCON,
    job: &Job,
) -> Result<(OwnedHandle, u32), AgentError> {
    // The attribute list's size, asked first (the call fails by design and says how much).
    let mut bytes = 0usize;
    // SAFETY: a null list with a size out-pointer is the documented way to learn the size.
    unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), 1, 0, &mut bytes) };
    // usize-aligned storage for the opaque list.
    let mut storage = vec![0usize; bytes.div_ceil(std::mem::size_of::<usize>())];
    let list = storage.as_mut_ptr() as LPPROC_THREAD_ATTRIBUTE_LIST;
    // SAFETY: `storage` is at least `bytes` long and lives until DeleteProcThreadAttributeList.
    if unsafe { InitializeProcThreadAttributeList(list, 1, 0, &mut bytes) } == 0 {
        return Err(failed(
            "InitializeProcThreadAttributeList",
            std::io::Error::last_os_error(),
        ));
    }
    struct ListGuard(LPPROC_THREAD_ATTRIBUTE_LIST);
    impl Drop for ListGuard {
        fn drop(&mut self) {
            // SAFETY: initialised above, deleted once.
            unsafe { DeleteProcThreadAttributeList(self.0) };
        }
    }
    let _guard = ListGuard(list);
    // SAFETY: the attribute's value is the HPCON itself, passed by value as the API documents.
    let ok = unsafe {
        UpdateProcThreadAttribute(
            list,
            0,
            PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE as usize,
            hpc as *const core::ffi::c_void,
            std::mem::size_of::<HPCON>(),
            std::ptr::null_mut(),
            std::ptr::null(),
        )
    };
    if ok == 0 {
        return Err(failed(
            "UpdateProcThreadAttribute",
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: all-zero is a valid STARTUPINFOEXW; cb and the list are set below.
    let mut startup: STARTUPINFOEXW = unsafe { std::mem::zeroed() };
    startup.StartupInfo.cb = std::mem::size_of::<STARTUPINFOEXW>() as u32;
    startup.lpAttributeList = list;
    if host_stdio_redirected() {
        // Null standard handles, said explicitly: otherwise Windows duplicates the host's redirected
        // stdio (Node under a pipe, a service, CI) into the child, whose output then bypasses the
        // pseudo console (microsoft/terminal#11276; node-pty passes nulls the same way). With console
        // handles the kernel replaces them itself, and Wine only attaches the console when the flag
        // is absent, so the flag is set only when it is needed.
        startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    }
    let mut line = wide(&command_line(
        &shell.program,
        &shell.args,
        &req.shell_script(),
    ));
    let mut env_block = environment_block(env);
    let cwd = wide(&req.cwd.display().to_string());
    // SAFETY: all-zero is a valid PROCESS_INFORMATION, filled by the call.
    let mut info: PROCESS_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: every buffer is NUL-terminated and outlives the call; the command line is mutable as the
    // API requires; handles are not inherited (the console is passed as an attribute).
    let ok = unsafe {
        CreateProcessW(
            std::ptr::null(),
            line.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT | CREATE_SUSPENDED,
            env_block.as_mut_ptr() as *const core::ffi::c_void,
            cwd.as_ptr(),
            &startup.StartupInfo,
            &mut info,
        )
    };
    if ok == 0 {
        let e = std::io::Error::last_os_error();
        return Err(super::pipes::spawn_error(&shell.program, req, &e));
    }
    // SAFETY: fresh handles from CreateProcessW, owned here.
    let process = unsafe { OwnedHandle::from_raw_handle(info.hProcess as RawHandle) };
    let thread = unsafe { OwnedHandle::from_raw_handle(info.hThread as RawHandle) };
    if let Err(e) = job.assign(process.as_raw_handle()) {
        // It has not run an instruction: end it rather than let it run outside a job.
        // SAFETY: a live process handle.
        unsafe {
            windows_sys::Win32::System::Threading::TerminateProcess(
                process.as_raw_handle() as HANDLE,
                1,
            )
        };
        return Err(super::windows::job_error(&e));
    }
    // SAFETY: the live primary thread handle.
    unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) };
    drop(thread);
    Ok((process, info.dwProcessId))
}
