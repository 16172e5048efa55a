"""The driver of ``tokenmill.corpus.encode``: a corpus -> token shards, on all cores, resumable.

How the work is cut (see :mod:`tokenmill.sources.read`): the files become an ordered list of
work items; the local engine (:mod:`tokenmill.corpus.engines.local`) reads them on a reader
thread while the Rust core encodes the previous batch on ``workers`` threads (the GIL is
released), the Ray engine (:mod:`tokenmill.corpus.engines.ray`) encodes items as Ray tasks
(:func:`tokenmill.corpus.encoded.encode_item`). Either way the driver receives every item's
tokens in item order and appends them to the split's stream, which is cut into shards every
``shard_tokens`` tokens; so the shards depend only on the inputs and options, never on the
engine or the number of workers.

Resuming: each time a shard has been written (and at the end) the driver saves each split's
pending tail (``.pending-{split}.bin``) and then the manifest, which names the next item to
read. A run killed at any moment restarts from the last such checkpoint: shards written after
it are written again, identically (every file is written atomically). The first checkpoint
(item 0, no shards) is written before any other file of the run, so a folder without a
manifest holds nothing a run recorded; and a run that starts afresh in a used folder writes
its first checkpoint before it removes the earlier run's files. The files of this tool that
the manifest does not list (shards written after the checkpoint, an earlier run's shards and
pending files) are removed when a run starts or resumes.

Layouts (:mod:`tokenmill.corpus.layouts`): tokenmill's shards, nanoGPT's ``train.bin`` and
``val.bin`` (+ ``meta.pkl``), or llm.c's shards with their header. Every layout has what is
said here and below: ``manifest.json`` lies beside the files in each (the training loops
ignore it); nanoGPT's file for a split is the pending file of a shard that never fills,
renamed to ``train.bin`` at the end (so a resumed run re-hashes what it holds, once), and
llm.c's header is written with each shard (see :class:`~tokenmill.corpus.shards.SplitWriter`).
``meta.pkl`` is written atomically after the data files, before the last manifest.

Locking: a run holds an exclusive ``flock`` on ``.lock`` in the folder from before it reads
the manifest until after it writes the last one, and removes the file before releasing it; a
second run into the folder stops at once with :class:`FolderLockedError`. The kernel releases
the lock of a killed run, so the folder is never left locked (only an unlocked ``.lock``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenmill import idio
from tokenmill.corpus import layouts
from tokenmill.corpus import shards as _sh
from tokenmill.corpus.encoded import BATCH_BYTES, Encoded, Options, encode_events, encode_item
from tokenmill.corpus.engines import local
from tokenmill.errors import (
    CorpusInputError,
    CorpusOptionError,
    FolderLockedError,
    ManifestError,
)
from tokenmill.fileio import write_atomic
from tokenmill.pretrained import load
from tokenmill.progress import StatusLine
from tokenmill.sources.files import find
from tokenmill.sources.read import Doc, Event, ItemEnd, Plan, plan_items, read_item
from tokenmill.tokenizer import Tokenizer, default_threads

# A work item is about this many bytes of input (the unit of Ray tasks and of resuming).
ITEM_BYTES = 32 << 20
# Default shard size in tokens (llm.c's fineweb shards: 10^8).
SHARD_TOKENS = 100_000_000
EOT_POSITIONS = ("before", "after")


def _local(tok: Any, plan: Plan, first: int, opts: Options, workers: int) -> Iterator[Encoded]:
    """Items from ``first`` on, read on a thread and encoded here on ``workers`` threads."""

    def batches() -> Iterator[tuple[int, list[Event]]]:
        for k in range(first, len(plan.items)):
            events: list[Event] = []
            size = 0
            item = plan.items[k]
            read = read_item(item, plan.files, opts.text_field, opts.cut_text, opts.val_fraction)
            for ev in read:
                events.append(ev)
                if isinstance(ev, Doc):
                    size += len(ev.text)
                if size >= BATCH_BYTES or isinstance(ev, ItemEnd):
                    yield k, events
                    events, size = [], 0

    for k, events in local.read_ahead(batches, name="tokenmill-corpus-reader"):
        # One Encoded per batch; the item's last batch carries its ItemEnd.
        yield from encode_events(tok, k, iter(events), opts, workers, batch_bytes=1 << 62)


# ------------------------------------------------------------------------------ the driver


@dataclass
class EncodeResult:
    """What :func:`encode` did: the manifest written, and this run's own numbers."""

    manifest: dict[str, Any]
    seconds: float
    bytes_read: int
    resumed_from_item: int

    @property
    def mb_per_s(self) -> float:
        return self.bytes_read / 1e6 / max(self.seconds, 1e-9)


