"""Which code points the split patterns' classes (``\\p{L}``, ``\\s``, ...) hold: tiktoken's answer.

The named patterns mean what Python's ``regex`` module makes of them (DESIGN.md §2) in all but
one respect: the Unicode data behind their classes. tiktoken runs its patterns on fancy-regex,
whose tables come from the Rust ``regex-syntax`` crate and lag ``regex``'s: regex 2026.11.19
puts some 17,500 code points (assigned in recent Unicode versions: CJK ideographs at
U+31350..U+33479 and U+3D000..U+3FC3F, U+0558 and others) in other classes than tiktoken 0.14
does, and a text holding one of them can then encode to other ids. tokenmill promises
tiktoken's ids, so the scanners' tables (``scripts/gen_unicode_tables.py``), the reference
split and the tests' oracle all take their classes from the engine tiktoken uses: tokenmill's
own fancy-regex (the path every custom pattern takes), asked here.

>>> 0x41 in members(r"\\p{L}") and 0x3D000 not in members(r"\\p{L}")
True
>>> [regex.findall(p, "\\U0003d000/A") for p in (r"\\p{L}+", for_regex(r"\\p{L}+"))]
[['\\U0003d000', 'A'], ['A']]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import numpy as np
import regex  # type: ignore[import-untyped]

from tokenmill import _core

N_CODE_POINTS = 0x110000
# What a pattern uses to name a set of characters: a bracketed class (escapes inside it
# skipped), or a property, whitespace or its complement on its own.
_CLASS = re.compile(r"\[(?:\\.|[^\]\\])*\]|\\p\{\w+\}|\\s|\\S")


@functools.cache
def _all_code_points() -> tuple[str, np.ndarray]:
    """Every code point but the surrogates, as one string and as an array of the code point at
    each of its positions."""
    cps = np.array([c for c in range(N_CODE_POINTS) if not 0xD800 <= c < 0xE000], dtype=np.uint32)
    return cps.astype("<u4").tobytes().decode("utf-32-le"), cps


def _mask(spans: Iterable[tuple[int, int]]) -> np.ndarray:
    """The code points at these spans of the string of every code point, as a boolean mask."""
    _, cps = _all_code_points()
    mask = np.zeros(N_CODE_POINTS, dtype=bool)
    for start, end in spans:
        mask[cps[start:end]] = True
    return mask


@functools.cache
def _engine_mask(atom: str) -> np.ndarray:
    """Which code points fancy-regex matches with ``atom`` (see ``members``)."""
    text, _ = _all_code_points()
    # Split by runs of the atom, the chunks alternate between runs it matches and runs it does
    # not; the first is a match if the first character is (then "\0\0" splits in two).
    matched = len(_core.split_regex(atom, "\x00\x00")) == 2
    spans = []
    at = 0
    for chunk in _core.split_regex(f"(?:{atom})+", text):
        if matched:
            spans.append((at, at + len(chunk)))
        at += len(chunk)
        matched = not matched
    return _mask(spans)


@functools.cache
def members(atom: str) -> frozenset[int]:
    """The code points (surrogates aside: no Rust string holds one) that fancy-regex matches
    with ``atom``, a pattern matching one character at a time, whatever is around it.

    >>> sorted(members("[a-c]"))
    [97, 98, 99]
    """
    return frozenset(np.flatnonzero(_engine_mask(atom)).tolist())


def _ranges(cps: np.ndarray) -> str:
    """Sorted code points as the inside of a character class: ``\\U`` ranges."""
    out = []
    k = 0
    while k < len(cps):
        j = k
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        out.append(f"\\U{cps[k]:08x}" + (f"-\\U{cps[j]:08x}" if j > k else ""))
        k = j + 1
    return "".join(out)


@functools.cache
def regex_differs(klass: str) -> tuple[np.ndarray, np.ndarray]:
    """Where ``regex``'s own Unicode data disagrees with the engine on a one-character class:
    the code points only ``regex`` puts in it, and those only the engine does (sorted).

    >>> [len(d) for d in regex_differs("[a-z]")]
    [0, 0]
    """
    engine = _engine_mask(klass)
    text, _ = _all_code_points()
    own = _mask(m.span() for m in regex.finditer(f"(?:{klass})+", text))
    return np.flatnonzero(own & ~engine), np.flatnonzero(engine & ~own)


@functools.cache
def _as_engine(klass: str) -> str:
    """A one-character class of a pattern, mended for ``regex`` to match what the engine
    matches: the code points ``regex``'s own data adds are refused by a lookahead, those it
    lacks are added (both short lists of ranges, so matching stays fast)."""
    extra, missing = regex_differs(klass)
    if not len(extra) and not len(missing):
        return klass
    parts = [f"(?![{_ranges(extra)}]){klass}" if len(extra) else klass]
    if len(missing):
        parts.append(f"[{_ranges(missing)}]")
    return "(?:" + "|".join(parts) + ")"


@functools.cache
def for_regex(pattern: str) -> str:
    """``pattern`` for the ``regex`` module, each of its classes (``[^\\s\\p{L}\\p{N}]``,
    ``\\p{L}``, ``\\s``, ...) mended to hold the code points tiktoken's engine puts in it, so
    that ``regex`` splits as tiktoken. For patterns whose classes match one character each (as
    the named patterns' do)."""
    out = []
    at = 0
    while at < len(pattern):
        if pattern[at] == "\\" and not _CLASS.match(pattern, at):
            out.append(pattern[at : at + 2])  # another escape, kept whole
            at += 2
            continue
        m = _CLASS.match(pattern, at)
        if m is None:
            out.append(pattern[at])
            at += 1
            continue
        out.append(_as_engine(m.group()))
        at = m.end()
    return "".join(out)
