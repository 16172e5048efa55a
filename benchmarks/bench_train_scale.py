"""Training at corpus scale: a generated multi-GB corpus, tokenmill vs its peers, peak memory.

The corpus is generated, deterministically, and cached (nothing is stored in the repository):
``--sizes 1G`` makes ``<dir>/zipf-1G.txt``, 10^9 bytes of text drawn from a Zipf law
(exponent 1, offset 2.7) over 10,000,000 made-up words of one to four syllables (5% of them
numbers, 8% capitalized) and a few punctuation marks and line ends among the most frequent
"words". Like real text, the number of distinct words keeps growing with the corpus (Heaps'
law): about 3 M distinct chunks in 200 MB, 7 M in 1 GB; the long tail seen once or twice is
what makes counting at scale take memory. The same seed gives the same bytes on every machine
with the same numpy.

Each peer trains on the file in its own process (peak RSS is its own: ``VmHWM`` after
training, the interpreter included) with ``--threads`` threads, the file streamed where the
peer can:

- ``tokenmill``: ``tokenmill.train(Path(file), vocab, pattern="cl100k")`` (streams the file);
  ``tokenmill:1G`` the same with ``max_memory`` 1 GiB (its rarest chunks dropped if they do not
  fit, with the warning in the table's note column);
- ``rustbpe``: ``train_from_iterator`` over the file's lines (streamed);
- ``hf``: HF ``tokenizers`` ``train([file])`` with the same split regex (streamed);
- ``gigatoken``: ``train_bpe`` on the file's bytes (it takes the whole corpus in memory).

    python benchmarks/bench_train_scale.py [--sizes 200M 1G] [--vocabs 65536]
        [--peers tokenmill rustbpe hf gigatoken] [--threads 2] [--dir /tmp/tokenmill-scale]
        [--timeout 1800] [--json out.json]

The latest run is in ``benchmarks/results/trainscale-<date>.{txt,json}``.
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

SEED = 20261207
N_WORDS = 10_000_000
SYLLABLES_ONSET = "b c d f g h j k l m n p r s t v w z br ch cl dr fl gr pl pr sh st th tr".split()
SYLLABLES_VOWEL = "a e i o u a e i o ea ou ai".split()
SYLLABLES_CODA = ["", "", "", "n", "r", "s", "t", "l", "nd", "st", "ng", "ck"]
PUNCTUATION = [b",", b".", b".\n", b"\n", b";", b"!", b"?", b'"']
BLOCK_WORDS = 1 << 20


def parse_size(text: str) -> int:
    units = {"K": 10**3, "M": 10**6, "G": 10**9}
    if text[-1].upper() in units:
        return int(float(text[:-1]) * units[text[-1].upper()])
    return int(text)


def vocabulary(rng) -> list[bytes]:
    """The made-up words (each with its leading space) and punctuation, most frequent first."""
    import numpy as np

    syllables = [
        (o + v + c).encode()
        for o in SYLLABLES_ONSET
        for v in SYLLABLES_VOWEL
        for c in SYLLABLES_CODA
    ]
    syl = np.array(syllables, dtype=object)
    n_syl = rng.integers(1, 5, size=N_WORDS)
    parts = [syl[rng.integers(0, len(syl), size=N_WORDS)] for _ in range(4)]
    numbers = rng.random(N_WORDS) < 0.05
    capital = rng.random(N_WORDS) < 0.08
    digits = rng.integers(0, 100_000, size=N_WORDS)
    words: list[bytes] = []
    for i in range(N_WORDS):
        if numbers[i]:
            words.append(b" %d" % digits[i])
            continue
        w = b"".join(parts[k][i] for k in range(n_syl[i]))
        words.append(b" " + (w.capitalize() if capital[i] else w))
    # Punctuation among the most frequent "words", as in text.
    for k, p in enumerate(PUNCTUATION):
        words.insert(2 + 3 * k, p)
    return words


def generate(path: Path, size: int) -> None:
    """Write ``size`` bytes (cut at the last line end before it) of Zipf text to ``path``."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    words = vocabulary(rng)
    weights = 1.0 / (np.arange(len(words), dtype=np.float64) + 2.7)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    tmp = path.with_suffix(".part")
    written = 0
    with open(tmp, "wb") as f:
        while written < size:
            idx = np.searchsorted(cdf, rng.random(BLOCK_WORDS), side="right")
            block = b"".join([words[i] for i in idx.tolist()])
            if written + len(block) >= size:
                block = block[: size - written]
                block = block[: block.rfind(b"\n") + 1]
                f.write(block)
                break
            f.write(block)
            written += len(block)
    os.replace(tmp, path)


