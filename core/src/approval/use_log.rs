//! Uses of allowlist entries, written to the approvals file in batches.
//!
//! Every allowlisted run notes when its entry was last used (as OpenClaw does). Writing that at once
//! meant a locked, fsync'd rewrite of the whole file per run, on the async worker that ran the gate.
//! Here a use is queued in memory and a flush, scheduled on the runtime's blocking pool a moment after
//! the first queued use, writes every pending use of a file in one rewrite. Without a runtime (plain
//! Rust callers) the use is written at once. The host flushes what is left at exit; a host killed
//! before its flush loses those use times, which are bookkeeping only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::store::{self, EntryUse};

/// How long uses gather before they are written.
const FLUSH_AFTER: Duration = Duration::from_millis(250);

static PENDING: Mutex<BTreeMap<PathBuf, Vec<EntryUse>>> = Mutex::new(BTreeMap::new());
static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// Queue a use of an entry of the approvals file at `path`.
pub fn record(path: &Path, entry_use: EntryUse) {
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(path.to_path_buf())
        .or_default()
        .push(entry_use);
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => {
            if !SCHEDULED.swap(true, Ordering::AcqRel) {
                // A runtime shut down before or while this waits drops the task: the next use must
                // still schedule a flush, so the mark goes with the task however it ends.
                let unmark = Unmark;
                rt.spawn(async move {
                    let _unmark = unmark;
                    tokio::time::sleep(FLUSH_AFTER).await;
                    let _ = tokio::task::spawn_blocking(flush).await;
                });
            }
        }
        Err(_) => flush(),
    }
}

/// Clears the "flush scheduled" mark when the scheduled task ends or is dropped.
struct Unmark;

impl Drop for Unmark {
    fn drop(&mut self) {
        SCHEDULED.store(false, Ordering::Release);
    }
}

/// Write every pending use now (one rewrite per file). Failures are dropped: a use time that cannot be
/// written must never block or fail a run.
pub fn flush() {
    // Cleared before taking, so a use queued after the take schedules a flush of its own.
    SCHEDULED.store(false, Ordering::Release);
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner()));
    for (path, uses) in pending {
        // The file's directory is gone (a host removed its temp dir on its way out): a use time is
        // bookkeeping, not a reason to make the directory again.
        if !path.parent().is_some_and(|d| d.is_dir()) {
            continue;
        }
        if let Err(e) = store::record_uses(&path, &uses) {
            tracing::debug!("could not record allowlist uses in {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn approvals(dir: &Path) -> PathBuf {
        let path = dir.join("exec-approvals.json");
        std::fs::write(
            &path,
            r#"{"version": 1, "agents": {"main": {"allowlist": [{"id": "a", "pattern": "/usr/bin/ls"}]}}}"#,
        )
        .unwrap();
        path
    }

    fn a_use(n: u64) -> EntryUse {
        EntryUse {
            agent_id: None,
            pattern: "/usr/bin/ls".into(),
            command: format!("ls {n}"),
            resolved_path: None,
            at_ms: 1_000 + n,
        }
    }

    fn rewrites(path: &Path) -> usize {
        let counts = store::REWRITES.lock().unwrap();
        counts.get(path).copied().unwrap_or(0)
    }

    /// The queue is the process's: the tests here must not flush each other's uses.
    /// Held by every test that queues uses: the queue is one for the process.
    pub(crate) static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn without_a_runtime_a_use_is_written_at_once() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let path = approvals(dir.path());
        record(&path, a_use(1));
        assert_eq!(rewrites(&path), 1);
        let file = store::load(&path).unwrap();
        assert_eq!(
            file.agents["main"].allowlist[0]
                .last_used_command
                .as_deref(),
            Some("ls 1")
        );
    }

    #[test]
    fn many_uses_in_a_runtime_are_one_rewrite_off_the_caller() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let path = approvals(dir.path());
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            for n in 0..50 {
                record(&path, a_use(n));
            }
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while rewrites(&path) == 0 && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        drop(rt);
        assert_eq!(rewrites(&path), 1);
        let file = store::load(&path).unwrap();
        let entry = &file.agents["main"].allowlist[0];
        assert_eq!(entry.last_used_command.as_deref(), Some("ls 49"));
        assert_eq!(entry.last_used_at, Some(1_049));
    }
}
