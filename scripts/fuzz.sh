#!/usr/bin/env bash
# Fuzz one target for a while: scripts/fuzz.sh TARGET MINUTES (MINUTES may be a fraction);
# scripts/fuzz.sh --list names the targets. FUZZ_BUILD=dev builds the Rust targets unoptimised
# (quick to build, slow to run: for short runs).
#
# Rust targets (fuzz/fuzz_targets/TARGET.rs) run under cargo-fuzz: nightly Rust, libFuzzer,
# AddressSanitizer. Python targets (fuzz/python/TARGET.py) run under atheris in .venv. Both
# start from the seeds in fuzz/corpus/TARGET (read, never written) and keep what they learn in
# fuzz/work/TARGET (untracked), so a later run goes on from there. An input that fails a check,
# panics, crashes, runs past 10 s or allocates past 2 GB stops the run with exit status 1,
# saved under fuzz/artifacts/TARGET/; add it to fuzz/corpus/TARGET as a regression seed (the
# seeds are replayed by `cargo test` in fuzz/ and by tests/test_fuzz_seeds.py).
set -euo pipefail
cd "$(dirname "$0")/.."
targets() {
    shopt -s nullglob
    for f in fuzz/fuzz_targets/*.rs fuzz/python/*.py; do basename "${f%.*}"; done | sort | tr '\n' ' '
}
if [ "${1:-}" = --list ]; then
    targets
    echo
    exit 0
fi
if [ $# -ne 2 ]; then
    echo "usage: scripts/fuzz.sh TARGET MINUTES; targets: $(targets)" >&2
    exit 2
fi
target=$1
seconds=$(awk -v m="$2" 'BEGIN { s = int(m * 60); if (s < 1) s = 1; print s }')
root=$PWD
work=$root/fuzz/work/$target
artifacts=$root/fuzz/artifacts/$target
mkdir -p "$work" "$artifacts"
limits=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix="$artifacts/")
if [ -f "fuzz/fuzz_targets/$target.rs" ]; then
    if ! cargo +nightly --version >/dev/null 2>&1; then
        echo "scripts/fuzz.sh: the Rust targets need a nightly toolchain (rustup toolchain install nightly)" >&2
        exit 2
    fi
    if ! cargo fuzz --version >/dev/null 2>&1; then
        cargo install --locked cargo-fuzz
    fi
    cd fuzz
    exec cargo +nightly fuzz run ${FUZZ_BUILD:+--$FUZZ_BUILD} "$target" "$work" "$root/fuzz/corpus/$target" -- "${limits[@]}"
elif [ -f "fuzz/python/$target.py" ]; then
    if [ ! -x .venv/bin/python ]; then
        echo "scripts/fuzz.sh: run scripts/test.sh first (it sets up .venv)" >&2
        exit 2
    fi
    .venv/bin/python -c "import atheris" 2>/dev/null || .venv/bin/python -m pip install -q atheris
    exec .venv/bin/python "fuzz/python/$target.py" "${limits[@]}" "$work" "$root/fuzz/corpus/$target"
else
    echo "scripts/fuzz.sh: no target '$target'; targets: $(targets)" >&2
    exit 2
fi
