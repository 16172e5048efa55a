"""The character-level baseline: exact round trips, clear errors on unseen characters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokenmill
from tokenmill.chars import CharTokenizer


@given(st.text(min_size=1))
def test_round_trip_on_its_own_text(text):
    tok = CharTokenizer.train(text)
    ids = tok.encode(text)
    assert len(ids) == len(text) == tok.count(text)
    assert tok.decode(ids) == text
    assert sorted(set(ids)) == list(range(len(set(text))))
    assert tok.n_vocab == len(set(text))


@given(st.text(min_size=1), st.text())
def test_unseen_characters(train, other):
    strict = CharTokenizer.train(train)
    lenient = CharTokenizer.train(train, unknown="<unk>")
    unseen = [i for i, c in enumerate(other) if c not in set(train)]
    if unseen:
        with pytest.raises(tokenmill.errors.UnknownCharacterError) as err:
            strict.encode(other)
        assert err.value.position == unseen[0]
        assert err.value.char == other[unseen[0]]
        ids = lenient.encode(other)
        assert [i for i, t in enumerate(ids) if t == 0] == unseen
    else:
        assert lenient.decode(lenient.encode(other)) == other


def test_shakespeare_like_walkthrough(tmp_path):
    text = "First Citizen:\nBefore we proceed any further, hear me speak.\n"
    tok = CharTokenizer.train(text)
    assert tok.decode(tok.encode("hear me")) == "hear me"
    assert tok.encode_to_numpy("hear").tolist() == tok.encode("hear")
    path = tmp_path / "chars.json"
    tok.save(path)
    assert CharTokenizer.load(path) == tok
    with pytest.raises(tokenmill.UnknownTokenIdError):
        tok.decode([tok.n_vocab])


def test_bad_files(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "tokenmill-chars", "version": 1, "chars": ["a", "bc"]}')
    with pytest.raises(tokenmill.VocabFileError, match="single characters"):
        CharTokenizer.load(path)
    path.write_text("{")
    with pytest.raises(tokenmill.VocabFileError, match="not valid JSON"):
        CharTokenizer.load(path)
