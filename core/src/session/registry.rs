//! The process-wide session registry: running sessions (foreground ones included, so ids stay unique
//! and host shutdown can find them) and finished sessions that were backgrounded, kept for a TTL.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::changes::{self, Changes, RemovalLog};
use super::{ids, Session};

/// How long finished background sessions are kept by default (OpenClaw's 30 minutes).
pub const DEFAULT_TTL: Duration = Duration::from_secs(30 * 60);

#[derive(Default)]
struct Maps {
    reserved: HashSet<String>,
    running: HashMap<String, Arc<Session>>,
    finished: HashMap<String, Arc<Session>>,
    /// Finished sessions in the order they ended, so expiry looks only at the oldest.
    by_end: std::collections::VecDeque<(Instant, String)>,
    /// Background sessions that left, for listers that follow changes.
    removals: RemovalLog,
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

fn remove_files(files: Vec<std::path::PathBuf>) {
    for f in files {
        let _ = std::fs::remove_file(f);
    }
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
        session.touch();
        maps.running.insert(session.meta.id.clone(), session);
    }

    /// A session ended: backgrounded ones move to the finished map, the others are forgotten.
    pub fn mark_exited(&self, session: &Session) {
        let (backgrounded, ended) = {
            let st = session.lock();
            (st.backgrounded, st.ended.unwrap_or_else(Instant::now))
        };
        let mut maps = self.lock();
        if let Some(s) = maps.running.remove(&session.meta.id) {
            if backgrounded {
                maps.by_end.push_back((ended, s.meta.id.clone()));
                maps.finished.insert(s.meta.id.clone(), s);
            } else {
                maps.removals.record(&s.meta.id);
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
        for session in self.running() {
            session.target.kill_now();
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

    /// What changed since tick `since` of the change clock, among the sessions [`Registry::list`]
    /// shows in `scope`: a lister applies it to its copy instead of rebuilding 10,000 entries. Tick 0
    /// (or a tick the removal log no longer reaches) gets the whole list.
    pub fn changes_since(&self, since: u64, scope: Option<&str>) -> Changes {
        self.prune();
        // Read before the scan: a change during the scan is reported now or next time, never lost.
        let tick = changes::now();
        let maps = self.lock();
        let removed = if since == 0 {
            None
        } else {
            maps.removals.since(since)
        };
        let full = removed.is_none();
        let changed = maps
            .running
            .values()
            .chain(maps.finished.values())
            .filter(|s| {
                (full || s.changed_since(since)) && visible(s, scope) && s.is_backgrounded()
            })
            .cloned()
            .collect();
        Changes {
            tick,
            full,
            changed,
            removed: removed.unwrap_or_default(),
        }
    }

    /// Forget a session entirely (running or finished), and delete its output log.
    pub fn forget(&self, id: &str) -> bool {
        let forgotten = {
            let mut maps = self.lock();
            let gone = maps.running.remove(id).is_some() | maps.finished.remove(id).is_some();
            if gone {
                maps.removals.record(id);
            }
            gone
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
        remove_files(self.take_logs(doomed));
    }

    /// Stop tracking the logs `doomed` picks and hand their files over for deletion.
    fn take_logs(
        &self,
        doomed: impl Fn(&(String, std::path::PathBuf, Instant)) -> bool,
    ) -> Vec<std::path::PathBuf> {
        let mut logs = self.logs.lock().unwrap_or_else(|e| e.into_inner());
        let (gone, kept): (Vec<_>, Vec<_>) = logs.drain(..).partition(|l| doomed(l));
        *logs = kept;
        gone.into_iter().map(|(_, f, _)| f).collect()
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
        let mut maps = self.lock();
        // Oldest first: the walk stops at the first session still within its TTL.
        while let Some((ended, _)) = maps.by_end.front() {
            if now.duration_since(*ended) < ttl {
                break;
            }
            let (ended, id) = maps.by_end.pop_front().expect("front exists");
            // A session forgotten earlier has left already (and was logged then); its id may even
            // name a newer session by now, which this entry is not about.
            let same = maps
                .finished
                .get(&id)
                .is_some_and(|s| s.lock().ended == Some(ended));
            if same {
                maps.finished.remove(&id);
                maps.removals.record(&id);
            }
        }
        // Logs of sessions that are still kept stay; the others go once their TTL passed. Asked
        // under the maps lock, so no copy of every kept id is made on each lookup; the files are
        // deleted after it is released.
        let doomed = self.take_logs(|(id, _, ended)| {
            now.duration_since(*ended) >= ttl && !maps.finished.contains_key(id)
        });
        drop(maps);
        remove_files(doomed);
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
    use crate::session::{run, KillCause, SessionHooks};
    use crate::spawn::request::ExecRequest;

    fn ids(sessions: &[Arc<Session>]) -> Vec<&str> {
        let mut ids: Vec<&str> = sessions.iter().map(|s| s.meta.id.as_str()).collect();
        ids.sort();
        ids
    }

    /// Starts a run of `sleep 30` in `registry`, in `scope`, in the background or not.
    fn sleeper(registry: &'static Registry, scope: &str, background: bool) -> Arc<Session> {
        let mut req = ExecRequest::new("sleep 30");
        req.background = background;
        run::start(registry, &req, SessionHooks::default(), Some(scope.into())).unwrap()
    }

    async fn end(session: &Session) {
        session.request_kill(KillCause::Killed);
        session.wait_exit().await;
    }

    #[tokio::test]
    async fn a_lister_following_changes_sees_what_it_would_see_by_listing_again() {
        let registry: &'static Registry = Box::leak(Box::default());
        let a = sleeper(registry, "mine", true);
        let b = sleeper(registry, "mine", true);
        let theirs = sleeper(registry, "theirs", true);
        let foreground = sleeper(registry, "mine", false);

        let first = registry.changes_since(0, Some("mine"));
        assert!(first.full);
        let mut want = vec![a.meta.id.as_str(), b.meta.id.as_str()];
        want.sort();
        assert_eq!(
            ids(&first.changed),
            want,
            "only background sessions of the scope"
        );

        // Nothing happened: nothing to apply.
        let idle = registry.changes_since(first.tick, Some("mine"));
        assert!(!idle.full && idle.changed.is_empty() && idle.removed.is_empty());

        // A ends: it is reported once, with its new state; b, untouched, is not.
        end(&a).await;
        let ended = registry.changes_since(idle.tick, Some("mine"));
        assert!(!ended.full);
        assert_eq!(ids(&ended.changed), [a.meta.id.as_str()]);
        assert!(ended.changed[0].lock().exit.is_some());
        // Its exit is announced once; a running session's not yet.
        assert!(!b.claim_exit_notice());
        assert!(a.claim_exit_notice());
        assert!(!a.claim_exit_notice());

        // A is removed: its id is reported, and a session that appears later is reported too.
        assert!(registry.forget(&a.meta.id));
        let c = sleeper(registry, "mine", true);
        let after = registry.changes_since(ended.tick, Some("mine"));
        assert_eq!(after.removed, [a.meta.id.as_str()]);
        assert_eq!(ids(&after.changed), [c.meta.id.as_str()]);

        for s in [&b, &c, &theirs, &foreground] {
            end(s).await;
        }
    }

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
