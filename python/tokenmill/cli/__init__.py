"""The ``tokenmill`` command: :func:`main` and the parser. Each subcommand group lives in its
own module (``text``: encode, decode, count, show; ``vocab``: inspect, compare, convert;
``train``; ``report``; ``serve``; ``corpus``: encode-corpus, verify-shards), and what they
share in :mod:`tokenmill.cli.common`, which describes the shell conventions they follow.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from tokenmill.cli import corpus, report, serve, text, train, vocab
from tokenmill.cli.common import disallowed_special_message
from tokenmill.errors import DisallowedSpecialTokenError, TokenmillError, UsageError

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see: {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    """The parser of the command and every subcommand."""
    p = _Parser(
        prog="tokenmill",
        description="Train, run and inspect byte-level BPE tokenizers.",
        epilog="TOKENIZER is a name (gpt2, cl100k_base, o200k_base, ...) or a file in any format, "
        "told from its content: a tokenmill tokenizer, a .tiktoken rank file (split by "
        "--pattern, with --special tokens, unless it is OpenAI's), a HF tokenizer.json, or "
        "GPT-2's encoder.json + vocab.bpe.",
    )
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(
        name: str, help_: str, run: Callable[[argparse.Namespace], None]
    ) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(func=run)
        sp.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        return sp

    for group in (train, text, vocab, report, serve, corpus):
        group.add_commands(add)
    return p


def _version() -> str:
    from tokenmill import __version__

    return f"tokenmill {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tokenmill`` command; returns the exit status."""
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            if args.quiet:
                warnings.simplefilter("ignore")
            args.func(args)
        return 0
    except UsageError as e:
        return _fail(str(e))
    except DisallowedSpecialTokenError as e:
        if hasattr(args, "allow_special"):  # the command has the flags that decide
            return _fail(disallowed_special_message(e.token))
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


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning as the command says everything: one line on stderr, no source line."""
    first = str(message).strip().splitlines()[0] if str(message).strip() else category.__name__
    print(f"tokenmill: warning: {first}", file=sys.stderr, flush=True)


def _fail(message: str) -> int:
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    print(f"tokenmill: error: {first}", file=sys.stderr)
    return EXIT_USAGE


__all__ = ["build_parser", "main"]
