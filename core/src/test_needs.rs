//! How a Rust test says that it needs something a host may lack (a writable cgroup hierarchy, root).
//!
//! Cargo hides what a passing test prints, so a test that returned early because the host lacked
//! something looked exactly like one that checked its behaviour. [`runs_here`] makes the difference
//! visible and, where a CI promises the thing, fatal:
//! - `AGENT_EXEC_TEST_REQUIRE` (comma-separated needs, or `all`): a test whose need is listed and not
//!   met fails instead of skipping. `.ci/run` lists what the machine has, found without our code.
//! - `AGENT_EXEC_TEST_SKIPS`: a file each skip is appended to (`test name: needs X`), which
//!   `scripts/test.js` prints after the Rust tests.

use std::io::Write;

/// True when the test may go on. `available` is whether `need` is met here; when it is not, the
/// test fails if the environment requires `need`, else records the skip and returns false.
pub(crate) fn runs_here(need: &str, available: bool) -> bool {
    if available {
        return true;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let required = std::env::var("AGENT_EXEC_TEST_REQUIRE").unwrap_or_default();
    if is_required(need, &required) {
        panic!(
            "{test} needs {need}, which AGENT_EXEC_TEST_REQUIRE promises, but this host lacks it"
        );
    }
    if let Some(file) = std::env::var_os("AGENT_EXEC_TEST_SKIPS") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
        {
            let _ = writeln!(f, "{test}: needs {need}");
        }
    }
    eprintln!("skipped {test}: needs {need}");
    false
}

/// Whether `need` is one of the comma-separated `required` (or `required` says `all`).
fn is_required(need: &str, required: &str) -> bool {
    required
        .split(',')
        .map(str::trim)
        .any(|r| r == need || r == "all")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_met_need_runs_and_a_listed_one_is_required() {
        assert!(runs_here("anything", true));
        assert!(is_required("cgroup-v2", "root, cgroup-v2"));
        assert!(is_required("cgroup-v2", "all"));
        assert!(!is_required("cgroup-v2", "cgroup-v1"));
        assert!(!is_required("cgroup-v2", ""));
    }
}
