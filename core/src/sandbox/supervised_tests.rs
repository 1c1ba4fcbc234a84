//! The supervisor judged by the world, through real sandboxed runs (issue 32): every class of call it
//! decides is made by a real process, once where the policy refuses it and once where it allows it. A
//! refusal must leave the world as it was *and* be recorded with its operation and path (the kernel's
//! read-only mounts and Landlock refuse most of these too, so only the record shows the supervisor did
//! its part); an allowed call must take effect (a supervisor that refused everything would pass the
//! first half alone).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::session::ExecOutcome;
use crate::spawn::ExecRequest;

use super::{SandboxDenial, SandboxSpec};

/// A writable root and a directory beside it (outside every root), each with a victim file.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

impl World {
    fn new() -> World {
        let dir = tempfile::Builder::new()
            .prefix("agent-exec-supervised-")
            .tempdir_in(std::env::temp_dir())
            .unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        for d in [&root, &outside] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("victim"), "original").unwrap();
            std::fs::create_dir(d.join("subdir")).unwrap();
        }
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        World {
            _dir: dir,
            root,
            outside,
        }
    }

    /// Everything under `dir` as (relative path, kind and mode, content): what a refusal must leave.
    fn state(dir: &Path) -> Vec<(String, String)> {
        use std::os::unix::fs::MetadataExt;
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                let m = std::fs::symlink_metadata(&p).unwrap();
                let content = if m.is_file() {
                    std::fs::read_to_string(&p).unwrap_or_default()
                } else {
                    String::new()
                };
                out.push((
                    p.strip_prefix(dir).unwrap().display().to_string(),
                    format!(
                        "{:o} {} {} {} {content}",
                        m.mode(),
                        m.uid(),
                        m.len(),
                        m.mtime()
                    ),
                ));
                if m.is_dir() {
                    stack.push(p);
                }
            }
        }
        out.sort();
        out
    }
}

async fn run_sandboxed(world: &World, script: &str, network: bool) -> ExecOutcome {
    let file = world.root.join(".probe.py");
    std::fs::write(&file, script).unwrap();
    let mut request = ExecRequest::new(format!("/usr/bin/python3 {}", file.display()));
    request.cwd = world.root.clone();
    run_request(world, request, network).await
}

/// A request that runs the probe script `body` (after `PROBE`) with Python in `world`'s root: saved
/// there as `name`, given `args`.
fn probe_request(world: &World, name: &str, body: &str, args: &[String]) -> ExecRequest {
    let script = world.root.join(name);
    std::fs::write(&script, format!("{PROBE}{body}")).unwrap();
    let mut request = ExecRequest::new(format!(
        "/usr/bin/python3 {} {}",
        script.display(),
        args.join(" ")
    ));
    request.cwd = world.root.clone();
    request
}

/// Run `request` sandboxed with `world`'s root as its one writable root.
async fn run_request(world: &World, mut request: ExecRequest, network: bool) -> ExecOutcome {
    request.timeout = Some(Duration::from_secs(20));
    let mut spec = SandboxSpec {
        writable_roots: Some(vec![world.root.clone()]),
        network,
        ..SandboxSpec::default()
    };
    spec.pin_roots(&world.root);
    request.sandbox = Some(spec);
    run_request_as_is(request).await
}

/// Run `request` as it is (its sandbox already set).
async fn run_request_as_is(request: ExecRequest) -> ExecOutcome {
    crate::exec::run_to_end(request, "supervised-test").await
}

fn denials(outcome: &ExecOutcome) -> &[SandboxDenial] {
    &outcome
        .sandbox
        .as_ref()
        .expect("a sandboxed run has a report")
        .denials
}

fn runs_here() -> bool {
    crate::test_needs::runs_here("sandbox", super::capabilities::get().enforceable())
}

/// One probe: a system call made with `ctypes` (so the number is exactly the one named), on a file
/// named `file` under the target directory, and the operation a refusal of it is recorded as.
struct Probe {
    label: &'static str,
    /// Python: an expression using `sc(nr, ...)`, `f(name)` and `AT`; its value, if an fd, is closed.
    call: String,
    operation: &'static str,
    /// The file the refusal names (under the target directory).
    file: &'static str,
}

/// The probes of metadata calls through a descriptor: the kernel's to refuse where the sandbox says so
/// (see `seccomp::fd_metadata_calls`), the supervisor's otherwise.
/// (`fchmod` with a plain mode, as the probe's 0o600: one that sets an execute bit is the
/// supervisor's always, see `seccomp::fd_metadata_calls`.)
/// (`fsetxattr` is the supervisor's always: an ACL grants write as `fchmod` would.)
const FD_METADATA_PROBES: &[&str] = &["fchmod", "fchown", "futimens"];

/// Does the run's report say the kernel decides metadata calls through a descriptor?
fn fd_metadata_by_kernel(outcome: &ExecOutcome) -> bool {
    outcome.sandbox.as_ref().is_some_and(|s| {
        s.mechanisms
            .iter()
            .any(|m| m.starts_with("metadata changes through a descriptor"))
    })
}

/// Files and directories every probe expects to find under its target directory.
const SEEDED_FILES: &[&str] = &[
    "victim_w",
    "victim_u",
    "victim_u2",
    "victim_r",
    "victim_r2",
    "victim_r3",
    "victim_l",
    "victim_l2",
    "victim_t",
    "victim_c",
    "victim_c2",
    "victim_c3",
    "victim_c4",
    "victim_o",
    "victim_o2",
    "victim_o3",
    "victim_o4",
    "victim_m",
    "victim_m2",
    "victim_m3",
    "victim_m4",
    "victim_x",
    "victim_x2",
    "victim_x3",
    "victim_x4",
    "victim_k",
    "victim_k2",
];
const SEEDED_DIRS: &[&str] = &["sub_a", "sub_b"];

fn seed(dir: &Path) {
    for f in SEEDED_FILES {
        std::fs::write(dir.join(f), "original").unwrap();
    }
    for d in SEEDED_DIRS {
        std::fs::create_dir(dir.join(d)).unwrap();
    }
}

