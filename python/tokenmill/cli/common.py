"""What the subcommands of ``tokenmill`` share: the error type, output helpers, loading a
tokenizer by name or file, reading input files, progress, and the arguments several commands
take.

Shell conventions throughout: inputs are files (or ``-``/nothing for stdin), results go to
stdout, progress to stderr, ``--quiet`` silences progress, ``--json`` gives machine-readable
output, and a user error prints one line ``tokenmill: error: ...`` and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from tokenmill.errors import UsageError
from tokenmill.sources.files import expand_globs

# How a command module adds a subcommand: add(name, help, run) -> its argument parser.
AddCommand = Callable[[str, str, Callable[[argparse.Namespace], None]], argparse.ArgumentParser]


def size(text: str) -> int:
    """A byte count such as ``2000000``, ``512K`` or ``2M`` (an argparse type).

    >>> size("2M"), size("512k"), size("1000")
    (2097152, 524288, 1000)
    """
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    t = text.strip().upper().removesuffix("B")
    try:
        n = int(t[:-1]) * units[t[-1]] if t and t[-1] in units else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 2M, 512K)") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"the size must be positive, got {text!r}")
    return n


def stdout() -> BinaryIO:
    """Standard output, for bytes."""
    return sys.stdout.buffer


def progress(args: argparse.Namespace, message: str) -> None:
    """A line on stderr, unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr, flush=True)


def emit_json(value: Any) -> None:
    """``value`` as indented JSON on stdout (what ``--json`` prints)."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def load_tokenizer(args: argparse.Namespace, spec: str) -> Any:
    """The tokenizer a ``TOKENIZER`` argument names (see ``tokenmill --help``), a rank file
    split by ``--pattern`` with the ``--special`` tokens (:func:`load_tokenizers`)."""
    return load_tokenizers(args, [spec])[0]


def load_tokenizers(args: argparse.Namespace, specs: list[str]) -> list[Any]:
    """The tokenizers ``TOKENIZER`` arguments name. ``--pattern`` and ``--special`` give what a
    rank file does not say; a tokenizer that says its own keeps it, and flags that no
    tokenizer needs are an error rather than silently ignored."""
    from tokenmill.errors import MissingPatternError
    from tokenmill.pretrained import load

    pattern: str | None = getattr(args, "pattern", None)
    specials = special_tokens_argument(getattr(args, "special", None) or [])
    used = False
    toks = []
    for spec in specs:
        try:
            tok = load(spec)
        except MissingPatternError as e:
            if pattern is None:
                raise UsageError(
                    f"{e.source}: a rank file does not say how to split text; pass --pattern "
                    "(gpt2, cl100k, o200k or a regex)"
                ) from None
            # A rank file loads twice when it takes special tokens: their ids follow its ranks,
            # which only the first load counts.
            tok = load(spec, pattern=pattern)
            if specials:
                tok = load(spec, pattern=pattern, special_tokens=special_ids(specials, tok.n_vocab))
            used = True
        toks.append(tok)
    if (pattern is not None or specials) and not used:
        flags = " and ".join(f for f, v in (("--pattern", pattern), ("--special", specials)) if v)
        raise UsageError(
            f"{flags}: only for a rank file (.tiktoken), which does not say its pattern and "
            f"special tokens; {', '.join(specs)} "
            + ("says its own" if len(specs) == 1 else "say their own")
        )
    return toks


def special_tokens_argument(values: list[str]) -> list[tuple[str, int | None]]:
    """``--special TOKEN[=ID]`` values as (token, id or None). A token that itself ends in
    ``=`` and digits is given with its id: ``--special 'a=1=7'``.

    >>> special_tokens_argument(["<|endoftext|>", "<|pad|>=50300"])
    [('<|endoftext|>', None), ('<|pad|>', 50300)]
    """
    out: list[tuple[str, int | None]] = []
    for value in values:
        token, eq, number = value.rpartition("=")
        if eq and token and number.isdigit():
            out.append((token, int(number)))
        else:
            out.append((value, None))
    seen = [t for t, _ in out]
    for t in seen:
        if seen.count(t) > 1:
            raise UsageError(f"--special {t!r} is given twice")
    return out


def special_ids(specials: list[tuple[str, int | None]], n_vocab: int) -> dict[str, int]:
    """Ids for the special tokens: the given ones, the others the next free ids from
    ``n_vocab`` on, in order (as ``train`` gives them).

    >>> special_ids([("<|a|>", None), ("<|b|>", 400), ("<|c|>", None)], 400)
    {'<|a|>': 401, '<|b|>': 400, '<|c|>': 402}
    """
    taken = {i for _, i in specials if i is not None}
    ids: dict[str, int] = {}
    next_id = n_vocab
    for token, given in specials:
        if given is None:
            while next_id in taken:
                next_id += 1
            given = next_id
            taken.add(given)
        ids[token] = given
    return ids


def read_bytes(path: str) -> bytes:
    """A file's bytes (``-`` = stdin)."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory") from None


