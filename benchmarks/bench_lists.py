"""Python lists of ids across calls: what memory and the CPU's caches cost each peer.

``bench_encode.py`` times each peer's best call of a few back to back. A list of a million ids
is 8 MB of new items each call, and whether that memory is new to the process (a page fault
per 4 KiB) or what the last list gave back depends on glibc's thresholds, which the process's
own past sets; and a list's items reference int objects that other work between calls may have
pushed out of the CPU's caches. So each peer and corpus runs here in a process of its own,
warmed with two calls, and is timed two ways (medians):

- ``again``: one call after another, nothing in between; with the page faults of each call;
- ``after other work``: each call after writing a byte in every cache line of 64 MB elsewhere,
  which evicts the caches.

    python benchmarks/bench_lists.py [--encodings o200k_base ...] [--corpora holmes ml:en code]
        [--peers tokenmill tiktoken fastokens gigatoken] [--calls 15] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import encode_peers as ep
from bench_encode import load_corpus

CODE_BYTES = 4_000_000  # as bench_encode's code corpus
EVICT_BYTES = 64 << 20
WAYS = ("again", "after other work")


def faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def worker(spec: dict) -> None:
    """Time one peer on one corpus in this (fresh) process; print the result as JSON."""
    text = load_corpus(spec["corpus"], None, 1 << 20, CODE_BYTES)
    mb = len(text.encode()) / 1e6
    peer = ep.build(spec["peer"], spec["encoding"])
    for _ in range(2):
        peer.encode(text)
    times, fault_counts = [], []
    for _ in range(spec["calls"]):
        f0, t0 = faults(), time.perf_counter()
        peer.encode(text)
        times.append(time.perf_counter() - t0)
        fault_counts.append(faults() - f0)
    other = bytearray(EVICT_BYTES)
    evicted = []
    for call in range(spec["calls"]):
        other[::64] = bytes([call & 255]) * (EVICT_BYTES // 64)  # a byte in every cache line
        t0 = time.perf_counter()
        peer.encode(text)
        evicted.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "again": mb / statistics.median(times),
                "faults": statistics.median(fault_counts),
                "after other work": mb / statistics.median(evicted),
            }
        )
    )


def run(peer: str, encoding: str, corpus: str, calls: int) -> dict | str:
    spec = {"peer": peer, "encoding": encoding, "corpus": corpus, "calls": calls}
    env = {**os.environ, **{var: "1" for var in ep.THREADS_VAR.values()}}
    cmd = [sys.executable, __file__, "--worker", json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["no output"]
        return lines[-1][:80]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--encodings", nargs="*", default=["o200k_base"])
    ap.add_argument("--corpora", nargs="*", default=["holmes", "ml:en", "code"])
    ap.add_argument(
        "--peers", nargs="*", default=["tokenmill", "tiktoken", "fastokens", "gigatoken"]
    )
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    results: dict = {"machine": platform.platform(), "python": sys.version.split()[0], "cells": []}
    for encoding in args.encodings:
        print(f"\n== {encoding}: lists, MB/s (page faults a call), each peer in its own process")
        print(f"{'corpus':<8} {'way':<17}" + "".join(f"{p:>18}" for p in args.peers) + "  tm/best")
        for corpus in args.corpora:
            got = {p: run(p, encoding, corpus, args.calls) for p in args.peers}
            for way in WAYS:
                cells, speeds = [], {}
                for p in args.peers:
                    g = got[p]
                    if isinstance(g, str):
                        cells.append(f"{'-':>18}")
                        continue
                    speeds[p] = g[way]
                    extra = f" ({g['faults']:.0f})" if way == "again" else ""
                    cells.append(f"{g[way]:>{18 - len(extra)}.1f}{extra}")
                others = [v for p, v in speeds.items() if p != "tokenmill"]
                ratio = speeds["tokenmill"] / max(others) if others and "tokenmill" in speeds else 0
                print(
                    f"{corpus:<8} {way:<17}" + "".join(cells) + (f"  {ratio:.2f}" if ratio else "")
                )
            for p in args.peers:
                results["cells"].append(
                    {"encoding": encoding, "corpus": corpus, "peer": p, "result": got[p]}
                )
            missing = {p: g for p, g in got.items() if isinstance(g, str)}
            for p, why in missing.items():
                print(f"   {p}: {why}")
    if args.json:
        tmp = Path(args.json).with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=1))
        tmp.replace(args.json)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