/// Every call the supervisor judges by path, by its own number (the legacy x86-64 calls too).
fn file_probes() -> Vec<Probe> {
    use libc::*;
    let p = |label, call: String, operation, file| Probe {
        label,
        call,
        operation,
        file,
    };
    let mut v = vec![
        p(
            "openat-create",
            format!(
                "sc({SYS_openat}, AT, f('w1'), {}, 0o644)",
                O_WRONLY | O_CREAT
            ),
            "write",
            "w1",
        ),
        p(
            "openat-trunc",
            format!(
                "sc({SYS_openat}, AT, f('victim_w'), {}, 0)",
                O_WRONLY | O_TRUNC
            ),
            "write",
            "victim_w",
        ),
        p(
            "openat2-create",
            format!(
                "sc({SYS_openat2}, AT, f('w2'), how({}, 0o644), 24)",
                O_RDWR | O_CREAT
            ),
            "write",
            "w2",
        ),
        p(
            "mkdirat",
            format!("sc({SYS_mkdirat}, AT, f('d1'), 0o755)"),
            "mkdir",
            "d1",
        ),
        p(
            "mknodat",
            format!("sc({SYS_mknodat}, AT, f('n1'), {}, 0)", S_IFIFO | 0o644),
            "mknod",
            "n1",
        ),
        p(
            "unlinkat",
            format!("sc({SYS_unlinkat}, AT, f('victim_u'), 0)"),
            "remove",
            "victim_u",
        ),
        p(
            "unlinkat-dir",
            format!("sc({SYS_unlinkat}, AT, f('sub_a'), {AT_REMOVEDIR})"),
            "remove",
            "sub_a",
        ),
        p(
            "renameat",
            format!("sc({SYS_renameat}, AT, f('victim_r'), AT, f('renamed1'))"),
            "rename",
            "victim_r",
        ),
        p(
            "renameat2",
            format!("sc({SYS_renameat2}, AT, f('victim_r2'), AT, f('renamed2'), 0)"),
            "rename",
            "victim_r2",
        ),
        p(
            "linkat",
            format!("sc({SYS_linkat}, AT, f('victim_l'), AT, f('hard1'), 0)"),
            "link",
            "hard1",
        ),
        p(
            "symlinkat",
            format!("sc({SYS_symlinkat}, '/etc/hostname', AT, f('sym1'))"),
            "symlink",
            "sym1",
        ),
        p(
            "truncate",
            format!("sc({SYS_truncate}, f('victim_t'), 0)"),
            "truncate",
            "victim_t",
        ),
        p(
            "fchmodat",
            format!("sc({SYS_fchmodat}, AT, f('victim_c'), 0o600)"),
            "chmod",
            "victim_c",
        ),
        p(
            "fchmodat2",
            format!(
                "sc({}, AT, f('victim_c2'), 0o600, 0)",
                super::seccomp::SYS_FCHMODAT2
            ),
            "chmod",
            "victim_c2",
        ),
        p(
            "fchmod",
            format!("sc({SYS_fchmod}, rd('victim_c3'), 0o600)"),
            "chmod",
            "victim_c3",
        ),
        p(
            "fchownat",
            format!("sc({SYS_fchownat}, AT, f('victim_o'), -1, -1, 0)"),
            "chown",
            "victim_o",
        ),
        p(
            "fchown",
            format!("sc({SYS_fchown}, rd('victim_o2'), -1, -1)"),
            "chown",
            "victim_o2",
        ),
        p(
            "utimensat",
            format!("sc({SYS_utimensat}, AT, f('victim_m'), 0, 0)"),
            "utime",
            "victim_m",
        ),
        p(
            "futimens",
            format!("sc({SYS_utimensat}, rd('victim_m4'), 0, 0, 0)"),
            "utime",
            "victim_m4",
        ),
        p(
            "setxattr",
            format!("sc({SYS_setxattr}, f('victim_x'), 'user.t', '1', 1, 0)"),
            "xattr",
            "victim_x",
        ),
        p(
            "lsetxattr",
            format!("sc({SYS_lsetxattr}, f('victim_x2'), 'user.t', '1', 1, 0)"),
            "xattr",
            "victim_x2",
        ),
        p(
            "fsetxattr",
            format!("sc({SYS_fsetxattr}, rd('victim_x3'), 'user.t', '1', 1, 0)"),
            "xattr",
            "victim_x3",
        ),
        p(
            "setxattrat",
            format!(
                "sc({}, AT, f('victim_x4'), 0, 'user.t', xargs(b'1'), 16)",
                super::seccomp::SYS_SETXATTRAT
            ),
            "xattr",
            "victim_x4",
        ),
        p(
            "removexattrat",
            format!(
                "sc({}, AT, f('victim_x4'), 0, 'user.t')",
                super::seccomp::SYS_REMOVEXATTRAT
            ),
            "xattr",
            "victim_x4",
        ),
        p(
            "flock",
            format!("sc({SYS_flock}, rd('victim_k'), {LOCK_EX})"),
            "lock",
            "victim_k",
        ),
        p(
            "fcntl-setlk",
            format!("sc({SYS_fcntl}, rd('victim_k2'), {F_SETLK}, lock({F_RDLCK}))"),
            "lock",
            "victim_k2",
        ),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        p(
            "open-create",
            format!("sc({SYS_open}, f('w3'), {}, 0o644)", O_WRONLY | O_CREAT),
            "write",
            "w3",
        ),
        p(
            "creat",
            format!("sc({SYS_creat}, f('w4'), 0o644)"),
            "write",
            "w4",
        ),
        p(
            "mkdir",
            format!("sc({SYS_mkdir}, f('d2'), 0o755)"),
            "mkdir",
            "d2",
        ),
        p(
            "mknod",
            format!("sc({SYS_mknod}, f('n2'), {}, 0)", S_IFIFO | 0o644),
            "mknod",
            "n2",
        ),
        p(
            "unlink",
            format!("sc({SYS_unlink}, f('victim_u2'))"),
            "remove",
            "victim_u2",
        ),
        p(
            "rmdir",
            format!("sc({SYS_rmdir}, f('sub_b'))"),
            "remove",
            "sub_b",
        ),
        p(
            "rename",
            format!("sc({SYS_rename}, f('victim_r3'), f('renamed3'))"),
            "rename",
            "victim_r3",
        ),
        p(
            "link",
            format!("sc({SYS_link}, f('victim_l2'), f('hard2'))"),
            "link",
            "hard2",
        ),
        p(
            "symlink",
            format!("sc({SYS_symlink}, '/etc/hostname', f('sym2'))"),
            "symlink",
            "sym2",
        ),
        p(
            "chmod",
            format!("sc({SYS_chmod}, f('victim_c4'), 0o600)"),
            "chmod",
            "victim_c4",
        ),
        p(
            "chown",
            format!("sc({SYS_chown}, f('victim_o3'), -1, -1)"),
            "chown",
            "victim_o3",
        ),
        p(
            "lchown",
            format!("sc({SYS_lchown}, f('victim_o4'), -1, -1)"),
            "chown",
            "victim_o4",
        ),
        p(
            "utimes",
            format!("sc({SYS_utimes}, f('victim_m2'), 0)"),
            "utime",
            "victim_m2",
        ),
        p(
            "futimesat",
            format!("sc({SYS_futimesat}, AT, f('victim_m3'), 0)"),
            "utime",
            "victim_m3",
        ),
    ]);
    v
}

