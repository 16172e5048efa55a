"""What the readers of vocabulary files share: what they read a file into (a
:class:`Vocabulary`), JSON that parses or says why not, id bounds, and errors that name the
file when a tokenizer is built from its parts.

Every problem with a file's bytes is a :class:`~tokenmill.VocabFileError` naming the file
(and the line, where known), never a bare ``AttributeError`` or ``RecursionError``: readers
check the structure they expect with :func:`kind` in their messages.

>>> parse_json(b'{"a": [1, 2]}', "x.json")
{'a': [1, 2]}
>>> kind([1, 2]), kind(None), kind(True)
('a list', 'null', 'true')
>>> is_id(MAX_ID), is_id(MAX_ID + 1), is_id(-1), is_id(True), is_id(3.0)
(True, False, False, False, False)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tokenmill.errors import (
    InvalidPatternError,
    InvalidSpecialTokensError,
    InvalidVocabError,
    VocabFileError,
)
from tokenmill.template import Template


@dataclass(frozen=True)
class Vocabulary:
    """What a tokenizer file says, read and checked: everything a tokenizer is built from.

    Readers return this rather than a tokenizer so that the formats need nothing of
    :mod:`tokenmill.tokenizer` (which writes through them); ``tokenmill.load`` builds the
    tokenizer, with the caller's pattern and special tokens in place of the file's.
    """

    source: str  # the file, as messages name it
    name: str  # the tokenizer's name: the one the file holds, else from the file's name
    # The ordinary tokens by id, b"" for an id none has; None when ``rank_data`` has them.
    tokens: list[bytes] | None
    # The split pattern, or several applied one after another; None: the file does not say
    # (a rank file).
    pattern: str | list[str] | None
    special_tokens: dict[str, int] = field(default_factory=dict)
    # A rank file's bytes: the native core parses them itself, with no Python bytes object
    # per token (docs/performance.md).
    rank_data: bytes | None = None
    merges: list[tuple[int, int, int | None]] | None = None  # (left, right, count), if held
    # The Unicode normalization form (NFC, NFD, NFKC, NFKD) applied to the text between special
    # tokens before it is split; None for none (an HF file's normalizer).
    normalizer: str | None = None
    # The special tokens added around each text with add_special_tokens=True (an HF file's
    # post-processor); None for none.
    template: Template | None = None
    # Special tokens looked for in the normalized text (an HF file's added tokens with
    # normalized true, where that matters).
    normalized_specials: frozenset[str] = frozenset()
    # Special tokens that take the whitespace before them, and after them (HF's lstrip, rstrip).
    lstrip_specials: frozenset[str] = frozenset()
    rstrip_specials: frozenset[str] = frozenset()
    # Tokens matched before splitting by every encoding method, without allowed_special (HF's
    # added tokens with special false); the three sets above may name them too.
    added_tokens: dict[str, int] = field(default_factory=dict)
    # A check of the built tokenizer's merge parents (``Tokenizer.merge_parents``) that the
    # file's ids depend on (HF's merge list); raises VocabFileError.
    check_parents: Callable[[list[tuple[int, int] | None]], None] | None = None


# The Unicode normalization forms a tokenizer may apply to the text between special tokens
# before splitting it (HF files' normalizers; the core applies them).
NORMALIZERS = ("NFC", "NFD", "NFKC", "NFKD")

# The largest id a file may give: ids cross into the core as u32 and into numpy as int32, so
# one bound fits every consumer.
MAX_ID = 2**31 - 1


def parse_json(data: bytes, source: str) -> Any:
    """The JSON value in ``data`` (strict UTF-8), or a :class:`VocabFileError` naming
    ``source`` and, where known, the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise VocabFileError(source, line, f"not UTF-8 at byte {e.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise VocabFileError(source, e.lineno, f"not valid JSON: {e.msg}") from None
    except RecursionError:
        # json's decoder recurses once per nesting level.
        raise VocabFileError(source, None, "not usable JSON: nested too deeply") from None
    except ValueError as e:  # an integer with more digits than Python converts
        raise VocabFileError(source, None, f"not usable JSON: {e}") from None


def kind(value: object) -> str:
    """A JSON value's type, as messages name it ("a list", "a string", "null"...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    for types, name in (
        (dict, "an object"),
        (list, "a list"),
        (str, "a string"),
        (int, "an integer"),
        (float, "a number"),
    ):
        if isinstance(value, types):
            return name
    return type(value).__name__


def is_id(value: object) -> bool:
    """Whether a JSON value can be a token id: an integer (not a bool) in 0..MAX_ID."""
    # type() rather than isinstance: a bool is an int, and this runs once a vocabulary entry.
    return type(value) is int and 0 <= value <= MAX_ID


def first_gap(tokens: Sequence[bytes]) -> int | None:
    """The first id below the last ordinary token's that no ordinary token has (an empty
    token in ``Tokenizer.token_bytes_list``), or None: the formats that number merged tokens
    one after another cannot hold one.

    >>> first_gap([b"a", b"", b"b"]), first_gap([b"a", b"b"])
    (1, None)
    """
    return next((i for i, t in enumerate(tokens) if not t), None) if b"" in tokens else None


@contextmanager
def naming(source: str, *, own_pattern: bool = False, own_specials: bool = False) -> Iterator[None]:
    """Around building a tokenizer from a file's parts: what the tokenizer refuses becomes a
    :class:`VocabFileError` naming ``source``, except a pattern or special tokens the caller
    gave itself (``own_pattern``, ``own_specials``), which keep their own errors."""
    try:
        yield
    except VocabFileError as e:  # the native rank-file parser's, which names no file
        raise VocabFileError(source, e.line, e.problem) from None
    except InvalidPatternError as e:
        if own_pattern:
            raise
        raise VocabFileError(source, None, f"the pattern does not compile: {e}") from None
    except InvalidSpecialTokensError as e:
        if own_specials:
            raise
        raise VocabFileError(source, None, f"its special tokens cannot be used: {e}") from None
    except InvalidVocabError as e:
        raise VocabFileError(source, None, str(e)) from None
