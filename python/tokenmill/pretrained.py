"""OpenAI's vocabularies: three bundled, the rest downloaded once with a pinned sha256.

``gpt2`` (= ``r50k_base``), ``cl100k_base`` and ``o200k_base`` ship inside the package and
work offline. Other names (``p50k_base``, ``p50k_edit``) and URLs are downloaded into a cache
directory, checked against their sha256 before anything is written, and written atomically.
The cache also reads tiktoken's cache layout (files named by the sha1 of their URL, in
``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR`` or ``<tmp>/data-gym-cache``), so a filled
tiktoken cache gives tokenmill the same vocabularies offline.

>>> import tokenmill
>>> tokenmill.load("o200k_base").n_vocab
200019
>>> "p50k_base" in list_pretrained()
True
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from tokenmill import _core
from tokenmill.errors import (
    DownloadError,
    HashMismatchError,
    UnknownTokenizerError,
    VocabFileError,
)
from tokenmill.fileio import write_atomic
from tokenmill.formats import rankfile
from tokenmill.patterns import ENDOFPROMPT, ENDOFTEXT, FIM_MIDDLE, FIM_PREFIX, FIM_SUFFIX
from tokenmill.tokenizer import Tokenizer

_BASE = "https://openaipublic.blob.core.windows.net/encodings/"


@dataclass(frozen=True)
class Pretrained:
    """Where a named vocabulary comes from and how it splits."""

    name: str
    source: str  # a file bundled in tokenmill/data, or a URL
    sha256: str  # of the uncompressed rank file
    pattern: str
    special_tokens: dict[str, int] = field(default_factory=dict)
    n_vocab: int | None = None

    @property
    def bundled(self) -> bool:
        return not self.source.startswith(("http://", "https://"))


_R50K = (
    "r50k_base.tiktoken.gz",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
)
_P50K = (
    _BASE + "p50k_base.tiktoken",
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
)
_CL100K = (
    "cl100k_base.tiktoken.gz",
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
)
_O200K = (
    "o200k_base.tiktoken.gz",
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
)

_HARMONY = {
    "<|startoftext|>": 199998,
    ENDOFTEXT: 199999,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
    ENDOFPROMPT: 200018,
} | {f"<|reserved_{i}|>": i for i in range(200013, 201088)}  # 200018 has two names, as in tiktoken

REGISTRY: dict[str, Pretrained] = {
    p.name: p
    for p in [
        Pretrained("gpt2", *_R50K, "gpt2", {ENDOFTEXT: 50256}, 50257),
        Pretrained("r50k_base", *_R50K, "gpt2", {ENDOFTEXT: 50256}, 50257),
        Pretrained("p50k_base", *_P50K, "gpt2", {ENDOFTEXT: 50256}, 50281),
        Pretrained(
            "p50k_edit",
            *_P50K,
            "gpt2",
            {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
        ),
        Pretrained(
            "cl100k_base",
            *_CL100K,
            "cl100k",
            {
                ENDOFTEXT: 100257,
                FIM_PREFIX: 100258,
                FIM_MIDDLE: 100259,
                FIM_SUFFIX: 100260,
                ENDOFPROMPT: 100276,
            },
        ),
        Pretrained("o200k_base", *_O200K, "o200k", {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
        Pretrained("o200k_harmony", *_O200K, "o200k", _HARMONY),
    ]
}

_LOADED: dict[str, Tokenizer] = {}
_LOCK = threading.Lock()


def list_pretrained() -> list[str]:
    """Names :func:`load` knows without a path (bundled or downloadable)."""
    return list(REGISTRY)


def cache_dir() -> Path:
    """Where downloads go: ``TOKENMILL_CACHE_DIR``, else ``$XDG_CACHE_HOME/tokenmill``, else
    ``~/.cache/tokenmill``."""
    if env := os.environ.get("TOKENMILL_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tokenmill"


def tiktoken_cache_dirs() -> list[Path]:
    """Where tiktoken keeps its downloads (read-only for tokenmill)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if env := os.environ.get(var):
            return [Path(env)]
    return [Path(tempfile.gettempdir()) / "data-gym-cache"]


