"""Which code points the split patterns' classes (``\\p{L}``, ``\\s``, ...) hold: tiktoken's answer.

The named patterns mean what Python's ``regex`` module makes of them (DESIGN.md §2) in all but
one respect: the Unicode data behind their classes. tiktoken runs its patterns on fancy-regex,
whose tables come from the Rust ``regex-syntax`` crate and lag ``regex``'s: regex 2026.11.19
puts 17,480 code points (letters of Unicode 16 and 17 such as CJK Extension J, and others) in
other classes than tiktoken 0.14 does, and a text holding one of them can then encode to other
ids. tokenmill promises tiktoken's ids, so the scanners' tables (``scripts/gen_unicode_tables.py``),
the reference split and the tests' oracle all take their classes from the engine tiktoken
uses: tokenmill's own fancy-regex (the path every custom pattern takes), asked here.

>>> 0x41 in members(r"\\p{L}") and 0x3D000 not in members(r"\\p{L}")
True
>>> import regex
>>> [regex.findall(p, "\\U0003d000/A") for p in (r"\\p{L}+", for_regex(r"\\p{L}+"))]
[['\\U0003d000', 'A'], ['A']]
"""

from __future__ import annotations

import functools
import re

from tokenmill import _core

N_CODE_POINTS = 0x110000
# A class atom of a pattern: a property, whitespace or its complement.
_ATOM = re.compile(r"\\p\{\w+\}|\\s|\\S")


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
    chars = [chr(c) for c in range(N_CODE_POINTS) if not 0xD800 <= c < 0xE000]
    found = set()
    for chunk in _core.split_regex(atom, sep + sep.join(chars) + sep):
        if len(chunk) == 1 and chunk != sep:
            found.add(ord(chunk))
        elif sep not in chunk:
            raise ValueError(f"{atom!r} matched {len(chunk)} characters at once")
    return frozenset(found)


@functools.cache
def _class_body(atom: str) -> str:
    """The members of ``atom`` as the inside of a character class: ``\\U`` ranges."""
    cps = sorted(members(atom))
    parts = []
    k = 0
    while k < len(cps):
        j = k
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        parts.append(f"\\U{cps[k]:08x}" + (f"-\\U{cps[j]:08x}" if j > k else ""))
        k = j + 1
    return "".join(parts)


@functools.cache
def for_regex(pattern: str) -> str:
    """``pattern`` for the ``regex`` module, its class atoms spelled out as explicit classes
    of the code points tiktoken's engine puts in them, so that ``regex`` splits as tiktoken.

    Handles what the named patterns use: ``\\p{..}`` and ``\\s`` inside and outside ``[...]``,
    ``\\S`` outside.
    """
    out = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            m = _ATOM.match(pattern, i)
            if m is None:
                out.append(pattern[i : i + 2])
                i += 2
                continue
            atom = m.group()
            if atom == r"\S":
                if in_class:
                    raise ValueError(f"\\S inside a class is not handled: {pattern!r}")
                out.append("[^" + _class_body(r"\s") + "]")
            else:
                body = _class_body(atom)
                out.append(body if in_class else f"[{body}]")
            i = m.end()
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)
