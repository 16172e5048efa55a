"""Mistral's Tekken files: told from their content, read as mistral-common's ``Tekkenizer``
reads them, refused by ``tokenmill.load`` with the reason (tokenmill's core cannot number the
ordinary tokens from the number of special tokens), and the two tokenizers the module docstring
builds from what is read give mistral-common's ids.

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
    assert vocab.first_ordinary_id == 6
    assert vocab.tokens == BYTES + MERGED[:-2]  # cut to default_vocab_size less the specials
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


def test_load_refuses_a_tekken_file_saying_why(tmp_path):
    path = write(tmp_path / "tekken.json", tekken_doc())
    with pytest.raises(tokenmill.UnsupportedFormatError) as err:
        tokenmill.load(path)
    message = str(err.value)
    for part in (str(path), "ids 0..5", "from 6 on", "tokenmill.compat.tiktoken", "formats.read"):
        assert part in message


def test_what_is_read_gives_mistral_commons_ids(tmp_path):
    doc = tekken_doc()
    vocab = formats.read(write(tmp_path / "tekken.json", doc))
    theirs = mistral_like(doc)
    n = vocab.first_ordinary_id
    # The ordinary tokens alone: ids less N.
    tok = tokenmill.Tokenizer(vocab.tokens, vocab.pattern)
    want = theirs.encode_ordinary(TEXT)
    assert tok.encode_ordinary(TEXT) == want
    assert tok.count(TEXT) == len(want)
    # Tekken's ids through tiktoken's Encoding.
    enc = tk.Encoding(
        "tekken",
        pat_str=vocab.pattern,
        mergeable_ranks={t: n + r for r, t in enumerate(vocab.tokens)},
        special_tokens=vocab.special_tokens,
    )
    assert enc.encode(TEXT, disallowed_special=()) == [i + n for i in want]
    assert enc.encode("<s>[INST] the", allowed_special="all") == [
        1,
        3,
        *(i + n for i in theirs.encode(" the")),
    ]
    assert enc.decode([1, 3, n + 256 + 4]) == "<s>[INST] the"


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
    vocab = formats.read(path)
    n = theirs.num_special_tokens
    assert vocab.first_ordinary_id == n
    assert vocab.special_tokens == {theirs.id_to_piece(i): i for i in range(n)}
    tok = tokenmill.Tokenizer(vocab.tokens, vocab.pattern)
    assert tok.n_vocab + n == theirs.n_words
    enc = tk.Encoding(
        path.stem,
        pat_str=vocab.pattern,
        mergeable_ranks={t: n + r for r, t in enumerate(vocab.tokens)},
        special_tokens=vocab.special_tokens,
    )
    texts = [shared_data / "holmes.txt", *sorted((shared_data / "multilingual").glob("*.txt"))]
    for f in texts:
        lines = f.read_text().splitlines(keepends=True)[:3000]
        want = [theirs.encode(line, bos=False, eos=False) for line in lines]
        assert [[i + n for i in ids] for ids in tok.encode_ordinary_batch(lines)] == want, f
        assert enc.encode_ordinary_batch(lines) == want, f
    ids = [theirs.bos_id, 3, *theirs.encode("Elementary, my dear Watson", False, False), 4]
    assert enc.decode(ids) == theirs.decode(ids, special_token_policy="keep")
    text = "<s>[INST]Elementary, my dear Watson[/INST]"
    assert enc.encode(text, allowed_special="all") == ids
