"""Run the ``tokenmill`` command for real, in a subprocess of this interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any


def run_tokenmill(
    *args: str,
    stdin: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 300,
    text: bool = True,
) -> subprocess.CompletedProcess[Any]:
    """``python -m tokenmill ARGS`` with its output captured (str, or bytes with ``text=False``)."""
    if not text and isinstance(stdin, str):
        stdin = stdin.encode()
    return subprocess.run(
        [sys.executable, "-m", "tokenmill", *args],
        input=stdin,
        capture_output=True,
        text=text,
        cwd=cwd,
        timeout=timeout,
    )
