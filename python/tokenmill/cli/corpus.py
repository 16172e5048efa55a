"""``tokenmill encode-corpus`` and ``tokenmill verify-shards``: a corpus -> token shards
(:mod:`tokenmill.corpus`), and checking them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tokenmill.cli.common import (
    AddCommand,
    add_engine_arguments,
    add_tokenizer_argument,
    load_tokenizer,
)


def add_commands(add: AddCommand) -> None:
    """The subcommands of this module, with their arguments."""
    sp = add("encode-corpus", "a corpus -> token shards + manifest", run_encode_corpus)
    sp.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="text, .jsonl, .parquet or .gz files, folders or globs (in this order)",
    )
    add_tokenizer_argument(sp)
    sp.add_argument("-o", "--out", required=True, metavar="DIR", help="folder for the shards")
    sp.add_argument(
        "--layout",
        choices=["shards", "nanogpt", "llmc"],
        default="shards",
        help="the files: tokenmill's shards (default), nanoGPT's train.bin/val.bin + meta.pkl, "
        "or llm.c's shards with its header",
    )
    sp.add_argument(
        "--name",
        metavar="NAME",
        help="llmc: the dataset name starting the files, NAME_train_000000.bin (default: DIR's)",
    )
    sp.add_argument(
        "--text-field", default="text", help="field of .jsonl records / Parquet column (text)"
    )
    g = sp.add_mutually_exclusive_group()
    g.add_argument(
        "--eot",
        default="<|endoftext|>",
        metavar="TOKEN",
        help="separator: a special token or an id (default: <|endoftext|>)",
    )
    g.add_argument("--no-eot", action="store_true", help="no separator between documents")
    sp.add_argument(
        "--eot-position",
        choices=["before", "after"],
        default=None,
        help="before each document (llm.c; default) or after it (nanoGPT; its layout's default)",
    )
    sp.add_argument(
        "--shard-tokens",
        type=int,
        default=None,
        metavar="N",
        help="tokens per shard (default: 100,000,000; not for --layout nanogpt)",
    )
    sp.add_argument(
        "--val-fraction",
        type=float,
        default=0.0,
        metavar="F",
        help="fraction of documents for validation shards (by a hash of the text)",
    )
    sp.add_argument("--dtype", choices=["uint16", "uint32"], help="default: smallest that fits")
    sp.add_argument("-w", "--workers", type=int, default=None, help="default: all CPUs")
    add_engine_arguments(
        sp, "threads here (local, default) or Ray tasks (ray); the shards are the same"
    )
    sp.add_argument(
        "--on-error",
        choices=["stop", "skip"],
        default="stop",
        help="a bad record or unreadable file: stop (default) or skip and count it",
    )
    sp.add_argument(
        "--overwrite", action="store_true", help="replace the shards of an earlier run in DIR"
    )
    sp.add_argument(
        "--no-resume",
        action="store_true",
        help="start the run in DIR afresh instead of resuming (or keeping) it",
    )

    sp = add("verify-shards", "check shards against their manifest", run_verify)
    sp.add_argument("dir", metavar="DIR", help="a folder written by encode-corpus")


def run_encode_corpus(args: argparse.Namespace) -> None:
    from tokenmill.corpus import encode

    eot: Any = None if args.no_eot else args.eot
    if isinstance(eot, str) and eot.isdigit():
        eot = int(eot)
    r = encode(
        args.inputs,
        load_tokenizer(args, args.tokenizer),
        args.out,
        text_field=args.text_field,
        layout=args.layout,
        name=args.name,
        eot=eot,
        eot_position=args.eot_position,
        shard_tokens=args.shard_tokens,
        val_fraction=args.val_fraction,
        dtype=args.dtype,
        workers=args.workers,
        engine=args.engine,
        ray_address=args.ray_address,
        on_error=args.on_error,
        resume=not args.no_resume,
        overwrite=args.overwrite,
        progress=None if not args.quiet else False,
    )
    m = r.manifest
    summary = {
        "out": args.out,
        "tokenizer": m["tokenizer"]["name"],
        "layout": m["layout"],
        "dtype": m["dtype"],
        "splits": {
            s: {"shards": len(v["shards"]), "tokens": v["tokens"], "documents": v["documents"]}
            for s, v in m["splits"].items()
        },
        "bytes": m["bytes"],
        "skipped": m["skipped"],
        "seconds": round(r.seconds, 3),
        "mb_per_s": round(r.mb_per_s, 2),
        "resumed_from_item": r.resumed_from_item,
    }
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    lines = []
    if r.resumed_from_item:
        lines.append(f"resumed at work item {r.resumed_from_item} of {m['plan']['items']}")
    for s, v in summary["splits"].items():
        where = f"{s}.bin" if m["layout"] == "nanogpt" else _n(v["shards"], "shard")
        docs, tokens = _n(v["documents"], "document"), _n(v["tokens"], "token")
        lines.append(f"{s}: {docs}, {tokens} in {where}")
    sk = m["skipped"]
    if sk["records"] or sk["files"]:
        lines.append(
            f"skipped: {_n(sk['records'], 'bad record')}, {_n(sk['files'], 'unreadable file')}"
        )
    lines.append(
        f"{m['bytes'] / 1e6:,.1f} MB in {r.seconds:.2f} s ({r.mb_per_s:,.1f} MB/s this run); "
        f"{_files(m)} and manifest.json in {args.out}"
    )
    sys.stdout.write("\n".join(lines) + "\n")


def _files(m: dict[str, Any]) -> str:
    """What a run wrote besides its manifest, as the summary says it."""
    if m["layout"] == "nanogpt":
        names = [f"{s}.bin" for s in m["splits"]]
        if m["nanogpt"]["meta"]:
            names.append(m["nanogpt"]["meta"]["file"])
        return f"nanoGPT's {m['dtype']} " + ", ".join(names)
    if m["layout"] == "llmc":
        header = m["llmc"]["header"]
        return f"llm.c's {m['dtype']} shards (header version {header['version']})"
    return f"{m['dtype']} shards"


def _n(count: int, noun: str) -> str:
    """``1 shard``, ``2 shards``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def run_verify(args: argparse.Namespace) -> None:
    from tokenmill.corpus import verify

    got = verify(args.dir)
    if args.json:
        sys.stdout.write(json.dumps({"ok": True, **got}) + "\n")
    else:
        sys.stdout.write(
            f"ok: {_n(got['shards'], 'shard')}, {_n(got['tokens'], 'token')} match the manifest\n"
        )