/// The Python helper every probe program ends its prelude with: `probe(label, fn)` prints `label ok`
/// or `label <errno name>`.
const PROBE: &str = r#"import errno
def probe(label, fn):
    try:
        fn()
        print(label, 'ok', flush=True)
    except OSError as e:
        print(label, errno.errorcode.get(e.errno, str(e.errno)), flush=True)
"#;

/// The Python program that makes `probes` against `target` and prints one `label result` line each
/// (`ok`, or the errno's name).
fn probe_script(target: &Path, probes: &[Probe]) -> String {
    let mut s = format!(
        r#"import ctypes, errno, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
T = {target:?}
AT = -100
def arg(a):
    if isinstance(a, str): return ctypes.c_char_p(a.encode())
    if isinstance(a, bytes): return ctypes.c_char_p(a)
    return ctypes.c_long(a)
def sc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[arg(a) for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def f(name): return os.path.join(T, name)
def rd(name): return os.open(f(name), os.O_RDONLY)
def how(flags, mode): return struct.pack('QQQ', flags, mode, 0)
def lock(kind): return struct.pack('hhqqi4x', kind, 0, 0, 0, 0)
_kept = []
def xargs(value):
    buf = ctypes.create_string_buffer(value, len(value))
    _kept.append(buf)
    return struct.pack('QII', ctypes.addressof(buf), len(value), 0)
{PROBE}"#,
        target = target.display().to_string()
    );
    for p in probes {
        s.push_str(&format!(
            "probe({:?}, lambda: {})
",
            p.label, p.call
        ));
    }
    s
}

fn results(outcome: &ExecOutcome) -> std::collections::HashMap<String, String> {
    outcome
        .output
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// The result probe `label` printed in `outcome` (see [`results`]); a probe that printed none fails
/// the test, with the run's whole output to say why.
fn result_of(
    got: &std::collections::HashMap<String, String>,
    outcome: &ExecOutcome,
    label: &str,
) -> String {
    got.get(label)
        .cloned()
        .unwrap_or_else(|| panic!("{label}: {}", outcome.output))
}

#[tokio::test]
async fn every_path_call_outside_the_roots_is_refused_recorded_and_changes_nothing() {
    if !runs_here() {
        return;
    }
    let world = World::new();
    seed(&world.outside);
    let before = World::state(&world.outside);
    let probes = file_probes();
    let outcome = run_sandboxed(&world, &probe_script(&world.outside, &probes), false).await;
    let got = results(&outcome);
    assert_eq!(
        World::state(&world.outside),
        before,
        "a refused call changed the world"
    );
    let denials = denials(&outcome);
    let by_kernel = fd_metadata_by_kernel(&outcome);
    for p in &probes {
        let result = got
            .get(p.label)
            .unwrap_or_else(|| panic!("{} not run: {}", p.label, outcome.output));
        assert_ne!(result, "ok", "{} succeeded outside the roots", p.label);
        if result == "ENOSYS" {
            // A call this kernel does not have (setxattrat and removexattrat are Linux 6.13).
            continue;
        }
        if by_kernel && FD_METADATA_PROBES.contains(&p.label) {
            // The kernel's refusal (a read-only mount), which the supervisor never saw.
            assert_eq!(result, "EROFS", "{}", p.label);
            continue;
        }
        let path = world.outside.join(p.file).display().to_string();
        // Recorded with its operation, its path, and the call by its own name.
        let call = p.label.split('-').next().unwrap_or(p.label);
        assert!(
            denials.iter().any(|d| d.operation == p.operation
                && d.path.as_deref() == Some(&path)
                && d.detail.starts_with(call)),
            "{} ({result}) not recorded as {} of {path} by {call}: {denials:#?}",
            p.label,
            p.operation
        );
    }
}

#[tokio::test]
async fn every_path_call_inside_the_roots_takes_effect_unrecorded() {
    if !runs_here() {
        return;
    }
    let world = World::new();
    let target = world.root.join("work");
    std::fs::create_dir(&target).unwrap();
    seed(&target);
    let probes = file_probes();
    let outcome = run_sandboxed(&world, &probe_script(&target, &probes), false).await;
    let got = results(&outcome);
    for p in &probes {
        assert_eq!(
            got.get(p.label).map(String::as_str),
            Some("ok"),
            "{}: {}",
            p.label,
            outcome.output
        );
    }
    assert!(denials(&outcome).is_empty(), "{:#?}", denials(&outcome));
    // What the calls did is there.
    for made in [
        "w1", "w2", "d1", "n1", "renamed1", "renamed2", "hard1", "sym1",
    ] {
        assert!(
            std::fs::symlink_metadata(target.join(made)).is_ok(),
            "{made} not made"
        );
    }
    for gone in ["victim_u", "sub_a", "victim_r", "victim_r2"] {
        assert!(
            std::fs::symlink_metadata(target.join(gone)).is_err(),
            "{gone} still there"
        );
    }
    assert_eq!(std::fs::read(target.join("victim_t")).unwrap(), b"");
}

/// Python lines that print `label result` for each socket operation (`ok` or the errno's name).
const SOCKET_SCRIPT: &str = r#"import socket, sys, os
root, outside = sys.argv[1], sys.argv[2]
def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b'reached')
    s.close()
def send(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b'reached', path)
def bind_abstract():
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind('\0agent-exec-probe-%d' % os.getpid())
def tcp(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(('127.0.0.1', port))
def udp(port):
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'reached', ('127.0.0.1', port))
probe('tcp', lambda: tcp(int(sys.argv[3])))
probe('udp', lambda: udp(int(sys.argv[4])))
probe('connect-outside', lambda: connect(outside + '/stream.sock'))
probe('connect-inside', lambda: connect(root + '/stream.sock'))
probe('send-outside', lambda: send(outside + '/dgram.sock'))
probe('send-inside', lambda: send(root + '/dgram.sock'))
probe('bind-abstract', bind_abstract)
probe('bind-inside', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind(root + '/made.sock'))
probe('mkdir-existing', lambda: os.mkdir(outside + '/subdir'))
probe('protected-hook', lambda: open(root + '/.git/hooks/pre-commit', 'w'))
probe('dot-git-file', lambda: open(root + '/subdir/.git', 'w'))
probe('rename-dot-git', lambda: os.rename(root + '/victim', root + '/subdir/.git'))
import fcntl, struct as _s
def unlock_outside():
    fd = os.open(outside + '/victim', os.O_RDONLY)
    fcntl.fcntl(fd, fcntl.F_SETLK, _s.pack('hhqqi4x', fcntl.F_UNLCK, 0, 0, 0, 0))
probe('unlock-outside', unlock_outside)
"#;

#[tokio::test]
async fn sockets_reach_only_what_the_policy_allows_and_every_refusal_is_named() {
    use std::os::unix::net::{UnixDatagram, UnixListener};
    if !runs_here() {
        return;
    }
    let world = World::new();
    // Host listeners the run must not reach (outside the roots, and on the host's loopback) and ones
    // it may (inside its root).
    let outside_stream = UnixListener::bind(world.outside.join("stream.sock")).unwrap();
    let inside_stream = UnixListener::bind(world.root.join("stream.sock")).unwrap();
    let outside_dgram = UnixDatagram::bind(world.outside.join("dgram.sock")).unwrap();
    let inside_dgram = UnixDatagram::bind(world.root.join("dgram.sock")).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    for l in [&outside_stream, &inside_stream] {
        l.set_nonblocking(true).unwrap();
    }
    for d in [&outside_dgram, &inside_dgram] {
        d.set_nonblocking(true).unwrap();
    }
    tcp.set_nonblocking(true).unwrap();
    udp.set_nonblocking(true).unwrap();
    let request = probe_request(
        &world,
        ".sockets.py",
        SOCKET_SCRIPT,
        &[
            world.root.display().to_string(),
            world.outside.display().to_string(),
            tcp.local_addr().unwrap().port().to_string(),
            udp.local_addr().unwrap().port().to_string(),
        ],
    );
    let outcome = run_request(&world, request, false).await;
    let got = results(&outcome);
    let denials = denials(&outcome);
    let recorded = |op: &str, path: Option<&Path>| {
        let path = path.map(|p| p.display().to_string());
        denials.iter().any(|d| d.operation == op && d.path == path)
    };
    let result = |label: &str| result_of(&got, &outcome, label);
    // Refused, recorded, and nothing arrived.
    for label in [
        "tcp",
        "udp",
        "connect-outside",
        "send-outside",
        "bind-abstract",
        "protected-hook",
        "dot-git-file",
        "rename-dot-git",
    ] {
        assert_ne!(result(label), "ok", "{label}");
    }
    assert!(
        recorded("rename", Some(&world.root.join("subdir/.git"))),
        "{denials:#?}"
    );
    assert!(
        world.root.join("victim").exists(),
        "the renamed file is gone"
    );
    // Releasing a lock is never refused (there is nothing to hold).
    assert_eq!(result("unlock-outside"), "ok");
    assert!(tcp.accept().is_err(), "the host's TCP listener was reached");
    assert!(
        udp.recv(&mut [0; 16]).is_err(),
        "the host's UDP socket was reached"
    );
    assert!(
        outside_stream.accept().is_err(),
        "a socket outside the roots was reached"
    );
    assert!(
        outside_dgram.recv(&mut [0; 16]).is_err(),
        "a datagram went outside the roots"
    );
    assert!(
        recorded("connect", Some(&world.outside.join("stream.sock"))),
        "{denials:#?}"
    );
    assert!(
        recorded("send", Some(&world.outside.join("dgram.sock"))),
        "{denials:#?}"
    );
    assert!(recorded("bind", None), "{denials:#?}");
    assert!(
        denials
            .iter()
            .any(|d| d.operation == "network" && d.detail.contains("AF_INET")),
        "{denials:#?}"
    );
    assert!(
        recorded("write", Some(&world.root.join(".git/hooks/pre-commit"))),
        "{denials:#?}"
    );
    assert!(
        recorded("write", Some(&world.root.join("subdir/.git"))),
        "{denials:#?}"
    );
    assert!(!world.root.join(".git/hooks/pre-commit").exists());
    assert!(!world.root.join("subdir/.git").exists());
    // Allowed, and arrived.
    for label in ["connect-inside", "send-inside", "bind-inside"] {
        assert_eq!(result(label), "ok", "{label}");
    }
    let (mut conn, _) = inside_stream
        .accept()
        .expect("the socket inside the root was reached");
    let mut got_bytes = Vec::new();
    conn.set_nonblocking(false).unwrap();
    std::io::Read::read_to_end(&mut conn, &mut got_bytes).unwrap();
    assert_eq!(got_bytes, b"reached");
    let mut buf = [0; 16];
    let n = inside_dgram
        .recv(&mut buf)
        .expect("the datagram inside the root arrived");
    assert_eq!(&buf[..n], b"reached");
    // The kernel's own answer is not a refusal: a directory that is there.
    assert_eq!(result("mkdir-existing"), "EEXIST");
    assert!(
        !denials.iter().any(|d| d.operation == "mkdir"),
        "{denials:#?}"
    );
}

/// The network by domain (supervisor side): TCP reaches the sandbox's proxy and nothing else; a direct
/// connection, a TCP fast-open send, UDP and an IP bind are refused and recorded, and a host listener
/// sees only what the proxy let through.
const DOMAIN_SCRIPT: &str = r#"import os, socket, sys
port = int(sys.argv[1])
proxy = os.environ['HTTP_PROXY'].rsplit(':', 1)
proxy_host, proxy_port = proxy[0].split('//')[1], int(proxy[1].strip('/'))
def direct():
    socket.create_connection(('127.0.0.1', port), timeout=5)
def via_proxy():
    s = socket.create_connection((proxy_host, proxy_port), timeout=5)
    s.sendall(('GET http://app.localhost:%d/through HTTP/1.1\r\nHost: app.localhost:%d\r\n\r\n' % (port, port)).encode())
    data = s.recv(4096)
    if b'200' not in data.split(b'\r\n')[0]:
        raise OSError(errno.EPROTO, data[:40])
def via_proxy_v6():
    # A dual-stack client (Java's sockets are IPv6 by default) reaches the proxy by its v4-mapped address.
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(('::ffff:' + proxy_host, proxy_port))
    s.sendall(('GET http://app.localhost:%d/through-v6 HTTP/1.1\r\nHost: app.localhost:%d\r\n\r\n' % (port, port)).encode())
    data = s.recv(4096)
    if b'200' not in data.split(b'\r\n')[0]:
        raise OSError(errno.EPROTO, data[:40])
def refused_by_proxy():
    s = socket.create_connection((proxy_host, proxy_port), timeout=5)
    s.sendall(('GET http://other.localhost:%d/refused HTTP/1.1\r\nHost: other.localhost:%d\r\n\r\n' % (port, port)).encode())
    data = s.recv(4096)
    if b'403' not in data.split(b'\r\n')[0]:
        raise OSError(errno.EPROTO, data[:40])
def fast_open():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.sendto(b'x', socket.MSG_FASTOPEN, ('127.0.0.1', port))
def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
def bind_ip():
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).bind(('127.0.0.1', 0))
probe('via-proxy', via_proxy)
probe('via-proxy-v6', via_proxy_v6)
probe('refused-by-proxy', refused_by_proxy)
probe('direct', direct)
probe('fast-open', fast_open)
probe('udp', udp)
probe('bind-ip', bind_ip)
import ctypes
_libc = ctypes.CDLL(None, use_errno=True)
def short_address(family, length, call):
    s = socket.socket(family, socket.SOCK_STREAM)
    addr = ctypes.create_string_buffer(struct.pack('H', family) + b'\x00' * 30, 32)
    if getattr(_libc, call)(s.fileno(), addr, length) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
