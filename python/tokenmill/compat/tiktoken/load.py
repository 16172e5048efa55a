"""``tiktoken.load``: reading vocabulary files from paths and URLs, through tiktoken's cache.

The cache is tiktoken's: files named by the sha1 of the path or URL they came from, in
``TIKTOKEN_CACHE_DIR`` if that is set, else ``DATA_GYM_CACHE_DIR`` if that is set, else
``<tmp>/data-gym-cache`` (:func:`tokenmill.pretrained.tiktoken_cache_dirs`); a variable set to
``""`` turns caching off. So a cache filled by tiktoken serves this module, and the other way
round. The parsers keep tiktoken's rules (which lines count, what a malformed line is), so
they return the same dicts for the same files.

>>> import base64, pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.tiktoken"
>>> ranks = {bytes([b]): b for b in range(256)} | {b"hi": 256}
>>> dump_tiktoken_bpe(ranks, str(path))
>>> path.read_bytes().splitlines()[-1]
b'aGk= 256'
>>> load_tiktoken_bpe(str(path)) == ranks
True
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib
import json
import os
from typing import Any

from tokenmill.compat.tiktoken.errors import (
    AlphabetError,
    DownloadHashMismatchError,
    VocabCheckError,
)
from tokenmill.errors import MissingDependencyError, VocabFileError
from tokenmill.fileio import write_atomic
from tokenmill.formats import datagym
from tokenmill.pretrained import download, tiktoken_cache_dirs

# tiktoken waits for a download as long as it takes; a minute without a byte is a failure.
_TIMEOUT = 60.0


def read_file(blobpath: str) -> bytes:
    """The bytes at ``blobpath``: a local path, an ``http(s)://`` URL (downloaded, not
    cached), or another URL that the optional ``blobfile`` package reads (``az://``,
    ``gs://``...)."""
    if "://" not in blobpath:
        with open(blobpath, "rb", buffering=0) as f:
            return f.read()
    if blobpath.startswith(("http://", "https://")):
        return _download(blobpath)
    return _blobfile().read_bytes(blobpath)


def _download(url: str) -> bytes:
    return download(url, _TIMEOUT, offline=f"tiktoken's cache ({_cache_hint()})")


def _cache_hint() -> str:
    dirs = tiktoken_cache_dirs()
    return str(dirs[0]) if dirs else "TIKTOKEN_CACHE_DIR is empty: caching is off"


def _blobfile() -> Any:
    try:
        return importlib.import_module("blobfile")
    except ImportError as e:
        raise MissingDependencyError(
            "blobfile is not installed. Please install it by running `pip install blobfile`."
        ) from e


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether the sha256 of ``data`` is ``expected_hash`` (hex).

    >>> check_hash(b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    True
    """
    return hashlib.sha256(data).hexdigest() == expected_hash


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """:func:`read_file` through tiktoken's cache (see the module docstring). A cached copy
    whose sha256 is not ``expected_hash`` is deleted and read again; read bytes whose sha256
    is not ``expected_hash`` raise a
    :class:`~tokenmill.compat.tiktoken.errors.DownloadHashMismatchError` (a ``ValueError``,
    as tiktoken's) and are not cached. A cache folder that cannot be
    written is an error only when a variable chose it."""
    dirs = tiktoken_cache_dirs()
    if not dirs:
        return read_file(blobpath)
    chosen = "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" in os.environ
    path = dirs[0] / hashlib.sha1(blobpath.encode()).hexdigest()
    if path.exists():
        data = path.read_bytes()
        if expected_hash is None or check_hash(data, expected_hash):
            return data
        try:
            path.unlink()
        except OSError:
            pass  # read again below, and replaced if the cache can be written
    contents = read_file(blobpath)
    # An empty expected_hash is not checked here, as in tiktoken (a cached copy never
    # matches it, so it is read again every time).
    if expected_hash and not check_hash(contents, expected_hash):
        raise DownloadHashMismatchError(
            f"Hash mismatch for data downloaded from {blobpath} (expected {expected_hash}). "
            "This may indicate a corrupted download. Please try again."
        )
    try:
        write_atomic(path, contents)
    except OSError:
        # The default folder is a convenience (tiktoken's issue 75: a read-only /tmp).
        if chosen:
            raise
    return contents


def parse_tiktoken_bpe(contents: bytes, source: str = "<rank file>") -> dict[bytes, int]:
    """Token bytes -> rank from a rank file's bytes, by tiktoken's rules: one
    ``<base64 token> <rank>`` a line, empty lines skipped, ranks taken as they are (gaps
    allowed, as in ``p50k_base``), a repeated token keeping its last rank. A malformed line is
    a :class:`~tokenmill.VocabFileError` (a ``ValueError``, as tiktoken's) naming it.
    (tokenmill's native parser is 5x faster but stricter: a repeated token or base64 that is not
    canonical is an error; and building the dict takes most of the time anyway: 170 ms against
    220 ms for o200k_base.)

    >>> parse_tiktoken_bpe(b"YQ== 0\\nYg== 2\\n")
    {b'a': 0, b'b': 2}
    """
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(contents.splitlines(), start=1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except (ValueError, binascii.Error):
            raise VocabFileError(
                source, number, f"expected '<base64 token> <rank>', got {line!r}"
            ) from None
    return ranks


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """Token bytes -> rank from a rank file (a path or URL, through the cache; see
    :func:`parse_tiktoken_bpe`)."""
    return parse_tiktoken_bpe(read_file_cached(tiktoken_bpe_file, expected_hash), tiktoken_bpe_file)


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Write ``bpe_ranks`` as a rank file, in rank order. A local path is written atomically
    (tiktoken needs ``blobfile`` even for that); other URLs go through ``blobfile``."""
    data = b"".join(
        base64.b64encode(token) + b" %d\n" % rank
        for token, rank in sorted(bpe_ranks.items(), key=lambda item: item[1])
    )
    if "://" not in tiktoken_bpe_file:
        write_atomic(tiktoken_bpe_file, data)
        return
    with _blobfile().BlobFile(tiktoken_bpe_file, "wb") as f:
        f.write(data)


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """Token bytes -> rank from GPT-2's ``vocab.bpe`` and ``encoder.json`` (paths or URLs,
    through the cache), by tiktoken's rules: the 256 bytes ranked in GPT-2's order, then one
    token per line of ``vocab.bpe`` after its first (the version line) up to its last (the
    empty string after the final newline). ``encoder.json`` must give every token that rank,
    apart from ``<|endoftext|>`` and ``<|startoftext|>`` (else a
    :class:`~tokenmill.compat.tiktoken.errors.VocabCheckError`, an ``AssertionError`` as in
    tiktoken); with ``clobber_one_byte_tokens`` the bytes take ``encoder.json``'s ranks."""
    text = read_file_cached(vocab_bpe_file, vocab_bpe_hash).decode()
    ranks = {bytes([b]): rank for rank, b in enumerate(datagym.BYTE_ORDER)}
    n = len(ranks)
    # tiktoken skips the first line and the last: a file without a final newline loses its
    # last merge there too.
    for number, line in enumerate(text.split("\n")[1:-1], start=2):
        parts = line.split()
        if len(parts) != 2:
            raise VocabFileError(
                vocab_bpe_file, number, f"expected two tokens separated by a space, got {line!r}"
            )
        first, second = (_spelled(p, vocab_bpe_file, number) for p in parts)
        # A repeated merge takes the next rank and leaves a gap, as in tiktoken.
        ranks[first + second] = n
        n += 1
    data = read_file_cached(encoder_json_file, encoder_json_hash)
    try:
        encoder = json.loads(data)
    except ValueError as e:  # not JSON, or not UTF-8/16/32
        raise VocabFileError(encoder_json_file, getattr(e, "lineno", None), str(e)) from None
    if not isinstance(encoder, dict):
        raise VocabFileError(encoder_json_file, None, "expected a JSON object of token -> id")
    loaded = {_spelled(k, encoder_json_file, None): v for k, v in encoder.items()}
    # Special tokens, not mergeable tokens.
    loaded.pop(b"<|endoftext|>", None)
    loaded.pop(b"<|startoftext|>", None)
    if clobber_one_byte_tokens:
        for token, rank in loaded.items():
            if len(token) == 1:
                ranks[token] = rank
    if ranks != loaded:
        raise VocabCheckError(_mismatch(ranks, loaded, vocab_bpe_file, encoder_json_file))
    return ranks


def _spelled(text: str, source: str, line: int | None) -> bytes:
    token = datagym.bytes_or_none(text)
    if token is None:
        bad = next(c for c in text if datagym.bytes_or_none(c) is None)
        raise AlphabetError(source, line, f"{bad!r} in {text!r} is not in GPT-2's byte alphabet")
    return token


def _mismatch(merged: dict[bytes, int], encoder: dict[bytes, int], bpe: str, enc: str) -> str:
    for token, rank in merged.items():
        if encoder.get(token) != rank:
            got = encoder.get(token, "no rank")
            return (
                f"{bpe} and {enc} do not belong together: the merges give {token!r} rank "
                f"{rank}, the encoder {got} (clobber_one_byte_tokens=True takes the "
                "encoder's ranks for the single bytes)"
            )
    extra = next(t for t in encoder if t not in merged)
    return (
        f"{bpe} and {enc} do not belong together: the encoder has {extra!r} (rank "
        f"{encoder[extra]}), which no merge makes"
    )


__all__ = [
    "check_hash",
    "data_gym_to_mergeable_bpe_ranks",
    "dump_tiktoken_bpe",
    "load_tiktoken_bpe",
    "parse_tiktoken_bpe",
    "read_file",
    "read_file_cached",
]
