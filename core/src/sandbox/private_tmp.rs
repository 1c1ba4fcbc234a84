//! A run's private temp dir (its `$TMPDIR`, always writable): mode 700, in
//! `<tmp>/agent-exec-sandbox-<uid>` (mode 700), made ahead of the run and gone when it ends.
//!
//! Why ahead and behind: on a disk file system, making and removing directories costs real time on
//! the run's path once the machine has paused, as an agent's machine always has between commands
//! (ext4 on this VM after 100 ms idle, 2026-11-26: the directory with its two mount points 0.45 ms to
//! make, 0.6 ms to remove; back to back a tenth of that). So a stock of two is made off the run's
//! path (as [`super::namespace_stock`]'s), each with the entries a run in a mount namespace mounts
//! on; and an ended run's directory is renamed out of its name at once (0.09 ms: the path the run
//! knew is gone when its result is delivered) and removed in the background. A directory waiting for
//! a run, or for its removal, is named like a live one (`<prefix><host pid>-...`): the host's exit,
//! its watchdog and the next host's sweep remove it as they remove a run's.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use super::unavailable;
use crate::error::AgentError;

/// Inside the temp dir: where the run's `/dev` is staged (a mount point in its namespace).
pub(crate) const DEV_STAGING: &str = ".dev";
/// Inside the temp dir: the directory behind the run's private `/dev/shm`.
pub(crate) const SHM_BACKING: &str = ".dev-shm";
/// Inside the temp dir: the empty file of mode 0000 bound over the files a run may not read.
pub(crate) const UNREADABLE: &str = ".unreadable";

/// Private temp dirs a host left when it was killed before it could remove them.
///
/// Each is named `agent-exec-sandbox-<pid namespace>-<host pid>-<random>`; the first sandboxed run of
/// a host removes the ones of hosts that are gone, in its own PID namespace only (a pid says nothing
/// about a host in another container sharing the temp dir), owned by its own user only.
mod stale_tmp {
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    /// `agent-exec-sandbox-<pid namespace inode>-`.
    pub fn prefix() -> &'static str {
        static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        PREFIX.get_or_init(|| {
            let ns = std::fs::metadata("/proc/self/ns/pid")
                .map(|m| m.ino())
                .unwrap_or(0);
            format!("agent-exec-sandbox-{ns}-")
        })
    }

    pub fn sweep_once(dir: &Path, prefix: &str) {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep(dir, prefix));
    }

    /// Remove `dir`'s entries named `<prefix><pid>-...` whose host pid is gone and that belong to this
    /// user. (`remove_dir_all` does not follow symlinks.)
    pub fn sweep(dir: &Path, prefix: &str) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(prefix))
                .and_then(|rest| rest.split('-').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let ours = e.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me);
            if ours && pid != std::process::id() && gone(pid) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// No such process, or only its zombie (a SIGKILLed host its parent has not reaped yet).
    fn gone(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .is_some_and(|state| state == "Z" || state == "X"),
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn dirs_of_gone_hosts_are_removed_and_the_rest_kept() {
            let root = tempfile::tempdir().unwrap();
            let prefix = super::prefix();
            // A pid that no process has: above the kernel's pid_max ceiling.
            let gone = root.path().join(format!("{prefix}9999999-abc"));
            let mine = root
                .path()
                .join(format!("{prefix}{}-abc", std::process::id()));
            let other_ns = root.path().join("agent-exec-sandbox-1-9999999-abc");
            let unrelated = root.path().join("something-else");
            for d in [&gone, &mine, &other_ns, &unrelated] {
                std::fs::create_dir_all(d.join(".dev-shm")).unwrap();
            }
            super::sweep(root.path(), prefix);
            assert!(!gone.exists());
            assert!(mine.exists() && other_ns.exists() && unrelated.exists());
        }
    }
}

/// Where every private temp dir of this user's runs lives: `<tmp>/agent-exec-sandbox-<uid>`, mode 700,
/// so a run's mount namespace can cover it (and with it every other run's files) and bring back its own.
pub fn tmp_parent_path() -> PathBuf {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    std::env::temp_dir().join(format!("agent-exec-sandbox-{uid}"))
}

/// [`tmp_parent_path`], made (mode 700) if missing and checked to be this user's.
pub(crate) fn tmp_parent() -> Result<PathBuf, AgentError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let parent = tmp_parent_path();
    let made = std::fs::DirBuilder::new().mode(0o700).create(&parent);
    if let Err(e) = made {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(unavailable(format!(
                "the directory of private temp dirs {} could not be made: {e}",
                parent.display()
            )));
        }
    }
    // Another user's directory (or a link to one) under a shared /tmp is not ours to use.
    let meta = std::fs::symlink_metadata(&parent)
        .map_err(|e| unavailable(format!("{}: {e}", parent.display())))?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(unavailable(format!(
            "{} is not a directory of this user's; remove it or set TMPDIR elsewhere",
            parent.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        let _ = std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o700));
    }
    Ok(std::fs::canonicalize(&parent).unwrap_or(parent))
}

