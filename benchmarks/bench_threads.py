"""Two threads against one: tokenmill's pool against two plain Python threads, in turns.

On a shared or virtual machine what two threads reach over one changes from hour to hour, so
a 2-thread row of ``bench_encode.py`` alone cannot tell a loss in tokenmill's scheduling from a
slow moment of the machine. This benchmark times, in one process and in turns (each way once
per round, so a slow moment hits all of them alike), MB/s of:

- ``one text``: ``encode_to_numpy(text)``, one thread;
- ``batch, 1 thread``: ``encode_batch_to_numpy(docs, num_threads=1)``;
- ``batch, 2 threads``: the same on 2 threads (documents shared out one at a time);
- ``one text, 2 threads``: ``encode_to_numpy(text, num_threads=2)`` (the text cut in pieces);
- ``2 Python threads``: two long-lived Python threads, each encoding a fixed half of the
  documents one ``encode_to_numpy`` call at a time (the GIL is released while encoding). No
  scheduling is shared: this is what the machine gives two independent threads right now.

and prints the median and quartiles of each, with the median's ratio to ``one text``. The
batch row should match the Python threads' row; both over ``one text`` is the machine's 2x.

    python benchmarks/bench_threads.py [--encodings gpt2 ...] [--corpora holmes ml:all code]
        [--rounds 15] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_encode import DATA, load_corpus, split_docs

import tokenmill

CODE_BYTES = 4_000_000  # as bench_encode's code corpus
WAYS = (
    "one text",
    "batch, 1 thread",
    "batch, 2 threads",
    "one text, 2 threads",
    "2 Python threads",
)


class HalvesOnTwoThreads:
    """Two long-lived Python threads, each encoding its half of ``docs`` once per call (new
    threads each call would start with empty chunk caches, which are per thread)."""

    def __init__(self, enc: tokenmill.Tokenizer, docs: list[str]) -> None:
        self.start = threading.Barrier(3)
        self.done = threading.Barrier(3)
        for half in (docs[0::2], docs[1::2]):
            threading.Thread(target=self._serve, args=(enc, half), daemon=True).start()

    def _serve(self, enc: tokenmill.Tokenizer, half: list[str]) -> None:
        while True:
            self.start.wait()
            for doc in half:
                enc.encode_to_numpy(doc)
            self.done.wait()

    def __call__(self) -> None:
        self.start.wait()
        self.done.wait()


def ways(enc: tokenmill.Tokenizer, text: str, docs: list[str]) -> dict[str, Callable[[], object]]:
    return {
        "one text": lambda: enc.encode_to_numpy(text),
        "batch, 1 thread": lambda: enc.encode_batch_to_numpy(docs, num_threads=1),
        "batch, 2 threads": lambda: enc.encode_batch_to_numpy(docs, num_threads=2),
        "one text, 2 threads": lambda: enc.encode_to_numpy(text, num_threads=2),
        "2 Python threads": HalvesOnTwoThreads(enc, docs),
    }


def measure(run: dict[str, Callable[[], object]], mb: float, rounds: int) -> dict[str, list]:
    for call in run.values():  # warm every way's chunk caches
        for _ in range(5):
            call()
    speeds: dict[str, list[float]] = {way: [] for way in run}
    for _ in range(rounds):
        for way, call in run.items():
            t0 = time.perf_counter()
            call()
            speeds[way].append(mb / (time.perf_counter() - t0))
    return speeds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encodings", nargs="*", default=["gpt2", "o200k_base"])
    ap.add_argument("--corpora", nargs="*", default=["holmes", "ml:all", "code"])
    ap.add_argument("--rounds", type=int, default=15, help="timed calls of each way")
    ap.add_argument("--doc-chars", type=int, default=16000, help="batch documents' size")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    if not DATA.is_dir() and any(c != "code" for c in args.corpora):
        print(f"skipped: {DATA} is not present (use --corpora code)")
        return

    results = []
    head = f"{'encoding':12s} {'corpus':8s} {'way':21s} {'median':>7s} {'p25':>6s} {'p75':>6s}"
    print(head + "  x one text")
    print("-" * (len(head) + 12))
    for encoding in args.encodings:
        enc = tokenmill.load(encoding)
        for corpus in args.corpora:
            text = load_corpus(corpus, None, 1 << 20, CODE_BYTES)
            docs = split_docs(text, args.doc_chars)
            mb = len(text.encode("utf-8")) / 1e6
            speeds = measure(ways(enc, text, docs), mb, args.rounds)
            base = statistics.median(speeds["one text"])
            for way in WAYS:
                got = sorted(speeds[way])
                median = statistics.median(got)
                p25, p75 = got[len(got) // 4], got[3 * len(got) // 4]
                print(
                    f"{encoding:12s} {corpus:8s} {way:21s} {median:7.0f} {p25:6.0f} {p75:6.0f}"
                    f"  {median / base:5.2f}x"
                )
                results.append(
                    {"encoding": encoding, "corpus": corpus, "mb": mb, "way": way}
                    | {"median": median, "p25": p25, "p75": p75, "speeds": got}
                )
    print(f"\nMB/s of UTF-8 input; {args.rounds} calls of each way, in turns; documents of")
    print(f"~{args.doc_chars} chars at line ends.")
    if args.json:
        meta = {"machine": platform.platform(), "python": platform.python_version()}
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
