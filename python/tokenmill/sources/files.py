"""Finding the files of a corpus: names, globs and folders -> input files, in order; and the
corpora bundled with tokenmill, by name.

Every command and function that takes a corpus finds its files here (``tokenmill train``,
``report`` and ``encode-corpus``, :func:`tokenmill.corpus.encode`, the report's corpus), so
the same names give the same files everywhere:

- a glob (a name with ``*``, ``?`` or ``[`` that is not itself a path) gives its matches,
  sorted, leaving out folders (``**`` matches every folder on the way);
- a folder gives the input files under it, sorted, leaving out hidden files and folders:
  text (:data:`TEXT_SUFFIXES`), records (``.jsonl``, ``.ndjson``, ``.parquet``), data
  (``.json``, ``.yml``, ``.csv``, ``.xml``) and source code (:data:`CODE_SUFFIXES`), each of
  them gzipped or not (any ``.gz``);
- any other name is a file, whatever its suffix.

How a file is read follows from its name (:func:`input_file`): ``.jsonl``/``.ndjson`` are
records (the text is a field of each), ``.parquet`` rows (the text is a column), everything
else is one text document; ``.gz`` is decompressed first.

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> for name in ["b.txt", "a.csv", "sub/c.jsonl", "skip.bin", ".hidden.txt"]:
...     (d / name).parent.mkdir(exist_ok=True)
...     _ = (d / name).write_text("x")
>>> [(Path(f.path).relative_to(d).as_posix(), f.kind) for f in find([d])]
[('a.csv', 'text'), ('b.txt', 'text'), ('sub/c.jsonl', 'jsonl')]
"""

from __future__ import annotations

import glob
import gzip
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tokenmill.errors import CorpusInputError

TEXT_SUFFIXES = (".txt", ".md", ".text")
RECORD_SUFFIXES = (".jsonl", ".ndjson", ".parquet")
DATA_SUFFIXES = (".json", ".yml", ".yaml", ".csv", ".xml")
CODE_SUFFIXES = (
    ".py", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".go", ".java", ".js", ".ts", ".tsx",
    ".rb", ".sh", ".kt", ".swift", ".cs", ".php", ".lua", ".scala", ".pyi",
)  # fmt: skip
# The files a folder contributes (other files in a folder are left out).
SUFFIXES = (*TEXT_SUFFIXES, *RECORD_SUFFIXES, *DATA_SUFFIXES, *CODE_SUFFIXES, ".gz")
JSONL_SUFFIXES = (".jsonl", ".ndjson")

# The corpora bundled in tokenmill/data, by name.
BUNDLED = {"holmes": "holmes.txt.gz", "shakespeare": "tinyshakespeare.txt.gz"}


@dataclass(frozen=True)
class InputFile:
    """One input file: its path as given, how it is read, and its size in bytes."""

    path: str
    kind: str  # "text", "jsonl" or "parquet"
    gzip: bool
    size: int


def input_file(path: str | os.PathLike[str]) -> InputFile:
    """The input file at ``path``, read as its name says (see the module docstring). Only the
    kind is decided here: a file that cannot be read is found when it is read.

    >>> input_file("news.jsonl.gz")
    InputFile(path='news.jsonl.gz', kind='jsonl', gzip=True, size=0)
    """
    p = Path(path)
    gzipped = p.name.endswith(".gz")
    name = p.name[:-3] if gzipped else p.name
    kind = (
        "jsonl"
        if name.endswith(JSONL_SUFFIXES)
        else "parquet"
        if name.endswith(".parquet")
        else "text"
    )
    try:
        size = p.stat().st_size
    except OSError:
        size = 0
    return InputFile(str(p), kind, gzipped, size)


def glob_matches(name: str) -> list[str] | None:
    """The matches of ``name``, sorted, if it is a glob (it has ``*``, ``?`` or ``[`` and is
    not itself a path); None if it is not a glob. A glob that matches nothing is an error."""
    if not any(ch in name for ch in "*?[") or Path(name).exists():
        return None
    matches = sorted(glob.glob(name, recursive=True))
    if not matches:
        raise CorpusInputError(f"no files match {name!r}")
    return matches


def expand_globs(names: Sequence[str]) -> list[str]:
    """The names with each glob replaced by its matches (see :func:`glob_matches`); ``-``
    (standard input) and every other name are kept as they are."""
    out: list[str] = []
    for name in names:
        matches = glob_matches(name) if name != "-" else None
        out.extend([name] if matches is None else matches)
    return out


def _hidden(path: Path, folder: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(folder).parts)


def find(
    names: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> list[InputFile]:
    """The input files that ``names`` (files, folders, globs) stand for, in order (see the
    module docstring). A name that is neither a file, a folder with input files, nor a glob
    with matches is a :class:`~tokenmill.errors.CorpusInputError`; a file that exists but
    cannot be read is found when it is read."""
    if isinstance(names, str | os.PathLike):
        names = [names]
    paths: list[Path] = []
    for spec in names:
        name = os.fspath(spec)
        matches = glob_matches(name)
        if matches is not None:
            paths.extend(Path(m) for m in matches if not Path(m).is_dir())
            continue
        path = Path(name)
        if path.is_dir():
            found = sorted(
                f
                for f in path.rglob("*")
                if f.name.endswith(SUFFIXES) and not _hidden(f, path) and f.is_file()
            )
            if not found:
                raise CorpusInputError(
                    f"{path}: no input files in this folder (looked for text, .jsonl, .parquet, "
                    "data and source files, gzipped or not)"
                )
            paths.extend(found)
        elif path.exists() or path.is_symlink():
            paths.append(path)
        else:
            raise CorpusInputError(f"{path}: no such file")
    if not paths:
        raise CorpusInputError("no input files given")
    return [input_file(p) for p in paths]


def bundled_corpus(name: str) -> str:
    """The text of a corpus bundled with tokenmill: ``holmes`` (the complete Sherlock Holmes)
    or ``shakespeare`` (Tiny Shakespeare).

    >>> bundled_corpus("shakespeare")[:14]
    'First Citizen:'
    """
    if name not in BUNDLED:
        raise CorpusInputError(
            f"no bundled corpus {name!r}; the bundled corpora are {', '.join(sorted(BUNDLED))}"
        )
    data = resources.files("tokenmill.data").joinpath(BUNDLED[name]).read_bytes()
    return gzip.decompress(data).decode("utf-8")
