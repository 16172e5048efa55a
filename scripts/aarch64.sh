#!/usr/bin/env bash
# Build the crate for aarch64-unknown-linux-gnu and run its tests under qemu-user:
# scripts/aarch64.sh [CARGO TEST ARGS...]. ARM machines run the portable path of the scanners and
# the merge; its tests (the literal merge rule, the regex oracle, the reference trainer's rule)
# run there as on x86_64.
#
# The route is Debian's: rustc-web with the arm64 standard library through multiarch, the
# aarch64 cross linker, qemu-user. It installs them with apt-get (as root or through sudo).
# The test harness runs tests on threads, so it needs a qemu-user that runs guest threads: on
# some hosts Debian 12's (7.2) hangs in glibc's pthread_create (a C program that starts one
# thread shows it), and the tests then never finish.
set -euo pipefail
cd "$(dirname "$0")/.."
need=(rustc-web cargo-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
missing=()
for p in "${need[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" >/dev/null
fi
export RUSTC=/usr/bin/rustc
# Optimised, with debug assertions and overflow checks kept: unoptimised code under qemu takes
# hours on the corpus-sized tests.
export CARGO_PROFILE_DEV_OPT_LEVEL=2
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
exec /usr/bin/cargo test --target aarch64-unknown-linux-gnu --target-dir target/aarch64 "$@"
