"""Reading corpus files: cut into work items, read back as documents.

A *document* is one ``.jsonl`` record (its ``text_field``), one Parquet row (the column named
``text_field``), or one whole text file. The corpus is the documents of the files in the
given order, each file's documents in file order.

A *work item* is a piece of one file that a worker reads on its own: a byte range of a
``.jsonl`` file cut after a newline, a byte range of a text file cut at a safe place (see
:mod:`tokenmill.sources.cut`; only when texts may be cut, else a text file is one item),
Parquet row groups, or a whole gzip file (gzip cannot be entered in the middle). The plan is
a pure function of the files and the item size, so every engine and every worker count sees
the same items in the same order. :func:`whole` is the item of a whole file.

What cannot be read (a line that is not UTF-8 or not JSON, a missing field, an unreadable
file) is met in one of two ways: :func:`read_item` yields it as a :class:`BadRecord` among
the documents, for a caller that stops or skips and counts it (the corpus encoder);
:func:`read_texts` raises :class:`~tokenmill.errors.CorpusFileError` at the first one, for a
caller where every text counts (training, the report).

>>> import tempfile, pathlib
>>> from tokenmill.sources.files import find
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "a.jsonl").write_text('{"text": "one"}\\n{"text": "two"}\\n')
>>> plan = plan_items(find([d]), item_bytes=16, cut_text=True)
>>> [(i.start, i.end) for i in plan.items]
[(0, 16), (16, 32)]
>>> [e.text for e in read_item(plan.items[1], plan.files, "text", False) if isinstance(e, Doc)]
['two']
>>> list(read_texts(whole(0), plan.files, "text", True))
['one', 'two']
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from tokenmill.errors import CorpusFileError, MissingDependencyError
from tokenmill.sources.cut import first_cut, last_cut
from tokenmill.sources.files import InputFile, input_file

# A text file is read in blocks of about this size, each cut at a safe place...
BLOCK = 4 << 20
# ... and each block into pieces of about this size: the batch encoder spreads texts over its
# threads, so one block as one text would keep one thread busy.
PIECE = 256 << 10
# The split of a document is decided by a hash of its first bytes (see doc_split).
SPLIT_KEY_BYTES = 1 << 16
# Reading forward from a nominal cut for a safe place, this much at a time.
SEEK_READ = 1 << 16


@dataclass(frozen=True)
class Item:
    """A piece of input file number ``file``: bytes ``start:end`` (``end`` -1: to the end of
    the file), or row groups ``start:end`` of a Parquet file (``end`` -1: all)."""

    file: int
    start: int
    end: int

    def to_json(self) -> list[int]:
        return [self.file, self.start, self.end]


def whole(file: int) -> Item:
    """The item that is all of input file number ``file``."""
    return Item(file, 0, -1)


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
    ``row`` is absolute (Parquet). For text that is not UTF-8, ``offset`` is the byte of the
    file (decompressed) where it stops being UTF-8, and ``detail`` what the bytes there are."""

    file: int
    line: int | None
    row: int | None
    problem: str
    offset: int | None = None
    detail: str = ""


@dataclass
class ItemEnd:
    """The end of an item: how many newlines it held (to number lines of later items)."""

    newlines: int


Event = Doc | BadRecord | ItemEnd


def plan_items(files: list[InputFile], item_bytes: int, cut_text: bool) -> Plan:
    """Cut the files into work items of about ``item_bytes`` (see the module docstring).
    ``cut_text``: text files may be cut at safe places (see
    :func:`tokenmill.sources.cut.may_cut`)."""
    items: list[Item] = []
    unreadable: list[tuple[str, str]] = []
    for k, f in enumerate(files):
        try:
            if f.kind == "parquet":
                items.extend(_parquet_items(k, f))
            elif f.gzip:
                with gzip.open(f.path, "rb") as g:
                    g.read(1)  # unreadable or not gzip: found now, not in a worker
                items.append(whole(k))
            elif f.kind == "jsonl" or cut_text:
                items.extend(_range_items(k, f, item_bytes, f.kind == "jsonl"))
            else:
                with open(f.path, "rb"):
                    pass
                items.append(whole(k))
        except (OSError, EOFError, ValueError) as e:
            unreadable.append((f.path, _problem(e)))
    return Plan(files, items, unreadable)


def _problem(e: BaseException) -> str:
    if isinstance(e, IsADirectoryError):
        return "is a folder; pass the files in it"
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
        block = fh.read(SEEK_READ)
        if not block:
            return size
        data = tail + block
        base = pos - len(tail)
        if by_line:
            i = data.find(b"\n", 1)
            if i >= 0:
                return base + i + 1
        else:
            cut = first_cut(data)
            if cut:
                return base + cut
        tail = data[-2:]
        pos += len(block)


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependencyError("reading Parquet needs pyarrow: pip install pyarrow") from None
    return pq


def _parquet_items(k: int, f: InputFile) -> Iterator[Item]:
    meta = _pyarrow_parquet().ParquetFile(f.path).metadata
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
    files: Sequence[InputFile],
    field: str,
    cut_text: bool,
    val_fraction: float = 0.0,
) -> Iterator[Event]:
    """The documents (and bad records) of one item, in order, ending with an :class:`ItemEnd`.
    ``cut_text``: text documents may be cut into blocks at safe places."""
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


def read_texts(item: Item, files: Sequence[InputFile], field: str, cut_text: bool) -> Iterator[str]:
    """The texts of one item, in order; the first thing in it that cannot be read raises
    :class:`~tokenmill.errors.CorpusFileError`, naming the file and where in it."""
    for event in read_item(item, files, field, cut_text):
        if isinstance(event, Doc):
            yield event.text
        elif isinstance(event, BadRecord):
            raise CorpusFileError(_where(files[item.file], item, event))


