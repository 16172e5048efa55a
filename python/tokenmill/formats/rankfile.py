"""tiktoken rank files (``.tiktoken``, gzipped or not): one ``<base64 token> <rank>`` line
per token.

A rank file holds the ranks alone. The split pattern is given when it is loaded
(``tokenmill.load(path, pattern=...)``, ``tiktoken.Encoding(pat_str=...)``), and a load
without one says so; OpenAI's own files are recognised by their sha256 and get their pattern
and special tokens from :mod:`tokenmill.formats.openai`.

The ranks run ``0..n-1`` without gaps. tiktoken also takes a gap that a special token's id
fills (OpenAI's own ``p50k_base`` has ``<|endoftext|>`` at 50256, between its ranks), but
tokenmill's core numbers the ordinary tokens ``0..n-1`` with the special tokens after them,
so such a file is refused with an error naming the special token in the gap
(:func:`explained`); ``tokenmill.compat.tiktoken``'s ``Encoding`` gives tiktoken's ids for it.

A token is never empty. tiktoken takes an empty one (Whisper's ``multilingual.tiktoken`` has
``= 50256``, base64 of nothing, as its last rank), never gives it for any text and decodes it
as ``b""``; tokenmill's core holds no empty token and refuses the file naming the line and
what tiktoken does. When the empty token is the last rank, as Whisper's is, the file without
that line loads with tiktoken's ids for every text (measured with Whisper's pattern and
special tokens on the shared corpora: 0 differences in 129,681 lines); only decoding that id
then fails as an unknown id.

Special tokens would be lost without
a word, so :func:`write` refuses a tokenizer that has any, unless its ranks are an OpenAI
vocabulary's that load back with the same ones.

>>> data = dump_ranks([bytes([b]) for b in range(256)] + [b"ab"])
>>> data.splitlines()[-1]
b'YWI= 256'
>>> parse_ranks(data)[256]
b'ab'
>>> looks_like(data), looks_like(b'{"model": {}}')
(True, False)
"""

from __future__ import annotations

import base64
import gzip
import os
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tokenmill import _core
from tokenmill.errors import UnsupportedFormatError, VocabFileError
from tokenmill.fileio import write_atomic
from tokenmill.formats import openai
from tokenmill.formats.loading import Vocabulary

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# The first line of a rank file: a base64 token, one space, its rank.
_FIRST_LINE = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+\r?(?:\n|$)")


def parse_ranks(data: bytes, source: str = "<rank file>") -> list[bytes]:
    """Tokens by rank from rank-file bytes (gzip is detected). Errors name ``source`` and line."""
    data = maybe_gunzip(data, source)
    try:
        return _core.parse_rank_file(data)
    except VocabFileError as e:
        raise VocabFileError(source, e.line, e.problem) from None


def read_ranks(path: str | Path) -> list[bytes]:
    """Tokens by rank from a ``.tiktoken`` file (optionally gzipped)."""
    return parse_ranks(Path(path).read_bytes(), str(path))


def dump_ranks(tokens: Sequence[bytes]) -> bytes:
    """Rank-file bytes for tokens indexed by rank, exactly as tiktoken writes them."""
    return b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens))


def maybe_gunzip(data: bytes, source: str = "<gzip data>") -> bytes:
    """Decompress gzip data; pass anything else through. Damaged gzip data (truncated,
    corrupt, a bad checksum) is a :class:`VocabFileError` naming ``source``."""
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (EOFError, gzip.BadGzipFile, zlib.error) as e:
        # EOFError: truncated; BadGzipFile: a bad header, checksum or trailing bytes;
        # zlib.error: corrupt compressed data.
        problem = "truncated" if isinstance(e, EOFError) else str(e)
        raise VocabFileError(source, None, f"damaged gzip data: {problem}") from None


def looks_like(data: bytes) -> bool:
    """Whether (uncompressed) ``data`` starts as a rank file does: ``<base64> <rank>``."""
    return _FIRST_LINE.match(data) is not None


def vocabulary(data: bytes, source: str) -> Vocabulary:
    """What the rank file ``data`` (gzip is detected) says: its ranks, and for an OpenAI
    vocabulary its pattern and special tokens. Tokens are parsed when the tokenizer is built
    (``rank_data``); errors name ``source`` and the line.

    >>> vocab = vocabulary(dump_ranks([bytes([b]) for b in range(256)]), "bytes.tiktoken")
    >>> vocab.name, vocab.pattern, vocab.special_tokens
    ('bytes', None, {})
    """
    data = maybe_gunzip(data, source)
    kept = openai.known(data)
    return Vocabulary(
        source=source,
        name=Path(source).name.split(".")[0] or source,
        tokens=None,
        pattern=kept.pattern if kept else None,
        special_tokens=dict(kept.special_tokens) if kept else {},
        rank_data=data,
    )


