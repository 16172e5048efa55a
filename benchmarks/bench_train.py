"""Training speed, peak memory and compression: tokenmill vs its peers, in one run.

Cases (corpus / vocabulary size):

- ``holmes``: ``../shared/data/holmes.txt`` (3.9 MB) / 4,096;
- ``english``: ``../shared/data/english_large/`` (20 MB) / 32,768;
- ``code``: the installed Python standard library (~31 MB of ``*.py``) / 32,768.

Peers: HF ``tokenizers`` (byte-level BPE with the same split regex), ``rustbpe``,
``gigatoken`` (``train_bpe``), ``bpeasy``, ``sentencepiece`` (BPE mode) and tokenmill's own
``reference.py`` (smallest case only; it takes minutes: ``--skip-reference``). A peer that is
not installed is skipped with a note.

Every peer trains in its own subprocess with the corpus already in memory (a list of
documents, see corpora.py), on ``--threads`` threads, so that the peak memory is its own:
``peak MB`` is the high-water mark of resident memory during training (reset after loading the
corpus, via /proc/self/clear_refs), which includes the interpreter and the corpus, the same for
everyone: ``base MB`` is the resident memory just before training, ``peak - base`` what
training itself needed. Seconds are the training call alone, best
of ``--repeat`` runs for runs under 5 s. Bytes per token: UTF-8 bytes of the first 4 MB of the
corpus divided by the tokens the trained tokenizer makes of it (each with its own encoder,
or tokenmill's for peers that return a rank table).

    python benchmarks/bench_train.py [--cases holmes english code] [--peers ...]
        [--skip-reference] [--threads 2] [--timeout 600] [--json out.json]

The latest run is in ``benchmarks/results/train-<date>.{txt,json}`` and its table in README.md
and docs/performance.md (``scripts/readme_tables.py``). The readable reference, left out with
``--skip-reference``, took 9.18 s on Holmes / 4,096 (2026-12-03; tokenmill 0.09 s).

HF, rustbpe and bpeasy learn (nearly) the same merges, hence the same bytes per token;
gigatoken splits with its own pattern and sentencepiece is a different algorithm.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpora

CASES = {"holmes": 4096, "english": 32768, "code": 32768}
PEERS = ["tokenmill", "hf", "rustbpe", "gigatoken", "bpeasy", "sentencepiece", "reference"]
# tokenmill's pattern for every case: cl100k (GPT-4's), which rustbpe also uses by default.
PATTERN = "cl100k"
SAMPLE_CHARS = 4 << 20


def rss_mb(field: str = "VmRSS") -> float:
    """Resident memory now (VmRSS) or its high-water mark (VmHWM), in MB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak() -> None:
    """Reset the high-water mark, so the peak is that of training, not of loading the corpus
    (Linux >= 4.0; elsewhere the peak includes loading)."""
    import gc

    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def ranks_counter(ranks: dict[bytes, int]):
    """A token counter for a peer that returns a rank table: tokenmill with those ranks."""
    import tokenmill

    ordered = sorted(ranks, key=ranks.__getitem__)  # dense ranks in the peer's order
    tok = tokenmill.Tokenizer(ordered, PATTERN)
    return lambda text: tok.count(text, disallowed_special=())


