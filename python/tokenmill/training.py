"""Train a byte-level BPE tokenizer: :func:`train`.

The rules are DESIGN.md §2 and ``tokenmill/reference.py`` spells them out in plain Python;
the native trainer (``src/train/``) learns exactly the same merges, ties included, only faster.
This module handles what a user hands in (strings, files, iterables), the options, the
progress bar and the merge log.

>>> import tokenmill
>>> tok = tokenmill.train("ab cd ab cd", 259, pattern="gpt2")
>>> [tok.decode_single_token_bytes(i) for i in (256, 257, 258)]
[b'ab', b' c', b' cd']
>>> tok.encode("ab cd")
[256, 258]
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from tokenmill import _core
from tokenmill.errors import (
    CorpusFileError,
    InvalidSpecialTokensError,
    TrainingError,
    TrainingWarning,
)
from tokenmill.progress import StatusLine
from tokenmill.tokenizer import Merge, Tokenizer, _clean, default_threads

Corpus = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
Log = Callable[[str], Any] | IO[str]

# Text is handed to the native counter in batches of about this many characters: large enough
# that the per-call cost vanishes and both threads get whole pieces, small enough that a
# streamed file never sits in memory twice. Files are read in blocks of the same size.
BATCH_CHARS = 8 << 20
# Merges learned per native call; between calls the progress bar is redrawn.
MERGES_PER_CALL = 512
# A run is "long" (the automatic progress bar shows) above this many bytes or merges.
LONG_BYTES = 50 << 20
LONG_MERGES = 20_000
# Files are counted by Ray tasks in pieces of about this many bytes.
RAY_ITEM_BYTES = 32 << 20


def train(
    corpus: Corpus,
    vocab_size: int,
    *,
    pattern: str = "cl100k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    num_threads: int | None = None,
    text_field: str = "text",
    name: str = "trained",
    progress: bool | None = None,
    verbose: bool = False,
    log: Log | None = None,
    engine: str = "local",
    ray_address: str | None = None,
) -> Tokenizer:
    """Train a byte-level BPE tokenizer on ``corpus``.

    ``corpus`` is one string, a list (or any iterable) of strings, a file path
    (:class:`pathlib.Path` or other ``os.PathLike``), or an iterable of paths. Files are
    ``.txt`` (UTF-8), ``.jsonl`` (one JSON object per line; the text is ``text_field``), or
    either gzipped (``.gz``); they are streamed in blocks, never held whole. A plain ``str``
    is always text, never a file name: pass ``Path(name)`` for a file. Several texts or files
    are one corpus in the given order; no chunk spans two of them. Blocks of a file are cut
    where the named patterns cannot match across (see :func:`safe_cut`), so streaming changes
    nothing for them; a custom regex that matches across a newline between a printable
    character and a letter or digit could see a chunk cut there once per 8 MB block.

    ``vocab_size`` counts everything: 256 bytes + merges + special tokens; special tokens take
    the ids after the merges, and their strings are cut out of the corpus (never merged).
    ``pattern`` is ``gpt2``, ``cl100k``, ``o200k`` or any regex. Training stops early (with a
    :class:`~tokenmill.errors.TrainingWarning`) when no pair is seen ``min_frequency`` times.

    ``progress``: a progress bar on stderr (None: only for long runs on a terminal).
    ``verbose``: log every merge to stderr; ``log``: a callable or file to log to instead.

    ``engine="ray"`` counts the chunks of the files as Ray tasks (``ray_address`` of a
    cluster, else a local Ray with ``num_threads`` CPUs): each task counts one piece of a file
    (cut where the pattern cannot match across, see :mod:`tokenmill.corpus.inputs`) and sends
    back its distinct chunks in order of first occurrence; the driver adds them up in corpus
    order and learns the merges, exactly the merges of the local engine. The corpus must then
    be file paths.

    >>> import io, tokenmill
    >>> out = io.StringIO()
    >>> tok = tokenmill.train(["hello hello", "hello"], 261, special_tokens=["<|end|>"], log=out)
    >>> print(out.getvalue().splitlines()[0])
    merge 256: b'h' + b'e' -> b'he' seen 3x
    >>> tok.special_tokens
    {'<|end|>': 260}
    """
    specials = _check_specials(special_tokens)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TrainingError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
    if vocab_size < 256 + len(specials):
        raise TrainingError(
            f"vocab_size {vocab_size} is too small: it counts the 256 byte tokens and the "
            f"{len(specials)} special tokens too, so it must be at least {256 + len(specials)}"
        )
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
        raise TrainingError(f"min_frequency must be an int >= 1, not {min_frequency!r}")
    threads = default_threads() if num_threads is None else num_threads
    if not isinstance(threads, int) or threads < 1:
        raise TrainingError(f"num_threads must be an int >= 1, not {num_threads!r}")
    writer = _log_writer(log, verbose)

    trainer = _core.CoreTrainer(pattern, specials, threads)
    bar = _Progress(progress)
    if engine == "ray":
        from tokenmill.corpus.ray_engine import count_files

        for counted, n_bytes in count_files(
            _paths(corpus), pattern, specials, text_field, threads, ray_address, RAY_ITEM_BYTES
        ):
            trainer.add_counted(counted, n_bytes)
            bar.counting(trainer.stats()[0])
    elif engine == "local":
        for batch in _batches(corpus, text_field):
            try:
                trainer.feed(batch)
            except UnicodeEncodeError:
                # Lone surrogates (not valid Unicode): handled as tiktoken's encode does.
                trainer.feed([_clean(t) for t in batch])
            bar.counting(trainer.stats()[0])
    else:
        raise TrainingError(f"engine must be 'local' or 'ray', not {engine!r}")
    n_bytes, n_chunks, _ = trainer.stats()
    if n_chunks == 0:
        raise TrainingError(
            "the corpus is empty: there is no text to train on"
            + (" (other than special tokens)" if n_bytes else "")
        )

    wanted = vocab_size - 256 - len(specials)
    bar.start_merging(wanted, n_bytes)
    tokens = [bytes([b]) for b in range(256)]
    merges: list[Merge] = []
    while len(merges) < wanted:
        ask = min(MERGES_PER_CALL, wanted - len(merges))
        got = trainer.merge(ask, min_frequency)
        for left, right, count in got:
            tokens.append(tokens[left] + tokens[right])
            merges.append(Merge(left, right, count))
            if writer is not None:
                writer(
                    f"merge {len(tokens) - 1}: {tokens[left]!r} + {tokens[right]!r} -> "
                    f"{tokens[-1]!r} seen {count:,}x"
                )
        bar.merging(len(merges))
        if len(got) < ask:
            break
    bar.done(bar.merge_line(len(merges)))
    if len(merges) < wanted:
        warnings.warn(
            f"training stopped after {len(merges):,} merges (of {wanted:,} wanted): no pair is "
            f"seen {min_frequency} times any more; the vocabulary has "
            f"{256 + len(merges) + len(specials):,} tokens, not {vocab_size:,}. Train on more "
            "text or lower min_frequency.",
            TrainingWarning,
            stacklevel=2,
        )
    first_special = 256 + len(merges)
    return Tokenizer(
        tokens,
        pattern,
        {s: first_special + i for i, s in enumerate(specials)},
        name=name,
        merges=merges,
    )


def _paths(corpus: Corpus) -> list[Path]:
    """The corpus as file paths (what the Ray engine distributes)."""
    items = [corpus] if isinstance(corpus, str | os.PathLike) else list(corpus)  # type: ignore[arg-type]
    if not items or not all(isinstance(p, os.PathLike) for p in items):
        raise TrainingError(
            "engine='ray' trains on files: pass paths (pathlib.Path), not text; a str is text"
        )
    return [Path(p) for p in items]


def _check_specials(special_tokens: Sequence[str]) -> list[str]:
    if isinstance(special_tokens, str):
        raise InvalidSpecialTokensError(
            f"special_tokens must be a list of strings, not one string: [{special_tokens!r}]?"
        )
    specials = list(special_tokens)
    seen: set[str] = set()
    for s in specials:
        if not isinstance(s, str):
            raise InvalidSpecialTokensError(f"special token {s!r} is not a str")
        if not s:
            raise InvalidSpecialTokensError("a special token is the empty string")
        if s in seen:
            raise InvalidSpecialTokensError(f"special token {s!r} is listed twice")
        seen.add(s)
    return specials


def _log_writer(log: Log | None, verbose: bool) -> Callable[[str], Any] | None:
    if log is None:
        if not verbose:
            return None
        return lambda line: print(line, file=sys.stderr)
    if callable(log):
        return log
    if hasattr(log, "write"):
        stream = log
        return lambda line: stream.write(line + "\n")
    raise TypeError(f"log must be a callable or a file, not {type(log).__name__}")


# ------------------------------------------------------------------------------ the corpus


def _batches(corpus: Corpus, text_field: str) -> Iterator[list[str]]:
    """The corpus as batches of texts, in order; files are streamed."""
    if isinstance(corpus, str):
        yield [corpus]
        return
    if isinstance(corpus, os.PathLike):
        yield from _file_batches(Path(corpus), text_field)
        return
    if isinstance(corpus, bytes | bytearray):
        raise TrainingError("corpus is bytes: decode it first, e.g. data.decode('utf-8')")
    if not isinstance(corpus, Iterable):
        raise TrainingError(
            f"corpus must be a str, a path, or an iterable of them, not {type(corpus).__name__}"
        )
    batch: list[str] = []
    size = 0
    for item in corpus:
        if isinstance(item, str):
            batch.append(item)
            size += len(item)
            if size >= BATCH_CHARS:
                yield batch
                batch, size = [], 0
        elif isinstance(item, os.PathLike):
            if batch:
                yield batch
                batch, size = [], 0
            yield from _file_batches(Path(item), text_field)
        else:
            raise TrainingError(
                f"corpus items must be str (text) or paths, not {type(item).__name__}"
            )
    if batch:
        yield batch


def _open(path: Path) -> io.BufferedIOBase:
    try:
        if path.is_dir():
            raise CorpusFileError(f"{path}: is a folder; pass the files in it")
        if path.name.endswith(".gz"):
            return gzip.open(path, "rb")
        return open(path, "rb")  # the caller closes it
    except OSError as e:
        raise CorpusFileError(f"{path}: cannot read it: {e.strerror or e}") from e


def _file_batches(path: Path, text_field: str) -> Iterator[list[str]]:
    stem = path.name[:-3] if path.name.endswith(".gz") else path.name
    gz = " (decompressed)" if path.name.endswith(".gz") else ""
    with _open(path) as f:
        try:
            if stem.endswith((".jsonl", ".ndjson")):
                yield from _jsonl_batches(f, path, text_field, gz)
            else:
                yield from _text_batches(f, path, gz)
        except (OSError, EOFError) as e:
            raise CorpusFileError(f"{path}: cannot read it: {e}") from e


def _decode(data: bytes, path: Path, offset: int, gz: str, final: bool) -> tuple[str, bytes]:
    """Decode ``data`` (which starts at byte ``offset`` of the file); an incomplete character
    at the end is returned as undecoded bytes unless this is the end of the file."""
    try:
        return data.decode("utf-8"), b""
    except UnicodeDecodeError as e:
        incomplete = e.reason == "unexpected end of data" and len(data) - e.start < 4
        if incomplete and not final:
            return data[: e.start].decode("utf-8"), data[e.start :]
        raise CorpusFileError(
            f"{path}: not UTF-8 at byte {offset + e.start}{gz} ({e.reason}: "
            f"{data[e.start : e.start + 4]!r}); convert it to UTF-8 first"
        ) from None


def safe_cut(text: str) -> int:
    """The last place where ``text`` can be cut without changing its chunks (0 if none):
    right after a newline that follows a printable ASCII character (not a space) and precedes
    an ASCII letter or digit. Why that is safe for the named patterns, and why a newline after
    whitespace is not: ``count_safe_cut`` in src/train/mod.rs.

    >>> safe_cut("one\\n\\ntwo \\nthree\\nfour")
    16
    >>> safe_cut("no newline")
    0
    """
    i = text.rfind("\n", 1, len(text) - 1)
    while i >= 1:
        after, before = text[i + 1], text[i - 1]
        if after.isascii() and after.isalnum() and "!" <= before <= "~":
            return i + 1
        i = text.rfind("\n", 1, i)
    return 0


def _text_batches(f: io.BufferedIOBase, path: Path, gz: str) -> Iterator[list[str]]:
    offset = 0  # file bytes before `carry`
    carry = b""
    pending = ""
    while True:
        block = f.read(BATCH_CHARS)
        data = carry + block
        text, carry = _decode(data, path, offset, gz, final=not block)
        offset += len(data) - len(carry)
        pending += text
        if not block:
            break
        cut = safe_cut(pending)
        if cut:
            yield [pending[:cut]]
            pending = pending[cut:]
    if pending:
        yield [pending]


def _jsonl_batches(f: io.BufferedIOBase, path: Path, field: str, gz: str) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    offset = 0
    for lineno, raw in enumerate(f, 1):
        line, _ = _decode(raw, path, offset, gz, final=True)
        offset += len(raw)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusFileError(f"{path}, line {lineno}{gz}: not JSON ({e.msg})") from None
        if not isinstance(record, dict) or field not in record:
            raise CorpusFileError(
                f"{path}, line {lineno}{gz}: no {field!r} field; pass text_field= to name the "
                "field that holds the text"
            )
        text = record[field]
        if not isinstance(text, str):
            raise CorpusFileError(
                f"{path}, line {lineno}{gz}: field {field!r} is {type(text).__name__}, not text"
            )
        batch.append(text)
        size += len(text)
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


# ------------------------------------------------------------------------------ progress


class _Progress:
    """A one-line progress bar on stderr: counting (MB read), then merging (k of n)."""

    def __init__(self, enabled: bool | None) -> None:
        # None: shown only for a long run on a terminal, decided once the size is known.
        self.auto = enabled is None
        self.status = StatusLine(bool(enabled))
        self.wanted = 0

    def _draw(self, line: str, force: bool = False) -> None:
        if self.status.enabled:
            self.status.draw(f"{line} [{self.status.elapsed:.1f} s]", force)

    def counting(self, n_bytes: int) -> None:
        if self.auto:
            self.status.enabled = n_bytes > LONG_BYTES and sys.stderr.isatty()
        self._draw(f"training: counted {n_bytes / 1e6:,.1f} MB")

    def start_merging(self, wanted: int, n_bytes: int) -> None:
        self.wanted = wanted
        if self.auto:
            long = n_bytes > LONG_BYTES or wanted > LONG_MERGES
            self.status.enabled = long and sys.stderr.isatty()

    def merging(self, done: int) -> None:
        self._draw(self.merge_line(done))

    def merge_line(self, done: int) -> str:
        width = 30
        filled = width * done // max(self.wanted, 1)
        bar = "#" * filled + "." * (width - filled)
        return f"training: merges [{bar}] {done:,}/{self.wanted:,}"

    def done(self, line: str) -> None:
        self.status.finish(f"{line} [{self.status.elapsed:.1f} s]")


__all__ = ["safe_cut", "train"]
