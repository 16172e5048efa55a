"""The Ray engine: task bodies run as Ray tasks, their results handed back in order.

Ray is optional and imported only here. :func:`connect` joins ``ray.init(address=...)`` when
given an address, else starts a local Ray with ``workers`` CPUs (or uses the Ray this process
already started). At most ``2 * workers`` tasks are in flight, so memory stays flat however
many tasks there are; results are consumed strictly in task order, which is what makes the
corpus shards and the training counts identical to a local run.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from tokenmill.errors import MissingDependencyError, TokenmillError

R = TypeVar("R")

# Tasks in flight per worker: one running, one queued, so no worker waits on the driver.
IN_FLIGHT_PER_WORKER = 2


def connect(workers: int, address: str | None) -> Any:
    """The ``ray`` module, initialized (see the module docstring)."""
    try:
        import ray
    except ImportError:
        raise MissingDependencyError(
            "the Ray engine needs Ray: pip install 'ray>=2.9' (or use the local engine)"
        ) from None
    if not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    return ray


def run_ordered(
    task: Callable[..., R],
    shared: Sequence[Any],
    calls: Sequence[Sequence[Any]],
    workers: int,
    address: str | None,
) -> Iterator[R]:
    """``task(*shared, *args)`` for each ``args`` of ``calls`` as a Ray task of one CPU,
    results in the order of ``calls``. ``shared`` is sent to the cluster once; ``task`` must
    be a function of an importable module (workers import it by name). A task's own
    :class:`~tokenmill.errors.TokenmillError` is raised here as itself."""
    ray = connect(workers, address)
    remote = ray.remote(num_cpus=1)(task)
    refs = [ray.put(value) for value in shared]

    def submit(i: int) -> Any:
        return remote.remote(*refs, *calls[i])

    yield from _ordered(ray, submit, len(calls), IN_FLIGHT_PER_WORKER * workers)


def _ordered(ray: Any, submit: Callable[[int], Any], n: int, window: int) -> Iterator[Any]:
    """Results of tasks 0..n-1 in order, with at most ``window`` submitted and unconsumed."""
    # When the caller stops early (an error), the tasks still pending are left to finish and
    # their results dropped, not cancelled: cancelling a task while it completes can abort the
    # driver process (Ray 2.60: "Check failed ... Tried to complete task that was not pending"
    # in task_manager.cc).
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