def encode(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    tokenizer: Any,
    out: str | os.PathLike[str],
    *,
    text_field: str = "text",
    layout: str = "shards",
    name: str | None = None,
    eot: int | str | None = "<|endoftext|>",
    eot_position: str | None = None,
    shard_tokens: int | None = None,
    val_fraction: float = 0.0,
    dtype: str | None = None,
    workers: int | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    on_error: str = "stop",
    resume: bool = True,
    overwrite: bool = False,
    progress: bool | None = None,
    item_bytes: int = ITEM_BYTES,
) -> EncodeResult:
    """Tokenize a corpus into files of ``uint16``/``uint32`` ids plus ``manifest.json``.

    ``inputs``: files, folders (their ``.txt``/``.md``/``.jsonl``/``.parquet``/``.gz`` files,
    sorted), globs. A text file is one document, a ``.jsonl`` line one document (its
    ``text_field``), a Parquet row one document (the ``text_field`` column). Text is encoded as
    plain text (special-token strings in it are ordinary text, like ``encode_ordinary``).
    ``tokenizer``: a :class:`~tokenmill.Tokenizer` or anything :func:`tokenmill.load` takes.

    ``layout`` (:mod:`tokenmill.corpus.layouts`): ``"shards"``, raw ids in shards
    ``train_000000.bin``, ...; ``"nanogpt"``, nanoGPT's ``train.bin`` and ``val.bin``
    (``uint16`` only; ``val_fraction`` is needed, as its ``train.py`` reads both) and
    ``meta.pkl`` unless the tokenizer is GPT-2's; ``"llmc"``, llm.c's shards
    ``{name}_train_000000.bin``, ... with its 256-int32 header (version 1 for ``uint16``, 7
    for ``uint32``), ``name`` defaulting to the folder's name.

    ``eot``: the end-of-text token (a special-token string or an id; None: no separator),
    written ``before`` each document (llm.c's way: every document starts with it; the
    default) or ``after`` it (nanoGPT's; the default of its layout). Shards hold
    ``shard_tokens`` tokens each (default 100,000,000), the last one fewer.
    ``val_fraction``: documents go to ``val_*.bin`` shards by a hash of their text (of its
    first 64 KiB), so equal documents share a split whatever the order or engine.
    ``workers``: threads (default: all CPUs); ``engine="ray"`` runs items as Ray tasks
    (``ray_address`` of a cluster, else a local Ray with ``workers`` CPUs). The shards are
    identical for every engine and worker count.

    ``on_error``: ``"stop"`` raises :class:`~tokenmill.errors.CorpusInputError` naming the
    file and line of a bad record (invalid JSON or UTF-8, a missing field, an unreadable file);
    ``"skip"`` leaves it out and counts it in the manifest. An unfinished run in ``out``
    (same inputs and options) is resumed, a finished one kept; ``resume=False`` starts that
    run afresh instead, ``overwrite`` replaces any run. One run writes a folder at a time:
    another raises :class:`FolderLockedError` at once.

    >>> import tempfile, pathlib, numpy as np, tokenmill.corpus
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.jsonl").write_text('{"text": "hello world"}\\n{"text": "bye"}\\n')
    >>> r = tokenmill.corpus.encode([d / "a.jsonl"], "gpt2", d / "out", progress=False)
    >>> r.manifest["splits"]["train"]["shards"][0]["file"]
    'train_000000.bin'
    >>> np.fromfile(d / "out" / "train_000000.bin", dtype=np.uint16).tolist()
    [50256, 31373, 995, 50256, 16390]
    """
    started = time.perf_counter()
    tok = _tokenizer(tokenizer)
    out_dir = Path(out)
    opts, shard_tokens = _options(
        tok, layout, eot, eot_position, dtype, text_field, val_fraction, shard_tokens
    )
    lay = _layout(layout, name, opts.dtype, out_dir)
    if on_error not in ("stop", "skip"):
        raise CorpusOptionError(f"on_error must be 'stop' or 'skip', not {on_error!r}")
    if engine not in ("local", "ray"):
        raise CorpusOptionError(f"engine must be 'local' or 'ray', not {engine!r}")
    n_workers = default_threads() if workers is None else workers
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise CorpusOptionError(f"workers must be an int >= 1, not {workers!r}")
    if not isinstance(item_bytes, int) or item_bytes < 1:
        raise CorpusOptionError(f"item_bytes must be an int >= 1, not {item_bytes!r}")

    files = find(inputs)
    plan = plan_items(files, item_bytes, opts.cut_text)
    unreadable = [(path, problem) for path, problem in plan.unreadable]
    if unreadable and on_error == "stop":
        path, problem = unreadable[0]
        raise CorpusInputError(
            f"{path}: {problem}; fix it or pass on_error='skip' (--on-error skip)"
        )

    tok_hash = _sh.tokenizer_hash(tok)
    header: dict[str, Any] = {
        "format": _sh.FORMAT,
        "version": _sh.VERSION,
        "layout": lay.kind,
        "tokenizer": {"name": tok.name, "sha256": tok_hash, "n_vocab": tok.n_vocab},
        "dtype": opts.dtype,
        "eot": {"id": opts.eot, "position": opts.eot_position if opts.eot is not None else None},
        "shard_tokens": shard_tokens,
        "val_fraction": opts.val_fraction,
        "text_field": text_field,
        "item_bytes": item_bytes,
        "inputs": [{"path": f.path, "bytes": f.size} for f in files],
        # The work items are a function of the files and item_bytes; their hash guards a
        # resumed run against files that changed in between.
        "plan": {"items": len(plan.items), "sha256": _plan_hash(plan)},
    }
    meta = None
    if lay.kind == "llmc":
        header["llmc"] = lay.describe()
    elif lay.kind == "nanogpt":
        meta = layouts.nanogpt_meta(tok.n_vocab, tok.name, tok_hash)
        meta_entry = None
        if meta is not None:
            meta_entry = {"file": layouts.META, "sha256": hashlib.sha256(meta).hexdigest()}
        header["nanogpt"] = {"meta": meta_entry}
    split_names = _sh.SPLITS[: 2 if opts.val_fraction > 0 else 1]
    writers = {s: _sh.SplitWriter(out_dir, s, shard_tokens, lay) for s in split_names}
    with _locked(out_dir):
        state = _start(out_dir, header, writers, resume, overwrite, lay)
        if state.get("complete"):
            seconds = time.perf_counter() - started
            return EncodeResult(state["manifest"], seconds, 0, len(plan.items))
        first = state["next_item"]
        counts = state["counts"]
        line_base = state["line_base"]  # newlines before the next item, in its file
        if first == 0:
            counts["skipped_files"] = len(unreadable)
            for path, problem in unreadable:
                _warn_skip(f"{path}: {problem}", progress)
            # The first manifest, before any file of this run: a run killed from here on
            # resumes, and one killed before it left nothing to resume.
            _checkpoint(out_dir, header, writers, 0, counts, 0)
        _remove_unlisted(out_dir, writers, lay, state["earlier"])

        if engine == "ray":
            from tokenmill.corpus.engines import ray

            calls = [(k, plan.items[k]) for k in range(first, len(plan.items))]
            stream: Iterator[Encoded] = ray.run_ordered(
                encode_item, (tok, plan.files, opts), calls, n_workers, ray_address
            )
        else:
            stream = _local(tok, plan, first, opts, n_workers)

        bar = _Bar(progress, sum(f.size for f in files))
        start_bytes = counts["bytes"]

        def checkpoint(k: int, lb: int) -> None:
            _checkpoint(out_dir, header, writers, k, counts, lb)

        try:
            _consume(
                stream, plan, writers, split_names, counts, line_base, on_error, progress, bar,
                checkpoint,
            )  # fmt: skip
            for w in writers.values():
                w.finish()
            if meta is not None:
                write_atomic(out_dir / layouts.META, meta)
        finally:
            for w in writers.values():
                w.close()
        # on_error is not part of the run's identity: rerunning a stopped run with "skip" resumes.
        manifest = _final(header, writers, counts) | {"on_error": on_error}
        _sh.write_manifest(out_dir, manifest)
    bar.done(manifest)
    if lay.single_file:
        _warn_empty(manifest, progress)
    return EncodeResult(
        manifest, time.perf_counter() - started, counts["bytes"] - start_bytes, first
    )


