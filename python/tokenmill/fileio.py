"""Atomic file writes: a temporary file in the target's directory, fsynced, then renamed over
the target. Readers never see half a file; a crash leaves at most a stray ``.name.*`` file.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
>>> write_atomic(path, b"hello")
>>> path.read_bytes()
b'hello'
>>> path.stat().st_mode & 0o777 == FILE_MODE
True
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open a binary file that replaces ``path`` only when the ``with`` block succeeds."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        # mkstemp makes the file private (0600); give it the mode open() would have.
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _file_mode() -> int:
    # os.umask can only be read by setting it: done once, at import, not while threads write.
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


# The mode open() gives a new file under this process's umask.
FILE_MODE = _file_mode()


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path) as f:
        f.write(data)