/// The private temp dirs of this host's runs that still exist, removed when the host exits.
static LIVE_TMP_DIRS: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Remove the private temp dirs of every run still alive: the host is exiting (its cleanup hook,
/// `process.exit` through `atexit`). A SIGKILLed host leaves them to its watchdog and the next host's
/// sweep.
pub fn remove_live_tmp_dirs() {
    let dirs = std::mem::take(&mut *LIVE_TMP_DIRS.lock().unwrap_or_else(|e| e.into_inner()));
    for d in dirs {
        let _ = remove_tree(&d);
    }
}

/// A run's private temp dir: removed when the run ends ([`PrivateTmp::release`]), when the session
/// goes, or when the host exits.
pub(crate) struct PrivateTmp {
    /// Canonical: the path the rules name.
    path: PathBuf,
    /// The entries it came with (made ahead); others are made when asked for. (Only Linux's
    /// sandbox mounts on them.)
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    made_with: &'static [&'static str],
    /// Taken when released.
    dir: Mutex<Option<tempfile::TempDir>>,
}

impl PrivateTmp {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `name` inside it, made now unless the dir came with it: a directory, or (for
    /// [`UNREADABLE`]) an empty file of mode 0000.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn entry(&self, name: &'static str) -> std::io::Result<PathBuf> {
        let path = self.path.join(name);
        if self.made_with.contains(&name) {
            return Ok(path);
        }
        make_entry(&path, name)?;
        Ok(path)
    }

    /// Remove it now (the run ended): its name goes at once, nothing of it stays for anyone to read,
    /// and the removal of what the run left inside happens off the caller's path.
    pub fn release(&self) {
        let dir = self.dir.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(dir) = dir else {
            return;
        };
        let ended = ended_name(&self.path);
        let moved = std::fs::rename(&self.path, &ended).is_ok();
        let mut live = LIVE_TMP_DIRS.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|p| p != &self.path);
        if !moved {
            // Removed here, then: its name must not outlive the run.
            drop(live);
            let _ = dir.close();
            return;
        }
        // The TempDir would remove a path that no longer exists: the ended name is removed instead.
        let _ = dir.keep();
        live.push(ended.clone());
        drop(live);
        in_background(move || {
            // Kept on the host-exit list until it is gone (a run may leave read-only directories:
            // a Go module cache; `remove_tree` makes them writable first).
            if remove_tree(&ended).is_ok() {
                LIVE_TMP_DIRS
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .retain(|p| p != &ended);
            }
        });
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        self.release();
    }
}

/// Remove the tree at `path`; where that fails (directories the run made read-only), make its
/// directories writable and try once more. Links are never followed.
fn remove_tree(path: &Path) -> std::io::Result<()> {
    if std::fs::remove_dir_all(path).is_ok() || !path.exists() {
        return Ok(());
    }
    make_writable(path);
    std::fs::remove_dir_all(path)
}

fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        make_writable(&entry.path());
    }
}

/// `<name>-ended` beside it: still `<prefix><host pid>-...`, so every sweep knows it.
fn ended_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push("-ended");
    path.with_file_name(name)
}

fn make_entry(path: &Path, name: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if name == UNREADABLE {
        std::fs::write(path, b"")?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000))
    } else {
        std::fs::create_dir(path)
    }
}

/// `job` on the runtime's blocking pool where there is a runtime, else now.
fn in_background(job: impl FnOnce() + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(job)),
        Err(_) => job(),
    }
}

/// Temp dirs waiting for runs, with the parent they were made in (`TMPDIR` may change).
const STOCK_SIZE: usize = 2;
static STOCK: Mutex<Vec<(PathBuf, PrivateTmp)>> = Mutex::new(Vec::new());
static REFILLING: AtomicBool = AtomicBool::new(false);

