"""Continued training (``train(..., base=...)``) learns exactly ``reference.extend``'s merges.

Oracles: ``reference.extend`` (plain Python: every chunk re-encoded by the rank rule after
each merge) for the merges, on random vocabularies whose tokens the rank rule often cannot make
(where one new token sets off others), on a tokenizer trained here, and on gpt2 and cl100k_base
(ids not in byte order, gaps, special tokens); tiktoken's ``Encoding`` built from the extended
vocabulary for the ids it gives; HF ``tokenizers`` for its export.
"""

from __future__ import annotations

import gzip
import re
from ast import literal_eval
from importlib import resources

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import reference
from tokenmill.errors import InvalidSpecialTokensError, TrainingError


def holmes(start: int, size: int) -> str:
    data = resources.files("tokenmill.data").joinpath("holmes.txt.gz").read_bytes()
    return gzip.decompress(data).decode("utf-8")[start : start + size]


def learned(texts, base, n_merges, **options):
    """The merges continued training logs, as (left bytes, right bytes, count), and the result."""
    lines: list[str] = []
    vocab_size = base.n_vocab + n_merges + len(options.get("special_tokens", ()))
    tok = tokenmill.train(texts, vocab_size, base=base, log=lines.append, **options)
    got = []
    for line in lines:
        m = re.fullmatch(r"merge (\d+): (b.*) \+ (b.*) -> (b.*) seen ([\d,]+)x", line)
        assert m, line
        got.append((literal_eval(m[2]), literal_eval(m[3]), int(m[5].replace(",", ""))))
    return got, tok


def expected(texts, base, n_merges, pattern, min_frequency=2):
    tokens = base.token_bytes_list()
    tokens += [b""] * (base.n_vocab - len(tokens))
    merges = reference.extend(texts, tokens, n_merges, pattern=pattern, min_frequency=min_frequency)
    for left, right, _ in merges:
        tokens.append(tokens[left] + tokens[right])
    return [(tokens[left], tokens[right], count) for left, right, count in merges]


def tiktoken_of(tok: tokenmill.Tokenizer) -> tiktoken.Encoding:
    return tiktoken.Encoding(
        "extended",
        pat_str=tok.pattern,
        mergeable_ranks=tok.mergeable_ranks,
        special_tokens=tok.special_tokens,
    )


# A vocabulary of the bytes and random tokens of 2..4 letters in random order: the rank rule
# cannot make most of them from their parts, so new tokens often make them reachable.
letters = "abcé "
random_tokens = st.lists(
    st.text(alphabet=letters, min_size=2, max_size=4).map(str.encode), max_size=30, unique=True
)
corpora = st.lists(
    st.text(alphabet=letters + "\n", min_size=1, max_size=12), min_size=1, max_size=12
)


@pytest.mark.filterwarnings("ignore::tokenmill.TrainingWarning")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    extra=random_tokens,
    texts=corpora,
    n_merges=st.integers(0, 30),
    min_frequency=st.sampled_from([1, 2]),
    pattern=st.sampled_from(["gpt2", r"[a-zé]+| +|\n"]),
)
def test_random_vocabularies(extra, texts, n_merges, min_frequency, pattern):
    byte_tokens = [bytes([b]) for b in range(256)]
    extra = [t for t in extra if t not in byte_tokens]
    base = tokenmill.Tokenizer(byte_tokens + extra, pattern)
    got, tok = learned(texts * 2, base, n_merges, min_frequency=min_frequency, num_threads=2)
    assert got == expected(texts * 2, base, n_merges, pattern, min_frequency)
    assert tok.token_bytes_list()[: base.n_vocab] == base.token_bytes_list()
    text = "".join(texts)
    assert tok.encode(text) == tiktoken_of(tok).encode(text)