def load_pretrained(name: str) -> Tokenizer:
    """A named OpenAI vocabulary; loaded once per process and shared (tokenizers are immutable)."""
    with _LOCK:
        if name in _LOADED:
            return _LOADED[name]
    try:
        spec = REGISTRY[name]
    except KeyError:
        raise UnknownTokenizerError(
            f"unknown tokenizer {name!r}: known names are {', '.join(REGISTRY)}; "
            "or pass a file path or URL"
        ) from None
    data = _bundled(spec) if spec.bundled else fetch(spec.source, spec.sha256)
    core = _core.CoreTokenizer.from_rank_file(data, spec.pattern, list(spec.special_tokens.items()))
    tok = Tokenizer._from_core(core, name)
    tok._pretrained = name
    if spec.n_vocab is not None and tok.n_vocab != spec.n_vocab:
        raise VocabFileError(
            spec.source, None, f"expected {spec.n_vocab} tokens, got {tok.n_vocab}"
        )
    with _LOCK:
        return _LOADED.setdefault(name, tok)


def _bundled(spec: Pretrained) -> bytes:
    data = rankfile.maybe_gunzip(
        resources.files("tokenmill.data").joinpath(spec.source).read_bytes(), spec.source
    )
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise HashMismatchError(
            f"the bundled {spec.source} has sha256 {digest}, expected {spec.sha256}: "
            "the installation is damaged; reinstall tokenmill"
        )
    return data


def fetch(url: str, sha256: str | None = None, *, timeout: float = 60.0) -> bytes:
    """The bytes at ``url``, from a cache if possible, else downloaded and cached.

    With ``sha256``, cached or downloaded bytes must have that digest: a mismatched cache entry
    is ignored, a mismatched download raises :class:`HashMismatchError` and caches nothing.
    """
    key = hashlib.sha1(url.encode()).hexdigest()
    for folder in [cache_dir(), *tiktoken_cache_dirs()]:
        path = folder / key
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if sha256 is None or hashlib.sha256(data).hexdigest() == sha256:
            return data
    data = _download(url, timeout)
    if sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != sha256:
            raise HashMismatchError(
                f"{url} has sha256 {digest}, expected {sha256}; nothing was cached"
            )
    write_atomic(cache_dir() / key, data)
    return data


