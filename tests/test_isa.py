"""``TOKENMILL_ISA`` runs the hot loops' copy for an instruction set; ``tokenmill.isa()`` says
which runs. (scripts/test.sh runs the oracle tests once per set this CPU has.)"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import tokenmill

PROBE = (
    "import tokenmill\n"
    "enc = tokenmill.load('o200k_base')\n"
    "text = 'Ünïcödé wörds, 日本語のテキスト, and ASCII prose.\\n' * 300\n"
    "print(tokenmill.isa(), sum(enc.encode_ordinary(text)), enc.count(text))\n"
)


def run(isa: str | None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("TOKENMILL_ISA", None)
    if isa is not None:
        env["TOKENMILL_ISA"] = isa
    return subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120
    )


def test_the_highest_set_runs_unless_told() -> None:
    supported = tokenmill.supported_isas()
    assert supported[0] == "portable"
    assert set(supported) <= {"portable", "avx2", "avx512", "avx512vbmi"}
    done = run(None)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == supported[-1]


@pytest.mark.parametrize("isa", tokenmill.supported_isas())
def test_each_set_runs_when_named_and_gives_the_same_ids(isa: str) -> None:
    default, named = run(None), run(isa)
    assert named.returncode == 0, named.stderr
    assert named.stdout.split()[0] == isa
    assert named.stdout.split()[1:] == default.stdout.split()[1:]


@pytest.mark.parametrize(
    ("isa", "problem"),
    [("avx9", 'unknown instruction set "avx9"'), ("AVX2", "expected one of portable")],
)
def test_a_set_that_cannot_run_fails_the_import(isa: str, problem: str) -> None:
    done = run(isa)
    assert done.returncode != 0
    assert "UnsupportedIsaError" in done.stderr and problem in done.stderr, done.stderr
