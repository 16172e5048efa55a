"""Token shards on disk and the manifest that describes them.

The ids are little-endian ``uint16`` (``uint32`` when the vocabulary has more than 65,536
ids), in the files of one of the layouts of :mod:`tokenmill.corpus.layouts`. In the default
one, ``shards``, a shard is raw ids with no header (what nanoGPT's ``np.memmap(path,
dtype=np.uint16, mode="r")`` reads), named ``{split}_{k:06d}.bin`` (``train_000000.bin``,
``val_000000.bin``); each split's shards concatenated are that split's token stream, cut every
``shard_tokens`` tokens (the last shard shorter). ``manifest.json`` (format version 1) records
the layout, the tokenizer and its hash, the dtype, the end-of-text id and where it goes, the
inputs, and per shard its file, tokens, documents (that start in it) and sha256 (of the whole
file, header included); while a run is unfinished it also records where to resume. While a
run writes the folder it holds ``.lock`` (see :mod:`tokenmill.corpus.driver`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from tokenmill.corpus.layouts import Layout
from tokenmill.errors import CorruptShardError, ManifestError
from tokenmill.fileio import FILE_MODE, write_atomic

FORMAT = "tokenmill-shards"
VERSION = 1
MANIFEST = "manifest.json"
LOCK = ".lock"
SPLITS = ("train", "val")


def tokenizer_hash(tok: Any) -> str:
    """sha256 of what decides the ids: the pattern, every token's bytes, the special tokens.

    >>> import tokenmill
    >>> tokenizer_hash(tokenmill.load("gpt2"))[:16]
    '5f8e3f9266e944c5'
    """
    h = hashlib.sha256()
    h.update("\0".join(tok.patterns).encode("utf-8") + b"\0")
    tokens = tok.token_byte_values()
    # The lengths, then the bytes: unambiguous, and two C-speed passes instead of a Python
    # loop of an update per token (docs/performance.md).
    h.update(np.fromiter(map(len, tokens), dtype="<u4", count=len(tokens)).tobytes())
    h.update(b"".join(tokens))
    for name, i in sorted(tok.special_tokens.items()):
        h.update(name.encode("utf-8") + b"\0" + i.to_bytes(4, "little"))
    return h.hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


class SplitWriter:
    """Streams one split's tokens into shards of exactly ``shard_tokens`` tokens (nanoGPT's
    layout: one file, ``shard_tokens`` None).

    The shard being filled is the file ``.pending-{split}.bin``, appended to as tokens come
    (so memory does not grow with the shard size) and hashed on the way; when it is full it is
    fsynced and renamed to its shard name, which is atomic: a shard name never holds half a
    shard. The first token added creates the pending file, so a run's first checkpoint
    creates no file but the manifest. At a checkpoint (:meth:`save_pending`) the pending file
    is fsynced and its length and sha256 go into the manifest; :meth:`restore` cuts it back to
    that length, checks the hash and appends from there. If the shard filled after the
    checkpoint, its bytes start the next shard's file, which :meth:`restore` takes back as the
    pending file.

    A layout with a header (llm.c's) starts the pending file with the header of a full shard,
    which is what every shard but the last has, so the running hash is the finished file's.
    The last, shorter shard gets its own count written into its header when it is finished,
    and is hashed again (one read of one shard per split and run). :meth:`restore` hashes a
    pending file with a full shard's header whatever its header says, so a run killed after
    that rewrite still resumes.
    """

    def __init__(self, out: Path, split: str, shard_tokens: int | None, layout: Layout) -> None:
        self.out = out
        self.split = split
        self.layout = layout
        self.shard_tokens = shard_tokens if shard_tokens is not None else sys.maxsize
        self.dtype = np.dtype(layout.dtype).newbyteorder("<")
        self._header = layout.header(self.shard_tokens)
        self.fill = 0
        self.docs = 0  # documents starting in the pending shard
        self.shards: list[dict[str, Any]] = []
        self.new_shards = 0
        self._file: BinaryIO | None = None
        self._hash = hashlib.sha256()

    @property
    def total(self) -> int:
        """Tokens written so far (finished shards and the pending one)."""
        return self.fill + sum(s["tokens"] for s in self.shards)

    @property
    def pending_path(self) -> Path:
        return self.out / f".pending-{self.split}.bin"

    @property
    def pending_open(self) -> bool:
        """Whether the pending file is this writer's (open); else it is not needed."""
        return self._file is not None

    def _open(self) -> BinaryIO:
        if self._file is None:
            self.out.mkdir(parents=True, exist_ok=True)
            self._file = open(self.pending_path, "wb")
            os.fchmod(self._file.fileno(), FILE_MODE)
            self._file.write(self._header)
            self._hash = hashlib.sha256(self._header)
        return self._file

    def add(self, tokens: npt.NDArray[Any], doc_starts: npt.NDArray[np.int64]) -> None:
        """Append tokens; ``doc_starts`` are the positions (into ``tokens``) where documents
        start."""
        at = 0
        n = len(tokens)
        while at < n:
            take = min(n - at, self.shard_tokens - self.fill)
            data = tokens[at : at + take].astype(self.dtype, copy=False).tobytes()
            self._open().write(data)
            self._hash.update(data)
            self.docs += int(np.count_nonzero((doc_starts >= at) & (doc_starts < at + take)))
            self.fill += take
            at += take
            if self.fill == self.shard_tokens:
                self._write()
        # Documents without a token (empty, no end-of-text id) start where the stream is.
        self.docs += int(np.count_nonzero(doc_starts >= n))

    def _write(self) -> None:
        f = self._open()
        f.flush()
        header = self.layout.header(self.fill)
        if header != self._header:
            # The last, shorter shard: its header says how many tokens it holds. Written
            # through a file of its own: the pending file may be open for appending, where
            # Linux's pwrite appends too.
            f.close()
            with open(self.pending_path, "r+b") as g:
                g.write(header)
                g.flush()
                os.fsync(g.fileno())
            size = len(header) + self.fill * self.dtype.itemsize
            self._hash = _prefix_hash(self.pending_path, size, header)
        else:
            os.fsync(f.fileno())
            f.close()
        self._file = None
        name = self.layout.shard_name(self.split, len(self.shards))
        os.replace(self.pending_path, self.out / name)
        self.shards.append(
            {
                "file": name,
                "tokens": self.fill,
                "documents": self.docs,
                "sha256": self._hash.hexdigest(),
            }
        )
        self.fill = 0
        self.docs = 0
        self.new_shards += 1

    def finish(self) -> None:
        """Write the last, shorter shard (if any tokens are pending; nanoGPT's file always)."""
        if self.fill or (self.layout.single_file and not self.shards):
            self._write()
        self.close()
        self.pending_path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def save_pending(self) -> dict[str, Any]:
        """Make the pending shard durable; what the manifest records of it."""
        if self._file is None and self.fill == 0:
            # No file to make durable, and none is created: the first manifest must be on
            # disk before any file of the run is (a 0-token pending shard restores without one).
            return {"tokens": 0, "documents": self.docs, "sha256": hashlib.sha256().hexdigest()}
        f = self._open()
        f.flush()
        os.fsync(f.fileno())
        return {"tokens": self.fill, "documents": self.docs, "sha256": self._hash.hexdigest()}

    def restore(self, shards: list[dict[str, Any]], pending: dict[str, Any]) -> None:
        """Continue a run: its finished shards (checked) and its pending shard."""
        for s in shards:
            path = self.out / s["file"]
            want = self.layout.header_bytes + s["tokens"] * self.dtype.itemsize
            if not path.is_file() or path.stat().st_size != want:
                raise ManifestError(
                    f"{path}: missing or changed since the run wrote it, so the run cannot "
                    "resume; start again with overwrite=True (--overwrite)"
                )
        self.shards = list(shards)
        k = len(shards)
        self._file, self._hash = None, hashlib.sha256()
        if pending["tokens"] == 0:
            # Nothing to take back: a pending file or a shard written after the checkpoint
            # holds only tokens that are written again.
            self.pending_path.unlink(missing_ok=True)
        else:
            size = len(self._header) + pending["tokens"] * self.dtype.itemsize
            # A kill after the pending shard filled (renamed to the next shard's name) but
            # before the next checkpoint leaves the checkpoint's bytes at the start of that
            # shard, and a new pending file holding what followed.
            follow_on = self.out / self.layout.shard_name(self.split, k)
            for path in (self.pending_path, follow_on):
                h = _prefix_hash(path, size, self._header)
                if h is not None and h.hexdigest() == pending["sha256"]:
                    break
            else:
                raise ManifestError(
                    f"{self.pending_path}: the shard being written when the run stopped is "
                    "missing or damaged; start again with overwrite=True (--overwrite)"
                )
            if path != self.pending_path:
                os.replace(path, self.pending_path)
            with open(self.pending_path, "r+b") as f:
                f.write(self._header)  # a finished last shard's header says its own count
                f.truncate(size)  # bytes written after the checkpoint are written again
            self._file = open(self.pending_path, "a+b")  # appends land at the end
            self._hash = h
        # Shards finished after the checkpoint are written again (with the same bytes).
        while (later := self.out / self.layout.shard_name(self.split, k)).is_file():
            later.unlink()
            if self.layout.single_file:
                break
            k += 1
        self.fill = pending["tokens"]
        self.docs = pending["documents"]


def _prefix_hash(path: Path, size: int, header: bytes) -> Any:
    """The running sha256 of ``header`` followed by bytes ``len(header)`` to ``size`` of
    ``path`` (the header on disk is not read: a finished shard's says its own count); None
    when the file is shorter or missing."""
    h = hashlib.sha256(header)
    try:
        with open(path, "rb") as f:
            f.seek(len(header))
            left = size - len(header)
            while left and (block := f.read(min(left, 1 << 22))):
                h.update(block)
                left -= len(block)
    except FileNotFoundError:
        return None
    return None if left else h


def layout_of(manifest: dict[str, Any]) -> Layout:
    """The layout a manifest's files are in."""
    kind = manifest["layout"]
    name = manifest["llmc"]["name"] if kind == "llmc" else ""
    return Layout(kind, manifest["dtype"], name)


def read_manifest(out: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest of a shard folder.

    Raises :class:`~tokenmill.errors.ManifestError` when the folder has none or it is not a
    tokenmill shard manifest."""
    path = Path(out) / MANIFEST
    try:
        m = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path}: no manifest; is {out} a folder written by encode?") from None
    except (OSError, ValueError) as e:
        raise ManifestError(f"{path}: cannot read it: {e}") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ManifestError(f"{path}: not a tokenmill shard manifest")
    if m.get("version") != VERSION:
        raise ManifestError(
            f"{path}: format version {m.get('version')}, this tokenmill reads version {VERSION}"
        )
    # "layout" is optional: a manifest without it is of the shards layout.
    m.setdefault("layout", "shards")
    return m


def write_manifest(out: Path, manifest: dict[str, Any]) -> None:
    write_atomic(out / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))


def verify(out: str | os.PathLike[str]) -> dict[str, Any]:
    """Re-hash every file listed in the manifest (the shards, in any layout, and nanoGPT's
    ``meta.pkl``); raise :class:`~tokenmill.errors.CorruptShardError` naming the first one
    that is missing, has the wrong size, or the wrong sha256. Returns ``{"shards": n,
    "tokens": n}`` checked (nanoGPT's ``train.bin`` and ``val.bin`` count as shards).

    >>> import tempfile, pathlib, tokenmill.corpus
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "doc.txt").write_text("hello world")
    >>> _ = tokenmill.corpus.encode([d / "doc.txt"], "gpt2", d / "shards", progress=False)
    >>> verify(d / "shards")
    {'shards': 1, 'tokens': 3}
    >>> _ = (d / "shards" / "train_000000.bin").write_bytes(b"\\0\\0\\0\\0\\0\\0")
    >>> verify(d / "shards")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    tokenmill.errors.CorruptShardError: .../train_000000.bin: sha256 ... the manifest says ...
    """
    m = read_manifest(out)
    layout = layout_of(m)
    size = np.dtype(m["dtype"]).itemsize
    n_shards = n_tokens = 0
    for split in m["splits"].values():
        for s in split["shards"]:
            path = Path(out) / s["file"]
            if not path.is_file():
                raise CorruptShardError(f"{path}: missing (listed in the manifest)")
            want = layout.header_bytes + s["tokens"] * size
            if path.stat().st_size != want:
                header = f" after a header of {layout.header_bytes}" if layout.header_bytes else ""
                raise CorruptShardError(
                    f"{path}: {path.stat().st_size} bytes, the manifest says {s['tokens']} "
                    f"tokens of {size} bytes{header}; re-encode the corpus"
                )
            _check_hash(path, s["sha256"], "the shard")
            n_shards += 1
            n_tokens += s["tokens"]
    meta = m.get("nanogpt", {}).get("meta")
    if meta is not None:
        path = Path(out) / meta["file"]
        if not path.is_file():
            raise CorruptShardError(f"{path}: missing (listed in the manifest)")
        _check_hash(path, meta["sha256"], "the file")
    return {"shards": n_shards, "tokens": n_tokens}


def _check_hash(path: Path, sha256: str, what: str) -> None:
    digest = sha256_file(path)
    if digest != sha256:
        raise CorruptShardError(
            f"{path}: sha256 {digest}, the manifest says {sha256}: {what} is corrupted; "
            "re-encode the corpus"
        )
