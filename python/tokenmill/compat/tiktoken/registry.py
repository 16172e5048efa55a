"""``tiktoken.registry``: encodings by name, from plugins.

As in tiktoken, a plugin is a module of the ``tiktoken_ext`` namespace package with an
``ENCODING_CONSTRUCTORS`` dict (name -> a function returning ``Encoding``'s keyword
arguments); an encoding is built the first time it is asked for and shared after that
(:data:`ENCODINGS`). The OpenAI encodings come from the drop-in's own plugin,
:mod:`tokenmill.compat.tiktoken.openai_public`, in place of tiktoken's
``tiktoken_ext.openai_public`` (which would download them): they are built from tokenmill's
bundled vocabularies and share tokenmill's tokenizers. Other plugins (a user's
``tiktoken_ext/my_encodings.py``) are found and used as tiktoken uses them.

>>> get_encoding("o200k_base").encode("hello world")
[24912, 2375]
>>> get_encoding("o200k_base") is get_encoding("o200k_base")
True
>>> list_encoding_names()[:3]
['gpt2', 'r50k_base', 'p50k_base']
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tokenmill.compat.tiktoken import openai_public
from tokenmill.compat.tiktoken.core import ENCODINGS, Encoding, openai_encoding
from tokenmill.compat.tiktoken.errors import PluginError
from tokenmill.errors import InvalidArgumentError, UnknownTokenizerError

#: The version of tiktoken whose API the drop-in has.
TIKTOKEN_VERSION = "0.14.0"

_lock = threading.RLock()
#: Encoding name -> constructor, from every plugin; None until first needed.
ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] | None = None

# The drop-in's plugin takes the place of this one of tiktoken's (installed with tiktoken).
_REPLACED = "tiktoken_ext.openai_public"


@functools.cache
def _available_plugin_modules() -> Sequence[str]:
    """The plugin modules: the drop-in's own, then those of ``tiktoken_ext``, if any."""
    mods = [openai_public.__name__]
    try:
        namespace = importlib.import_module("tiktoken_ext")
    except ImportError:
        return mods
    for _, name, _ in pkgutil.iter_modules(namespace.__path__, "tiktoken_ext."):
        if name != _REPLACED:
            mods.append(name)
    return mods


def _find_constructors() -> dict[str, Callable[[], dict[str, Any]]]:
    global ENCODING_CONSTRUCTORS
    with _lock:
        if ENCODING_CONSTRUCTORS is not None:
            return ENCODING_CONSTRUCTORS
        found: dict[str, Callable[[], dict[str, Any]]] = {}
        for mod_name in _available_plugin_modules():
            mod = importlib.import_module(mod_name)
            try:
                constructors = mod.ENCODING_CONSTRUCTORS
            except AttributeError:
                raise PluginError(
                    f"tiktoken plugin {mod_name} does not define ENCODING_CONSTRUCTORS"
                ) from None
            for enc_name, constructor in constructors.items():
                if enc_name in found:
                    raise PluginError(
                        f"Duplicate encoding name {enc_name} in tiktoken plugin {mod_name}"
                    )
                found[enc_name] = constructor
        # Set only when every plugin loaded, so that a failure is raised again next time.
        ENCODING_CONSTRUCTORS = found
        return found


def get_encoding(encoding_name: str) -> Encoding:
    """The shared :class:`~tokenmill.compat.tiktoken.core.Encoding` of that name, built on
    first use. An unknown name is an :class:`~tokenmill.UnknownTokenizerError` (a
    ``ValueError``, as tiktoken's) listing the known ones."""
    if not isinstance(encoding_name, str):
        raise InvalidArgumentError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    if encoding_name in ENCODINGS:
        return ENCODINGS[encoding_name]
    with _lock:
        if encoding_name in ENCODINGS:
            return ENCODINGS[encoding_name]
        constructors = _find_constructors()
        if encoding_name not in constructors:
            raise UnknownTokenizerError(
                f"Unknown encoding {encoding_name}.\n"
                f"Plugins found: {_available_plugin_modules()}\n"
                f"tiktoken version: {TIKTOKEN_VERSION} (tokenmill's drop-in; known encodings: "
                f"{', '.join(constructors)})"
            )
        constructor = constructors[encoding_name]
        if constructor is openai_public.ENCODING_CONSTRUCTORS.get(encoding_name):
            return openai_encoding(encoding_name)  # shared, and registered in ENCODINGS
        enc = Encoding(**constructor())
        ENCODINGS[encoding_name] = enc
        return enc


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` takes."""
    with _lock:
        return list(_find_constructors())


__all__ = ["ENCODINGS", "ENCODING_CONSTRUCTORS", "get_encoding", "list_encoding_names"]
