"""Section 9, compression and vocabulary cost: bytes per token on each corpus text, and what
the vocabulary costs a model in embedding and output-layer parameters.

>>> import tokenmill
>>> from tokenmill.analysis.failures.corpus import corpus_from
>>> from tokenmill.analysis.failures.encoded import encode_corpus
>>> enc = tokenmill.load("gpt2")
>>> c = corpus_from({"a.txt": "hello world"})
>>> s = compute(enc, c, encode_corpus(enc, c))
>>> s["rows"][0]["bytes_per_token"], s["embedding"][0]["d_model"]
(5.5, 256)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokenmill.embedding import D_MODELS, embedding_parameters

if TYPE_CHECKING:
    from tokenmill.analysis.failures.corpus import Corpus
    from tokenmill.analysis.failures.encoded import Encoded
    from tokenmill.tokenizer import Tokenizer


def compute(tok: Tokenizer, corpus: Corpus, encoded: Encoded) -> dict[str, Any]:
    """Bytes and characters per token per text and overall; parameters for each d_model."""
    rows: list[dict[str, Any]] = []
    for name, text in corpus.texts.items():
        n = encoded.tokens[name]
        nbytes = len(text.encode("utf-8"))
        rows.append(
            {
                "text": name,
                "bytes": nbytes,
                "tokens": n,
                "bytes_per_token": nbytes / n if n else 0.0,
                "chars_per_token": len(text) / n if n else 0.0,
            }
        )
    total_bytes = sum(r["bytes"] for r in rows)
    return {
        "rows": rows,
        "bytes": total_bytes,
        "tokens": encoded.total,
        "bytes_per_token": total_bytes / encoded.total if encoded.total else 0.0,
        "n_vocab": tok.n_vocab,
        "embedding": [embedding_parameters(tok.n_vocab, d) for d in D_MODELS],
    }
