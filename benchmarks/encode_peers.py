"""The encoders ``bench_encode.py`` measures: one small adapter per peer.

Each adapter builds a peer for one of tokenmill's bundled encodings (``gpt2``, ``cl100k_base``,
``o200k_base``) without the network, from tokenmill's own bundled rank files, and exposes the
same calls:

- ``encode(text) -> list[int]``: one document, tiktoken's output form;
- ``encode_numpy(text) -> np.ndarray``: one document as an array, where the peer has such a form;
- ``batch(docs) -> list[list[int]]``: many documents on 2 threads;
- ``batch_numpy(docs) -> (ids, offsets)``: the same as one flat array, where the peer has one;
- ``threads_numpy(text) -> np.ndarray``: one document on 2 threads, where the peer can.

A missing form is ``None``. Peers that are not installed, or cannot be set up offline, raise
``Unavailable`` with the reason, and the benchmark prints it and goes on.

Vocabularies: tiktoken reads its cache (``TIKTOKEN_CACHE_DIR``, files named by the sha1 of their
URL, DESIGN.md §5), which we fill from tokenmill's bundled ``.tiktoken`` files (the same bytes
tiktoken pins by sha256, and tiktoken checks them again). tiktoken's ``gpt2`` is loaded as
``r50k_base``: the same ranks, pattern and special token, from one file. Peers that read
``.tiktoken`` files get the same decompressed files; peers that read HF ``tokenizer.json`` get
tokenmill's export (``tokenmill.formats.hf``), whose ids are verified against tiktoken's like
every other peer's before anything is timed.
"""

from __future__ import annotations

import atexit
import functools
import gzip
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

import tokenmill

ENCODINGS = ("gpt2", "cl100k_base", "o200k_base")
# tokenmill's name -> the stem of the rank file (and tiktoken's name for the same encoding).
RANK_FILE = {"gpt2": "r50k_base", "cl100k_base": "cl100k_base", "o200k_base": "o200k_base"}
THREADS = 2
# Peers whose thread count one environment variable sets, for the whole process and once:
# bench_encode sets it to 1 so their one-thread rows use one core, and times their parallel
# forms in a subprocess where it is THREADS. (fastokens otherwise splits one input of 16 KB or
# more across all cores, in its one-thread calls too.)
THREADS_VAR = {"fastokens": "FASTOKENS_BPE_THREADS"}
# numpy's OpenBLAS starts a thread for each further core at import, which spins for about 0.1 s
# (no peer uses BLAS). In a worker process that spin ran beside the first pass of a peer that
# loads fast: tokenmill's gpt2 first pass over Holmes, 24 ms, had 11.6 ms of CPU on the other
# core beside it, marked as a second core used. Set here, for the processes the benchmarks start.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def set_pool_sizes() -> None:
    """Size the peers' Rust thread pools (HF, riptoken, gigatoken, fastokens), which they read
    at first use, to THREADS, unless the environment already says."""
    os.environ.setdefault("RAYON_NUM_THREADS", str(THREADS))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")


_TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"


class Unavailable(Exception):
    """The peer cannot be measured here (not installed, no offline setup, no such encoding)."""


@dataclass
class Peer:
    name: str
    encode: Callable[[str], list[int]]
    encode_numpy: Callable[[str], np.ndarray] | None = None
    batch: Callable[[list[str]], list[list[int]]] | None = None
    batch_numpy: Callable[[list[str]], tuple[np.ndarray, np.ndarray]] | None = None
    threads_numpy: Callable[[str], np.ndarray] | None = None
    note: str = ""


