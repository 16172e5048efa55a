"""Section 2, non-English cost: tokens for the same meaning in each language.

The texts are translations of the same sentences, so tokens relative to English is what a
speaker of that language pays (in context length, latency and money) for the same content.

>>> import tokenmill
>>> s = compute(tokenmill.load("gpt2"), {"en": "Good morning.", "de": "Guten Morgen."})
>>> s["rows"][1]["tokens"], s["rows"][1]["vs_english"]
(5, 1.6666666666666667)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokenmill.analysis.failures.corpus import LANGUAGE_NAMES

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer


def compute(
    tok: Tokenizer, languages: dict[str, str], num_threads: int | None = None
) -> dict[str, Any]:
    """Tokens, characters per token and tokens relative to English for each language."""
    codes = sorted(languages, key=lambda c: (c != "en", c))
    counts = tok.count_batch(
        [languages[c] for c in codes], num_threads=num_threads, disallowed_special=()
    )
    english = counts[0] if codes and codes[0] == "en" else None
    rows: list[dict[str, Any]] = []
    for code, n in zip(codes, counts, strict=True):
        text = languages[code]
        rows.append(
            {
                "language": code,
                "name": LANGUAGE_NAMES.get(code, code),
                "tokens": n,
                "bytes": len(text.encode("utf-8")),
                "chars_per_token": len(text) / n if n else 0.0,
                "vs_english": n / english if english else None,
            }
        )
    ratios = [r["vs_english"] for r in rows if r["vs_english"] is not None]
    worst = max(rows, key=lambda r: r["vs_english"] or 0.0)
    return {
        "rows": rows,
        "worst": {"language": worst["name"], "vs_english": worst["vs_english"]},
        "mean_vs_english": sum(ratios) / len(ratios) if ratios else None,
    }
