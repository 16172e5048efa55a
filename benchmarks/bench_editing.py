"""Changing a vocabulary: seconds to add two tokens, add two special tokens, and remove three
tokens (with the embedding table's rows), against the peers' ways of doing the same, in one
process.

- tokenmill: ``with_tokens``, ``with_special_tokens``, ``without`` + ``embedding.remap`` on a
  ``n_vocab x 768`` float32 table: each gives a new tokenizer, the old one unchanged.
- HF ``tokenizers``: ``add_tokens`` / ``add_special_tokens`` on a tokenizer read from tokenmill's
  export (in place; the read is not timed). It has no way to remove a token.
- tiktoken: a new ``Encoding`` with the special tokens added, its documented way; it has no
  added tokens and no way to remove one.

Each cell is the best of ``--rounds``; a first encode after the change is included, since a
change is only done once it can be used.

    python benchmarks/bench_editing.py [--encodings gpt2 ...] [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import encode_peers

import tokenmill
from tokenmill.embedding import remap

NEW = ["<think>", "</think>"]
SPECIAL = ["<|im_start|>", "<|im_end|>"]
REMOVED = [1000, 5000, 20000]
D_MODEL = 768
TEXT = "<|im_start|><think> Elementary, my dear Watson.</think><|im_end|>"


def ways_for(name: str) -> dict[str, dict[str, Callable[[], object]]]:
    """operation -> peer -> what is timed."""
    tok = tokenmill.load(name)
    table = np.zeros((tok.n_vocab, D_MODEL), np.float32)

    def added() -> object:
        return tok.with_tokens(NEW).encode(TEXT, disallowed_special=())

    def added_specials() -> object:
        return tok.with_special_tokens(SPECIAL).encode(TEXT, allowed_special="all")

    def removed() -> object:
        pruned, new_id = tok.without(REMOVED)
        return remap(table, new_id, pruned), pruned.encode(TEXT, disallowed_special=())

    ways: dict[str, dict[str, Callable[[], object]]] = {
        "add 2 tokens": {"tokenmill": added},
        "add 2 special tokens": {"tokenmill": added_specials},
        f"remove 3 tokens, {D_MODEL}-wide table": {"tokenmill": removed},
    }
    try:
        import tokenizers
    except ImportError:
        print("   tokenizers: not installed")
    else:
        text = encode_peers.hf_json(name).read_text(encoding="utf-8")

        def hf(add: str, new: list[str]) -> Callable[[], object]:
            def run() -> object:
                fast = tokenizers.Tokenizer.from_str(text)
                start = time.perf_counter()
                getattr(fast, add)(new)
                fast.encode(TEXT)
                return time.perf_counter() - start

            return run

        ways["add 2 tokens"]["tokenizers"] = hf("add_tokens", NEW)
        ways["add 2 special tokens"]["tokenizers"] = hf("add_special_tokens", SPECIAL)
    try:
        base = encode_peers.tiktoken_encoding(name)
    except encode_peers.Unavailable as e:
        print(f"   tiktoken: {e}")
    else:
        import tiktoken

        def tiktoken_specials() -> object:
            first = base.n_vocab
            enc = tiktoken.Encoding(
                f"{name}-chat",
                pat_str=base._pat_str,
                mergeable_ranks=base._mergeable_ranks,
                special_tokens=base._special_tokens | {s: first + k for k, s in enumerate(SPECIAL)},
            )
            return enc.encode(TEXT, allowed_special="all")

        ways["add 2 special tokens"]["tiktoken"] = tiktoken_specials
    return ways


def best_seconds(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        inner = fn()
        took = time.perf_counter() - start
        # A way that times only part of its call (HF's, without the read) returns its seconds.
        best = min(best, inner if isinstance(inner, float) else took)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encodings", nargs="+", default=["gpt2", "cl100k_base", "o200k_base"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    rows = []
    header = f"{'encoding':<13}{'change':<32}{'tokenmill':>11}{'tokenizers':>12}{'tiktoken':>10}"
    print(f"seconds, best of {args.rounds}, a first encode included")
    print(header)
    print("-" * len(header))
    for name in args.encodings:
        for change, peers in ways_for(name).items():
            seconds = {peer: best_seconds(fn, args.rounds) for peer, fn in peers.items()}
            cells = [
                f"{seconds[p]:.4f}" if p in seconds else "–"
                for p in ("tokenmill", "tokenizers", "tiktoken")
            ]
            print(f"{name:<13}{change:<32}{cells[0]:>11}{cells[1]:>12}{cells[2]:>10}")
            rows.append({"encoding": name, "change": change, "seconds": seconds})
    if args.json:
        out = {
            "benchmark": "editing",
            "rounds": args.rounds,
            "machine": platform.machine(),
            "versions": {"tokenmill": tokenmill.__version__},
            "rows": rows,
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
