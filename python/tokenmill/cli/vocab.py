"""``tokenmill inspect``, ``compare`` and ``convert``: looking at vocabularies and writing them
in other formats."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tokenmill.cli.common import (
    AddCommand,
    add_load_arguments,
    add_tokenizer_argument,
    emit_json,
    inputs,
    load_tokenizer,
    load_tokenizers,
    progress,
)


def add_commands(add: AddCommand) -> None:
    """The subcommands of this module, with their arguments."""
    from tokenmill.formats import FORMATS

    sp = add("inspect", "describe a vocabulary", run_inspect)
    sp.add_argument("tokenizer", metavar="TOKENIZER")
    add_load_arguments(sp)
    sp.add_argument("--top", type=int, default=10, help="how many merges/tokens to list")

    sp = add("compare", "compare tokenizers on the same text", run_compare)
    sp.add_argument("files", nargs="*", metavar="FILE", help="texts (default: built-in snippets)")
    add_tokenizer_argument(sp, many=True)

    sp = add("convert", "write a tokenizer in another format", run_convert)
    sp.add_argument("source", metavar="TOKENIZER")
    sp.add_argument("dest", metavar="OUT")
    add_load_arguments(sp)
    sp.add_argument("--to", choices=list(FORMATS), help="default: from OUT's name")


def run_inspect(args: argparse.Namespace) -> None:
    from tokenmill.analysis.inspect import describe, format_description

    info = describe(load_tokenizer(args, args.tokenizer), top=args.top)
    if args.json:
        emit_json(info)
    else:
        sys.stdout.write(format_description(info))


def run_compare(args: argparse.Namespace) -> None:
    from tokenmill.analysis.compare import SNIPPETS, compare, format_comparison

    if args.files:
        # Rows are labelled by file name: full paths would crowd the table.
        samples = [(Path(name).name, text) for name, text in inputs(args)]
    else:
        samples = list(SNIPPETS.items())
    toks = list(zip(args.tokenizer, load_tokenizers(args, args.tokenizer), strict=True))
    result = compare(toks, samples)
    if args.json:
        emit_json(result)
    else:
        sys.stdout.write(format_comparison(result))


def run_convert(args: argparse.Namespace) -> None:
    from tokenmill.formats import destination_format, write

    # The destination's format is told before the source is loaded, so a bad name fails fast.
    fmt = args.to or destination_format(args.dest)
    written = write(load_tokenizer(args, args.source), args.dest, fmt)
    if args.json:
        emit_json({"tokenizer": args.source, "format": fmt, "written": written})
    else:
        progress(args, f"wrote {', '.join(written)}")
