//! Reading (and, for `sendmmsg`'s lengths, writing) the memory of a process whose system call the
//! supervisor is answering.
//!
//! Every read is one copy taken at one moment: the supervisor decides on that copy and, where the
//! decision matters (connect, send), acts on that copy too, never on the caller's memory again.

/// Read `buf.len()` bytes at `addr` of process `pid`; returns how many were read (0 on failure). A
/// read never crosses into an unmapped page silently: `process_vm_readv` stops there.
pub fn read(pid: u32, addr: u64, buf: &mut [u8]) -> usize {
    if buf.is_empty() {
        return 0;
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: reads into our own buffer; the remote side is checked by the kernel.
    let read = || unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    let mut n = read();
    if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) {
        // A caller that made itself non-dumpable: readable with the supervisor's capabilities,
        // which a serving thread keeps permitted but not effective (see `perform`).
        n = super::perform::with_capabilities(read);
    }
    n.max(0) as usize
}

/// Exactly `len` bytes at `addr`, or `EFAULT` (what the kernel answers for an unreadable buffer).
pub fn read_exact(pid: u32, addr: u64, len: usize) -> Result<Vec<u8>, i32> {
    let mut buf = vec![0u8; len];
    if len > 0 && read(pid, addr, &mut buf) != len {
        return Err(libc::EFAULT);
    }
    Ok(buf)
}

/// A NUL-terminated path of at most PATH_MAX bytes from the caller's memory, page by page.
pub fn read_path(pid: u32, addr: u64) -> Option<Vec<u8>> {
    read_path_or_errno(pid, addr).ok()
}

/// `read_path`, with the kernel's error when it fails: `ENAMETOOLONG` for a path with no end within
/// PATH_MAX bytes, `EFAULT` for memory that cannot be read.
pub fn read_path_or_errno(pid: u32, addr: u64) -> Result<Vec<u8>, i32> {
    const PAGE: u64 = 4096;
    const PATH_MAX: usize = 4096;
    if addr == 0 {
        return Err(libc::EFAULT);
    }
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < PATH_MAX {
        let room = (PAGE - at % PAGE) as usize;
        let mut chunk = vec![0u8; room.min(PATH_MAX - out.len())];
        let n = read(pid, at, &mut chunk);
        if n == 0 {
            return Err(libc::EFAULT);
        }
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
        at += n as u64;
    }
    Err(libc::ENAMETOOLONG)
}

/// Write `bytes` at `addr` of process `pid`: a result the kernel would have stored for the caller.
pub fn write(pid: u32, addr: u64, bytes: &[u8]) -> bool {
    let local = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: the local side is only read; the remote side is checked by the kernel.
    let n = unsafe { libc::process_vm_writev(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    n == bytes.len() as isize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_land_where_asked() {
        let me = std::process::id();
        let mut buf = *b"hello\0world";
        let at = buf.as_mut_ptr() as u64;
        assert_eq!(read_exact(me, at, 5).unwrap(), b"hello");
        assert_eq!(read_path(me, at), Some(b"hello".to_vec()));
        assert!(write(me, at + 6, b"WORLD"));
        assert_eq!(&buf[6..], b"WORLD");
        assert_eq!(read_exact(me, 8, 4), Err(libc::EFAULT));
        assert_eq!(read_path(me, 0), None);
    }
}
