"""The drop-in's own plugin, in place of tiktoken's ``tiktoken_ext.openai_public``: a
constructor for each OpenAI vocabulary tokenmill knows (:data:`tokenmill.formats.openai.REGISTRY`),
returning the keyword arguments of ``Encoding`` that tiktoken's returns.

The rank files come from tokenmill's loaders: bundled in the package (``gpt2``, ``r50k_base``,
``cl100k_base``, ``o200k_base``, ``o200k_harmony``), or downloaded once with their pinned
sha256 after looking in tokenmill's cache and tiktoken's (``p50k_base``, ``p50k_edit``; see
:func:`tokenmill.pretrained.fetch`). ``get_encoding`` does not call these for the bundled
names: it shares tokenmill's tokenizer instead of building one from a dict.

>>> kwargs = ENCODING_CONSTRUCTORS["gpt2"]()
>>> kwargs["name"], kwargs["explicit_n_vocab"], kwargs["special_tokens"]
('gpt2', 50257, {'<|endoftext|>': 50256})
>>> kwargs["mergeable_ranks"][b" world"]
995
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tokenmill.errors import UnknownTokenizerError
from tokenmill.formats.openai import REGISTRY
from tokenmill.patterns import resolve
from tokenmill.pretrained import load_pretrained


def encoding_kwargs(name: str) -> dict[str, Any]:
    """``name``'s keyword arguments for ``Encoding`` (``explicit_n_vocab`` where tiktoken
    gives one: ``gpt2``, ``r50k_base`` and ``p50k_base``)."""
    try:
        spec = REGISTRY[name]
    except KeyError:
        raise UnknownTokenizerError(
            f"no OpenAI vocabulary named {name!r}; tokenmill knows {', '.join(REGISTRY)}"
        ) from None
    ranks = load_pretrained(name).mergeable_ranks
    kwargs: dict[str, Any] = {
        "name": name,
        "pat_str": resolve(spec.pattern),
        "mergeable_ranks": ranks,
        "special_tokens": dict(spec.special_tokens),
    }
    if spec.n_vocab is not None:
        kwargs["explicit_n_vocab"] = spec.n_vocab
    return kwargs


#: Encoding name -> a function of no arguments returning its ``Encoding`` keyword arguments,
#: as in a tiktoken plugin.
ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] = {
    name: functools.partial(encoding_kwargs, name) for name in REGISTRY
}

__all__ = ["ENCODING_CONSTRUCTORS", "encoding_kwargs"]