def corpus(directory: Path, size: int) -> Path:
    path = directory / f"zipf-{size}.txt"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        print(f"# generating {path} ...", file=sys.stderr, flush=True)
        generate(path, size)
        print(f"# generated in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return path


def peak_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def train(peer: str, path: Path, vocab: int, threads: int) -> int:
    """Train once; return the number of tokens learned (256 bytes included)."""
    from tokenmill.patterns import resolve

    pattern = resolve("cl100k")
    if peer.startswith("tokenmill"):
        import tokenmill
        from tokenmill.cli.common import size

        _, _, bound = peer.partition(":")
        tok = tokenmill.train(
            path,
            vocab,
            pattern="cl100k",
            num_threads=threads,
            progress=False,
            **({"max_memory": size(bound)} if bound else {}),
        )
        return tok.n_vocab
    if peer == "rustbpe":
        import rustbpe

        tk = rustbpe.Tokenizer()
        with open(path, encoding="utf-8") as f:
            tk.train_from_iterator(f, vocab, pattern=pattern)
        return len(tk.get_mergeable_ranks())
    if peer == "hf":
        from bench_train import hf_bpe

        tk, trainer = hf_bpe(pattern, vocab)
        tk.train([str(path)], trainer=trainer)
        return tk.get_vocab_size()
    if peer == "gigatoken":
        import gigatoken

        vocab_map, _merges = gigatoken.train_bpe(path.read_bytes(), vocab, [])
        return len(vocab_map)
    raise KeyError(peer)


def worker(peer: str, path: Path, vocab: int, threads: int) -> None:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        n = train(peer, path, vocab, threads)
        seconds = time.perf_counter() - t0
    out = {"seconds": seconds, "peak_mb": peak_mb(), "tokens": n}
    if caught:
        out["warning"] = str(caught[0].message)[:160]
    print("RESULT " + json.dumps(out))


def run(peer: str, path: Path, vocab: int, args: argparse.Namespace) -> dict:
    env = os.environ | {
        "RAYON_NUM_THREADS": str(args.threads),
        "TOKENIZERS_PARALLELISM": "true",
    }
    cmd = [sys.executable, __file__, "--worker", peer, str(path), str(vocab)]
    cmd += ["--threads", str(args.threads)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"note": f"timeout after {args.timeout:.0f} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    err = (p.stderr.strip().splitlines() or ["no output"])[-1]
    if "No module named" in p.stderr:
        return {"note": f"not installed ({err})"}
    return {"note": f"failed: {err[:120]}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["1G"])
    ap.add_argument("--vocabs", nargs="+", type=int, default=[65536])
    ap.add_argument("--peers", nargs="+", default=["tokenmill", "rustbpe", "hf", "gigatoken"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/tokenmill-scale"))
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--worker", nargs=3, metavar=("PEER", "FILE", "VOCAB"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        peer, file, vocab = args.worker
        worker(peer, Path(file), int(vocab), args.threads)
        return

    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, {args.threads} threads")
    header = (
        f"{'corpus':<14} {'vocab':>7} {'peer':<12} {'seconds':>8} {'vs tokenmill':>13} "
        f"{'peak MB':>8}  note"
    )
    print(header)
    print("-" * len(header))
    results = []
    for size in map(parse_size, args.sizes):
        path = corpus(args.dir, size)
        label = f"zipf-{size / 1e9:g}GB"
        for vocab in args.vocabs:
            ours = None
            for peer in args.peers:
                r = run(peer, path, vocab, args)
                results.append(r | {"bytes": size, "vocab": vocab, "peer": peer})
                if "seconds" not in r:
                    print(f"{label:<14} {vocab:>7} {peer:<12} {r['note']}", flush=True)
                    continue
                if peer == "tokenmill":
                    ours = r["seconds"]
                note = r.get("warning", "")
                ratio = f"{r['seconds'] / ours:.2f}x" if ours else "-"
                print(
                    f"{label:<14} {vocab:>7} {peer:<12} {r['seconds']:>8.1f} {ratio:>13} "
                    f"{r['peak_mb']:>8.0f}  {note}",
                    flush=True,
                )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
