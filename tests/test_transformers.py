"""tokenmill.compat.transformers against HF transformers itself: ids equal tokenmill's
``encode`` (special tokens allowed, or none with ``split_special_tokens``), decoding equal
tokenmill's ``decode``, padding and truncation equal what HF gives for the same
``tokenizer.json`` loaded from disk, and folders written either way load in
``AutoTokenizer`` and in tokenmill.

Importing transformers takes about 1 s here (``PreTrainedTokenizerFast``); ``AutoTokenizer``
imports torch too (2-3 s more), so only the folder tests import it. Building HF's tokenizer
from a ``tokenizer.json`` takes 0.3-0.6 s for gpt2 and cl100k_base: one per module.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill.compat import transformers as compat
from tokenmill.sources import bundled_corpus

pytest.importorskip("transformers")

NAMES = ("gpt2", "cl100k_base", "trained")
TEXTS = [
    "hello world",
    "Hello, world! It's 2024.",
    "naïve café 🙂 — ünïcödé\n\nwith  spaces   and\ttabs",
    "  leading and trailing  ",
    "<|endoftext|> between <|endoftext|>documents",
    "1234567 numbers 3.14159 and code: def f(x):\n    return x ** 2\n",
    "",
]


@pytest.fixture(scope="module")
def toks() -> dict[str, tokenmill.Tokenizer]:
    trained = tokenmill.train(
        bundled_corpus("shakespeare")[:60_000], 700, special_tokens=["<|endoftext|>", "<pad>"]
    )
    return {"gpt2": tokenmill.load("gpt2"), "cl100k_base": tokenmill.load("cl100k_base"),
            "trained": trained}  # fmt: skip


@pytest.fixture(scope="module")
def fasts(toks) -> dict[str, object]:
    return {name: tok.to_transformers() for name, tok in toks.items()}


def with_specials(tok: tokenmill.Tokenizer) -> st.SearchStrategy[str]:
    """Text with the tokenizer's special-token strings mixed in."""
    piece = st.one_of(st.text(max_size=30), st.sampled_from(sorted(tok.special_tokens)))
    return st.lists(piece, max_size=6).map("".join)


@pytest.mark.parametrize("name", NAMES)
def test_ids_are_tokenmills_on_fixed_texts(toks, fasts, name):
    tok, fast = toks[name], fasts[name]
    for text in TEXTS:
        want = tok.encode(text, allowed_special="all")
        assert fast.encode(text) == want
        assert fast(text)["input_ids"] == want
        assert fast(text)["attention_mask"] == [1] * len(want)
        assert fast.encode(text, add_special_tokens=True) == want  # HF adds nothing
        assert fast.encode(text, split_special_tokens=True) == tok.encode_ordinary(text)
        assert fast.decode(want) == text
    assert fast(TEXTS)["input_ids"] == tok.encode_batch(TEXTS, allowed_special="all")


@pytest.mark.parametrize("name", NAMES)
def test_ids_and_decoding_are_tokenmills_on_any_text(toks, fasts, name):
    tok, fast = toks[name], fasts[name]

    @settings(max_examples=150)
    @given(text=with_specials(tok))
    def check(text: str) -> None:
        ids = tok.encode(text, allowed_special="all")
        assert fast.encode(text) == ids
        assert fast.encode(text, split_special_tokens=True) == tok.encode_ordinary(text)
        assert fast.decode(ids) == text
        assert fast.convert_ids_to_tokens(ids) == fast.tokenize(text)

    check()


@pytest.mark.parametrize("name", NAMES)
def test_decoding_any_ids_is_tokenmills(toks, fasts, name):
    tok, fast = toks[name], fasts[name]
    specials = set(tok.special_tokens.values())
    valid = st.sampled_from(sorted(set(range(tok.n_vocab)) - _gaps(tok)))

    @settings(max_examples=150)
    @given(batch=st.lists(st.lists(valid, max_size=12), min_size=1, max_size=4))
    def check(batch: list[list[int]]) -> None:
        # Pieces of characters included: both replace bytes that are not UTF-8 alike.
        assert fast.batch_decode(batch) == tok.decode_batch(batch)
        plain = [[i for i in ids if i not in specials] for ids in batch]
        assert fast.batch_decode(batch, skip_special_tokens=True) == tok.decode_batch(plain)
        assert fast.decode(batch[0]) == tok.decode(batch[0])

    check()


def _gaps(tok: tokenmill.Tokenizer) -> set[int]:
    """Ids below n_vocab that are no token (cl100k_base has one, 100256)."""
    known = set(tok.special_tokens.values()) | set(range(len(tok.token_byte_values())))
    return set(range(tok.n_vocab)) - known


def test_special_tokens_take_their_roles(toks, fasts):
    gpt2 = fasts["gpt2"]
    # As transformers' GPT2Tokenizer: <|endoftext|> begins, ends and stands for unknown; no pad.
    assert (gpt2.bos_token_id, gpt2.eos_token_id, gpt2.unk_token_id) == (50256, 50256, 50256)
    assert gpt2.pad_token is None and gpt2.all_special_ids == [50256]
    with pytest.raises(ValueError, match="does not have a padding token"):
        gpt2(["a", "b c"], padding=True)
    trained = fasts["trained"]
    pad = toks["trained"].special_tokens["<pad>"]
    assert trained.pad_token == "<pad>" and trained.pad_token_id == pad
    assert trained.eos_token == trained.bos_token == "<|endoftext|>"
    specials = ["<s>", "</s>", "<unk>", "<pad>", "<|endoftext|>"]
    named = tokenmill.train(bundled_corpus("shakespeare")[:5_000], 300, special_tokens=specials)
    assert compat.special_roles(named) == {
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
    }  # fmt: skip
    fast = named.to_transformers(unk_token=None, eos_token="<|endoftext|>")
    assert fast.unk_token is None and fast.eos_token_id == named.special_tokens["<|endoftext|>"]
    assert fast.decode(fast.encode("<s>hi</s>"), skip_special_tokens=True) == "hi"


