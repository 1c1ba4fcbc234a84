//! The exec pipeline, one path for every caller (the Node bindings, the CLI through them, the Rust
//! tests): the approval gate, the start, then a foreground wait, a yield window that hands a long
//! run to the background, or the background at once.
//!
//! It sits above `session` and `approval` and joins them; neither knows the other.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::approval::gate::{run_gate, Answer, ApprovalOptions, ApprovalRequest, GateResult};
use crate::error::AgentError;
use crate::session::outcome::{outcome_of, running_outcome};
use crate::session::registry::Registry;
use crate::session::{run, ExecOutcome, Session, SessionHooks};
use crate::spawn::ExecRequest;

/// One call of `exec`: what to run, and how the caller waits for it.
pub struct ExecCall {
    pub request: ExecRequest,
    /// Sessions are visible only to callers with the same scope key.
    pub scope_key: Option<String>,
    /// Wait this long, then return `running` and keep the run as a background session.
    pub yield_after: Option<Duration>,
    /// Check the command against this policy (and ask) before anything is spawned.
    pub approval: Option<ApprovalOptions>,
}

/// How a call ended.
pub enum Finished {
    /// The command ran: to its end, or on into the background (`outcome.status` is `running`).
    Ran {
        outcome: Box<ExecOutcome>,
        /// The gate's decision, when the call had an approval policy.
        gate: Option<Box<GateResult>>,
        /// Whether the run has exited (a backgrounded one has not).
        exited: bool,
    },
    /// The gate refused the command: nothing was spawned.
    Denied { gate: Box<GateResult> },
}

/// Run `call`: gate, start (registered in `registry`), then wait as it asks. `ask` answers an
/// approval that must ask; `started` sees the session as soon as it exists (to connect an abort
/// signal to it, for one).
pub async fn execute<F, Fut>(
    registry: &'static Registry,
    call: ExecCall,
    hooks: SessionHooks,
    ask: Option<F>,
    started: impl FnOnce(&Arc<Session>),
) -> Result<Finished, AgentError>
where
    F: FnOnce(ApprovalRequest) -> Fut,
    Fut: Future<Output = Answer>,
{
    let ExecCall {
        mut request,
        scope_key,
        yield_after,
        approval,
    } = call;
    let mut gate = None;
    if let Some(mut opts) = approval {
        // In a terminal git pages, and a pager runs commands typed into it.
        opts.terminal = request.pty.is_some();
        // The model's variables are part of what runs: judged as prefix assignments.
        opts.model_env = request.model_env.clone();
        // How the run's bash may split the command's bytes into characters: any of the three
        // outside UTF-8 counts, since the command can unset or empty the ones above it
        // (`LC_ALL= bash -c ...` uncovers LC_CTYPE).
        opts.run_locale = ["LC_ALL", "LC_CTYPE", "LANG"].iter().find_map(|k| {
            request
                .env_var(k)
                .filter(|v| !crate::approval::env_names::reads_like_utf8(v))
        });
        let (path, home) = (request.env_var("PATH"), request.env_var("HOME"));
        let result = run_gate(
            &request.command,
            &request.cwd,
            path.as_deref(),
            home.as_deref(),
            &opts,
            ask,
        )
        .await?;
        if !result.allowed {
            return Ok(Finished::Denied {
                gate: Box::new(result),
            });
        }
        let mut result = result;
        if result.analysis_only {
            result.confinement = Some(crate::confine::confine_read_only(&mut request));
        }
        gate = Some(Box::new(result));
    }
    let session = match &request.container {
        Some(_) => run::start_in_container(registry, &request, hooks, scope_key).await?,
        None => run::start(registry, &request, hooks, scope_key)?,
    };
    started(&session);
    registry.ensure_sweeper();
    let ran = |outcome, exited| Finished::Ran {
        outcome: Box::new(outcome),
        gate,
        exited,
    };
    if request.background {
        return Ok(ran(running_outcome(&session), false));
    }
    if let Some(window) = yield_after {
        tokio::select! {
            _ = session.wait_exit() => {}
            _ = tokio::time::sleep(window) => {
                if session.mark_backgrounded() {
                    return Ok(ran(running_outcome(&session), false));
                }
            }
        }
    }
    let exit = session.wait_exit().await;
    Ok(ran(outcome_of(&session, &exit, &request), true))
}

