"""Encode speed on text the encoder has not seen as a whole: a warm encoder, new documents.

``bench_encode.py``'s warm rows encode the same ``str`` again and again. Two things then come
for free that a user encoding a stream of new documents never gets: CPython's UTF-8 copy, which
it attaches to a non-ASCII ``str`` the first time it is asked for it (every later call reads
it), and any cache a peer keeps of whole texts or of large pieces of them (fastokens, with
cl100k_base on Japanese: 505 MB/s on the same ``str``, 383 on an equal new one, 216 once one
space is put in front of it). Here every timed call gets text that no call has had before,
while every chunk in it has been seen (the chunk caches are warm, as in a long job):

- ``new list`` / ``new numpy``: one document, one thread: the corpus with its lines rotated,
  by a different line for each call (built before the timing starts);
- ``docs list`` / ``docs numpy``: the same rotated text cut at line ends into documents of about
  ``--doc-chars`` characters (200 by default: chat turns, short records), one batch call on 2
  threads.

Before the timing, each process encodes the corpus itself and one rotation, in the form timed.
Each peer and corpus runs in fresh processes (one for the one-thread rows, one for the batch
rows, where a peer whose thread count is one variable for its process gets 2), rounds back to
back, best kept. Every peer's ids for the first timed text are checked against tiktoken's
(``ids differ`` instead of a speed).

    python benchmarks/bench_fresh.py [--encodings ...] [--corpora ...] [--peers ...]
                                     [--rounds 3] [--doc-chars 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import encode_peers as ep
from bench_encode import DATA, load_corpus, output_digest, split_docs

LANGS = ("en", "de", "ru", "zh", "ja", "ar", "hi")
DEFAULT_CORPORA = ["holmes", *(f"ml:{x}" for x in LANGS), "code"]
ONE_THREAD = ("new list", "new numpy")
BATCH = ("docs list", "docs numpy")
MODES = (*ONE_THREAD, *BATCH)
# The peer's call each mode times, and the bench_encode output form its digest is taken as.
CALL = {"new list": "encode", "new numpy": "encode_numpy", "docs list": "batch"}
CALL["docs numpy"] = "batch_numpy"
FORM = {"new list": "list", "new numpy": "numpy", "docs list": "batch list"}
FORM["docs numpy"] = "batch numpy"
# Whose ids a mode's digest must equal: tiktoken's list, or tiktoken's batch of lists.
REFERENCE = {"new list": "new list", "new numpy": "new list", "docs list": "docs list"}
REFERENCE["docs numpy"] = "docs list"


def rotations(text: str, count: int) -> list[str]:
    """``count`` new texts: ``text`` with its lines rotated, each by a different line."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"  # so that rotating never joins two lines
    step = max(1, len(lines) // (count + 1))
    return ["".join(lines[k * step :] + lines[: k * step]) for k in range(1, count + 1)]


def worker(spec: dict) -> None:
    """Time ``spec["modes"]`` of one peer on one corpus; print JSON: per mode, the best seconds
    and the digest of the first timed call's output."""
    text = load_corpus(spec["corpus"], None, 0, spec["code_bytes"])
    rounds = spec["rounds"]
    # Index 0 is a warm-up; 1.. are timed, each once.
    texts = rotations(text, rounds + 1)
    peer = ep.build(spec["peer"], spec["encoding"])
    out = {}
    for mode in spec["modes"]:
        fn = getattr(peer, CALL[mode])
        if fn is None:
            continue
        batch = mode in BATCH
        args = [split_docs(t, spec["doc_chars"]) if batch else t for t in texts]
        fn(split_docs(text, spec["doc_chars"]) if batch else text)
        fn(args[0])
        best, d = float("inf"), ""
        for i, arg in enumerate(args[1:]):
            t0 = time.perf_counter()
            ids = fn(arg)
            best = min(best, time.perf_counter() - t0)
            if i == 0:
                d = output_digest(FORM[mode], ids)
        out[mode] = {"best": best, "digest": d}
    print(json.dumps(out))


def run_worker(spec: dict, env: dict[str, str], timeout: float) -> dict[str, tuple[str, float]]:
    """``worker`` in a fresh process: per mode, ``(status or digest, seconds)``."""
    cmd = [sys.executable, __file__, "--worker", json.dumps(spec)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **env}
        )
    except subprocess.TimeoutExpired:
        return {m: ("timeout", 0.0) for m in spec["modes"]}
    if proc.returncode != 0:
        lines = (proc.stderr or "").strip().splitlines()
        return {m: ("crashed: " + (lines[-1][:120] if lines else ""), 0.0) for m in spec["modes"]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return {m: (r["digest"], r["best"]) for m, r in res.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encodings", nargs="+", choices=ep.ENCODINGS, default=list(ep.ENCODINGS))
    ap.add_argument("--corpora", nargs="+", default=DEFAULT_CORPORA)
    ap.add_argument("--peers", nargs="+", choices=ep.PEER_NAMES, default=list(ep.PEER_NAMES))
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("--rounds", type=int, default=3, help="timed calls per process, best kept")
    ap.add_argument("--processes", type=int, default=2, help="fresh processes per cell")
    ap.add_argument("--doc-chars", type=int, default=200, help="document size for docs rows")
    ap.add_argument("--code-bytes", type=int, default=4_000_000, help="size of the code corpus")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per process")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    ep.set_pool_sizes()
    if args.worker:
        worker(json.loads(args.worker))
        return
    if not DATA.is_dir():
        print(f"skipped: {DATA} is not present")
        return
    peers = [p for p in ep.PEER_NAMES if p in {*args.peers, "tiktoken"}]
    available = {}
    for name in peers:
        try:
            ep.build(name, args.encodings[0])
            available[name] = ""
        except ep.Unavailable as e:
            print(f"{name}: not measured ({e})")
    peers = [p for p in peers if p in available]
    modes = [m for m in MODES if m in args.modes]
    groups = [g for g in (ONE_THREAD, BATCH) if any(m in modes for m in g)]
    t_start = time.perf_counter()
    results = []
    for encoding in args.encodings:
        print(f"\n{encoding}: MB/s of UTF-8 input (x tiktoken), text new to every call")
        head = f"{'corpus':8s} {'mode':10s}" + "".join(f"{p:>17s}" for p in peers) + "  tm/best"
        print(head)
        for corpus in args.corpora:
            mb = len(load_corpus(corpus, None, 0, args.code_bytes).encode()) / 1e6
            cells: dict[tuple[str, str], tuple[str, float]] = {}
            for _ in range(args.processes):
                for group in groups:
                    for peer in peers:
                        threads = "1" if group is ONE_THREAD else str(ep.THREADS)
                        env = {var: threads for var in ep.THREADS_VAR.values()}
                        spec = {
                            "peer": peer,
                            "encoding": encoding,
                            "corpus": corpus,
                            "modes": [m for m in group if m in modes],
                            "rounds": args.rounds,
                            "doc_chars": args.doc_chars,
                            "code_bytes": args.code_bytes,
                        }
                        for mode, got in run_worker(spec, env, args.timeout).items():
                            had = cells.get((peer, mode))
                            if had is None or (got[1] and (not had[1] or got[1] < had[1])):
                                cells[(peer, mode)] = got
            for mode in modes:
                ref = cells.get(("tiktoken", REFERENCE[mode]), ("", 0.0))
                base = cells.get(("tiktoken", mode), ("", 0.0))[1]
                row, speeds = [], {}
                for peer in peers:
                    digest, secs = cells.get((peer, mode), ("-", 0.0))
                    if not secs:
                        row.append(f"{digest[:17]:>17s}")
                        continue
                    if ref[1] and digest != ref[0]:
                        row.append(f"{'ids differ':>17s}")
                        continue
                    speeds[peer] = mb / secs
                    ratio = f" ({secs and base / secs:4.1f}x)" if base else ""
                    row.append(f"{mb / secs:10.1f}{ratio:>7s}")
                others = [v for p, v in speeds.items() if p not in ("tokenmill",)]
                best = max(others, default=0.0)
                tm = speeds.get("tokenmill")
                vs = f"{tm / best:8.2f}" if tm and best else f"{'-':>8s}"
                print(f"{corpus:8s} {mode:10s}" + "".join(row) + vs, flush=True)
                results.append(
                    {
                        "encoding": encoding,
                        "corpus": corpus,
                        "mode": mode,
                        "mb": mb,
                        "mb_per_s": speeds,
                    }
                )
    print(f"\ndocs: documents of ~{args.doc_chars} characters, {ep.THREADS} threads.")
    print("tm/best: tokenmill's speed / the fastest other peer with right ids in that row.")
    print(f"total {time.perf_counter() - t_start:.0f}s")
    if args.json:
        meta = {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "rounds": args.rounds,
            "processes": args.processes,
            "doc_chars": args.doc_chars,
        }
        tmp = args.json.with_suffix(".tmp")
        tmp.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        tmp.replace(args.json)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
