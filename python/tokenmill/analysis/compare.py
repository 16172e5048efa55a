"""Several tokenizers on the same texts: tokens, bytes per token, speed — the table that
shows what a vocabulary is good at.

>>> import tokenmill
>>> r = compare([("gpt2", tokenmill.load("gpt2"))], [("hi", "hello world")])
>>> r["rows"][0]["tokens"]
2
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

SNIPPETS: dict[str, str] = {
    "english": "The quick brown fox jumps over the lazy dog. It was the best of times, it was "
    "the worst of times.",
    "python": "def fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + "
    "fib(n - 2)\n",
    "json": '{"name": "Ada Lovelace", "born": 1815, "fields": ["mathematics", "computing"]}',
    "numbers": "3.14159 2718281828 1,000,000 2026-12-02 0xDEADBEEF 42",
    "german": "Die Würde des Menschen ist unantastbar. Sie zu achten und zu schützen ist "
    "Verpflichtung aller staatlichen Gewalt.",
    "russian": "Все люди рождаются свободными и равными в своем достоинстве и правах.",
    "chinese": "人人生而自由，在尊严和权利上一律平等。",
    "japanese": "すべての人間は、生まれながらにして自由であり、"
    "かつ、尊厳と権利とについて平等である。",
    "hindi": "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता प्राप्त है।",
    "emoji": "🙂 👩‍👩‍👧 🇫🇷 ❤️ 🚀🚀🚀",
    "whitespace": "if x:\n\t\treturn y\n        # eight spaces\n\n\n   trailing   \n",
}


def compare(
    tokenizers: Sequence[tuple[str, Tokenizer]], samples: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """Token counts, bytes and characters per token, and encode time for every pair."""
    rows: list[dict[str, Any]] = []
    for name, tok in tokenizers:
        for label, text in samples:
            start = time.perf_counter()
            n = tok.count(text, disallowed_special=())
            seconds = time.perf_counter() - start
            nbytes = len(text.encode("utf-8"))
            rows.append(
                {
                    "tokenizer": name,
                    "sample": label,
                    "tokens": n,
                    "bytes": nbytes,
                    "bytes_per_token": nbytes / n if n else 0.0,
                    "chars_per_token": len(text) / n if n else 0.0,
                    "seconds": seconds,
                }
            )
    totals = []
    for name, _ in tokenizers:
        mine = [r for r in rows if r["tokenizer"] == name]
        n, nbytes, secs = (sum(r[k] for r in mine) for k in ("tokens", "bytes", "seconds"))
        totals.append(
            {
                "tokenizer": name,
                "tokens": n,
                "bytes_per_token": nbytes / n if n else 0.0,
                "mb_per_s": nbytes / secs / 1e6 if secs else 0.0,
            }
        )
    return {"rows": rows, "totals": totals}


def format_comparison(result: dict[str, Any]) -> str:
    """One row per sample, one column per tokenizer (tokens and bytes/token), then totals.
    Every column is as wide as its widest cell, so names and counts are never cut.

    >>> r = {"rows": [{"sample": "a-long-file-name.txt", "tokenizer": "gpt2",
    ...                "tokens": 1234567, "bytes_per_token": 3.25}],
    ...      "totals": [{"tokenizer": "gpt2", "tokens": 1234567, "bytes_per_token": 3.25}]}
    >>> print(format_comparison(r), end="")
    sample                             gpt2
    ---------------------------------------
    a-long-file-name.txt    1,234,567 (3.2)
    ---------------------------------------
    tokens                        1,234,567
    bytes/token                        3.25
    cells: tokens (bytes per token); fewer tokens = more text per model step
    """
    names = [t["tokenizer"] for t in result["totals"]]
    samples = list(dict.fromkeys(r["sample"] for r in result["rows"]))
    cell = {(r["sample"], r["tokenizer"]): r for r in result["rows"]}
    rows = [
        [s, *(f"{cell[(s, n)]['tokens']:,} ({cell[(s, n)]['bytes_per_token']:.1f})" for n in names)]
        for s in samples
    ]
    totals = [
        ["tokens", *(f"{t['tokens']:,}" for t in result["totals"])],
        ["bytes/token", *(f"{t['bytes_per_token']:.2f}" for t in result["totals"])],
    ]
    label = max(14, *(len(r[0]) + 2 for r in rows))
    # One width for all tokenizer columns, so that they read as one table.
    width = max(12, *(len(n) for n in names), *(len(c) for r in rows + totals for c in r[1:])) + 2

    def line(cells: list[str]) -> str:
        return cells[0].ljust(label) + "".join(c.rjust(width) for c in cells[1:])

    header = line(["sample", *names])
    rule = "-" * len(header)
    lines = [header, rule, *map(line, rows), rule, *map(line, totals)]
    lines.append("cells: tokens (bytes per token); fewer tokens = more text per model step")
    return "\n".join(lines) + "\n"