def explained(error: VocabFileError, data: bytes, special_tokens: dict[str, int]) -> VocabFileError:
    """The core's error for the rank file ``data``, saying more where tiktoken takes what the
    core refuses (see the module docstring): for a gap in the ranks, which special tokens given
    have the missing ids; for an empty token, what tiktoken does with it. Any other error is
    returned as it is. The file is read here again, in Python, only on this path of failure.

    >>> err = VocabFileError("x.tiktoken", 2, "rank 1 is missing: ranks must be 0..2 without gaps")
    >>> print(explained(err, b"YQ== 0\\nYw== 2\\n", {"<|end|>": 1}).problem)  # doctest: +ELLIPSIS
    rank 1 is missing, the id of the special token '<|end|>': tiktoken lets a special...
    """
    if error.line is not None and error.problem.startswith(("bad base64", "the token is empty")):
        return _empty_token_error(error, data)
    if "is missing" not in error.problem:
        return error
    ranks = set()
    for line in data.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[1].isdigit():
            ranks.add(int(fields[1]))
    if not ranks or max(ranks) >= 2 * len(ranks):
        return error  # a stray rank far past the others, not a gap a special token fills
    gaps = [r for r in range(max(ranks)) if r not in ranks]
    by_id = {i: name for name, i in special_tokens.items()}
    unfilled = [r for r in gaps if r not in by_id]
    if unfilled:
        r = unfilled[0]
        problem = (
            f"rank {r} is missing and no special token given has id {r}: the ranks must run "
            f"0..{max(ranks)} without gaps (tiktoken lets a special token's id fill a gap, "
            "which tokenmill's core does not)"
        )
        return VocabFileError(error.path, error.line, problem)
    shown = ", ".join(f"{by_id[r]!r}" for r in gaps[:3]) + (" ..." if len(gaps) > 3 else "")
    what = (
        f"rank {gaps[0]} is missing, the id of the special token {shown}"
        if len(gaps) == 1
        else f"{len(gaps)} ranks from {gaps[0]} to {gaps[-1]} are missing, the ids of the "
        f"special tokens {shown}"
    )
    problem = (
        f"{what}: tiktoken lets a special token fill a gap in the ranks, but tokenmill's core "
        "numbers the ordinary tokens 0..n-1 without gaps and cannot give these ids; "
        "tokenmill.compat.tiktoken.Encoding(name, pat_str=..., mergeable_ranks="
        "load_tiktoken_bpe(path), special_tokens=...) gives tiktoken's ids"
    )
    return VocabFileError(error.path, error.line, problem)


def _empty_token_error(error: VocabFileError, data: bytes) -> VocabFileError:
    lines = data.split(b"\n")
    fields = lines[error.line - 1].split() if error.line and error.line <= len(lines) else []
    # Padding alone: base64 of nothing as Whisper writes it. Python's lenient decoder (which
    # tiktoken uses) also makes b"" of other bytes, such as "!!!!": those are damage.
    if len(fields) != 2 or fields[0].strip(b"=") != b"":
        return error
    rank = fields[1].decode("ascii", "replace")
    problem = (
        f"the token of rank {rank} is empty ({fields[0].decode('ascii', 'replace')!r}): tiktoken "
        "takes it, never gives it for any text and decodes it as b'', but tokenmill's core holds "
        "no empty token"
    )
    ranks = [int(f[1]) for f in (ln.split() for ln in lines) if len(f) == 2 and f[1].isdigit()]
    if fields[1].isdigit() and int(fields[1]) == max(ranks):
        # The last rank: without it the ranks are still 0..n-1 and every text gets the same ids.
        problem += (
            f". Without this line the file loads with the same ids for every text; only "
            f"decoding id {rank} then fails as an unknown id"
        )
    return VocabFileError(error.path, error.line, problem)


def write(tok: Tokenizer, path: str | os.PathLike[str]) -> list[str]:
    """Write the ranks of ``tok`` to ``path`` (gzipped when it ends in ``.gz``); refuses a
    tokenizer with special tokens that a load would not give back (see the module docstring).
    Returns the paths written."""
    path = Path(path)
    if tok.normalizer:
        raise UnsupportedFormatError(
            f"a .tiktoken rank file holds the ranks alone: {tok.name}'s {tok.normalizer} "
            "normalizer would be lost and its ids with it; save it as *.tokenmill or "
            "tokenizer.json, which hold it"
        )
    data = dump_ranks(tok.token_bytes_list())
    specials = tok.special_tokens
    kept = openai.known(data)
    if specials and (kept is None or kept.special_tokens != specials):
        shown = ", ".join(sorted(specials)[:3]) + (
            f" and {len(specials) - 3} more" if len(specials) > 3 else ""
        )
        lost = (
            "would be lost"
            if kept is None
            else f"would come back as {kept.name}'s, whose ranks these are"
        )
        raise UnsupportedFormatError(
            f"a .tiktoken rank file holds the ranks alone: {tok.name}'s special tokens "
            f"({shown}) {lost}; save it as *.tokenmill or tokenizer.json, which hold them, or "
            "for tiktoken write the ranks alone, tokenmill.Tokenizer(tok.mergeable_ranks, "
            "tok.pattern).save(path), and give tiktoken the special tokens"
        )
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    write_atomic(path, data)
    return [str(path)]
