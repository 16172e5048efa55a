#!/usr/bin/env bash
# The Rust tests under a checker of undefined behaviour: scripts/sanitize.sh asan|miri [FILTER...]
#
# - asan: every unit test of the crate, built with AddressSanitizer (nightly, the standard
#   library rebuilt with it): out-of-bounds reads and writes, use after free, leaks. This
#   covers the SIMD copies this CPU runs and the unsafe code around CPython's objects.
# - miri: the deterministic tests of the pure-Rust parts (the merge rule, the vocabulary and
#   its pair index, rank files, the special-token policy, training's counting and merging, the
#   long-chunk cache's hashing) under Miri's interpreter, which finds undefined behaviour in
#   unsafe code. Miri runs ~1000x slower, which rules out the randomised tests.
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
        filters=(merge::tests:: vocab::tests::ranks_round_trip vocab::tests::duplicates
            vocab::tests::parents_are_the_last_merge vocab::tests::merging_alone
            vocab::rank_file:: specials::tests::special_ids_far train::merge::tests::design
            train::merge::tests::overlapping train::merge::tests::tie_follows
            train::count::tests::first_occurrence train::count::tests::specials_are_cut_out
            encode::cache::long::)
    fi
    # Isolation off: the thread pool reads the CPU count. Tree Borrows, not Stacked Borrows:
    # rayon's crossbeam-epoch breaks the Stacked Borrows rules in its own list (a report
    # inside crossbeam-epoch's internal.rs on any test that starts the pool).
    MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation -Zmiri-tree-borrows}" \
        exec cargo +nightly miri test --target-dir target/miri --lib -- "${filters[@]}"
    ;;
*)
    echo "usage: scripts/sanitize.sh asan|miri [FILTER...]" >&2
    exit 2
    ;;
esac
