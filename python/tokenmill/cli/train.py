"""``tokenmill train``: train a tokenizer and show what it learned.

With no input files it trains on a corpus bundled in the package (the complete Sherlock
Holmes by default, Tiny Shakespeare with ``--corpus shakespeare``), so it works on a fresh
machine with nothing else installed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from tokenmill.cli.common import AddCommand, add_engine_arguments, size
from tokenmill.errors import UsageError
from tokenmill.formats import destination_format
from tokenmill.sources.files import BUNDLED, bundled_corpus, find

UNSEEN = "Tokenizers turn unfamiliar words like 'hyperparameterization' into several pieces."


def add_commands(add: AddCommand) -> None:
    """The subcommand of this module, with its arguments."""
    sp = add("train", "train a tokenizer (no input: the bundled Sherlock Holmes)", run_train)
    sp.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="text, .jsonl, .parquet or .gz files, folders or globs (default: a bundled corpus)",
    )
    sp.add_argument(
        "--corpus",
        choices=sorted(BUNDLED),
        default="holmes",
        help="bundled corpus used when no FILE is given (default: holmes)",
    )
    sp.add_argument(
        "-v",
        "--vocab-size",
        type=int,
        default=4096,
        help="256 bytes + merges + special tokens (default: 4096)",
    )
    sp.add_argument(
        "-p",
        "--pattern",
        default=None,
        help="split pattern: gpt2, cl100k, o200k or a regex (default: cl100k, or the base's)",
    )
    sp.add_argument(
        "--from",
        dest="base",
        metavar="TOKENIZER",
        help="continue from this tokenizer (a name such as cl100k_base, or a file): its ids "
        "stay, the new tokens follow them; --vocab-size counts the base too",
    )
    sp.add_argument(
        "-s",
        "--special",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a special token, e.g. '<|endoftext|>' (repeatable)",
    )
    sp.add_argument(
        "--min-frequency",
        type=int,
        default=2,
        help="stop when no pair occurs this often (default: 2)",
    )
    sp.add_argument(
        "--text-field",
        default="text",
        help="field of .jsonl records / Parquet column (default: text)",
    )
    sp.add_argument("--threads", type=int, default=None, help="default: all CPUs")
    sp.add_argument(
        "--max-memory",
        type=size,
        default=None,
        metavar="SIZE",
        help="bound on training's memory, e.g. 1G or 512M (default: 4G); a corpus with more "
        "distinct chunks than fit drops its rarest ones, with a warning",
    )
    sp.add_argument(
        "-o",
        "--out",
        metavar="PATH",
        help="where to write the tokenizer, in the format its name says, as for convert "
        "(default: <corpus>-<vocab>.tokenmill)",
    )
    add_engine_arguments(
        sp, "count chunks here (local) or as Ray tasks (ray); the merges are the same"
    )
    sp.add_argument("--log", action="store_true", help="print every merge to stderr")
    sp.add_argument("--top", type=int, default=10, help="how many merges and tokens to show")


def run_train(args: argparse.Namespace) -> None:
    from tokenmill.pretrained import load
    from tokenmill.tokenizer import valid_name
    from tokenmill.training import DEFAULT_MAX_MEMORY, train

    corpus: Any
    if args.files:
        # Folders and globs become files here, as for every corpus (tokenmill.sources).
        corpus = [Path(f.path) for f in find(args.files)]
        label = corpus[0].stem if len(corpus) == 1 else "corpus"
        sample = None
    else:
        if args.engine == "ray":
            raise UsageError("--engine ray trains on files: name them (FILE...)")
        corpus = sample = bundled_corpus(args.corpus)
        label = args.corpus
    # tokenmill's format numbers tokens without gaps, which an extended vocabulary may have
    # (cl100k_base's special tokens sit between its tokens and the new ones).
    suffix = ".tokenmill" if args.base is None else ".json"
    out = Path(args.out or f"{label}-{args.vocab_size}{suffix}")
    destination_format(out)  # a name that says no format fails now, not after training
    base = None if args.base is None else load(args.base)
    start = time.perf_counter()
    tok = train(
        corpus,
        args.vocab_size,
        pattern=args.pattern,
        special_tokens=args.special,
        min_frequency=args.min_frequency,
        num_threads=args.threads,
        text_field=args.text_field,
        name=valid_name(out.name.split(".")[0]),  # a file name need not be UTF-8
        progress=None if not args.quiet else False,
        verbose=args.log,
        engine=args.engine,
        ray_address=args.ray_address,
        base=base,
        max_memory=DEFAULT_MAX_MEMORY if args.max_memory is None else args.max_memory,
    )
    seconds = time.perf_counter() - start
    written = tok.save(out)
    first_new = 256 if base is None else base.n_vocab
    report = summarize(tok, seconds, sample, args.top, first_new, len(args.special))
    report["written"] = written
    report["corpus"] = [str(f) for f in corpus] if sample is None else f"{args.corpus} (bundled)"
    if args.json:
        import json

        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(format_summary(report))


def summarize(
    tok: Any, seconds: float, sample: str | None, top: int, first_new: int, n_specials: int
) -> dict[str, Any]:
    """What training produced, as data: merges (those learned from id ``first_new`` on),
    longest tokens, compression, an example."""
    from tokenmill.analysis.inspect import describe
    from tokenmill.analysis.show import render

    info = describe(tok, top=top, since=first_new)
    report: dict[str, Any] = {
        "name": tok.name,
        "n_vocab": tok.n_vocab,
        "merges_learned": tok.n_vocab - first_new - n_specials,
        "pattern": info["pattern"],
        "seconds": round(seconds, 3),
        "first_merges": info["first_merges"],
        "longest_tokens": info["longest_tokens"],
        "unseen_text": UNSEEN,
        # Plain text, as the corpus below: a special token may be any string, even "a".
        "unseen_tokens": render(tok, tok.encode_ordinary(UNSEEN)),
    }
    if sample is not None:
        nbytes = len(sample.encode("utf-8"))
        n = tok.count(sample, disallowed_special=())
        report["corpus_bytes"] = nbytes
        report["corpus_tokens"] = n
        report["bytes_per_token"] = round(nbytes / n, 3)
    return report


def format_summary(r: dict[str, Any]) -> str:
    """The summary for a terminal."""
    lines = [
        f"trained {r['name']}: {r['n_vocab']:,} tokens ({r['merges_learned']:,} merges), "
        f"pattern {r['pattern']}, in {r['seconds']:.2f} s",
        "",
        "first merges:",
    ]
    for m in r["first_merges"]:
        count = f"  seen {m['count']:,}x" if "count" in m else ""
        lines.append(
            f"  {m['rank']:>6}  {m.get('left', '?')} + {m.get('right', '?')}"
            f" -> {m['merged']}{count}"
        )
    lines.append("")
    lines.append("longest tokens:")
    lines.extend(f"  {t['rank']:>6}  {t['text']}" for t in r["longest_tokens"])
    if "bytes_per_token" in r:
        lines.append("")
        lines.append(
            f"the corpus: {r['corpus_bytes']:,} bytes -> {r['corpus_tokens']:,} tokens, "
            f"{r['bytes_per_token']:.2f} bytes per token"
        )
    lines.append("")
    lines.append("an unseen sentence:")
    lines.append(f"  {r['unseen_tokens']}")
    lines.append("")
    lines.append("wrote " + ", ".join(r["written"]))
    return "\n".join(lines) + "\n"