import struct
probe('short-inet-connect', lambda: short_address(socket.AF_INET, 4, 'connect'))
probe('short-inet6-connect', lambda: short_address(socket.AF_INET6, 16, 'connect'))
probe('short-inet-bind', lambda: short_address(socket.AF_INET, 4, 'bind'))
"#;

#[tokio::test]
async fn by_domain_tcp_reaches_the_proxy_only_and_every_other_way_out_is_named() {
    use std::io::{Read, Write};
    if !runs_here() {
        return;
    }
    let world = World::new();
    // The origin: answers whatever reaches it, and counts who did.
    let origin = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = origin.local_addr().unwrap().port();
    let reached = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = reached.clone();
    std::thread::spawn(move || {
        for conn in origin.incoming() {
            let Ok(mut c) = conn else { break };
            let mut buf = [0u8; 4096];
            let n = c.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            seen.lock().unwrap().push(head);
            let _ =
                c.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        }
    });
    let script = world.root.join(".domains.py");
    std::fs::write(&script, format!("{PROBE}{DOMAIN_SCRIPT}")).unwrap();
    let mut request = ExecRequest::new(format!("/usr/bin/python3 {} {port}", script.display()));
    request.cwd = world.root.clone();
    request.timeout = Some(Duration::from_secs(20));
    let mut spec = SandboxSpec {
        writable_roots: Some(vec![world.root.clone()]),
        domains: Some(super::DomainPolicy {
            allow: vec!["app.localhost".into()],
            deny: Vec::new(),
            allow_localhost: vec![port],
            on_request: None,
        }),
        ..SandboxSpec::default()
    };
    spec.pin_roots(&world.root);
    request.sandbox = Some(spec);
    let outcome = run_request_as_is(request).await;
    let got = results(&outcome);
    let result = |label: &str| result_of(&got, &outcome, label);
    assert_eq!(result("via-proxy"), "ok", "{}", outcome.output);
    assert_eq!(result("via-proxy-v6"), "ok", "{}", outcome.output);
    assert_eq!(result("refused-by-proxy"), "ok", "{}", outcome.output);
    for label in ["direct", "fast-open", "udp", "bind-ip"] {
        assert_ne!(result(label), "ok", "{label}");
    }
    // An address too short for its family is refused (or the kernel's EINVAL), never a crash of the
    // supervisor: each has its answer, and the run went on to its end.
    for label in [
        "short-inet-connect",
        "short-inet6-connect",
        "short-inet-bind",
    ] {
        let got = result(label);
        assert!(
            matches!(got.as_str(), "EACCES" | "EINVAL"),
            "{label}: {got}"
        );
    }
    // Only the proxy's request reached the origin.
    let mut reached = reached.lock().unwrap().clone();
    reached.sort();
    assert_eq!(reached.len(), 2, "{reached:?}");
    assert!(reached[0].starts_with("GET /through "), "{reached:?}");
    assert!(reached[1].starts_with("GET /through-v6 "), "{reached:?}");
    let denials = denials(&outcome);
    let named = |op: &str, detail: &str| {
        denials
            .iter()
            .any(|d| d.operation == op && d.detail.starts_with(detail))
    };
    assert!(named("network", "connect(AF_INET)"), "{denials:#?}");
    assert!(named("network", "socket(AF_INET)"), "{denials:#?}");
    // The proxy's refusal names the process that asked, as the supervisor's refusals do: the same
    // Python process made both.
    let by_proxy = denials
        .iter()
        .find(|d| d.detail == "GET" && d.path == Some(format!("other.localhost:{port}")))
        .unwrap_or_else(|| panic!("{denials:#?}"));
    let direct = denials
        .iter()
        .find(|d| d.detail.starts_with("connect(AF_INET)"))
        .unwrap();
    assert!(by_proxy.pid != 0, "{by_proxy:?}");
    assert_eq!(by_proxy.pid, direct.pid, "{denials:#?}");
    assert!(named("bind", "bind(AF_INET)"), "{denials:#?}");
    assert!(
        denials
            .iter()
            .any(|d| d.detail.starts_with("sendto") || d.detail.starts_with("sendmsg")),
        "{denials:#?}"
    );
}

