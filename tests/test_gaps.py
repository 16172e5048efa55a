"""Vocabularies whose ranks leave gaps (ids no ordinary token has): OpenAI's p50k_base puts
``<|endoftext|>`` at 50256, between its ranks; Whisper's multilingual file ends with an
empty token; Mistral's Tekken numbers its ranks after its special tokens (tests/test_tekken.py).

Oracle: tiktoken, which takes gaps, on the same ranks: small files made here, random gapped
vocabularies under hypothesis, and OpenAI's own p50k_base and p50k_edit (the rank file is kept
in tests/data, as tokenmill downloads it) on the bundled and shared corpora.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import tiktoken
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import Remembering, offline_cache, tiktoken_encoding
from tiktoken.load import load_tiktoken_bpe

import tokenmill
from tokenmill.formats import rankfile
from tokenmill.sources import bundled_corpus

BYTES = [bytes([b]) for b in range(256)]
EOT = "<|endoftext|>"
SPLIT = r"\S+|\s+"
P50K = Path(__file__).parent / "data" / "p50k_base.tiktoken.gz"


def gapped_file(path: Path) -> Path:
    """Ranks 0..255 (the bytes), a gap at 256, b"ab" at 257, another gap, b"abab" at 259:
    p50k_base's shape."""
    path.write_bytes(rankfile.dump_ranks(BYTES) + b"YWI= 257\nYWJhYg== 259\n")
    return path


def test_a_gapped_rank_file_gives_tiktokens_ids(tmp_path):
    path = gapped_file(tmp_path / "gap.tiktoken")
    ranks = load_tiktoken_bpe(str(path))
    theirs = tiktoken.Encoding(
        "gap", pat_str=SPLIT, mergeable_ranks=ranks, special_tokens={EOT: 256}
    )
    ours = tokenmill.load(path, pattern=SPLIT, special_tokens={EOT: 256})
    text = f"ab abab{EOT}ababab a"
    ids = theirs.encode(text, allowed_special="all")
    assert 256 in ids and 257 in ids and 259 in ids
    assert ours.encode(text, allowed_special="all") == ids
    assert ours.encode_to_numpy(text, allowed_special="all").tolist() == ids
    assert ours.encode_batch([text] * 3, allowed_special="all") == [ids] * 3
    assert ours.count(text, allowed_special="all") == len(ids)
    assert ours.decode(ids) == text
    assert ours.decode_single_token_bytes(256) == EOT.encode()
    assert ours.n_vocab == theirs.n_vocab == 260
    assert ours.mergeable_ranks == ranks
    assert ours.token_byte_values() == theirs.token_byte_values()
    assert ours.is_special_token(256) and not ours.is_special_token(257)
    assert not ours.is_special_token(258)
    assert ours.token_bytes_list()[256:] == [b"", b"ab", b"", b"abab"]
    # An id that no token has, ordinary or special, is unknown, as in tiktoken.
    with pytest.raises(tokenmill.UnknownTokenIdError):
        ours.decode([258])
    with pytest.raises(KeyError):
        theirs.decode_single_token_bytes(258)
    # tiktoken's API on tokenmill gives the same.
    from tokenmill.compat import tiktoken as tk

    enc = tk.Encoding("gap", pat_str=SPLIT, mergeable_ranks=ranks, special_tokens={EOT: 256})
    assert enc.encode(text, allowed_special="all") == ids
    assert enc.token_byte_values() == theirs.token_byte_values()


def test_a_gapped_tokenizer_saves_where_its_format_holds_gaps(tmp_path):
    ranks = load_tiktoken_bpe(str(gapped_file(tmp_path / "gap.tiktoken")))
    tok = tokenmill.Tokenizer(ranks, "gpt2", {EOT: 256}, name="gap")
    text = f"ab abab{EOT}ababab a"
    want = tok.encode(text, allowed_special="all")
    # A rank file: the same bytes tiktoken writes for the ranks.
    tokenmill.Tokenizer(ranks, "gpt2").save(tmp_path / "out.tiktoken")
    assert (tmp_path / "out.tiktoken").read_bytes() == (tmp_path / "gap.tiktoken").read_bytes()
    # tokenizer.json: HF's tokenizers gives the same ids, and it loads back the same.
    tok.save(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.encode(text, add_special_tokens=False).ids == want
    back = tokenmill.load(tmp_path / "tokenizer.json")
    assert back.encode(text, allowed_special="all") == want
    assert back.token_bytes_list() == tok.token_bytes_list()
    # The formats that number merged tokens one after another say why they cannot.
    (tmp_path / "gpt2").mkdir()
    for name in ("gap.tokenmill", "gpt2"):
        with pytest.raises(tokenmill.UnsupportedFormatError, match="id 256"):
            tok.save(tmp_path / name)


def test_an_empty_token_is_a_gap(tmp_path):
    # Whisper's multilingual.tiktoken ends with "= 50256", base64 of nothing: tiktoken takes
    # it, never gives it for any text, and decodes it as b"".
    path = tmp_path / "empty.tiktoken"
    path.write_bytes(rankfile.dump_ranks([*BYTES, b"ab"]) + b"= 257\n")
    ranks = load_tiktoken_bpe(str(path))
    theirs = tiktoken.Encoding("e", pat_str=SPLIT, mergeable_ranks=ranks, special_tokens={})
    assert theirs.decode_single_token_bytes(ranks[b""]) == b""
    ours = tokenmill.load(path, pattern=SPLIT)
    text = bundled_corpus("holmes")[:20_000] + " ab abab"
    assert ours.encode(text) == theirs.encode(text)
    assert ours.n_vocab == theirs.n_vocab == 258
    with pytest.raises(tokenmill.UnknownTokenIdError):
        ours.decode([257])


def test_ranks_far_past_the_tokens_are_refused(tmp_path):
    path = tmp_path / "far.tiktoken"
    path.write_bytes(rankfile.dump_ranks(BYTES) + b"YWI= 100000\n")
    with pytest.raises(tokenmill.VocabFileError) as err:
        tokenmill.load(path, pattern="gpt2")
    assert err.value.line == 257
    assert "rank 100000 is far past the file's 257 tokens" in err.value.problem
    with pytest.raises(tokenmill.InvalidVocabError, match=r"outside 0\.\.513"):
        tokenmill.Tokenizer({**dict(zip(BYTES, range(256), strict=True)), b"ab": 100000}, "gpt2")
    with pytest.raises(tokenmill.InvalidVocabError, match="given to both"):
        tokenmill.Tokenizer({**dict(zip(BYTES, range(256), strict=True)), b"ab": 3}, "gpt2")
    # A special token may take a gap's id, never an ordinary token's.
    ranks = {**dict(zip(BYTES, range(256), strict=True)), b"ab": 257}
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="already an ordinary token"):
        tokenmill.Tokenizer(ranks, "gpt2", {EOT: 257})


