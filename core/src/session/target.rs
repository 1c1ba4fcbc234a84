//! What a session's kill reaches: the run's processes on this machine (its group, marker and
//! cgroups), or those of a run in a container, which only the engine can reach.

use std::sync::Arc;
use std::time::Duration;

use crate::kill::{KillReport, KillTarget};

#[derive(Clone)]
pub(crate) enum RunTarget {
    Local(KillTarget),
    Container(Arc<crate::container::ContainerExec>),
}

impl RunTarget {
    /// SIGKILL everything at once, no grace (the host is going away).
    pub fn kill_now(&self) {
        match self {
            RunTarget::Local(t) => t.kill_now(),
            RunTarget::Container(c) => c.kill_now(),
        }
    }

    /// The run's live processes on this machine (a container's are not: their end is the engine's
    /// to report, through the kill).
    pub fn live_processes(&self) -> Vec<u32> {
        match self {
            RunTarget::Local(t) => t.live_processes(),
            RunTarget::Container(_) => Vec::new(),
        }
    }

    /// Cheap: may the run have processes left besides `except`?
    pub fn may_have_members_besides(&self, except: &[u32]) -> bool {
        match self {
            RunTarget::Local(t) => t.may_have_members_besides(except),
            RunTarget::Container(_) => false,
        }
    }

    /// The directory the run ended in, from its cwd report (`trackCwd`), which is removed.
    pub async fn final_cwd(&self, report: &std::path::Path) -> Option<String> {
        match self {
            RunTarget::Local(_) => super::run::take_cwd_report(report),
            RunTarget::Container(c) => c.final_cwd(report).await,
        }
    }

    /// SIGTERM, `grace`, SIGKILL: the whole tree, wherever it runs.
    pub async fn kill_tree(&self, grace: Duration) -> KillReport {
        match self {
            RunTarget::Local(t) => t.kill_tree(grace).await,
            RunTarget::Container(c) => c.kill_tree(grace).await,
        }
    }
}
