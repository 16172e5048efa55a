"""A forked child (multiprocessing's "fork" start method, PyTorch DataLoader workers on Linux)
encodes and trains with threads after its parent did: it must finish with the parent's
results instead of waiting forever on pools whose threads stayed in the parent (the deadlock
HF tokenizers answers with TOKENIZERS_PARALLELISM)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

SCRIPT = """
import multiprocessing as mp
import tokenmill

tok = tokenmill.load("gpt2")
docs = [f"hello world, document number {i}" for i in range(300)]
text = "the quick brown fox jumps over the lazy dog; " * 400


def work(_):
    ids = tok.encode_ordinary_batch(docs, num_threads=2)
    flat, offsets = tok.encode_batch_to_numpy(docs, num_threads=2)
    trained = tokenmill.train([text], vocab_size=300, num_threads=2, progress=False)
    return ids, flat.tolist(), offsets.tolist(), trained.token_byte_values()


if __name__ == "__main__":
    want = work(None)  # the parent builds its thread pools first
    with mp.get_context("fork").Pool(2) as pool:
        results = pool.map(work, range(2))
    print("same" if all(r == want for r in results) else "different")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_forked_children_use_threads_after_the_parent(tmp_path):
    script = tmp_path / "forked.py"
    script.write_text(SCRIPT)
    # Its own session, so that on a hang the children are killed with it.
    p = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail("a forked child hung on its parent's thread pools")
    assert p.returncode == 0, err
    assert out.strip() == "same"
