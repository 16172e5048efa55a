"""``tokenmill encode``, ``decode``, ``count`` and ``show``: text <-> token ids."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tokenmill import idio
from tokenmill.cli.common import (
    AddCommand,
    add_special_arguments,
    add_tokenizer_argument,
    emit_json,
    inputs,
    load_tokenizer,
    load_tokenizers,
    print_table,
    read_bytes,
    read_text,
    special_kwargs,
    write_output,
)
from tokenmill.errors import UsageError


def add_commands(add: AddCommand) -> None:
    """The subcommands of this module, with their arguments."""
    sp = add("encode", "text -> token ids (a line of ids per input)", run_encode)
    sp.add_argument("files", nargs="*", metavar="FILE", help="text files (default: stdin)")
    add_tokenizer_argument(sp)
    add_special_arguments(sp)
    sp.add_argument("-f", "--format", choices=idio.FORMATS, help="default: from -o, else text")
    sp.add_argument(
        "--dtype", choices=idio.DTYPES, help="for npy/bin (default: smallest that fits)"
    )
    sp.add_argument(
        "-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout"
    )
    sp.add_argument(
        "--threads",
        type=int,
        help="threads for each input of 128 KB+, cut where no chunk can cross; the ids are the "
        "same (default: all CPUs)",
    )

    sp = add("decode", "token ids -> text, exactly the bytes they stand for", run_decode)
    sp.add_argument("file", nargs="?", metavar="FILE", help="ids file (default: stdin)")
    add_tokenizer_argument(sp)
    sp.add_argument(
        "-f", "--format", choices=idio.FORMATS, help="default: from the file name, else text"
    )
    sp.add_argument(
        "--dtype",
        choices=idio.DTYPES,
        help="for bin input (default: the smallest that fits the tokenizer, as encode writes)",
    )
    sp.add_argument(
        "--errors",
        default="replace",
        choices=["replace", "strict", "ignore"],
        help="what to do with bytes that are not UTF-8 (default: replace)",
    )

    sp = add("count", "count tokens per file and in total", run_count)
    sp.add_argument("files", nargs="*", metavar="FILE", help="text files or globs (default: stdin)")
    add_tokenizer_argument(sp, many=True)
    add_special_arguments(sp)

    sp = add("show", "show token boundaries", run_show)
    sp.add_argument("text", nargs="*", help="the text (default: stdin)")
    add_tokenizer_argument(sp)
    add_special_arguments(sp)
    sp.add_argument("--ids", action="store_true", help="show each token's id")
    sp.add_argument("--color", choices=["auto", "always", "never"], default="auto")


def run_encode(args: argparse.Namespace) -> None:
    from tokenmill.tokenizer import default_threads

    tok = load_tokenizer(args, args.tokenizer)
    threads = default_threads() if args.threads is None else args.threads
    if threads < 1:
        raise UsageError(f"--threads must be >= 1, not {threads}")
    named = [
        (name, tok.encode(text, num_threads=threads, **special_kwargs(args)))
        for name, text in inputs(args)
    ]
    docs = [ids for _, ids in named]
    fmt = args.format or idio.guess_format(args.output)
    dtype = idio.dtype_for(tok.n_vocab, args.dtype)
    if args.json and args.output is None:
        # stdout is the JSON: the ids are in it, in no other format.
        if args.format not in (None, "json"):
            raise UsageError(f"--json prints the ids as JSON; for {args.format} ids use -o FILE")
        emit_json(
            {
                "tokenizer": args.tokenizer,
                "inputs": [{"file": n, "tokens": len(ids), "ids": ids} for n, ids in named],
            }
        )
        return
    if fmt in ("npy", "bin") and args.output is None and sys.stdout.isatty():
        raise UsageError(f"refusing to write binary {fmt} to a terminal; use -o FILE or a pipe")
    write_output(args.output, lambda f: idio.write_ids(f, docs, fmt, dtype))
    if args.json:
        emit_json(
            {
                "tokenizer": args.tokenizer,
                "written": args.output,
                "format": fmt,
                "dtype": dtype if fmt in ("npy", "bin") else None,
                "inputs": [{"file": n, "tokens": len(ids)} for n, ids in named],
            }
        )


def run_decode(args: argparse.Namespace) -> None:
    tok = load_tokenizer(args, args.tokenizer)
    path = args.file or "-"
    fmt = args.format or idio.guess_format(None if path == "-" else path)
    data = read_bytes(path)
    try:
        # Raw .bin files do not say their width: the tokenizer's, as `encode` writes them.
        docs = idio.read_ids(data, fmt, args.dtype or idio.dtype_for(tok.n_vocab))
    except ValueError as e:
        raise UsageError(f"{path}: {e}") from None
    if args.json:
        texts = [tok.decode(d, errors=args.errors) for d in docs]
        emit_json({"tokenizer": args.tokenizer, "texts": texts})
        return
    # Exactly the bytes the ids stand for, documents back to back as `cat` joins files, and
    # nothing added: `encode | decode` gives back its input byte for byte (a newline comes
    # back when the ids hold one). Written as bytes: stdout's encoding could change them.
    text = tok.decode([i for d in docs for i in d], errors=args.errors)
    write_output(None, lambda f: f.write(text.encode("utf-8")))


def run_count(args: argparse.Namespace) -> None:
    toks = list(zip(args.tokenizer, load_tokenizers(args, args.tokenizer), strict=True))
    rows = []
    totals = {spec: 0 for spec, _ in toks}
    for name, text in inputs(args):
        row: dict[str, Any] = {"file": name, "bytes": len(text.encode("utf-8"))}
        for spec, tok in toks:
            n = tok.count(text, **special_kwargs(args))
            row[spec] = n
            totals[spec] += n
        rows.append(row)
    total_bytes = sum(r["bytes"] for r in rows)
    if args.json:
        emit_json({"files": rows, "total": {"bytes": total_bytes, **totals}})
        return
    headers = ["file", "bytes", *[spec for spec, _ in toks]]
    table = [[r["file"], f"{r['bytes']:,}", *[f"{r[s]:,}" for s, _ in toks]] for r in rows]
    if len(rows) > 1:
        table.append(["total", f"{total_bytes:,}", *[f"{totals[s]:,}" for s, _ in toks]])
    print_table(headers, table)


def argument_text(text: str) -> str:
    """Text given as arguments, held to what files and stdin are held to: strict UTF-8. The
    shell passes bytes, which Python decodes with ``surrogateescape``: a byte that is not
    UTF-8 arrives as a lone surrogate, refused here as ``read_text`` refuses it in a file.

    >>> argument_text("naïve")
    'naïve'
    >>> argument_text("ab\\udcffcd")
    Traceback (most recent call last):
    tokenmill.errors.UsageError: the text argument is not UTF-8 text (bad byte 0xff at offset 2)
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:  # a surrogate that no byte stands for
        raise UsageError(
            f"the text argument is not UTF-8 text (a lone surrogate at character {e.start})"
        ) from None
    try:
        return data.decode("utf-8")  # surrogates that spell UTF-8 (never from the shell)
    except UnicodeDecodeError as e:
        raise UsageError(
            f"the text argument is not UTF-8 text (bad byte 0x{data[e.start]:02x} at offset "
            f"{e.start})"
        ) from None


def run_show(args: argparse.Namespace) -> None:
    from tokenmill.analysis.show import render, token_text

    tok = load_tokenizer(args, args.tokenizer)
    text = argument_text(" ".join(args.text)) if args.text else read_text("-")
    ids = tok.encode(text, **special_kwargs(args))
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    if args.json:
        emit_json(
            {
                "tokenizer": args.tokenizer,
                "tokens": [
                    {"id": i, "bytes": list(b), "text": token_text(b)}
                    for i, b in zip(ids, tok.decode_tokens_bytes(ids), strict=True)
                ],
            }
        )
        return
    sys.stdout.write(render(tok, ids, color=color, show_ids=args.ids) + "\n")
    if not args.quiet:
        print(
            f"{len(ids)} tokens, {len(text)} characters, {len(text.encode())} bytes",
            file=sys.stderr,
        )