@st.composite
def gapped_vocabularies(draw):
    """Ranks over the bytes and merges of a small alphabet, with gaps before, among and after
    the bytes, and special tokens in some gaps and past the last rank."""
    alphabet = [b"a", b"b", b"c", b" "]
    pool = list(alphabet)
    merged: list[bytes] = []
    for _ in range(draw(st.integers(0, 40))):
        t = draw(st.sampled_from(pool)) + draw(st.sampled_from(pool))
        if t not in merged and len(t) > 1:
            merged.append(t)
            pool.append(t)
    tokens = BYTES + merged
    # Before which tokens a gap goes (0: before the first byte), once per time drawn.
    before = draw(st.lists(st.integers(0, len(tokens) - 1), max_size=8))
    ranks: dict[bytes, int] = {}
    gaps: list[int] = []
    rank = 0
    for i, t in enumerate(tokens):
        for _ in range(before.count(i)):
            gaps.append(rank)
            rank += 1
        ranks[t] = rank
        rank += 1
    in_gaps = draw(st.lists(st.sampled_from(gaps), unique=True)) if gaps else []
    specials = {f"<|s{i}|>": idx for i, idx in enumerate(in_gaps)}
    specials[EOT] = rank + draw(st.integers(0, 3))
    return ranks, specials


@settings(max_examples=150)
@given(
    gapped_vocabularies(),
    st.lists(st.sampled_from(["a", "b", "c", " ", "ab", "\n", "é", "<|s0|>", EOT]), max_size=40),
)
def test_random_gapped_vocabularies_give_tiktokens_ids(vocab, parts):
    ranks, specials = vocab
    text = "".join(parts)
    theirs = tiktoken.Encoding("g", pat_str=SPLIT, mergeable_ranks=ranks, special_tokens=specials)
    ours = tokenmill.Tokenizer(ranks, SPLIT, specials)
    ids = theirs.encode(text, allowed_special="all")
    assert ours.encode(text, allowed_special="all") == ids
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert ours.n_vocab == theirs.n_vocab


# --- OpenAI's p50k_base and p50k_edit ------------------------------------------------------


@pytest.fixture(scope="module", params=["p50k_base", "p50k_edit"])
def p50k(request):
    offline_cache()  # tokenmill.load reads tiktoken's cache: the file is found there
    return tokenmill.load(request.param), Remembering(tiktoken_encoding(request.param))


def test_p50k_gives_tiktokens_ids_on_the_bundled_corpora(p50k):
    ours, theirs = p50k
    assert ours.n_vocab == theirs.n_vocab
    assert ours.special_tokens == theirs._special_tokens
    assert ours.mergeable_ranks == theirs._mergeable_ranks
    for name in ("holmes", "shakespeare"):
        text = bundled_corpus(name)
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
        lines = text.splitlines(keepends=True)
        assert ours.encode_ordinary_batch(lines) == theirs.encode_ordinary_batch(lines)
    # Runs of spaces are p50k's own tokens (50257..50280, past the gap), specials in text.
    text = "def f():\n" + "        return 1\n" * 3 + EOT + "  x" + " " * 30
    ids = theirs.encode(text, allowed_special="all")
    assert ours.encode(text, allowed_special="all") == ids
    assert ours.decode(ids) == text
    assert ours.count(text, allowed_special="all") == len(ids)


def test_p50k_gives_tiktokens_ids_on_the_shared_corpora(shared_data):
    # p50k_edit has p50k_base's ranks: only its special tokens differ, tested above.
    offline_cache()
    ours, theirs = tokenmill.load("p50k_base"), Remembering(tiktoken_encoding("p50k_base"))
    for path in sorted(shared_data.rglob("*.txt")):
        text = path.read_text(encoding="utf-8")
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), path
        lines = text.splitlines(keepends=True)
        assert ours.encode_ordinary_batch(lines) == theirs.encode_ordinary_batch(lines), path


def test_p50k_saves_as_openais_file_and_as_tokenizer_json(tmp_path):
    offline_cache()
    ours = tokenmill.load("p50k_base")
    ours.save(tmp_path / "p50k_base.tiktoken")
    assert (tmp_path / "p50k_base.tiktoken").read_bytes() == gzip.decompress(P50K.read_bytes())
    ours.save(tmp_path / "tokenizer.json")
    assert json.loads((tmp_path / "tokenizer.json").read_text())["model"]["vocab"][EOT] == 50256
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    lines = bundled_corpus("holmes").splitlines(keepends=True)[:3000]
    assert [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] == (
        ours.encode_ordinary_batch(lines)
    )
