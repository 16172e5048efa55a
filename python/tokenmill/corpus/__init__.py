"""Whole corpora -> token shards for training, on all cores or a Ray cluster, and back.

- :func:`encode` writes raw ``uint16``/``uint32`` shards plus ``manifest.json``
  (:mod:`tokenmill.corpus.shards` describes the layout); ``tokenmill encode-corpus`` is the CLI.
  Its inputs are found and read by :mod:`tokenmill.sources`.
- :func:`verify` re-hashes the shards against the manifest.
- :class:`ShardLoader` memory-maps the shards and yields ``(x, y)`` batches.
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
