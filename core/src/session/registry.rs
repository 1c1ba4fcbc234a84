//! The process-wide session registry: running sessions (foreground ones included, so ids stay unique
//! and host shutdown can find them) and finished sessions that were backgrounded, kept for a TTL.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{ids, Session};

/// How long finished background sessions are kept by default (OpenClaw's 30 minutes).
pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 60);

#[derive(Default)]
struct Maps {
    reserved: HashSet<String>,
    running: HashMap<String, Arc<Session>>,
    finished: HashMap<String, Arc<Session>>,
}

impl Maps {
    fn taken(&self, id: &str) -> bool {
        self.reserved.contains(id)
            || self.running.contains_key(id)
            || self.finished.contains_key(id)
    }
}

pub struct Registry {
    maps: Mutex<Maps>,
    /// Output log files to delete with their session: (session id, file, when the run ended).
    logs: Mutex<Vec<(String, std::path::PathBuf, Instant)>>,
    /// The directory each scope's last tracked run ended in ("" is the unscoped caller).
    scope_cwds: Mutex<HashMap<String, std::path::PathBuf>>,
    ttl_ms: AtomicU64,
    sweeper_started: AtomicBool,
}

/// OpenClaw's `PI_BASH_JOB_TTL_MS`: unset, 0 or not a number gives 30 minutes; otherwise clamped to
/// 1 minute .. 3 hours.
pub fn ttl_from_env(raw: Option<&str>) -> Duration {
    let parsed = raw
        .map(str::trim)
        .and_then(|r| {
            let digits: String = r
                .chars()
                .enumerate()
                .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && (*c == '-' || *c == '+')))
                .map(|(_, c)| c)
                .collect();
            digits.parse::<i64>().ok()
        })
        .filter(|v| *v != 0);
    match parsed {
        None => DEFAULT_TTL,
        Some(ms) => Duration::from_millis(ms.clamp(60_000, 10_800_000) as u64),
    }
}

impl Default for Registry {
    fn default() -> Self {
        let ttl = ttl_from_env(std::env::var("PI_BASH_JOB_TTL_MS").ok().as_deref());
        Registry {
            maps: Mutex::new(Maps::default()),
            logs: Mutex::new(Vec::new()),
            scope_cwds: Mutex::new(HashMap::new()),
            ttl_ms: AtomicU64::new(ttl.as_millis() as u64),
            sweeper_started: AtomicBool::new(false),
        }
    }
}

/// Whether a caller with scope `scope` may see `session`: no scope sees everything.
pub fn visible(session: &Session, scope: Option<&str>) -> bool {
    scope.is_none() || session.meta.scope_key.as_deref() == scope
}

static GLOBAL: LazyLock<Registry> = LazyLock::new(Registry::default);

