//! The ceiling for PTY throughput: a plain blocking loop that runs `<shell> -c 'cat <file>'` on a fresh
//! pseudo-terminal (default termios, as every contender has it) and reads the master in 64 KiB reads
//! until the terminal hangs up. No async runtime, no parsing, no copies: what the kernel's tty layer
//! gives one reader. `raw_pty_cat <file> [shell]`; prints one JSON object:
//! {"bytes": N, "seconds": .., "mibPerSec": .., "reads": N}.

#[cfg(unix)]
fn main() {
    unix::main()
}

#[cfg(not(unix))]
fn main() {
    eprintln!("raw_pty_cat measures a Unix pseudo-terminal; this platform has none.");
    std::process::exit(2);
}

#[cfg(unix)]
mod unix {

    use std::io::Read;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    use nix::pty::{openpty, Winsize};

    pub fn main() {
        let file = std::env::args()
            .nth(1)
            .expect("usage: raw_pty_cat <file> [shell]");
        let shell = std::env::args().nth(2).unwrap_or_else(|| "sh".to_string());
        let size = Winsize {
            ws_row: 30,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = openpty(Some(&size), None).expect("openpty");
        let slave: OwnedFd = pty.slave;
        let slave_fd = slave.as_raw_fd();
        let started = Instant::now();
        let mut cmd = Command::new(&shell);
        cmd.args(["-c", &format!("cat '{file}'")])
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave.try_clone().expect("dup")));
        // SAFETY: setsid and ioctl are async-signal-safe; the hook makes the pty the controlling terminal,
        // as every contender does.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(slave_fd, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("spawn");
        // The command keeps its copies of the slave until dropped, and the master reads to EOF only once
        // every copy is closed.
        drop(cmd);
        drop(slave);
        let mut master = std::fs::File::from(pty.master);
        let mut buf = vec![0u8; 64 * 1024];
        let (mut bytes, mut reads) = (0u64, 0u64);
        loop {
            match master.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    bytes += n as u64;
                    reads += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // EIO: the last slave fd closed (the terminal hung up).
                Err(_) => break,
            }
        }
        child.wait().expect("wait");
        let seconds = started.elapsed().as_secs_f64();
        println!(
        "{{\"bytes\": {bytes}, \"seconds\": {seconds:.4}, \"mibPerSec\": {:.2}, \"reads\": {reads}}}",
        bytes as f64 / 1048576.0 / seconds
    );
    }
}
