"""The local engine: a producer run on a thread, a bounded number of values ahead of the
thread that consumes them. The corpus driver reads and decodes the next documents this way
while the Rust core encodes the previous batch (it releases the GIL).

>>> list(read_ahead(lambda: iter(range(5))))
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def read_ahead(
    produce: Callable[[], Iterator[T]], depth: int = 2, name: str = "tokenmill-reader"
) -> Iterator[T]:
    """The values of ``produce()``, in order, computed on a thread at most ``depth`` values
    ahead of the caller. An exception in the producer is raised here, in the caller; when the
    caller stops early (an error, ``close()``), the producer stops at its next value."""
    q: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(value: Any) -> bool:
        """Queue a value unless the caller stopped listening (then never block)."""
        while not stop.is_set():
            try:
                q.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for value in produce():
                if not put((value, None)):
                    return
            put((done, None))
        except BaseException as e:  # handed to the caller
            put((None, e))

    t = threading.Thread(target=run, name=name, daemon=True)
    t.start()
    try:
        while True:
            value, error = q.get()
            if error is not None:
                raise error
            if value is done:
                return
            yield value
    finally:
        stop.set()
        t.join()