/// The message calls with the network off (Python lines, as `SOCKET_SCRIPT`): `sendmsg` with an fd
/// and `sendmmsg` batches, judged message by message as `connect` judges an address; addresses of
/// other families and of odd lengths; and a broken pipe, whose `SIGPIPE` the supervisor must deliver
/// because it made the send itself.
const MESSAGE_SCRIPT: &str = r#"import array, ctypes, os, signal, socket, struct, sys
root, outside, tcp_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
def check(r):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def dgram(): return socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
def sun(path):
    b = path.encode()
    return ctypes.create_string_buffer(struct.pack('H', socket.AF_UNIX) + b + b'\0', 110), 3 + len(b)
passed = os.open(root + '/passed.txt', os.O_RDONLY)
def sendmsg_fd(path):
    dgram().sendmsg([b'with-fd'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [passed]))], 0, path)
class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [('name', ctypes.c_void_p), ('namelen', ctypes.c_uint32), ('iov', ctypes.POINTER(iovec)),
                ('iovlen', ctypes.c_size_t), ('control', ctypes.c_void_p), ('controllen', ctypes.c_size_t),
                ('flags', ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [('hdr', msghdr), ('len', ctypes.c_uint)]
def sendmmsg(dests):
    s, keep = dgram(), []
    arr = (mmsghdr * len(dests))()
    for i, (path, payload) in enumerate(dests):
        name, namelen = sun(path)
        data = ctypes.create_string_buffer(payload, len(payload))
        iov = iovec(ctypes.cast(data, ctypes.c_void_p), len(payload))
        keep += [name, data, iov]
        arr[i].hdr.name, arr[i].hdr.namelen = ctypes.cast(name, ctypes.c_void_p), namelen
        arr[i].hdr.iov, arr[i].hdr.iovlen = ctypes.pointer(iov), 1
    n = check(libc.sendmmsg(s.fileno(), arr, len(dests), 0))
    return '%d:%s' % (n, ','.join(str(arr[i].len) for i in range(len(dests))))
def show(label, fn):
    try:
        print(label, fn(), flush=True)
    except OSError as e:
        print(label, errno.errorcode.get(e.errno, str(e.errno)), flush=True)
def unspec_connect():
    s = dgram()
    s.connect(root + '/dgram.sock')
    check(libc.connect(s.fileno(), ctypes.create_string_buffer(16), 16))
    try:
        s.send(b'still-connected')
    except OSError as e:
        if e.errno in (errno.ENOTCONN, errno.EDESTADDRREQ):
            return
        raise
    raise OSError(errno.EISCONN, 'AF_UNSPEC left the association')
def unspec_send():
    check(libc.sendto(dgram().fileno(), b'x', 1, 0, ctypes.create_string_buffer(16), 16))
def inet_on_unix(call):
    sin = struct.pack('!HH4s8x', socket.AF_INET, tcp_port, socket.inet_aton('127.0.0.1'))
    sin = struct.pack('H', socket.AF_INET) + sin[2:]
    if call == 'connect':
        check(libc.connect(dgram().fileno(), sin, 16))
    else:
        check(libc.sendto(dgram().fileno(), b'x', 1, 0, sin, 16))
def connect_len(length):
    name, _ = sun(root + '/stream.sock')
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    check(libc.connect(s.fileno(), name, length))
    s.sendall(b'full-length')
def broken_pipe():
    signal.signal(signal.SIGPIPE, lambda *a: None)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGPIPE])
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    b.close()
    try:
        a.sendmsg([b'x'])
        return 'sent'
    except BrokenPipeError:
        pass
    got = signal.sigtimedwait([signal.SIGPIPE], 10)
    return 'EPIPE+SIGPIPE' if got else 'EPIPE-only'
