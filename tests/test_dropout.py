"""BPE-dropout (``encode(text, dropout=p, seed=s)``) against its definition,
:func:`tokenmill.reference.encode_dropout`: the same draws, so the same ids, for every seed."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import Tokenizer, reference
from tokenmill.sources import bundled_corpus
from tokenmill.tokenizer import clean_text

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
PROBABILITIES = st.sampled_from([0.0, 0.05, 0.1, 0.5, 0.9, 1.0]) | st.floats(0, 1)
TEXTS = st.text(max_size=120) | st.sampled_from(
    ["Elementary, my dear Watson.", "the the the", "  indented\n\tcode()", "1234567 naïve"]
)


@functools.cache
def trained(pattern: str) -> Tokenizer:
    return tokenmill.train(bundled_corpus("holmes")[:300_000], 700, pattern=pattern)


def rules(tok: Tokenizer) -> list[tuple[int, int, int]]:
    assert tok.merges is not None
    return [(m.left, m.right, m.count) for m in tok.merges]


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k"])
@settings(max_examples=200, deadline=None)
@given(text=TEXTS, p=PROBABILITIES, seed=SEEDS)
def test_dropout_draws_as_the_definition(pattern, text, p, seed):
    tok = trained(pattern)
    got = tok.encode(text, dropout=p, seed=seed, disallowed_special=())
    if p == 0:
        assert got == tok.encode(text, disallowed_special=())
    else:
        assert got == reference.encode_dropout(text, rules(tok), p, seed, pattern=pattern)
    assert tok.decode(got) == reference.decode(got, rules(tok))
    # The same seed, the same ids.
    assert tok.encode(text, dropout=p, seed=seed, disallowed_special=()) == got


@settings(max_examples=100, deadline=None)
@given(text=TEXTS, seed=SEEDS)
def test_full_dropout_gives_the_bytes_and_keeps_special_tokens(text, seed):
    tok = trained("cl100k")
    special = Tokenizer(tok.token_bytes_list(), tok.pattern, {"<|end|>": 700})
    ids = special.encode(text + "<|end|>", dropout=1.0, seed=seed, allowed_special="all")
    assert ids == [*clean_text(text).encode(), 700]
    with pytest.raises(tokenmill.DisallowedSpecialTokenError):
        special.encode("<|end|>", dropout=0.5, seed=seed)


def test_dropout_splits_whole_words_and_varies_with_the_seed():
    tok = tokenmill.load("cl100k_base")
    text = bundled_corpus("holmes")[:20_000]
    plain = tok.encode(text)
    runs = [tok.encode(text, dropout=0.1, seed=s) for s in range(3)]
    for ids in runs:
        assert tok.decode(ids) == text
        assert len(plain) < len(ids) < 2 * len(plain)
    assert runs[0] != runs[1] != runs[2]
    # " the" is a whole token: dropout splits it too.
    assert any(tok.encode(" the", dropout=0.5, seed=s) != tok.encode(" the") for s in range(20))
    # No seed: fresh draws each call.
    assert len({tuple(tok.encode(text[:2000], dropout=0.3)) for _ in range(3)}) > 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"dropout": -0.1}, tokenmill.InvalidArgumentError, "between 0 and 1"),
        ({"dropout": 1.5}, tokenmill.InvalidArgumentError, "between 0 and 1"),
        ({"dropout": float("nan")}, tokenmill.InvalidArgumentError, "between 0 and 1"),
        ({"dropout": "0.1"}, tokenmill.WrongTypeError, "dropout must be a float"),
        ({"dropout": 0.1, "seed": -1}, tokenmill.InvalidArgumentError, "seed must be in"),
        ({"dropout": 0.1, "seed": 2**64}, tokenmill.InvalidArgumentError, "seed must be in"),
        ({"dropout": 0.1, "seed": 1.5}, tokenmill.WrongTypeError, "seed must be an int"),
    ],
)
def test_bad_dropout_arguments_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        trained("gpt2").encode("hello", **kwargs)
