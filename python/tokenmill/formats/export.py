"""Write a tokenizer in any supported format (what ``tokenmill convert`` does).

- ``tokenmill``: tokenmill's own versioned file (everything, incl. merge counts);
- ``tiktoken``: a ``.tiktoken`` rank file (ranks only: pattern and special tokens are not
  part of that format — load it with ``tokenmill.load(path, pattern=..., special_tokens=...)``);
- ``gpt2``: a folder with ``encoder.json`` and ``vocab.bpe``;
- ``hf``: HuggingFace ``tokenizer.json``.

>>> import tempfile, pathlib, tokenmill
>>> out = pathlib.Path(tempfile.mkdtemp()) / "tokenizer.json"
>>> write(tokenmill.load("gpt2"), out) == [str(out)]
True
>>> tokenmill.load(out).encode("hello world")
[31373, 995]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from tokenmill.fileio import write_atomic

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

FORMATS = ("tokenmill", "tiktoken", "gpt2", "hf")


def guess(dest: str | os.PathLike[str]) -> str:
    """The format a destination name implies."""
    name = Path(dest).name
    if name.endswith((".tiktoken", ".tiktoken.gz")):
        return "tiktoken"
    if name == "tokenizer.json" or name.endswith(".hf.json"):
        return "hf"
    if name in ("encoder.json", "vocab.bpe") or Path(dest).is_dir() or not Path(dest).suffix:
        return "gpt2"
    if name.endswith((".tokenmill", ".tokenmill.json")):
        return "tokenmill"
    raise ValueError(
        f"cannot tell the format from {name!r}: pass --to ({', '.join(FORMATS)}) or name the "
        "file *.tokenmill, *.tiktoken, tokenizer.json, or a folder for GPT-2 files"
    )


def write(tok: Tokenizer, dest: str | os.PathLike[str], fmt: str | None = None) -> list[str]:
    """Write ``tok`` to ``dest`` (atomically); returns the paths written."""
    fmt = fmt or guess(dest)
    dest = Path(dest)
    if fmt == "tiktoken":
        from tokenmill.formats import rankfile

        data = rankfile.dump_ranks(tok._core.tokens())
        if dest.name.endswith(".gz"):
            import gzip

            data = gzip.compress(data, mtime=0)
        write_atomic(dest, data)
        return [str(dest)]
    if fmt == "hf":
        from tokenmill.formats import hf

        write_atomic(dest, hf.to_json(tok).encode("utf-8"))
        return [str(dest)]
    if fmt == "gpt2":
        from tokenmill.formats import datagym

        folder = dest.parent if dest.name in ("encoder.json", "vocab.bpe") else dest
        encoder, merges = datagym.dump(
            tok._core.tokens(), tok._core.merge_parents(), tok.special_tokens
        )
        write_atomic(folder / "encoder.json", encoder)
        write_atomic(folder / "vocab.bpe", merges)
        return [str(folder / "encoder.json"), str(folder / "vocab.bpe")]
    if fmt == "tokenmill":
        from tokenmill.formats import native

        return native.write(tok, dest)
    raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