# Options of HF's __call__: padding, truncation, tensors, pairs of lists.
CALLS = [
    dict(padding=True),
    dict(padding="max_length", max_length=12),
    dict(padding="max_length", max_length=12, truncation=True),
    dict(padding=True, truncation=True, max_length=5),
    dict(padding=True, pad_to_multiple_of=8),
    dict(truncation=True, max_length=3, return_overflowing_tokens=True, stride=1),
    dict(padding=True, return_tensors="np"),
    dict(padding="longest", return_length=True, return_special_tokens_mask=True),
]


def outputs(fast, texts: list[str]) -> list[dict[str, object]]:
    out = []
    for call in CALLS:
        enc = fast(texts, **call)
        out.append({k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in enc.items()})
    return out


@pytest.mark.parametrize("side", ["right", "left"])
def test_padding_and_truncation_as_hf_gives_for_the_same_file(tmp_path, toks, side):
    from transformers import PreTrainedTokenizerFast

    tok = toks["gpt2"]
    fast = tok.to_transformers(pad_token="<|endoftext|>", padding_side=side,
                               truncation_side=side)  # fmt: skip
    tok.save(tmp_path / "tokenizer.json")
    hf = PreTrainedTokenizerFast(
        tokenizer_file=str(tmp_path / "tokenizer.json"),
        bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>",
        pad_token="<|endoftext|>", padding_side=side, truncation_side=side,
        clean_up_tokenization_spaces=False,
    )  # fmt: skip
    texts = TEXTS[:6]
    assert outputs(fast, texts) == outputs(hf, texts)
    # And what that is, from tokenmill's ids.
    ids = tok.encode_batch(texts, allowed_special="all")
    longest = max(map(len, ids))
    got = fast(texts, padding=True)
    for k, want in enumerate(ids):
        fill = [50256] * (longest - len(want))
        mask = [1] * len(want)
        zeros = [0] * len(fill)
        row = want + fill if side == "right" else fill + want
        assert got["input_ids"][k] == row
        assert got["attention_mask"][k] == (mask + zeros if side == "right" else zeros + mask)
    cut = fast(texts, truncation=True, max_length=4)["input_ids"]
    assert cut == [w[:4] if side == "right" else w[-4:] for w in ids]


def test_save_pretrained_folders_load_in_autotokenizer_and_tokenmill(tmp_path, toks, fasts):
    from transformers import AutoTokenizer

    tok = toks["trained"]
    texts = [*TEXTS, bundled_corpus("holmes")[:1_000]]
    want = outputs(fasts["trained"], texts)
    # Written by tokenmill, no transformers needed.
    written = compat.save_pretrained(tok, tmp_path / "a", model_max_length=512)
    assert [Path(p).name for p in written] == ["tokenizer.json", "tokenizer_config.json"]
    loaded = AutoTokenizer.from_pretrained(tmp_path / "a")
    assert loaded.model_max_length == 512 and loaded.pad_token == "<pad>"
    assert outputs(loaded, texts) == want
    assert [loaded.decode(x) for x in loaded(texts)["input_ids"]] == texts
    assert tokenmill.load(tmp_path / "a") == tok
    # Written by HF's save_pretrained, read back by both.
    tok.to_transformers().save_pretrained(tmp_path / "b")
    again = AutoTokenizer.from_pretrained(tmp_path / "b")
    assert outputs(again, texts) == want
    assert (again.bos_token, again.eos_token, again.unk_token, again.pad_token) == (
        "<|endoftext|>", "<|endoftext|>", "<|endoftext|>", "<pad>",
    )  # fmt: skip
    assert tokenmill.load(tmp_path / "b") == tok
    # HF saves the padding of its last call into tokenizer.json, where HF `tokenizers` pads
    # every batch it encodes: tokenmill, which does not, refuses that file.
    again.save_pretrained(tmp_path / "c")
    assert json.loads((tmp_path / "c" / "tokenizer.json").read_text())["padding"] is not None
    with pytest.raises(tokenmill.VocabFileError, match=r"padding is set"):
        tokenmill.load(tmp_path / "c")
    config = json.loads((tmp_path / "a" / "tokenizer_config.json").read_text())
    assert config["clean_up_tokenization_spaces"] is False


def test_save_pretrained_refuses_options_that_are_not_json(tmp_path, toks):
    with pytest.raises(TypeError, match="must be JSON values"):
        compat.save_pretrained(toks["gpt2"], tmp_path / "x", padding_side=object())


def test_without_transformers_the_error_says_what_to_install(monkeypatch, toks):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers fails
    with pytest.raises(tokenmill.MissingDependencyError, match="pip install transformers"):
        toks["gpt2"].to_transformers()
