"""Each tokenizer's encoding of the corpus, computed once and shared by the sections.

>>> import tokenmill
>>> from tokenmill.analysis.failures.corpus import corpus_from
>>> enc = tokenmill.load("gpt2")
>>> e = encode_corpus(enc, corpus_from({"a.txt": "hello world hello"}))
>>> e.tokens, int(e.counts[31373]), int(e.counts[23748])  # 'hello', ' hello'
({'a.txt': 3}, 1, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tokenmill.analysis.show import token_text
from tokenmill.sources.cut import last_cut

if TYPE_CHECKING:
    import numpy.typing as npt

    from tokenmill.analysis.failures.corpus import Corpus
    from tokenmill.tokenizer import Tokenizer

# Texts are cut into pieces of about this many characters (at places that do not change the
# chunks) so that one large file still keeps every thread busy.
PIECE_CHARS = 1 << 20


@dataclass
class Encoded:
    """Tokens per corpus text, and how often each id occurs in the whole corpus."""

    tokens: dict[str, int]
    counts: npt.NDArray[np.int64]

    @property
    def total(self) -> int:
        return int(sum(self.tokens.values()))


def pieces(text: str) -> list[str]:
    """``text`` cut into pieces of about :data:`PIECE_CHARS` whose encodings, concatenated,
    are the encoding of ``text`` (cut only at safe places, see :mod:`tokenmill.sources.cut`)."""
    out = []
    start = 0
    window = PIECE_CHARS
    while len(text) - start > window:
        cut = last_cut(text[start : start + window])
        if cut == 0:  # no safe place yet: look further
            window *= 2
            continue
        out.append(text[start : start + cut])
        start += cut
        window = PIECE_CHARS
    out.append(text[start:])
    return out


def encode_corpus(tok: Tokenizer, corpus: Corpus, num_threads: int | None = None) -> Encoded:
    """Encode every corpus text (special-token strings as plain text, as ``encode_ordinary``).
    Under a pattern a scanner runs, long texts are cut into pieces for the threads; a pattern
    on the regex engine has no safe place to cut, so its texts are encoded whole."""
    names: list[str] = []
    docs: list[str] = []
    for name, text in corpus.texts.items():
        for piece in pieces(text) if tok.scanner is not None else [text]:
            names.append(name)
            docs.append(piece)
    ids, offsets = tok.encode_batch_to_numpy(docs, num_threads=num_threads, disallowed_special=())
    per_doc = np.diff(offsets)
    tokens = dict.fromkeys(corpus.texts, 0)
    for name, n in zip(names, per_doc.tolist(), strict=True):
        tokens[name] += n
    counts = np.bincount(ids, minlength=tok.n_vocab).astype(np.int64)
    return Encoded(tokens, counts)


def shown(tok: Tokenizer, ids: list[int]) -> list[str]:
    """The text of each token (bytes that are not whole characters as ``\\xNN``)."""
    return [token_text(b) for b in tok.decode_tokens_bytes(ids)]


def token_lengths(tok: Tokenizer) -> npt.NDArray[np.int64]:
    """Byte length of every ordinary token, indexed by id."""
    return np.fromiter((len(t) for t in tok.token_bytes_list()), dtype=np.int64)


JSON = dict[str, Any]
