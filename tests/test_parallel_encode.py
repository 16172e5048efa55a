"""One text on several threads (``num_threads`` > 1): cut where no chunk can cross, pieces
encoded in parallel. The ids must be exactly the one-thread ids (and tiktoken's), whatever
the text and however small the pieces."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import Remembering, tiktoken_encoding

import tokenmill
from tokenmill import _core
from tokenmill.errors import DisallowedSpecialTokenError
from tokenmill.sources import bundled_corpus

NAMES = ["gpt2", "cl100k_base", "o200k_base"]

# Runs of what decides where chunks end around a cut: ASCII letters and digits around spaces
# and newlines, whitespace runs, apostrophes (contractions), punctuation, marks, CJK, \r.
CHARS = list("aZq 9\n\r\t.'!/é中\u0301\u00a0")
RUNS = [" ", "  ", "\n\n", " \n", "'s", "'LL", "ab cd", "x\ny", ".\nA", "1\n2", "Hello world"]
PIECES = st.sampled_from([*CHARS, *RUNS, "<|endoftext|>"])
TEXT = st.lists(PIECES, max_size=80).map("".join)


@functools.cache
def tok(name: str) -> tokenmill.Tokenizer:
    return tokenmill.load(name)


@functools.cache
def core(name: str) -> _core.CoreTokenizer:
    """The native tokenizer of ``name``, whose `encode` takes the size of the pieces."""
    t = tok(name)
    return _core.CoreTokenizer(t.token_bytes_list(), t.pattern, list(t.special_tokens.items()))


def cut_encode(name: str, text: str, piece_bytes: int, allowed: object) -> list[int]:
    """`encode` on 2 threads with pieces as small as asked (the public API cuts at 64 KB), no
    special token disallowed: every one allowed, or none."""
    return core(name).encode(text, "all" if allowed == "all" else [], [], 2, piece_bytes)


@settings(max_examples=300)
@given(text=TEXT, piece_bytes=st.integers(1, 12), name=st.sampled_from(NAMES))
def test_any_text_cut_anywhere_allowed_gives_the_same_ids(text, piece_bytes, name):
    t = tok(name)
    assert cut_encode(name, text, piece_bytes, frozenset()) == t.encode(text, disallowed_special=())
    assert cut_encode(name, text, piece_bytes, "all") == t.encode(text, allowed_special="all")


def test_a_long_text_on_two_threads_equals_tiktoken():
    text = bundled_corpus("holmes")
    for name in NAMES:
        want = Remembering(tiktoken_encoding(name)).encode_ordinary(text)
        assert tok(name).encode_ordinary(text, num_threads=2) == want, name
        assert tok(name).encode_to_numpy(text, num_threads=2).tolist() == want, name
        assert tok(name).encode(text, num_threads=2) == want, name
        assert tok(name).count(text, num_threads=2) == len(want), name


def test_shared_corpora_on_two_threads(shared_data):
    files = sorted(p for p in shared_data.rglob("*") if p.suffix in (".txt", ".json", ".csv"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        for name in NAMES:
            t = tok(name)
            assert t.encode_ordinary(text, num_threads=2) == t.encode_ordinary(text), (path, name)


def test_special_tokens_and_errors_as_on_one_thread():
    t = tok("gpt2")
    text = bundled_corpus("holmes")[:300_000]
    mixed = text[:150_000] + "<|endoftext|>" + text[150_000:]
    with pytest.raises(DisallowedSpecialTokenError, match="endoftext"):
        t.encode(mixed, num_threads=2)
    assert t.encode(mixed, allowed_special="all", num_threads=2) == t.encode(
        mixed, allowed_special="all"
    )
    assert 50256 in t.encode(mixed, allowed_special="all", num_threads=2)
    with pytest.raises(ValueError, match="num_threads"):
        t.encode_ordinary(text, num_threads=0)


def test_a_custom_pattern_is_not_cut_and_gives_the_same_ids():
    text = bundled_corpus("holmes")[:400_000]
    custom = tokenmill.train(text[:100_000], vocab_size=400, pattern=r"\w+|\s+|[^\w\s]+")
    assert custom.encode_ordinary(text, num_threads=2) == custom.encode_ordinary(text)
