"""The failure-mode report: the classic "model failures" that are tokenizer failures,
measured for one or several tokenizers side by side.

Nine sections (one module each, computing plain data): spelling, non-English cost, numbers,
code and whitespace, trailing space, special-token strings, glitch-token candidates, JSON vs
YAML vs CSV vs XML, compression and vocabulary cost. :func:`report` computes them;
the :class:`Report` renders a terminal summary (:meth:`Report.to_text`), a self-contained HTML
page with inline SVG charts (:meth:`Report.to_html`, :meth:`Report.save`) and JSON
(:meth:`Report.to_dict`).

>>> import tokenmill
>>> from tokenmill.analysis import report
>>> r = report(["gpt2"], corpus={"a.txt": "The year 2024 was good. " * 50})
>>> r.sections["numbers"]["gpt2"]["single_token_below_1000"]
819
>>> "<svg" in r.to_html()
True
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tokenmill.analysis.failures import (
    compression,
    glitch,
    languages,
    numbers,
    specials,
    spelling,
    structured,
    trailing,
    whitespace,
)
from tokenmill.analysis.failures.corpus import Corpus, corpus_from, default_corpus
from tokenmill.analysis.failures.encoded import Encoded, encode_corpus
from tokenmill.analysis.failures.measures import SECTIONS
from tokenmill.errors import InvalidArgumentError, WrongTypeError

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer


@dataclass
class Report:
    """Every section's numbers for every tokenizer: ``sections[section][tokenizer label]``."""

    tokenizers: list[dict[str, Any]]
    corpus: dict[str, Any]
    sections: dict[str, dict[str, Any]]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The tokenizers' labels, in the order given."""
        return [t["name"] for t in self.tokenizers]

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what ``tokenmill report --json`` prints)."""
        return {
            "tokenizers": self.tokenizers,
            "corpus": self.corpus,
            "sections": self.sections,
            "seconds": self.seconds,
        }

    def to_text(self) -> str:
        """A summary for a terminal: one table per section, one column per tokenizer."""
        from tokenmill.analysis.failures.text import render

        return render(self)

    def to_html(self) -> str:
        """One self-contained HTML page (inline CSS and SVG, no scripts, no external file)."""
        from tokenmill.analysis.failures.html import render

        return render(self)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the HTML page (or the JSON, when ``path`` ends in ``.json``) atomically."""
        from tokenmill.fileio import write_atomic

        if os.fspath(path).endswith(".json"):
            data = json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n"
        else:
            data = self.to_html()
        write_atomic(path, data.encode("utf-8"))


def _label(tokenizers: Sequence[Any]) -> list[tuple[str, Tokenizer]]:
    from tokenmill.pretrained import load
    from tokenmill.tokenizer import Tokenizer

    out: list[tuple[str, Tokenizer]] = []
    for t in tokenizers:
        if isinstance(t, tuple):
            name, tok = t
        elif isinstance(t, Tokenizer):
            name, tok = t.name, t
        elif isinstance(t, str | os.PathLike):
            name, tok = os.path.basename(os.fspath(t)) or os.fspath(t), load(t)
        else:
            raise WrongTypeError(
                "tokenizers are names, paths, Tokenizer objects or (label, Tokenizer) pairs, "
                f"not {type(t).__name__}"
            )
        base, k = name, 2
        while name in (n for n, _ in out):
            name, k = f"{base} ({k})", k + 1
        out.append((name, tok))
    if not out:
        raise InvalidArgumentError("give at least one tokenizer to report on")
    return out


# Each section's data for one tokenizer: (tokenizer, corpus, its encoding, threads) -> data.
_COMPUTE: dict[str, Callable[[Tokenizer, Corpus, Encoded, int | None], dict[str, Any]]] = {
    "spelling": lambda tok, corp, enc, threads: spelling.compute(tok),
    "languages": lambda tok, corp, enc, threads: languages.compute(tok, corp.languages, threads),
    "numbers": lambda tok, corp, enc, threads: numbers.compute(tok, num_threads=threads),
    "whitespace": lambda tok, corp, enc, threads: whitespace.compute(tok, corp.code, threads),
    "trailing": lambda tok, corp, enc, threads: trailing.compute(tok, enc),
    "specials": lambda tok, corp, enc, threads: specials.compute(tok),
    "glitch": lambda tok, corp, enc, threads: glitch.compute(tok, enc, threads),
    "structured": lambda tok, corp, enc, threads: structured.compute(tok, corp.structured, threads),
    "compression": lambda tok, corp, enc, threads: compression.compute(tok, corp, enc),
}


def report(
    tokenizers: Sequence[str | os.PathLike[str] | Tokenizer | tuple[str, Tokenizer]],
    corpus: Mapping[str, str] | Iterable[str | os.PathLike[str]] | Corpus | None = None,
    *,
    num_threads: int | None = None,
    progress: Callable[[str], Any] | None = None,
) -> Report:
    """Measure every section for each tokenizer.

    ``tokenizers``: names or files (as :func:`tokenmill.load` takes them), :class:`Tokenizer`
    objects, or ``(label, Tokenizer)`` pairs. ``corpus``: ``{name: text}``, files/folders, or
    None for the bundled samples. A corpus replaces the samples: it feeds compression, glitch
    tokens and merge residue (give a trained tokenizer's own training text to see its
    residue), and the language, format and code sections measure its files of their kind,
    or nothing (``sections[key]`` is empty and ``corpus["not_measured"][key]`` says why; see
    :mod:`.corpus`).
    """
    toks = _label(tokenizers)
    if corpus is None:
        corp = default_corpus()
    elif isinstance(corpus, Corpus):
        corp = corpus
    else:
        corp = corpus_from(corpus)
    sections: dict[str, dict[str, Any]] = {key: {} for key in SECTIONS}
    seconds: dict[str, float] = {}
    for name, tok in toks:
        if progress:
            progress(f"report: {name}")
        start = time.perf_counter()
        enc = encode_corpus(tok, corp, num_threads)
        for key, compute in _COMPUTE.items():
            if key not in corp.not_measured:
                sections[key][name] = compute(tok, corp, enc, num_threads)
        seconds[name] = time.perf_counter() - start
    info = [
        {
            "name": name,
            "n_vocab": tok.n_vocab,
            "pattern": tok.pattern_name or "custom",
            "special_tokens": len(tok.special_tokens),
            "trained_by_tokenmill": tok.merges is not None,
        }
        for name, tok in toks
    ]
    corpus_info = {
        "source": corp.source,
        "notes": corp.notes,
        "texts": {n: len(t.encode("utf-8")) for n, t in corp.texts.items()},
        "languages": sorted(corp.languages),
        "formats": sorted(corp.structured),
        "code_files": len(corp.code),
        "not_measured": dict(corp.not_measured),
    }
    return Report(info, corpus_info, sections, seconds)


__all__ = ["SECTIONS", "Report", "report"]
