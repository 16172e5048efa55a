"""Section 1, spelling: how many characters a token hides from the model.

A model sees ids, not letters: asked to count the r's in " strawberry" it has to know what
its tokens spell. The longer the tokens, the more is hidden.

>>> import tokenmill
>>> s = compute(tokenmill.load("cl100k_base"))
>>> [p["tokens"] for p in s["probes"] if p["text"] == ".DefaultCellStyle"]
[1]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokenmill.analysis.failures.encoded import shown
from tokenmill.analysis.inspect import LENGTH_BUCKETS, length_bucket

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# Long strings that are single tokens in some well-known vocabulary, and words whose letters
# people ask models about.
PROBES = (
    ".DefaultCellStyle",
    " SolidGoldMagikarp",
    "ForCanBeConvertedToForeach",
    " strawberry",
    " antidisestablishmentarianism",
    " indivisible",
    " unbelievably",
    ".translatesAutoresizingMaskIntoConstraints",
)


def compute(tok: Tokenizer, top: int = 10) -> dict[str, Any]:
    """Token lengths (bytes), the longest tokens in characters, and the probe strings' splits."""
    tokens = tok.token_bytes_list()
    hist = dict.fromkeys(LENGTH_BUCKETS, 0)
    chars = []
    for t in tokens:
        hist[length_bucket(len(t))] += 1
        try:
            chars.append(len(t.decode("utf-8")))
        except UnicodeDecodeError:
            chars.append(0)  # not whole characters: never spelled on its own
    longest = sorted(range(len(tokens)), key=lambda r: (-chars[r], r))[:top]
    probes = []
    for text in PROBES:
        ids = tok.encode_ordinary(text)
        probes.append({"text": text, "tokens": len(ids), "pieces": shown(tok, ids), "ids": ids})
    return {
        "length_histogram": hist,
        "mean_bytes": sum(len(t) for t in tokens) / len(tokens),
        "tokens_10_plus_chars": sum(c >= 10 for c in chars),
        "tokens_20_plus_chars": sum(c >= 20 for c in chars),
        "longest": [
            {"id": r, "chars": chars[r], "text": tokens[r].decode("utf-8")} for r in longest
        ],
        "probes": probes,
    }
