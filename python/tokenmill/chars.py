"""The character-level baseline: one token per distinct character of the training text, the
way the classic walkthroughs start before byte-level BPE.

>>> tok = CharTokenizer.train("hello world")
>>> tok.chars
[' ', 'd', 'e', 'h', 'l', 'o', 'r', 'w']
>>> tok.encode("hello")
[3, 2, 4, 4, 5]
>>> tok.decode([3, 2, 4, 4, 5])
'hello'
>>> CharTokenizer.train("abc", unknown="<unk>").encode("abz")
[1, 2, 0]
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenmill.errors import (
    InvalidVocabError,
    UnknownCharacterError,
    UnknownTokenIdError,
    VocabFileError,
    WrongTypeError,
)
from tokenmill.fileio import write_atomic

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FORMAT = "tokenmill-chars"
VERSION = 1


class CharTokenizer:
    """Characters <-> ids. Ids follow the sorted characters; with ``unknown``, id 0 is the
    unknown token and unseen characters map to it instead of raising."""

    def __init__(self, chars: Iterable[str], *, unknown: str | None = None) -> None:
        ordered = sorted(set(chars))
        for c in ordered:
            if len(c) != 1:
                raise InvalidVocabError(f"expected single characters, got {c!r}")
        self.unknown = unknown
        offset = 1 if unknown is not None else 0
        self.chars: list[str] = ordered
        self._stoi = {c: i + offset for i, c in enumerate(ordered)}
        self._itos = ([unknown] if unknown is not None else []) + ordered

    @classmethod
    def train(cls, text: str | Iterable[str], *, unknown: str | None = None) -> CharTokenizer:
        """Every distinct character of ``text`` (a string or an iterable of strings)."""
        chars: set[str] = set()
        for piece in [text] if isinstance(text, str) else text:
            chars.update(piece)
        return cls(chars, unknown=unknown)

    def __repr__(self) -> str:
        return f"<CharTokenizer n_vocab={self.n_vocab}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CharTokenizer):
            return NotImplemented
        return self.chars == other.chars and self.unknown == other.unknown

    __hash__ = None  # type: ignore[assignment]

    @property
    def n_vocab(self) -> int:
        """Number of ids (characters, plus the unknown token if any)."""
        return len(self._itos)

    def encode(self, text: str) -> list[int]:
        """One id per character."""
        stoi = self._stoi
        try:
            return [stoi[c] for c in text]
        except KeyError:
            if not isinstance(text, str):
                raise WrongTypeError(f"text must be str, not {type(text).__name__}") from None
            if self.unknown is not None:
                return [stoi.get(c, 0) for c in text]
            pos = next(i for i, c in enumerate(text) if c not in stoi)
            raise UnknownCharacterError(text[pos], pos) from None

    def encode_ordinary(self, text: str) -> list[int]:
        """Same as :meth:`encode` (a character tokenizer has no special tokens)."""
        return self.encode(text)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`encode` for many texts."""
        return [self.encode(t) for t in texts]

    def encode_to_numpy(self, text: str) -> npt.NDArray[np.uint32]:
        """:meth:`encode` as a ``uint32`` array."""
        import numpy as np

        return np.asarray(self.encode(text), dtype=np.uint32)

    def count(self, text: str) -> int:
        """Number of tokens (= characters, once they are all known)."""
        if self.unknown is None:
            self.encode(text)
        return len(text)

    def decode(self, ids: Iterable[int]) -> str:
        """The characters of ``ids`` (the unknown id decodes to the ``unknown`` string)."""
        itos = self._itos
        out = []
        for i in ids:
            if not 0 <= i < len(itos):
                raise UnknownTokenIdError(int(i), len(itos))
            out.append(itos[i])
        return "".join(out)

    def decode_batch(self, batch: Sequence[Sequence[int]]) -> list[str]:
        """:meth:`decode` for many id lists."""
        return [self.decode(ids) for ids in batch]

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "unknown": self.unknown, "chars": self.chars}

    def save(self, path: str | os.PathLike[str]) -> list[str]:
        """Write a JSON file (atomically); returns the paths written."""
        write_atomic(path, json.dumps(self.to_dict(), ensure_ascii=False).encode("utf-8"))
        return [str(path)]

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CharTokenizer:
        """Read a file written by :meth:`save`; names what is wrong with a bad one."""
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise VocabFileError(path, None, f"not valid JSON: {e}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise VocabFileError(path, None, f"not a character tokenizer (format {FORMAT!r})")
        if doc.get("version") != VERSION:
            raise VocabFileError(
                path, None, f"version {doc.get('version')!r}; this tokenmill reads {VERSION}"
            )
        chars = doc.get("chars")
        if not isinstance(chars, list) or not all(
            isinstance(c, str) and len(c) == 1 for c in chars
        ):
            raise VocabFileError(path, None, "'chars' must be a list of single characters")
        if len(set(chars)) != len(chars):
            raise VocabFileError(path, None, "'chars' lists a character twice")
        unknown = doc.get("unknown")
        if unknown is not None and not isinstance(unknown, str):
            raise VocabFileError(path, None, "'unknown' must be a string or null")
        return cls(chars, unknown=unknown)
