"""``tokenmill report``: the failure-mode report (:mod:`tokenmill.analysis.failures`) as a
terminal summary, JSON and a self-contained HTML page."""

from __future__ import annotations

import argparse
import os
import sys
import time

from tokenmill.cli.common import (
    AddCommand,
    add_load_arguments,
    emit_json,
    load_tokenizers,
    progress,
)
from tokenmill.errors import UsageError
from tokenmill.sources.files import find

DEFAULT_OUT = "report.html"


def add_commands(add: AddCommand) -> None:
    """The subcommand of this module, with its arguments."""
    sp = add("report", "failure-mode report: terminal summary + self-contained HTML", run_report)
    sp.add_argument(
        "tokenizer",
        nargs="+",
        metavar="TOKENIZER",
        help="names or files (gpt2, cl100k_base, o200k_base, my.tokenmill, ...)",
    )
    add_load_arguments(sp)
    sp.add_argument(
        "--corpus",
        nargs="+",
        metavar="FILE",
        help="files, folders or globs measured instead of the bundled samples (compression, "
        "glitch tokens, merge residue; parallel <lang>.txt files, one dataset as .json/.yml/"
        ".csv/.xml, and code files feed their sections too)",
    )
    sp.add_argument(
        "-o",
        "--out",
        metavar="FILE",
        help=f"where to write the HTML report (default: {DEFAULT_OUT}; with --json: none)",
    )
    sp.add_argument("--threads", type=int, default=None, help="default: all CPUs")


def run_report(args: argparse.Namespace) -> None:
    """Compute the report; print the summary (or JSON) and write the HTML page."""
    from tokenmill.analysis.failures import report

    if args.threads is not None and args.threads < 1:
        raise UsageError(f"--threads must be >= 1, got {args.threads}")
    # Found before any tokenizer is loaded, so that a wrong name fails at once.
    corpus = [f.path for f in find(args.corpus)] if args.corpus else None
    start = time.perf_counter()
    toks = load_tokenizers(args, args.tokenizer)
    # Labelled by file name, as the report labels the paths it loads itself.
    labels = [os.path.basename(spec) or spec for spec in args.tokenizer]
    r = report(
        list(zip(labels, toks, strict=True)),
        corpus,
        num_threads=args.threads,
        progress=lambda m: progress(args, m),
    )
    out = args.out or (None if args.json else DEFAULT_OUT)
    if out:
        r.save(out)
    if args.json:
        emit_json(r.to_dict())
    else:
        sys.stdout.write(r.to_text())
    took = time.perf_counter() - start
    progress(args, f"report took {took:.1f} s" + (f"; wrote {out}" if out else ""))