probe('sendmsg-fd-inside', lambda: sendmsg_fd(root + '/dgram.sock'))
probe('sendmsg-fd-outside', lambda: sendmsg_fd(outside + '/dgram.sock'))
show('sendmmsg-partial', lambda: sendmmsg([(root + '/dgram.sock', b'm1'), (root + '/dgram.sock', b'm2!'),
                                           (outside + '/dgram.sock', b'm3'), (root + '/dgram.sock', b'm4')]))
show('sendmmsg-first-refused', lambda: sendmmsg([(outside + '/dgram.sock', b'n1'), (root + '/dgram.sock', b'n2')]))
probe('unspec-connect', unspec_connect)
probe('unspec-send', unspec_send)
probe('inet-connect', lambda: inet_on_unix('connect'))
probe('inet-send', lambda: inet_on_unix('sendto'))
probe('connect-full-length', lambda: connect_len(110))
probe('connect-too-long', lambda: connect_len(ctypes.c_uint32(0xFFFFFFFF)))
show('broken-pipe', broken_pipe)
"#;

/// Every datagram waiting on `socket`, with the fds that came with each (read from them, then closed).
fn datagrams_with_fds(socket: &std::os::unix::net::UnixDatagram) -> Vec<(Vec<u8>, Vec<String>)> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut out = Vec::new();
    loop {
        let mut data = [0u8; 256];
        let mut control = [0u64; 16];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        // SAFETY: a zeroed msghdr is valid; it points at buffers that outlive the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: recvmsg into the buffers above; the socket is non-blocking.
        let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            break;
        }
        let mut fds = Vec::new();
        // SAFETY: the CMSG_* walk stays within msg_controllen, as the kernel filled it.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                    let count = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                    let first = libc::CMSG_DATA(c).cast::<i32>();
                    for i in 0..count {
                        let fd = OwnedFd::from_raw_fd(first.add(i).read_unaligned());
                        let mut file = std::fs::File::from(fd);
                        let mut s = String::new();
                        std::io::Read::read_to_string(&mut file, &mut s).unwrap();
                        fds.push(s);
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        out.push((data[..n as usize].to_vec(), fds));
    }
    out
}

