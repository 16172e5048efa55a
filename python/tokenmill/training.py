"""Train a byte-level BPE tokenizer: :func:`train`.

The rules are DESIGN.md §2 and ``tokenmill/reference.py`` spells them out in plain Python;
the native trainer (``src/train/``) learns exactly the same merges, ties included, only faster.
This module handles the options, what a user hands in (strings, paths, iterables; files are
read by :mod:`tokenmill.sources`), the progress bar and the merge log.

>>> import tokenmill
>>> tok = tokenmill.train("ab cd ab cd", 259, pattern="gpt2")
>>> [tok.decode_single_token_bytes(i) for i in (256, 257, 258)]
[b'ab', b' c', b' cd']
>>> tok.encode("ab cd")
[256, 258]
"""

from __future__ import annotations

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
    WrongTypeError,
)
from tokenmill.patterns import scanner
from tokenmill.progress import StatusLine
from tokenmill.sources.cut import may_cut
from tokenmill.sources.files import InputFile, input_file
from tokenmill.sources.read import Item, plan_items, read_texts, whole
from tokenmill.tokenizer import (
    Merge,
    Tokenizer,
    clean_text,
    default_threads,
    lone_surrogate,
    need_name,
    need_pattern,
)

Corpus = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
Log = Callable[[str], Any] | IO[str]

# Text is handed to the native counter in batches of about this many characters: large enough
# that the per-call cost vanishes and every thread gets whole pieces, small enough that a
# streamed file never sits in memory twice.
BATCH_CHARS = 8 << 20
# Merges learned per native call; between calls the progress bar is redrawn.
MERGES_PER_CALL = 512
# A run is "long" (the automatic progress bar shows) above this many bytes or merges.
LONG_BYTES = 50 << 20
LONG_MERGES = 20_000
# Files are counted by Ray tasks in pieces of about this many bytes.
RAY_ITEM_BYTES = 32 << 20
# The default bound on training's memory: a laptop's, and exact (nothing dropped) for corpora
# of up to about ten million distinct chunks.
DEFAULT_MAX_MEMORY = 4 << 30
# The table of distinct chunks gets this share of max_memory: the merge loop takes about four
# times what the table counts for (docs/performance.md, 'Training').
TABLE_SHARE = 6
MIN_MAX_MEMORY = 16 << 20


