"""The inputs of a corpus job: files found, cut into work items, read back as documents.

A *document* is one ``.jsonl`` record (its ``text_field``), one Parquet row (the column named
``text_field``), or one whole text file. The corpus is the documents of the files in the
given order (globs and folders expand sorted), each file's documents in file order.

A *work item* is a piece of one file that a worker reads on its own: a byte range of a
``.jsonl`` file cut after a newline, a byte range of a text file cut where the split pattern
cannot match across (see :func:`tokenmill.training.safe_cut`; only for the named patterns,
a custom regex reads a text file as one item), one Parquet row group, or a whole gzip file
(gzip cannot be entered in the middle). The plan is a pure function of the files and the item
size, so every engine and every worker count sees the same items in the same order.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.jsonl").write_text('{"text": "one"}\\n{"text": "two"}\\n')
>>> plan = plan_items(find_inputs([d]), item_bytes=16, pattern="gpt2")
>>> [(i.start, i.end) for i in plan.items]
[(0, 16), (16, 32)]
>>> [e.text for e in read_item(plan.items[1], plan.files, "text", False) if isinstance(e, Doc)]
['two']
"""

from __future__ import annotations

import functools
import glob
import gzip
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tokenmill.errors import CorpusInputError

# File names a folder contributes (other files in a folder are ignored).
SUFFIXES = (".txt", ".md", ".text", ".jsonl", ".ndjson", ".json.gz", ".parquet", ".gz")
JSONL = (".jsonl", ".ndjson")
# A text file is read in blocks of about this size, each cut at a safe place.
BLOCK = 4 << 20
# ... and each block into pieces of about this size, encoded in parallel.
PIECE = 256 << 10
# The split of a document is decided by a hash of its first bytes (see doc_split).
SPLIT_KEY_BYTES = 1 << 16
# Reading forward from a nominal cut for a safe place, this much at a time.
_SEEK_READ = 1 << 16


@dataclass(frozen=True)
class InputFile:
    """One input file: its path as given, its kind and size in bytes."""

    path: str
    kind: str  # "text", "jsonl" or "parquet"
    gzip: bool
    size: int


@dataclass(frozen=True)
class Item:
    """A piece of input file number ``file``: bytes ``start:end`` (``end`` -1: to the end of
    the file), or row groups ``start:end`` of a Parquet file."""

    file: int
    start: int
    end: int

    def to_json(self) -> list[int]:
        return [self.file, self.start, self.end]


@dataclass(frozen=True)
class Plan:
    files: list[InputFile]
    items: list[Item]
    unreadable: list[tuple[str, str]]  # (path, problem) of files that could not be opened


@dataclass
class Doc:
    """A text of the corpus: a whole document, or a block of one long text document.

    ``starts``/``ends``: whether the block starts/ends its document; ``split`` is 0 (train)
    or 1 (validation)."""

    text: str
    starts: bool = True
    ends: bool = True
    split: int = 0
    nbytes: int = 0


@dataclass
class BadRecord:
    """A record that cannot be read: ``line`` counts from the start of the item (1-based),
    ``row`` is absolute (Parquet)."""

    file: int
    line: int | None
    row: int | None
    problem: str


@dataclass
class ItemEnd:
    """The end of an item: how many newlines it held (to number lines of later items)."""

    newlines: int


Event = Doc | BadRecord | ItemEnd