#[tokio::test]
async fn messages_go_where_connect_may_batches_stop_at_the_first_refusal_and_pipes_still_signal() {
    use std::os::unix::net::{UnixDatagram, UnixListener};
    if !runs_here() {
        return;
    }
    let world = World::new();
    std::fs::write(world.root.join("passed.txt"), "passed along").unwrap();
    let inside_dgram = UnixDatagram::bind(world.root.join("dgram.sock")).unwrap();
    let outside_dgram = UnixDatagram::bind(world.outside.join("dgram.sock")).unwrap();
    let inside_stream = UnixListener::bind(world.root.join("stream.sock")).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    for d in [&inside_dgram, &outside_dgram] {
        d.set_nonblocking(true).unwrap();
    }
    inside_stream.set_nonblocking(true).unwrap();
    tcp.set_nonblocking(true).unwrap();
    let request = probe_request(
        &world,
        ".messages.py",
        MESSAGE_SCRIPT,
        &[
            world.root.display().to_string(),
            world.outside.display().to_string(),
            tcp.local_addr().unwrap().port().to_string(),
        ],
    );
    let outcome = run_request(&world, request, false).await;
    let got = results(&outcome);
    let result = |label: &str| result_of(&got, &outcome, label);
    let denials = denials(&outcome);
    let named = |op: &str, path: Option<&Path>, detail: &str| {
        let path = path.map(|p| p.display().to_string());
        denials
            .iter()
            .any(|d| d.operation == op && d.path == path && d.detail == detail)
    };
    let outside_sock = world.outside.join("dgram.sock");

    // A message with an fd reaches a socket inside the roots, the fd with it; outside, nothing does.
    assert_eq!(result("sendmsg-fd-inside"), "ok");
    assert_ne!(result("sendmsg-fd-outside"), "ok");
    assert!(
        named("send", Some(&outside_sock), "sendmsg(AF_UNIX)"),
        "{denials:#?}"
    );
    // A batch is sent up to its first refused message and answers how many went, each one's length
    // written back as the kernel writes it; a batch refused at its first message fails whole.
    assert_eq!(result("sendmmsg-partial"), "2:2,3,0,0");
    assert_eq!(result("sendmmsg-first-refused"), "EACCES");
    assert!(
        named("send", Some(&outside_sock), "sendmmsg(AF_UNIX)"),
        "{denials:#?}"
    );
    let arrived = datagrams_with_fds(&inside_dgram);
    let payloads: Vec<&[u8]> = arrived.iter().map(|(d, _)| d.as_slice()).collect();
    assert_eq!(
        payloads,
        [&b"with-fd"[..], b"m1", b"m2!"],
        "what reached the socket inside the root"
    );
    assert_eq!(
        arrived[0].1,
        ["passed along"],
        "the fd sent with the message"
    );
    assert!(
        outside_dgram.recv(&mut [0; 64]).is_err(),
        "a message went outside the roots"
    );
    // AF_UNSPEC dissolves a datagram association (the kernel's own meaning, not a refusal); as a
    // destination it names nothing and is refused.
    assert_eq!(result("unspec-connect"), "ok", "{}", outcome.output);
    assert_ne!(result("unspec-send"), "ok");
    assert!(named("network", None, "sendto(AF_UNSPEC)"), "{denials:#?}");
    // An IP address on a Unix socket is the network, named as such, and nothing reaches the host.
    assert_ne!(result("inet-connect"), "ok");
    assert_ne!(result("inet-send"), "ok");
    assert!(named("network", None, "connect(AF_INET)"), "{denials:#?}");
    assert!(named("network", None, "sendto(AF_INET)"), "{denials:#?}");
    assert!(tcp.accept().is_err(), "the host's TCP listener was reached");
    // Address lengths as the kernel takes them: a full `sockaddr_un` connects, a longer one is EINVAL.
    assert_eq!(result("connect-full-length"), "ok");
    assert_eq!(result("connect-too-long"), "EINVAL");
    let (mut conn, _) = inside_stream.accept().expect("the full-length connect");
    conn.set_nonblocking(false).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut conn, &mut bytes).unwrap();
    assert_eq!(bytes, b"full-length");
    // The supervisor made the send to a closed peer, so it delivers the SIGPIPE the kernel would have.
    assert_eq!(result("broken-pipe"), "EPIPE+SIGPIPE");
}

/// Descriptors the run can hold to things outside its roots: the devices of its own `/dev` (the
/// host's nodes, bound in) and an `allowRead` path brought back inside a hidden directory. Their data
/// flows as allowed; their metadata, the host's, cannot be changed through them, whether the kernel
/// or the supervisor decides (a chmod to the mode a file already has changes nothing but its ctime, so
/// an unguarded run would leave the host's devices as they were, and the check reads the ctime).
const DESCRIPTOR_SCRIPT: &str = r#"import os, sys
root, outside = sys.argv[1], sys.argv[2]
kept = outside + '/secret/keep.txt'
def fchmod_same(path):
    fd = os.open(path, os.O_RDONLY)
    os.fchmod(fd, os.fstat(fd).st_mode & 0o7777)
probe('dev-null-chmod', lambda: fchmod_same('/dev/null'))
probe('dev-null-times', lambda: os.utime(os.open('/dev/null', os.O_RDONLY)))
probe('dev-null-write', lambda: open('/dev/null', 'w').write('x'))
probe('dev-urandom-read', lambda: len(open('/dev/urandom', 'rb').read(8)) == 8 or 1 / 0)
probe('kept-read', lambda: open(kept).read())
probe('kept-chmod', lambda: fchmod_same(kept))
probe('kept-times', lambda: os.utime(os.open(kept, os.O_RDONLY)))
probe('hidden-read', lambda: open(outside + '/secret/other.txt').read())
probe('inside-chmod', lambda: os.fchmod(os.open(root + '/victim', os.O_RDONLY), 0o600))
"#;

