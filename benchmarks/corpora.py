"""Corpora for the benchmarks: the shared data, and a code corpus built on this machine.

- ``holmes``: ``../shared/data/holmes.txt`` (3.9 MB of prose);
- ``english``: ``../shared/data/english_large/`` (20 MB of Gutenberg books);
- ``code``: the installed Python standard library (``*.py``, without site-packages), about
  30 MB, concatenated once into a cache file (``$TOKENMILL_BENCH_CACHE`` or
  ``~/.cache/tokenmill-bench``) so every run and every peer reads the same bytes.

Each corpus is a list of documents (str). Large texts are cut into documents of about 64 KB
at places that do not change their chunks under the named patterns (see
``tokenmill.sources.cut``), so peers that parallelize over documents can, and every peer sees
the same chunks.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
DOC_CHARS = 64 << 10
CODE_SEPARATOR = "\n\n# ----- next file -----\n\n"


def cache_dir() -> Path:
    d = Path(os.environ.get("TOKENMILL_BENCH_CACHE", Path.home() / ".cache" / "tokenmill-bench"))
    d.mkdir(parents=True, exist_ok=True)
    return d


def split_docs(text: str, size: int = DOC_CHARS) -> list[str]:
    """Cut ``text`` into documents of about ``size`` characters at chunk-safe places."""
    from tokenmill.sources.cut import last_cut

    docs = []
    start = 0
    while len(text) - start > 2 * size:
        window = text[start : start + 2 * size]
        cut = last_cut(window[: size + size // 2]) or last_cut(window)
        if not cut:
            break
        docs.append(text[start : start + cut])
        start += cut
    docs.append(text[start:])
    return [d for d in docs if d]


def code_file() -> Path:
    """The stdlib code corpus as one UTF-8 file (built on first use)."""
    out = cache_dir() / "python-stdlib-code.txt"
    if out.exists():
        return out
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    parts = []
    for f in sorted(stdlib.rglob("*.py")):
        if "site-packages" in f.parts:
            continue
        try:
            parts.append(f.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            continue  # a few test files are deliberately not UTF-8
    tmp = out.with_suffix(".tmp")
    tmp.write_text(CODE_SEPARATOR.join(parts), encoding="utf-8")
    tmp.replace(out)
    return out


def files(name: str) -> list[Path]:
    if name == "holmes":
        return [DATA / "holmes.txt"]
    if name == "english":
        return sorted((DATA / "english_large").glob("*.txt"))
    if name == "code":
        return [code_file()]
    raise KeyError(name)


def documents(name: str) -> list[str]:
    """The corpus ``name`` as a list of documents, in order."""
    if name == "code":
        return code_file().read_text(encoding="utf-8").split(CODE_SEPARATOR)
    docs: list[str] = []
    for f in files(name):
        docs.extend(split_docs(f.read_text(encoding="utf-8")))
    return docs


def available(name: str) -> bool:
    return name == "code" or all(f.exists() for f in files(name))