def read_text(path: str) -> str:
    """A file's text (``-`` = stdin), strictly UTF-8, gzip understood: the whole file as it
    is, for the commands that take text (a ``.jsonl`` file is its JSON text here)."""
    data = read_bytes(path)
    if path != "-" and data[:2] == b"\x1f\x8b":
        import gzip
        import zlib

        try:
            data = gzip.decompress(data)
        except (EOFError, gzip.BadGzipFile, zlib.error) as e:
            # EOFError: truncated; BadGzipFile: a bad header, checksum or trailing bytes;
            # zlib.error: corrupt compressed data.
            problem = "truncated" if isinstance(e, EOFError) else str(e)
            raise UsageError(f"{path}: damaged gzip data ({problem})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not UTF-8 text (bad byte at offset {e.start})") from None


def inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(name, text) of each ``FILE`` argument, globs expanded (stdin when there is none)."""
    files = expand_globs(args.files) if args.files else ["-"]
    return [("<stdin>" if f == "-" else f, read_text(f)) for f in files]


def write_output(path: str | None, write: Callable[[BinaryIO], Any]) -> None:
    """``write`` to stdout, or to ``path`` atomically."""
    if path is None:
        write(stdout())
        stdout().flush()
        return
    from tokenmill.fileio import atomic_writer

    with atomic_writer(path) as f:
        write(f)


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    """A table on stdout: the first column left-aligned, the others right-aligned."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


# ------------------------------------------------------------------- arguments of many commands


def add_tokenizer_argument(sp: argparse.ArgumentParser, many: bool = False) -> None:
    """``-t/--tokenizer`` (repeatable with ``many``), and ``--pattern`` / ``--special`` for a
    rank file."""
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
    add_load_arguments(sp)


def add_load_arguments(sp: argparse.ArgumentParser) -> None:
    """``--pattern`` and ``--special``: what a rank file, which holds the ranks alone, does not
    say (:func:`load_tokenizers`)."""
    sp.add_argument(
        "-p",
        "--pattern",
        help="split pattern of a .tiktoken rank file: gpt2, cl100k, o200k or a regex",
    )
    sp.add_argument(
        "-s",
        "--special",
        action="append",
        default=[],
        metavar="TOKEN[=ID]",
        help="a special token of a rank file, e.g. '<|endoftext|>' (the next id) or "
        "'<|endoftext|>=50256' (repeatable)",
    )


def add_special_arguments(sp: argparse.ArgumentParser) -> None:
    """``--allow-special`` / ``--plain-special``: what special-token strings in the text are;
    ``--add-special-tokens``: the template's tokens around each input."""
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
    sp.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="put the special tokens of the tokenizer's template (BOS/EOS, from an HF file's "
        "post-processor) around each input, as HF's add_special_tokens=True does",
    )


def disallowed_special_message(token: str) -> str:
    """What the commands with ``--allow-special`` / ``--plain-special`` say when the text holds
    a special token's string and neither is given."""
    return (
        f"the text contains the special token {token!r}; pass --allow-special to encode it "
        "as that special token, or --plain-special to encode it as plain text"
    )


def special_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The encode arguments that ``--allow-special`` / ``--plain-special`` and
    ``--add-special-tokens`` stand for."""
    kwargs: dict[str, Any] = {}
    if getattr(args, "allow_special", False):
        kwargs["allowed_special"] = "all"
    if getattr(args, "plain_special", False):
        kwargs["disallowed_special"] = ()
    if getattr(args, "add_special_tokens", False):
        kwargs["add_special_tokens"] = True
    return kwargs


def add_engine_arguments(sp: argparse.ArgumentParser, engine_help: str) -> None:
    """``--engine local|ray`` and ``--ray-address``, as ``train`` and ``encode-corpus`` take
    them."""
    sp.add_argument("--engine", choices=["local", "ray"], default="local", help=engine_help)
    sp.add_argument(
        "--ray-address", metavar="ADDR", help="Ray cluster to use (default: start a local Ray)"
    )
