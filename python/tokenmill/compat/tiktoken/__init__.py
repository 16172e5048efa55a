"""A tiktoken drop-in: change ``import tiktoken`` to ``from tokenmill.compat import tiktoken``
and the rest of the code stays as it is.

tiktoken 0.14's public API, computed by tokenmill: ``get_encoding``, ``encoding_for_model``,
``encoding_name_for_model``, ``list_encoding_names``, the ``Encoding`` class (same
constructor, methods, properties, defaults, results and builtin exception types; pickling),
and the submodules ``core``, ``load``, ``registry`` and ``model``. The OpenAI vocabularies
are tokenmill's: bundled, or downloaded once (``p50k_base``, ``p50k_edit``) after looking in
tokenmill's cache and tiktoken's. Each error is a :class:`tokenmill.TokenmillError` and the
builtin tiktoken raises.

>>> from tokenmill.compat import tiktoken
>>> enc = tiktoken.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
>>> tiktoken.encoding_for_model("gpt-4o").name
'o200k_base'
>>> tiktoken.load.load_tiktoken_bpe  # doctest: +ELLIPSIS
<function load_tiktoken_bpe at ...>
"""

from __future__ import annotations

from tokenmill.compat.tiktoken import core, load, model, registry
from tokenmill.compat.tiktoken.core import Encoding
from tokenmill.compat.tiktoken.model import encoding_for_model, encoding_name_for_model
from tokenmill.compat.tiktoken.registry import (
    TIKTOKEN_VERSION,
    get_encoding,
    list_encoding_names,
)

#: tiktoken's version whose API this is (code that checks ``tiktoken.__version__``).
__version__ = TIKTOKEN_VERSION

__all__ = [
    "Encoding",
    "core",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load",
    "model",
    "registry",
]
