"""A one-line status on stderr, redrawn in place at most every ``interval`` seconds.

The trainer and the corpus encoder both report progress this way; each decides *what* the
line says, this class how it is drawn.

>>> import io
>>> line = StatusLine(True, stream=io.StringIO(), interval=0.0)
>>> line.draw("counted 1.0 MB")
>>> line.finish("done")
>>> line.stream.getvalue().split("\\r")[1:]
['counted 1.0 MB\\x1b[K', 'done\\x1b[K\\n']
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class StatusLine:
    """A status line that replaces itself (``\\r`` ... erase to the end of the line).

    ``enabled`` None means: only when the stream is a terminal.
    """

    def __init__(
        self, enabled: bool | None, stream: TextIO | None = None, interval: float = 0.1
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.interval = interval
        self.start = time.perf_counter()
        self.last = float("-inf")

    @property
    def elapsed(self) -> float:
        """Seconds since the line was made."""
        return time.perf_counter() - self.start

    def draw(self, line: str, force: bool = False) -> None:
        """Show ``line`` unless the last draw was less than ``interval`` ago (or ``force``)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        self.stream.write(f"\r{line}\x1b[K")
        self.stream.flush()

    def finish(self, line: str) -> None:
        """Show ``line`` one last time and end it with a newline."""
        if self.enabled:
            self.draw(line, force=True)
            self.stream.write("\n")
            self.stream.flush()
