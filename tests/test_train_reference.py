"""The native trainer learns exactly the merges of ``tokenmill/reference.py``, ties included.

Oracle: the reference (plain Python, DESIGN.md §2). Checked on random small corpora built to
have many ties (few letters, short words, repeated texts) and on real text, for the three
named patterns and a custom regex, with 1 and 2 threads.
"""

from __future__ import annotations

import gzip
import hashlib
import inspect
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import remembered

import tokenmill
from tokenmill import reference

PATTERNS = ["gpt2", "cl100k", "o200k", r"[a-z]+| ?[^a-z ]+| +"]


def native(texts, vocab_size, pattern, min_frequency=2, threads=2):
    tok = tokenmill.train(
        list(texts), vocab_size, pattern=pattern, min_frequency=min_frequency, num_threads=threads
    )
    return [(m.left, m.right, m.count) for m in tok.merges]


REFERENCE = "reference " + hashlib.sha256(inspect.getsource(reference).encode()).hexdigest()


def expected(texts, vocab_size, pattern):
    """The reference's merges (kept from an earlier run for large corpora: tests/oracle.py)."""
    size = sum(map(len, texts))
    ask = lambda: reference.train(texts, vocab_size, pattern=pattern)  # noqa: E731
    return remembered(REFERENCE, (texts, vocab_size, pattern), size, ask)


def bundled(name: str) -> str:
    data = resources.files("tokenmill.data").joinpath(name).read_bytes()
    return gzip.decompress(data).decode("utf-8")


# Few distinct characters and short words make most counts tie; "é" and "😀" add multi-byte
# characters, "'" and digits exercise the contraction and number rules of the patterns.
words = st.text(alphabet="abcé😀'1 \n", min_size=1, max_size=8)
corpora = st.lists(words, min_size=1, max_size=12).map(lambda ws: ws * 2)


@pytest.mark.filterwarnings("ignore::tokenmill.TrainingWarning")
@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=corpora, merges=st.integers(1, 40), min_frequency=st.sampled_from([1, 2, 3]))
def test_tie_heavy_random_corpora(pattern, texts, merges, min_frequency):
    want = reference.train(texts, 256 + merges, pattern=pattern, min_frequency=min_frequency)
    for threads in (1, 2):
        got = native(texts, 256 + merges, pattern, min_frequency, threads)
        assert got == want


@pytest.mark.filterwarnings("ignore::tokenmill.TrainingWarning")
@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="ab ", max_size=40), merges=st.integers(1, 20))
def test_one_text_with_runs(text, merges):
    # Runs of one letter ("aaaa") merge left to right without overlap; every pair ties.
    want = reference.train([text], 256 + merges, pattern="gpt2", min_frequency=1)
    if not text:
        return
    assert native([text], 256 + merges, "gpt2", min_frequency=1) == want


@pytest.mark.filterwarnings("ignore::tokenmill.TrainingWarning")
def test_design_worked_example():
    assert native(["ab cd ab cd"], 266, "gpt2") == [(97, 98, 2), (32, 99, 2), (257, 100, 2)]


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_tiny_shakespeare_512(pattern):
    text = bundled("tinyshakespeare.txt.gz")
    assert len(text) > 1_100_000
    assert native([text], 512, pattern) == expected([text], 512, pattern)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_holmes_300kb_2048(pattern):
    text = bundled("holmes.txt.gz")[:300_000]
    assert native([text], 2048, pattern) == expected([text], 2048, pattern)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_multilingual_1024(shared_data, pattern):
    # Russian: two-byte letters, so the first merges join bytes of one character.
    text = (shared_data / "multilingual" / "ru.txt").read_text(encoding="utf-8")
    assert native([text], 1024, pattern) == expected([text], 1024, pattern)


def test_several_texts_are_one_corpus_without_shared_chunks(shared_data):
    # Texts in order; no chunk spans two (the reference splits each text on its own).
    texts = [
        (shared_data / "multilingual" / f"{lang}.txt").read_text(encoding="utf-8")[:20_000]
        for lang in ("en", "de", "emoji")
    ]
    assert native(texts, 700, "o200k") == expected(texts, 700, "o200k")
