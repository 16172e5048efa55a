"""``tiktoken.core``: the ``Encoding`` class, computed by tokenmill.

Same constructor, methods, properties, defaults and results as tiktoken 0.14's, the same
builtin exception types (each also a :class:`~tokenmill.TokenmillError`), and pickling by name
for the shared OpenAI encodings. An ``Encoding`` is a :class:`tokenmill.Tokenizer`, so
tokenmill's own methods (``count``, ``truncate``, ``decode_stream``...) work on it too.

tiktoken accepts ranks with gaps; ``p50k_base`` has one, at 50256, the id of its
``<|endoftext|>``. So does tokenmill's :class:`~tokenmill.Tokenizer`, which ``Encoding`` is.

>>> enc = Encoding(
...     "tiny", pat_str=r"\\S+|\\s+",
...     mergeable_ranks={bytes([b]): b for b in range(256)} | {b"hi": 257},
...     special_tokens={"<|end|>": 256},
... )
>>> enc.encode("hi<|end|>", allowed_special="all"), enc.n_vocab
([257, 256], 258)
>>> enc.decode_single_token_bytes(256), enc.encode_single_token(b"<|end|>")
(b'<|end|>', 256)
"""

from __future__ import annotations

import bisect
import functools
import threading
from collections import Counter
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from tokenmill.compat.tiktoken.errors import NotATokenIdError, TokenIdOverflowError, VocabCheckError
from tokenmill.compat.tiktoken.openai_public import encoding_kwargs
from tokenmill.errors import (
    DisallowedSpecialTokenError,
    InvalidArgumentError,
    NotATokenError,
    UnknownTokenIdError,
    WrongTypeError,
)
from tokenmill.formats.openai import REGISTRY
from tokenmill.pretrained import load_pretrained
from tokenmill.tokenizer import IDS_WANTED, Tokenizer

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SpecialArg = Literal["all"] | Collection[str]

#: Encodings shared by name (tiktoken's ``tiktoken.registry.ENCODINGS``, which is this dict).
ENCODINGS: dict[str, Encoding] = {}
_LOCK = threading.Lock()

# Characters with Unicode's White_Space property: Rust's char::is_whitespace, which tiktoken's
# encode_with_unstable uses (str.isspace also takes U+001C..U+001F, which are not).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


