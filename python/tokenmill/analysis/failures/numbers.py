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
    tok: Tokenizer, limit: int = LIMIT, num_threads: int | None = None, *, prefix: str = ""
) -> list[tuple[int, ...]]:
    """For each integer ``0 .. limit-1`` written in decimal after ``prefix``, the digit count
    of each of its tokens, e.g. ``(3, 2)`` for a number split as ``"123" + "45"``. The
    prefix is not counted: after a space, ``(0, 3)`` means the space is a token of its own.

    >>> import tokenmill
    >>> g = groupings(tokenmill.load("gpt2"), 10_000)
    >>> g[1001], g[1002], g[1234]
    ((4,), (3, 1), (2, 2))
    >>> groupings(tokenmill.load("cl100k_base"), 10_000, prefix=" ")[1234]
    (0, 3, 1)
    """
    ids, offsets = tok.encode_batch_to_numpy(
        [f"{prefix}{i}" for i in range(limit)], num_threads=num_threads, disallowed_special=()
    )
    lens = token_lengths(tok)[ids]
    # The prefix's bytes are at the start of each number's first token(s).
    skip = len(prefix.encode("utf-8"))
    out = []
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        g = lens[a:b].tolist()
        k, left = 0, skip
        while left:
            take = min(left, g[k])
            g[k] -= take
            left -= take
            k += 1
        out.append(tuple(g))
    return out


def _show(g: tuple[int, ...]) -> str:
    return "+".join(map(str, g))


def _split(n: int, g: tuple[int, ...], prefix: str = "") -> list[str]:
    s, out, at = str(n), [], 0
    for k in g:
        out.append(s[at : at + k])
        at += k
    out[0] = prefix + out[0]
    return out


def compute(tok: Tokenizer, limit: int = LIMIT, num_threads: int | None = None) -> dict[str, Any]:
    """Per digit count: how many distinct groupings, how many numbers split differently from
    the most common one (with examples); digits per token; which numbers are one token. The
    same after a space (``"... 1234"``, as numbers appear in prose) under ``after_space``."""
    out = summarize(groupings(tok, limit, num_threads), limit)
    spaced = summarize(groupings(tok, limit, num_threads, prefix=" "), limit, prefix=" ")
    out["after_space"] = spaced
    return out


def summarize(gs: list[tuple[int, ...]], limit: int, prefix: str = "") -> dict[str, Any]:
    """The statistics of :func:`compute` from the groupings of ``0 .. limit-1``."""
    n_tokens = np.fromiter((len(g) for g in gs), dtype=np.int64, count=len(gs))
    space_alone = sum(1 for g in gs if g[0] == 0)
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
            examples.append({"number": n, "grouping": _show(g), "pieces": _split(n, g, prefix)})
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
        "space_alone": space_alone,
        "by_digits": by_digits,
    }
