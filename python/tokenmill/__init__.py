"""tokenmill: train, run and inspect byte-level BPE tokenizers.

>>> import tokenmill
>>> enc = tokenmill.load("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
"""

from tokenmill.chars import CharTokenizer
from tokenmill.cpu import isa, supported_isas
from tokenmill.errors import (
    CorpusFileError,
    CorpusInputError,
    CorpusOptionError,
    CorruptShardError,
    DisallowedSpecialTokenError,
    DownloadError,
    EndlessLoaderError,
    FolderLockedError,
    HashMismatchError,
    IdsFileError,
    InvalidArgumentError,
    InvalidPatternError,
    InvalidSpecialTokensError,
    InvalidVocabError,
    ManifestError,
    MissingDependencyError,
    MissingPatternError,
    NotATokenError,
    PlaygroundRequestError,
    TokenmillError,
    TrainingError,
    TrainingWarning,
    UnknownCharacterError,
    UnknownModelError,
    UnknownTokenIdError,
    UnknownTokenizerError,
    UnsupportedFormatError,
    UnsupportedIsaError,
    UsageError,
    VocabFileError,
    WrongTypeError,
)
from tokenmill.pretrained import list_pretrained, load
from tokenmill.template import Template
from tokenmill.tokenizer import Merge, StreamDecoder, Tokenizer
from tokenmill.training import train

__version__ = "0.1.0"

__all__ = [
    "CharTokenizer",
    "CorpusFileError",
    "CorpusInputError",
    "CorpusOptionError",
    "CorruptShardError",
    "DisallowedSpecialTokenError",
    "DownloadError",
    "EndlessLoaderError",
    "FolderLockedError",
    "HashMismatchError",
    "IdsFileError",
    "InvalidArgumentError",
    "InvalidPatternError",
    "InvalidSpecialTokensError",
    "InvalidVocabError",
    "ManifestError",
    "Merge",
    "MissingDependencyError",
    "MissingPatternError",
    "NotATokenError",
    "PlaygroundRequestError",
    "StreamDecoder",
    "Template",
    "Tokenizer",
    "TokenmillError",
    "TrainingError",
    "TrainingWarning",
    "UnknownCharacterError",
    "UnknownModelError",
    "UnknownTokenIdError",
    "UnknownTokenizerError",
    "UnsupportedFormatError",
    "UnsupportedIsaError",
    "UsageError",
    "VocabFileError",
    "WrongTypeError",
    "__version__",
    "isa",
    "list_pretrained",
    "load",
    "supported_isas",
    "train",
]
