//! What changed in the session list since a caller last looked, so that listing 10,000 live sessions
//! costs what changed, not what exists.
//!
//! One process-wide clock counts changes. Every session remembers the tick of its last change (every
//! mutable access to its state takes a tick, see [`super::StateGuard`], and so does its entry into the
//! registry); every session that leaves the registry leaves its id in a bounded [`RemovalLog`]. A
//! caller that saw the list at tick `G` asks for the sessions changed after `G` and the ids removed
//! after `G`, and applies them to its copy. Why this cannot miss a write: the tick is taken while the
//! session's lock is held, and the lister reads the clock before it scans and takes the same lock to
//! read a session it reports, so a write is either seen now or carries a tick above the one returned.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::Session;

static CLOCK: AtomicU64 = AtomicU64::new(0);

/// A new tick of the change clock, above every tick handed out before.
pub fn tick() -> u64 {
    CLOCK.fetch_add(1, Ordering::SeqCst) + 1
}

/// The last tick handed out.
pub fn now() -> u64 {
    CLOCK.load(Ordering::SeqCst)
}

/// How many removals are remembered: a caller further behind than this gets the whole list again.
const REMOVALS_KEPT: usize = 4096;

/// Ids that left the registry, with the tick of their leaving. Bounded: `floor` is the tick of the
/// newest entry that was dropped, below which the log is incomplete.
#[derive(Default)]
pub struct RemovalLog {
    entries: VecDeque<(u64, String)>,
    floor: u64,
}

impl RemovalLog {
    pub fn record(&mut self, id: &str) {
        if self.entries.len() == REMOVALS_KEPT {
            if let Some((at, _)) = self.entries.pop_front() {
                self.floor = at;
            }
        }
        self.entries.push_back((tick(), id.to_string()));
    }

    /// The ids removed after tick `since`, or `None` when the log no longer reaches back that far.
    pub fn since(&self, since: u64) -> Option<Vec<String>> {
        if since < self.floor {
            return None;
        }
        let first = self.entries.partition_point(|(at, _)| *at <= since);
        Some(
            self.entries
                .range(first..)
                .map(|(_, id)| id.clone())
                .collect(),
        )
    }
}

/// The answer to "what changed since tick `since`".
pub struct Changes {
    /// The tick to ask from next time.
    pub tick: u64,
    /// The caller must drop its copy: `changed` is the whole list (first call, or it fell too far behind).
    pub full: bool,
    /// Sessions visible to the caller whose state changed (or appeared) after `since`.
    pub changed: Vec<Arc<Session>>,
    /// Ids that left the registry after `since` (visible to the caller or not).
    pub removed: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_removal_log_answers_from_a_tick_and_knows_where_it_stops() {
        let mut log = RemovalLog::default();
        let before = now();
        log.record("a");
        let middle = now();
        log.record("b");
        assert_eq!(
            log.since(before),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(log.since(middle), Some(vec!["b".to_string()]));
        assert_eq!(log.since(now()), Some(vec![]));
        for i in 0..REMOVALS_KEPT {
            log.record(&format!("x{i}"));
        }
        // "a" and "b" were dropped: a caller from before them must take the whole list.
        assert_eq!(log.since(before), None);
        assert_eq!(log.since(middle), None);
        let recent = now();
        for id in ["y1", "y2", "y3"] {
            log.record(id);
        }
        assert_eq!(
            log.since(recent).expect("recent ticks are kept"),
            ["y1", "y2", "y3"]
        );
    }
}