def _consume(
    stream: Iterator[Encoded],
    plan: Plan,
    writers: dict[str, _sh.SplitWriter],
    split_names: Sequence[str],
    counts: dict[str, Any],
    line_base: int,
    on_error: str,
    progress: bool | None,
    bar: _Bar,
    checkpoint: Callable[[int, int], None],
) -> None:
    """Append every item's tokens in order; a checkpoint after each item."""
    cur_file = -1
    for enc in stream:
        item = plan.items[enc.item]
        if item.file != cur_file:
            # A resumed run may start inside a file: line_base then counts its earlier lines.
            if cur_file != -1 or item.start == 0:
                line_base = 0
            cur_file = item.file
        for b in enc.bad:
            where = plan.files[b.file].path
            if b.line is not None:
                where += f", line {line_base + b.line}"
            elif b.row is not None:
                where += f", row {b.row}"
            if on_error == "stop":
                raise CorpusInputError(
                    f"{where}: {b.problem}; fix it or pass on_error='skip' (--on-error skip)"
                )
            counts["skipped_records"] += 1
            _warn_skip(f"{where}: {b.problem}", progress)
        for s, name in enumerate(split_names):
            writers[name].add(enc.tokens[s], enc.doc_starts[s])
            counts[f"{name}_documents"] += enc.docs[s]
        counts["bytes"] += enc.nbytes
        if bar.enabled:
            bar.update(counts["bytes"], sum(w.total for w in writers.values()))
        if enc.end is not None:
            line_base += enc.end.newlines
            # Cheap (the pending shard is already on disk): an fsync and a small manifest.
            checkpoint(enc.item + 1, line_base)


