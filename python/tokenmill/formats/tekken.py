"""Mistral's Tekken files (``tekken.json``, shipped in the PyPI package ``mistral-common``):
read, not written.

A Tekken file is a JSON object. This module reads it as mistral-common's ``Tekkenizer``
(1.13) does:

- ``config.pattern`` is the split pattern (tiktoken's ``pat_str``);
- the special tokens take the ids ``0..N-1``, ``N`` = ``config.default_num_special_tokens``:
  the file's ``special_tokens`` list in order (each entry's ``"rank"`` is its position), or,
  in a file without that list, the 20 control tokens mistral-common gives a ``config.version``
  of ``v7`` or older (``<unk>``, ``<s>``, ``</s>``, ``[INST]``...; a later version must list
  its own); the ids the list leaves are filled with ``<SPECIAL_{id}>``;
- ``vocab`` lists the ordinary tokens by rank (``{"rank", "token_bytes" (base64),
  "token_str"}``, rank ``i`` at position ``i``, the first 256 the single bytes); only the first
  ``config.default_vocab_size - N`` are used, and rank ``r`` has id ``N + r``: the tokens
  :func:`vocabulary` gives start with ``N`` gaps (``b""``), the special tokens' ids.

Text is encoded with the ranks alone: mistral-common matches no special token in text (its
instruct tokenizer adds the control tokens by id), so ``Tekkenizer.encode(text, bos=False,
eos=False)`` is tokenmill's ``encode_ordinary(text)``. In tokenmill's
terms the control tokens are special tokens: ``encode`` refuses text that spells one unless
it is allowed (``allowed_special``, which mistral-common has no counterpart for) or the check
is off (``disallowed_special=()``, which gives mistral-common's ids), and ``decode`` writes a
special token as its text, as mistral-common's ``SpecialTokenPolicy.KEEP`` does.

tests/test_tekken.py compares ``tokenmill.load(path)`` with mistral-common's ``Tekkenizer``.

>>> import base64
>>> tokens = [bytes([b]) for b in range(256)] + [b"ab"]
>>> doc = {
...     "config": {"pattern": r"\\S+|\\s+", "default_vocab_size": 260,
...                "default_num_special_tokens": 3, "version": "v11"},
...     "vocab": [{"rank": i, "token_bytes": base64.b64encode(t).decode(), "token_str": None}
...               for i, t in enumerate(tokens)],
...     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": True},
...                        {"rank": 1, "token_str": "<s>", "is_control": True}],
... }
>>> vocab = vocabulary(doc, "tekken_tiny.json")
>>> vocab.special_tokens
{'<unk>': 0, '<s>': 1, '<SPECIAL_2>': 2}
>>> vocab.tokens[:4], len(vocab.tokens), vocab.tokens[3 + 256]
([b'', b'', b'', b'\\x00'], 260, b'ab')
>>> is_tekken(doc), is_tekken({"model": {}})
(True, False)
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any

from tokenmill.errors import VocabFileError
from tokenmill.formats.loading import Vocabulary, is_id, kind

# The control tokens mistral-common gives a Tekken file of version v7 or older that lists no
# special tokens, in id order.
CONTROL_TOKENS_V7 = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)

# The name of special id ``i`` that the file's list leaves unnamed.
FILLER = "<SPECIAL_{}>"

_VERSION = re.compile(r"v([0-9]+)")


def is_tekken(doc: object) -> bool:
    """Whether a JSON document is a Tekken file: an object with a ``config`` object holding a
    ``pattern``, and a ``vocab`` list."""
    if not isinstance(doc, dict):
        return False
    config = doc.get("config")
    return isinstance(config, dict) and "pattern" in config and isinstance(doc.get("vocab"), list)


def vocabulary(doc: Any, source: str) -> Vocabulary:
    """What a Tekken document says (see the module docstring), checked; a problem is a
    :class:`~tokenmill.VocabFileError` naming ``source``."""

    def bad(problem: str) -> VocabFileError:
        return VocabFileError(source, None, problem)

    config = doc["config"]
    pattern = config["pattern"]
    if not isinstance(pattern, str) or not pattern:
        raise bad(f"config.pattern must be a non-empty string, not {kind(pattern)}")
    sizes = {}
    for key in ("default_vocab_size", "default_num_special_tokens"):
        value = config.get(key)
        if not is_id(value):
            raise bad(f"config.{key} must be a non-negative integer, not {value!r}")
        sizes[key] = value
    n_special = sizes["default_num_special_tokens"]
    n_ordinary = sizes["default_vocab_size"] - n_special
    if n_ordinary < 256:
        raise bad(
            f"config.default_vocab_size ({sizes['default_vocab_size']}) leaves "
            f"{n_ordinary} ids after the {n_special} special tokens: the 256 single bytes need "
            "256 at least"
        )
    names = _special_names(doc, config, n_special, bad)
    entries = doc["vocab"]
    if len(entries) < n_ordinary:
        raise bad(
            f"vocab has {len(entries)} tokens, fewer than the {n_ordinary} that "
            f"config.default_vocab_size ({sizes['default_vocab_size']}) less "
            f"{n_special} special tokens asks for"
        )
    tokens = [_token(entries[rank], rank, bad) for rank in range(n_ordinary)]
    if len(set(tokens)) != len(tokens):
        first: dict[bytes, int] = {}
        for rank, token in enumerate(tokens):
            if token in first:
                raise bad(f"vocab[{first[token]}] and vocab[{rank}] are both {token!r}")
            first[token] = rank
    return Vocabulary(
        source=source,
        name=Path(source).name.removesuffix(".json") or source,
        tokens=[b""] * n_special + tokens,
        pattern=pattern,
        special_tokens={name: i for i, name in enumerate(names)},
    )


def _special_names(doc: dict[str, Any], config: dict[str, Any], n: int, bad: Any) -> list[str]:
    listed = doc.get("special_tokens")
    if listed is None:
        version = config.get("version")
        match = _VERSION.fullmatch(version) if isinstance(version, str) else None
        if match is None or int(match[1]) > 7:
            raise bad(
                f"it lists no special_tokens and config.version is {version!r}: only a file "
                "of version v1..v7 may leave them out (mistral-common then gives it its 20 "
                "control tokens)"
            )
        names = list(CONTROL_TOKENS_V7)
    elif not isinstance(listed, list):
        raise bad(f"special_tokens must be a list, not {kind(listed)}")
    else:
        names = []
        for i, entry in enumerate(listed):
            if not isinstance(entry, dict):
                raise bad(f"special_tokens[{i}] must be an object, not {kind(entry)}")
            name = entry.get("token_str")
            if not isinstance(name, str) or not name:
                raise bad(f'special_tokens[{i}]: "token_str" must be a non-empty string')
            if entry.get("rank") != i or type(entry.get("rank")) is not int:
                raise bad(
                    f"special_tokens[{i}] ({name!r}) has rank {entry.get('rank')!r}: the list "
                    "gives the ids in order, so its rank must be its position"
                )
            names.append(name)
    if len(names) > n:
        raise bad(f"{len(names)} special tokens, more than config.default_num_special_tokens ({n})")
    names += [FILLER.format(i) for i in range(len(names), n)]
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            raise bad(f"the special token {name!r} is listed twice (the second has id {i})")
        seen.add(name)
    return names


def _token(entry: Any, rank: int, bad: Any) -> bytes:
    if not isinstance(entry, dict):
        raise bad(f"vocab[{rank}] must be an object, not {kind(entry)}")
    if entry.get("rank") != rank or type(entry.get("rank")) is not int:
        raise bad(
            f"vocab[{rank}] has rank {entry.get('rank')!r}: the list gives the tokens by "
            "rank, so its rank must be its position"
        )
    text = entry.get("token_bytes")
    token = None
    if isinstance(text, str):
        try:
            token = base64.b64decode(text, validate=True)
        except (ValueError, binascii.Error):
            token = None
    if token is None:
        raise bad(f'vocab[{rank}]: "token_bytes" must be base64, not {text!r}')
    if rank < 256 and token != bytes([rank]):
        raise bad(f"vocab[{rank}] is {token!r}: the first 256 ranks are the single bytes")
    return token
