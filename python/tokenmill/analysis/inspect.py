"""A vocabulary at a glance: size, pattern, first and last merges, longest tokens, and how
token lengths are distributed.

>>> import tokenmill
>>> info = describe(tokenmill.load("gpt2"), top=3)
>>> info["n_vocab"], info["first_merges"][0]["merged"]
(50257, "' t'")
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from tokenmill.analysis.show import token_repr
from tokenmill.patterns import scanner

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer


# Special tokens listed by name in the text summary (Llama 3 has 256; --json lists them all).
SPECIALS_SHOWN = 8

# Token-length histogram rows (bytes): each length up to 16, then wider ranges.
LENGTH_BUCKETS = (*(str(n) for n in range(1, 17)), "17-24", "25-32", "33-64", "65+")


def length_bucket(n: int) -> str:
    """The histogram row of a token of ``n`` bytes (one of ``LENGTH_BUCKETS``)."""
    if n <= 16:
        return str(n)
    for lo, hi in ((17, 24), (25, 32), (33, 64)):
        if n <= hi:
            return f"{lo}-{hi}"
    return "65+"


def splitter_path(tok: Tokenizer) -> str:
    """Which path splits the tokenizer's text: its scanner, or the general regex engine.

    >>> import tokenmill
    >>> splitter_path(tokenmill.load("o200k_base"))
    'the o200k scanner'
    >>> splitter_path(tokenmill.Tokenizer([bytes([b]) for b in range(256)], r"\\w+"))
    'the regex engine (no scanner runs this pattern)'
    >>> splitter_path(tokenmill.Tokenizer([bytes([b]) for b in range(256)], [r"\\d", "gpt2"]))
    '2 patterns, one after another: the regex engine, the gpt2 scanner'
    """
    if len(tok.patterns) > 1 and tok.scanner is None:
        stages = (scanner(p) for p in tok.patterns)
        paths = ", ".join(f"the {s} scanner" if s else "the regex engine" for s in stages)
        return f"{len(tok.patterns)} patterns, one after another: {paths}"
    if tok.scanner is None:
        return "the regex engine (no scanner runs this pattern)"
    return f"the {tok.scanner} scanner"


def describe(tok: Tokenizer, top: int = 10, since: int = 0) -> dict[str, Any]:
    """Facts about a vocabulary as plain data (what ``tokenmill inspect --json`` prints);
    ``first_merges`` lists the merged tokens from id ``since`` on (what training added to a
    base)."""
    tokens = tok.token_bytes_list()
    parents = tok.merge_parents()
    merges = tok.merges
    merged = [r for r in range(len(tokens)) if len(tokens[r]) > 1]

    def merge_row(rank: int) -> dict[str, Any]:
        row: dict[str, Any] = {"rank": rank, "merged": token_repr(tokens[rank])}
        p = parents[rank]
        if p is not None:
            row["left"], row["right"] = token_repr(tokens[p[0]]), token_repr(tokens[p[1]])
        if merges is not None and rank >= 256 and rank - 256 < len(merges):
            row["count"] = merges[rank - 256].count
        return row

    lengths = Counter(len(t) for t in tokens)
    buckets: Counter[str] = Counter()
    for length in sorted(lengths):
        buckets[length_bucket(length)] += lengths[length]
    longest = sorted(range(len(tokens)), key=lambda r: (-len(tokens[r]), r))[:top]
    return {
        "name": tok.name,
        "n_vocab": tok.n_vocab,
        "ordinary_tokens": sum(1 for t in tokens if t),
        "special_tokens": tok.special_tokens,
        "added_tokens": tok.added_tokens,
        "pattern": tok.pattern_name or tok.pattern,
        "splitter": splitter_path(tok),
        "merges": len(merged),
        "unreachable": sum(1 for r in merged if parents[r] is None),
        "first_merges": [merge_row(r) for r in merged if r >= since][:top],
        "last_merges": [merge_row(r) for r in merged[-top:]],
        "longest_tokens": [
            {"rank": r, "bytes": len(tokens[r]), "text": token_repr(tokens[r])} for r in longest
        ],
        "length_histogram": dict(buckets),
        "mean_token_bytes": sum(len(t) for t in tokens) / len(tokens),
    }


def format_description(info: dict[str, Any]) -> str:
    """``describe``'s facts as text for a terminal."""
    out = [
        f"{info['name']}: {info['n_vocab']:,} ids ({info['ordinary_tokens']:,} ordinary, "
        f"{len(info['special_tokens'])} special"
        + (f", {len(info['added_tokens'])} added" if info["added_tokens"] else "")
        + f"), pattern {info['pattern']}",
        f"split by {info['splitter']}",
        f"{info['merges']:,} merged tokens, {info['unreachable']} unreachable by merging, "
        f"mean token length {info['mean_token_bytes']:.2f} bytes",
    ]
    for kind in ("special", "added"):
        shown = list(info[f"{kind}_tokens"].items())
        if not shown:
            continue
        listed = ", ".join(
            f"{s!r} = {i}" if kind == "added" else f"{s} = {i}" for s, i in shown[:SPECIALS_SHOWN]
        )
        more = len(shown) - SPECIALS_SHOWN
        out.append(
            f"{kind}: {listed}" + (f", and {more:,} more (--json lists all)" if more > 0 else "")
        )

    def merges(title: str, rows: list[dict[str, Any]]) -> None:
        out.append(f"\n{title}:")
        for m in rows:
            parts = f"{m.get('left', '?')} + {m.get('right', '?')}"
            count = f"  seen {m['count']:,}x" if "count" in m else ""
            out.append(f"  {m['rank']:>7}  {parts:<32} -> {m['merged']}{count}")

    merges("first merges", info["first_merges"])
    merges("last merges", info["last_merges"])
    out.append("\nlongest tokens:")
    out.extend(
        f"  {t['rank']:>7}  {t['bytes']:>3} bytes  {t['text']}" for t in info["longest_tokens"]
    )
    out.append("\ntoken length (bytes): count")
    hist = info["length_histogram"]
    peak = max(hist.values())
    for length, n in hist.items():
        out.append(f"  {length:>5}: {n:>7,} {'#' * max(1, round(40 * n / peak))}")
    return "\n".join(out) + "\n"