def train(
    corpus: Corpus,
    vocab_size: int,
    *,
    pattern: str | None = None,
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
    base: Tokenizer | str | os.PathLike[str] | None = None,
    max_memory: int | None = DEFAULT_MAX_MEMORY,
) -> Tokenizer:
    """Train a byte-level BPE tokenizer on ``corpus``.

    ``corpus`` is one string, a list (or any iterable) of strings, a file path
    (:class:`pathlib.Path` or other ``os.PathLike``), or an iterable of paths. A plain ``str``
    is always text, never a file name: pass ``Path(name)`` for a file
    (:func:`tokenmill.sources.find` turns folders and globs into files). A ``str`` corpus, or
    the first ``str`` of an iterable, that names an existing file or folder is a
    :class:`~tokenmill.errors.TrainingError` saying so. Files are read as
    :mod:`tokenmill.sources` reads every corpus: a text file (UTF-8) is one text, a ``.jsonl``
    file gives the ``text_field`` of each record, a Parquet file its ``text_field`` column;
    any of them may be gzipped (``.gz``). Several texts or files are one corpus in the given
    order; no chunk spans two of them. Files are streamed: under a named pattern a text file
    is read in blocks cut where no chunk can cross (:mod:`tokenmill.sources.cut`), so the
    merges are those of the whole text; under a custom regex, for which no cut is proven
    safe, a text file is read whole.

    ``vocab_size`` counts everything: 256 bytes + merges + special tokens; special tokens take
    the ids after the merges, and their strings are cut out of the corpus (never merged).
    ``pattern`` is ``gpt2``, ``cl100k`` (the default), ``o200k`` or any regex. Training stops
    early (with a :class:`~tokenmill.errors.TrainingWarning`) when no pair is seen
    ``min_frequency`` times.

    ``base`` (a :class:`Tokenizer`, or a name or path for :func:`tokenmill.load`) continues
    training from that tokenizer instead of the 256 bytes: its ids stay as they are, its
    pattern is the pattern, its special and added tokens are cut out of the corpus and kept,
    and the new tokens take the ids from ``base.n_vocab`` on (``vocab_size`` counts the base
    too). Each chunk starts as the base encodes it and stays what the rank rule makes of it
    with the vocabulary so far, so a new token can make a base token reachable (with ``abcd``
    in the base and ``abcde`` encoded ``a|bc|d|e``, learning ``abc`` makes it ``abcd|e``);
    ``reference.extend`` is the definition. The result encodes by the same rank rule as every
    tokenizer, and a base extended by nothing encodes exactly as the base.

    ``max_memory`` (bytes; default 4 GiB, None for no bound) bounds the memory training
    takes: the table of distinct chunks is held to a sixth of it, since merging needs about
    four times the table more. A corpus with more distinct chunks than fit (about ten
    million at the default) is counted in a bounded table: when it overflows, the chunks seen
    least so far are dropped, by the deterministic rule of ``reference.count_chunks_bounded``,
    and a :class:`~tokenmill.errors.TrainingWarning` says how many occurrences that dropped.
    While the table fits nothing is dropped and training is exact.

    ``progress``: a progress bar on stderr (None: only for long runs on a terminal).
    ``verbose``: log every merge to stderr; ``log``: a callable or file to log to instead.

    ``engine="ray"`` counts the chunks of the files as Ray tasks (``ray_address`` of a
    cluster, else a local Ray with ``num_threads`` CPUs): each task counts one work item (a
    piece of a file, see :mod:`tokenmill.sources.read`) with :func:`count_item` and sends back
    its distinct chunks in order of first occurrence; the driver adds them up in corpus order
    and learns the merges, exactly the merges of the local engine. The corpus must then be
    file paths.

    >>> import io, tokenmill
    >>> out = io.StringIO()
    >>> tok = tokenmill.train(["hello hello", "hello"], 261, special_tokens=["<|end|>"], log=out)
    >>> print(out.getvalue().splitlines()[0])
    merge 256: b'h' + b'e' -> b'he' seen 3x
    >>> tok.special_tokens
    {'<|end|>': 260}
    """
    start = _base_of(base, pattern)
    split = start.patterns[0] if start is not None else "cl100k" if pattern is None else pattern
    need_pattern(split)
    need_name(name)
    specials = _check_specials(special_tokens)
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TrainingError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
    first_id = 256 if start is None else start.n_vocab
    if vocab_size < first_id + len(specials):
        what = "the 256 byte tokens" if start is None else f"the base's {first_id:,} ids"
        raise TrainingError(
            f"vocab_size {vocab_size} is too small: it counts {what} and the "
            f"{len(specials)} special tokens too, so it must be at least "
            f"{first_id + len(specials)}"
        )
    kept: dict[str, int] = {}
    if start is not None:
        kept = start.special_tokens | start.added_tokens
        if clash := [s for s in specials if s in kept]:
            raise InvalidSpecialTokensError(
                f"special token {clash[0]!r} is already one of the base's tokens"
            )
    if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
        raise TrainingError(f"min_frequency must be an int >= 1, not {min_frequency!r}")
    threads = default_threads() if num_threads is None else num_threads
    if not isinstance(threads, int) or threads < 1:
        raise TrainingError(f"num_threads must be an int >= 1, not {num_threads!r}")
    if max_memory is not None and (
        isinstance(max_memory, bool)
        or not isinstance(max_memory, int)
        or max_memory < MIN_MAX_MEMORY
    ):
        raise TrainingError(
            f"max_memory must be None or a number of bytes >= {MIN_MAX_MEMORY:,} "
            f"(16 MiB), not {max_memory!r}"
        )
    writer = _log_writer(log, verbose)

    cut = [*kept, *specials]
    trainer = _core.CoreTrainer(split, cut, threads)
    if max_memory is not None:
        trainer.set_limit(max_memory // TABLE_SHARE)
    cut_text = may_cut(scanner(split), cut)
    bar = _Progress(progress)
    if engine == "ray":
        counts = _count_on_ray(corpus, split, cut, text_field, cut_text, threads, ray_address)
        for counted, n_counted in counts:
            trainer.add_counted(counted, n_counted)
            bar.counting(trainer.stats()[0])
    elif engine == "local":
        for batch in _batches(corpus, text_field, cut_text):
            _feed(trainer, batch)
            bar.counting(trainer.stats()[0])
    else:
        raise TrainingError(f"engine must be 'local' or 'ray', not {engine!r}")
    n_bytes, n_chunks, _ = trainer.stats()
    if n_chunks == 0:
        raise TrainingError(
            "the corpus is empty: there is no text to train on"
            + (" (other than special tokens)" if n_bytes else "")
        )
    _, most, dropped_chunks, dropped = trainer.pruned()
    if dropped:
        seen = "once" if most == 1 else f"at most {most:,} times"
        warnings.warn(
            f"the corpus has more distinct chunks than fit in max_memory "
            f"({max_memory:,} bytes): {dropped_chunks:,} chunks seen {seen} "
            f"were dropped, {dropped:,} occurrences ({dropped / n_chunks:.2%} of "
            f"{n_chunks:,}); raise max_memory (--max-memory) to keep them",
            TrainingWarning,
            stacklevel=2,
        )

    wanted = vocab_size - first_id - len(specials)
    bar.start_merging(wanted, n_bytes)
    if start is None:
        tokens = [bytes([b]) for b in range(256)]
    else:
        tokens = start.token_bytes_list()
        tokens += [b""] * (first_id - len(tokens))  # the ids of the base's special tokens
        # Only its vocabulary encodes the chunks: any pattern will do.
        trainer.extend(_core.CoreTokenizer(tokens, "gpt2", []))
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
    del trainer  # its words and pairs go before the tokenizer is built
    if len(merges) < wanted:
        warnings.warn(
            f"training stopped after {len(merges):,} merges (of {wanted:,} wanted): no pair is "
            f"seen {min_frequency} times any more; the vocabulary has "
            f"{first_id + len(merges) + len(specials):,} tokens, not {vocab_size:,}. Train on "
            "more text or lower min_frequency (--min-frequency).",
            TrainingWarning,
            stacklevel=2,
        )
    first_special = first_id + len(merges)
    new_specials = {s: first_special + i for i, s in enumerate(specials)}
    if start is None:
        return Tokenizer(tokens, split, new_specials, name=name, merges=merges)
    return Tokenizer(
        tokens,
        split,
        start.special_tokens | new_specials,
        name=name,
        merges=_extended_merges(start, merges),
        template=start.template,
        normalized_specials=start.normalized_specials,
        lstrip_specials=start.lstrip_specials,
        rstrip_specials=start.rstrip_specials,
        added_tokens=start.added_tokens,
    )


def _base_of(
    base: Tokenizer | str | os.PathLike[str] | None, pattern: str | None
) -> Tokenizer | None:
    """The tokenizer training continues from, checked: one split pattern (the one training
    uses), no normalizer."""
    if base is None:
        return None
    if not isinstance(base, Tokenizer):
        from tokenmill.pretrained import load

        base = load(base)
    if len(base.patterns) > 1:
        raise TrainingError(
            f"base {base.name!r} splits text by {len(base.patterns)} patterns one after "
            "another; training splits by one"
        )
    if base.normalizer is not None:
        raise TrainingError(
            f"base {base.name!r} normalizes text ({base.normalizer}) before splitting it; "
            "training from it would learn merges of text the tokenizer never sees"
        )
    if pattern is not None and pattern != base.pattern and pattern != base.pattern_name:
        raise TrainingError(
            f"pattern {pattern!r:.60} is not the pattern of base {base.name!r} "
            f"({base.pattern_name or 'a custom regex'}): training from a base splits as it "
            "does; leave pattern out"
        )
    return base


def _extended_merges(base: Tokenizer, merges: list[Merge]) -> list[Merge] | None:
    """The base's merges followed by the new ones, when merge ``k`` still makes token
    ``256 + k`` (the base was trained here and has no special or added tokens); else None,
    and what needs merges derives them from the vocabulary."""
    if base.merges is None or base.n_vocab != 256 + len(base.merges):
        return None
    return [*base.merges, *merges]


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
        if problem := lone_surrogate(s):
            raise InvalidSpecialTokensError(f"special token {s!r:.60} holds {problem}")
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
    raise WrongTypeError(f"log must be a callable or a file, not {type(log).__name__}")


# ------------------------------------------------------------------------------ the corpus


# Longer strings are never taken for file names: no stat call on a text of any size.
_NAME_CHARS = 4096


def _refuse_file_name(text: str) -> None:
    """A str is text; one that names an existing file or folder is almost surely a file name
    passed by mistake, and training on its few characters would learn nothing."""
    if len(text) > _NAME_CHARS or "\n" in text or not os.path.exists(text):
        return
    if os.path.isdir(text):
        raise TrainingError(
            f"the corpus text {text!r} names an existing folder, but a str is text, never a "
            f"file name: pass its files, [Path(f.path) for f in "
            f"tokenmill.sources.find([{text!r}])]"
        )
    raise TrainingError(
        f"the corpus text {text!r} names an existing file, but a str is text, never a file "
        f"name: pass Path({text!r}) to train on the file"
    )


def _batches(corpus: Corpus, text_field: str, cut_text: bool) -> Iterator[list[str]]:
    """The corpus as batches of texts, in order; files are streamed."""
    if isinstance(corpus, str):
        _refuse_file_name(corpus)
        yield [corpus]
        return
    if isinstance(corpus, os.PathLike):
        yield from _batched(_file_texts(corpus, text_field, cut_text))
        return
    if isinstance(corpus, bytes | bytearray):
        raise TrainingError("corpus is bytes: decode it first, e.g. data.decode('utf-8')")
    if not isinstance(corpus, Iterable):
        raise TrainingError(
            f"corpus must be a str, a path, or an iterable of them, not {type(corpus).__name__}"
        )
    batch: list[str] = []
    size = 0
    # Only the first text is checked: a list of file names fails on its first, and a stat
    # call per text would cost seconds on a list of a million lines.
    first = True
    for item in corpus:
        if isinstance(item, str):
            if first:
                _refuse_file_name(item)
                first = False
            batch.append(item)
            size += len(item)
            if size >= BATCH_CHARS:
                yield batch
                batch, size = [], 0
        elif isinstance(item, os.PathLike):
            if batch:
                yield batch
                batch, size = [], 0
            yield from _batched(_file_texts(item, text_field, cut_text))
        else:
            raise TrainingError(
                f"corpus items must be str (text) or paths, not {type(item).__name__}"
            )
    if batch:
        yield batch


def _file_texts(path: os.PathLike[str], text_field: str, cut_text: bool) -> Iterator[str]:
    return read_texts(whole(0), [input_file(path)], text_field, cut_text)


def _batched(texts: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _feed(trainer: _core.CoreTrainer, texts: list[str]) -> None:
    try:
        trainer.feed(texts)
    except UnicodeEncodeError:
        # Lone surrogates (not valid Unicode): handled as tiktoken's encode does.
        trainer.feed([clean_text(t) for t in texts])


def _paths(corpus: Corpus) -> list[Path]:
    """The corpus as file paths (what the Ray engine distributes)."""
    items = [corpus] if isinstance(corpus, str | os.PathLike) else list(corpus)  # type: ignore[arg-type]
    if not items or not all(isinstance(p, os.PathLike) for p in items):
        raise TrainingError(
            "engine='ray' trains on files: pass paths (pathlib.Path), not text; a str is text"
        )
    return [Path(p) for p in items]


def _count_on_ray(
    corpus: Corpus,
    pattern: str,
    specials: list[str],
    text_field: str,
    cut_text: bool,
    threads: int,
    ray_address: str | None,
) -> Iterator[tuple[list[tuple[str, int]], int]]:
    """Chunk counts of the files, one result per work item (see :mod:`tokenmill.sources.read`),
    counted as Ray tasks and returned in corpus order."""
    from tokenmill.corpus.engines import ray

    files = [input_file(p) for p in _paths(corpus)]
    plan = plan_items(files, RAY_ITEM_BYTES, cut_text)
    if plan.unreadable:
        path, problem = plan.unreadable[0]
        raise CorpusFileError(f"{path}: {problem}")
    shared = (pattern, specials, files, text_field, cut_text)
    yield from ray.run_ordered(count_item, shared, [(i,) for i in plan.items], threads, ray_address)


def count_item(
    pattern: str,
    specials: list[str],
    files: list[InputFile],
    text_field: str,
    cut_text: bool,
    item: Item,
) -> tuple[list[tuple[str, int]], int]:
    """The distinct chunks of one work item with their counts, in order of first occurrence,
    and the bytes counted: exactly what :func:`train` counts in that part of the corpus (the
    body of a Ray task)."""
    trainer = _core.CoreTrainer(pattern, specials, 1)
    for batch in _batched(read_texts(item, files, text_field, cut_text)):
        _feed(trainer, batch)
    return trainer.counted(), trainer.stats()[0]


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


__all__ = ["count_item", "train"]
