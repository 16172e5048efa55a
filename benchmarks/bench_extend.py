"""Continued training: extend gpt2, cl100k_base and o200k_base with merges learned on the
24-language parallel text of ``../shared/data/multilingual``, and what it buys.

Each language file is cut in two: the first 90% of every file is the training corpus (one
corpus, files in name order), the last 10% the held-out text. Per base and number of new
merges: seconds to train (best of ``--rounds``, counting and merging, one process, all
threads) and the held-out text's tokens with the base and with the extended tokenizer, in
total and for the languages the base spends most tokens on. No peer continues training
from an existing vocabulary (HF ``tokenizers`` and rustbpe train from the bytes; HF's
``add_tokens`` adds whole strings matched before splitting, not merges), so the row to set the
seconds against is tokenmill training from the bytes on the same corpus.

    python benchmarks/bench_extend.py [--bases gpt2 ...] [--merges 1024 8192] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings
from pathlib import Path

import tokenmill

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "multilingual"
SHOWN = ["hi", "ta", "ko", "ru"]


def corpus() -> tuple[list[str], dict[str, str]]:
    train, held_out = [], {}
    for path in sorted(DATA.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        cut = text.rfind("\n", 0, len(text) * 9 // 10) + 1
        train.append(text[:cut])
        held_out[path.stem] = text[cut:]
    return train, held_out


def best(fn, rounds: int):  # type: ignore[no-untyped-def]
    seconds, result = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        result = fn()
        seconds = min(seconds, time.perf_counter() - start)
    return seconds, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bases", nargs="+", default=["gpt2", "cl100k_base", "o200k_base"])
    ap.add_argument("--merges", nargs="+", type=int, default=[1024, 8192])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    warnings.simplefilter("ignore", tokenmill.TrainingWarning)

    train, held_out = corpus()
    size = sum(len(t.encode("utf-8")) for t in train)
    print(f"training corpus {size / 1e6:.1f} MB ({len(train)} files), held out 10% of each")
    header = (
        f"{'base':<13}{'new':>6}{'seconds':>9}{'from bytes':>11}{'held-out tokens':>22}"
        + "".join(f"{lang:>9}" for lang in SHOWN)
    )
    print(header)
    print("-" * len(header))
    rows = []
    for name in args.bases:
        base = tokenmill.load(name)
        before = {lang: base.count(text, disallowed_special=()) for lang, text in held_out.items()}
        for merges in args.merges:

            def extended(n: int = merges, b: tokenmill.Tokenizer = base) -> tokenmill.Tokenizer:
                return tokenmill.train(train, b.n_vocab + n, base=b)

            def from_bytes(n: int = merges, b: tokenmill.Tokenizer = base) -> tokenmill.Tokenizer:
                return tokenmill.train(train, 256 + n, pattern=b.pattern)  # type: ignore[arg-type]

            seconds, tok = best(extended, args.rounds)
            scratch, _ = best(from_bytes, args.rounds)
            after = {lang: tok.count(t, disallowed_special=()) for lang, t in held_out.items()}
            total = (sum(before.values()), sum(after.values()))
            ratios = {lang: after[lang] / before[lang] for lang in SHOWN}
            print(
                f"{name:<13}{merges:>6}{seconds:>9.2f}{scratch:>11.2f}"
                f"{f'{total[0]:,} -> {total[1]:,}':>22}"
                + "".join(f"{ratios[lang]:>8.0%} " for lang in SHOWN)
            )
            rows.append(
                {
                    "base": name,
                    "new_merges": merges,
                    "seconds": seconds,
                    "from_bytes_seconds": scratch,
                    "held_out_tokens": {"base": before, "extended": after},
                }
            )
    print("(the language columns: held-out tokens of the extended tokenizer, % of the base's)")
    if args.json:
        out = {
            "benchmark": "extend",
            "rounds": args.rounds,
            "corpus_bytes": size,
            "machine": platform.machine(),
            "versions": {"tokenmill": tokenmill.__version__},
            "rows": rows,
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