/// A private temp dir for one run: one made ahead if the stock has one for this parent, else made
/// now; the stock is topped up in the background.
pub(crate) fn private_tmp() -> Result<PrivateTmp, AgentError> {
    let parent = tmp_parent()?;
    stale_tmp::sweep_once(&parent, stale_tmp::prefix());
    let taken = {
        let mut stock = STOCK.lock().unwrap_or_else(|e| e.into_inner());
        // One made under another TMPDIR is no use now (dropping it removes it).
        stock.retain(|(made_in, _)| made_in == &parent);
        stock.pop()
    };
    // Made ahead only where a runtime's blocking pool can do it off the caller's path.
    if tokio::runtime::Handle::try_current().is_ok() {
        refill(parent.clone());
    }
    match taken {
        // Still there (nothing cleaned the temp dir under us): it is the run's.
        Some((_, tmp)) if std::fs::symlink_metadata(&tmp.path).is_ok_and(|m| m.is_dir()) => Ok(tmp),
        _ => make(&parent, &[]),
    }
}

/// Top the stock up, off the caller's path.
fn refill(parent: PathBuf) {
    crate::util::refill_in_background(&REFILLING, move || {
        // The entries a run in a mount namespace mounts on; a host without one needs none.
        let with: &'static [&'static str] = if super::capabilities::get().mount_namespace {
            &[DEV_STAGING, SHM_BACKING, UNREADABLE]
        } else {
            &[]
        };
        while STOCK.lock().unwrap_or_else(|e| e.into_inner()).len() < STOCK_SIZE {
            match make(&parent, with) {
                Ok(tmp) => STOCK
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((parent.clone(), tmp)),
                Err(e) => {
                    tracing::debug!("no private temp dir made ahead: {}", e.message);
                    break;
                }
            }
        }
    });
}

/// Make a temp dir in `parent` with the entries `with`.
fn make(parent: &Path, with: &'static [&'static str]) -> Result<PrivateTmp, AgentError> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{}{}-", stale_tmp::prefix(), std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(parent)
        .map_err(|e| unavailable(format!("the private temp dir could not be made: {e}")))?;
    let canonical = std::fs::canonicalize(tmp.path()).unwrap_or_else(|_| tmp.path().into());
    for name in with {
        make_entry(&canonical.join(name), name).map_err(|e| {
            unavailable(format!(
                "{name} could not be made in the private temp dir {}: {e}",
                canonical.display()
            ))
        })?;
    }
    LIVE_TMP_DIRS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(canonical.clone());
    Ok(PrivateTmp {
        path: canonical,
        made_with: with,
        dir: Mutex::new(Some(tmp)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wait up to 10 s for `done`.
    fn wait_for(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "timed out: {what}");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn a_run_gets_a_dir_made_ahead_whose_name_is_gone_when_it_ends() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // The first take may find the stock empty; it fills in the background.
            let first = private_tmp().unwrap();
            let parent = tmp_parent().unwrap();
            wait_for("the stock to fill", || {
                STOCK
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|(p, _)| p == &parent)
                    .count()
                    >= 1
            });
            let tmp = private_tmp().unwrap();
            assert!(
                !tmp.made_with.is_empty() || !super::super::capabilities::get().mount_namespace
            );
            for name in tmp.made_with {
                // Made ahead: there before anyone asked, and handed out as they are.
                assert!(tmp.path().join(name).exists(), "{name} made ahead");
                assert_eq!(tmp.entry(name).unwrap(), tmp.path().join(name));
            }
            // Each run's own, mode 700, this host's name (so every sweep knows it).
            use std::os::unix::fs::PermissionsExt;
            assert_ne!(tmp.path(), first.path());
            let mode = std::fs::metadata(tmp.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
            let name = tmp.path().file_name().unwrap().to_str().unwrap().to_owned();
            assert!(name.starts_with(&format!("{}{}-", stale_tmp::prefix(), std::process::id())));
            std::fs::write(tmp.path().join("left-by-the-run"), b"x").unwrap();

            // Ended: the name is gone at once; what was inside goes in the background.
            let path = tmp.path().to_path_buf();
            tmp.release();
            assert!(!path.exists(), "the run's temp dir outlived its release");
            let ended = ended_name(&path);
            // (The list is updated just after the tree is gone, by the same background task.)
            wait_for(
                "the ended dir's removal and its leaving the host-exit list",
                || !ended.exists() && !LIVE_TMP_DIRS.lock().unwrap().contains(&ended),
            );
            drop(first);
        });
    }

    #[test]
    fn an_entry_a_dir_did_not_come_with_is_made_when_asked_for() {
        let parent = tmp_parent().unwrap();
        let tmp = make(&parent, &[]).unwrap();
        let shm = tmp.entry(SHM_BACKING).unwrap();
        assert!(shm.is_dir());
        let unreadable = tmp.entry(UNREADABLE).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(&unreadable).unwrap();
        assert!(meta.is_file() && meta.len() == 0);
        assert_eq!(meta.permissions().mode() & 0o777, 0);
        let path = tmp.path().to_path_buf();
        drop(tmp);
        assert!(!path.exists());
    }
}