class Encoding(Tokenizer):
    """tiktoken's ``Encoding``: a byte-level BPE vocabulary (``mergeable_ranks``: token bytes
    -> rank, which is also the id), a split pattern (``pat_str``) and special tokens.
    ``explicit_n_vocab``, if given, must be the number of ranks and special tokens and one
    more than the largest id (else a
    :class:`~tokenmill.compat.tiktoken.errors.VocabCheckError`, an ``AssertionError``).

    tokenmill needs every single byte to be a token, each rank to be one token's and special
    tokens to have ids of their own; tiktoken accepts vocabularies without that (until it
    meets such a byte or id), tokenmill refuses them when they are built (an
    :class:`~tokenmill.InvalidVocabError`).
    """

    # tiktoken ignores names in allowed_special that are not special tokens.
    unknown_special_names = "ignore"
    # Whether this is the shared encoding of an OpenAI vocabulary (it pickles by name).
    _builtin = False

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        max_token_value = max(
            max(mergeable_ranks.values()), max(special_tokens.values(), default=0)
        )
        if explicit_n_vocab and (
            len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab
            or max_token_value != explicit_n_vocab - 1
        ):
            raise VocabCheckError(
                f"{name}: explicit_n_vocab is {explicit_n_vocab}, but there are "
                f"{len(mergeable_ranks)} ranks and {len(special_tokens)} special tokens, and "
                f"the largest id is {max_token_value}"
            )
        super().__init__(mergeable_ranks, pat_str, special_tokens, name=name)
        self._adopt(pat_str, mergeable_ranks, special_tokens, max_token_value)

    @classmethod
    def _wrap(cls, tok: Tokenizer) -> Encoding:
        # A shallow copy of a shared tokenizer: the native core and its tables are shared.
        enc = cls.__new__(cls)
        enc.__dict__.update(tok.__dict__)
        enc._adopt(tok.pattern, None, tok.special_tokens, tok.max_token_value)
        return enc

    def _adopt(
        self,
        pat_str: str | tuple[str, ...],
        ranks: dict[bytes, int] | None,
        specials: dict[str, int],
        max_token_value: int,
    ) -> None:
        # tiktoken keeps what it was given; a wrapped tokenizer builds its ranks on demand.
        self._given_pattern = pat_str
        self._given_ranks = ranks
        self._given_specials = specials
        self._special_token_values = frozenset(specials.values())
        self._max_token = max_token_value
        # An id with several names (o200k_harmony's 200018 is <|endofprompt|> and
        # <|reserved_200018|>) decodes to its first, as tiktoken's does; the core gives the last.
        first: dict[int, str] = {}
        for special, token in specials.items():
            first.setdefault(token, special)
        names = Counter(specials.values())
        self._first_names = {t: first[t].encode() for t, n in names.items() if n > 1} or None

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # tiktoken's Encodings are equal only to themselves, and hashable (they are cache keys).
    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:  # type: ignore[override]
        return object.__hash__(self)

    # -------------------------------------------------------------- tiktoken's attributes

    @property
    def _pat_str(self) -> str | tuple[str, ...]:
        return self._given_pattern

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        if self._given_ranks is None:
            self._given_ranks = super().mergeable_ranks
        return self._given_ranks

    @property
    def _special_tokens(self) -> dict[str, int]:
        return self._given_specials

    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (tiktoken: "prefer ``max_token_value + 1``")."""
        return self._max_token + 1

    @property
    def max_token_value(self) -> int:
        """The largest token id, ordinary or special."""
        return self._max_token

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (a ``KeyError`` if there is none, as in tiktoken)."""
        try:
            return self._given_specials["<|endoftext|>"]
        except KeyError:
            raise NotATokenError(f"{self.name} has no <|endoftext|> special token") from None

    @functools.cached_property
    def special_tokens_set(self) -> set[str]:  # type: ignore[override]
        """The special-token strings (a ``set``, as tiktoken's)."""
        return set(self._given_specials)

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token."""
        if not isinstance(token, int):
            raise NotATokenIdError(
                f"is_special_token takes an int token id, not {type(token).__name__}"
            )
        return token in self._special_token_values

    # ---------------------------------------------------------------------------- encoding

    # tiktoken's signatures: tokenmill's `num_threads` for one text is not part of them.
    def encode(  # type: ignore[override]
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> list[int]:
        """Encode ``text``; text matching a disallowed special token raises a
        :class:`~tokenmill.DisallowedSpecialTokenError` (a ``ValueError``).

        >>> from tokenmill.compat import tiktoken
        >>> tiktoken.get_encoding("gpt2").encode("hello <|endoftext|>", allowed_special="all")
        [31373, 220, 50256]
        """
        # The default arguments skip both checks: a short text encodes in ~1 us, and a function
        # call or super() costs ~0.1 us each.
        if disallowed_special != "all" and _others_disallowed(
            disallowed_special, self._given_specials
        ):
            _check_disallowed(text, disallowed_special, self._given_specials)
        ids = Tokenizer.encode(
            self, text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return ids

    def encode_ordinary(self, text: str) -> list[int]:  # type: ignore[override]
        """Encode ``text`` with special-token strings as plain text."""
        return Tokenizer.encode_ordinary(self, text)

    def encode_to_numpy(  # type: ignore[override]
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> npt.NDArray[np.uint32]:
        """:meth:`encode` into a ``uint32`` numpy array."""
        if _others_disallowed(disallowed_special, self._given_specials):
            _check_disallowed(text, disallowed_special, self._given_specials)
        if not text.isascii():  # O(1); the check costs under 1% of encoding the text
            # tiktoken repairs surrogates for encode but not here: they fail.
            text.encode("utf-8")
        return super().encode_to_numpy(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )

    def encode_batch(  # type: ignore[override]
        self,
        text: Sequence[str],
        *,
        num_threads: int = 8,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> list[list[int]]:
        """:meth:`encode` for many texts, on up to ``num_threads`` threads."""
        if _others_disallowed(disallowed_special, self._given_specials):
            for t in text:
                _check_disallowed(t, disallowed_special, self._given_specials)
        return super().encode_batch(
            text,
            num_threads=num_threads,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )

    def encode_ordinary_batch(  # type: ignore[override]
        self, text: Sequence[str], *, num_threads: int = 8
    ) -> list[list[int]]:
        """:meth:`encode_ordinary` for many texts, on up to ``num_threads`` threads."""
        return super().encode_ordinary_batch(text, num_threads=num_threads)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text or bytes that are exactly one token: an ordinary token's bytes, or
        a special token's text (or its UTF-8 bytes). Else a ``KeyError``
        (:class:`~tokenmill.NotATokenError`).

        >>> from tokenmill.compat import tiktoken
        >>> enc = tiktoken.get_encoding("gpt2")
        >>> enc.encode_single_token("hello"), enc.encode_single_token(b"<|endoftext|>")
        (31373, 50256)
        """
        if isinstance(text_or_bytes, str):
            data = text_or_bytes.encode("utf-8")  # lone surrogates fail, as in tiktoken
        elif isinstance(text_or_bytes, bytes):
            data = text_or_bytes
        else:
            raise WrongTypeError(
                f"encode_single_token takes str or bytes, not {type(text_or_bytes).__name__}"
            )
        rank = self.rank(data)
        if rank is not None:
            return rank
        try:
            return self._given_specials[data.decode("utf-8")]
        except (KeyError, UnicodeDecodeError):
            raise NotATokenError(
                f"{text_or_bytes!r} is not a single token of {self.name}"
            ) from None

    def _encode_single_piece(self, text_or_bytes: str | bytes) -> list[int]:
        """BPE of text or bytes without splitting them; no special tokens (an empty piece is
        no tokens, where tiktoken panics).

        >>> from tokenmill.compat import tiktoken
        >>> tiktoken.get_encoding("gpt2")._encode_single_piece("helloqqqq")
        [31373, 38227, 38227]
        """
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        rank = self.rank(text_or_bytes)
        return [rank] if rank is not None else self._byte_pair_encode(text_or_bytes)

    def _byte_pair_encode(self, piece: bytes) -> list[int]:
        """tiktoken's byte_pair_encode: merge the piece's bytes by rank, without looking the
        whole piece up (a few tokens are never made by merging: they are only found whole)."""
        if super().rank(piece) is None:
            return self.encode_chunk(piece)  # the core merges a piece it cannot find whole
        # The piece is a token: merge it here, by the same rule.
        parts = [piece[i : i + 1] for i in range(len(piece))]
        while len(parts) > 1:
            best: tuple[int, int] | None = None
            for i in range(len(parts) - 1):
                rank = self.rank(parts[i] + parts[i + 1])
                if rank is not None and (best is None or rank < best[0]):
                    best = (rank, i)
            if best is None:
                break
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return [self.rank(p) for p in parts]  # type: ignore[misc]  # merged parts are tokens

    def _encode_only_native_bpe(self, text: str) -> list[int]:
        """Split ``text`` into chunks, then BPE each: :meth:`encode_ordinary` in two steps."""
        text.encode("utf-8")  # text with lone surrogates fails here, as in tiktoken
        return [t for chunk in self.chunks(text) for t in self.encode_chunk(chunk.encode())]

    def _encode_bytes(self, text: bytes) -> list[int]:
        """Encode bytes that need not be UTF-8: the valid prefix as text, then the rest, with
        the last chunk of the prefix, as one piece.

        >>> from tokenmill.compat import tiktoken
        >>> tiktoken.get_encoding("cl100k_base")._encode_bytes(b" \\xec\\x8b\\xa4\\xed")
        [62085]
        """
        if not isinstance(text, bytes):
            raise WrongTypeError(f"_encode_bytes takes bytes, not {type(text).__name__}")
        try:
            return self.encode_ordinary(text.decode("utf-8"))
        except UnicodeDecodeError as e:
            valid = e.start
        prefix = text[:valid].decode("utf-8")
        tokens = self.encode_ordinary(prefix)
        last = self._last_piece_length(prefix, tokens)
        if tokens and last > 0:
            rest = self.decode_bytes(tokens[-last:]) + text[valid:]
            del tokens[-last:]
        else:
            rest = text[valid:]
        return tokens + self._encode_single_piece(rest)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The tokens of ``text`` that no continuation of it changes, and every token sequence
        that its last piece and a continuation could start with (tiktoken: "this API should
        itself be considered unstable"). The completions come sorted; tiktoken's order is
        that of a hash set.

        >>> from tokenmill.compat import tiktoken
        >>> stable, completions = tiktoken.get_encoding("gpt2").encode_with_unstable("hello fanta")
        >>> stable, [31373] + [277, 4910] in [stable + c for c in completions]
        ([31373], True)
        """
        text.encode("utf-8")  # text with lone surrogates fails here, as in tiktoken
        tokens = self.encode(
            text, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        tail = len(tokens)
        while tail and tokens[tail - 1] not in self._special_token_values:
            tail -= 1
        if tail == len(tokens):  # no text after the last special token
            return tokens, []
        last = self._last_piece_length(self.decode_bytes(tokens[tail:]).decode(), tokens)
        unstable = self.decode_bytes(tokens[-last:])
        del tokens[-last:]
        return tokens, self._completions(unstable)

    def _last_piece_length(self, text: str, tokens: list[int]) -> int:
        """How many of ``tokens`` (which end with the encoding of ``text``) the last chunk of
        ``text`` is, widened over the whitespace tokens before it: tiktoken's "unstable" end,
        whose tokens more text could change (cl100k's ``\\s*[\\r\\n]+`` moves chunk ends)."""
        chunks = self.chunks(text)
        if not chunks:
            return 0
        last = len(self.encode_chunk(chunks[-1].encode()))
        if self._all_space(tokens[-last]):
            while last < len(tokens) and self._all_space(tokens[-last - 1]):
                last += 1
        return last

    def _all_space(self, token: int) -> bool:
        if token in self._special_token_values:
            return False
        return all(b in b" \n\t" for b in self.decode_single_token_bytes(token))

    def _completions(self, unstable: bytes) -> list[list[int]]:
        values = self._sorted_tokens
        found: set[tuple[int, ...]] = set()
        # Single tokens that start with the unstable bytes (or are them).
        at = bisect.bisect_left(values, unstable)
        while at < len(values) and values[at].startswith(unstable):
            found.add((self.rank(values[at]),))  # type: ignore[arg-type]  # a token's bytes
            at += 1
        # The last token may start inside the unstable bytes: put each token that starts with
        # what follows that point there, and encode the result (text encodes with its
        # chunks, as tiktoken does; bytes that are not UTF-8 merge as one piece).
        texts: list[str] = []
        pieces: list[bytes] = []
        for i in range(1, len(unstable)):
            prefix, suffix = unstable[:i], unstable[i:]
            at = bisect.bisect_left(values, suffix)
            while at < len(values) and values[at].startswith(suffix):
                possible = prefix + values[at]
                try:
                    texts.append(possible.decode("utf-8"))
                except UnicodeDecodeError:
                    pieces.append(possible)
                at += 1
        encoded = self.encode_ordinary_batch(texts) + [self._byte_pair_encode(p) for p in pieces]
        for ids in encoded:
            seq: list[int] = []
            length = 0
            for token in ids:
                seq.append(token)
                length += len(self.decode_single_token_bytes(token))
                if length >= len(unstable):
                    break
            found.add(tuple(seq))
        # More text can cut a chunk before a final whitespace character that the unstable
        # bytes end with, so the two parts may also be encoded apart.
        if len(unstable) > 1:
            size = _last_char_size(unstable)
            if size and len(unstable) > size:
                head, end = unstable[:-size], unstable[-size:]
                if end.decode("utf-8") in _WHITE_SPACE:
                    found.add(tuple(self._byte_pair_encode(head) + self._byte_pair_encode(end)))
        return [list(seq) for seq in sorted(found)]

    @functools.cached_property
    def _sorted_tokens(self) -> list[bytes]:
        return self.token_byte_values()

    # ---------------------------------------------------------------------------- decoding

    def decode_bytes(self, tokens: Sequence[int] | npt.NDArray[Any]) -> bytes:
        """The bytes of the tokens, concatenated.

        >>> from tokenmill.compat import tiktoken
        >>> tiktoken.get_encoding("gpt2").decode_bytes([31373, 995])
        b'hello world'
        """
        named = self._first_names
        if named is None or named.keys().isdisjoint(ids := list(tokens)):
            return self._decode_core(tokens)
        out, start = [], 0
        for i, token in enumerate(ids):
            if token in named:
                out += [self._decode_core(ids[start:i]), named[token]]
                start = i + 1
        return b"".join([*out, self._decode_core(ids[start:])])

    def _decode_core(self, tokens: Sequence[int] | npt.NDArray[Any]) -> bytes:
        try:
            return super().decode_bytes(tokens)
        except UnknownTokenIdError as e:
            raise _id_error(e) from None

    def decode(self, tokens: Sequence[int] | npt.NDArray[Any], errors: str = "replace") -> str:
        """Decode to text; bytes that are not UTF-8 are handled by ``errors``."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, ordinary or special."""
        if self._first_names is not None and token in self._first_names:
            return self._first_names[token]
        try:
            return super().decode_single_token_bytes(token)
        except UnknownTokenIdError as e:
            raise _id_error(e) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token."""
        _need_iterable(tokens, f"tokens must be {IDS_WANTED}")
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_batch(  # type: ignore[override]
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        """:meth:`decode` for many token lists (``num_threads`` is checked as tiktoken's
        thread pool checks it; decoding is too quick to share out)."""
        _check_threads(num_threads)
        _need_iterable(batch, "expected a list of token-id lists")
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(  # type: ignore[override]
        self, batch: Sequence[Sequence[int]], *, num_threads: int = 8
    ) -> list[bytes]:
        """:meth:`decode_bytes` for many token lists."""
        _check_threads(num_threads)
        _need_iterable(batch, "expected a list of token-id lists")
        return [self.decode_bytes(tokens) for tokens in batch]

    # ---------------------------------------- tokenmill's methods, in this encoding's ids

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special-token strings and their ids."""
        return dict(self._given_specials)

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank for the ordinary tokens."""
        return dict(self._mergeable_ranks)

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
        add_special_tokens: bool = False,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """:meth:`tokenmill.Tokenizer.encode_batch_to_numpy`, with tiktoken's rules for
        ``disallowed_special``."""
        if _others_disallowed(disallowed_special, self._given_specials):
            for t in texts:
                _check_disallowed(t, disallowed_special, self._given_specials)
        return super().encode_batch_to_numpy(
            texts,
            num_threads=num_threads,
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
            add_special_tokens=add_special_tokens,
        )

    # ---------------------------------------------------------------------------- pickling

    def __getstate__(self) -> object:
        """What a pickle holds: the name of a shared OpenAI encoding (as tiktoken's
        registered encodings pickle), else the constructor's arguments."""
        if self._builtin:
            return self.name
        return {
            "name": self.name,
            "pat_str": self._pat_str,
            "mergeable_ranks": self._mergeable_ranks,
            "special_tokens": self._special_tokens,
        }

    def __setstate__(self, value: object) -> None:
        if isinstance(value, str):
            self.__dict__ = openai_encoding(value).__dict__
        else:
            self.__init__(**value)  # type: ignore[misc, arg-type]

    def __reduce__(self) -> tuple[Any, ...]:
        # Tokenizer pickles through __reduce__, which comes before __getstate__.
        return (_from_state, (self.__getstate__(),))


def _from_state(state: str | dict[str, Any]) -> Encoding:
    if isinstance(state, str):
        return openai_encoding(state)
    return Encoding(**state)


def openai_encoding(name: str) -> Encoding:
    """The shared :class:`Encoding` of an OpenAI vocabulary tokenmill knows: what
    ``get_encoding(name)`` gives when no plugin replaces it, and what its pickle loads. The
    bundled ones share tokenmill's tokenizer (:func:`tokenmill.pretrained.load_pretrained`).

    >>> openai_encoding("cl100k_base").encode("hello world")
    [15339, 1917]
    """
    with _LOCK:
        shared = ENCODINGS.get(name)
    if shared is not None and shared._builtin:
        return shared
    spec = REGISTRY.get(name)
    if spec is not None and spec.bundled:
        enc = Encoding._wrap(load_pretrained(name))
    else:
        enc = Encoding(**encoding_kwargs(name))
    enc._builtin = True
    with _LOCK:
        shared = ENCODINGS.setdefault(name, enc)
    return shared if shared._builtin else enc


def raise_disallowed_special_token(token: str) -> NoReturn:
    """Raise tiktoken's error for text that matches the disallowed special token ``token``
    (a :class:`~tokenmill.DisallowedSpecialTokenError`, a ``ValueError``)."""
    raise DisallowedSpecialTokenError(token)


def _others_disallowed(disallowed: SpecialArg, specials: dict[str, int]) -> bool:
    """Whether ``disallowed_special`` names strings that are not special tokens. tiktoken
    refuses text holding one of them too; tokenmill's core checks only special tokens, so
    then :func:`_check_disallowed` checks them all."""
    if disallowed == "all" or not disallowed:
        return False
    return not frozenset(disallowed).issubset(specials)  # of a str: its characters, as there


def _check_disallowed(text: str, disallowed: Collection[str], specials: dict[str, int]) -> None:
    """tiktoken's check of ``disallowed_special``: the first match of any of its strings is
    refused, naming it (the longest of those that match at one place; "" matches anywhere)."""
    found = [(at, -len(s), s) for s in frozenset(disallowed) if (at := text.find(s)) >= 0]
    if found:
        raise_disallowed_special_token(min(found)[2])


def _need_iterable(value: object, wanted: str) -> None:
    """A :class:`WrongTypeError` (tiktoken: a ``TypeError``) for a str or what cannot be
    iterated where a list is wanted."""
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise WrongTypeError(f"{wanted}, not {type(value).__name__}")


def _check_threads(num_threads: int) -> None:
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise WrongTypeError(f"num_threads must be an int, got {type(num_threads).__name__}")
    if num_threads < 1:
        raise InvalidArgumentError(f"num_threads must be >= 1, got {num_threads}")


def _id_error(e: UnknownTokenIdError) -> UnknownTokenIdError:
    """tiktoken's error for an unknown id: an ``OverflowError`` for ids that are not unsigned
    32-bit integers, a ``KeyError`` for the others."""
    if 0 <= e.token_id < 2**32:
        return e
    return TokenIdOverflowError(e.token_id)


def _last_char_size(data: bytes) -> int:
    """The length of the UTF-8 character that ``data`` ends with, or 0 if it ends with bytes
    that are not one."""
    for size in range(1, min(4, len(data)) + 1):
        try:
            if len(data[-size:].decode("utf-8")) == 1:
                return size
        except UnicodeDecodeError:
            continue
    return 0


__all__ = ["ENCODINGS", "Encoding", "openai_encoding", "raise_disallowed_special_token"]
