"""A tiktoken drop-in: change ``import tiktoken`` to
``from tokenmill.compat import tiktoken`` and the rest of the code stays as it is.

Same constructor, same method signatures and defaults (``num_threads=8``), same ids, same
errors for disallowed special tokens (a ``ValueError``), same pickling.

>>> from tokenmill.compat import tiktoken
>>> enc = tiktoken.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
>>> tiktoken.encoding_for_model("gpt-4o").name
'o200k_base'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tokenmill.errors import UnknownModelError, UnknownTokenizerError
from tokenmill.formats.openai import REGISTRY
from tokenmill.pretrained import load_pretrained
from tokenmill.tokenizer import SpecialArg, Tokenizer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# Model name -> encoding, and model-name prefix -> encoding (for dated or fine-tuned names).
MODEL_TO_ENCODING: dict[str, str] = {
    "gpt-5": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4-mini": "o200k_base",
    "gpt-oss-20b": "o200k_harmony",
    "gpt-oss-120b": "o200k_harmony",
    "gpt-4": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base",
    "text-davinci-002": "p50k_base",
    "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base",
    "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base",
    "davinci": "r50k_base",
    "curie": "r50k_base",
    "babbage": "r50k_base",
    "ada": "r50k_base",
    "code-davinci-002": "p50k_base",
    "code-davinci-001": "p50k_base",
    "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base",
    "davinci-codex": "p50k_base",
    "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit",
    "code-davinci-edit-001": "p50k_edit",
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
}

MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5-": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "gpt-oss-": "o200k_harmony",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}


class Encoding(Tokenizer):
    """tiktoken's ``Encoding``: same constructor and methods, computed by tokenmill."""

    # tiktoken ignores names that are not special tokens instead of rejecting them.
    unknown_special_names = "ignore"

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        super().__init__(
            mergeable_ranks,
            pat_str,
            special_tokens,
            name=name,
            explicit_n_vocab=explicit_n_vocab,
        )

    @classmethod
    def _wrap(cls, tok: Tokenizer) -> Encoding:
        # A shallow copy of the shared tokenizer: the native core and tables are not copied.
        enc = cls.__new__(cls)
        enc.__dict__.update(tok.__dict__)
        return enc

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # tiktoken's attributes of these names: code written for tiktoken reads them.
    @property
    def _pat_str(self) -> str:
        return self.pattern

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        return self.mergeable_ranks

    @property
    def _special_tokens(self) -> dict[str, int]:
        return self.special_tokens

    # tiktoken's signatures: tokenmill's `num_threads` for one text is not part of them.
    def encode(  # type: ignore[override]
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> list[int]:
        return super().encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def encode_ordinary(self, text: str) -> list[int]:  # type: ignore[override]
        return super().encode_ordinary(text)

    def encode_to_numpy(  # type: ignore[override]
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> npt.NDArray[np.uint32]:
        return super().encode_to_numpy(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def encode_batch(  # type: ignore[override]
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> list[list[int]]:
        return super().encode_batch(
            text,
            num_threads=num_threads,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )

    def encode_ordinary_batch(  # type: ignore[override]
        self, text: Sequence[str], *, num_threads: int = 8
    ) -> list[list[int]]:
        return super().encode_ordinary_batch(text, num_threads=num_threads)

    def decode_batch(  # type: ignore[override]
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        return super().decode_batch(batch, errors=errors)

    def decode_bytes_batch(  # type: ignore[override]
        self, batch: Sequence[Sequence[int]], *, num_threads: int = 8
    ) -> list[bytes]:
        return super().decode_bytes_batch(batch)

    def __reduce__(self) -> tuple[Any, ...]:
        # A shared vocabulary pickles by name, as tiktoken's registered encodings do.
        how, args = super().__reduce__()[:2]
        if how is load_pretrained:
            return (get_encoding, args)
        return (
            _rebuild_encoding,
            (self.name, self.pattern, self.mergeable_ranks, self.special_tokens),
        )


def _rebuild_encoding(
    name: str, pat_str: str, mergeable_ranks: dict[bytes, int], special_tokens: dict[str, int]
) -> Encoding:
    return Encoding(
        name, pat_str=pat_str, mergeable_ranks=mergeable_ranks, special_tokens=special_tokens
    )


def get_encoding(encoding_name: str) -> Encoding:
    """tiktoken's ``get_encoding``: ``gpt2``, ``r50k_base``, ``p50k_base``, ``p50k_edit``,
    ``cl100k_base``, ``o200k_base``, ``o200k_harmony``."""
    if encoding_name not in REGISTRY:
        raise UnknownTokenizerError(
            f"Unknown encoding {encoding_name}. Plugins found: ['tokenmill']. "
            f"Available encodings: {', '.join(REGISTRY)}"
        )
    return Encoding._wrap(load_pretrained(encoding_name))


def list_encoding_names() -> list[str]:
    """The encoding names :func:`get_encoding` accepts."""
    return list(REGISTRY)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding a model uses, by exact name or by prefix (dated and fine-tuned names)."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise UnknownModelError(
        f"Could not automatically map {model_name} to a tokeniser. "
        "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect."
    )


def encoding_for_model(model_name: str) -> Encoding:
    """The :class:`Encoding` a model uses."""
    return get_encoding(encoding_name_for_model(model_name))


__all__ = [
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
]
