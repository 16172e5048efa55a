"""Write the speed tables of README.md and docs/performance.md from benchmarks/results/*.json.

Each table sits between two marker comments, ``<!-- table:NAME -->`` and
``<!-- /table:NAME -->``; everything between them is replaced by the table NAME built from the
latest results file of its benchmark (``<benchmark>-<YYYY-MM-DD>.json``). Text outside the
markers is never touched.

    python scripts/readme_tables.py           # rewrite the tables in place
    python scripts/readme_tables.py --check   # exit 1 if a file differs from what it would write

tests/test_readme.py runs the check, so a new results file or a hand edit inside the markers
fails the tests until this script is run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
FILES = [ROOT / "README.md", ROOT / "docs" / "performance.md"]

MARKER = re.compile(r"<!-- table:([a-z0-9-]+) -->\n(.*?)<!-- /table:\1 -->", re.S)
RESULT_NAME = re.compile(r"^([a-z]+)-(\d{4}-\d{2}-\d{2})\.json$")

CORPORA = {
    "holmes": "Holmes (3.9 MB)",
    "ml:all": "24 languages (11.4 MB)",
    "code": "Python code (4 MB)",
    "ml:en": "English news (0.25 MB)",
    "ml:de": "German",
    "ml:ru": "Russian",
    "ml:zh": "Chinese",
    "ml:ja": "Japanese",
    "ml:ar": "Arabic",
    "ml:hi": "Hindi",
    "patho:a": "1 MB of `a`",
    "patho:letters": "1 MB of random letters",
    "patho:spaces": "1 MB of spaces",
}
SHORT = {"holmes": "Holmes", "ml:all": "24 languages", "code": "code"}
MODES = {
    "list": "list",
    "numpy": "numpy",
    "threads numpy": "one text on 2 threads, numpy",
    "batch list": "batch on 2 threads, lists",
    "batch numpy": "batch on 2 threads, numpy",
    "cold list": "first pass, list",
    "cold numpy": "first pass, numpy",
}
FRESH_MODES = {
    "new list": "list",
    "new numpy": "numpy",
    "docs list": "~200-char docs on 2 threads, lists",
    "docs numpy": "~200-char docs on 2 threads, numpy",
}
ONE_THREAD = {"list", "numpy", "cold list", "cold numpy"}
PEERS = {
    "tokenmill": "tokenmill",
    "tiktoken": "tiktoken",
    "tokenizers": "HF tokenizers",
    "gigatoken": "gigatoken",
    "fastokens": "fastokens",
    "tokie": "tokie",
    "hf": "HF tokenizers",
    "rustbpe": "rustbpe",
    "bpeasy": "bpeasy",
    "sentencepiece": "sentencepiece (BPE)",
}
STATUS = {"differ": "ids differ", "crashed": "crashes", "timeout": "timeout"}
# docs/performance.md's rows for each encoding.
MAIN_ROWS = [
    ("holmes", "list"),
    ("holmes", "numpy"),
    ("holmes", "threads numpy"),
    ("holmes", "batch numpy"),
    ("holmes", "cold list"),
    ("ml:all", "list"),
    ("ml:all", "numpy"),
    ("ml:all", "batch numpy"),
    ("ml:all", "cold list"),
    ("code", "list"),
    ("code", "numpy"),
    ("code", "threads numpy"),
    ("code", "batch numpy"),
    ("code", "cold list"),
]
# README's table: the rows a user asks about first.
README_ROWS = [
    ("holmes", "list"),
    ("holmes", "numpy"),
    ("holmes", "threads numpy"),
    ("holmes", "batch numpy"),
    ("holmes", "cold list"),
    ("ml:all", "list"),
    ("ml:all", "cold list"),
    ("code", "list"),
    ("code", "cold list"),
]
MAIN_PEERS = ["tokenmill", "tiktoken", "tokenizers", "gigatoken", "fastokens"]
LANGUAGES = ["ml:en", "ml:de", "ml:ru", "ml:ar", "ml:hi", "ml:zh", "ml:ja"]


def latest(bench: str) -> tuple[Path, Any]:
    """The newest ``<bench>-<date>.json`` in benchmarks/results, and its parsed content."""
    found = sorted(
        (m.group(2), p)
        for p in RESULTS.glob(f"{bench}-*.json")
        if (m := RESULT_NAME.match(p.name)) and m.group(1) == bench
    )
    if not found:
        raise SystemExit(
            f"no benchmarks/results/{bench}-<date>.json: run benchmarks/bench_{bench}.py"
        )
    path = found[-1][1]
    return path, json.loads(path.read_text(encoding="utf-8"))


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def mbs(value: float) -> str:
    """MB/s with three significant figures or a whole number."""
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def markdown(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def row_label(corpus: str, mode: str, first: bool, modes: dict[str, str] = MODES) -> str:
    name = CORPORA[corpus] if first else SHORT.get(corpus, CORPORA[corpus])
    if corpus.startswith("patho:") and mode in ("list", "numpy"):
        # Warm rows of a pathological input encode the same 1 MB chunk again.
        return f"{name}, again, {mode}"
    return f"{name}, {modes[mode]}"


# --- bench_encode.py --------------------------------------------------------------------------


def encode_cells(run: dict) -> dict[tuple[str, str, str], dict[str, dict]]:
    """(encoding, corpus, mode) -> peer -> result."""
    cells: dict[tuple[str, str, str], dict[str, dict]] = {}
    for r in run["results"]:
        if r["mode"] != "load":
            cells.setdefault((r["encoding"], r["corpus"], r["mode"]), {})[r["peer"]] = r
    return cells


def best_other(row: dict[str, dict]) -> float | None:
    """The fastest peer other than tokenmill whose ids were right in this row."""
    speeds = [r["mb_per_s"] for p, r in row.items() if p != "tokenmill" and r["status"] == "ok"]
    return max(speeds) if speeds else None


def encode_cell(r: dict | None, mode: str) -> str:
    if r is None:
        return "–"
    if r["status"] != "ok":
        return STATUS.get(r["status"], r["status"])
    cell = mbs(r["mb_per_s"])
    # A one-thread row of a peer that spread the text over both cores by itself.
    if mode in ONE_THREAD and r["cpu_seconds"] and r["cpu_seconds"] > 1.3 * r["seconds"]:
        cell += "†"
    return cell


def encode_table(
    encoding: str, rows: list[tuple[str, str]], peers: list[str], *, summary: bool = False
) -> str:
    path, run = latest("encode")
    cells = encode_cells(run)
    body = []
    seen: set[str] = set()
    for corpus, mode in rows:
        row = cells.get((encoding, corpus, mode), {})
        label = row_label(corpus, mode, corpus not in seen)
        seen.add(corpus)
        tm, best = row.get("tokenmill"), best_other(row)
        ratio = f"{tm['mb_per_s'] / best:.2f}" if tm and tm["status"] == "ok" and best else "–"
        body.append([label, *(encode_cell(row.get(p), mode) for p in peers), ratio])
    header = [encoding, *(PEERS[p] for p in peers), "tokenmill ÷ fastest other"]
    meta = run["meta"]
    versions = ", ".join(
        f"{PEERS.get(p, p)} {v}" for p, v in meta["versions"].items() if p in peers[1:]
    )
    note = (
        f"MB/s of UTF-8 input, one thread unless the row says 2 (a batch: the corpus cut into "
        f"~{meta['doc_chars']:,}-character documents), best of {meta['rounds']} rounds; "
        "† = the peer spread one text over both cores by itself. "
        f"`{rel(path)}` ({meta['cpus']} CPUs; {versions}).\n"
    )
    loads = {
        r["peer"]: r["seconds"]
        for r in run["results"]
        if r["mode"] == "load" and r["encoding"] == encoding and r["peer"] in peers
    }
    if loads:
        note += (
            f"Loading {encoding} and a first call, seconds: "
            + ", ".join(f"{PEERS[p]} {s:.2f}" for p, s in loads.items())
            + ".\n"
        )
    if summary:
        note += encode_summary(cells) + "\n"
    return markdown(header, body) + "\n" + note


def encode_summary(cells: dict[tuple[str, str, str], dict[str, dict]]) -> str:
    ahead, rows, behind = 0, 0, []
    for (encoding, corpus, mode), row in sorted(cells.items()):
        tm, best = row.get("tokenmill"), best_other(row)
        if not tm or tm["status"] != "ok" or best is None:
            continue
        rows += 1
        if tm["mb_per_s"] > best:
            ahead += 1
        else:
            label = row_label(corpus, mode, True)
            behind.append(f"{encoding}, {label} ({tm['mb_per_s'] / best:.2f})")
    text = f"Over the whole run tokenmill is the fastest in {ahead} of {rows} rows"
    return text + (f"; behind in: {'; '.join(behind)}." if behind else ".")


# --- bench_fresh.py ---------------------------------------------------------------------------


def fresh_table(encoding: str, rows: list[tuple[str, str]], peers: list[str]) -> str:
    path, run = latest("fresh")
    by = {(r["encoding"], r["corpus"], r["mode"]): r["mb_per_s"] for r in run["results"]}
    body, seen = [], set()
    for corpus, mode in rows:
        speeds = by.get((encoding, corpus, mode), {})
        label = row_label(corpus, mode, corpus not in seen, FRESH_MODES)
        seen.add(corpus)
        others = [v for p, v in speeds.items() if p != "tokenmill" and v]
        tm = speeds.get("tokenmill")
        ratio = f"{tm / max(others):.2f}" if tm and others else "–"
        body.append([label, *(mbs(speeds[p]) if speeds.get(p) else "–" for p in peers), ratio])
    ahead = total = 0
    for r in run["results"]:
        others = [v for p, v in r["mb_per_s"].items() if p != "tokenmill" and v]
        if r["mb_per_s"].get("tokenmill") and others:
            total += 1
            ahead += r["mb_per_s"]["tokenmill"] > max(others)
    meta = run["meta"]
    note = (
        f"MB/s; every call gets text no call has had (the corpus with its lines rotated), "
        f"best of {meta['rounds']} calls in each of {meta['processes']} processes. "
        f"`{rel(path)}`: tokenmill is the fastest in {ahead} of {total} rows.\n"
    )
    header = [f"{encoding}, new text", *(PEERS[p] for p in peers), "tokenmill ÷ fastest other"]
    return markdown(header, body) + "\n" + note


# --- bench_threads.py, bench_lists.py -----------------------------------------------------------


def threads_table() -> str:
    path, run = latest("threads")
    ways = ["one text", "batch, 1 thread", "batch, 2 threads", "one text, 2 threads"]
    ways.append("2 Python threads")
    by = {(r["encoding"], r["corpus"], r["way"]): r["median"] for r in run["results"]}
    keys = dict.fromkeys((r["encoding"], r["corpus"]) for r in run["results"])
    body = []
    for encoding, corpus in keys:
        one = by[(encoding, corpus, "one text")]
        cells = [
            f"{mbs(by[(encoding, corpus, w)])} ({by[(encoding, corpus, w)] / one:.2f}x)"
            for w in ways
        ]
        body.append([f"{encoding}, {SHORT.get(corpus, corpus)}", *cells])
    note = (
        "tokenmill alone, numpy output, MB/s: medians of 15 calls of each way, in turns "
        f"(x one text on one thread). `{rel(path)}`.\n"
    )
    return markdown(["", *ways], body) + "\n" + note


def lists_table() -> str:
    path, run = latest("lists")
    peers = ["tokenmill", "tiktoken", "gigatoken", "fastokens"]
    by: dict[tuple[str, str], dict[str, dict]] = {}
    for c in run["cells"]:
        by.setdefault((c["encoding"], c["corpus"]), {})[c["peer"]] = c["result"]
    body = []
    for (encoding, corpus), res in by.items():
        for way in ("again", "after other work"):
            cells = []
            for p in peers:
                r = res.get(p)
                cell = mbs(r[way]) if r else "–"
                if r and way == "again":
                    cell += f" ({r['faults']:,})"
                cells.append(cell)
            best = max(r[way] for p, r in res.items() if p != "tokenmill")
            ratio = f"{res['tokenmill'][way] / best:.2f}"
            body.append([f"{encoding}, {CORPORA[corpus]}, {way}", *cells, ratio])
    note = (
        "Lists of ids, MB/s (new pages faulted in a call), medians of 15 calls, each peer in a "
        f"process of its own; after writing 64 MB elsewhere between calls. `{rel(path)}`.\n"
    )
    header = ["", *(PEERS[p] for p in peers), "tokenmill ÷ fastest other"]
    return markdown(header, body) + "\n" + note


# --- bench_train.py, bench_corpus.py ------------------------------------------------------------


def train_table() -> str:
    path, run = latest("train")
    names = {
        "holmes": "Holmes (3.9 MB)",
        "english": "English books (20 MB)",
        "code": "Python code (31 MB)",
    }
    order = ["tokenmill", "hf", "rustbpe", "gigatoken", "bpeasy", "sentencepiece"]
    peers = [p for p in order if p in {r["peer"] for r in run}]
    body = []
    for case in dict.fromkeys(r["case"] for r in run):
        res = {r["peer"]: r for r in run if r["case"] == case}
        cells = []
        for p in peers:
            r = res.get(p, {})
            cells.append(f"{r['seconds']:.2f} s, {r['peak_mb']:.0f} MB" if "seconds" in r else "–")
        vocab = next(r["vocab"] for r in run if r["case"] == case)
        body.append([f"{names.get(case, case)} / {vocab:,}", *cells])
    bpt = ", ".join(
        f"{names.get(r['case'], r['case']).split(' (')[0]} {r['bytes_per_token']:.2f}"
        for r in run
        if r["peer"] == "tokenmill" and "bytes_per_token" in r
    )
    note = (
        "Seconds of the training call on 2 threads (best of several runs) and peak resident MB "
        f"of the process, corpus in memory included. `{rel(path)}`. tokenmill's bytes per "
        f"token on the first 4 MB of each corpus: {bpt}.\n"
    )
    return markdown(["corpus / vocabulary", *(PEERS[p] for p in peers)], body) + "\n" + note


def corpus_table() -> str:
    path, run = latest("corpus")
    rows = run["rows"]

    def label(name: str) -> str:
        if name.startswith("tiktoken pool"):
            return f"tiktoken, pool of {name[-1]}"
        if name.startswith("tokenmill ray"):
            return f"tokenmill, Ray engine, {name[-1]} CPUs"
        n = name.split(",")[0][-1]
        text = f"tokenmill, {n} worker{'s' if n != '1' else ''}"
        return text + (", the corpus x4 (80 MB)" if name.endswith("x4") else "")

    base = {n: rows[f"tiktoken pool {n}"]["mb_per_s"] for n in ("1", "2")}
    body = []
    for name, r in rows.items():
        n = name.split(",")[0][-1]
        ratio = f"{r['mb_per_s'] / base[n]:.1f}x" if n in base and "x4" not in name else "–"
        worker = f"{r['worker_mb']:.0f}" if r.get("worker_mb") else "–"
        body.append([label(name), mbs(r["mb_per_s"]), ratio, f"{r['peak_mb']:.0f}", worker])
    note = (
        f"20 MB of English books to gpt2 shards of {run['shard_tokens']:,} tokens, shards "
        "checked identical byte for byte; best of 3 rounds, each job in a process of its own "
        f"(Ray's start-up not timed). `{rel(path)}`.\n"
    )
    header = ["job", "MB/s", "vs tiktoken pool of the same size", "peak MB (driver)", "worker MB"]
    return markdown(header, body) + "\n" + note


# --- the tables by name -----------------------------------------------------------------------

TABLES: dict[str, Callable[[], str]] = {
    "encode": lambda: encode_table("o200k_base", README_ROWS, MAIN_PEERS),
    "encode-o200k": lambda: encode_table("o200k_base", MAIN_ROWS, MAIN_PEERS),
    "encode-cl100k": lambda: encode_table("cl100k_base", MAIN_ROWS, MAIN_PEERS),
    "encode-gpt2": lambda: encode_table("gpt2", MAIN_ROWS, MAIN_PEERS, summary=True),
    "encode-languages": lambda: encode_table(
        "o200k_base",
        [(c, m) for c in LANGUAGES for m in ("list", "numpy")],
        ["tokenmill", "tiktoken", "gigatoken", "fastokens", "tokie"],
    ),
    "encode-patho": lambda: encode_table(
        "o200k_base",
        [
            (c, m)
            for c in ("patho:a", "patho:letters", "patho:spaces")
            for m in ("cold list", "numpy")
        ],
        ["tokenmill", "tiktoken", "tokenizers", "gigatoken", "fastokens", "tokie"],
    ),
    "fresh": lambda: fresh_table(
        "cl100k_base",
        [
            ("holmes", "new list"),
            ("holmes", "new numpy"),
            ("holmes", "docs list"),
            ("ml:ja", "new list"),
            ("ml:ja", "new numpy"),
            ("ml:ja", "docs list"),
            ("ml:ru", "new numpy"),
            ("ml:hi", "new numpy"),
            ("code", "new list"),
            ("code", "docs numpy"),
        ],
        ["tokenmill", "tiktoken", "gigatoken", "fastokens"],
    ),
    "threads": threads_table,
    "lists": lists_table,
    "train": train_table,
    "corpus": corpus_table,
}


def render(text: str, source: Path) -> str:
    """``text`` with every marked table rebuilt."""

    def table(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in TABLES:
            raise SystemExit(f"{rel(source)}: unknown table {name!r} (known: {', '.join(TABLES)})")
        return f"<!-- table:{name} -->\n{TABLES[name]()}<!-- /table:{name} -->"

    opened = re.findall(r"<!-- table:([a-z0-9-]+) -->", text)
    closed = re.findall(r"<!-- /table:([a-z0-9-]+) -->", text)
    if opened != closed:
        raise SystemExit(f"{rel(source)}: table markers do not pair up: {opened} / {closed}")
    return MARKER.sub(table, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a file would change")
    args = ap.parse_args(argv)
    stale = []
    for path in FILES:
        if not path.exists():
            continue
        old = path.read_text(encoding="utf-8")
        new = render(old, path)
        if new == old:
            continue
        stale.append(rel(path))
        if not args.check:
            path.write_text(new, encoding="utf-8")
    if args.check and stale:
        print(
            f"speed tables out of date in {', '.join(stale)}: run python scripts/readme_tables.py",
            file=sys.stderr,
        )
        return 1
    for name in stale:
        print(f"rewrote the tables in {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
