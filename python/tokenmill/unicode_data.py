"""Which code points the split patterns' classes (``\\p{L}``, ``\\s``, ...) hold: tiktoken's answer.

The named patterns mean what Python's ``regex`` module makes of them (DESIGN.md §2) in all but
one respect: the Unicode data behind their classes. tiktoken runs its patterns on fancy-regex,
whose tables come from the Rust ``regex-syntax`` crate and lag ``regex``'s: regex 2026.11.19
puts 17,480 code points (assigned in recent Unicode versions: CJK ideographs at U+31350..U+33479
and U+3D000..U+3FC3F, U+0558 and others) in other classes than tiktoken 0.14 does, and a text
holding one of them can then encode to other ids. tokenmill promises tiktoken's ids, so the
scanners' tables (``scripts/gen_unicode_tables.py``), the reference split and the tests' oracle
all take their classes from the engine tiktoken uses: tokenmill's own fancy-regex (the path
every custom pattern takes), asked here.

>>> 0x41 in members(r"\\p{L}") and 0x3D000 not in members(r"\\p{L}")
True
>>> [regex.findall(p, "\\U0003d000/A") for p in (r"\\p{L}+", for_regex(r"\\p{L}+"))]
[['\\U0003d000', 'A'], ['A']]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set

import regex  # type: ignore[import-untyped]

from tokenmill import _core

N_CODE_POINTS = 0x110000
# What a pattern uses to name a set of characters: a bracketed class (escapes inside it
# skipped), or a property, whitespace or its complement on its own.
_CLASS = re.compile(r"\[(?:\\.|[^\]\\])*\]|\\p\{\w+\}|\\s|\\S")


def _all_code_points() -> str:
    return "".join(chr(c) for c in range(N_CODE_POINTS) if not 0xD800 <= c < 0xE000)


@functools.cache
def members(atom: str) -> frozenset[int]:
    """The code points (surrogates aside: no Rust string holds one) that fancy-regex matches
    with ``atom``, a pattern matching one character at a time.

    Found with one split of every code point, each between two copies of a character the atom
    does not match: a chunk of one character other than that separator is a match.
    """
    sep = next((s for s in "\x00a0 " if len(_core.split_regex(atom, s + s)) == 1), None)
    if sep is None:
        raise ValueError(f"{atom!r} matches every separator tried")
    found = set()
    for chunk in _core.split_regex(atom, sep + sep.join(_all_code_points()) + sep):
        if len(chunk) == 1 and chunk != sep:
            found.add(ord(chunk))
        elif sep not in chunk:
            raise ValueError(f"{atom!r} matched {len(chunk)} characters at once")
    return frozenset(found)


def _ranges(cps: Set[int]) -> str:
    """``cps`` as the inside of a character class: ``\\U`` ranges."""
    out = []
    ordered = sorted(cps)
    k = 0
    while k < len(ordered):
        j = k
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(f"\\U{ordered[k]:08x}" + (f"-\\U{ordered[j]:08x}" if j > k else ""))
        k = j + 1
    return "".join(out)


@functools.cache
def _as_engine(klass: str) -> str:
    """A one-character class of a pattern, mended for ``regex`` to match what the engine
    matches: the code points ``regex``'s own data adds are refused by a lookahead, those it
    lacks are added (both short lists of ranges, so matching stays fast)."""
    engine = members(klass)
    everything = _all_code_points()
    own = {ord(everything[m.start()]) for m in regex.finditer(klass, everything)}
    extra, missing = own - engine, engine - own
    if not extra and not missing:
        return klass
    parts = [f"(?![{_ranges(extra)}]){klass}" if extra else klass]
    if missing:
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
