"""Section 7, glitch-token candidates: ids a model may never have learned.

A row of the embedding table is only trained when its token occurs in the training data.
Tokens that the encoder cannot produce from their own text, tokens that are not whole UTF-8
characters, and tokens that (almost) never occur when a corpus is encoded are the rows that
stay near their random initialisation — the " SolidGoldMagikarp" effect. For a tokenizer
trained by tokenmill, *merge residue* are tokens that were frequent when merged but were
then swallowed by longer merges, so they are rare in the final encoding.

>>> import tokenmill
>>> s = compute(tokenmill.load("o200k_base"))
>>> s["no_merge_path"]["count"], s["split_by_pattern"]["count"], s["partial_utf8"]["count"]
(0, 12, 1562)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from tokenmill.analysis.show import token_text

if TYPE_CHECKING:
    from tokenmill.analysis.failures.encoded import Encoded
    from tokenmill.tokenizer import Tokenizer

RARE = 2  # "almost never": seen at most this many times in the corpus
RESIDUE_RATIO = 0.05  # merge residue: final count below 5% of the count when merged
RESIDUE_MIN_MERGE_COUNT = 10
EXAMPLES = 20
# Tokens known to have made GPT-2/GPT-3 misbehave.
KNOWN_GLITCHES = (
    " SolidGoldMagikarp",
    " petertodd",
    " davidjl",
    "StreamerBot",
    " TheNitromeFan",
    "PsyNetMessage",
    "embedreportprint",
    " RandomRedditorWithNo",
)


def _examples(tokens: list[bytes], ranks: Any, counts: Any = None) -> list[dict[str, Any]]:
    out = []
    for r in list(ranks)[:EXAMPLES]:
        row: dict[str, Any] = {"id": int(r), "text": token_text(tokens[r])}
        if counts is not None:
            row["count"] = int(counts[r])
        out.append(row)
    return out


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _word_like(data: bytes) -> bool:
    """At least three letters and three different characters (not a run of one symbol)."""
    text = data.decode("utf-8")
    return sum(c.isalpha() for c in text) >= 3 and len(set(text)) >= 3


def no_merge_path(tok: Tokenizer) -> list[int]:
    """Multi-byte tokens that merging their own bytes (as one piece) never produces: they
    appear only when a whole chunk is exactly their bytes."""
    tokens = tok.token_bytes_list()
    parents = tok.merge_parents()
    return [r for r, t in enumerate(tokens) if len(t) > 1 and parents[r] is None]


def partial_utf8(tok: Tokenizer) -> list[int]:
    """Tokens whose bytes are not a sequence of whole UTF-8 characters."""
    return [r for r, t in enumerate(tok.token_bytes_list()) if not _is_utf8(t)]


def split_by_pattern(tok: Tokenizer, num_threads: int | None = None) -> list[int]:
    """Tokens that are whole text, yet encoding that text gives other ids (the split pattern
    cuts it, e.g. a token that joins letters and digits under a pattern that separates them)."""
    tokens = tok.token_bytes_list()
    ranks, texts = [], []
    for r, t in enumerate(tokens):
        try:
            texts.append(t.decode("utf-8"))
        except UnicodeDecodeError:
            continue
        ranks.append(r)
    ids, offsets = tok.encode_batch_to_numpy(texts, num_threads=num_threads, disallowed_special=())
    rk = np.asarray(ranks, dtype=np.int64)
    n = np.diff(offsets)
    first = ids[np.minimum(offsets[:-1], max(len(ids) - 1, 0))].astype(np.int64)
    ok = (n == 1) & (first == rk)
    return rk[~ok].tolist()


def compute(
    tok: Tokenizer, encoded: Encoded | None = None, num_threads: int | None = None
) -> dict[str, Any]:
    """The candidates of each kind: counts and examples (and, with a corpus, how often)."""
    tokens = tok.token_bytes_list()
    n = len(tokens)
    unmerged = no_merge_path(tok)
    partial = partial_utf8(tok)
    split = split_by_pattern(tok, num_threads)
    out: dict[str, Any] = {
        "ordinary_tokens": n,
        "no_merge_path": {"count": len(unmerged), "examples": _examples(tokens, unmerged)},
        "split_by_pattern": {"count": len(split), "examples": _examples(tokens, split)},
        "partial_utf8": {"count": len(partial), "examples": _examples(tokens, partial)},
    }
    known = []
    for text in KNOWN_GLITCHES:
        r = tok.rank(text.encode())
        row: dict[str, Any] = {"text": text, "id": r}
        if r is not None and encoded is not None:
            row["count"] = int(encoded.counts[r])
        known.append(row)
    out["known"] = known
    if encoded is None:
        return out
    counts = encoded.counts[:n]
    never = np.flatnonzero(counts == 0)
    rare = np.flatnonzero((counts > 0) & (counts <= RARE))
    # The most telling candidates first: never seen, word-like (" SolidGoldMagikarp", not a
    # run of dashes), longest first.
    lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=n)
    whole = sorted(
        (int(r) for r in never if _is_utf8(tokens[r])),
        key=lambda r: (not _word_like(tokens[r]), -len(tokens[r]), r),
    )
    out["corpus_tokens"] = encoded.total
    out["never_seen"] = {
        "count": len(never),
        "share": len(never) / n,
        "examples": _examples(tokens, whole),
    }
    out["rarely_seen"] = {
        "count": len(rare),
        "max_count": RARE,
        "examples": _examples(tokens, rare[np.argsort(-lengths[rare], kind="stable")], counts),
    }
    merges = tok.merges
    if merges:
        rows: list[dict[str, Any]] = []
        for k, m in enumerate(merges):
            r = 256 + k
            final = int(counts[r]) if r < n else 0
            if m.count >= RESIDUE_MIN_MERGE_COUNT and final < RESIDUE_RATIO * m.count:
                rows.append(
                    {
                        "id": r,
                        "text": token_text(tokens[r]),
                        "merge_count": m.count,
                        "final_count": final,
                    }
                )
        rows.sort(key=lambda x: (-x["merge_count"], x["id"]))
        out["merge_residue"] = {
            "count": len(rows),
            "ratio": RESIDUE_RATIO,
            "examples": rows[:EXAMPLES],
        }
    return out
