"""Encode speed: tokenmill against tiktoken and the other peers, for gpt2, cl100k_base, o200k_base.

Prints, for each encoding, a table of MB/s (UTF-8 bytes of input per second) with the ratio to
tiktoken in the same mode. Rows are corpus x mode:

- ``list``: one document, ids as a Python list (tiktoken's ``encode_ordinary``), one thread;
- ``numpy``: one document, ids as a numpy array, one thread;
- ``batch list`` / ``batch numpy``: the corpus cut into documents of about ``--doc-chars``
  characters at line ends, encoded as one batch on 2 threads (ratio to tiktoken's batch list
  where tiktoken has no such form);
- ``threads numpy``: one document on 2 threads (tokenmill's ``num_threads=2``, which cuts it
  where no chunk can cross; fastokens splits a long input across its pool by itself), ratio to
  tiktoken's one-thread numpy;
- ``cold list`` / ``cold numpy``: the first pass of a freshly built instance in a fresh process,
  so no cache (per-instance or process-wide) has seen the text; the best of ``--rounds`` such
  processes. For the pathological inputs these are the rows that matter: a peer that keeps
  whole chunks in a cache encodes the *same* 1 MB chunk again from its cache, so its warm rows
  measure a lookup, not the encoder. Those ("again") are the best of the calls after the first
  list (a first pass) in one process: the other two lists, then three numpy arrays.

Corpora: English prose (``holmes``), several languages of the parallel multilingual files
(``ml:en``, ``ml:zh``, ...), all of them concatenated (``ml:all``), Python code from the
installed standard library (``code``), and the pathological inputs of issue 2 (``patho:a`` = a
run of "a", ``patho:letters`` = random lowercase letters without spaces, ``patho:spaces`` = a
run of spaces; 1 MB each). Pathological inputs run in a subprocess per peer with a time limit
(``--patho-timeout``), since tiktoken overflows its regex stack on a million spaces with
o200k_base and slower peers may be quadratic; their reference ids are the ``regex`` module's
split followed by tiktoken's BPE on each piece (as in the test suite).

Before anything is timed, every peer's ids are compared with tiktoken's on the same input and
form; a mismatch shows as ``ids differ`` in the table instead of a speed. A dagger (``†``)
marks a one-thread row where the peer used more than one core (CPU time / wall time > 1.3): some
peers split a single long input across their thread pool. A peer whose thread count is one
environment variable for its whole process (fastokens: ``FASTOKENS_BPE_THREADS``) runs with it
at 1 here, and at 2 in the subprocesses of the 2-thread rows.

The machine may be shared, and a peer's speed depends on what else ran in its process, so
every warm row is timed in fresh processes, one per peer and corpus (and one more for the
2-thread rows), rounds back to back after one pass that fills the caches; the peers' processes
take turns, three times over, each timing at least two rounds, and each row keeps its best
round (each process stops repeating a row once it has spent ``--budget`` seconds on it). Rounds
of all the peers interleaved in one process, as the one-thread rows were timed until December
2026, share the CPU's caches between the peers' tables and flattered tokenmill: on Holmes with
o200k_base, numpy, tokenmill 526 and gigatoken 476 MB/s interleaved, where in processes of their
own gigatoken was ~15% ahead (two peers alone in one process: tokenmill 509, gigatoken 601).
The 2-thread rows were moved to processes of their own first: interleaved, fastokens looked
ahead of tokenmill on 2 threads on Holmes and code, where it is behind.

    python benchmarks/bench_encode.py [--quick] [--encodings ...] [--corpora ...]
                                      [--peers ...] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from tokenmill import reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
import encode_peers as ep

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
LANGS = ("en", "de", "ru", "zh", "ja", "ar", "hi")
PATHO = ("patho:a", "patho:letters", "patho:spaces")
DEFAULT_CORPORA = ["holmes", *(f"ml:{x}" for x in LANGS), "ml:all", "code", *PATHO]
QUICK_CORPORA = ["holmes", "ml:en", "ml:zh", "code", *PATHO]
DEFAULT_COLD = ["holmes", "ml:all", "code"]
WARM_MODES = ("list", "numpy", "threads numpy", "batch list", "batch numpy")
BIG_ONLY = ("threads numpy", "batch list", "batch numpy")  # modes for corpora of 1 MB+
MODE_FN = {"list": "encode", "numpy": "encode_numpy", "batch list": "batch"}
MODE_FN["batch numpy"] = "batch_numpy"
MODE_FN["threads numpy"] = "threads_numpy"
MODE_FN["cold list"] = "encode"
MODE_FN["cold numpy"] = "encode_numpy"
# The mode of tiktoken's a ratio is taken against (tiktoken has no flat batch form).
RATIO_BASE = {"batch numpy": "batch list", "threads numpy": "numpy"}
PARALLEL_MARK = 1.3  # CPU/wall above this on a one-thread row earns a dagger
PARALLEL_PASSES = 3  # processes per peer and corpus for the 2-thread rows, taken in turns
# Timed rounds in each warm process at least, after the one that fills the caches. With one,
# a 2-thread row timed the second call, in which a peer with a cache per thread (tokenmill,
# fastokens) still met chunks its threads had not seen: tokenmill's batch of lists on the 24
# languages (o200k_base), call after call in one process, took 142, 86, 48, 41, 37 ms.
WARM_ROUNDS_EACH = 2


# --- inputs ---------------------------------------------------------------------------------


def code_corpus(cap: int) -> str:
    """Python sources of the installed standard library, a seeded sample up to ``cap`` bytes."""
    cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    ver = platform.python_version()
    cached = cache_home / "tokenmill-bench" / f"stdlib-py{ver}-{cap}.txt"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)
    random.Random(0).shuffle(files)
    parts, size = [], 0
    for path in files:
        try:
            src = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(src)
        size += len(src.encode("utf-8"))
        if size >= cap:
            break
    text = "\n".join(parts)
    text = text.encode("utf-8")[:cap].decode("utf-8", errors="ignore")
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(cached)
    return text


def load_corpus(name: str, cap: int | None, patho_bytes: int, code_cap: int) -> str:
    if name.startswith("patho:"):
        kind = name.split(":", 1)[1]
        if kind == "a":
            return "a" * patho_bytes
        if kind == "spaces":
            return " " * patho_bytes
        if kind == "letters":
            rng = random.Random(7)
            return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=patho_bytes))
        raise SystemExit(f"no pathological input {name!r} (patho:a, patho:letters, patho:spaces)")
    if name == "code":
        text = code_corpus(code_cap)
    elif name == "holmes":
        text = (DATA / "holmes.txt").read_text(encoding="utf-8")
    elif name == "ml:all":
        files = sorted((DATA / "multilingual").glob("*.txt"))
        text = "\n".join(p.read_text(encoding="utf-8") for p in files)
    elif name.startswith("ml:"):
        text = (DATA / "multilingual" / f"{name[3:]}.txt").read_text(encoding="utf-8")
    elif Path(name).is_file():
        text = Path(name).read_text(encoding="utf-8")
    else:
        raise SystemExit(f"no corpus {name!r}: holmes, ml:LANG, ml:all, code, patho:*, or a file")
    if cap is not None and len(text) > cap:
        text = text[:cap]
    return text


def split_docs(text: str, target: int) -> list[str]:
    """``text`` cut at line ends into documents of about ``target`` characters."""
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + target)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs


def first_difference(got: object, want: np.ndarray) -> str:
    """Where ``got`` first differs from ``want``, or "" when they are equal."""
    g = np.asarray(got, np.int64)
    if np.array_equal(g, want):
        return ""
    n = min(len(g), len(want))
    diff = np.nonzero(g[:n] != want[:n])[0]
    at = int(diff[0]) if len(diff) else n
    return f"first at id {at}, {len(g)} ids for tiktoken's {len(want)}"


def digest(ids: object) -> str:
    return hashlib.sha1(np.asarray(ids, dtype=np.uint32).tobytes()).hexdigest()


def output_digest(mode: str, got: object) -> str:
    """Digest of one mode's output: the ids, and for a batch each document's length too."""
    if mode == "batch numpy":
        ids, offsets = got  # type: ignore[misc]
        return f"{digest(ids)}/{digest(np.diff(offsets))}"
    if mode == "batch list":
        docs = [np.asarray(d, np.uint32) for d in got]  # type: ignore[attr-defined]
        flat = np.concatenate(docs) if docs else np.zeros(0, np.uint32)
        return f"{digest(flat)}/{digest([len(d) for d in docs])}"
    return digest(got)


# --- the subprocess worker ----------------------------------------------------------------
# (every timed row: warm rows, cold first passes, pathological inputs)


def worker(spec: dict) -> None:
    """Build one peer, run the requested modes on one input, print timings as JSON (and with
    ``spec["load"]``, under ``"load"``, the seconds to build the peer and make its first call)."""
    text = Path(spec["input"]).read_text(encoding="utf-8")
    batches = any(m.startswith("batch") for m in spec["modes"])
    docs = split_docs(text, spec["doc_chars"]) if batches else []
    t0 = time.perf_counter()
    peer = ep.build(spec["peer"], spec["encoding"])
    # One tiny unrelated call first, so that one-time lazy setup (thread pools, tables built on
    # first use) is not charged to the first pass; the caches stay cold for ``text``.
    peer.encode("warm up")
    load = time.perf_counter() - t0
    out = {}
    for mode in spec["modes"]:
        fn = getattr(peer, MODE_FN[mode])
        if fn is None:
            continue
        arg = docs if mode.startswith("batch") else text
        best, first, best_cpu, spent, d = float("inf"), 0.0, 0.0, 0.0, ""
        for i in range(spec["rounds"]):
            c0, t0 = time.process_time(), time.perf_counter()
            ids = fn(arg)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            if i == 0:
                first, d = dt, output_digest(mode, ids)
            if dt < best:
                best, best_cpu = dt, cpu
            spent += dt
            if spent > spec["budget"]:
                break
        out[mode] = {"best": best, "first": first, "cpu": best_cpu, "digest": d}
    if spec.get("load"):
        out["load"] = {"best": load, "cpu": 0.0, "digest": ""}
    print(json.dumps(out))


@dataclass
class Cell:
    """One measurement: peer x corpus x mode."""

    status: str = "ok"  # ok | differ | error | timeout | crashed
    seconds: float = float("inf")
    cpu: float = 0.0
    detail: str = ""


def run_worker(
    peer: str,
    encoding: str,
    path: Path,
    modes: list[str],
    rounds: int,
    budget: float,
    timeout: float,
    *,
    doc_chars: int = 0,
    env: dict[str, str] | None = None,
    load: bool = False,
) -> dict[str, Cell]:
    """Time ``modes`` of ``peer`` on the text in ``path`` in a fresh process (with ``env`` added
    to this one's environment); the cells keep the output's digest as their detail. Batch modes
    cut the text into documents of ``doc_chars``. With ``load``, a ``"load"`` cell has the
    seconds the peer took to build and make a first call."""
    spec = {
        "peer": peer,
        "encoding": encoding,
        "input": str(path),
        "modes": modes,
        "rounds": rounds,
        "budget": budget,
        "doc_chars": doc_chars,
        "load": load,
    }
    cmd = [sys.executable, __file__, "--worker", json.dumps(spec)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
        )
    except subprocess.TimeoutExpired:
        return {m: Cell("timeout", detail=f">{timeout:g}s") for m in modes}
    if proc.returncode != 0:
        lines = (proc.stderr or "").strip().splitlines()
        why = lines[-1][:160] if lines else f"exit {proc.returncode}"
        if proc.returncode < 0:
            why = f"killed by signal {-proc.returncode}; {why}"
        return {m: Cell("crashed", detail=why) for m in modes}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return {m: Cell("ok", r["best"], r["cpu"], detail=r["digest"]) for m, r in res.items()}


def faster(best: Cell | None, got: Cell) -> Cell:
    """The cell to keep of two first passes (each in a fresh process): a failure, else the
    faster. Cold cells keep their fastest round, as warm cells do (one sample swung by 20-30%
    on this VM)."""
    if best is None or got.status != "ok" or got.seconds < best.seconds:
        return got
    return best


def patho_reference(encoding: str, text: str) -> str:
    """Digest of tiktoken's ids by the test suite's oracle: the reference split (`regex`, with
    tiktoken's Unicode data), per-piece BPE."""
    enc = ep.tiktoken_encoding(encoding)
    pieces = reference.split(text, enc._pat_str)
    return digest([t for piece in pieces for t in enc._encode_single_piece(piece.encode())])


# --- the benchmark --------------------------------------------------------------------------


def time_passes(
    pooled: dict[tuple[str, str, int], dict[str, str]],
    corpus: str,
    path: Path,
    source: str,
    passes: int,
    rounds_each: int,
    timeout: float,
    args: argparse.Namespace,
    cells: dict[tuple[str, str, str], Cell],
) -> None:
    """Time every (peer, threads) of ``pooled`` on ``corpus`` (its text in ``path``) in fresh
    processes, the peers taking turns ``passes`` times over, each for ``source`` (an encoding's
    name, or a file's description as JSON); keep each cell's best time in ``cells``, and a
    failure in any pass. ``pooled`` holds the digests each mode's ids must have."""
    for _ in range(passes):
        for (name, c, threads), want_d in pooled.items():
            if c != corpus:
                continue
            var = ep.THREADS_VAR.get(name)
            env = {var: str(threads)} if var else None
            # One more round than timed: the first fills the caches.
            res = run_worker(
                name,
                source,
                path,
                list(want_d),
                rounds_each + 1,
                args.budget * len(want_d),
                timeout,
                doc_chars=args.doc_chars,
                env=env,
            )
            for mode, cell in res.items():
                if cell.status == "ok" and cell.detail != want_d[mode]:
                    cell.status = "differ"
                kept = cells.get((name, corpus, mode))
                if kept is None or (kept.status == "ok" and cell.seconds < kept.seconds):
                    cells[name, corpus, mode] = cell
                elif cell.status != "ok":  # a failure in any pass stays
                    cells[name, corpus, mode] = cell


def cell_fields(c: Cell, mb: float) -> dict:
    """A cell's outcome as a results row holds it (``mb``: the input's size in MB)."""
    ok = c.status == "ok"
    return {
        "status": c.status,
        "mb_per_s": round(mb / c.seconds, 2) if ok else None,
        "seconds": round(c.seconds, 5) if ok else None,
        "cpu_seconds": round(c.cpu, 5) if ok else None,
        "detail": "" if ok else c.detail,
    }


def differing(cells: dict[tuple[str, str, str], Cell], what: str) -> list[str]:
    """A note per peer whose ids differ from the reference's in some rows, naming them."""
    differ: dict[str, list[str]] = {}
    for (n, corpus, mode), c in cells.items():
        if c.status == "differ":
            where = f" [{c.detail}]" if c.detail and not c.detail.isalnum() else ""
            differ.setdefault(n, []).append(f"{corpus} {mode}{where}")
    return [f"{n}: {what} on: " + "; ".join(where) for n, where in differ.items()]


def fmt_cell(cell: Cell | None, mb: float, base: float | None, single: bool) -> str:
    if cell is None:
        return "-"
    if cell.status == "differ":
        return "ids differ"
    if cell.status in ("error", "crashed"):
        return cell.status
    if cell.status == "timeout":
        return f"timeout{cell.detail}"
    mbs = mb / cell.seconds
    mark = "†" if single and cell.cpu / cell.seconds > PARALLEL_MARK else ""
    if base is None:
        return f"{mbs:.1f}{mark}"
    return f"{mbs:.1f}{mark} {mbs / base:.1f}x"


def check(peer: ep.Peer, mode: str, text: str, want: object) -> Cell:
    """Run a one-thread mode once and compare with tiktoken's ids: an ``ok`` cell (to be timed
    in a process of its own), or why not."""
    try:
        got = getattr(peer, MODE_FN[mode])(text)
    except Exception as e:
        return Cell("error", detail=f"{type(e).__name__}: {str(e)[:120]}")
    if where := first_difference(got, want):  # type: ignore[arg-type]
        return Cell("differ", detail=where)
    return Cell("ok")


def bench_encoding(
    encoding: str, args: argparse.Namespace, texts: dict[str, str], log: Callable[[str], None]
) -> tuple[list[dict], list[str]]:
    notes: list[str] = []
    peers: dict[str, ep.Peer] = {}
    for name in args.peers:
        try:
            peers[name] = ep.build(name, encoding)
        except ep.Unavailable as e:
            notes.append(f"{name}: skipped: {e}")
    ref = peers["tiktoken"]
    names = list(peers)
    plain = [c for c in texts if not c.startswith("patho:")]
    patho = [c for c in texts if c.startswith("patho:")]
    cells: dict[tuple[str, str, str], Cell] = {}
    # The warm rows, timed afterwards in fresh processes, every peer alike: (peer, corpus,
    # threads) -> {mode: digest of tiktoken's output}; the one-thread rows (threads 1) and
    # the 2-thread rows (BIG_ONLY, threads THREADS) in processes of their own.
    pooled: dict[tuple[str, str, int], dict[str, str]] = {}
    # Each peer's fastest build + first call, in the fresh processes of the cold passes.
    loads: dict[str, float] = {}

    # Verify every peer on every corpus and form before timing anything.
    for corpus in plain:
        text = texts[corpus]
        docs = split_docs(text, args.doc_chars)
        big = len(text.encode("utf-8")) >= args.batch_min_bytes
        want = np.asarray(ref.encode(text), np.int64)
        want_b = [np.asarray(x, np.int64) for x in ref.batch(docs)] if big else []
        for name in names:
            for mode in [m for m in WARM_MODES if big or m not in BIG_ONLY]:
                if getattr(peers[name], MODE_FN[mode]) is None:
                    continue
                w = want_b if mode.startswith("batch") else want
                if mode not in BIG_ONLY:
                    # Checked here too, which names the first difference; timed below.
                    cell = check(peers[name], mode, text, w)
                    if cell.status != "ok":
                        cells[name, corpus, mode] = cell
                        continue
                # tiktoken's batch is a list: its digest equals a right flat form's.
                form = "batch list" if mode.startswith("batch") else mode
                threads = ep.THREADS if mode in BIG_ONLY else 1
                pooled.setdefault((name, corpus, threads), {})[mode] = output_digest(form, w)
        log(f"  {encoding}: verified {corpus}")
    del peers

    # Warm rows, cold first passes and pathological inputs: fresh processes.
    with tempfile.TemporaryDirectory(prefix="tokenmill-bench-in-") as tmp:
        # Each peer's process for a corpus in turn, PARALLEL_PASSES times over: a slow moment
        # of the machine then falls on every peer's rows, not on one peer's.
        passes = max(1, min(PARALLEL_PASSES, args.rounds))
        rounds_each = max(WARM_ROUNDS_EACH, -(-args.rounds // passes))
        for corpus in dict.fromkeys(c for _, c, _ in pooled):
            path = Path(tmp) / "input.txt"
            path.write_text(texts[corpus], encoding="utf-8")
            time_passes(
                pooled,
                corpus,
                path,
                encoding,
                passes,
                rounds_each,
                args.patho_timeout * 6,
                args,
                cells,
            )
            log(f"  {encoding}: timed {corpus}")
        for (name, corpus, mode), cell in cells.items():
            if mode in WARM_MODES and cell.status not in ("ok", "differ"):
                notes.append(f"{name}: {corpus} {mode}: {cell.status} {cell.detail}")
        for corpus in [c for c in args.cold if c in plain]:
            path = Path(tmp) / "input.txt"
            path.write_text(texts[corpus], encoding="utf-8")
            want_d = digest(ep.tiktoken_encoding(encoding).encode_ordinary(texts[corpus]))
            # A fresh process per peer and round, the peers interleaved.
            for _ in range(args.rounds):
                for name in names:
                    best = cells.get((name, corpus, "cold list"))
                    if best is not None and best.status != "ok":
                        continue
                    got = run_worker(
                        name, encoding, path, ["list"], 1, 0.0, args.patho_timeout * 3, load=True
                    )
                    cell = got["list"]
                    if "load" in got:
                        loads[name] = min(loads.get(name, float("inf")), got["load"].seconds)
                    if cell.status == "ok" and cell.detail != want_d:
                        cell.status = "differ"
                    cells[name, corpus, "cold list"] = faster(best, cell)
            log(f"  {encoding}: cold {corpus}")
        for corpus in patho:
            path = Path(tmp) / "input.txt"
            path.write_text(texts[corpus], encoding="utf-8")
            want_d = patho_reference(encoding, texts[corpus])
            for name in names:
                res = run_worker(
                    name,
                    encoding,
                    path,
                    ["list", "numpy"],
                    # The first list is a first pass; the rest encode the text "again".
                    WARM_ROUNDS_EACH + 1,
                    args.budget,
                    args.patho_timeout,
                )
                for mode in ("cold list", "cold numpy"):
                    # One process per mode, so the second pass does not find the first's cache.
                    for _ in range(args.rounds):
                        got = run_worker(name, encoding, path, [mode], 1, 0.0, args.patho_timeout)
                        if mode not in got:  # the peer has no such form
                            break
                        res[mode] = faster(res.get(mode), got[mode])
                        if res[mode].status != "ok":
                            break
                for mode, cell in res.items():
                    if cell.status == "ok" and cell.detail != want_d:
                        cell.status = "differ"
                    if cell.status not in ("ok", "differ"):
                        notes.append(f"{name}: {corpus} {mode}: {cell.status} {cell.detail}")
                    cells[name, corpus, mode] = cell
            log(f"  {encoding}: {corpus}")

    # The table.
    modes = [*WARM_MODES, "cold list", "cold numpy"]
    width = max(14, *(len(n) for n in names)) + 2
    print(f"\n== {encoding}: MB/s and x tiktoken (same mode); best of up to {args.rounds} rounds")
    header = f"{'corpus':<14}{'MB':>6}  {'mode':<12}" + "".join(f"{n:>{width}}" for n in names)
    header += f"{'tm/best':>9}"
    print(header)
    print("-" * len(header))
    rows = []
    for corpus in texts:
        mb = len(texts[corpus].encode("utf-8")) / 1e6
        for mode in modes:
            if not any((n, corpus, mode) in cells for n in names):
                continue
            base_cell = cells.get(("tiktoken", corpus, RATIO_BASE.get(mode, mode)))
            base = mb / base_cell.seconds if base_cell and base_cell.status == "ok" else None
            single = not mode.startswith(("batch", "threads"))
            line = "".join(
                f"{fmt_cell(cells.get((n, corpus, mode)), mb, base, single):>{width}}"
                for n in names
            )
            # tokenmill against the fastest other peer whose ids are right, in this row.
            others = [
                c.seconds
                for (n, k, m), c in cells.items()
                if (k, m) == (corpus, mode) and n != "tokenmill" and c.status == "ok"
            ]
            own = cells.get(("tokenmill", corpus, mode))
            vs = f"{min(others) / own.seconds:.2f}" if own and own.status == "ok" and others else ""
            print(f"{corpus:<14}{mb:>6.2f}  {mode:<12}{line}{vs:>9}")
            for n in names:
                c = cells.get((n, corpus, mode))
                if c is None:
                    continue
                ok = c.status == "ok"
                rows.append(
                    {
                        "encoding": encoding,
                        "corpus": corpus,
                        "bytes": round(mb * 1e6),
                        "mode": mode,
                        "peer": n,
                        **cell_fields(c, mb),
                        "x_tiktoken": round(mb / c.seconds / base, 2) if ok and base else None,
                    }
                )
    if loads:
        # A cold row leaves out building the peer: what it costs before the first id.
        print("load + first call, seconds (best fresh process): " + "  ".join(
            f"{n} {loads[n]:.2f}" for n in names if n in loads
        ))  # fmt: skip
        rows += [
            {"encoding": encoding, "mode": "load", "peer": n, "seconds": round(loads[n], 4)}
            for n in names
            if n in loads
        ]
    notes += differing(cells, "ids differ from tiktoken")
    return rows, notes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encodings", nargs="+", choices=ep.ENCODINGS, default=list(ep.ENCODINGS))
    ap.add_argument("--corpora", nargs="+", help=f"default: {' '.join(DEFAULT_CORPORA)}")
    ap.add_argument("--cold", nargs="*", help=f"corpora for cold passes ({' '.join(DEFAULT_COLD)})")
    ap.add_argument("--peers", nargs="+", choices=ep.PEER_NAMES, default=list(ep.PEER_NAMES))
    ap.add_argument("--rounds", type=int, help="timed runs per cell, best kept (3; --quick 2)")
    ap.add_argument("--budget", type=float, default=1.5, help="max seconds per cell")
    ap.add_argument(
        "--batch-min-bytes", type=int, help="batch modes only for corpora this big (1 MB; quick 0)"
    )
    ap.add_argument("--doc-chars", type=int, default=16_000, help="document size for batches")
    ap.add_argument("--patho-bytes", type=int, help="size of pathological inputs (1 MB)")
    ap.add_argument("--patho-timeout", type=float, default=10.0, help="seconds per subprocess")
    ap.add_argument("--code-bytes", type=int, default=4_000_000, help="size of the code corpus")
    ap.add_argument("--quick", action="store_true", help="small inputs: a smoke run of a minute")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    ep.set_pool_sizes()
    for var in ep.THREADS_VAR.values():  # THREADS in the workers that time parallel rows
        os.environ.setdefault(var, "1")
    if args.worker:
        worker(json.loads(args.worker))
        return
    if not DATA.is_dir():
        print(f"skipped: {DATA} is not present")
        return
    # tiktoken is always measured: it is the reference for ids and ratios.
    args.peers = [p for p in ep.PEER_NAMES if p in {*args.peers, "tiktoken"}]
    args.rounds = args.rounds or (2 if args.quick else 3)
    cap = 200_000 if args.quick else None
    if args.batch_min_bytes is None:
        args.batch_min_bytes = 0 if args.quick else 1_000_000
    patho_bytes = args.patho_bytes or (100_000 if args.quick else 1_000_000)
    corpora = args.corpora or (QUICK_CORPORA if args.quick else DEFAULT_CORPORA)
    if args.cold is None:
        args.cold = ["holmes"] if args.quick else DEFAULT_COLD
    texts = {c: load_corpus(c, cap, patho_bytes, args.code_bytes) for c in corpora}

    t_start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"{time.perf_counter() - t_start:6.0f}s {msg}", file=sys.stderr, flush=True)

    results, notes = [], []
    for encoding in args.encodings:
        rows, enc_notes = bench_encoding(encoding, args, texts, log)
        results += rows
        notes += [f"{encoding} {n}" for n in enc_notes]
    print()
    print("- : the peer has no such form.  † : used more than one core on a one-thread row.")
    print("tm/best: tokenmill's speed / the fastest other peer with right ids in that row.")
    print(f"batch: documents of ~{args.doc_chars} chars at line ends, {ep.THREADS} threads.")
    print(f"threads numpy: one document on {ep.THREADS} threads.")
    for note in dict.fromkeys(notes):
        print(note)
    print(f"total {time.perf_counter() - t_start:.0f}s")
    if args.json:
        versions = {}
        for dist in (
            "tokenmill",
            "tiktoken",
            "tokenizers",
            "gigatoken",
            "fastokens",
            "tokie",
            "riptoken",
            "bpe-openai",
            "kitoken",
            "numpy",
        ):
            try:
                versions[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
        meta = {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "versions": versions,
            "rounds": args.rounds,
            "doc_chars": args.doc_chars,
            "threads": ep.THREADS,
        }
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