def read_text(path: str | os.PathLike[str], field: str = "text") -> str:
    """A whole input file as one text (its documents joined), read as :func:`read_texts`
    reads it.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.jsonl"
    >>> _ = path.write_text('{"text": "one "}\\n{"text": "two"}\\n')
    >>> read_text(path)
    'one two'
    """
    return "".join(read_texts(whole(0), [input_file(path)], field, False))


def _where(f: InputFile, item: Item, bad: BadRecord) -> str:
    """A bad record as one line: the file, where in it, and what is wrong."""
    if bad.offset is not None:
        gz = " (decompressed)" if f.gzip else ""
        return (
            f"{f.path}: not UTF-8 at byte {bad.offset}{gz} ({bad.detail}); convert it to "
            "UTF-8 first"
        )
    where = f.path
    if bad.line is not None:
        where += f", line {bad.line}"
        if item.start > 0:
            where += f" (bytes {item.start}..{item.end})"
        elif f.gzip:
            where += " (decompressed)"
    elif bad.row is not None:
        where += f", row {bad.row}"
    return f"{where}: {bad.problem}"


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


def _not_utf8(data: bytes | bytearray, e: UnicodeDecodeError) -> str:
    return f"{e.reason}: {bytes(data[e.start : e.start + 4])!r}"


def _jsonl_docs(item: Item, f: InputFile, field: str, val_fraction: float) -> Iterator[Event]:
    fh, limit = _open_range(f, item)
    lineno = 0
    offset = item.start  # of the line, in the file
    with fh:
        for raw in _lines(fh, limit):
            lineno += 1
            at, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield BadRecord(
                    item.file,
                    lineno,
                    None,
                    f"not UTF-8 at byte {e.start} of the line",
                    at + e.start,
                    _not_utf8(raw, e),
                )
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
    at = item.start  # where `pending` starts, in the file
    pending = bytearray()
    searched = 0  # where in `pending` to look for a safe cut: none starts before it
    emitted = False
    with fh:
        left = limit
        while True:
            want = BLOCK if left < 0 else min(BLOCK, left)
            block = fh.read(want) if want else b""
            if left >= 0:
                left -= len(block)
            pending += block
            final = not block
            if final:
                cut = len(pending)
            elif cut_text:
                found = last_cut(pending[searched:])
                if not found:
                    # A cut needs the two bytes before it: they are looked at again.
                    searched = max(0, len(pending) - 2)
                    continue
                cut = searched + found
            else:
                continue
            if cut == len(pending):
                data, pending = pending, bytearray()
            else:
                data = pending[:cut]
                del pending[:cut]
            searched = 0
            pieces = _pieces(data) if cut_text else [data]
            for k, piece in enumerate(pieces):
                if not piece and (emitted or not final):
                    continue  # an empty document is one empty Doc, an empty piece none
                text, bad = _decode_lines(piece, newlines, at)
                for line, offset, problem, detail in bad:
                    yield BadRecord(item.file, line, None, problem, offset, detail)
                yield Doc(
                    text,
                    starts=first and not emitted,
                    ends=final and k == len(pieces) - 1 and (item.end < 0 or item.end >= f.size),
                    split=split,
                    nbytes=len(piece),
                )
                newlines += piece.count(b"\n")
                emitted = True
                at += len(piece)
            if final:
                break
    yield ItemEnd(newlines)


def _pieces(block: bytearray) -> list[bytearray]:
    """A block of one text document cut at safe places into pieces of about ``PIECE``."""
    out = []
    at = 0
    while len(block) - at > 2 * PIECE:
        cut = first_cut(block[at + PIECE : at + 2 * PIECE])
        if not cut:
            break
        out.append(block[at : at + PIECE + cut])
        at += PIECE + cut
    out.append(block[at:])
    return out


def _decode_lines(
    data: bytearray, newlines_before: int, offset: int
) -> tuple[str, list[tuple[int, int, str, str]]]:
    """Decode text that starts at byte ``offset`` of its file; lines that are not UTF-8 are
    dropped and reported as (line, file offset, problem, detail), lines counted from the
    item's start."""
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    good: list[str] = []
    bad: list[tuple[int, int, str, str]] = []
    at = offset
    for n, line in enumerate(data.splitlines(keepends=True)):
        try:
            good.append(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            problem = f"not UTF-8 at byte {e.start} of the line"
            bad.append((newlines_before + n + 1, at + e.start, problem, _not_utf8(line, e)))
        at += len(line)
    return "".join(good), bad


def _parquet_docs(item: Item, f: InputFile, column: str, val_fraction: float) -> Iterator[Event]:
    pf = _pyarrow_parquet().ParquetFile(f.path)
    meta = pf.metadata
    end = meta.num_row_groups if item.end < 0 else item.end
    if end <= item.start:
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
    row0 = sum(meta.row_group(g).num_rows for g in range(item.start))
    for g in range(item.start, end):
        table = pf.read_row_group(g, columns=[column])
        values: list[Any] = table.column(0).to_pylist()
        for i, text in enumerate(values):
            if not isinstance(text, str):
                what = "null" if text is None else type(text).__name__
                yield BadRecord(
                    item.file, None, row0 + i + 1, f"column {column!r} is {what}, not text"
                )
                continue
            data = text.encode("utf-8", "surrogatepass")
            yield Doc(text, split=doc_split(data, val_fraction), nbytes=len(data))
        row0 += len(values)
