"""The Ray engine: the same work items as the local engine, run as Ray tasks.

Ray is optional and imported only here. The driver connects to ``ray.init(address=...)`` when
given an address, else starts a local Ray with ``workers`` CPUs (or uses the Ray this process
already started). At most ``2 * workers`` tasks are in flight, so memory stays flat however
many items there are; results are consumed strictly in item order, which is what makes the
shards (and the training counts) identical to a local run.
"""

from __future__ import annotations

import io
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tokenmill.corpus import inputs as _in
from tokenmill.errors import TokenmillError

# Tasks in flight per worker: one running, one queued, so no worker waits on the driver.
IN_FLIGHT_PER_WORKER = 2


def _ray(workers: int, address: str | None) -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(
            "the Ray engine needs Ray: pip install 'ray>=2.9' (or use the local engine)"
        ) from None
    if not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    return ray


def _ordered(ray: Any, submit: Callable[[int], Any], n: int, window: int) -> Iterator[Any]:
    """Results of tasks 0..n-1 in order, with at most ``window`` submitted and unconsumed."""
    # When the caller stops early (an error), the at most ``window`` tasks still pending are
    # left to finish and their results dropped, not cancelled: with Ray 2.60, cancelling a
    # task while it completes aborted the driver process ("Check failed ... Tried to complete
    # task that was not pending" in task_manager.cc), which took a whole test run down.
    pending: deque[Any] = deque()
    nxt = 0
    while nxt < n or pending:
        while nxt < n and len(pending) < window:
            pending.append(submit(nxt))
            nxt += 1
        try:
            yield ray.get(pending.popleft())
        except Exception as e:
            # A task's own error (a bad input line...) reaches the caller as itself, not
            # wrapped in Ray's traceback.
            cause = getattr(e, "cause", None)
            if isinstance(cause, TokenmillError):
                raise cause from None
            raise


def _encode_task(tok: Any, files: list[_in.InputFile], item: _in.Item, k: int, opts: Any) -> Any:
    from tokenmill.corpus.driver import encode_item

    return encode_item(tok, files, item, k, opts)


def encode_items(
    tok: Any, plan: _in.Plan, first: int, opts: Any, workers: int, address: str | None
) -> Iterator[Any]:
    """The :class:`~tokenmill.corpus.encode.Encoded` of items ``first..``, in order."""
    ray = _ray(workers, address)
    task = ray.remote(num_cpus=1)(_encode_task)
    tok_ref = ray.put(tok)
    files_ref = ray.put(plan.files)
    items = plan.items[first:]

    def submit(i: int) -> Any:
        return task.remote(tok_ref, files_ref, items[i], first + i, opts)

    yield from _ordered(ray, submit, len(items), IN_FLIGHT_PER_WORKER * workers)


# ------------------------------------------------------------------------------ training


def _count_task(
    pattern: str, specials: list[str], f: _in.InputFile, item: _in.Item, field: str
) -> tuple[list[tuple[str, int]], int]:
    """Count the chunks of one item exactly as ``tokenmill.train`` reads that part."""
    from tokenmill import _core
    from tokenmill import training as tr
    from tokenmill.tokenizer import _clean

    trainer = _core.CoreTrainer(pattern, specials, 1)
    path = Path(f.path)
    if item.end < 0:
        batches = tr._file_batches(path, field)
    else:
        with open(path, "rb") as fh:
            fh.seek(item.start)
            data = fh.read(item.end - item.start)
        raw = io.BytesIO(data)
        gz = f" (bytes {item.start}..{item.end})"
        if f.kind == "jsonl":
            batches = tr._jsonl_batches(raw, path, field, gz)
        else:
            batches = tr._text_batches(raw, path, gz)
    for batch in batches:
        try:
            trainer.feed(batch)
        except UnicodeEncodeError:
            trainer.feed([_clean(t) for t in batch])
    return trainer.counted(), trainer.stats()[0]


def count_files(
    paths: list[Path],
    pattern: str,
    specials: list[str],
    text_field: str,
    workers: int,
    address: str | None,
    item_bytes: int,
) -> Iterator[tuple[list[tuple[str, int]], int]]:
    """Chunk counts of the training files, one result per work item, in corpus order.

    A text file is cut only where the pattern cannot match across (named patterns; a custom
    regex counts each file in one task, cut in blocks exactly as the local trainer cuts it),
    a ``.jsonl`` file after a newline, a gzip file not at all.
    """
    from tokenmill import _core

    files = _in.find_inputs(paths)
    plan = _in.plan_items(files, item_bytes, _core.pattern_name(pattern))
    if plan.unreadable:
        from tokenmill.errors import CorpusFileError

        path, problem = plan.unreadable[0]
        raise CorpusFileError(f"{path}: {problem}")
    for f in files:
        if f.kind == "parquet":
            from tokenmill.errors import TrainingError

            raise TrainingError(f"{f.path}: training reads text and .jsonl files, not Parquet")
    ray = _ray(workers, address)
    task = ray.remote(num_cpus=1)(_count_task)

    def submit(i: int) -> Any:
        item = plan.items[i]
        return task.remote(pattern, specials, files[item.file], item, text_field)

    yield from _ordered(ray, submit, len(plan.items), IN_FLIGHT_PER_WORKER * workers)
