"""Pre-tokenization speed: tokenmill's scanners vs fancy-regex vs Python's ``regex``.

For each named pattern and corpus, MB/s (UTF-8 bytes of input per second, best of
``--repeat`` runs, one thread) of:

- ``scanner``: tokenmill's hand-written scanner, counting chunks with the GIL released (the
  splitter alone: no Python object per chunk);
- ``scan+list``: the same, returning the chunks as a Python list of str (``_core.split``);
- ``fancy``: the same pattern on fancy-regex (the engine custom patterns use), counting chunks;
- ``regex``: ``regex.findall`` with the pattern precompiled (the oracle; returns a list).

Every cell is timed in interleaved rounds and keeps its best time (the machine may be shared).

    python benchmarks/bench_pretokenize.py [--corpus holmes ...] [--repeat 5] [--json out.json]

Corpora come from ``../shared/data`` (relative to the repository); without it the benchmark
says so and exits.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import regex

from tokenmill import _core

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
PATTERNS = {
    "gpt2": _core.GPT2_PATTERN,
    "cl100k": _core.CL100K_PATTERN,
    "o200k": _core.O200K_PATTERN,
}
# English prose first, then a spread of scripts (the multilingual files are parallel text).
DEFAULT_CORPORA = [
    "holmes.txt",
    "multilingual/en.txt",
    "multilingual/de.txt",
    "multilingual/ru.txt",
    "multilingual/el.txt",
    "multilingual/ar.txt",
    "multilingual/hi.txt",
    "multilingual/zh.txt",
    "multilingual/ja.txt",
    "multilingual/ko.txt",
    "multilingual/th.txt",
    "multilingual/emoji.txt",
    "structured/countries.json",
]
ENGINES = ("scanner", "scan+list", "fancy", "regex")


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def runners(name: str, text: str) -> dict[str, Callable[[], object]]:
    compiled = regex.compile(PATTERNS[name])
    return {
        "scanner": lambda: _core.count_chunks(name, text),
        "scan+list": lambda: _core.split(name, text),
        "fancy": lambda: _core.count_chunks(name, text, engine="regex"),
        "regex": lambda: compiled.findall(text),
    }


def resolve_corpus(arg: str) -> Path:
    p = Path(arg)
    if p.is_file():
        return p
    for candidate in (DATA / arg, DATA / f"{arg}.txt", DATA / "multilingual" / f"{arg}.txt"):
        if candidate.is_file():
            return candidate
    sys.exit(f"no corpus {arg!r} (looked in {DATA})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", nargs="*", help="files, or names under ../shared/data")
    ap.add_argument("--pattern", nargs="*", choices=list(PATTERNS), default=list(PATTERNS))
    ap.add_argument("--engine", nargs="*", choices=ENGINES, default=list(ENGINES))
    ap.add_argument("--repeat", type=int, default=7, help="runs per measurement (best is kept)")
    ap.add_argument("--budget", type=float, default=4.0, help="max seconds per measurement")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    if args.corpus:
        paths = [resolve_corpus(c) for c in args.corpus]
    else:
        if not DATA.is_dir():
            print(f"skipped: {DATA} is not present (pass --corpus FILE to use your own)")
            return
        paths = [DATA / c for c in DEFAULT_CORPORA if (DATA / c).is_file()]

    texts = {}
    for path in paths:
        label = str(path.relative_to(DATA)) if path.is_relative_to(DATA) else path.name
        texts[label] = path.read_text(encoding="utf-8")
    cells = [(label, name) for label in texts for name in args.pattern]
    run = {cell: runners(cell[1], texts[cell[0]]) for cell in cells}
    for label, name in cells:
        # The engines must agree before their speeds mean anything.
        counts = {_core.count_chunks(name, texts[label], engine=e) for e in ("auto", "regex")}
        if len(counts) != 1:
            sys.exit(f"{label} {name}: scanner and fancy-regex disagree: {counts}")

    # The machine may be shared: single timings swing by 2x. Interleave every cell and engine
    # in rounds, so a busy moment hits all of them alike, and keep each one's best time.
    best = {(cell, e): float("inf") for cell in cells for e in args.engine}
    spent = dict.fromkeys(best, 0.0)
    for _ in range(args.repeat):
        for cell in cells:
            for engine in args.engine:
                if spent[cell, engine] > args.budget:
                    continue
                dt = timed(run[cell][engine])
                best[cell, engine] = min(best[cell, engine], dt)
                spent[cell, engine] += dt

    print(f"MB/s, best of up to {args.repeat} interleaved runs, one thread")
    header = f"{'corpus':<26}{'MB':>6} {'pattern':<7}" + "".join(f"{e:>11}" for e in args.engine)
    print(header)
    print("-" * len(header))
    results = []
    speeds: dict[str, list[float]] = {e: [] for e in args.engine}
    for label, name in cells:
        mb = len(texts[label].encode("utf-8")) / 1e6
        row: dict[str, object] = {"corpus": label, "bytes": round(mb * 1e6), "pattern": name}
        for engine in args.engine:
            mbs = mb / best[(label, name), engine]
            speeds[engine].append(mbs)
            row[engine] = round(mbs, 1)
        results.append(row)
        line = "".join(f"{speeds[e][-1]:>11.1f}" for e in args.engine)
        print(f"{label:<26}{mb:>6.2f} {name:<7}{line}")
    if "scanner" in args.engine:
        print()
        for other in [e for e in args.engine if e != "scanner"]:
            ratios = [a / b for a, b in zip(speeds["scanner"], speeds[other], strict=True)]
            print(f"scanner / {other}: {min(ratios):.1f}x .. {max(ratios):.1f}x")
    if args.json:
        meta = {"python": platform.python_version(), "regex": regex.__version__}
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
