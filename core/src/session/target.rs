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

    /// How the run ended, as its caller should read it. An engine reports an exec's shell ended by a
    /// signal as 128 + the signal (the status `docker exec` gives); when our own kill ended the run
    /// (`killed`) and the code is SIGTERM's or SIGKILL's, that is the signal, as a local run reports it.
    /// A run that exits 143 by itself keeps its code.
    pub fn exit_of(
        &self,
        code: Option<i32>,
        signal: Option<String>,
        killed: bool,
    ) -> (Option<i32>, Option<String>) {
        match (self, code, killed) {
            (RunTarget::Container(_), Some(143), true) => (None, Some("SIGTERM".into())),
            (RunTarget::Container(_), Some(137), true) => (None, Some("SIGKILL".into())),
            _ => (code, signal),
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
