"""Read a shard folder (of any layout) back the way a training loop consumes it: ``(x, y)``
batches.

The shards of a split are memory-mapped (nothing is read until a batch needs it) and treated
as one token stream: a window may run from the end of one shard into the next. ``y`` is ``x``
shifted by one token, the next-token targets.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tokenmill.corpus.shards import layout_of, read_manifest
from tokenmill.errors import CorpusOptionError, EndlessLoaderError, ManifestError

Batch = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]


class ShardLoader:
    """Batches ``(x, y)`` of shape ``(batch_size, context_length)`` from a shard folder.

    ``order="sequential"``: consecutive windows of ``context_length`` tokens from the start
    of the split (llm.c's loader): batch ``k`` holds windows ``k*B .. k*B+B-1``; iteration
    stops before the first batch that would not be full, so one pass reads each token once
    as an input. With ``world_size > 1`` process ``rank`` reads batches ``rank``,
    ``rank + world_size``, ... (data-parallel training). ``order="random"``: each window starts
    at a uniformly random position (nanoGPT's ``get_batch``), drawn from ``seed``, forever.

    >>> import tempfile, pathlib, tokenmill.corpus
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("one two three four five six seven")
    >>> _ = tokenmill.corpus.encode([d / "a.txt"], "gpt2", d / "s", shard_tokens=4, progress=False)
    >>> loader = ShardLoader(d / "s", context_length=3, batch_size=2)
    >>> x, y = next(iter(loader))
    >>> x.tolist(), y.tolist()
    ([[50256, 505, 734], [1115, 1440, 1936]], [[505, 734, 1115], [1440, 1936, 2237]])
    >>> len(loader)
    1
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        context_length: int,
        batch_size: int,
        *,
        split: str = "train",
        order: str = "sequential",
        seed: int = 0,
        rank: int = 0,
        world_size: int = 1,
    ) -> None:
        for name, v in (("context_length", context_length), ("batch_size", batch_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise CorpusOptionError(f"{name} must be an int >= 1, not {v!r}")
        if order not in ("sequential", "random"):
            raise CorpusOptionError(f"order must be 'sequential' or 'random', not {order!r}")
        if not 0 <= rank < world_size:
            raise CorpusOptionError(
                f"rank must be in 0..world_size-1, got rank {rank} of {world_size}"
            )
        m = read_manifest(path)
        if split not in m["splits"]:
            raise ManifestError(f"{path} has no {split!r} split (it has {', '.join(m['splits'])})")
        self.manifest = m
        self.context_length = context_length
        self.batch_size = batch_size
        self.order = order
        self.seed = seed
        self.rank = rank
        self.world_size = world_size
        dtype = np.dtype(m["dtype"]).newbyteorder("<")
        offset = layout_of(m).header_bytes  # llm.c's header precedes the ids
        self._shards: list[Any] = []
        for s in m["splits"][split]["shards"]:
            if s["tokens"]:
                file = Path(path) / s["file"]
                shape = (s["tokens"],)
                self._shards.append(np.memmap(file, dtype, "r", offset=offset, shape=shape))
        sizes = [len(a) for a in self._shards]
        self._starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        self.n_tokens = int(self._starts[-1])
        if self.n_tokens < context_length + 1:
            raise CorpusOptionError(
                f"the {split} split has {self.n_tokens} tokens, fewer than context_length + 1 "
                f"= {context_length + 1}; use a shorter context"
            )

    def window(self, start: int, length: int) -> npt.NDArray[np.int64]:
        """Tokens ``start .. start+length-1`` of the split's stream, across shards."""
        out = np.empty(length, dtype=np.int64)
        k = int(np.searchsorted(self._starts, start, side="right")) - 1
        done = 0
        while done < length:
            shard = self._shards[k]
            at = start + done - int(self._starts[k])
            take = min(length - done, len(shard) - at)
            out[done : done + take] = shard[at : at + take]
            done += take
            k += 1
        return out

    def _batch_at(self, starts: npt.NDArray[np.int64]) -> Batch:
        t = self.context_length
        w = np.stack([self.window(int(s), t + 1) for s in starts])
        return w[:, :-1], w[:, 1:]

    def __len__(self) -> int:
        """Batches in one sequential pass for this rank (random order: infinite, an error)."""
        if self.order == "random":
            raise EndlessLoaderError("a random-order ShardLoader never ends; it has no len()")
        windows = (self.n_tokens - 1) // self.context_length
        total = windows // self.batch_size
        return max(0, (total - self.rank + self.world_size - 1) // self.world_size)

    def __iter__(self) -> Iterator[Batch]:
        t, b = self.context_length, self.batch_size
        if self.order == "random":
            rng = np.random.default_rng(self.seed)
            high = self.n_tokens - t  # the last window's targets end at the last token
            while True:
                yield self._batch_at(rng.integers(0, high, size=b, dtype=np.int64))
        for i in range(len(self)):
            k = self.rank + i * self.world_size
            yield self._batch_at(np.arange(k * b, (k + 1) * b, dtype=np.int64) * t)
