//! The process-wide session registry: running sessions (foreground ones included, so ids stay unique
//! and host shutdown can find them) and finished sessions that were backgrounded, kept for a TTL.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use super::{ids, Session};

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

#[derive(Default)]
pub struct Registry {
    maps: Mutex<Maps>,
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

    pub fn running(&self) -> Vec<Arc<Session>> {
        self.lock().running.values().cloned().collect()
    }

    pub fn len_running(&self) -> usize {
        self.lock().running.len()
    }
}
