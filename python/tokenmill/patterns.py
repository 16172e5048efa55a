"""Split patterns and special-token names, defined once.

The pattern strings are tiktoken's (the native core holds them, so the Rust scanners and their
tests use the very same text). A *pattern name* is one of ``gpt2`` (= r50k/p50k), ``cl100k``
and ``o200k``; anything else is a regex.

>>> resolve("cl100k") == CL100K_PATTERN
True
>>> name_of(GPT2_PATTERN)
'gpt2'
>>> name_of(r"\\w+") is None
True
"""

from __future__ import annotations

from tokenmill._core import CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, pattern_name, scanner_of

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
}


def name_of(pattern: str) -> str | None:
    """The canonical name of a pattern name or pattern string, or None for a custom regex."""
    return pattern_name(pattern)


def scanner(pattern: str) -> str | None:
    """Which scanner runs ``pattern`` (as ``Tokenizer.scanner`` names it), or None when the
    regex engine does.

    >>> scanner("o200k"), scanner(r"\\w+")
    ('o200k', None)
    """
    return scanner_of(pattern)


def resolve(pattern: str) -> str:
    """The full regex for a pattern name; a custom regex is returned unchanged."""
    name = pattern_name(pattern)
    return PATTERNS[name] if name is not None else pattern


__all__ = [
    "CL100K_PATTERN",
    "ENDOFPROMPT",
    "ENDOFTEXT",
    "FIM_MIDDLE",
    "FIM_PREFIX",
    "FIM_SUFFIX",
    "GPT2_PATTERN",
    "O200K_PATTERN",
    "PATTERNS",
    "name_of",
    "resolve",
    "scanner",
]
