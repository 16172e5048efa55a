"""HuggingFace ``tokenizer.json`` for byte-level BPE: export and import.

The export is a ``BPE`` model whose merges are each token's parents (the only pairs that can
ever be adjacent, so HF's merge-list rule gives tiktoken's ids), ``ignore_merges`` on (a chunk
that is a whole token is that token, as in tiktoken), a ``Split`` pre-tokenizer carrying the
split pattern, byte-level alphabet and decoder, and the special tokens as added tokens.

HF compiles patterns with Oniguruma, which reads a possessive interval such as cl100k's
``\\p{N}{1,3}+`` as "one to three digits, repeated" (so ``1234567`` would be one piece); the
export writes ``\\p{N}{1,3}``, which splits identically here because nothing follows it in its
alternative.

>>> import json, tokenmill
>>> doc = json.loads(to_json(tokenmill.load("gpt2")))
>>> doc["model"]["type"], len(doc["model"]["merges"]), doc["added_tokens"][0]["content"]
('BPE', 50000, '<|endoftext|>')
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenmill.errors import VocabFileError
from tokenmill.formats import datagym

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# {m,n}+ (possessive interval) -> {m,n}: see the module docstring.
_POSSESSIVE_INTERVAL = re.compile(r"(\{\d+(?:,\d*)?\})\+")


def hf_pattern(pattern: str) -> str:
    """The split pattern rewritten for Oniguruma."""
    return _POSSESSIVE_INTERVAL.sub(r"\1", pattern)


def to_dict(tok: Tokenizer) -> dict[str, Any]:
    """The ``tokenizer.json`` document as a dict."""
    tokens = tok._core.tokens()
    parents = tok._core.merge_parents()
    vocab = {datagym.to_text(t): i for i, t in enumerate(tokens)}
    # Special tokens also go in the model's vocab: HF renumbers added tokens that are not in
    # it to close gaps (cl100k's specials start at 100257, leaving 100256 unused).
    vocab.update(tok.special_tokens)
    merges = [
        [datagym.to_text(tokens[p[0]]), datagym.to_text(tokens[p[1]])]
        for p in parents
        if p is not None
    ]
    added = [
        {
            "id": i,
            "content": s,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for s, i in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {
                    "type": "Split",
                    "pattern": {"Regex": hf_pattern(tok.pattern)},
                    "behavior": "Isolated",
                    "invert": False,
                },
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": merges,
        },
    }


def to_json(tok: Tokenizer) -> str:
    """The ``tokenizer.json`` text."""
    return json.dumps(to_dict(tok), ensure_ascii=False)


def from_dict(
    doc: dict[str, Any], source: str = "tokenizer.json"
) -> tuple[list[bytes], str, dict[str, int]]:
    """Tokens by id, split pattern and special tokens from a byte-level BPE ``tokenizer.json``.

    Ids must be dense from 0 and every one of the 256 bytes must be a token; the pattern is
    the regex of a ``Split`` pre-tokenizer (tiktoken's string when it is one of the named
    patterns rewritten for HF).
    """
    model = doc.get("model") or {}
    if model.get("type") != "BPE" or not isinstance(model.get("vocab"), dict):
        raise VocabFileError(
            source, None, "not a BPE model: expected model.type == 'BPE' with a vocab"
        )
    specials = {t["content"]: int(t["id"]) for t in doc.get("added_tokens") or []}
    vocab = {text: idx for text, idx in model["vocab"].items() if text not in specials}
    tokens: list[bytes | None] = [None] * len(vocab)
    for text, idx in vocab.items():
        if not isinstance(idx, int) or not 0 <= idx < len(vocab) or tokens[idx] is not None:
            raise VocabFileError(
                source,
                None,
                f"token {text!r} has id {idx!r}: "
                f"ordinary ids must be 0..{len(vocab) - 1}, once each",
            )
        tokens[idx] = datagym.to_bytes(text, source)
    return tokens, _pattern_of(doc.get("pre_tokenizer"), source), specials  # type: ignore[return-value]


def _pattern_of(pre: dict[str, Any] | None, source: str) -> str:
    from tokenmill.patterns import PATTERNS

    splits = []
    stack = [pre] if pre else []
    while stack:
        node = stack.pop()
        if node.get("type") == "Sequence":
            stack.extend(reversed(node.get("pretokenizers", [])))
        elif node.get("type") == "Split":
            splits.append(node.get("pattern", {}).get("Regex"))
        elif node.get("type") == "ByteLevel" and node.get("use_regex", True):
            splits.append(PATTERNS["gpt2"])
    if len(splits) != 1 or not isinstance(splits[0], str):
        raise VocabFileError(source, None, "expected one Split (regex) or ByteLevel pre-tokenizer")
    for full in PATTERNS.values():
        if splits[0] in (full, hf_pattern(full)):
            return full
    return splits[0]


def read(path: str | Path) -> tuple[list[bytes], str, dict[str, int]]:
    """Tokens, pattern and special tokens from a ``tokenizer.json`` file."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise VocabFileError(path, getattr(e, "lineno", None), f"not valid JSON: {e}") from None
    return from_dict(doc, str(path))
