"""tokenmill: train, run and inspect byte-level BPE tokenizers.

>>> import tokenmill
>>> enc = tokenmill.load("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
"""

from tokenmill.chars import CharTokenizer
from tokenmill.errors import (
    DisallowedSpecialTokenError,
    DownloadError,
    HashMismatchError,
    InvalidPatternError,
    InvalidSpecialTokensError,
    InvalidVocabError,
    PlaygroundRequestError,
    TokenmillError,
    TrainingError,
    TrainingWarning,
    UnknownCharacterError,
    UnknownTokenIdError,
    UnknownTokenizerError,
    VocabFileError,
)
from tokenmill.pretrained import list_pretrained, load
from tokenmill.tokenizer import Merge, StreamDecoder, Tokenizer
from tokenmill.training import train

__version__ = "0.1.0"

__all__ = [
    "CharTokenizer",
    "DisallowedSpecialTokenError",
    "DownloadError",
    "HashMismatchError",
    "InvalidPatternError",
    "InvalidSpecialTokensError",
    "InvalidVocabError",
    "Merge",
    "PlaygroundRequestError",
    "StreamDecoder",
    "Tokenizer",
    "TokenmillError",
    "TrainingError",
    "TrainingWarning",
    "UnknownCharacterError",
    "UnknownTokenIdError",
    "UnknownTokenizerError",
    "VocabFileError",
    "__version__",
    "list_pretrained",
    "load",
    "train",
]
