"""OpenAI's vocabularies as tokenmill knows them: each name's rank file (bundled in the package
or its URL) with its sha256, split pattern and special tokens.

A rank file holds the ranks alone; one of these is recognised by the sha256 of its bytes, and
gets its pattern and special tokens from here. :mod:`tokenmill.pretrained` loads them by name.

>>> REGISTRY["cl100k_base"].pattern, REGISTRY["cl100k_base"].bundled
('cl100k', True)
>>> known(b"YQ== 0\\n") is None
True
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from tokenmill.patterns import ENDOFPROMPT, ENDOFTEXT, FIM_MIDDLE, FIM_PREFIX, FIM_SUFFIX

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
        """Whether the rank file ships inside the package (else it is downloaded)."""
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


def known(rank_data: bytes) -> Pretrained | None:
    """The vocabulary whose (uncompressed) rank file is ``rank_data``, by sha256; the first
    name of it when several share the file (``gpt2`` for r50k's, ``p50k_base`` for p50k's).
    """
    digest = hashlib.sha256(rank_data).hexdigest()
    return next((p for p in REGISTRY.values() if p.sha256 == digest), None)
