"""``tokenmill serve``: load the tokenizers once, bind, print the URL, serve the playground
(:mod:`tokenmill.serve`)."""

from __future__ import annotations

import argparse
import errno
import sys

from tokenmill.cli.common import (
    AddCommand,
    add_load_arguments,
    load_tokenizers,
    progress,
    size,
)
from tokenmill.errors import UsageError

DEFAULT_TOKENIZERS = ("gpt2", "cl100k_base", "o200k_base")
DEFAULT_PORT = 8000


def add_commands(add: AddCommand) -> None:
    """The subcommand of this module, with its arguments."""
    from tokenmill.serve.api import DEFAULT_MAX_BODY

    sp = add("serve", "a tokenizer playground in the browser (and JSON API)", run_serve)
    sp.add_argument(
        "tokenizers",
        nargs="*",
        metavar="TOKENIZER",
        help="names or files, e.g. a tokenizer from `tokenmill train` "
        f"(default: {' '.join(DEFAULT_TOKENIZERS)})",
    )
    add_load_arguments(sp)
    sp.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: 127.0.0.1, this machine only)",
    )
    sp.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port (default: {DEFAULT_PORT}; 0 picks a free one)",
    )
    sp.add_argument("--open", action="store_true", help="open the page in the default web browser")
    sp.add_argument(
        "--max-body",
        type=size,
        default=DEFAULT_MAX_BODY,
        metavar="SIZE",
        help="largest request body accepted, e.g. 2M (default), 512K",
    )
    sp.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests addressed to this host name (besides localhost and IP "
        "addresses), e.g. when serving with --host 0.0.0.0 behind a name",
    )


def run_serve(args: argparse.Namespace) -> None:
    from tokenmill.serve.api import Playground, display_names
    from tokenmill.serve.server import PlaygroundServer, warn_if_exposed

    specs = list(args.tokenizers) or list(DEFAULT_TOKENIZERS)
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    names = display_names(specs)
    if len(set(names)) != len(names):
        raise UsageError("the same tokenizer is given twice")
    playground = Playground(dict(zip(names, load_tokenizers(args, specs), strict=True)))
    try:
        server = PlaygroundServer(
            playground,
            args.host,
            args.port,
            max_body=args.max_body,
            allowed_hosts=frozenset(args.allow_host),
            log=None if args.quiet else sys.stderr,
        )
    except OSError as e:
        hint = " (pass --port 0 for any free port)" if e.errno == errno.EADDRINUSE else ""
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {e.strerror}{hint}") from None
    warn_if_exposed(args.host)
    if args.json:
        import json

        print(json.dumps({"url": server.url, "tokenizers": names}), flush=True)
    else:
        print(f"tokenmill playground at {server.url}  (Ctrl-C stops it)", flush=True)
    if args.open:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl-C is how a playground is meant to stop
        progress(args, "stopped")
    finally:
        server.server_close()