def _plan_hash(plan: Plan) -> str:
    return hashlib.sha256(json.dumps([i.to_json() for i in plan.items]).encode()).hexdigest()


def _tokenizer(spec: Any) -> Any:
    if isinstance(spec, Tokenizer):
        return spec
    return load(spec)


def _options(
    tok: Any,
    layout: str,
    eot: int | str | None,
    eot_position: str | None,
    dtype: str | None,
    text_field: str,
    val_fraction: float,
    shard_tokens: int | None,
) -> tuple[Options, int | None]:
    eot_id: int | None
    if eot is None:
        eot_id = None
    elif isinstance(eot, bool):
        raise CorpusOptionError(f"eot must be a special-token string, an id or None, not {eot!r}")
    elif isinstance(eot, int):
        if not 0 <= eot < tok.n_vocab:
            raise CorpusOptionError(
                f"eot id {eot} is not in this vocabulary (ids 0..{tok.n_vocab - 1})"
            )
        eot_id = eot
    elif eot in tok.special_tokens:
        eot_id = tok.special_tokens[eot]
    else:
        have = ", ".join(sorted(tok.special_tokens)) or "none"
        raise CorpusOptionError(
            f"{tok.name} has no special token {eot!r} (its special tokens: {have}); pass "
            "eot= another one, an id, or None for no separator (--eot / --no-eot)"
        )
    if layout not in layouts.LAYOUTS:
        raise CorpusOptionError(
            f"layout must be one of {', '.join(layouts.LAYOUTS)}, not {layout!r}"
        )
    if eot_position is None:
        eot_position = "after" if layout == "nanogpt" else "before"
    if eot_position not in EOT_POSITIONS:
        raise CorpusOptionError(f"eot_position must be 'before' or 'after', not {eot_position!r}")
    if not isinstance(val_fraction, int | float) or not 0 <= val_fraction < 1:
        raise CorpusOptionError(f"val_fraction must be in [0, 1), not {val_fraction!r}")
    if layout == "nanogpt":
        _nanogpt_options(tok, dtype, val_fraction, shard_tokens)
    else:
        if shard_tokens is None:
            shard_tokens = SHARD_TOKENS
        if isinstance(shard_tokens, bool) or not isinstance(shard_tokens, int) or shard_tokens < 1:
            raise CorpusOptionError(f"shard_tokens must be an int >= 1, not {shard_tokens!r}")
        if layout == "llmc" and shard_tokens > layouts.LLMC_MAX_SHARD_TOKENS:
            raise CorpusOptionError(
                f"shard_tokens {shard_tokens:,} does not fit llm.c's header, whose token count "
                f"is an int32: use at most {layouts.LLMC_MAX_SHARD_TOKENS:,}"
            )
    dt = idio.dtype_for(tok.n_vocab, dtype)
    cut_text = tok.scanner is not None
    opts = Options(eot_id, eot_position, dt, text_field, float(val_fraction), cut_text)
    return opts, shard_tokens


