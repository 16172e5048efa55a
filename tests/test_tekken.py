"""Mistral's Tekken files: told from their content, read as mistral-common's ``Tekkenizer``
reads them, and loaded with its ids: special tokens first, the ordinary tokens after them.

Oracles: tiktoken built as mistral-common builds it (its ranks, cut to the vocabulary size, the
pattern, no special tokens) on a small Tekken file made here; mistral-common's ``Tekkenizer``
itself on its own files when the package is installed.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from edits import set_in

import tokenmill
from tokenmill import formats
from tokenmill.compat import tiktoken as tk

BYTES = [bytes([b]) for b in range(256)]
MERGED = [b"th", b"he", b"the", b" t", b" the", b"in", b"ing", b"\xc3\xa9", b"caf\xc3\xa9", b"zz"]
TEXT = "the thing in the café, then zzz thething\n  <s>[INST] the"


def tekken_doc(
    *,
    specials: list[str] | None = ("<unk>", "<s>", "</s>", "[INST]"),  # type: ignore[assignment]
    num_special: int = 6,
    cut: int = 2,
    version: str = "v11",
) -> dict[str, Any]:
    """A small Tekken file: the 256 bytes and MERGED by rank, ``num_special`` special tokens
    (``specials`` named, the rest fillers), and a vocabulary size that leaves out the last
    ``cut`` ranks, as the real files leave out 19,928."""
    tokens = BYTES + MERGED
    doc: dict[str, Any] = {
        "config": {
            "pattern": tokenmill.Tokenizer(BYTES, "cl100k").pattern,
            "num_vocab_tokens": len(tokens),
            "default_vocab_size": len(tokens) - cut + num_special,
            "default_num_special_tokens": num_special,
            "version": version,
        },
        "vocab": [
            {"rank": i, "token_bytes": base64.b64encode(t).decode(), "token_str": None}
            for i, t in enumerate(tokens)
        ],
    }
    if specials is not None:
        doc["special_tokens"] = [
            {"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(specials)
        ]
    return doc


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def mistral_like(doc: dict[str, Any]) -> tiktoken.Encoding:
    """tiktoken as mistral-common's Tekkenizer builds it: the ranks cut to the vocabulary size
    less the special tokens, the file's pattern, no special tokens."""
    config = doc["config"]
    n = config["default_vocab_size"] - config["default_num_special_tokens"]
    ranks = {base64.b64decode(e["token_bytes"]): e["rank"] for e in doc["vocab"][:n]}
    return tiktoken.Encoding(
        "tekken", pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={}
    )


def test_a_tekken_file_is_told_from_its_content_and_read(tmp_path):
    doc = tekken_doc()
    path = write(tmp_path / "vocab.json", doc)  # no "tekken" in the name
    assert formats.detect(path) == "tekken"
    vocab = formats.read(path)
    assert vocab.special_tokens == {
        "<unk>": 0,
        "<s>": 1,
        "</s>": 2,
        "[INST]": 3,
        "<SPECIAL_4>": 4,
        "<SPECIAL_5>": 5,
    }
    # Gaps for the special tokens' ids, then the ranks, cut to default_vocab_size.
    assert vocab.tokens == [b""] * 6 + BYTES + MERGED[:-2]
    assert vocab.pattern == doc["config"]["pattern"]


def test_files_of_v7_or_older_may_leave_out_the_special_tokens(tmp_path):
    vocab = formats.read(
        write(tmp_path / "t.json", tekken_doc(specials=None, num_special=25, version="v3"))
    )
    assert list(vocab.special_tokens)[:4] == ["<unk>", "<s>", "</s>", "[INST]"]
    assert list(vocab.special_tokens)[19:] == [
        "[TOOL_CONTENT]",
        *(f"<SPECIAL_{i}>" for i in range(20, 25)),
    ]
    assert list(vocab.special_tokens.values()) == list(range(25))


