"""Whole corpora -> token shards for training, on all cores or a Ray cluster, and back.

- :func:`encode` writes ``uint16``/``uint32`` ids plus ``manifest.json`` in tokenmill's
  shards, nanoGPT's ``train.bin``/``val.bin`` or llm.c's shards (:mod:`tokenmill.corpus.layouts`;
  :mod:`tokenmill.corpus.shards` describes the manifest); ``tokenmill encode-corpus`` is the
  CLI. Its inputs are found and read by :mod:`tokenmill.sources`.
- :func:`verify` re-hashes the shards against the manifest.
- :class:`ShardLoader` memory-maps the shards (of any layout) and yields ``(x, y)`` batches.
- :func:`read_manifest` reads the manifest.
- :class:`FolderLockedError`: another run is writing the folder (one run per folder at a time).

The engines (:mod:`tokenmill.corpus.engines`) run the work here or on Ray; Ray is imported only
when it is used.
"""

from tokenmill.corpus.driver import EncodeResult, FolderLockedError, encode
from tokenmill.corpus.loader import ShardLoader
from tokenmill.corpus.shards import read_manifest, tokenizer_hash, verify

__all__ = [
    "EncodeResult",
    "FolderLockedError",
    "ShardLoader",
    "encode",
    "read_manifest",
    "tokenizer_hash",
    "verify",
]
