"""The encoders ``bench_encode.py`` and ``bench_open_models.py`` measure: an adapter per peer.

Each adapter builds a peer without the network, for one of tokenmill's bundled encodings
(``gpt2``, ``cl100k_base``, ``o200k_base``, from tokenmill's own bundled rank files) or for a
tokenizer file (a ``Source``: a tiktoken rank file with its split pattern, or a HF
``tokenizer.json``), and exposes the same calls:

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

A ``Source`` is read the same way: tiktoken and the peers that read rank files get the file
with its pattern (gigatoken only through ``tokenizer.json``: its ``from_tiktoken`` takes a
named pretokenizer scheme, not a regex); the peers that read ``tokenizer.json`` get the file
itself or, for a rank file, tokenmill's export of it. tiktoken cannot read a ``tokenizer.json``.
Where ``encoding`` is asked for below, a ``Source`` (or its JSON form, which the benchmarks'
worker processes receive) will do as well as a bundled encoding's name.
"""

from __future__ import annotations

import atexit
import functools
import gzip
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
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


@dataclass(frozen=True)
class Source:
    """A tokenizer file to build the peers from: a tiktoken rank file (``pattern`` set: its
    split regex, which the file does not carry, and its ``special_tokens``) or a HF
    ``tokenizer.json`` (``pattern`` None). ``hf_json`` is a ``tokenizer.json`` of the same
    tokenizer for the peers that read only that format: the file itself for a
    ``tokenizer.json``; for a rank file, tokenmill's export, made here on first use unless the
    caller made it once for all its worker processes (``with_hf_json``)."""

    name: str
    path: str
    pattern: str | None = None
    special_tokens: tuple[tuple[str, int], ...] = ()
    hf_json: str | None = None

    @property
    def is_rank_file(self) -> bool:
        return self.pattern is not None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Source:
        fields = json.loads(text)
        fields["special_tokens"] = tuple(tuple(t) for t in fields["special_tokens"])
        return cls(**fields)

    def with_hf_json(self) -> Source:
        """The same source with its ``tokenizer.json`` made now (in this process's
        ``workdir()``), for worker processes to read instead of exporting it each."""
        return Source(**{**asdict(self), "hf_json": str(hf_json(self))})


# A bundled encoding's name ("gpt2", ...), a Source, or a Source's JSON (``Source.to_json``).
Encoding = str | Source


def as_source(encoding: Encoding) -> str | Source:
    """``encoding`` as a bundled encoding's name or a ``Source`` (decoding a Source's JSON)."""
    if isinstance(encoding, str) and encoding.startswith("{"):
        return Source.from_json(encoding)
    return encoding


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


def rank_file(encoding: Encoding) -> Path:
    src = as_source(encoding)
    if isinstance(src, Source):
        if not src.is_rank_file:
            raise Unavailable("reads tiktoken rank files; this is a tokenizer.json")
        return Path(src.path)
    return workdir() / f"{RANK_FILE[src]}.tiktoken"


def load_tokenmill(encoding: Encoding) -> tokenmill.Tokenizer:
    """tokenmill's tokenizer for a bundled encoding, or for a source file (with its pattern and
    special tokens if it is a rank file)."""
    src = as_source(encoding)
    if not isinstance(src, Source):
        return tokenmill.load(src)
    if src.is_rank_file:
        return tokenmill.load(
            src.path, pattern=src.pattern, special_tokens=dict(src.special_tokens)
        )
    return tokenmill.load(src.path)


@functools.cache
def _hf_json(src: str | Source) -> Path:
    if isinstance(src, Source) and src.hf_json is not None:
        return Path(src.hf_json)
    if isinstance(src, Source) and not src.is_rank_file:
        return Path(src.path)
    from tokenmill.formats import hf

    name = src.name if isinstance(src, Source) else src
    path = workdir() / f"{name}.tokenizer.json"
    path.write_text(hf.to_json(load_tokenmill(src)), encoding="utf-8")
    return path


def hf_json(encoding: Encoding) -> Path:
    """A HF ``tokenizer.json`` of the encoding: tokenmill's export, written once (for a source,
    its ``hf_json``: the file itself if it is a ``tokenizer.json``)."""
    return _hf_json(as_source(encoding))


@functools.cache
def _source_tiktoken(src: Source):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    return tiktoken.Encoding(
        src.name,
        pat_str=src.pattern,
        mergeable_ranks=load_tiktoken_bpe(src.path),
        special_tokens=dict(src.special_tokens),
    )


def tiktoken_encoding(encoding: Encoding):
    src = as_source(encoding)
    if isinstance(src, Source):
        _import("tiktoken")
        if not src.is_rank_file:
            raise Unavailable("tiktoken reads rank files only, not a tokenizer.json")
        return _source_tiktoken(src)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(workdir() / "tiktoken-cache")
    import tiktoken

    return tiktoken.get_encoding(RANK_FILE[src])


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


def build_tokenmill(encoding: Encoding) -> Peer:
    tok = load_tokenmill(encoding)
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