def test_load_gives_mistral_commons_ids(tmp_path):
    doc = tekken_doc()
    tok = tokenmill.load(write(tmp_path / "tekken.json", doc))
    theirs = mistral_like(doc)
    n = 6
    want = [i + n for i in theirs.encode_ordinary(TEXT)]
    assert tok.encode_ordinary(TEXT) == want
    assert tok.encode(TEXT, disallowed_special=()) == want
    assert tok.count(TEXT, disallowed_special=()) == len(want)
    assert tok.n_vocab == doc["config"]["default_vocab_size"]
    assert tok.encode("<s>[INST] the", allowed_special="all") == [
        1,
        3,
        *(i + n for i in theirs.encode(" the")),
    ]
    assert tok.decode([1, 3, n + 256 + 4]) == "<s>[INST] the"
    with pytest.raises(tokenmill.DisallowedSpecialTokenError):
        tok.encode(TEXT)
    # tiktoken's API, given Tekken's ids as ranks, gives the same.
    vocab = formats.read(tmp_path / "tekken.json")
    enc = tk.Encoding(
        "tekken",
        pat_str=vocab.pattern,
        mergeable_ranks=tok.mergeable_ranks,
        special_tokens=vocab.special_tokens,
    )
    assert enc.encode(TEXT, disallowed_special=()) == want


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (set_in("config", "pattern", value=5), "config.pattern must be a non-empty string"),
        (set_in("config", "default_vocab_size", value="270"), "config.default_vocab_size must be"),
        (
            set_in("config", "default_num_special_tokens", value=-1),
            "default_num_special_tokens must be",
        ),
        (set_in("config", "default_vocab_size", value=100), "the 256 single bytes need"),
        (set_in("config", "default_vocab_size", value=10**6), "vocab has 266 tokens, fewer than"),
        (set_in("special_tokens", value={"<s>": 1}), "special_tokens must be a list"),
        (set_in("special_tokens", 1, value="<s>"), "special_tokens[1] must be an object"),
        (set_in("special_tokens", 1, "rank", value=7), "has rank 7"),
        (set_in("special_tokens", 1, "token_str", value=""), '"token_str" must be a non-empty'),
        (set_in("special_tokens", 1, "token_str", value="<unk>"), "'<unk>' is listed twice"),
        (
            set_in("special_tokens", 3, "token_str", value="<SPECIAL_4>"),
            "'<SPECIAL_4>' is listed twice",
        ),
        (
            set_in("config", "default_num_special_tokens", value=2),
            "more than config.default_num_special",
        ),
        (set_in("vocab", 260, value=5), "vocab[260] must be an object"),
        (set_in("vocab", 258, "rank", value=259), "vocab[258] has rank 259"),
        (set_in("vocab", 258, "token_bytes", value="d@g="), '"token_bytes" must be base64'),
        (
            set_in("vocab", 65, "token_bytes", value="Qg=="),
            "the first 256 ranks are the single bytes",
        ),
        (
            set_in("vocab", 258, "token_bytes", value="dGg="),
            "vocab[256] and vocab[258] are both b'th'",
        ),
    ],
)
def test_a_malformed_tekken_file_names_the_problem(tmp_path, change, problem):
    doc = tekken_doc()
    change(doc)
    path = write(tmp_path / "tekken.json", doc)
    with pytest.raises(tokenmill.VocabFileError) as err:
        tokenmill.load(path)
    assert err.value.path == str(path)
    assert problem in err.value.problem


def test_a_later_version_must_list_its_special_tokens(tmp_path):
    path = write(tmp_path / "tekken.json", tekken_doc(specials=None, version="v11"))
    with pytest.raises(tokenmill.VocabFileError, match=r"only a file of version v1\.\.v7"):
        tokenmill.load(path)


# --- mistral-common's own files ------------------------------------------------------------


@functools.cache
def mistral_files() -> list[Path]:
    spec = importlib.util.find_spec("mistral_common")
    if spec is None or spec.origin is None:
        return []
    return sorted((Path(spec.origin).parent / "data").glob("tekken_*.json"))


@pytest.mark.parametrize("index", [0, 1])
def test_mistral_commons_files_give_its_ids(index, shared_data):
    files = mistral_files()
    if len(files) <= index:
        pytest.skip("mistral-common (the PyPI package, with its Tekken files) is not installed")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = files[index]
    theirs = Tekkenizer.from_file(path)
    tok = tokenmill.load(path)
    n = theirs.num_special_tokens
    assert tok.special_tokens == {theirs.id_to_piece(i): i for i in range(n)}
    assert tok.n_vocab == theirs.n_words
    texts = [shared_data / "holmes.txt", *sorted((shared_data / "multilingual").glob("*.txt"))]
    for f in texts:
        text = f.read_text()
        lines = text.splitlines(keepends=True)[:3000]
        want = [theirs.encode(line, bos=False, eos=False) for line in lines]
        assert tok.encode_ordinary_batch(lines) == want, f
        assert tok.encode_ordinary(text) == theirs.encode(text, bos=False, eos=False), f
    ids = [theirs.bos_id, 3, *theirs.encode("Elementary, my dear Watson", False, False), 4]
    assert tok.decode(ids) == theirs.decode(ids, special_token_policy="keep")
    text = "<s>[INST]Elementary, my dear Watson[/INST]"
    assert tok.encode(text, allowed_special="all") == ids
