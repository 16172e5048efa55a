"""Section 8, JSON vs YAML vs CSV vs XML: tokens for the same records in each format.

>>> import tokenmill
>>> s = compute(tokenmill.load("gpt2"), {"json": '[{"a": 1}]', "csv": 'a\\n1\\n'})
>>> [(r["format"], r["tokens"]) for r in s["rows"]]
[('json', 7), ('csv', 4)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

ORDER = ("json", "yml", "csv", "xml")


def compute(
    tok: Tokenizer, structured: dict[str, str], num_threads: int | None = None
) -> dict[str, Any]:
    """Tokens and bytes per token for each format, and tokens relative to the cheapest."""
    fmts = sorted(structured, key=lambda f: (ORDER.index(f) if f in ORDER else len(ORDER), f))
    counts = tok.count_batch(
        [structured[f] for f in fmts], num_threads=num_threads, disallowed_special=()
    )
    cheapest = min(counts) if counts else 0
    rows: list[dict[str, Any]] = []
    for f, n in zip(fmts, counts, strict=True):
        nbytes = len(structured[f].encode("utf-8"))
        rows.append(
            {
                "format": f,
                "bytes": nbytes,
                "tokens": n,
                "bytes_per_token": nbytes / n if n else 0.0,
                "vs_cheapest": n / cheapest if cheapest else 1.0,
            }
        )
    return {"rows": rows}