def build_tiktoken(encoding: Encoding) -> Peer:
    _import("tiktoken")
    enc = tiktoken_encoding(encoding)
    return Peer(
        "tiktoken",
        encode=enc.encode_ordinary,
        encode_numpy=lambda text: enc.encode_to_numpy(text, disallowed_special=()),
        batch=lambda docs: enc.encode_ordinary_batch(docs, num_threads=THREADS),
    )


def build_hf(encoding: Encoding) -> Peer:
    tokenizers = _import("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(hf_json(encoding)))
    src = as_source(encoding)
    own = isinstance(src, Source) and not src.is_rank_file
    fast = getattr(tok, "encode_batch_fast", tok.encode_batch)
    return Peer(
        "tokenizers",
        encode=lambda text: tok.encode(text, add_special_tokens=False).ids,
        # Its batch runs on rayon's global pool: RAYON_NUM_THREADS (bench_encode sets 2).
        batch=lambda docs: [e.ids for e in fast(docs, add_special_tokens=False)],
        note="HF tokenizers, from " + ("the file" if own else "tokenmill's tokenizer.json export"),
    )


def build_gigatoken(encoding: Encoding) -> Peer:
    gigatoken = _import("gigatoken")
    src = as_source(encoding)
    if isinstance(src, Source):
        # Its from_tiktoken takes a named pretokenizer scheme, not the file's regex.
        tok = gigatoken.Tokenizer.from_json(hf_json(src).read_text(encoding="utf-8"))
        how = "from the file" if not src.is_rank_file else "from tokenmill's tokenizer.json export"
    else:
        tok = gigatoken.Tokenizer.from_tiktoken(str(rank_file(encoding)))
        how = "from the .tiktoken file"
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
        note=f"{how}; batches on its rayon pool",
    )


def build_fastokens(encoding: Encoding) -> Peer:
    fastokens = _import("fastokens")
    src = as_source(encoding)
    how = "threads: FASTOKENS_BPE_THREADS, for the process (THREADS_VAR)"
    if not isinstance(src, Source):
        enc = tiktoken_encoding(encoding)
        tok = fastokens.Tokenizer.from_tiktoken(
            str(rank_file(encoding)), pattern=enc._pat_str, special_tokens=enc._special_tokens
        )
    elif not src.is_rank_file:
        tok = fastokens.Tokenizer.from_file(src.path)
        how = f"from the file; {how}"
    else:
        try:
            tok = fastokens.Tokenizer.from_tiktoken(
                src.path, pattern=src.pattern, special_tokens=dict(src.special_tokens)
            )
            how = f"from the rank file; {how}"
        except Exception as e:  # it reads the same vocabulary from tokenizer.json
            tok = fastokens.Tokenizer.from_file(str(hf_json(src)))
            why = f"{type(e).__name__}: {str(e)[:100]}"
            how = f"from tokenmill's tokenizer.json export (from_tiktoken refused: {why}); {how}"

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
        note=how,
    )


def build_tokie(encoding: Encoding) -> Peer:
    tokie = _import("tokie")
    tok = tokie.Tokenizer.from_json(str(hf_json(encoding)))
    src = as_source(encoding)
    own = isinstance(src, Source) and not src.is_rank_file

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
        note="from the file" if own else "from tokenmill's tokenizer.json export",
    )


def build_riptoken(encoding: Encoding) -> Peer:
    riptoken = _import("riptoken")
    enc = tiktoken_encoding(encoding)
    core = riptoken.CoreBPE(enc._mergeable_ranks, enc._special_tokens, enc._pat_str)
    return Peer(
        "riptoken",
        encode=core.encode_ordinary,
        batch=core.encode_ordinary_batch,  # rayon: RAYON_NUM_THREADS
    )


def build_bpe_openai(encoding: Encoding) -> Peer:
    _import("bpe_openai")
    from bpe_openai import _bindings

    if isinstance(as_source(encoding), Source):
        raise Unavailable("bpe-openai ships its own cl100k_base and o200k_base; it reads no files")
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


def build_kitoken(encoding: Encoding) -> Peer:
    kitoken = _import("kitoken")
    if isinstance(as_source(encoding), Source):
        raise Unavailable("not set up for tokenizer files here (only the bundled encodings)")
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


BUILDERS: dict[str, Callable[[Encoding], Peer]] = {
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


def build(name: str, encoding: Encoding) -> Peer:
    """The peer ``name`` set up for ``encoding`` (a bundled encoding's name, a ``Source`` or
    its JSON); ``Unavailable`` says why it cannot be."""
    try:
        return BUILDERS[name](as_source(encoding))
    except (Unavailable, KeyboardInterrupt, SystemExit):
        raise
    # A peer that fails to set up is skipped, not fatal; a Rust panic in a peer's loader
    # (pyo3's PanicException) is a BaseException.
    except BaseException as e:
        raise Unavailable(f"setup failed: {type(e).__name__}: {e}") from None
