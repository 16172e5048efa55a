#!/usr/bin/env bash
# The Rust tests under a checker of undefined behaviour: scripts/sanitize.sh asan|miri [FILTER...]
#
# - asan: every unit test of the crate, built with AddressSanitizer (nightly, the standard
#   library rebuilt with it): out-of-bounds reads and writes, use after free, leaks. This
#   covers the SIMD copies this CPU runs and the unsafe code around CPython's objects.
# - miri: the tests of the pure-Rust parts that use no SIMD intrinsics and no system calls
#   Miri lacks (the merge rules, the vocabulary, training, the caches, the special-token
#   search), under Miri's interpreter. Miri is ~1000x slower, so the randomised tests run fewer
#   rounds under cfg(miri).
# FILTER narrows either to the tests whose names contain it.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
shift || true
target=$(rustc -vV | sed -n 's/^host: //p')
case "$mode" in
asan)
    RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address" \
        ASAN_OPTIONS="detect_leaks=1" \
        exec cargo +nightly test -Zbuild-std --target "$target" --target-dir target/asan --lib "$@"
    ;;
miri)
    filters=("$@")
    if [ ${#filters[@]} -eq 0 ]; then
        filters=(merge:: vocab:: train:: specials:: encode::cache:: encode::room::)
    fi
    # Miri's default isolation forbids reading the CPU count and the clock, which the thread
    # pool and the tests' seeds do not need here.
    MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}" \
        exec cargo +nightly miri test --target-dir target/miri --lib -- "${filters[@]}"
    ;;
*)
    echo "usage: scripts/sanitize.sh asan|miri [FILTER...]" >&2
    exit 2
    ;;
esac
