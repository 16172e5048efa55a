"""Tokenizer files: the one registry of their formats. It tells a file's format from its
content, reads it, and writes a tokenizer in any format; ``tokenmill.load(path)``,
``Tokenizer.save`` and ``tokenmill convert`` all go through it.

=============  ==============================================  ================================
format         files                                           holds
=============  ==============================================  ================================
``tokenmill``  ``*.tokenmill`` (+ a readable ``*.vocab.txt``)  everything, merge counts too
``hf``         ``tokenizer.json`` (any ``*.json``)             everything HF runs as tokenmill
``tiktoken``   ``*.tiktoken``, ``*.tiktoken.gz``               the ranks; pattern given at load
``gpt2``       a folder: ``encoder.json`` + ``vocab.bpe``      tokenizers with GPT-2's pattern
``tekken``     Mistral's ``tekken.json`` (read, not written)   ranks, pattern, special tokens
=============  ==============================================  ================================

Each format's module (:mod:`~tokenmill.formats.native`, :mod:`~tokenmill.formats.hf`,
:mod:`~tokenmill.formats.rankfile`, :mod:`~tokenmill.formats.datagym`,
:mod:`~tokenmill.formats.tekken`) reads its files into a
:class:`~tokenmill.formats.loading.Vocabulary`, from which ``tokenmill.load`` builds the
tokenizer, and writes a tokenizer, refusing (:class:`~tokenmill.UnsupportedFormatError`, naming
what to use instead) one whose files would load back as another tokenizer.

**Reading** (:func:`read`, :func:`detect`) goes by what a file holds, gzipped or not: lines of
``<base64 token> <rank>`` are a rank file, a first line ``#version`` is GPT-2's ``vocab.bpe``;
a JSON object is tokenmill's when its ``"format"`` is ``"tokenmill"``, Tekken's when it has a
``"config"`` with a ``"pattern"`` and a ``"vocab"`` list, HF's when it has a ``"model"``,
GPT-2's ``encoder.json`` when it maps tokens to ids. A folder holds GPT-2's two files or a
``tokenizer.json``. Only when the content shows none of these does the name decide
(``*.tiktoken``, ``*.tokenmill``, ``encoder.json``, ``vocab.bpe``, other ``*.json`` as HF's),
so that a damaged file gets its own format's error.

**Writing** (:func:`write`) goes by the format asked for, else by the destination's name
(:func:`destination_format`); any other name is an error naming the choices.

>>> import tempfile, pathlib, tokenmill
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> tok = tokenmill.train("ab cd ab cd", 259, pattern="gpt2")
>>> write(tok, folder / "gpt2_tokenizer.json") == [str(folder / "gpt2_tokenizer.json")]
True
>>> detect((folder / "gpt2_tokenizer.json").rename(folder / "vocab.txt"))
'hf'
>>> tokenmill.load(folder / "vocab.txt") == tok
True
>>> destination_format("out/tokenizer.json"), destination_format("x.tiktoken.gz")
('hf', 'tiktoken')
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenmill.chars import FORMAT as CHARS_FORMAT
from tokenmill.errors import (
    HashMismatchError,
    InvalidArgumentError,
    UnknownTokenizerError,
    UnsupportedFormatError,
    VocabFileError,
)
from tokenmill.formats import datagym, hf, loading, native, rankfile, tekken
from tokenmill.formats.loading import Vocabulary

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer


@dataclass(frozen=True)
class Format:
    """One file format: its name, how its files are named (for messages), its writer."""

    name: str
    files: str
    write: Callable[[Tokenizer, Path], list[str]]


FORMATS: dict[str, Format] = {
    f.name: f
    for f in [
        Format("tokenmill", "*.tokenmill or *.tokenmill.json", native.write),
        Format("tiktoken", "*.tiktoken or *.tiktoken.gz", rankfile.write),
        Format("gpt2", "a folder (a name without a suffix) or encoder.json", datagym.write),
        Format("hf", "tokenizer.json or any other *.json", hf.write),
    ]
}


def destination_format(dest: str | os.PathLike[str]) -> str:
    """The format a destination's name says (see the module docstring); any other name is
    an :class:`~tokenmill.UnsupportedFormatError` naming the choices.

    >>> destination_format("holmes.tokenmill"), destination_format("encoder.json")
    ('tokenmill', 'gpt2')
    >>> destination_format("gpt2-files"), destination_format("x.hf.json")
    ('gpt2', 'hf')
    """
    path = Path(dest)
    name = path.name
    if name.endswith((".tokenmill", ".tokenmill.json")):
        return "tokenmill"
    if name.endswith((".tiktoken", ".tiktoken.gz")):
        return "tiktoken"
    if name in (datagym.ENCODER, datagym.MERGES) or path.is_dir() or not path.suffix:
        return "gpt2"
    if name.endswith(".json"):
        return "hf"
    choices = "; ".join(f"{f.name}: {f.files}" for f in FORMATS.values())
    raise UnsupportedFormatError(
        f"cannot tell the format from {name!r}: name the file as a format's files are named "
        f"({choices}), or give the format (format= in Python, --to in `tokenmill convert`)"
    )


def write(tok: Tokenizer, dest: str | os.PathLike[str], format: str | None = None) -> list[str]:
    """Write ``tok`` to ``dest`` in ``format`` (a name in :data:`FORMATS`), else in the
    format ``dest``'s name says (:func:`destination_format`), atomically; returns the paths
    written. A format that cannot hold ``tok`` refuses it, saying which can.

    >>> import tempfile, pathlib, tokenmill
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "v.tiktoken"
    >>> write(tokenmill.load("gpt2"), out) == [str(out)]
    True
    >>> tokenmill.load(out).encode("hello world")  # OpenAI's ranks: pattern known by hash
    [31373, 995]
    """
    name = format if format is not None else destination_format(dest)
    if name not in FORMATS:
        raise UnsupportedFormatError(
            f"unknown format {name!r}: the formats are {', '.join(FORMATS)}"
        )
    return FORMATS[name].write(tok, Path(dest))


def detect(path: str | os.PathLike[str]) -> str:
    """The format of the file or folder at ``path``, from its content (see the module
    docstring); a :class:`~tokenmill.VocabFileError` when it is none tokenmill reads."""
    return _found(Path(path)).format


def read(path: str | os.PathLike[str], *, sha256: str | None = None) -> Vocabulary:
    """What the tokenizer file or folder at ``path`` says, in whichever format it is
    (:func:`detect`); ``sha256`` pins the file's bytes. ``tokenmill.load(path)`` builds the
    tokenizer from it.

    >>> import json, tempfile, pathlib, tokenmill
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.json"
    >>> _ = tokenmill.train("ab cd ab cd", 259, pattern="gpt2").save(path, format="tokenmill")
    >>> vocab = read(path)
    >>> vocab.merges, vocab.special_tokens
    ([(97, 98, 2), (32, 99, 2), (257, 100, 2)], {})
    """
    p = Path(path)
    found = _found(p, sha256)
    if found.format == "gpt2":
        return datagym.vocabulary(found.path, found.doc)
    if found.format == "tiktoken":
        return rankfile.vocabulary(found.data, str(found.path))
    if found.format == "hf":
        return hf.vocabulary(found.doc, str(found.path), p.stem)
    if found.format == "tekken":
        return tekken.vocabulary(found.doc, str(found.path))
    return native.vocabulary(found.doc, str(found.path))


@dataclass(frozen=True)
class _Found:
    """A file whose format :func:`_found` told: the file (inside a folder given), its bytes
    (decompressed), and its JSON document when it is JSON."""

    format: str
    path: Path
    data: bytes = b""
    doc: Any = None


def _found(path: Path, sha256: str | None = None) -> _Found:
    if path.is_dir():
        if sha256 is not None:
            raise InvalidArgumentError(f"{path} is a folder: sha256= pins one file's bytes")
        if (path / datagym.ENCODER).exists():
            return _Found("gpt2", path)
        if (path / "tokenizer.json").is_file():
            return _found(path / "tokenizer.json")
        raise UnknownTokenizerError(
            f"{path}: a folder without GPT-2's encoder.json + vocab.bpe or HF's tokenizer.json"
        )
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise VocabFileError(source, None, f"cannot read it: {e.strerror or e}") from None
    if sha256 is not None and hashlib.sha256(raw).hexdigest() != sha256:
        raise HashMismatchError(f"{path} does not have sha256 {sha256}")
    data = rankfile.maybe_gunzip(raw, source)
    name = path.name.removesuffix(".gz")
    if rankfile.looks_like(data):
        return _Found("tiktoken", path, data)
    if datagym.is_merges(data):
        return _Found("gpt2", path, data)
    if data.lstrip()[:1] in (b"{", b"[") or name.endswith((".json", ".tokenmill")):
        return _json_format(path, name, data, loading.parse_json(data, source))
    if name.endswith(".tiktoken"):
        return _Found("tiktoken", path, data)  # its reader names the line at fault
    if name == datagym.MERGES:
        return _Found("gpt2", path, data)
    start = f"it starts {data[:24]!r}" if data else "it is empty"
    raise VocabFileError(
        source,
        None,
        f"not a tokenizer file tokenmill reads ({start}): tokenmill reads tiktoken's rank files "
        "(lines '<base64 token> <rank>'), HF's tokenizer.json, Mistral's tekken.json, GPT-2's "
        "encoder.json + vocab.bpe, and its own *.tokenmill",
    )


def _json_format(path: Path, name: str, data: bytes, doc: Any) -> _Found:
    """The format of a JSON document: by its keys, else by the file's name."""
    if isinstance(doc, dict) and doc.get("format") == CHARS_FORMAT:
        raise UnknownTokenizerError(
            f"{path} is a character-level tokenizer: load it with tokenmill.CharTokenizer.load"
        )
    if native.is_native(doc):
        return _Found("tokenmill", path, data, doc)
    if tekken.is_tekken(doc):
        return _Found("tekken", path, data, doc)
    if hf.is_hf(doc):
        return _Found("hf", path, data, doc)
    if datagym.is_encoder(doc):
        return _Found("gpt2", path, data, doc)
    # The content shows no format: the name decides, and that format's reader says what is
    # wrong with the file.
    if name.endswith((".tokenmill", ".tokenmill.json")):
        return _Found("tokenmill", path, data, doc)
    if name == datagym.ENCODER:
        return _Found("gpt2", path, data, doc)
    if name.endswith(".json"):
        return _Found("hf", path, data, doc)
    raise VocabFileError(
        str(path),
        None,
        f"a JSON {loading.kind(doc).split()[-1]} of no tokenizer format tokenmill reads: "
        'expected tokenmill\'s ("format": "tokenmill"), HF\'s tokenizer.json (with a "model"), '
        'Mistral\'s tekken.json (a "config" and a "vocab") or GPT-2\'s encoder.json (token -> id)',
    )


__all__ = ["FORMATS", "Format", "Vocabulary", "destination_format", "detect", "read", "write"]
