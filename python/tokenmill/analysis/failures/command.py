"""``tokenmill report``: the command-line side of the failure-mode report.

``cli.py`` calls :func:`add_report_arguments` to build the subcommand and :func:`run_report`
to run it.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

DEFAULT_OUT = "report.html"


def add_report_arguments(sp: argparse.ArgumentParser) -> None:
    """The arguments of ``tokenmill report``."""
    sp.add_argument(
        "tokenizer",
        nargs="+",
        metavar="TOKENIZER",
        help="names or files (gpt2, cl100k_base, o200k_base, my.tokenmill, ...)",
    )
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
    from tokenmill.cli import UserError, _emit_json, _expand, _progress

    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads must be >= 1, got {args.threads}")
    corpus: Any = None
    if args.corpus:
        from pathlib import Path

        files = _expand(args.corpus)
        for f in files:
            if not Path(f).exists():
                raise UserError(f"{f}: no such file")
        corpus = files
    start = time.perf_counter()
    r = report(
        args.tokenizer,
        corpus,
        num_threads=args.threads,
        progress=lambda m: _progress(args, m),
    )
    out = args.out or (None if args.json else DEFAULT_OUT)
    if out:
        r.save(out)
    if args.json:
        _emit_json(r.to_dict())
    else:
        sys.stdout.write(r.to_text())
    took = time.perf_counter() - start
    _progress(args, f"report took {took:.1f} s" + (f"; wrote {out}" if out else ""))


__all__ = ["add_report_arguments", "run_report"]
