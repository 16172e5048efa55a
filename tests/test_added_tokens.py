"""Added tokens (``Tokenizer.added_tokens``, HF's added tokens with ``special`` false): every
encoding method finds them, with no ``allowed_special``; they are kept by every format that can
hold them and refused by those that cannot.

The oracle is HF ``tokenizers`` reading tokenmill's own export: the same ids for ``encode``
(HF's ``encode(add_special_tokens=False)``) and ``encode_ordinary`` (HF's with
``encode_special_tokens`` on, which splits only the special ones).
"""

from __future__ import annotations

import functools
import json
import pickle

import pytest
from cli_runner import run_tokenmill
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import Tokenizer
from tokenmill.formats import native

tokenizers = pytest.importorskip("tokenizers")

SPECIAL = "<|endoftext|>"
ADDED = ["<think>", "   ", "Ω", "ab"]  # a tag, a run of spaces, a letter, a substring of words


@functools.cache
def with_added() -> Tokenizer:
    base = tokenmill.train(tokenmill.sources.bundled_corpus("holmes"), 400, pattern="cl100k")
    n = base.n_vocab
    return Tokenizer(
        base.token_bytes_list(),
        base.pattern,
        {SPECIAL: n},
        merges=base.merges,
        added_tokens={s: n + 1 + k for k, s in enumerate(ADDED)},
    )


@functools.cache
def hf_pair() -> tuple[tokenizers.Tokenizer, tokenizers.Tokenizer]:
    """HF reading the export, as is and with its special tokens split."""
    text = json.dumps(tokenmill.formats.hf.to_dict(with_added()))
    split = tokenizers.Tokenizer.from_str(text)
    split.encode_special_tokens = True
    return tokenizers.Tokenizer.from_str(text), split


TEXTS = st.lists(
    st.sampled_from([*ADDED, SPECIAL, "a", "b", " ", "x\n", "é", "Ω"]), max_size=12
).map("".join) | st.text(max_size=40)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_every_method_finds_added_tokens_as_hf_does(text):
    tok = with_added()
    whole, split = hf_pair()
    plain = split.encode(text, add_special_tokens=False).ids
    assert tok.encode_ordinary(text) == plain
    assert tok.encode(text, disallowed_special=()) == plain
    assert tok.encode_ordinary_batch([text, text]) == [plain, plain]
    want = whole.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, allowed_special="all") == want
    assert tok.encode_batch([text], allowed_special="all") == [want]
    assert tok.encode_to_numpy(text, allowed_special="all").tolist() == want
    assert tok.count(text, allowed_special="all") == len(want)
    if SPECIAL in text:
        with pytest.raises(tokenmill.DisallowedSpecialTokenError):
            tok.encode(text)
    else:
        # No allowed_special needed: the default finds the added tokens too.
        assert tok.encode(text) == want
        assert tok.count_batch([text]) == [len(want)]
        assert tok.encode_batch_to_numpy([text])[0].tolist() == want
    assert tok.decode(want) == text


def test_added_tokens_are_no_special_tokens():
    tok = with_added()
    assert tok.special_tokens == {SPECIAL: tok.n_vocab - 5}
    assert list(tok.added_tokens) == ADDED
    assert SPECIAL in tok.special_tokens_set and "<think>" not in tok.special_tokens_set
    think = tok.added_tokens["<think>"]
    assert not tok.is_special_token(think) and tok.is_special_token(tok.special_tokens[SPECIAL])
    assert tok.encode_single_token("<think>") == think
    assert tok.encode("x<think>y") == [*tok.encode("x"), think, *tok.encode("y")]
    # Naming one in allowed_special is naming no special token.
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="not special tokens"):
        tok.encode("<think>", allowed_special={"<think>"})
    # A special token allowed by name leaves the added tokens found.
    assert tok.encode("<think>" + SPECIAL, allowed_special={SPECIAL}) == [
        think,
        tok.special_tokens[SPECIAL],
    ]


