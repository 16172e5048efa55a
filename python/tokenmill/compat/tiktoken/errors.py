"""Errors of the tiktoken drop-in where tiktoken raises a builtin that no error of
:mod:`tokenmill.errors` is: each is tokenmill's error for the problem *and* tiktoken's builtin,
so code written for tiktoken (``except AssertionError``) and code written for tokenmill
(``except tokenmill.TokenmillError``) both catch it.

>>> from tokenmill.compat import tiktoken
>>> enc = tiktoken.get_encoding("gpt2")
>>> try:
...     enc.is_special_token("50256")
... except AssertionError as e:
...     print(type(e).__name__, e)
NotATokenIdError is_special_token takes an int token id, not str
"""

from __future__ import annotations

from tokenmill.errors import (
    HashMismatchError,
    InvalidVocabError,
    TokenmillError,
    UnknownTokenIdError,
    VocabFileError,
    WrongTypeError,
)


class VocabCheckError(InvalidVocabError, AssertionError):
    """A vocabulary that fails one of tiktoken's checks (an ``AssertionError`` there):
    ``explicit_n_vocab`` that the ranks and special tokens do not add up to, or GPT-2 files
    whose merges do not make ``encoder.json``'s tokens (``data_gym_to_mergeable_bpe_ranks``)."""


class NotATokenIdError(WrongTypeError, AssertionError):
    """``Encoding.is_special_token`` given something that is not an ``int`` (tiktoken asserts
    that it is one)."""


class TokenIdOverflowError(UnknownTokenIdError, OverflowError):
    """A token id outside ``0..2**32 - 1``: tiktoken's ``OverflowError`` (it converts ids to
    unsigned 32-bit integers), tokenmill's unknown id."""


class DownloadHashMismatchError(HashMismatchError, ValueError):
    """``read_file_cached`` read bytes whose sha256 is not ``expected_hash`` (tiktoken: a
    ``ValueError``); nothing was cached."""


class AlphabetError(VocabFileError, KeyError):
    """A GPT-2 vocabulary file (``data_gym_to_mergeable_bpe_ranks``) with a character outside
    GPT-2's byte alphabet (tiktoken: the ``KeyError`` of looking the character up)."""

    def __str__(self) -> str:
        # KeyError would show the message as a quoted repr.
        return Exception.__str__(self)


class PluginError(TokenmillError, ValueError):
    """A ``tiktoken_ext`` plugin module that defines no ``ENCODING_CONSTRUCTORS``, or an
    encoding name that two plugins define."""
