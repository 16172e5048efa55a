"""Section 4, code and whitespace: how much of a code corpus is spent on blanks, and what
indentation costs.

>>> import tokenmill
>>> code = {"a.py": "def f():\\n    if x:\\n        return 1\\n"}
>>> s = compute(tokenmill.load("gpt2"), code)
>>> [(r["style"], r["tokens"]) for r in s["indentation"]]
[('2 spaces', 15), ('4 spaces', 21), ('8 spaces', 33), ('tabs', 14)]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

STYLES = {"2 spaces": "  ", "4 spaces": "    ", "8 spaces": "        ", "tabs": "\t"}
_LEADING = re.compile(r"^( +)", re.MULTILINE)


def reindent(code: str, unit: str, width: int = 4) -> str:
    """Code indented with ``width`` spaces per level re-indented with ``unit`` per level
    (spaces beyond whole levels are kept).

    >>> reindent("a\\n    b\\n      c\\n", "\\t")
    'a\\n\\tb\\n\\t  c\\n'
    """
    return _LEADING.sub(lambda m: unit * (len(m[1]) // width) + " " * (len(m[1]) % width), code)


def indent_width(code: str) -> int:
    """The indentation step of ``code``: the smallest leading run of spaces that is 2 or more
    (4 when there is none)."""
    widths = {len(m[1]) for m in _LEADING.finditer(code) if len(m[1]) >= 2}
    return min(widths) if widths else 4


def whitespace_ids(tok: Tokenizer) -> np.ndarray:  # type: ignore[type-arg]
    """Boolean mask over ids: the ordinary tokens made only of whitespace bytes."""
    return np.fromiter(
        (bool(t) and not t.strip(b" \t\n\r\x0b\x0c") for t in tok.token_bytes_list()), dtype=bool
    )


def compute(tok: Tokenizer, code: dict[str, str], num_threads: int | None = None) -> dict[str, Any]:
    """Share of tokens that are pure whitespace on the code, and the cost of each indentation."""
    texts = list(code.values())
    ids, _ = tok.encode_batch_to_numpy(texts, num_threads=num_threads, disallowed_special=())
    mask = whitespace_ids(tok)
    ordinary = ids[ids < len(mask)]
    ws = int(mask[ordinary].sum())
    rows: list[dict[str, Any]] = []
    for style, unit in STYLES.items():
        variants = [reindent(t, unit, indent_width(t)) for t in texts]
        n = sum(tok.count_batch(variants, num_threads=num_threads, disallowed_special=()))
        rows.append({"style": style, "tokens": n})
    cheapest = min(r["tokens"] for r in rows)
    for r in rows:
        r["vs_cheapest"] = r["tokens"] / cheapest if cheapest else 1.0
    top = np.bincount(ordinary[mask[ordinary]], minlength=len(mask))
    common = [int(i) for i in np.argsort(-top, kind="stable")[:5] if top[i]]
    return {
        "files": len(texts),
        "tokens": len(ids),
        "whitespace_tokens": ws,
        "whitespace_share": ws / len(ids) if len(ids) else 0.0,
        "common_whitespace_tokens": [
            {"id": i, "text": tok.decode_single_token_bytes(i).decode(), "count": int(top[i])}
            for i in common
        ],
        "indentation": rows,
    }