/// Tests elsewhere in the crate: run `request` ungated in `scope` to its end and return its outcome.
#[cfg(test)]
pub(crate) async fn run_to_end(request: ExecRequest, scope: &str) -> ExecOutcome {
    type NoAsk = fn(ApprovalRequest) -> std::future::Ready<Answer>;
    let call = ExecCall {
        request,
        scope_key: Some(scope.into()),
        yield_after: None,
        approval: None,
    };
    let registry = crate::session::registry::global();
    match execute(
        registry,
        call,
        SessionHooks::default(),
        None::<NoAsk>,
        |_| {},
    )
    .await
    {
        Ok(Finished::Ran { outcome, .. }) => *outcome,
        Ok(Finished::Denied { .. }) => unreachable!("no gate was asked for"),
        Err(e) => panic!("the run did not start: {e:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::policy::{Ask, Security};
    use crate::session::RunStatus;

    fn call(command: &str) -> ExecCall {
        let mut request = ExecRequest::new(command);
        request.cwd = std::env::temp_dir();
        ExecCall {
            request,
            scope_key: Some("pipeline-test".into()),
            yield_after: None,
            approval: None,
        }
    }

    type NoAsk = fn(ApprovalRequest) -> std::future::Ready<Answer>;

    #[tokio::test]
    async fn a_foreground_call_waits_for_the_end_and_reports_it() {
        let mut seen = None;
        let r = execute(
            crate::session::registry::global(),
            call("echo out; exit 3"),
            SessionHooks::default(),
            None::<NoAsk>,
            |s| seen = Some(s.meta.id.clone()),
        )
        .await
        .unwrap();
        let Finished::Ran {
            outcome,
            gate,
            exited,
        } = r
        else {
            panic!("no gate was asked for, so nothing can be denied");
        };
        assert!(exited);
        assert!(gate.is_none());
        assert_eq!(outcome.exit_code, Some(3));
        assert_eq!(outcome.output, "out\n");
        assert_eq!(seen.as_deref(), Some(outcome.session_id.as_str()));
    }

    #[tokio::test]
    async fn a_yield_window_hands_a_long_run_to_the_background_and_a_short_one_finishes() {
        let registry = crate::session::registry::global();
        let mut long = call("sleep 30");
        long.yield_after = Some(Duration::from_millis(100));
        let r = execute(
            registry,
            long,
            SessionHooks::default(),
            None::<NoAsk>,
            |_| {},
        )
        .await
        .unwrap();
        let Finished::Ran {
            outcome, exited, ..
        } = r
        else {
            panic!("not denied");
        };
        assert!(!exited);
        assert_eq!(outcome.status, RunStatus::Running);
        let session = registry
            .find(&outcome.session_id, Some("pipeline-test"))
            .expect("the backgrounded run is kept");
        session.request_kill(crate::session::KillCause::Killed);
        let exit = tokio::time::timeout(Duration::from_secs(20), session.wait_exit())
            .await
            .expect("the killed run ends");
        assert!(exit.exit_signal.is_some() || exit.exit_code.is_some());

        let mut short = call("echo quick");
        short.yield_after = Some(Duration::from_secs(20));
        let Finished::Ran {
            outcome, exited, ..
        } = execute(
            registry,
            short,
            SessionHooks::default(),
            None::<NoAsk>,
            |_| {},
        )
        .await
        .unwrap()
        else {
            panic!("not denied");
        };
        assert!(exited);
        assert_eq!(outcome.output, "quick\n");
    }

    #[tokio::test]
    async fn a_denied_command_spawns_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let canary = dir.path().join("canary");
        let mut c = call(&format!("touch {}", canary.display()));
        c.approval = Some(ApprovalOptions {
            security: Some(Security::Allowlist),
            ask: Some(Ask::Off),
            approvals_file: Some(dir.path().join("approvals.json")),
            ..Default::default()
        });
        let mut started = false;
        let r = execute(
            crate::session::registry::global(),
            c,
            SessionHooks::default(),
            None::<NoAsk>,
            |_| started = true,
        )
        .await
        .unwrap();
        let Finished::Denied { gate } = r else {
            panic!("an allowlist with nothing on it must deny");
        };
        assert!(!gate.allowed);
        assert!(!started);
        assert!(!canary.exists(), "the denied command ran");
    }
}
