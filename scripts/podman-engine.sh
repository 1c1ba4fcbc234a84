#!/usr/bin/env bash
# A Docker Engine API of the tests' own, served by Podman (issue 37): its storage, state and socket
# under one directory, runc as the runtime (crun refuses hybrid cgroup v1+v2 hosts), cgroupfs, events
# in a file, and a small image made here from Debian's busybox-static (no registry is reached).
#
#   scripts/podman-engine.sh start DIR    serve unix://DIR/engine.sock (prints DOCKER_HOST=...), image
#                                         localhost/agent-exec-test:busybox
#   scripts/podman-engine.sh stop DIR     end the service, remove every container, then DIR
#   scripts/podman-engine.sh leftovers DIR
#                                         fail, naming them, if containers agent-exec made (its owner
#                                         label) are still there 30 s after every test process ended
#
# Needs root, podman, runc and busybox-static (apt-get install podman runc busybox-static).
set -euo pipefail
cmd=${1:?start|stop|leftovers} dir=${2:?directory}
podman_in() {
  podman --root "$dir/root" --runroot "$dir/run" --runtime runc --cgroup-manager cgroupfs \
    --events-backend file --storage-driver "$(cat "$dir/driver" 2>/dev/null || echo overlay)" \
    --tmpdir "$dir/tmp" "$@"
}
podman_path=$(command -v podman || echo podman)
case "$cmd" in
  start)
    mkdir -p "$dir/tmp" "$dir/run" "$dir/root"
    # overlay where the directory's file system takes it (not on overlayfs itself), else vfs.
    if [ "$(findmnt -no FSTYPE -T "$dir" 2>/dev/null)" = overlay ]; then echo vfs > "$dir/driver"; else echo overlay > "$dir/driver"; fi
    # The image: busybox and its applets, a passwd, the directories a command expects.
    rootfs=$dir/rootfs
    rm -rf "$rootfs"
    mkdir -p "$rootfs"/{bin,etc,tmp,proc,sys,dev,root,work}
    chmod 1777 "$rootfs/tmp"
    cp /bin/busybox "$rootfs/bin/busybox"
    for applet in $("$rootfs/bin/busybox" --list); do
      [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$rootfs/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' > "$rootfs/etc/group"
    tar -C "$rootfs" -cf "$dir/rootfs.tar" .
    podman_in import --quiet "$dir/rootfs.tar" localhost/agent-exec-test:busybox > /dev/null
    rm -rf "$rootfs" "$dir/rootfs.tar"
    # Detached, in its own session; the pid is kept for stop.
    setsid "$podman_path" --root "$dir/root" --runroot "$dir/run" --runtime runc --cgroup-manager cgroupfs \
      --events-backend file --storage-driver "$(cat "$dir/driver")" --tmpdir "$dir/tmp" \
      system service --time 0 "unix://$dir/engine.sock" > "$dir/service.log" 2>&1 < /dev/null &
    echo $! > "$dir/service.pid"
    for _ in $(seq 100); do [ -S "$dir/engine.sock" ] && break; sleep 0.1; done
    [ -S "$dir/engine.sock" ] || { cat "$dir/service.log" >&2; exit 1; }
    echo "DOCKER_HOST=unix://$dir/engine.sock"
    ;;
  leftovers)
    # The engine removes a dead owner's containers a moment after its lifeline closes.
    left=
    for _ in $(seq 60); do
      left=$(podman_in ps --all --filter label=dev.agent-exec.owner --format '{{.ID}} {{.Names}} {{.Status}}')
      [ -z "$left" ] && break
      sleep 0.5
    done
    if [ -n "$left" ]; then
      echo "containers agent-exec made are still there after the tests ended:" >&2
      echo "$left" >&2
      exit 1
    fi
    echo "no container left behind"
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    podman_in rm --all --force --time 0 > /dev/null 2>&1 || true
    if [ -f "$dir/service.pid" ]; then
      pid=$(cat "$dir/service.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    podman_in system reset --force > /dev/null 2>&1 || true
    # A container's conmon outlives the service for a moment and, when it exits, runs podman's
    # cleanup, which recreates directories under DIR: wait for this root's conmons (by pid: those
    # whose command line names DIR), end the ones that linger, then remove.
    conmons() {
      local p
      for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = conmon ] && grep -qzF -- "$dir/" "$p/cmdline" 2>/dev/null && echo "${p#/proc/}"
      done
      return 0
    }
    for _ in $(seq 100); do [ -z "$(conmons)" ] && break; sleep 0.1; done
    for p in $(conmons); do kill "$p" 2>/dev/null || true; done
    for _ in $(seq 50); do [ -z "$(conmons)" ] && break; sleep 0.1; done
    # Storage may hold mounts (overlay): unmount what is left before removing.
    { grep -o " $dir/[^ ]*" /proc/self/mounts || true; } | sort -r | while read -r m; do
      umount -l "$m" 2>/dev/null || true
    done
    rm -rf "$dir"
    if [ -e "$dir" ]; then echo "podman-engine.sh: $dir could not be removed" >&2; exit 1; fi
    ;;
  *) echo "usage: $0 start|stop|leftovers DIR" >&2; exit 2 ;;
esac