@pytest.mark.filterwarnings("ignore::tokenmill.TrainingWarning")
def test_a_tokenizer_trained_here_keeps_its_merges():
    base = tokenmill.train(holmes(0, 20_000), 400, pattern="gpt2")
    domain = [holmes(200_000, 8_000)]
    got, tok = learned(domain, base, 60)
    assert got == expected(domain, base, 60, "gpt2")
    assert tok.merges is not None and tok.merges[: len(base.merges)] == base.merges
    assert [
        (tok.decode_single_token_bytes(m.left), tok.decode_single_token_bytes(m.right), m.count)
        for m in tok.merges[len(base.merges) :]
    ] == got


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_openai_vocabularies(name, tmp_path):
    base = tokenmill.load(name)
    domain = [holmes(300_000, 20_000) + "<|endoftext|>" + holmes(400_000, 5_000)]
    got, tok = learned(domain, base, 12, special_tokens=["<|domain|>"])
    assert got == expected(domain, base, 12, base.pattern_name)
    assert tok.n_vocab == base.n_vocab + 13
    assert tok.special_tokens == base.special_tokens | {"<|domain|>": base.n_vocab + 12}
    kept = base.token_bytes_list()
    assert tok.token_bytes_list()[: len(kept)] == kept
    text = domain[0] + holmes(500_000, 5_000)
    ids = tok.encode(text, allowed_special="all")
    assert ids == tiktoken_of(tok).encode(text, allowed_special="all")
    assert len(tok.encode(domain[0], allowed_special="all")) < len(
        base.encode(domain[0], allowed_special="all")
    )
    # Saved and loaded again (tokenizer.json holds the gaps and the pattern), and HF's reading.
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    again = tokenmill.load(path)
    assert again.encode(text, allowed_special="all") == ids
    hf = pytest.importorskip("tokenizers").Tokenizer.from_file(str(path))
    assert hf.encode(text, add_special_tokens=False).ids == ids


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_extended_by_nothing_encodes_as_the_base(name):
    base = tokenmill.load(name)
    tok = tokenmill.train(holmes(0, 50_000), base.n_vocab, base=name)
    text = holmes(1_000_000, 200_000) + " <|endoftext|> éü 😀 12345\n\n  x"
    assert tok.encode(text, allowed_special="all") == base.encode(text, allowed_special="all")
    assert tok.n_vocab == base.n_vocab and tok.special_tokens == base.special_tokens


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200))
def test_extended_by_nothing_hypothesis(text):
    tok = _unchanged_gpt2()
    assert tok.encode_ordinary(text) == tokenmill.load("gpt2").encode_ordinary(text)


_UNCHANGED: list[tokenmill.Tokenizer] = []


def _unchanged_gpt2() -> tokenmill.Tokenizer:
    if not _UNCHANGED:
        _UNCHANGED.append(tokenmill.train("a tiny corpus", 50257, base="gpt2"))
    return _UNCHANGED[0]


def test_added_tokens_are_cut_out_and_kept():
    base = tokenmill.Tokenizer([bytes([b]) for b in range(256)], "gpt2", added_tokens={"<t>": 256})
    tok = tokenmill.train("ab<t>ab<t>ab", 258, base=base, min_frequency=2)
    assert tok.added_tokens == {"<t>": 256}
    assert tok.decode_single_token_bytes(257) == b"ab"  # never a merge across "<t>"
    assert tok.encode_ordinary("ab<t>") == [257, 256]


def test_refusals():
    gpt2 = tokenmill.load("gpt2")
    with pytest.raises(TrainingError, match="not the pattern of base"):
        tokenmill.train("text", 50300, base=gpt2, pattern="cl100k")
    assert tokenmill.train("text", 50257, base=gpt2, pattern="gpt2").n_vocab == 50257
    with pytest.raises(TrainingError, match="at least 50258"):
        tokenmill.train("text", 50257, base=gpt2, special_tokens=["<x>"])
    with pytest.raises(InvalidSpecialTokensError, match="already one of the base"):
        tokenmill.train("text", 50300, base=gpt2, special_tokens=["<|endoftext|>"])
    nfc = tokenmill.Tokenizer([bytes([b]) for b in range(256)], "gpt2", normalizer="NFC")
    with pytest.raises(TrainingError, match="normalizes"):
        tokenmill.train("text", 300, base=nfc)
    two = tokenmill.Tokenizer([bytes([b]) for b in range(256)], ["gpt2", r"\S+|\s+"])
    with pytest.raises(TrainingError, match="2 patterns"):
        tokenmill.train("text", 300, base=two)
