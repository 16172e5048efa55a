"""Exception classes: every error tokenmill raises on purpose is one of these. Each subclasses
:class:`TokenmillError` and the builtin a caller would naturally catch (``ValueError``,
``TypeError``, ``KeyError``, ``OSError``, ``ImportError``), and its message says what to do
about it.

>>> import tokenmill
>>> try:
...     tokenmill.load("gpt2").decode([10**9])
... except KeyError as e:
...     print(e)
unknown token id 1000000000: this vocabulary has ids 0..50256
"""

from __future__ import annotations


class TokenmillError(Exception):
    """Base class of every error tokenmill raises on purpose."""


class InvalidArgumentError(TokenmillError, ValueError):
    """An argument value the call cannot use (a count below 1, an unknown choice, an array of
    the wrong shape); the message names the argument and what it takes."""


class WrongTypeError(TokenmillError, TypeError):
    """An argument of the wrong type (bytes where text is wanted, one string where a list is);
    the message names the type wanted."""


class MissingDependencyError(TokenmillError, ImportError):
    """An optional dependency (Ray, torch) that the call needs is not installed; the message
    says what to install."""


class UsageError(TokenmillError, ValueError):
    """A mistake in what the ``tokenmill`` command was asked to do: reported in one line, exit
    status 2."""


class UnsupportedFormatError(InvalidArgumentError):
    """A tokenizer file format that cannot be used here: a destination whose name says no
    format (``x.txt``), a format name tokenmill does not know, or a format that cannot hold
    this tokenizer (a rank file has no special tokens, GPT-2's files only GPT-2's pattern);
    the message names the formats that can."""


class InvalidPatternError(TokenmillError, ValueError):
    """A split pattern that does not compile, or that fails on an input."""


class InvalidVocabError(TokenmillError, ValueError):
    """A vocabulary that cannot be used (duplicate tokens, gaps, missing bytes...)."""


class VocabFileError(InvalidVocabError):
    """A malformed vocabulary file; the message names the file and line."""

    def __init__(self, path: object, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class InvalidSpecialTokensError(TokenmillError, ValueError):
    """Special-token definitions that are empty, duplicated or clash with ordinary ids."""


class DisallowedSpecialTokenError(TokenmillError, ValueError):
    """Text contains a special-token string that the call did not allow.

    The message names the token and the arguments that decide what to do with it.
    """

    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(
            f"Encountered text corresponding to disallowed special token {token!r}.\n"
            "If you want this text to be encoded as a special token, pass it to "
            f"`allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
            "If you want this text to be encoded as normal text, disable the check for this "
            f"token by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
            "To disable this check for all special tokens, pass `disallowed_special=()` "
            "(or use `encode_ordinary`)."
        )


class UnknownTokenIdError(TokenmillError, KeyError):
    """A token id that the vocabulary does not have."""

    def __init__(self, token_id: int, n_vocab: int | None = None) -> None:
        self.token_id = token_id
        self.message = f"unknown token id {token_id}"
        if n_vocab is not None:
            self.message += f": this vocabulary has ids 0..{n_vocab - 1}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class NotATokenError(TokenmillError, KeyError):
    """A string or bytes that is not exactly one token of the vocabulary
    (``Tokenizer.encode_single_token``)."""


class UnsupportedIsaError(TokenmillError, ImportError):
    """``TOKENMILL_ISA`` names an instruction set that is unknown or that this CPU lacks; raised
    when tokenmill is imported (see :func:`tokenmill.isa`)."""


class UnknownTokenizerError(TokenmillError, ValueError):
    """A tokenizer name that is neither built in, known for download, nor a file."""


class MissingPatternError(UnknownTokenizerError):
    """A rank file loaded without a split pattern: the file holds the ranks alone, so the
    loader must be told how to split text (``pattern=``; ``--pattern`` on the command line)."""

    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__(
            f"{source}: a rank file does not say how to split text; pass pattern= "
            "(a name: gpt2, cl100k, o200k, or a regex)"
        )


class UnknownModelError(TokenmillError, KeyError):
    """A model name whose encoding is not known
    (``tokenmill.compat.tiktoken.encoding_name_for_model``)."""


class IdsFileError(TokenmillError, ValueError):
    """Contents that are not token ids in the format they are read as (text, JSON, ``.npy``,
    ``.bin``); the message says what was expected."""


class DownloadError(TokenmillError, OSError):
    """A vocabulary download failed (network, HTTP status, or the cache)."""


class HashMismatchError(DownloadError):
    """Downloaded or cached bytes whose sha256 is not the pinned one; nothing was cached."""


class TrainingError(TokenmillError, ValueError):
    """Training arguments or a corpus that cannot be used."""


class CorpusFileError(TrainingError):
    """An input file that cannot be read as text where every text counts (training, the
    report); the message names the file and the line, row or byte offset."""


class TrainingWarning(UserWarning):
    """Training stopped before the vocabulary was full (the corpus ran out of pairs)."""


class UnknownCharacterError(TokenmillError, ValueError):
    """Text holds a character a character-level tokenizer never saw in training."""

    def __init__(self, char: str, position: int) -> None:
        self.char = char
        self.position = position
        super().__init__(
            f"character {char!r} (U+{ord(char):04X}) at position {position} was not in the "
            "training text; train on text that has it, or pass unknown='<unk>' to map unseen "
            "characters to one id"
        )


class PlaygroundRequestError(TokenmillError, ValueError):
    """A request to the playground's API (``tokenmill serve``) that cannot be answered;
    ``status`` is the HTTP status it is answered with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class CorpusInputError(TokenmillError, ValueError):
    """A corpus input that cannot be found (a missing file, a glob that matches nothing, a
    folder without input files), or, in ``tokenmill.corpus.encode``, read: the message names
    the file and line (or row) and what to do (fix it, or ``on_error="skip"``)."""


class CorpusOptionError(InvalidArgumentError):
    """An option of ``tokenmill.corpus.encode`` or of a ``ShardLoader`` that cannot be used."""


class EndlessLoaderError(TokenmillError, TypeError):
    """``len()`` of a random-order ``ShardLoader``, which never ends."""


class ManifestError(TokenmillError, ValueError):
    """A shard folder whose manifest is missing, unreadable or from a different run."""


class FolderLockedError(ManifestError):
    """A shard folder that another ``tokenmill.corpus.encode`` run is writing (it holds the
    folder's ``.lock``); the message names the folder and the other run's pid."""


class CorruptShardError(TokenmillError, ValueError):
    """A shard whose size or sha256 differs from the manifest's; the message names it."""
