#!/usr/bin/env bash
# Mutation testing of the core's gate, sandbox supervisor and kill code (issue 32): cargo-mutants changes
# one thing at a time (a condition flipped, a function returning a default) and runs the unit tests of
# that module; a mutant the tests do not catch ("missed") is a behaviour nothing checks. Slow (each
# mutant is a build and a test run: about an hour per file on 2 cores), so it runs on demand, not in CI.
#
#   bash scripts/mutants.sh [gate|supervisor|kill|all]    results in mutants.out/<set>/
#   MUTANTS_ITERATE=1 bash scripts/mutants.sh supervisor   retest only what an earlier run left uncaught
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || cargo install --locked cargo-mutants
# A mutant of the kill code can signal the wrong processes (a group of 0 or -1, or a walk that takes
# every process for the run's): each test binary of the kill set runs in a PID namespace of its own
# (cargo's runner, scripts/in-pid-namespace.sh), so the worst a mutant reaches is its own test run,
# never cargo-mutants, the shell or the machine that started it.
kill_runner() {
  local triple
  triple=$(rustc -vV | sed -n 's/^host: //p' | tr 'a-z-' 'A-Z_')
  export "CARGO_TARGET_${triple}_RUNNER=$PWD/scripts/in-pid-namespace.sh"
}
run() {
  local name=$1 filter=$2
  shift 2
  local exclude=()
  # The pid and group guards are pure functions with a unit test of their own
  # (`only_a_runs_own_pids_and_groups_may_be_signalled`); a mutated guard would only signal inside
  # the test's namespace, but it would also make every other kill test's outcome a matter of timing.
  [ "$name" = kill ] && kill_runner && exclude=(--exclude-re 'may_signal_(group|process)')
  # Test helpers are not the code under test (cargo-mutants skips `#[cfg(test)]` but not
  # `#[cfg(all(test, ...))]`), and code built only off Linux (`without_proc`) cannot be tested here.
  exclude+=(--exclude-re 'tests::' --exclude-re 'without_proc::')
  echo "== mutants of $* (tests: $filter)"
  mkdir -p "mutants.out/$name"
  # --lib: the core's unit tests; the test binary's filter keeps each run to the module's own tests.
  cargo mutants --package agent-exec-core --output "mutants.out/$name" --timeout "${MUTANTS_TIMEOUT:-60}" \
    ${MUTANTS_ITERATE:+--iterate} "${exclude[@]}" "${@/#/--file=}" -- --lib -- "$filter" || true
  echo "== $name: $(wc -l < "mutants.out/$name/mutants.out/caught.txt") caught," \
    "$(wc -l < "mutants.out/$name/mutants.out/missed.txt") missed," \
    "$(wc -l < "mutants.out/$name/mutants.out/timeout.txt") timed out," \
    "$(wc -l < "mutants.out/$name/mutants.out/unviable.txt") unviable"
  cat "mutants.out/$name/mutants.out/missed.txt"
}
case "${1:-all}" in
  gate) run gate approval:: core/src/approval/gate.rs ;;
  supervisor) run supervisor sandbox:: core/src/sandbox/supervisor.rs ;;
  kill) run kill kill:: core/src/kill/tree.rs ;; # job.rs is Windows-only: not built here
  all)
    run gate approval:: core/src/approval/gate.rs
    run supervisor sandbox:: core/src/sandbox/supervisor.rs
    run kill kill:: core/src/kill/tree.rs
    ;;
  *) echo "usage: $0 [gate|supervisor|kill|all]" >&2; exit 2 ;;
esac
