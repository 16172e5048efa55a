"""BPE-dropout speed: tokenmill's ``encode(text, dropout=p, seed=s)`` against HF ``tokenizers``'
BPE with ``dropout`` set, on the same vocabulary, in turns in one process.

HF reads tokenmill's ``tokenizer.json`` export with ``dropout`` set and ``ignore_merges`` off
(on, HF never drops a merge inside a word that is a whole token, so it would do less work and
less augmentation). The two draw different random numbers, so their ids differ; the table
shows how many tokens each makes per plain token, which should be close. ``plain`` is
tokenmill's ``encode`` without dropout, for scale.

    python benchmarks/bench_dropout.py [--encodings cl100k_base ...] [--corpora holmes ...]
        [--dropout 0.1] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_encode import load_corpus

import tokenmill
from tokenmill.formats import hf


def hf_with_dropout(tok: tokenmill.Tokenizer, p: float) -> Callable[[str], list[int]]:
    import tokenizers

    doc = hf.to_dict(tok)
    doc["model"]["dropout"] = p
    doc["model"]["ignore_merges"] = False
    fast = tokenizers.Tokenizer.from_str(json.dumps(doc))
    return lambda text: fast.encode(text, add_special_tokens=False).ids


def ways_for(tok: tokenmill.Tokenizer, text: str, p: float) -> dict[str, Callable[[], list[int]]]:
    """What is timed on ``text``: tokenmill without and with dropout, and HF with it."""
    ways = {
        "tokenmill plain": lambda: tok.encode_ordinary(text),
        "tokenmill": lambda: tok.encode(text, dropout=p, seed=1, disallowed_special=()),
    }
    try:
        encode_hf = hf_with_dropout(tok, p)
    except ImportError:
        print("   tokenizers: not installed")
    else:
        ways["tokenizers"] = lambda: encode_hf(text)
    return ways


def best_seconds(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base"])
    ap.add_argument("--corpora", nargs="+", default=["holmes", "ml:all"])
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    rows = []
    header = f"{'encoding':<13}{'corpus':<9}{'MB':>6}  {'way':<16}{'MB/s':>8}{'tokens/plain':>14}"
    print(f"BPE-dropout p={args.dropout}, best of {args.rounds} rounds, one thread")
    print(header)
    print("-" * len(header))
    for name in args.encodings:
        tok = tokenmill.load(name)
        for corpus in args.corpora:
            text = load_corpus(corpus, None, 0, 4_000_000)
            mb = len(text.encode("utf-8")) / 1e6
            plain = len(tok.encode_ordinary(text))
            ways = ways_for(tok, text, args.dropout)
            seconds = {way: 0.0 for way in ways}
            counts = {way: len(fn()) for way, fn in ways.items()}  # and warm up
            for way, fn in ways.items():
                seconds[way] = best_seconds(fn, args.rounds)
            for way in ways:
                speed = mb / seconds[way]
                ratio = counts[way] / plain
                print(f"{name:<13}{corpus:<9}{mb:>6.2f}  {way:<16}{speed:>8.1f}{ratio:>14.3f}")
                rows.append(
                    {
                        "encoding": name,
                        "corpus": corpus,
                        "mb": mb,
                        "way": way,
                        "mb_per_s": speed,
                        "tokens_per_plain": ratio,
                    }
                )
            if "tokenizers" in seconds:
                vs = seconds["tokenizers"] / seconds["tokenmill"]
                print(f"{'':<28}tokenmill / tokenizers: {vs:.2f}x")
    if args.json:
        out = {
            "benchmark": "dropout",
            "dropout": args.dropout,
            "rounds": args.rounds,
            "machine": platform.machine(),
            "rows": rows,
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