/// The registry every binding shares.
pub fn global() -> &'static Registry {
    &GLOBAL
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Maps> {
        self.maps.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh id, held until [`Registry::insert`] or [`Registry::release`].
    pub fn reserve_id(&self) -> String {
        let mut maps = self.lock();
        let id = ids::new_session_id(&|c| maps.taken(c));
        maps.reserved.insert(id.clone());
        id
    }

    pub fn release(&self, id: &str) {
        self.lock().reserved.remove(id);
    }

    pub fn insert(&self, session: Arc<Session>) {
        let mut maps = self.lock();
        maps.reserved.remove(&session.meta.id);
        maps.running.insert(session.meta.id.clone(), session);
    }

    /// A session ended: backgrounded ones move to the finished map, the others are forgotten.
    pub fn mark_exited(&self, session: &Session) {
        let backgrounded = session.lock().backgrounded;
        let mut maps = self.lock();
        if let Some(s) = maps.running.remove(&session.meta.id) {
            if backgrounded {
                maps.finished.insert(s.meta.id.clone(), s);
            }
        }
    }

    /// The current directory of a scope, as its last tracked run left it.
    pub fn scope_cwd(&self, scope: Option<&str>) -> Option<std::path::PathBuf> {
        let cwds = self.scope_cwds.lock().unwrap_or_else(|e| e.into_inner());
        cwds.get(scope.unwrap_or("")).cloned()
    }

    pub fn set_scope_cwd(&self, scope: Option<&str>, dir: std::path::PathBuf) {
        let mut cwds = self.scope_cwds.lock().unwrap_or_else(|e| e.into_inner());
        cwds.insert(scope.unwrap_or("").to_string(), dir);
    }

    pub fn running(&self) -> Vec<Arc<Session>> {
        self.lock().running.values().cloned().collect()
    }

    /// SIGKILL every running session's tree at once, no grace: the host is going away.
    pub fn kill_all_now(&self) {
        use nix::sys::signal::{kill, killpg, Signal};
        use nix::unistd::Pid;
        for session in self.running() {
            let _ = killpg(Pid::from_raw(session.target.pgid), Signal::SIGKILL);
            for pid in session.target.live_processes() {
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }

    /// A running or kept session visible in `scope`.
    pub fn find(&self, id: &str, scope: Option<&str>) -> Option<Arc<Session>> {
        self.prune();
        let maps = self.lock();
        maps.running
            .get(id)
            .or_else(|| maps.finished.get(id))
            .filter(|s| visible(s, scope))
            .cloned()
    }

    /// Backgrounded running sessions and kept finished ones, visible in `scope`.
    pub fn list(&self, scope: Option<&str>) -> (Vec<Arc<Session>>, Vec<Arc<Session>>) {
        self.prune();
        let maps = self.lock();
        let running = maps
            .running
            .values()
            .filter(|s| visible(s, scope) && s.is_backgrounded())
            .cloned()
            .collect();
        let finished = maps
            .finished
            .values()
            .filter(|s| visible(s, scope))
            .cloned()
            .collect();
        (running, finished)
    }

    /// Forget a session entirely (running or finished), and delete its output log.
    pub fn forget(&self, id: &str) -> bool {
        let forgotten = {
            let mut maps = self.lock();
            maps.running.remove(id).is_some() | maps.finished.remove(id).is_some()
        };
        self.delete_logs(|(session, _, _)| session == id);
        forgotten
    }

    /// A run ended with an output log the caller did not ask to keep: it is deleted when its session
    /// is forgotten, or once the TTL passed (a foreground run's session is gone at once, but the
    /// caller was given the file's path).
    pub fn track_log(&self, id: &str, file: std::path::PathBuf) {
        let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        logs.push((id.to_string(), file, Instant::now()));
    }

    /// Delete every tracked log (the host is exiting).
    pub fn delete_all_logs(&self) {
        self.delete_logs(|_| true);
    }

    fn delete_logs(&self, doomed: impl Fn(&(String, std::path::PathBuf, Instant)) -> bool) {
        let gone: Vec<std::path::PathBuf> = {
            let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
            let (gone, kept): (Vec<_>, Vec<_>) = logs.drain(..).partition(|l| doomed(l));
            *logs = kept;
            gone.into_iter().map(|(_, f, _)| f).collect()
        };
        for f in gone {
            let _ = std::fs::remove_file(f);
        }
    }

    pub fn ttl(&self) -> Duration {
        Duration::from_millis(self.ttl_ms.load(Ordering::Relaxed))
    }

    pub fn set_ttl(&self, ttl: Duration) {
        self.ttl_ms.store(ttl.as_millis() as u64, Ordering::Relaxed);
        self.prune();
    }

    /// Drop finished sessions older than the TTL. Runs on every lookup and from one global sweeper,
    /// never from a timer per session.
    pub fn prune(&self) {
        let ttl = self.ttl();
        let now = Instant::now();
        let live: HashSet<String> = {
            let mut maps = self.lock();
            maps.finished.retain(|_, s| {
                s.lock()
                    .ended
                    .is_none_or(|ended| now.duration_since(ended) < ttl)
            });
            maps.finished.keys().cloned().collect()
        };
        // Logs of sessions that are still kept stay; the others go once their TTL passed.
        self.delete_logs(|(id, _, ended)| !live.contains(id) && now.duration_since(*ended) >= ttl);
    }

    /// Start the periodic sweep once, on the current tokio runtime.
    pub fn ensure_sweeper(&'static self) {
        if self.sweeper_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            self.sweeper_started.store(false, Ordering::SeqCst);
            return;
        };
        handle.spawn(async move {
            loop {
                let every = (self.ttl() / 6).clamp(Duration::from_secs(1), Duration::from_secs(30));
                tokio::time::sleep(every).await;
                self.prune();
            }
        });
    }

    pub fn len_running(&self) -> usize {
        self.lock().running.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_env_clamp() {
        assert_eq!(ttl_from_env(None), DEFAULT_TTL);
        assert_eq!(ttl_from_env(Some("")), DEFAULT_TTL);
        assert_eq!(ttl_from_env(Some("0")), DEFAULT_TTL);
        assert_eq!(ttl_from_env(Some("abc")), DEFAULT_TTL);
        assert_eq!(ttl_from_env(Some("5")), Duration::from_secs(60));
        assert_eq!(ttl_from_env(Some("-5")), Duration::from_secs(60));
        assert_eq!(ttl_from_env(Some("120000ms")), Duration::from_secs(120));
        assert_eq!(
            ttl_from_env(Some("99999999999")),
            Duration::from_secs(3 * 3600)
        );
    }
}
