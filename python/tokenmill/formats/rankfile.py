"""tiktoken rank files (``.tiktoken``, gzipped or not): one ``<base64 token> <rank>`` line
per token.

A rank file holds the ranks alone. The split pattern is given when it is loaded
(``tokenmill.load(path, pattern=...)``, ``tiktoken.Encoding(pat_str=...)``), and a load
without one says so; OpenAI's own files are recognised by their sha256 and get their pattern
and special tokens from :mod:`tokenmill.formats.openai`.

The ranks may leave gaps, ids no line gives, as tiktoken allows: OpenAI's own ``p50k_base``
has ``<|endoftext|>`` at 50256, between its ranks. A special token may take a gap's id; an id
left empty is unknown to ``decode``. A rank may not run past twice the number of tokens (a
rank in the billions is damage, not a gap).

An empty token (base64 of nothing: Whisper's ``multilingual.tiktoken`` ends with ``= 50256``)
is a gap too: tiktoken takes it and no text encodes to it, so every text gets tiktoken's ids;
decoding its id is an unknown id, where tiktoken gives ``b""``.

Special tokens would be lost without a word, so :func:`write` refuses a tokenizer that has
any, unless its ranks are an OpenAI vocabulary's that load back with the same ones.

>>> data = dump_ranks([bytes([b]) for b in range(256)] + [b"ab"])
>>> data.splitlines()[-1]
b'YWI= 256'
>>> parse_ranks(data)[256]
b'ab'
>>> looks_like(data), looks_like(b'{"model": {}}')
(True, False)
"""

from __future__ import annotations

import base64
import gzip
import os
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tokenmill import _core
from tokenmill.errors import UnsupportedFormatError, VocabFileError
from tokenmill.fileio import write_atomic
from tokenmill.formats import openai
from tokenmill.formats.loading import Vocabulary

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# The first line of a rank file: a base64 token, one space, its rank.
_FIRST_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+\r?(?:\n|$)")


def parse_ranks(data: bytes, source: str = "<rank file>") -> list[bytes]:
    """Tokens by rank from rank-file bytes (gzip is detected). Errors name ``source`` and line."""
    data = maybe_gunzip(data, source)
    try:
        return _core.parse_rank_file(data)
    except VocabFileError as e:
        raise VocabFileError(source, e.line, e.problem) from None


def read_ranks(path: str | Path) -> list[bytes]:
    """Tokens by rank from a ``.tiktoken`` file (optionally gzipped)."""
    return parse_ranks(Path(path).read_bytes(), str(path))


def dump_ranks(tokens: Sequence[bytes]) -> bytes:
    """Rank-file bytes for tokens indexed by rank, exactly as tiktoken writes them; an empty
    token is a gap, a rank without a line.

    >>> dump_ranks([b"a", b"", b"b"])
    b'YQ== 0\\nYg== 2\\n'
    """
    return b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens) if t)


def maybe_gunzip(data: bytes, source: str = "<gzip data>") -> bytes:
    """Decompress gzip data; pass anything else through. Damaged gzip data (truncated,
    corrupt, a bad checksum) is a :class:`VocabFileError` naming ``source``."""
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        # EOFError: truncated; BadGzipFile: a bad header, checksum or trailing bytes;
        # zlib.error: corrupt compressed data.
        problem = "truncated" if isinstance(e, EOFError) else str(e)
        raise VocabFileError(source, None, f"damaged gzip data: {problem}") from None


def looks_like(data: bytes) -> bool:
    """Whether (uncompressed) ``data`` starts as a rank file does: ``<base64> <rank>``."""
    return _FIRST_LINE.match(data) is not None


def vocabulary(data: bytes, source: str) -> Vocabulary:
    """What the rank file ``data`` (gzip is detected) says: its ranks, and for an OpenAI
    vocabulary its pattern and special tokens. Tokens are parsed when the tokenizer is built
    (``rank_data``); errors name ``source`` and the line.

    >>> vocab = vocabulary(dump_ranks([bytes([b]) for b in range(256)]), "bytes.tiktoken")
    >>> vocab.name, vocab.pattern, vocab.special_tokens
    ('bytes', None, {})
    """
    data = maybe_gunzip(data, source)
    kept = openai.known(data)
    return Vocabulary(
        source=source,
        name=Path(source).name.split(".")[0] or source,
        tokens=None,
        pattern=kept.pattern if kept else None,
        special_tokens=dict(kept.special_tokens) if kept else {},
        rank_data=data,
    )


def write(tok: Tokenizer, path: str | os.PathLike[str]) -> list[str]:
    """Write the ranks of ``tok`` to ``path`` (gzipped when it ends in ``.gz``); refuses a
    tokenizer with special tokens that a load would not give back (see the module docstring).
    Returns the paths written."""
    path = Path(path)
    if tok.normalizer:
        raise UnsupportedFormatError(
            f"a .tiktoken rank file holds the ranks alone: {tok.name}'s {tok.normalizer} "
            "normalizer would be lost and its ids with it; save it as *.tokenmill or "
            "tokenizer.json, which hold it"
        )
    if tok.added_tokens:
        raise UnsupportedFormatError(
            f"a .tiktoken rank file holds the ranks alone: {tok.name}'s "
            f"{len(tok.added_tokens)} added tokens would be lost and their ids with them; save "
            "it as *.tokenmill or tokenizer.json, which hold them"
        )
    data = dump_ranks(tok.token_bytes_list())
    specials = tok.special_tokens
    kept = openai.known(data)
    if specials and (kept is None or kept.special_tokens != specials):
        shown = ", ".join(sorted(specials)[:3]) + (
            f" and {len(specials) - 3} more" if len(specials) > 3 else ""
        )
        lost = (
            "would be lost"
            if kept is None
            else f"would come back as {kept.name}'s, whose ranks these are"
        )
        raise UnsupportedFormatError(
            f"a .tiktoken rank file holds the ranks alone: {tok.name}'s special tokens "
            f"({shown}) {lost}; save it as *.tokenmill or tokenizer.json, which hold them, or "
            "for tiktoken write the ranks alone, tokenmill.Tokenizer(tok.mergeable_ranks, "
            "tok.pattern).save(path), and give tiktoken the special tokens"
        )
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    write_atomic(path, data)
    return [str(path)]