def _download(url: str, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.read()
    except urllib.error.HTTPError as e:
        raise DownloadError(f"could not download {url}: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise DownloadError(
            f"could not download {url}: {reason}. Offline? Put the file in {cache_dir()} "
            f"named {hashlib.sha1(url.encode()).hexdigest()}, or set TOKENMILL_CACHE_DIR"
        ) from None


def load(
    name_or_path: str | os.PathLike[str],
    *,
    pattern: str | None = None,
    special_tokens: dict[str, int] | None = None,
    sha256: str | None = None,
) -> Tokenizer:
    """Load a tokenizer by name, path or URL.

    - a name from :func:`list_pretrained` (``gpt2``, ``cl100k_base``, ``o200k_base``...);
    - a ``.tiktoken`` rank file (optionally gzipped) or its URL: give ``pattern`` (a name such
      as ``"cl100k"`` or a regex) and ``special_tokens``; ``sha256`` pins a download;
    - GPT-2's ``encoder.json`` (with ``vocab.bpe`` beside it) or the folder holding both;
    - a HF ``tokenizer.json`` (or its folder) whose ids tokenmill reproduces; any other is
      refused, naming the component (see :mod:`tokenmill.formats.hf`);
    - tokenmill's own ``.tokenmill`` file.

    A malformed file is a :class:`~tokenmill.VocabFileError` naming it (and the line, where
    known). For GPT-2 and HF files, ``pattern`` and ``special_tokens`` replace the file's.

    >>> import tokenmill
    >>> tokenmill.load("gpt2").encode("hello world")
    [31373, 995]
    """
    name = os.fspath(name_or_path)
    if name in REGISTRY and pattern is None and special_tokens is None:
        return load_pretrained(name)
    if name.startswith(("http://", "https://")):
        return _from_rank_data(fetch(name, sha256), name, pattern, special_tokens)
    path = Path(name)
    if not path.exists():
        raise UnknownTokenizerError(
            f"unknown tokenizer {name!r}: not a known name ({', '.join(REGISTRY)}), "
            "not an existing file, and not a URL"
        )
    kind = _file_kind(path)
    if kind == "gpt2":
        from tokenmill.formats import datagym

        tokens, specials = datagym.read(path)
        folder = path if path.is_dir() else path.parent
        # GPT-2's files do not say how to split: GPT-2 splits by its own pattern.
        return _file_tokenizer(
            folder / "encoder.json",
            tokens,
            "gpt2",
            specials,
            pattern,
            special_tokens,
            folder.name or "gpt2",
        )
    if kind == "hf":
        from tokenmill.formats import hf

        file = path / "tokenizer.json" if path.is_dir() else path
        bpe = hf.parse_file(file)
        tok = _file_tokenizer(
            file, bpe.tokens, bpe.pattern, bpe.special_tokens, pattern, special_tokens, path.stem
        )
        hf.check_merges(bpe, tok._core.merge_parents(), str(file))
        return tok
    if kind == "tokenmill":
        from tokenmill.formats import native

        return native.read(path)
    data = path.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise HashMismatchError(f"{path} does not have sha256 {sha256}")
    return _from_rank_data(data, str(path), pattern, special_tokens)


def _file_tokenizer(
    source: Path,
    tokens: list[bytes],
    file_pattern: str,
    file_specials: dict[str, int],
    pattern: str | None,
    special_tokens: dict[str, int] | None,
    name: str,
) -> Tokenizer:
    """A tokenizer from a file's parts, the caller's ``pattern`` and ``special_tokens``
    replacing the file's; what it refuses of the file's is an error naming ``source``."""
    from tokenmill.formats import loading

    with loading.naming(
        str(source), own_pattern=bool(pattern), own_specials=special_tokens is not None
    ):
        return Tokenizer(
            tokens,
            pattern or file_pattern,
            file_specials if special_tokens is None else special_tokens,
            name=name,
        )


def _file_kind(path: Path) -> str:
    """Which format a path holds: ``gpt2``, ``hf``, ``tokenmill`` or ``tiktoken``."""
    if path.is_dir():
        if (path / "encoder.json").exists():
            return "gpt2"
        if (path / "tokenizer.json").exists():
            return "hf"
        raise UnknownTokenizerError(f"{path}: a folder without encoder.json or tokenizer.json")
    if path.name in ("encoder.json", "vocab.bpe"):
        return "gpt2"
    if path.name.endswith((".tokenmill", ".tokenmill.json")):
        return "tokenmill"
    if path.suffix == ".json":
        with path.open("rb") as f:
            head = f.read(4096)
        if b"tokenmill-chars" in head:
            raise UnknownTokenizerError(
                f"{path} is a character-level tokenizer: load it with tokenmill.CharTokenizer.load"
            )
        if b'"format"' in head and b"tokenmill" in head:
            return "tokenmill"
        return "hf"
    return "tiktoken"


def _from_rank_data(
    data: bytes, source: str, pattern: str | None, special_tokens: dict[str, int] | None
) -> Tokenizer:
    data = rankfile.maybe_gunzip(data, source)
    known = _known_by_hash(data)
    if pattern is None:
        if known is None:
            raise UnknownTokenizerError(
                f"{source}: a rank file does not say how to split text; pass pattern= "
                "(a name: gpt2, cl100k, o200k, or a regex)"
            )
        pattern = known.pattern
    if special_tokens is None:
        special_tokens = dict(known.special_tokens) if known is not None else {}
    try:
        core = _core.CoreTokenizer.from_rank_file(data, pattern, list(special_tokens.items()))
    except VocabFileError as e:
        raise VocabFileError(source, e.line, e.problem) from None
    return Tokenizer._from_core(core, Path(source).name.split(".")[0] or source)


def _known_by_hash(data: bytes) -> Pretrained | None:
    digest = hashlib.sha256(data).hexdigest()
    return next((p for p in REGISTRY.values() if p.sha256 == digest), None)
