"""Documents -> token arrays with their end-of-text ids, per split: what the corpus driver
appends to the shards, whichever engine encoded them.

Documents come from :func:`tokenmill.sources.read.read_item`; each batch of them becomes one
:class:`Encoded` (the tokens of each split, where its documents start, and the bad records
met), and the last :class:`Encoded` of a work item carries the item's end.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from tokenmill.sources.files import InputFile
from tokenmill.sources.read import BadRecord, Doc, Event, Item, ItemEnd, read_item

# Documents are encoded in batches of about this many bytes of text.
BATCH_BYTES = 4 << 20


@dataclass
class Encoded:
    """Tokens of consecutive documents of one item, per split, as the driver consumes them."""

    item: int
    tokens: list[npt.NDArray[Any]]  # per split
    doc_starts: list[npt.NDArray[np.int64]]  # per split: where documents start in tokens
    docs: list[int]  # per split: documents that start here
    nbytes: int = 0
    bad: list[BadRecord] = field(default_factory=list)
    end: ItemEnd | None = None


@dataclass(frozen=True)
class Options:
    """What decides the ids written (everything in it is recorded in the manifest)."""

    eot: int | None
    eot_position: str
    dtype: str
    text_field: str
    val_fraction: float
    cut_text: bool


def encode_docs(
    tok: Any, docs: Sequence[Doc], opts: Options, num_threads: int, item: int
) -> Encoded:
    """Encode documents (blocks of text) into per-split token arrays with end-of-text ids."""
    n_splits = 2 if opts.val_fraction > 0 else 1
    texts = [d.text for d in docs]
    flat, offsets = tok.encode_batch_to_numpy(texts, num_threads=num_threads, disallowed_special=())
    lengths = np.diff(offsets)
    starts = np.fromiter((d.starts for d in docs), dtype=bool, count=len(docs))
    ends = np.fromiter((d.ends for d in docs), dtype=bool, count=len(docs))
    splits = np.fromiter((d.split for d in docs), dtype=np.int8, count=len(docs))
    eot = opts.eot if opts.eot is not None else 0
    before = starts if opts.eot is not None and opts.eot_position == "before" else None
    after = ends if opts.eot is not None and opts.eot_position == "after" else None
    new_len = lengths.copy()
    if before is not None:
        new_len += before
    if after is not None:
        new_len += after
    new_off = np.zeros(len(docs) + 1, dtype=np.int64)
    np.cumsum(new_len, out=new_off[1:])
    # One C call inserts every end-of-text id: faster than a scatter through np.repeat/arange
    # indices (docs/performance.md).
    if before is not None:
        flat = np.insert(flat, offsets[:-1][before], eot)
    elif after is not None:
        flat = np.insert(flat, offsets[1:][after], eot)
    out = flat.astype(opts.dtype, copy=False)
    nbytes = sum(d.nbytes for d in docs)
    if n_splits == 1:
        return Encoded(item, [out], [new_off[:-1][starts]], [int(starts.sum())], nbytes)
    labels = np.repeat(splits, new_len)
    toks, doc_starts, n_docs = [], [], []
    for s in range(n_splits):
        sel = splits == s
        off = np.zeros(int(sel.sum()) + 1, dtype=np.int64)
        np.cumsum(new_len[sel], out=off[1:])
        toks.append(out[labels == s])
        doc_starts.append(off[:-1][starts[sel]])
        n_docs.append(int(starts[sel].sum()))
    return Encoded(item, toks, doc_starts, n_docs, nbytes)


def encode_events(
    tok: Any,
    item: int,
    events: Iterator[Event],
    opts: Options,
    num_threads: int,
    batch_bytes: int = BATCH_BYTES,
) -> Iterator[Encoded]:
    """Encode the events of one item in batches; the last Encoded carries the ItemEnd."""
    docs: list[Doc] = []
    bad: list[BadRecord] = []
    size = 0
    for ev in events:
        if isinstance(ev, Doc):
            docs.append(ev)
            size += len(ev.text)
            if size >= batch_bytes:
                enc = encode_docs(tok, docs, opts, num_threads, item)
                enc.bad, bad = bad, []
                yield enc
                docs, size = [], 0
        elif isinstance(ev, BadRecord):
            bad.append(ev)
        else:
            enc = encode_docs(tok, docs, opts, num_threads, item)
            enc.bad = bad
            enc.end = ev
            yield enc
            return
    if docs or bad:
        enc = encode_docs(tok, docs, opts, num_threads, item)
        enc.bad = bad
        yield enc


def merge_encoded(parts: list[Encoded]) -> Encoded:
    """One Encoded for a whole item (what a Ray task sends back)."""
    n = len(parts[0].tokens)
    toks, starts = [], []
    for s in range(n):
        base = 0
        st = []
        for p in parts:
            st.append(p.doc_starts[s] + base)
            base += len(p.tokens[s])
        toks.append(np.concatenate([p.tokens[s] for p in parts]))
        starts.append(np.concatenate(st))
    return Encoded(
        parts[0].item,
        toks,
        starts,
        [sum(p.docs[s] for p in parts) for s in range(n)],
        sum(p.nbytes for p in parts),
        [b for p in parts for b in p.bad],
        parts[-1].end,
    )


def encode_item(tok: Any, files: list[InputFile], opts: Options, index: int, item: Item) -> Encoded:
    """Read and encode work item number ``index`` whole, on one thread (the body of a Ray
    task)."""
    events = read_item(item, files, opts.text_field, opts.cut_text, opts.val_fraction)
    return merge_encoded(list(encode_events(tok, index, events, opts, 1)))
