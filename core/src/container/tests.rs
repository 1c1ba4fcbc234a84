//! The container host against a real engine (`scripts/podman-engine.sh` serves one in CI):
//! `AGENT_EXEC_TEST_ENGINE` names it (a `DOCKER_HOST` address) and `AGENT_EXEC_TEST_IMAGE` an image
//! with a POSIX shell (default `localhost/agent-exec-test:busybox`). Skipped, by name, without one.

use std::time::Duration;

use super::ContainerSpec;
use crate::session::ExecOutcome;
use crate::spawn::ExecRequest;

fn engine() -> Option<ContainerSpec> {
    let engine = std::env::var("AGENT_EXEC_TEST_ENGINE")
        .ok()
        .filter(|e| !e.is_empty());
    if !crate::test_needs::runs_here("container-engine", engine.is_some()) {
        return None;
    }
    Some(ContainerSpec {
        image: Some(
            std::env::var("AGENT_EXEC_TEST_IMAGE")
                .unwrap_or_else(|_| "localhost/agent-exec-test:busybox".into()),
        ),
        engine,
        network: Some("none".into()),
        ..ContainerSpec::default()
    })
}

async fn run(
    spec: &ContainerSpec,
    dir: &std::path::Path,
    command: &str,
    scope: &str,
) -> ExecOutcome {
    let mut request = ExecRequest::new(command);
    request.cwd = dir.to_path_buf();
    request.timeout = Some(Duration::from_secs(60));
    request.container = Some(spec.clone());
    crate::exec::run_to_end(request, scope).await
}

#[tokio::test]
async fn a_run_in_a_container_reports_its_output_exit_code_and_works_in_the_bound_workspace() {
    let Some(spec) = engine() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(dir.join("from-host.txt"), "host file\n").unwrap();
    let scope = format!("container-test-{}", crate::util::uuid_v4());
    let r = run(
        &spec,
        &dir,
        "cat from-host.txt; echo made > in-container.txt; echo oops >&2; pwd; exit 7",
        &scope,
    )
    .await;
    assert_eq!(r.exit_code, Some(7), "{}", r.output);
    assert!(r.output.contains("host file\n"), "{}", r.output);
    assert!(r.output.contains("oops"), "{}", r.output);
    assert!(
        r.output.contains(&format!("{}\n", dir.display())),
        "{}",
        r.output
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("in-container.txt")).unwrap(),
        "made\n"
    );
    // The scope's container is reused: what a run leaves in it, the next one sees.
    let first = run(&spec, &dir, "echo kept > /tmp/mark; hostname", &scope).await;
    let second = run(&spec, &dir, "cat /tmp/mark; hostname", &scope).await;
    assert_eq!(
        second.output,
        format!("kept\n{}", first.output),
        "{second:?}"
    );
}
