r"""Where a text may be cut without changing its chunks under a pattern a scanner runs (gpt2,
cl100k, o200k and the variants of their families, ``Tokenizer.scanner``): the one rule every
reader, trainer and encoder of long texts in Python cuts by.

A safe place is

- right after a newline that follows a printable ASCII character (not whitespace) and precedes
  an ASCII letter or digit. No alternative of the three patterns matches a newline followed by
  a letter or digit, so a chunk ends at the newline either way; the left piece then ends in
  that newline, which ``\s++$`` (gpt2, cl100k) matches alone at the new end of text, as in the
  whole text (without ``\s++$``, ``\s*[\r\n]`` takes that lone newline too). A newline after
  other whitespace is not safe: gpt2 splits ``"  \nb"`` into ``"  "``, ``"\n"``, ``"b"``, but
  ``"  \n"`` at the end of a text into one chunk;
- or right before a single space between two ASCII letters. No alternative matches a letter
  followed by a space, so the chunk on the left ends at the letter either way, and the space,
  followed by a letter, starts the chunk " word" (gpt2's `` ?\p{L}+``, cl100k's and o200k's
  ``[^\r\n\p{L}\p{N}]?`` letter runs) whether or not the text starts there. This form is
  what makes files with CRLF line ends or indented lines cuttable.

The Rust core cuts by the same rules (``src/pretokenize/cut.rs``).

Cutting a text at any set of safe places and splitting the pieces gives the chunks of the
whole text (tests/test_sources.py checks it with hypothesis against the splitter). A custom
regex has no such proof: texts are then never cut. Special-token strings are cut out of a
text before it is split, so a text is not cut where a cut could fall inside one (see
:func:`may_cut`).

The rule looks at ASCII characters only, so it means the same on ``bytes`` and on ``str``:
positions are byte offsets for one and character offsets for the other.

>>> last_cut(b"one\ntwo three"), last_cut("naive cafe"), first_cut("x\n\n12 34")
(7, 5, 0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# What the rule reads: text, or its UTF-8 bytes.
Text = str | bytes | bytearray

# The two forms above; a match's cut is after its newline, or before its space.
PATTERN = r"[!-~]\n[A-Za-z0-9]|[A-Za-z] [A-Za-z]"
_BYTES = re.compile(PATTERN.encode())
_TEXT = re.compile(PATTERN)


def _regex(data: Text) -> re.Pattern[Any]:
    return _TEXT if isinstance(data, str) else _BYTES


def _cut(m: re.Match[Any]) -> int:
    return m.start() + (2 if m.group()[1] in ("\n", 0x0A) else 1)


def first_cut(data: Text, start: int = 1) -> int:
    """The first safe place in ``data`` whose match begins at ``start`` or later; 0 if none.

    >>> first_cut(b"a \\nb.\\nc"), first_cut(b"  ab cd"), first_cut(b"12 34")
    (6, 4, 0)
    """
    m = _regex(data).search(data, start)
    return _cut(m) if m else 0


def last_cut(data: Text) -> int:
    """A safe place in ``data`` as near its end as one is found, looking back from the end
    in growing windows; 0 if there is none."""
    regex = _regex(data)
    window = 1 << 16
    while True:
        lo = max(0, len(data) - window)
        last = None
        for last in regex.finditer(data, lo):  # noqa: B007 (the last match is wanted)
            pass
        if last is not None:
            return _cut(last)
        if lo == 0:
            return 0
        window *= 4


def every_cut(data: Text) -> list[int]:
    """Every safe place in ``data``, in order (matches may overlap: ``a b c`` has two).

    >>> every_cut(b"a b c\\nd")
    [1, 3, 6]
    """
    regex = _regex(data)
    return sorted({_cut(m) for k in range(len(data)) if (m := regex.match(data, k))})


def may_cut(scanner: str | None, special_tokens: Iterable[str] = ()) -> bool:
    """Whether texts split by a pattern may be cut at safe places: only when a scanner runs
    it (``scanner``, as ``Tokenizer.scanner`` names it), and only when no special-token string
    holds a newline or a space (a cut inside one would hide it from the matcher that cuts
    special tokens out).

    >>> may_cut("cl100k", ["<|endoftext|>"]), may_cut(None), may_cut("gpt2", ["end of text"])
    (True, False, False)
    """
    return scanner is not None and not any("\n" in s or " " in s for s in special_tokens)
