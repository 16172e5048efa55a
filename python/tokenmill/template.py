"""The special tokens a tokenizer adds around each text when asked: ``encode(text,
add_special_tokens=True)`` is ``prefix + encode(text) + suffix``, as HF ``tokenizers`` does with
a file's ``TemplateProcessing`` (Llama 3's ``<|begin_of_text|> $A``) or ``RobertaProcessing``
(``<s> $A </s>``) post-processor when it is asked to add special tokens.

Without the flag nothing is added: tokenmill's ids are tiktoken's (and HF's with
``add_special_tokens=False``).

>>> t = Template(prefix=(1,), suffix=(2,))
>>> t.wrap([7, 8])
[1, 7, 8, 2]
>>> import numpy as np
>>> ids, offsets = t.wrap_flat(np.array([7, 8, 9], np.uint32), np.array([0, 2, 2, 3]))
>>> ids.tolist(), offsets.tolist()
([1, 7, 8, 2, 1, 2, 1, 9, 2], [0, 4, 6, 9])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tokenmill.errors import InvalidArgumentError, WrongTypeError

if TYPE_CHECKING:
    import numpy.typing as npt


@dataclass(frozen=True)
class Template:
    """Token ids put before (``prefix``) and after (``suffix``) the ids of each text."""

    prefix: tuple[int, ...] = ()
    suffix: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for side in ("prefix", "suffix"):
            ids = getattr(self, side)
            if isinstance(ids, str | bytes) or not hasattr(ids, "__iter__"):
                raise WrongTypeError(
                    f"template {side} must be a sequence of token ids, not {ids!r:.40}"
                )
            ids = tuple(ids)
            for i in ids:
                if isinstance(i, bool) or not isinstance(i, int) or i < 0:
                    raise WrongTypeError(
                        f"template {side} must hold token ids (ints >= 0), not {i!r:.40}"
                    )
            object.__setattr__(self, side, ids)

    def __bool__(self) -> bool:
        return bool(self.prefix or self.suffix)

    @property
    def added(self) -> int:
        """How many ids each text gains."""
        return len(self.prefix) + len(self.suffix)

    @property
    def ids(self) -> tuple[int, ...]:
        """Every id the template adds, prefix then suffix."""
        return self.prefix + self.suffix

    def wrap(self, ids: list[int]) -> list[int]:
        """``prefix + ids + suffix``, as a new list."""
        return [*self.prefix, *ids, *self.suffix]

    def wrap_array(self, ids: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """:meth:`wrap` for a numpy array of ids."""
        import numpy as np

        return np.concatenate(
            [np.array(self.prefix, ids.dtype), ids, np.array(self.suffix, ids.dtype)]
        )

    def wrap_flat(
        self, ids: npt.NDArray[Any], offsets: npt.NDArray[Any]
    ) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """:meth:`wrap` for every text of a flat batch (``ids[offsets[i]:offsets[i + 1]]`` is
        text ``i``): the new flat ids and offsets, built with whole-array operations."""
        import numpy as np

        n = len(offsets) - 1
        p, s = len(self.prefix), len(self.suffix)
        new_offsets = offsets + np.arange(n + 1, dtype=offsets.dtype) * (p + s)
        out = np.empty(len(ids) + n * (p + s), ids.dtype)
        # Each id of text i moves right by the i texts' additions before it, and its prefix.
        text_of = np.repeat(np.arange(n), np.diff(offsets))
        out[np.arange(len(ids)) + text_of * (p + s) + p] = ids
        starts, ends = new_offsets[:-1], new_offsets[1:]
        for k, i in enumerate(self.prefix):
            out[starts + k] = i
        for k, i in enumerate(self.suffix):
            out[ends - s + k] = i
        return out, new_offsets

    def check(self, is_known: Any, name: str) -> None:
        """An :class:`InvalidArgumentError` unless ``is_known(id)`` holds for every id (the
        tokenizer's special tokens)."""
        for i in self.ids:
            if not is_known(i):
                raise InvalidArgumentError(
                    f"the template of {name} adds id {i}, which is not one of its special tokens"
                )