@functools.cache
def workdir() -> Path:
    """A temporary folder with the decompressed rank files and a filled tiktoken cache."""
    folder = Path(tempfile.mkdtemp(prefix="tokenmill-bench-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    cache = folder / "tiktoken-cache"
    cache.mkdir()
    for stem in RANK_FILE.values():
        raw = resources.files("tokenmill.data").joinpath(f"{stem}.tiktoken.gz").read_bytes()
        data = gzip.decompress(raw)
        (folder / f"{stem}.tiktoken").write_bytes(data)
        url = _TIKTOKEN_URL.format(stem)
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    return folder


def rank_file(encoding: str) -> Path:
    return workdir() / f"{RANK_FILE[encoding]}.tiktoken"


@functools.cache
def hf_json(encoding: str) -> Path:
    """tokenmill's HF ``tokenizer.json`` export of the encoding, written once."""
    from tokenmill.formats import hf

    path = workdir() / f"{encoding}.tokenizer.json"
    path.write_text(hf.to_json(tokenmill.load(encoding)), encoding="utf-8")
    return path


def tiktoken_encoding(encoding: str):
    os.environ["TIKTOKEN_CACHE_DIR"] = str(workdir() / "tiktoken-cache")
    import tiktoken

    return tiktoken.get_encoding(RANK_FILE[encoding])


def _import(module: str):
    try:
        return __import__(module)
    except ImportError as e:
        raise Unavailable(f"not installed ({e})") from None


def _pool_map(fn: Callable[[str], list[int]], docs: Sequence[str]) -> list[list[int]]:
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return list(pool.map(fn, docs))


def _flat(rows: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    return np.concatenate(rows) if rows else np.zeros(0, np.uint32), offsets


# --- adapters ------------------------------------------------------------------------------


def build_tokenmill(encoding: str) -> Peer:
    tok = tokenmill.load(encoding)
    return Peer(
        "tokenmill",
        encode=tok.encode_ordinary,
        # As tiktoken's row: no search for special-token strings first.
        encode_numpy=lambda text: tok.encode_to_numpy(text, disallowed_special=()),
        threads_numpy=lambda text: tok.encode_to_numpy(
            text, disallowed_special=(), num_threads=THREADS
        ),
        batch=lambda docs: tok.encode_ordinary_batch(docs, num_threads=THREADS),
        batch_numpy=lambda docs: tok.encode_batch_to_numpy(
            docs, disallowed_special=(), num_threads=THREADS
        ),
    )


def build_tiktoken(encoding: str) -> Peer:
    _import("tiktoken")
    enc = tiktoken_encoding(encoding)
    return Peer(
        "tiktoken",
        encode=enc.encode_ordinary,
        encode_numpy=lambda text: enc.encode_to_numpy(text, disallowed_special=()),
        batch=lambda docs: enc.encode_ordinary_batch(docs, num_threads=THREADS),
    )


def build_hf(encoding: str) -> Peer:
    tokenizers = _import("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(hf_json(encoding)))
    fast = getattr(tok, "encode_batch_fast", tok.encode_batch)
    return Peer(
        "tokenizers",
        encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
        # Its batch runs on rayon's global pool: RAYON_NUM_THREADS (bench_encode sets 2).
        batch=lambda docs: [e.ids for e in fast(docs, add_special_tokens=False)],
        note="HF tokenizers, from tokenmill's tokenizer.json export",
    )


def build_gigatoken(encoding: str) -> Peer:
    gigatoken = _import("gigatoken")
    tok = gigatoken.Tokenizer.from_tiktoken(str(rank_file(encoding)))
    backend = tok.backend

    def batch_numpy(docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
        layout = backend.encode_batch(docs, parallel=True).layout  # awkward ListOffsetArray
        return np.asarray(layout.content.data), np.asarray(layout.offsets.data)

    return Peer(
        "gigatoken",
        # Its tiktoken-style list API (TiktokenCompat.encode_ordinary), kept on this thread.
        encode=lambda text: backend.encode_batch_list([text], parallel=False)[0],
        encode_numpy=backend.encode,
        batch=lambda docs: backend.encode_batch_list(docs, parallel=True),
        batch_numpy=batch_numpy,
        note="from the .tiktoken file; batches on its rayon pool",
    )


def build_fastokens(encoding: str) -> Peer:
    fastokens = _import("fastokens")
    enc = tiktoken_encoding(encoding)
    tok = fastokens.Tokenizer.from_tiktoken(
        str(rank_file(encoding)), pattern=enc._pat_str, special_tokens=enc._special_tokens
    )

    def flat(docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
        ids, offsets = tok.encode_batch_flat(docs)
        return np.frombuffer(ids, np.uint32), np.frombuffer(offsets, np.uint64)

    return Peer(
        "fastokens",
        encode=lambda text: tok.encode_ordinary(text).ids,
        encode_numpy=lambda text: flat([text])[0],
        threads_numpy=lambda text: flat([text])[0],  # it splits the text itself (THREADS_VAR)
        batch=lambda docs: [e.ids for e in tok.encode_batch(docs)],
        batch_numpy=flat,
        note="threads: FASTOKENS_BPE_THREADS, for the process (THREADS_VAR)",
    )


def build_tokie(encoding: str) -> Peer:
    tokie = _import("tokie")
    tok = tokie.Tokenizer.from_json(str(hf_json(encoding)))

    def flat(docs: list[str]) -> tuple[np.ndarray, np.ndarray]:
        ids, lengths = tok.encode_batch_flat(docs, add_special_tokens=False)
        offsets = np.zeros(len(lengths) + 1, dtype=np.uint64)
        np.cumsum(lengths, out=offsets[1:])
        return ids, offsets

    return Peer(
        "tokie",
        encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
        encode_numpy=lambda text: flat([text])[0],
        batch=lambda docs: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)],
        batch_numpy=flat,
        note="from tokenmill's tokenizer.json export",
    )


def build_riptoken(encoding: str) -> Peer:
    riptoken = _import("riptoken")
    enc = tiktoken_encoding(encoding)
    core = riptoken.CoreBPE(enc._mergeable_ranks, enc._special_tokens, enc._pat_str)
    return Peer(
        "riptoken",
        encode=core.encode_ordinary,
        batch=core.encode_ordinary_batch,  # rayon: RAYON_NUM_THREADS
    )


def build_bpe_openai(encoding: str) -> Peer:
    _import("bpe_openai")
    from bpe_openai import _bindings

    if encoding == "gpt2":
        raise Unavailable("bpe-openai ships cl100k_base and o200k_base only")
    # The Rust tokenizer itself: the Python wrapper refuses inputs of 1M characters or more.
    core = _bindings.tokenizer_for_encoding(encoding)
    return Peer(
        "bpe-openai",
        encode=core.encode,
        batch=lambda docs: _pool_map(core.encode, docs),
        note="its own bundled vocab; batch = 2 Python threads (no native batch)",
    )


def build_kitoken(encoding: str) -> Peer:
    kitoken = _import("kitoken")
    tok = kitoken.Kitoken.from_tiktoken_file(str(rank_file(encoding)))

    def batch(docs: list[str]) -> list[list[int]]:
        half = (len(docs) + 1) // 2
        parts = _pool_map(tok.encode_all, [docs[:half], docs[half:]])  # type: ignore[arg-type]
        return parts[0] + parts[1]

    return Peer(
        "kitoken",
        encode=tok.encode,
        batch=batch,
        note="from the .tiktoken file; batch = encode_all on 2 Python threads",
    )


BUILDERS: dict[str, Callable[[str], Peer]] = {
    "tokenmill": build_tokenmill,
    "tiktoken": build_tiktoken,
    "tokenizers": build_hf,
    "gigatoken": build_gigatoken,
    "fastokens": build_fastokens,
    "tokie": build_tokie,
    "riptoken": build_riptoken,
    "bpe-openai": build_bpe_openai,
    "kitoken": build_kitoken,
}
PEER_NAMES = tuple(BUILDERS)


def build(name: str, encoding: str) -> Peer:
    """The peer ``name`` set up for ``encoding``; ``Unavailable`` says why it cannot be."""
    try:
        return BUILDERS[name](encoding)
    except Unavailable:
        raise
    except Exception as e:  # a peer that fails to set up is skipped, not fatal
        raise Unavailable(f"setup failed: {type(e).__name__}: {e}") from None