def find_inputs(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> list[InputFile]:
    """Expand globs and folders (sorted) into the input files, in order.

    A path that does not exist is an error here; a file that exists but cannot be read is
    reported when the plan is made (and skipped with ``on_error="skip"``).
    """
    if isinstance(inputs, str | os.PathLike):
        inputs = [inputs]
    paths: list[Path] = []
    for spec in inputs:
        name = os.fspath(spec)
        if any(ch in name for ch in "*?[") and not Path(name).exists():
            matches = sorted(glob.glob(name, recursive=True))
            if not matches:
                raise CorpusInputError(f"no files match {name!r}")
            paths.extend(Path(m) for m in matches if not Path(m).is_dir())
            continue
        path = Path(name)
        if path.is_dir():
            found = sorted(f for f in path.rglob("*") if f.is_file() and f.name.endswith(SUFFIXES))
            if not found:
                raise CorpusInputError(
                    f"{path}: no input files in this folder (looked for {', '.join(SUFFIXES)})"
                )
            paths.extend(found)
        elif path.exists() or path.is_symlink():
            paths.append(path)
        else:
            raise CorpusInputError(f"{path}: no such file")
    if not paths:
        raise CorpusInputError("no input files given")
    out = []
    for p in paths:
        name = p.name[:-3] if p.name.endswith(".gz") else p.name
        kind = (
            "jsonl" if name.endswith(JSONL) else "parquet" if name.endswith(".parquet") else "text"
        )
        try:
            size = p.stat().st_size
        except OSError:
            size = 0
        out.append(InputFile(str(p), kind, p.name.endswith(".gz"), size))
    return out


def plan_items(files: list[InputFile], item_bytes: int, pattern: str | None) -> Plan:
    """Cut the files into work items of about ``item_bytes`` (see the module docstring).
    ``pattern`` is the tokenizer's named pattern, or None for a custom regex."""
    items: list[Item] = []
    unreadable: list[tuple[str, str]] = []
    for k, f in enumerate(files):
        try:
            if f.kind == "parquet":
                items.extend(_parquet_items(k, f))
            elif f.gzip:
                with gzip.open(f.path, "rb") as g:
                    g.read(1)  # unreadable or not gzip: found now, not in a worker
                items.append(Item(k, 0, -1))
            elif f.kind == "jsonl" or pattern is not None:
                items.extend(_range_items(k, f, item_bytes, f.kind == "jsonl"))
            else:
                with open(f.path, "rb"):
                    pass
                items.append(Item(k, 0, -1))
        except (OSError, EOFError, ValueError) as e:
            unreadable.append((f.path, _problem(e)))
    return Plan(files, items, unreadable)


def _problem(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return f"cannot read it: {e.strerror}"
    return f"cannot read it: {e}"


def _range_items(k: int, f: InputFile, item_bytes: int, by_line: bool) -> Iterator[Item]:
    with open(f.path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        start = 0
        while start < size:
            end = _next_cut(fh, start + item_bytes, size, by_line)
            yield Item(k, start, end)
            start = end
        if size == 0:
            yield Item(k, 0, 0)


def _next_cut(fh: IO[bytes], at: int, size: int, by_line: bool) -> int:
    """The first cut at or after ``at``: after a newline (``by_line``), else a safe place."""
    if at >= size:
        return size
    # Look from two bytes back: a safe cut needs the two bytes before it.
    pos = max(at - 2, 0)
    fh.seek(pos)
    tail = b""
    while True:
        block = fh.read(_SEEK_READ)
        if not block:
            return size
        data = tail + block
        base = pos - len(tail)
        if by_line:
            i = data.find(b"\n", 1)
            if i >= 0:
                return base + i + 1
        else:
            cut = safe_cut_bytes(data)
            if cut:
                return base + cut
        tail = data[-2:]
        pos += len(block)


# Places where a text can be cut without changing the chunks of a named pattern (gpt2,
# cl100k, o200k): right after a newline between a printable ASCII character and an ASCII
# letter or digit (see tokenmill.training.safe_cut for why), or right before a single space
# between two ASCII letters. Why the second is safe: no alternative of the three patterns
# matches a letter followed by a space, so the chunk on the left ends at the letter either
# way; and the space, followed by a letter, starts the chunk " word" (gpt2's ` ?\p{L}+`,
# cl100k's and o200k's `[^\r\n\p{L}\p{N}]?` letter runs) whether or not the text starts
# there. The second form is what makes files with CRLF line ends or indented lines (Holmes)
# cuttable. Tested with hypothesis against the splitter (tests/test_corpus.py).
_CUT = re.compile(rb"[!-~]\n[A-Za-z0-9]|[A-Za-z] [A-Za-z]")


def _cut_of(m: re.Match[bytes]) -> int:
    return m.start() + (2 if m.group()[1] == 0x0A else 1)


def safe_cut_bytes(data: bytes) -> int:
    """The first safe place to cut ``data`` (after byte 1; see ``_CUT``); 0 if none.

    >>> safe_cut_bytes(b"a \\nb.\\nc"), safe_cut_bytes(b"  ab cd"), safe_cut_bytes(b"12 34")
    (6, 4, 0)
    """
    m = _CUT.search(data, 1)
    return _cut_of(m) if m else 0


def _last_safe_cut(data: bytes) -> int:
    """The last safe place to cut ``data`` (0 if none), looking back from its end."""
    window = 1 << 16
    while True:
        lo = max(0, len(data) - window)
        last = None
        for last in _CUT.finditer(data, lo):  # noqa: B007 (the last match is wanted)
            pass
        if last is not None:
            return _cut_of(last)
        if lo == 0:
            return 0
        window *= 4


def _parquet_items(k: int, f: InputFile) -> Iterator[Item]:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    meta = pq.ParquetFile(f.path).metadata
    for g in range(meta.num_row_groups):
        yield Item(k, g, g + 1)
    if meta.num_row_groups == 0:
        yield Item(k, 0, 0)


# ------------------------------------------------------------------------------ reading


def doc_split(head: bytes, val_fraction: float) -> int:
    """1 (validation) when the hash of a document's first bytes falls in ``val_fraction``, else
    0. A hash of the content, not the position: identical documents always land in the same
    split (no exact duplicate leaks from train into validation), and any reader of any piece
    decides the same.

    >>> doc_split(b"some document", 0.0), doc_split(b"some document", 1.0)
    (0, 1)
    """
    if val_fraction <= 0:
        return 0
    h = int.from_bytes(hashlib.blake2b(head[:SPLIT_KEY_BYTES], digest_size=8).digest(), "big")
    return 1 if h < val_fraction * 2.0**64 else 0


@functools.lru_cache(maxsize=64)
def _file_split(path: str, gzipped: bool, size: int, mtime_ns: int, val_fraction: float) -> int:
    """The split of a whole text file, from its head: read once per file and process, not
    once per item (a long file is many items). ``size`` and ``mtime_ns`` key the cache to
    the file's version."""
    with gzip.open(path, "rb") if gzipped else open(path, "rb") as h:
        return doc_split(h.read(SPLIT_KEY_BYTES), val_fraction)


def read_item(
    item: Item,
    files: list[InputFile],
    field: str,
    cut_text: bool,
    val_fraction: float = 0.0,
) -> Iterator[Event]:
    """The documents (and bad records) of one item, in order, ending with an :class:`ItemEnd`.
    ``cut_text``: text documents may be cut into blocks at safe places (named patterns)."""
    f = files[item.file]
    try:
        if f.kind == "parquet":
            yield from _parquet_docs(item, f, field, val_fraction)
            yield ItemEnd(0)
        elif f.kind == "jsonl":
            yield from _jsonl_docs(item, f, field, val_fraction)
        else:
            yield from _text_docs(item, f, cut_text, val_fraction)
    except (OSError, EOFError, ValueError) as e:
        # Unreadable (permissions, a truncated gzip...): the rest of the item is lost.
        yield BadRecord(item.file, None, None, _problem(e))
        yield ItemEnd(0)


def _open_range(f: InputFile, item: Item) -> tuple[IO[bytes], int]:
    """The file positioned at the item's start, and how many bytes to read (-1: all)."""
    fh: IO[bytes] = gzip.open(f.path, "rb") if f.gzip else open(f.path, "rb")  # type: ignore[assignment]
    if item.start:
        fh.seek(item.start)
    return fh, (-1 if item.end < 0 else item.end - item.start)


def _lines(fh: IO[bytes], limit: int) -> Iterator[bytes]:
    if limit < 0:
        yield from fh
        return
    left = limit
    while left > 0:
        line = fh.readline(left)
        if not line:
            return
        left -= len(line)
        yield line


def _jsonl_docs(item: Item, f: InputFile, field: str, val_fraction: float) -> Iterator[Event]:
    fh, limit = _open_range(f, item)
    lineno = 0
    with fh:
        for raw in _lines(fh, limit):
            lineno += 1
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield BadRecord(item.file, lineno, None, f"not UTF-8 at byte {e.start} of the line")
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                yield BadRecord(item.file, lineno, None, f"not JSON ({e.msg})")
                continue
            if not isinstance(record, dict) or field not in record:
                yield BadRecord(
                    item.file,
                    lineno,
                    None,
                    f"no {field!r} field (name the field with text_field / --text-field)",
                )
                continue
            text = record[field]
            if not isinstance(text, str):
                yield BadRecord(
                    item.file, lineno, None, f"field {field!r} is {type(text).__name__}, not text"
                )
                continue
            data = text.encode("utf-8", "surrogatepass")
            yield Doc(text, split=doc_split(data, val_fraction), nbytes=len(raw))
    yield ItemEnd(lineno)


def _text_docs(item: Item, f: InputFile, cut_text: bool, val_fraction: float) -> Iterator[Event]:
    first = item.start == 0
    split = 0
    if val_fraction > 0:
        # Every piece of a long document decides its split from the document's head.
        st = os.stat(f.path)
        split = _file_split(f.path, f.gzip, st.st_size, st.st_mtime_ns, val_fraction)
    fh, limit = _open_range(f, item)
    newlines = 0
    pending = b""
    emitted = False
    with fh:
        left = limit
        while True:
            want = BLOCK if left < 0 else min(BLOCK, left)
            block = fh.read(want) if want else b""
            if left >= 0:
                left -= len(block)
            data = pending + block
            final = not block
            if final:
                cut = len(data)
            elif cut_text:
                cut = _last_safe_cut(data)
                if not cut:
                    pending = data
                    continue
            else:
                pending = data
                continue
            block, pending = data[:cut], data[cut:]
            pieces = _pieces(block) if cut_text else [block]
            for k, piece in enumerate(pieces):
                if not piece and (emitted or not final):
                    continue
                text, bad = _decode_lines(piece, newlines)
                for line, problem in bad:
                    yield BadRecord(item.file, line, None, problem)
                yield Doc(
                    text,
                    starts=first and not emitted,
                    ends=final and k == len(pieces) - 1 and (item.end < 0 or item.end >= f.size),
                    split=split,
                    nbytes=len(piece),
                )
                newlines += piece.count(b"\n")
                emitted = True
            if final:
                break
    yield ItemEnd(newlines)


def _pieces(block: bytes) -> list[bytes]:
    """A block of one text document cut at safe places into pieces of about ``PIECE`` bytes:
    the batch encoder spreads texts over its threads, so one 4 MB text would use one."""
    out = []
    at = 0
    while len(block) - at > 2 * PIECE:
        cut = safe_cut_bytes(block[at + PIECE : at + 2 * PIECE])
        if not cut:
            break
        out.append(block[at : at + PIECE + cut])
        at += PIECE + cut
    out.append(block[at:])
    return out


def _decode_lines(data: bytes, newlines_before: int) -> tuple[str, list[tuple[int, str]]]:
    """Decode text; lines that are not UTF-8 are dropped and reported (line numbers count from
    the item's start)."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    good: list[str] = []
    bad: list[tuple[int, str]] = []
    for n, line in enumerate(data.splitlines(keepends=True)):
        try:
            good.append(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            bad.append((newlines_before + n + 1, f"not UTF-8 at byte {e.start} of the line"))
    return "".join(good), bad


def _parquet_docs(item: Item, f: InputFile, column: str, val_fraction: float) -> Iterator[Event]:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    pf = pq.ParquetFile(f.path)
    if item.end <= item.start:
        return
    if column not in pf.schema_arrow.names:
        yield BadRecord(
            item.file,
            None,
            None,
            f"no column {column!r} (columns: {', '.join(pf.schema_arrow.names)}); name the "
            "column with text_field / --text-field",
        )
        return
    meta = pf.metadata
    row0 = sum(meta.row_group(g).num_rows for g in range(item.start))
    table = pf.read_row_group(item.start, columns=[column])
    values: list[Any] = table.column(0).to_pylist()
    for i, text in enumerate(values):
        if not isinstance(text, str):
            what = "null" if text is None else type(text).__name__
            yield BadRecord(item.file, None, row0 + i + 1, f"column {column!r} is {what}, not text")
            continue
        data = text.encode("utf-8", "surrogatepass")
        yield Doc(text, split=doc_split(data, val_fraction), nbytes=len(data))
