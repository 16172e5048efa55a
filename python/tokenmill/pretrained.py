"""Tokenizers by name, path or URL (:func:`load`): OpenAI's vocabularies by name, three
bundled and the rest downloaded once with a pinned sha256; files in any format of
:mod:`tokenmill.formats`, built into tokenizers here (:func:`build`).

``gpt2`` (= ``r50k_base``), ``cl100k_base`` and ``o200k_base`` ship inside the package and
work offline; their names, files and hashes are in :mod:`tokenmill.formats.openai`. Other
names (``p50k_base``, ``p50k_edit``) and URLs are downloaded into a cache directory, checked
against their sha256 before anything is written, and written atomically.
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
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from tokenmill import _core, formats
from tokenmill.errors import (
    DownloadError,
    HashMismatchError,
    InvalidArgumentError,
    MissingPatternError,
    UnknownTokenizerError,
    VocabFileError,
    WrongTypeError,
)
from tokenmill.fileio import write_atomic
from tokenmill.formats import loading, rankfile
from tokenmill.formats.loading import Vocabulary
from tokenmill.formats.openai import REGISTRY, Pretrained
from tokenmill.tokenizer import (
    Merge,
    Pattern,
    PickleAs,
    Tokenizer,
    need_pattern,
    need_special_names,
    valid_name,
)

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
    """Where tiktoken keeps its downloads (read-only for tokenmill), chosen as tiktoken
    chooses: ``TIKTOKEN_CACHE_DIR`` if it is set, else ``DATA_GYM_CACHE_DIR`` if it is set,
    else ``<tmp>/data-gym-cache``. A variable set to the empty string turns tiktoken's cache
    off (the other variable is not consulted then), so there is none to read.

    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": "", "DATA_GYM_CACHE_DIR": "x"}):
    ...     tiktoken_cache_dirs()
    []
    """
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return [Path(os.environ[var])] if os.environ[var] else []
    return [Path(tempfile.gettempdir()) / "data-gym-cache"]


def load_pretrained(name: str) -> Tokenizer:
    """A named OpenAI vocabulary; loaded once per process and shared (tokenizers are
    immutable). It pickles as this call, so a pickle holds the name, not the vocabulary.

    >>> load_pretrained("gpt2") is load_pretrained("gpt2")
    True
    """
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
    # The spec gives the pattern and special tokens: no need to know the file by its hash.
    vocab = Vocabulary(spec.source, name, None, spec.pattern, spec.special_tokens, data)
    tok = build(vocab, name=name, pickle_as=(load_pretrained, (name,)))
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
    data = download(url, timeout)
    if sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != sha256:
            raise HashMismatchError(
                f"{url} has sha256 {digest}, expected {sha256}; nothing was cached"
            )
    write_atomic(cache_dir() / key, data)
    return data


def download(url: str, timeout: float, offline: str | None = None) -> bytes:
    """The bytes at ``url``; a :class:`DownloadError` that says where to put the file by hand
    (``offline``, else tokenmill's cache) when it cannot be had."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.read()
    except urllib.error.HTTPError as e:
        raise DownloadError(f"could not download {url}: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        where = offline or f"{cache_dir()} (or set TOKENMILL_CACHE_DIR)"
        raise DownloadError(
            f"could not download {url}: {reason}. Offline? Put the file in {where} "
            f"named {hashlib.sha1(url.encode()).hexdigest()}"
        ) from None


def load(
    name_or_path: str | os.PathLike[str],
    *,
    pattern: Pattern | None = None,
    special_tokens: dict[str, int] | None = None,
    sha256: str | None = None,
) -> Tokenizer:
    """Load a tokenizer by name, path or URL.

    - a name from :func:`list_pretrained` (``gpt2``, ``cl100k_base``, ``o200k_base``...);
    - a file or folder in any format of :mod:`tokenmill.formats`, told by its content, not its
      name: tokenmill's own ``.tokenmill``; a HF ``tokenizer.json`` (or its folder) whose ids
      tokenmill reproduces, any other refused naming the component (see
      :mod:`tokenmill.formats.hf`); GPT-2's ``encoder.json`` with ``vocab.bpe`` beside it (or
      their folder); a tiktoken rank file, gzipped or not;
    - a rank file's URL, downloaded once into the cache (``sha256`` pins it, as it pins a
      file's bytes).

    A rank file does not say how to split text: give ``pattern`` (a name such as
    ``"cl100k"`` or a regex) and ``special_tokens``, unless it is one of OpenAI's, which are
    known by their sha256. For the other formats, ``pattern`` and ``special_tokens`` replace
    the file's. A malformed file is a :class:`~tokenmill.VocabFileError` naming it (and the
    line, where known).

    >>> import tokenmill
    >>> tokenmill.load("gpt2").encode("hello world")
    [31373, 995]
    """
    name = os.fspath(name_or_path) if isinstance(name_or_path, str | os.PathLike) else None
    if not isinstance(name, str):  # None, an int, bytes, a PathLike of bytes
        raise WrongTypeError(
            "name_or_path must be a name, path or URL (str or os.PathLike), not "
            f"{type(name_or_path if name is None else name).__name__}"
        )
    if not name.strip():
        # Path("") is the current folder, which would be searched for tokenizer files.
        raise UnknownTokenizerError(
            f"the tokenizer name is empty ({name!r}): pass a name ({', '.join(REGISTRY)}), "
            "a file path or a URL"
        )
    if pattern is not None:
        need_pattern(pattern)
    if special_tokens is not None and not isinstance(special_tokens, Mapping):
        raise WrongTypeError(
            "special_tokens must be a dict of special-token strings to ids, not "
            f"{type(special_tokens).__name__}"
        )
    if name in REGISTRY:
        if pattern is None and special_tokens is None:
            return load_pretrained(name)
        if not Path(name).exists():
            given = " and ".join(
                arg
                for arg, value in (("pattern=", pattern), ("special_tokens=", special_tokens))
                if value is not None
            )
            raise InvalidArgumentError(
                f"{name!r} is a named tokenizer with its own pattern and special tokens: "
                f"{given} cannot replace them (they are for rank files: pass a file path or "
                "URL, or train a tokenizer with the pattern you want)"
            )
    if name.startswith(("http://", "https://")):
        return build(rankfile.vocabulary(fetch(name, sha256), name), pattern, special_tokens)
    path = Path(name)
    if not path.exists():
        raise UnknownTokenizerError(
            f"unknown tokenizer {name!r}: not a known name ({', '.join(REGISTRY)}), "
            "not an existing file, and not a URL"
        )
    return build(formats.read(path, sha256=sha256), pattern, special_tokens)


def build(
    vocab: Vocabulary,
    pattern: Pattern | None = None,
    special_tokens: dict[str, int] | None = None,
    *,
    name: str | None = None,
    pickle_as: PickleAs | None = None,
) -> Tokenizer:
    """The tokenizer a file's :class:`~tokenmill.formats.loading.Vocabulary` describes, the
    caller's ``pattern`` and ``special_tokens`` replacing the file's. What the tokenizer
    refuses of the file's is a :class:`~tokenmill.VocabFileError` naming the file; what it
    refuses of the caller's keeps its own error. ``name`` and ``pickle_as``: as in
    :meth:`Tokenizer.from_core <tokenmill.Tokenizer.from_core>`.

    >>> from tokenmill.formats.loading import Vocabulary
    >>> vocab = Vocabulary("x", "x", [bytes([b]) for b in range(256)] + [b"hi"], "gpt2")
    >>> build(vocab).encode("hi hi")
    [256, 32, 256]
    >>> build(vocab, special_tokens={"<|end|>": 257}).special_tokens
    {'<|end|>': 257}
    """
    use_pattern = pattern or vocab.pattern
    if use_pattern is None:
        raise MissingPatternError(vocab.source)
    specials = vocab.special_tokens if special_tokens is None else special_tokens
    merges = None
    if vocab.merges is not None:
        merges = [Merge(left, right, count or 0) for left, right, count in vocab.merges]
    # A name from the file (or its file name, which may not be UTF-8) is made valid text.
    tok_name = name or valid_name(vocab.name)
    with loading.naming(
        vocab.source, own_pattern=bool(pattern), own_specials=special_tokens is not None
    ):
        if vocab.rank_data is not None:
            need_pattern(use_pattern)
            need_special_names(specials)
            core = _core.CoreTokenizer.from_rank_file(
                vocab.rank_data, use_pattern, list(specials.items())
            )
            tok = Tokenizer.from_core(
                core, name=tok_name, merges=merges, pickle_as=pickle_as, template=vocab.template
            )
        else:
            matched = specials.keys() | vocab.added_tokens.keys()
            tok = Tokenizer(
                vocab.tokens or [],
                use_pattern,
                specials,
                name=tok_name,
                merges=merges,
                normalizer=vocab.normalizer,
                template=vocab.template,
                normalized_specials=vocab.normalized_specials & matched,
                lstrip_specials=vocab.lstrip_specials & matched,
                rstrip_specials=vocab.rstrip_specials & matched,
                added_tokens=vocab.added_tokens,
            )
    if vocab.check_parents is not None:
        vocab.check_parents(tok.merge_parents())
    return tok
