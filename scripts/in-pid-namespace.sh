#!/usr/bin/env bash
# Run a command in a PID namespace of its own (with its own /proc), under a bash that reaps orphans as
# an init would: what the command signals, group 0 and -1 included, stays inside. The kill mutants use
# it as cargo's test runner, so a mutant that signals everything ends only its own test binary.
set -euo pipefail
ns=(--pid --fork --mount-proc --kill-child)
[ "$(id -u)" = 0 ] || ns=(--user --map-root-user "${ns[@]}")
# `exit` after the command keeps bash from exec'ing it in its place (pid 1 must stay a reaper).
exec unshare "${ns[@]}" bash -c '"$@"; exit $?' in-pid-namespace "$@"
