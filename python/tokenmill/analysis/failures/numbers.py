"""Section 3, numbers: how every integer from 0 to 99,999 is split into tokens.

A model doing arithmetic on "12345" sees whatever pieces the tokenizer made. With GPT-2 the
same number of digits splits in many different ways ("1234" is "12"+"34", "1235" is "123"+"5"),
so digit positions mean different things from one number to the next; cl100k and o200k cut
runs of digits into groups of at most three from the left, always the same way.

>>> import tokenmill
>>> s = compute(tokenmill.load("cl100k_base"), limit=10_000)
>>> [(d["digits"], d["groupings"]) for d in s["by_digits"]]
[(1, 1), (2, 1), (3, 1), (4, 1)]
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from tokenmill.analysis.failures.encoded import token_lengths

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

LIMIT = 100_000


def groupings(
    tok: Tokenizer, limit: int = LIMIT, num_threads: int | None = None
) -> list[tuple[int, ...]]:
    """For each integer ``0 .. limit-1`` written in decimal, the digit count of each of its
    tokens, e.g. ``(3, 2)`` for a number split as ``"123" + "45"``.

    >>> import tokenmill
    >>> g = groupings(tokenmill.load("gpt2"), 10_000)
    >>> g[1001], g[1002], g[1234]
    ((4,), (3, 1), (2, 2))
    """
    ids, offsets = tok.encode_batch_to_numpy(
        [str(i) for i in range(limit)], num_threads=num_threads
    )
    lens = token_lengths(tok)[ids].tolist()
    bounds = offsets.tolist()
    return [tuple(lens[bounds[i] : bounds[i + 1]]) for i in range(limit)]


def _show(g: tuple[int, ...]) -> str:
    return "+".join(map(str, g))


def _split(n: int, g: tuple[int, ...]) -> list[str]:
    s, out, at = str(n), [], 0
    for k in g:
        out.append(s[at : at + k])
        at += k
    return out


def compute(tok: Tokenizer, limit: int = LIMIT, num_threads: int | None = None) -> dict[str, Any]:
    """Per digit count: how many distinct groupings, how many numbers split differently from
    the most common one (with examples); digits per token; which numbers are one token."""
    gs = groupings(tok, limit, num_threads)
    n_tokens = np.fromiter((len(g) for g in gs), dtype=np.int64, count=len(gs))
    digits = np.fromiter((len(str(i)) for i in range(limit)), dtype=np.int64, count=limit)
    single = n_tokens == 1
    first_multi = int(np.argmax(~single)) if (~single).any() else limit
    by_digits = []
    for d in range(1, len(str(limit - 1)) + 1):
        lo, hi = (0 if d == 1 else 10 ** (d - 1)), min(10**d, limit)
        counts = Counter(gs[lo:hi])
        common, n_common = counts.most_common(1)[0]
        others = [g for g, _ in counts.most_common() if g != common]
        examples = []
        for g in others[:4]:
            n = next(i for i in range(lo, hi) if gs[i] == g)
            examples.append({"number": n, "grouping": _show(g), "pieces": _split(n, g)})
        by_digits.append(
            {
                "digits": d,
                "numbers": hi - lo,
                "groupings": len(counts),
                "most_common": _show(common),
                "most_common_share": n_common / (hi - lo),
                "inconsistent": hi - lo - n_common,
                "single_token": int(single[lo:hi].sum()),
                "mean_tokens": float(n_tokens[lo:hi].mean()),
                "examples": examples,
            }
        )
    return {
        "limit": limit,
        "digits_per_token": float(digits.sum() / n_tokens.sum()),
        "single_token_numbers": int(single.sum()),
        "single_token_below_1000": int(single[: min(1000, limit)].sum()),
        "all_single_below": first_multi,
        "inconsistent": sum(r["inconsistent"] for r in by_digits),
        "by_digits": by_digits,
    }
