"""The ``tokenmill`` command.

Shell conventions throughout: inputs are files (or ``-``/nothing for stdin), results go to
stdout, progress to stderr, ``--quiet`` silences progress, ``--json`` gives machine-readable
output, and a user error prints one line ``tokenmill: error: ...`` and exits with status 2.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from tokenmill import idio
from tokenmill.errors import TokenmillError

EXIT_USAGE = 2


class UserError(Exception):
    """A mistake in what the user asked for: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UserError(f"{message} (see: {self.prog} --help)")


def _stdout() -> Any:
    return sys.stdout.buffer


def _progress(args: argparse.Namespace, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr, flush=True)


def _emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _load(spec: str) -> Any:
    import tokenmill

    return tokenmill.load(spec)


def _expand(patterns: Sequence[str]) -> list[str]:
    """Files named on the command line, with globs expanded (sorted), ``-`` kept for stdin."""
    out: list[str] = []
    for p in patterns:
        if p == "-" or not any(ch in p for ch in "*?["):
            out.append(p)
            continue
        matches = sorted(glob.glob(p, recursive=True))
        if not matches:
            raise UserError(f"no files match {p!r}")
        out.extend(matches)
    return out


def _read_text(path: str) -> str:
    """A file's text (``-`` = stdin), strictly UTF-8, gzip understood."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(path).read_bytes()
        except FileNotFoundError:
            raise UserError(f"{path}: no such file") from None
        except IsADirectoryError:
            raise UserError(f"{path}: is a directory") from None
        if data[:2] == b"\x1f\x8b":
            import gzip

            data = gzip.decompress(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text (bad byte at offset {e.start})") from None


def _inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    files = _expand(args.files) if args.files else ["-"]
    return [("<stdin>" if f == "-" else f, _read_text(f)) for f in files]


def _special_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    if getattr(args, "allow_special", False):
        return {"allowed_special": "all"}
    if getattr(args, "plain_special", False):
        return {"disallowed_special": ()}
    return {}


# --------------------------------------------------------------------------------- commands


def cmd_encode(args: argparse.Namespace) -> None:
    from tokenmill.tokenizer import default_threads

    tok = _load(args.tokenizer)
    threads = default_threads() if args.threads is None else args.threads
    if threads < 1:
        raise UserError(f"--threads must be >= 1, not {threads}")
    docs = [
        tok.encode(text, num_threads=threads, **_special_kwargs(args)) for _, text in _inputs(args)
    ]
    fmt = args.format or idio.guess_format(args.output)
    dtype = idio.dtype_for(tok.n_vocab, args.dtype)
    if fmt in ("npy", "bin") and args.output is None and sys.stdout.isatty():
        raise UserError(f"refusing to write binary {fmt} to a terminal; use -o FILE or a pipe")
    _write_output(args.output, lambda f: idio.write_ids(f, docs, fmt, dtype))


def cmd_decode(args: argparse.Namespace) -> None:
    tok = _load(args.tokenizer)
    path = args.file or "-"
    fmt = args.format or idio.guess_format(None if path == "-" else path)
    data = sys.stdin.buffer.read() if path == "-" else _read_bytes(path)
    try:
        # Raw .bin files do not say their width: the tokenizer's, as `encode` writes them.
        docs = idio.read_ids(data, fmt, args.dtype or idio.dtype_for(tok.n_vocab))
    except ValueError as e:
        raise UserError(f"{path}: {e}") from None
    text = "".join(
        tok.decode(d, errors=args.errors) + ("\n" if fmt == "text" else "") for d in docs
    )
    sys.stdout.write(text)


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None


def _write_output(path: str | None, write: Any) -> None:
    if path is None:
        write(_stdout())
        _stdout().flush()
        return
    from tokenmill.fileio import atomic_writer

    with atomic_writer(path) as f:
        write(f)


def cmd_count(args: argparse.Namespace) -> None:
    toks = [(spec, _load(spec)) for spec in args.tokenizer]
    rows = []
    inputs = _inputs(args)
    totals = {spec: 0 for spec, _ in toks}
    for name, text in inputs:
        row: dict[str, Any] = {"file": name, "bytes": len(text.encode("utf-8"))}
        for spec, tok in toks:
            n = tok.count(text, **_special_kwargs(args))
            row[spec] = n
            totals[spec] += n
        rows.append(row)
    total_bytes = sum(r["bytes"] for r in rows)
    if args.json:
        _emit_json({"files": rows, "total": {"bytes": total_bytes, **totals}})
        return
    headers = ["file", "bytes", *[spec for spec, _ in toks]]
    table = [[r["file"], f"{r['bytes']:,}", *[f"{r[s]:,}" for s, _ in toks]] for r in rows]
    if len(rows) > 1:
        table.append(["total", f"{total_bytes:,}", *[f"{totals[s]:,}" for s, _ in toks]])
    _print_table(headers, table)


def _print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i == 0 else str(c).rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )
    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


def cmd_show(args: argparse.Namespace) -> None:
    from tokenmill.analysis.show import render

    tok = _load(args.tokenizer)
    text = " ".join(args.text) if args.text else _read_text("-")
    ids = tok.encode(text, **_special_kwargs(args))
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    if args.json:
        _emit_json(
            {
                "tokenizer": args.tokenizer,
                "tokens": [
                    {"id": i, "bytes": list(b), "text": b.decode("utf-8", "backslashreplace")}
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


def cmd_inspect(args: argparse.Namespace) -> None:
    from tokenmill.analysis.inspect import describe, format_description

    info = describe(_load(args.tokenizer), top=args.top)
    if args.json:
        _emit_json(info)
    else:
        sys.stdout.write(format_description(info))


def cmd_compare(args: argparse.Namespace) -> None:
    from tokenmill.analysis.compare import SNIPPETS, compare, format_comparison

    if args.files:
        # Rows are labelled by file name: full paths would crowd the table.
        samples = [(Path(name).name, text) for name, text in _inputs(args)]
    else:
        samples = list(SNIPPETS.items())
    toks = [(spec, _load(spec)) for spec in args.tokenizer]
    result = compare(toks, samples)
    if args.json:
        _emit_json(result)
    else:
        sys.stdout.write(format_comparison(result))


def cmd_convert(args: argparse.Namespace) -> None:
    from tokenmill.formats import export

    tok = _load(args.source)
    try:
        written = export.write(tok, args.dest, args.to)
    except ValueError as e:
        raise UserError(str(e)) from None
    _progress(args, f"wrote {', '.join(written)}")


def cmd_report(args: argparse.Namespace) -> None:
    from tokenmill.analysis.failures.command import run_report

    run_report(args)


def cmd_train(args: argparse.Namespace) -> None:
    from tokenmill.mainjob import run_train

    run_train(args)


def cmd_serve(args: argparse.Namespace) -> None:
    from tokenmill.serve.command import run_serve

    run_serve(args)


# ----------------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="tokenmill",
        description="Train, run and inspect byte-level BPE tokenizers.",
        epilog="TOKENIZER is a name (gpt2, cl100k_base, o200k_base, ...) or a file: a tokenmill "
        "tokenizer, a .tiktoken rank file, a HF tokenizer.json, or GPT-2's encoder.json.",
    )
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(name: str, help_: str, func: Any) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(func=func)
        sp.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        return sp

    def tokenizer_arg(sp: argparse.ArgumentParser, many: bool = False) -> None:
        if many:
            sp.add_argument(
                "-t",
                "--tokenizer",
                action="append",
                required=True,
                metavar="TOKENIZER",
                help="a tokenizer (repeat to compare several)",
            )
        else:
            sp.add_argument(
                "-t", "--tokenizer", default="gpt2", metavar="TOKENIZER", help="default: gpt2"
            )

    def special_args(sp: argparse.ArgumentParser) -> None:
        g = sp.add_mutually_exclusive_group()
        g.add_argument(
            "--allow-special",
            action="store_true",
            help="encode special-token strings (<|endoftext|>) as special tokens",
        )
        g.add_argument(
            "--plain-special",
            action="store_true",
            help="encode special-token strings as plain text",
        )

    from tokenmill.mainjob import add_train_arguments

    add_train_arguments(
        add("train", "train a tokenizer (no input: the bundled Sherlock Holmes)", cmd_train)
    )

    sp = add("encode", "text -> token ids", cmd_encode)
    sp.add_argument("files", nargs="*", metavar="FILE", help="text files (default: stdin)")
    tokenizer_arg(sp)
    special_args(sp)
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

    sp = add("decode", "token ids -> text", cmd_decode)
    sp.add_argument("file", nargs="?", metavar="FILE", help="ids file (default: stdin)")
    tokenizer_arg(sp)
    sp.add_argument(
        "-f", "--format", choices=idio.FORMATS, help="default: from the file name, else text"
    )
    sp.add_argument("--dtype", choices=idio.DTYPES, help="for bin input (default: uint16)")
    sp.add_argument(
        "--errors",
        default="replace",
        choices=["replace", "strict", "ignore"],
        help="what to do with bytes that are not UTF-8 (default: replace)",
    )

    sp = add("count", "count tokens per file and in total", cmd_count)
    sp.add_argument("files", nargs="*", metavar="FILE", help="text files or globs (default: stdin)")
    tokenizer_arg(sp, many=True)
    special_args(sp)

    sp = add("show", "show token boundaries", cmd_show)
    sp.add_argument("text", nargs="*", help="the text (default: stdin)")
    tokenizer_arg(sp)
    special_args(sp)
    sp.add_argument("--ids", action="store_true", help="show each token's id")
    sp.add_argument("--color", choices=["auto", "always", "never"], default="auto")

    sp = add("inspect", "describe a vocabulary", cmd_inspect)
    sp.add_argument("tokenizer", metavar="TOKENIZER")
    sp.add_argument("--top", type=int, default=10, help="how many merges/tokens to list")

    sp = add("compare", "compare tokenizers on the same text", cmd_compare)
    sp.add_argument("files", nargs="*", metavar="FILE", help="texts (default: built-in snippets)")
    tokenizer_arg(sp, many=True)

    sp = add("convert", "write a tokenizer in another format", cmd_convert)
    sp.add_argument("source", metavar="TOKENIZER")
    sp.add_argument("dest", metavar="OUT")
    from tokenmill.formats.export import FORMATS as OUT_FORMATS

    sp.add_argument("--to", choices=OUT_FORMATS, help="default: from OUT's name")

    from tokenmill.analysis.failures.command import add_report_arguments

    add_report_arguments(
        add("report", "failure-mode report: terminal summary + self-contained HTML", cmd_report)
    )

    from tokenmill.serve.command import add_serve_arguments

    add_serve_arguments(
        add("serve", "a tokenizer playground in the browser (and JSON API)", cmd_serve)
    )

    # Corpus shards (tokenmill.corpus): implementation in corpus/command.py.
    from tokenmill.corpus import command as corpus_cmd

    corpus_cmd.add_encode_corpus_arguments(
        add("encode-corpus", "a corpus -> token shards + manifest", corpus_cmd.run_encode_corpus)
    )
    corpus_cmd.add_verify_arguments(
        add("verify-shards", "check shards against their manifest", corpus_cmd.run_verify)
    )
    return p


def _version() -> str:
    from tokenmill import __version__

    return f"tokenmill {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tokenmill`` command; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        args.func(args)
        return 0
    except UserError as e:
        return _fail(str(e))
    except BrokenPipeError:
        # The reader went away (e.g. `tokenmill encode big.txt | head`): not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (TokenmillError, OSError, UnicodeError) as e:
        return _fail(str(e))
    except ValueError as e:  # e.g. an argument a library call rejected
        return _fail(str(e))
    except KeyboardInterrupt:
        print("tokenmill: interrupted", file=sys.stderr)
        return 130


def _fail(message: str) -> int:
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    print(f"tokenmill: error: {first}", file=sys.stderr)
    return EXIT_USAGE


def timed(f: Any, *a: Any, **k: Any) -> tuple[Any, float]:
    """Run ``f`` and return its result and the seconds it took."""
    t = time.perf_counter()
    return f(*a, **k), time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
