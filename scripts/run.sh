#!/usr/bin/env bash
# Install tokenmill (into .venv, building the Rust core) and run the main job: train a
# tokenizer on the bundled Sherlock Holmes corpus and show what it learned. Arguments are
# passed to `tokenmill train` (e.g. --vocab-size 8192, --corpus tinyshakespeare, files).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
exec .venv/bin/tokenmill train "$@"
