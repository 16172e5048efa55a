"""The texts a report measures: the bundled samples, or the user's files.

Three sections need a particular kind of text — parallel translations (non-English cost), one
dataset in one or more formats (JSON vs YAML vs CSV vs XML) and source code (whitespace). With
no corpus every section measures the samples bundled in ``tokenmill/data`` (see
``SOURCES.md`` there). A corpus replaces them all: those three sections measure its files of
their kind (``en.txt`` + ``de.txt`` ...; ``x.json``, ``x.yml`` ...; ``*.py``, ``*.rs`` ...) and
are not measured when it has none (:attr:`Corpus.not_measured` says why), and the
corpus-wide sections (compression, glitch tokens, merge residue) measure every file given.

>>> c = default_corpus()
>>> sorted(c.structured), c.languages["de"].splitlines()[0][:40]
(['csv', 'json', 'xml', 'yml'], 'Mitglieder der Nationalversammlung für W')
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from tokenmill.errors import InvalidArgumentError
from tokenmill.sources.files import CODE_SUFFIXES, bundled_corpus, find
from tokenmill.sources.read import read_text

# English name of each bundled language (ISO 639-1 code -> name).
LANGUAGE_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "pt": "Portuguese",
    "it": "Italian", "tr": "Turkish", "vi": "Vietnamese", "ru": "Russian", "el": "Greek",
    "ar": "Arabic", "fa": "Persian", "he": "Hebrew", "hi": "Hindi", "bn": "Bengali",
    "ta": "Tamil", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "th": "Thai",
    "ka": "Georgian", "hy": "Armenian", "am": "Amharic", "km": "Khmer",
}  # fmt: skip
STRUCTURED_FORMATS = {".json": "json", ".yml": "yml", ".yaml": "yml", ".csv": "csv", ".xml": "xml"}


@dataclass
class Corpus:
    """Named texts for each kind of section, and where they came from."""

    texts: dict[str, str]
    languages: dict[str, str]
    structured: dict[str, str]
    code: dict[str, str]
    source: str
    notes: list[str] = field(default_factory=list)
    # Sections the corpus has no text for, each with the reason (section key -> reason).
    not_measured: dict[str, str] = field(default_factory=dict)

    @property
    def n_bytes(self) -> int:
        """UTF-8 bytes of the corpus-wide texts."""
        return sum(len(t.encode("utf-8")) for t in self.texts.values())


@lru_cache(maxsize=1)
def _samples() -> dict[str, dict[str, str]]:
    raw = resources.files("tokenmill.data").joinpath("report_samples.json.gz").read_bytes()
    data: dict[str, dict[str, str]] = json.loads(gzip.decompress(raw))
    return data


def bundled_code() -> dict[str, str]:
    """Source code that every installation has: tokenmill's own Python modules."""
    root = Path(__file__).resolve().parents[2]
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    return {"tokenmill/" + p.relative_to(root).as_posix(): p.read_text("utf-8") for p in files}


def default_corpus() -> Corpus:
    """The bundled samples: Sherlock Holmes, Tiny Shakespeare, 100 parallel news sentences in
    24 languages, 25 records in four formats, and tokenmill's own Python source."""
    samples = _samples()
    languages = dict(samples["multilingual"])
    structured = dict(samples["structured"])
    code = bundled_code()
    texts = {
        "holmes.txt": bundled_corpus("holmes"),
        "tinyshakespeare.txt": bundled_corpus("shakespeare"),
        "news, 24 languages": "".join(languages.values()),
        "countries, 4 formats": "".join(structured.values()),
        "tokenmill source (Python)": "".join(code.values()),
    }
    return Corpus(texts, languages, structured, code, "the samples bundled with tokenmill")


def short_names(paths: list[str]) -> list[str]:
    """Paths relative to the folder they share (whole paths crowd a table); whole paths when
    they share no folder but the root.

    >>> short_names(["/d/data/a.txt", "/d/data/udhr/a.txt"])
    ['a.txt', 'udhr/a.txt']
    >>> short_names(["notes.txt"])
    ['notes.txt']
    >>> short_names(["/tmp/a.txt", "/home/b.txt"])
    ['/tmp/a.txt', '/home/b.txt']
    """
    if len(paths) == 1:
        return [Path(paths[0]).name]
    full = [os.path.abspath(p) for p in paths]
    root = os.path.commonpath(full)
    if os.path.isfile(root):
        root = os.path.dirname(root)
    if os.path.dirname(root) == root:  # the file system's root (or a drive's)
        return full
    return [os.path.relpath(p, root) for p in full]


def _n(count: int, noun: str) -> str:
    """``1 code file``, ``2 code files``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def corpus_from(texts: Mapping[str, str] | Iterable[str | os.PathLike[str]]) -> Corpus:
    """A corpus from ``{name: text}`` or from files, folders and globs, found and read as
    every corpus is (:mod:`tokenmill.sources`): each file is one text (the records of a
    ``.jsonl`` file, the rows of a Parquet file, joined).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> for name in ["b.txt", "a.json", "sub/c.py", "skip.bin", ".hidden.txt"]:
    ...     (d / name).parent.mkdir(exist_ok=True)
    ...     _ = (d / name).write_text("x")
    >>> sorted(corpus_from([d]).texts)
    ['a.json', 'b.txt', 'sub/c.py']
    """
    if isinstance(texts, str | os.PathLike):
        texts = [texts]
    if isinstance(texts, Mapping):
        named = dict(texts)
    else:
        names = [os.fspath(t) for t in texts]
        paths = [f.path for f in find(names)] if names else []
        named = {short: read_text(p) for p, short in zip(paths, short_names(paths), strict=True)}
    if not named:
        raise InvalidArgumentError("the corpus is empty: give at least one file or text")
    notes = []
    missing: dict[str, str] = {}

    # Parallel files: <code>.txt in one folder; the folder with the most languages wins.
    by_dir: dict[str, dict[str, str]] = {}
    for n, t in named.items():
        if Path(n).stem in LANGUAGE_NAMES and n.endswith(".txt"):
            by_dir.setdefault(str(Path(n).parent), {})[Path(n).stem] = t
    languages = max(
        (d for d in by_dir.values() if "en" in d),
        key=lambda d: (len(d), sum(map(len, d.values()))),
        default={},
    )
    if len(languages) >= 2:
        notes.append(f"non-English cost: the corpus's {len(languages)} parallel files")
    else:
        languages = {}
        missing["languages"] = (
            "the corpus has no parallel texts (en.txt and <language>.txt files in one folder)"
        )
    # One dataset: the stem with the most formats (a single format is still measured).
    by_stem: dict[str, dict[str, str]] = {}
    for n, t in named.items():
        fmt = STRUCTURED_FORMATS.get(Path(n).suffix.lower())
        if fmt:
            by_stem.setdefault(str(Path(n).with_suffix("")), {})[fmt] = t
    stem, structured = max(by_stem.items(), key=lambda kv: len(kv[1]), default=("", {}))
    if structured:
        notes.append(f"formats: the corpus's {stem} as {', '.join(sorted(structured))}")
    else:
        missing["structured"] = "the corpus has no dataset (.json, .yml, .csv or .xml files)"
    code = {n: t for n, t in named.items() if n.endswith(CODE_SUFFIXES)}
    if code:
        notes.append(f"whitespace: the corpus's {_n(len(code), 'code file')}")
    else:
        missing["whitespace"] = "the corpus has no code files (.py, .rs, .js, ...)"
    chars = sum(len(t) for t in named.values())
    source = f"{_n(len(named), 'file')}, {chars:,} characters"
    return Corpus(named, languages, structured, code, source, notes, missing)