def hf_bpe(pattern: str, vocab: int):
    """An HF ``tokenizers`` byte-level BPE splitting by ``pattern``, and its trainer."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    # HF's engine reads the possessive \p{N}{1,3}+ as a repeated group (DESIGN.md §5).
    hf_pattern = pattern.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(hf_pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    return tk, trainer


def train_peer(peer: str, docs: list[str], vocab: int, threads: int):
    """Train once; return a function text -> number of tokens."""
    from tokenmill.patterns import resolve

    pattern = resolve(PATTERN)
    if peer == "tokenmill":
        import tokenmill

        tok = tokenmill.train(docs, vocab, pattern=PATTERN, num_threads=threads, progress=False)
        return lambda text: tok.count(text, disallowed_special=())
    if peer == "reference":
        from tokenmill import reference

        merges = reference.train(docs, vocab, pattern=PATTERN)
        return ranks_counter({t: i for i, t in enumerate(reference.vocab(merges))})
    if peer == "hf":
        tk, trainer = hf_bpe(pattern, vocab)
        tk.train_from_iterator(docs, trainer=trainer, length=len(docs))
        return lambda text: len(tk.encode(text).ids)
    if peer == "rustbpe":
        import rustbpe

        tk = rustbpe.Tokenizer()
        tk.train_from_iterator(iter(docs), vocab, pattern=pattern)
        return ranks_counter(dict(tk.get_mergeable_ranks()))
    if peer == "gigatoken":
        import gigatoken

        # Documents separated by a byte that no corpus here contains.
        data = "\x1e".join(docs).encode("utf-8")
        vocab_map, _merges = gigatoken.train_bpe(data, vocab, [], separator=b"\x1e")
        return ranks_counter({t: i for i, t in vocab_map.items()})
    if peer == "bpeasy":
        import bpeasy

        ranks = bpeasy.train_bpe(iter(docs), pattern, 128, vocab)
        return ranks_counter(ranks)
    if peer == "sentencepiece":
        import io

        import sentencepiece as spm

        model = io.BytesIO()
        lines = [line for d in docs for line in d.split("\n") if line.strip()]
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            model_type="bpe",
            vocab_size=vocab,
            byte_fallback=True,
            character_coverage=0.9995,
            num_threads=threads,
            max_sentence_length=1 << 16,
            input_sentence_size=0,
            minloglevel=2,
        )
        sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
        return lambda text: sum(len(ids) for ids in sp.encode(text.split("\n")))
    raise KeyError(peer)


def worker(peer: str, case: str, threads: int, repeat: int) -> None:
    docs = corpora.documents(case)
    vocab = CASES[case]
    reset_peak()
    base = rss_mb()
    best = float("inf")
    count = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        count = train_peer(peer, docs, vocab, threads)
        best = min(best, time.perf_counter() - t0)
        if best > 5:
            break
    peak = rss_mb("VmHWM")
    sample = "".join(docs)[:SAMPLE_CHARS]
    n = count(sample) if count is not None else 0
    out = {
        "seconds": best,
        "peak_mb": peak,
        "base_mb": base,
        "bytes_per_token": len(sample.encode("utf-8")) / max(n, 1),
    }
    print("RESULT " + json.dumps(out))


def run(peer: str, case: str, args: argparse.Namespace) -> dict:
    env = os.environ | {
        "RAYON_NUM_THREADS": str(args.threads),
        "TOKENIZERS_PARALLELISM": "true",
        "OMP_NUM_THREADS": str(args.threads),
    }
    cmd = [sys.executable, __file__, "--worker", peer, case, "--threads", str(args.threads)]
    cmd += ["--repeat", str(args.repeat)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"note": f"timeout after {args.timeout} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    err = (p.stderr.strip().splitlines() or ["no output"])[-1]
    if "ModuleNotFoundError" in p.stderr or "No module named" in p.stderr:
        return {"note": f"not installed ({err})"}
    return {"note": f"failed: {err[:120]}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--peers", nargs="+", default=PEERS, choices=PEERS)
    ap.add_argument("--skip-reference", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--worker", nargs=2, metavar=("PEER", "CASE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.threads, args.repeat)
        return

    results = []
    header = (
        f"{'case':<22} {'peer':<14} {'seconds':>9} {'vs tokenmill':>13} {'peak MB':>8} "
        f"{'base MB':>8} {'bytes/tok':>9}"
    )
    print(
        f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"{args.threads} threads"
    )
    print(header)
    print("-" * len(header))
    for case in args.cases:
        if not corpora.available(case):
            print(f"{case}: corpus not available (needs ../shared/data), skipped")
            continue
        corpora.files(case)  # builds the code corpus once, outside the measured workers
        label = f"{case}/{CASES[case]}"
        ours = None
        for peer in args.peers:
            if peer == "reference" and (args.skip_reference or case != "holmes"):
                continue
            r = run(peer, case, args) | {"case": case, "vocab": CASES[case], "peer": peer}
            results.append(r)
            if "seconds" not in r:
                print(f"{label:<22} {peer:<14} {r['note']}")
                continue
            if peer == "tokenmill":
                ours = r["seconds"]
            ratio = f"{r['seconds'] / ours:.1f}x" if ours else "-"
            print(
                f"{label:<22} {peer:<14} {r['seconds']:>9.2f} {ratio:>13} {r['peak_mb']:>8.0f} "
                f"{r['base_mb']:>8.0f} {r['bytes_per_token']:>9.3f}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