def test_the_kinds_are_kept_by_saving_and_pickling(tmp_path):
    tok = with_added()
    text = f"ab<think>   Ω{SPECIAL}"
    want = tok.encode(text, allowed_special="all")
    for name in ("a.tokenmill", "a.json"):
        tok.save(tmp_path / name)
        back = tokenmill.load(tmp_path / name)
        assert back == tok and back.added_tokens == tok.added_tokens
        assert back.special_tokens == tok.special_tokens
        assert back.encode(text, allowed_special="all") == want
    doc = json.loads((tmp_path / "a.tokenmill").read_text(encoding="utf-8"))
    assert doc["version"] == 6 and doc["added_tokens"] == tok.added_tokens
    assert "added" in (tmp_path / "a.vocab.txt").read_text(encoding="utf-8")
    exported = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert {t["content"]: t["special"] for t in exported["added_tokens"]} == {
        SPECIAL: True,
        **dict.fromkeys(ADDED, False),
    }
    assert pickle.loads(pickle.dumps(tok)) == tok
    same_ids_as_special = Tokenizer(
        tok.token_bytes_list(), tok.pattern, tok.special_tokens | tok.added_tokens
    )
    assert same_ids_as_special != tok
    # HF's model.vocab spells the byte 0xfb as "û": an added token spelled so cannot go in it.
    clash = Tokenizer(tok.token_bytes_list(), tok.pattern, added_tokens={"û": tok.n_vocab})
    with pytest.raises(tokenmill.UnsupportedFormatError, match=r"'û'.*byte"):
        clash.save(tmp_path / "clash.json")
    # A rank file and GPT-2's files cannot hold them: a save would lose them and their ids.
    for name, fmt in (("a.tiktoken", None), ("gpt2-files", "gpt2")):
        with pytest.raises(tokenmill.UnsupportedFormatError, match="added tokens"):
            tok.save(tmp_path / name, format=fmt)


def test_a_tokenmill_file_with_bad_added_tokens_is_refused(tmp_path):
    tok = with_added()
    path = tmp_path / "a.tokenmill"
    tok.save(path)
    good = json.loads(path.read_text(encoding="utf-8"))
    cases = [
        ({"added_tokens": ["<think>"]}, '"added_tokens" must be an object'),
        ({"added_tokens": {"<x>": 3}}, "added token '<x>' has id 3"),
        ({"added_tokens": {SPECIAL: tok.n_vocab}}, "both a special token and an added token"),
        ({"added_tokens": {"<x>": tok.n_vocab - 5}}, "the same id"),
        ({"version": 5}, "normalized_specials"),  # version 5 ignores them: a named one is unknown
    ]
    for change, message in cases:
        doc = good | change
        if change.get("version") == 5:
            doc["normalized_specials"] = ["<think>"]
            del doc["n_vocab"]
        path.write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(tokenmill.VocabFileError, match=message):
            native.vocabulary(json.loads(path.read_text(encoding="utf-8")), str(path))


def test_bad_added_tokens_arguments_are_refused():
    tok = with_added()
    tokens, pattern = tok.token_bytes_list(), tok.pattern
    with pytest.raises(tokenmill.WrongTypeError, match="added_tokens must be a dict"):
        Tokenizer(tokens, pattern, added_tokens=["<think>"])  # type: ignore[arg-type]
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="both a special token"):
        Tokenizer(tokens, pattern, {"<t>": 400}, added_tokens={"<t>": 401})
    with pytest.raises(tokenmill.WrongTypeError, match="must be a str"):
        Tokenizer(tokens, pattern, added_tokens={5: 400})  # type: ignore[dict-item]
    # The strip and normalized lists may name added tokens; an unknown name is refused.
    lstrip = Tokenizer(tokens, pattern, added_tokens={"<t>": 400}, lstrip_specials=["<t>"])
    assert lstrip.encode("a  <t>") == [*lstrip.encode("a"), 400]
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="'<u>'"):
        Tokenizer(tokens, pattern, added_tokens={"<t>": 400}, lstrip_specials=["<u>"])


def test_the_cli_finds_added_tokens(tmp_path):
    path = tmp_path / "a.json"
    with_added().save(path)
    think = with_added().added_tokens["<think>"]
    out = run_tokenmill("encode", "-t", str(path), stdin="<think>")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(think)]
    out = run_tokenmill("inspect", str(path))
    assert out.returncode == 0, out.stderr
    assert "4 added" in out.stdout and "'<think>' = " in out.stdout
