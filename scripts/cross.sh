#!/usr/bin/env bash
# Other targets from this Linux x64 machine, with nothing downloaded but registry packages.
#
#   scripts/cross.sh toolchain          install Debian's rustc-web/cargo-web (1.96) with std's source and
#                                       clippy, qemu-user-static and the arm64 libc (to run arm64 code)
#   scripts/cross.sh check TARGET...    clippy (all targets, -D warnings) for each target, std built from
#                                       source (-Zbuild-std), e.g. x86_64-apple-darwin
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
  local want=(rustc-web cargo-web rust-web-src rust-web-clippy qemu-user-static libc6-arm64-cross)
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

cmd=${1:-}
shift || true
case "$cmd" in
  toolchain) toolchain ;;
  check) check "$@" ;;
  *)
    echo "usage: scripts/cross.sh toolchain | check TARGET..." >&2
    exit 2
    ;;
esac