#[tokio::test]
async fn descriptors_to_devices_and_kept_paths_change_no_metadata_of_the_hosts() {
    use std::os::unix::fs::MetadataExt;
    if !runs_here() || !super::capabilities::get().mount_namespace {
        return;
    }
    let world = World::new();
    let secret = world.outside.join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("keep.txt"), "kept").unwrap();
    std::fs::write(secret.join("other.txt"), "hidden").unwrap();
    let ctime = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.ctime(), m.ctime_nsec(), m.mode())
    };
    let before = [
        ctime(Path::new("/dev/null")),
        ctime(&secret.join("keep.txt")),
    ];
    let mut request = probe_request(
        &world,
        ".descriptors.py",
        DESCRIPTOR_SCRIPT,
        &[
            world.root.display().to_string(),
            world.outside.display().to_string(),
        ],
    );
    request.timeout = Some(Duration::from_secs(20));
    let mut spec = SandboxSpec {
        writable_roots: Some(vec![world.root.clone()]),
        deny_read: vec![secret.clone()],
        allow_read: vec![secret.join("keep.txt")],
        ..SandboxSpec::default()
    };
    spec.pin_roots(&world.root);
    request.sandbox = Some(spec);
    let outcome = run_request_as_is(request).await;
    let got = results(&outcome);
    let result = |label: &str| result_of(&got, &outcome, label);
    for label in [
        "dev-null-write",
        "dev-urandom-read",
        "kept-read",
        "inside-chmod",
    ] {
        assert_eq!(result(label), "ok", "{label}: {}", outcome.output);
    }
    for label in [
        "dev-null-chmod",
        "dev-null-times",
        "kept-chmod",
        "kept-times",
        "hidden-read",
    ] {
        assert_ne!(result(label), "ok", "{label}");
    }
    assert_eq!(
        [
            ctime(Path::new("/dev/null")),
            ctime(&secret.join("keep.txt"))
        ],
        before,
        "the host's device or kept file changed"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(world.root.join("victim"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// Links and descriptors are judged as the kernel will resolve them: a final link followed where the
/// call follows it (and recorded at its target), not where it does not (`O_NOFOLLOW`, `O_EXCL` with
/// `O_CREAT`, `AT_SYMLINK_NOFOLLOW`: the link itself, inside the root, is what the call acts on), an
/// empty path with `AT_EMPTY_PATH` as the descriptor's file, `..` out of a root, and a chain of 40
/// links (the kernel's limit) followed to its end.
const LINK_SCRIPT: &str = r#"import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
root, outside = sys.argv[1], sys.argv[2]
def check(r):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def fchownat(path, flags, fd=-100):
    check(libc.fchownat(fd, path.encode(), -1, -1, flags))
AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH = 0x100, 0x1000
probe('creat-through-link', lambda: os.open(root + '/dangling1', os.O_WRONLY | os.O_CREAT, 0o644))
probe('excl-on-link', lambda: os.open(root + '/dangling2', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
probe('nofollow-on-link', lambda: os.open(root + '/link3', os.O_WRONLY | os.O_NOFOLLOW))
probe('lchown-link', lambda: fchownat(root + '/link4', AT_SYMLINK_NOFOLLOW))
probe('chown-through-link', lambda: fchownat(root + '/link5', 0))
probe('chown-empty-path', lambda: fchownat('', AT_EMPTY_PATH, os.open(outside + '/victim6', os.O_RDONLY)))
probe('dotdot-out', lambda: os.open(root + '/subdir/../../outside/victim7', os.O_WRONLY))
probe('chain-of-40', lambda: os.open(root + '/chain40', os.O_WRONLY))
probe('link-loop', lambda: os.open(root + '/loop_a', os.O_WRONLY))
probe('proc-self-cwd', lambda: os.open('/proc/self/cwd/../outside/victim9', os.O_WRONLY))
"#;

#[tokio::test]
async fn links_and_descriptors_are_judged_where_the_kernel_resolves_them() {
    use std::os::unix::fs::symlink;
    if !runs_here() {
        return;
    }
    let world = World::new();
    let (root, out) = (world.root.clone(), world.outside.clone());
    for n in 3..=9 {
        std::fs::write(out.join(format!("victim{n}")), "original").unwrap();
    }
    // A loop: the kernel says ELOOP, and the supervisor's walk must end too.
    symlink(root.join("loop_b"), root.join("loop_a")).unwrap();
    symlink(root.join("loop_a"), root.join("loop_b")).unwrap();
    symlink(out.join("new1"), root.join("dangling1")).unwrap();
    symlink(out.join("new2"), root.join("dangling2")).unwrap();
    symlink(out.join("victim3"), root.join("link3")).unwrap();
    symlink(out.join("victim4"), root.join("link4")).unwrap();
    symlink(out.join("victim5"), root.join("link5")).unwrap();
    // chain40 -> c39 -> ... -> c1 -> outside/victim8: 40 links, as many as the kernel follows.
    symlink(out.join("victim8"), root.join("c1")).unwrap();
    for n in 2..40 {
        symlink(root.join(format!("c{}", n - 1)), root.join(format!("c{n}"))).unwrap();
    }
    symlink(root.join("c39"), root.join("chain40")).unwrap();
    let before = World::state(&out);
    let request = probe_request(
        &world,
        ".links.py",
        LINK_SCRIPT,
        &[root.display().to_string(), out.display().to_string()],
    );
    let outcome = run_request(&world, request, false).await;
    let got = results(&outcome);
    let result = |label: &str| result_of(&got, &outcome, label);
    let denials = denials(&outcome);
    let recorded = |op: &str, file: &str| {
        let path = out.join(file).display().to_string();
        denials
            .iter()
            .any(|d| d.operation == op && d.path.as_deref() == Some(path.as_str()))
    };
    assert_eq!(
        World::state(&out),
        before,
        "a call changed the world outside"
    );
    // Followed: refused and recorded at the target.
    for (label, op, file) in [
        ("creat-through-link", "write", "new1"),
        ("chown-through-link", "chown", "victim5"),
        ("chown-empty-path", "chown", "victim6"),
        ("dotdot-out", "write", "victim7"),
        ("chain-of-40", "write", "victim8"),
        // `/proc/self` is the caller, not the supervisor: its cwd is the root.
        ("proc-self-cwd", "write", "victim9"),
    ] {
        assert_ne!(result(label), "ok", "{label}");
        assert!(recorded(op, file), "{label}: {denials:#?}");
    }
    // Not followed: the kernel's own answer about the link, and nothing recorded of its target.
    assert_eq!(result("excl-on-link"), "EEXIST");
    assert_eq!(result("link-loop"), "ELOOP");
    assert_eq!(result("nofollow-on-link"), "ELOOP");
    assert_eq!(result("lchown-link"), "ok");
    for file in ["new2", "victim3", "victim4"] {
        assert!(
            !denials
                .iter()
                .any(|d| d.path.as_deref() == Some(out.join(file).display().to_string().as_str())),
            "{file}: {denials:#?}"
        );
    }
}

/// Where the run can reach host services (here the network on), a descriptor could be a host
/// service's, on the host's writable mount: the supervisor judges the metadata calls through one again,
/// and records each refusal.
#[tokio::test]
async fn descriptor_metadata_is_judged_where_host_services_can_be_reached() {
    if !runs_here() {
        return;
    }
    let world = World::new();
    seed(&world.outside);
    let before = World::state(&world.outside);
    let probes: Vec<Probe> = file_probes()
        .into_iter()
        .filter(|p| FD_METADATA_PROBES.contains(&p.label))
        .collect();
    assert_eq!(probes.len(), FD_METADATA_PROBES.len());
    let outcome = run_sandboxed(&world, &probe_script(&world.outside, &probes), true).await;
    assert!(!fd_metadata_by_kernel(&outcome));
    assert_eq!(World::state(&world.outside), before);
    let got = results(&outcome);
    let denials = denials(&outcome);
    for p in &probes {
        assert_ne!(
            got.get(p.label).map(String::as_str),
            Some("ok"),
            "{}",
            p.label
        );
        let path = world.outside.join(p.file).display().to_string();
        // futimens is utimensat with no path.
        let call = if p.label == "futimens" {
            "utimensat"
        } else {
            p.label
        };
        assert!(
            denials.iter().any(|d| d.operation == p.operation
                && d.path.as_deref() == Some(&path)
                && d.detail == call),
            "{}: {denials:#?}",
            p.label
        );
    }
}