def _nanogpt_options(
    tok: Any, dtype: str | None, val_fraction: float, shard_tokens: int | None
) -> None:
    """Refuse what nanoGPT's train.py cannot read: ids past uint16, a missing val.bin."""
    wide = None
    if tok.n_vocab > 1 << 16:
        wide = f"{tok.name} has ids up to {tok.n_vocab - 1:,}"
    elif dtype == "uint32":
        wide = "dtype uint32 was asked for"
    if wide is not None:
        raise CorpusOptionError(
            f"the nanogpt layout is uint16 (nanoGPT's train.py reads np.uint16), and {wide}; "
            "use layout 'llmc' (uint32 shards, header version 7) or 'shards' (--layout)"
        )
    if val_fraction == 0:
        raise CorpusOptionError(
            "the nanogpt layout needs a validation split: nanoGPT's train.py reads val.bin as "
            "well as train.bin; pass val_fraction (--val-fraction), e.g. 0.0005 as nanoGPT's "
            "openwebtext/prepare.py or 0.1"
        )
    if shard_tokens is not None:
        raise CorpusOptionError(
            "the nanogpt layout writes one file per split (train.bin, val.bin): shard_tokens "
            "(--shard-tokens) does not apply to it"
        )


def _layout(kind: str, name: str | None, dtype: str, out: Path) -> layouts.Layout:
    if kind != "llmc":
        if name is not None:
            raise CorpusOptionError(
                f"name (--name) names llm.c's shards and applies to layout 'llmc' only, not "
                f"{kind!r}"
            )
        return layouts.Layout(kind, dtype)
    if name is None:
        name = out.resolve().name
    return layouts.Layout(kind, dtype, layouts.check_name(name))


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """Hold the folder's lock (creating the folder) for the ``with`` block, or raise
    :class:`FolderLockedError` at once if another run holds it."""
    if out.exists() and not out.is_dir():
        raise ManifestError(f"{out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    path = out / _sh.LOCK
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # A run that finished between the open and the flock removed the file it locked
            # (and another run may have made and locked a new one): a lock on a removed file
            # guards nothing, so lock the file that is there now.
            current = _same_file(fd, path)
        except BlockingIOError:
            holder = _lock_holder(fd)
            os.close(fd)
            raise FolderLockedError(
                f"{out}: another encode run{holder} holds this folder and is writing to it; "
                "wait for it to finish, or choose another folder"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        if current:
            break
        os.close(fd)
    try:
        # Who holds the lock, for the message of a run that is refused. Written over the old
        # text and then cut to length: ext4 flushes a file truncated to 0 when it is closed
        # (auto_da_alloc), which costs far more than this (docs/performance.md).
        pid = f"{os.getpid()}\n".encode()
        os.pwrite(fd, pid, 0)
        os.ftruncate(fd, len(pid))
        yield
    finally:
        try:
            # Removed while still held, so that a run that opens it later takes a new file.
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        return False


def _lock_holder(fd: int) -> str:
    """`` (pid N)`` from a lock file, or nothing when it holds no pid (yet)."""
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


def _start(
    out: Path,
    header: dict[str, Any],
    writers: dict[str, _sh.SplitWriter],
    resume: bool,
    overwrite: bool,
    layout: layouts.Layout,
) -> dict[str, Any]:
    """Where this run starts: afresh, or from the checkpoint of an unfinished run.

    Starting afresh removes no file: the first checkpoint replaces the manifest, and only then
    are the earlier run's files removed (:func:`_remove_unlisted`; ``earlier`` lists those the
    earlier manifest names), so a kill in between leaves a folder that resumes at item 0."""
    manifest_path = out / _sh.MANIFEST
    fresh: dict[str, Any] = {
        "next_item": 0,
        "line_base": 0,
        "counts": {"bytes": 0, "skipped_records": 0, "skipped_files": 0}
        | {f"{s}_documents": 0 for s in writers},
        "earlier": _listed(out) if manifest_path.exists() else set(),
    }
    _remove_temporary(out, layout)
    if overwrite:
        return fresh
    if not manifest_path.exists():
        # A pending file is only this tool's, and without a manifest no checkpoint refers to
        # it: a leftover of a run killed before its first manifest.
        if any(p.name.endswith(".bin") and not _PENDING.fullmatch(p.name) for p in out.iterdir()):
            raise ManifestError(
                f"{out} holds .bin files but no manifest; choose an empty folder or pass "
                "overwrite=True (--overwrite)"
            )
        return fresh
    m = _sh.read_manifest(out)
    same = {k: m.get(k) for k in header} == header
    if not same:
        changed = [k for k in header if m.get(k) != header[k]]
        raise ManifestError(
            f"{out} holds shards of a different run ({', '.join(changed)} differ); pass "
            "overwrite=True (--overwrite) to replace them, or choose another folder"
        )
    if not resume:
        return fresh
    if m.get("complete"):
        return {"complete": True, "manifest": m}
    r = m["resume"]
    for s, w in writers.items():
        w.restore(m["splits"][s]["shards"], r["pending"][s])
    return {
        "next_item": r["next_item"],
        "line_base": r["line_base"],
        "counts": r["counts"],
        "earlier": set(),
    }


def _listed(out: Path) -> set[str]:
    """The files an existing manifest lists (none when it cannot be read)."""
    try:
        m = _sh.read_manifest(out)
    except ManifestError:
        return set()
    files = {s["file"] for split in m.get("splits", {}).values() for s in split["shards"]}
    meta = m.get("nanogpt", {}).get("meta")
    return files | ({meta["file"]} if meta else set())


_PENDING = re.compile(r"\.pending-(?:train|val)\.bin")


def _remove_temporary(out: Path, layout: layouts.Layout) -> None:
    """Remove the temporary files of atomic writes a killed run left behind (``.NAME.*`` for
    a file NAME of this tool)."""
    own = layouts.own_files(layout.name).pattern
    meta = re.escape(layouts.META)
    temporary = re.compile(rf"\.(?:{own}|{meta}|manifest\.json|{_PENDING.pattern})\..+")
    if out.is_dir():
        for p in out.iterdir():
            if temporary.fullmatch(p.name) and p.is_file():
                p.unlink()


def _remove_unlisted(
    out: Path, writers: dict[str, _sh.SplitWriter], layout: layouts.Layout, earlier: set[str]
) -> None:
    """Remove the files of this tool that the manifest on disk does not refer to: an earlier
    run's (in any layout, and those its manifest lists), or written after the checkpoint this
    run resumes from (written again). nanoGPT's ``meta.pkl`` is written at the end."""
    keep = {s["file"] for w in writers.values() for s in w.shards}
    keep |= {w.pending_path.name for w in writers.values() if w.pending_open}
    own = layouts.own_files(layout.name)
    for p in out.iterdir():
        ours = own.fullmatch(p.name) or _PENDING.fullmatch(p.name) or p.name in earlier
        if ours and p.name not in keep and p.name != _sh.MANIFEST and p.is_file():
            p.unlink()


def _splits(writers: dict[str, _sh.SplitWriter], counts: dict[str, Any]) -> dict[str, Any]:
    return {
        s: {
            "shards": w.shards,
            "tokens": sum(x["tokens"] for x in w.shards),
            "documents": counts[f"{s}_documents"],
        }
        for s, w in writers.items()
    }


def _checkpoint(
    out: Path,
    header: dict[str, Any],
    writers: dict[str, _sh.SplitWriter],
    next_item: int,
    counts: dict[str, Any],
    line_base: int,
) -> None:
    pending = {s: w.save_pending() for s, w in writers.items()}
    m = header | {
        "complete": False,
        "splits": _splits(writers, counts),
        "resume": {
            "next_item": next_item,
            "line_base": line_base,
            "pending": pending,
            "counts": dict(counts),
        },
    }
    _sh.write_manifest(out, m)
    for w in writers.values():
        w.new_shards = 0


def _final(
    header: dict[str, Any], writers: dict[str, _sh.SplitWriter], counts: dict[str, Any]
) -> dict[str, Any]:
    splits = _splits(writers, counts)
    return header | {
        "complete": True,
        "splits": splits,
        "tokens": sum(s["tokens"] for s in splits.values()),
        "documents": sum(s["documents"] for s in splits.values()),
        "bytes": counts["bytes"],
        "skipped": {"records": counts["skipped_records"], "files": counts["skipped_files"]},
    }


def _warn_empty(manifest: dict[str, Any], progress: bool | None) -> None:
    """Say so when a split of nanoGPT's layout holds no token: its get_batch needs more
    tokens than its block size in both files."""
    for split, v in manifest["splits"].items():
        if v["tokens"] == 0 and progress is not False:
            sys.stderr.write(
                f"note: {split}.bin is empty, and nanoGPT's train.py reads both train.bin and "
                "val.bin; documents go to a split whole, so give more, smaller documents (a "
                ".jsonl line or a file each) or change --val-fraction\n"
            )


def _warn_skip(message: str, progress: bool | None) -> None:
    if progress is not False:
        # On a terminal the line replaces the progress bar, which is redrawn below it.
        clear = ("\r", "\x1b[K") if sys.stderr.isatty() else ("", "")
        sys.stderr.write(f"{clear[0]}skipped: {message}{clear[1]}\n")


class _Bar:
    """One line on stderr: MB read (of the total), MB/s, tokens, tokens/s."""

    def __init__(self, enabled: bool | None, total: int) -> None:
        self.line = StatusLine(enabled, interval=0.2)
        self.total = total

    @property
    def enabled(self) -> bool:
        return self.line.enabled

    def text(self, nbytes: int, ntokens: int) -> str:
        dt = max(self.line.elapsed, 1e-9)
        pct = f" ({100 * nbytes / self.total:.0f}%)" if self.total else ""
        return (
            f"encoding: {nbytes / 1e6:,.1f} MB{pct}, {nbytes / 1e6 / dt:,.1f} MB/s, "
            f"{ntokens:,} tokens, {ntokens / dt / 1e6:,.2f} M tokens/s"
        )

    def update(self, nbytes: int, ntokens: int, force: bool = False) -> None:
        if self.line.enabled:
            self.line.draw(self.text(nbytes, ntokens), force)

    def done(self, manifest: dict[str, Any]) -> None:
        if self.line.enabled:
            self.line.finish(self.text(manifest["bytes"], manifest["tokens"]))
