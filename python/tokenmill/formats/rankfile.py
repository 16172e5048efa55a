"""tiktoken rank files (``.tiktoken``): one ``<base64 token> <rank>`` line per token.

>>> import io
>>> data = dump_ranks([bytes([b]) for b in range(256)] + [b"ab"])
>>> data.splitlines()[-1]
b'YWI= 256'
>>> parse_ranks(data)[256]
b'ab'
"""

from __future__ import annotations

import base64
import gzip
import zlib
from collections.abc import Sequence
from pathlib import Path

from tokenmill import _core
from tokenmill.errors import VocabFileError


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
    """Rank-file bytes for tokens indexed by rank, exactly as tiktoken writes them."""
    return b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens))


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
