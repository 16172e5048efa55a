"""The :class:`Tokenizer`: encode, decode, count, truncate, batch and stream.

It has tiktoken's methods with tiktoken's semantics (same ids, same special-token policy,
same handling of lone surrogates) plus what tiktoken lacks: numpy output, counting without
building ids, truncation at a token boundary, and a streaming decoder.

>>> import tokenmill
>>> enc = tokenmill.load("gpt2")
>>> enc.encode("hello world")
[31373, 995]
>>> enc.decode([31373, 995])
'hello world'
>>> enc.count("hello world")
2
"""

from __future__ import annotations

import codecs
import gc
import operator
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from tokenmill import _core
from tokenmill.errors import (
    InvalidArgumentError,
    InvalidPatternError,
    InvalidSpecialTokensError,
    InvalidVocabError,
    NotATokenError,
    TokenmillError,
    UnknownTokenIdError,
    WrongTypeError,
)
from tokenmill.formats.loading import NORMALIZERS
from tokenmill.template import Template

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SpecialArg = Literal["all"] | Collection[str]
# A split pattern (a name or a regex), or several applied one after another, each to every
# chunk of the one before as a text of its own (HF's Sequence of Split pre-tokenizers).
Pattern = str | Sequence[str]
# How pickle recreates a tokenizer: a module-level function and its arguments.
PickleAs = tuple[Callable[..., "Tokenizer"], tuple[Any, ...]]


def default_threads() -> int:
    """Threads a batch uses when the caller does not say: the CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _need_str(text: object, what: str = "text") -> None:
    if not isinstance(text, str):
        hint = ""
        if isinstance(text, bytes | bytearray):
            hint = " (decode bytes first, e.g. data.decode('utf-8'))"
        raise WrongTypeError(f"{what} must be str, not {type(text).__name__}{hint}")


def _fix_surrogates(text: str) -> str:
    """What tiktoken does with text that is not valid Unicode: surrogate pairs written as two
    code points are joined, lone surrogates become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@dataclass(frozen=True)
class Merge:
    """One learned merge: token ``256 + rank`` = ``left`` + ``right``, seen ``count`` times."""

    left: int
    right: int
    count: int


class Tokenizer:
    """A byte-level BPE tokenizer: a vocabulary, a split pattern and special tokens.

    ``mergeable_ranks`` maps token bytes to rank (= id), or lists the tokens by rank; every
    byte UTF-8 text can hold must be a token (0xc0, 0xc1 and 0xf5..0xff may be missing).
    Ranks may leave gaps, as tiktoken's may (OpenAI's p50k_base puts ``<|endoftext|>`` between
    its ranks): ids no ordinary token has, where special tokens may go; an empty token
    (``b""``) is a gap. ``pattern`` is a pattern name (``gpt2``, ``cl100k``, ``o200k``) or any
    regex, or a list of them applied one after another, each to every chunk of the one before
    (HF's ``Sequence`` of ``Split`` pre-tokenizers). ``special_tokens`` maps strings to ids
    past the ranks or in their gaps. ``added_tokens`` maps strings to ids the same way: tokens
    that every encoding method finds in the text as it finds allowed special tokens, with no
    ``allowed_special`` needed (HF's added tokens with ``special`` false). ``normalizer``,
    ``template``, ``normalized_specials``, ``lstrip_specials`` and ``rstrip_specials`` carry
    what HF files say (see the properties of the same names); the last three may name added
    tokens too.

    >>> tok = Tokenizer({bytes([b]): b for b in range(256)} | {b"ab": 256}, "gpt2")
    >>> tok.encode("abc")
    [256, 99]
    """

    #: What the encoding methods do with a name in ``allowed_special`` or
    #: ``disallowed_special`` that is not a special token of this tokenizer: ``"raise"``
    #: (an :class:`~tokenmill.InvalidSpecialTokensError` naming it) or ``"ignore"`` (what
    #: tiktoken does; :class:`tokenmill.compat.tiktoken.Encoding` sets it).
    unknown_special_names: ClassVar[Literal["raise", "ignore"]] = "raise"

    def __init__(
        self,
        mergeable_ranks: Mapping[bytes, int] | Sequence[bytes],
        pattern: Pattern,
        special_tokens: Mapping[str, int] | None = None,
        *,
        name: str = "custom",
        merges: Sequence[Merge] | None = None,
        explicit_n_vocab: int | None = None,
        normalizer: str | None = None,
        template: Template | None = None,
        normalized_specials: Collection[str] = (),
        lstrip_specials: Collection[str] = (),
        rstrip_specials: Collection[str] = (),
        added_tokens: Mapping[str, int] | None = None,
    ) -> None:
        need_pattern(pattern)
        need_normalizer(normalizer)
        if special_tokens is not None and not isinstance(special_tokens, Mapping):
            raise WrongTypeError(
                "special_tokens must be a dict of special-token strings to ids, not "
                f"{type(special_tokens).__name__}"
            )
        need_name(name)
        tokens = _tokens_by_rank(mergeable_ranks)
        specials = dict(special_tokens or {})
        need_special_names(specials)
        if added_tokens is not None and not isinstance(added_tokens, Mapping):
            raise WrongTypeError(
                f"added_tokens must be a dict of strings to ids, not {type(added_tokens).__name__}"
            )
        added = dict(added_tokens or {})
        need_special_names(added)
        if both := sorted(specials.keys() & added.keys()):
            raise InvalidSpecialTokensError(
                f"{both[0]!r:.40} is both a special token and an added token"
            )
        specials |= added
        late, left, right = (
            _specials_named(names, specials, argument)
            for names, argument in (
                (normalized_specials, "normalized_specials"),
                (lstrip_specials, "lstrip_specials"),
                (rstrip_specials, "rstrip_specials"),
            )
        )
        core = _core.CoreTokenizer(
            tokens, pattern, list(specials.items()), normalizer, late, left, right
        )
        self._setup(core, name, merges, template, added)
        if explicit_n_vocab is not None and explicit_n_vocab != self._core.n_vocab:
            raise InvalidVocabError(
                f"{name}: expected {explicit_n_vocab} tokens, "
                f"the vocabulary has {self._core.n_vocab}"
            )

    @classmethod
    def from_core(
        cls,
        core: _core.CoreTokenizer,
        *,
        name: str = "custom",
        merges: Sequence[Merge] | None = None,
        pickle_as: PickleAs | None = None,
        template: Template | None = None,
        added_tokens: Collection[str] = (),
    ) -> Tokenizer:
        """A tokenizer around a native one that tokenmill's loaders built: they parse a rank
        file straight into the core, with no Python ``bytes`` per token (see
        docs/performance.md).

        ``pickle_as`` is how pickle recreates it: a loader that shares its tokenizers by
        name passes its own function and the name, so the pickle holds the name, not the
        vocabulary (``pickle.dumps(tokenmill.load("o200k_base"))`` is under 100 bytes).
        ``added_tokens`` names the core's special tokens that are added tokens (see
        :attr:`added_tokens`).

        >>> from tokenmill import _core
        >>> core = _core.CoreTokenizer([bytes([b]) for b in range(256)], "gpt2", [])
        >>> Tokenizer.from_core(core, name="bytes").encode("hi")
        [104, 105]
        """
        need_name(name)
        self = cls.__new__(cls)
        self._setup(core, name, merges, template, added_tokens)
        self._pickle_as = pickle_as
        return self

    def _setup(
        self,
        core: _core.CoreTokenizer,
        name: str,
        merges: Sequence[Merge] | None,
        template: Template | None,
        added: Collection[str] = (),
    ) -> None:
        self._core = core
        self.name = name
        self._specials = dict(core.special_tokens())
        if unknown := sorted(set(added) - self._specials.keys()):
            raise InvalidSpecialTokensError(f"added token {unknown[0]!r:.40} is not in the core")
        self._added = {s: self._specials.pop(s) for s in added}
        self._added_ids = sorted(self._added.values())
        self._special_set = frozenset(self._specials)
        self._special_ids = frozenset(self._specials.values())
        self._normalized_specials = frozenset(core.late_specials())
        left, right = core.strip_specials()
        self._strips = (frozenset(left), frozenset(right))
        self._usual_args = _usual_args(self._specials, self._added_ids)
        self._merges = tuple(merges) if merges is not None else None
        self._pickle_as: PickleAs | None = None
        if template is not None and not isinstance(template, Template):
            raise WrongTypeError(
                f"template must be a tokenmill.Template, not {type(template).__name__}"
            )
        self._template = template or Template()
        known = self._special_ids | frozenset(self._added_ids)
        self._template.check(known.__contains__, name)

    # ----------------------------------------------------------------------------- properties

    def __repr__(self) -> str:
        pattern = self._core.pattern_name or "custom"
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab} pattern={pattern}>"

    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (ordinary or special)."""
        return self._core.n_vocab

    @property
    def max_token_value(self) -> int:
        """The largest token id."""
        return self._core.n_vocab - 1

    @property
    def pattern(self) -> str | tuple[str, ...]:
        """The split regex (tiktoken's string for the named patterns); for a tokenizer that
        splits by several one after another (HF's ``Sequence`` of ``Split`` pre-tokenizers, as
        DeepSeek's files have), the tuple of them."""
        patterns = self._core.patterns
        return patterns[0] if len(patterns) == 1 else tuple(patterns)

    @property
    def patterns(self) -> tuple[str, ...]:
        """The split regexes applied one after another, each to every chunk of the one before:
        ``(pattern,)`` for a tokenizer with one."""
        return tuple(self._core.patterns)

    @property
    def pattern_name(self) -> str | None:
        """``gpt2``, ``cl100k`` or ``o200k`` when the pattern is one of those, else None."""
        return self._core.pattern_name

    @property
    def normalizer(self) -> str | None:
        """The Unicode normalization form (``NFC``, ``NFD``, ``NFKC``, ``NFKD``) applied to the
        text between special tokens before it is split, as the HF ``tokenizer.json`` it was
        loaded from says (Qwen's: NFC); None for none. ``decode`` gives the normalized text."""
        return self._core.normalizer

    @property
    def scanner(self) -> str | None:
        """Which hand-written scanner splits this tokenizer's text: ``gpt2``, ``cl100k``,
        ``o200k``, or a variant of one of those families that open models use (Llama 3's
        pattern is ``"cl100k family, no \\s++$"``), or ``DeepSeek V3`` (its three patterns on one
        scanner); None when the patterns run on the general regex engine, which is many times
        slower."""
        return self._core.scanner

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special-token strings and their ids."""
        return dict(self._specials)

    @property
    def added_tokens(self) -> dict[str, int]:
        """Added-token strings and their ids: tokens found in the text before it is split, by
        every encoding method (``encode_ordinary`` too), without ``allowed_special``; they are
        no special tokens (HF's added tokens with ``special`` false: Qwen's ``<think>``,
        GPT-NeoX's runs of spaces). Empty for most tokenizers.

        >>> import tokenmill
        >>> tok = Tokenizer([bytes([b]) for b in range(256)], "gpt2", added_tokens={"<t>": 256})
        >>> tok.encode("a<t>"), tok.encode_ordinary("a<t>"), tok.special_tokens
        ([97, 256], [97, 256], {})
        """
        return dict(self._added)

    @property
    def template(self) -> Template:
        """The special tokens ``add_special_tokens=True`` puts around each text (from an HF
        file's post-processor: Llama 3's adds ``<|begin_of_text|>`` before); empty for most.

        >>> import tokenmill
        >>> tokenmill.load("gpt2").template
        Template(prefix=(), suffix=())
        """
        return self._template

    @property
    def normalized_specials(self) -> frozenset[str]:
        """The special tokens looked for in the normalized text, spelled as normalized, once
        the others are cut out (HF's added tokens with ``normalized`` true, as GPT-NeoX's
        files have); empty for most tokenizers.

        >>> import tokenmill
        >>> tokenmill.load("gpt2").normalized_specials
        frozenset()
        """
        return self._normalized_specials

    @property
    def lstrip_specials(self) -> frozenset[str]:
        """The special tokens that, when found, take the whitespace before them with them (HF's
        added tokens with ``lstrip`` true, as Phi's files have): it is not encoded."""
        return self._strips[0]

    @property
    def rstrip_specials(self) -> frozenset[str]:
        """The special tokens that take the whitespace after them with them (HF's ``rstrip``)."""
        return self._strips[1]

    @property
    def special_tokens_set(self) -> frozenset[str]:
        """The special-token strings."""
        return self._special_set

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>``."""
        try:
            return self._specials["<|endoftext|>"]
        except KeyError:
            raise InvalidSpecialTokensError(
                f"{self.name} has no <|endoftext|> special token"
            ) from None

    @property
    def merges(self) -> tuple[Merge, ...] | None:
        """For a tokenizer trained by tokenmill: each merge with its parents and count."""
        return self._merges

    @property
    def mergeable_ranks(self) -> dict[bytes, int]:
        """Token bytes -> rank for the ordinary tokens (built on demand)."""
        return {t: i for i, t in enumerate(self._core.tokens()) if t}

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted (as tiktoken returns them)."""
        return sorted(filter(None, self._core.tokens()))

    def token_bytes_list(self) -> list[bytes]:
        """The bytes of every ordinary token, indexed by id, ``b""`` for an id below the last
        ordinary one that no ordinary token has (a new list each call; special tokens are not
        in it).

        >>> import tokenmill
        >>> tokens = tokenmill.load("gpt2").token_bytes_list()
        >>> len(tokens), tokens[995]
        (50256, b' world')
        """
        return self._core.tokens()

    def rank(self, token: bytes) -> int | None:
        """The id of the ordinary token whose bytes are exactly ``token``, else None: what
        ``mergeable_ranks.get(token)`` gives, without building the dict.

        >>> import tokenmill
        >>> enc = tokenmill.load("gpt2")
        >>> enc.rank(b" world"), enc.rank(b"<|endoftext|>"), enc.rank(b" no such token")
        (995, None, None)
        """
        return self._core.rank(token)

    def merge_parents(self) -> list[tuple[int, int] | None]:
        """For each ordinary token, by id, the pair of tokens that encoding merges into it last
        when it encodes the token's own bytes (its *parents*, the only pair that ever merges
        into it); None for the 256 bytes and for a token that encoding never makes by merging
        (it is the result only when a whole chunk is exactly its bytes). Derived from the
        vocabulary on each call, a fraction of a second for a large one.

        >>> import tokenmill
        >>> enc = tokenmill.load("gpt2")
        >>> parents = enc.merge_parents()
        >>> parents[0], parents[995], enc.decode_tokens_bytes(parents[995])
        (None, (476, 335), [b' wor', b'ld'])
        """
        with _collector_paused():
            return self._core.merge_parents()

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token."""
        try:
            value = operator.index(token)  # ints, numpy integers
        except TypeError:
            raise WrongTypeError(
                f"token must be an int (a token id), not {type(token).__name__} {token!r:.40}"
            ) from None
        return value in self._special_ids

    # ------------------------------------------------------------------------------- encoding

    def _special_args(self, allowed: SpecialArg, disallowed: SpecialArg) -> tuple[Any, Any]:
        """tiktoken's policy: "all" allowed = every special; "all" disallowed = every special
        not allowed. Returns what the core takes: "all" or a list of ids; the added tokens are
        always allowed."""
        # The usual calls are answered first, without building sets: building them costs as
        # much as encoding a short line (docs/performance.md).
        if not allowed:
            if disallowed == "all":
                return self._usual_args["all"]
            if not disallowed:
                return self._usual_args[()]
        elif allowed == "all" and (disallowed == "all" or not disallowed):
            return ("all" if self._specials or self._added else []), []
        if allowed == "all":
            allowed_set = self._special_set
        else:
            allowed_set = self._known_specials(allowed, "allowed_special")
        if disallowed == "all":
            disallowed_set = self._special_set - allowed_set
        else:
            disallowed_set = self._known_specials(disallowed, "disallowed_special")
        ids = self._specials
        a: Any = (
            "all"
            if allowed_set == self._special_set and ids
            else [ids[s] for s in allowed_set] + self._added_ids
        )
        d: Any = [ids[s] for s in disallowed_set]
        if d and len(d) == len(ids) and not self._added:
            d = "all"
        return a, d

    def _known_specials(self, names: Collection[str], argument: str) -> frozenset[str]:
        """``names`` as a set, without those that are no special token here when
        :attr:`unknown_special_names` says to ignore them, else refused naming them."""
        wanted = f"{argument} must be 'all' or a set of special-token strings"
        if isinstance(names, str) and self.unknown_special_names == "raise":
            # (tiktoken takes a str's characters for the names: its drop-in does too.)
            raise WrongTypeError(f"{wanted}, not one str (wrap it in a set: {{{names!r}}})")
        try:
            found = frozenset(names)
        except TypeError:
            raise WrongTypeError(f"{wanted}, not {type(names).__name__}") from None
        unknown = found - self._special_set
        if not unknown:
            return found
        if self.unknown_special_names == "ignore":
            return found & self._special_set
        try:
            names_shown = sorted(unknown)
        except TypeError:  # not all str
            names_shown = sorted(unknown, key=repr)
        raise InvalidSpecialTokensError(
            f"{argument} names {names_shown}, which are not special tokens of "
            f"{self.name} (it has {sorted(self._special_set)})"
        )

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
        num_threads: int = 1,
        add_special_tokens: bool = False,
        dropout: float = 0.0,
        seed: int | None = None,
    ) -> list[int]:
        """Encode text. Special-token strings raise unless allowed (tiktoken's policy).

        ``add_special_tokens=True`` puts the :attr:`template`'s special tokens around the ids
        (BOS/EOS), as HF's ``encode`` does by default; tokenmill adds nothing otherwise.

        With ``num_threads`` > 1 a long text (128 KB or more) is cut where no chunk can cross
        (gpt2, cl100k and o200k patterns) and its pieces are encoded on that many threads (at
        most the CPUs this process may use), GIL released; the ids are the same.

        ``dropout`` > 0 is BPE-dropout, for training-time augmentation: each merge is skipped
        with that probability when its turn comes, so words come out in smaller pieces, whole
        words too (:func:`tokenmill.reference.encode_dropout` is the definition). The same
        ``seed`` (an integer in 0..2**64-1) gives the same ids; None draws a fresh one.
        ``dropout=0`` is plain ``encode``. It runs on one thread.

        >>> import tokenmill
        >>> enc = tokenmill.load("gpt2")
        >>> enc.encode("<|endoftext|>", allowed_special="all")
        [50256]
        >>> enc.encode("<|endoftext|>", disallowed_special=())
        [27, 91, 437, 1659, 5239, 91, 29]
        """
        if allowed_special or disallowed_special not in _USUAL_DISALLOWED:
            a, d = self._special_args(allowed_special, disallowed_special)
        else:
            a, d = self._usual_args[disallowed_special]
        if dropout:
            ids = self._encode_dropout(text, a, d, dropout, seed)
        else:
            n = (
                num_threads
                if type(num_threads) is int and num_threads > 0
                else _threads(num_threads)
            )
            try:
                ids = self._core.encode(text, a, d, n)
            except TypeError:
                _need_str(text)
                raise
            except UnicodeEncodeError:
                ids = self._core.encode(_fix_surrogates(text), a, d, n)
        return self._template.wrap(ids) if add_special_tokens and self._template else ids

    def _encode_dropout(
        self, text: str, a: Any, d: Any, dropout: float, seed: int | None
    ) -> list[int]:
        if isinstance(dropout, bool) or not isinstance(dropout, int | float):
            raise WrongTypeError(f"dropout must be a float, not {type(dropout).__name__}")
        if not 0 <= dropout <= 1:
            raise InvalidArgumentError(f"dropout must be between 0 and 1, not {dropout}")
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        elif isinstance(seed, bool) or not isinstance(seed, int):
            raise WrongTypeError(f"seed must be an int or None, not {type(seed).__name__}")
        elif not 0 <= seed < 2**64:
            raise InvalidArgumentError(f"seed must be in 0..2**64-1, not {seed}")
        _need_str(text)
        return self._core.encode_dropout(clean_text(text), a, d, float(dropout), seed)

    def encode_ordinary(self, text: str, *, num_threads: int = 1) -> list[int]:
        """Encode text with special-token strings treated as plain text (``num_threads``: as
        in :meth:`encode`); :attr:`added_tokens` are still found.

        >>> import tokenmill
        >>> tokenmill.load("gpt2").encode_ordinary("hello world")
        [31373, 995]
        """
        n = num_threads if type(num_threads) is int and num_threads > 0 else _threads(num_threads)
        if self._added:
            return self.encode(text, disallowed_special=(), num_threads=n)
        try:
            return self._core.encode_ordinary(text, n)
        except TypeError:
            _need_str(text)
            raise
        except UnicodeEncodeError:
            return self._core.encode_ordinary(_fix_surrogates(text), n)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
        num_threads: int = 1,
        add_special_tokens: bool = False,
    ) -> npt.NDArray[np.uint32]:
        """Like :meth:`encode`, returning a ``uint32`` numpy array (no Python ints built).

        >>> import tokenmill
        >>> tokenmill.load("gpt2").encode_to_numpy("hello world")
        array([31373,   995], dtype=uint32)
        """
        if allowed_special or disallowed_special not in _USUAL_DISALLOWED:
            a, d = self._special_args(allowed_special, disallowed_special)
        else:
            a, d = self._usual_args[disallowed_special]
        n = num_threads if type(num_threads) is int and num_threads > 0 else _threads(num_threads)
        try:
            ids = self._core.encode_to_numpy(text, a, d, n)
        except TypeError:
            _need_str(text)
            raise
        except UnicodeEncodeError:
            ids = self._core.encode_to_numpy(_fix_surrogates(text), a, d, n)
        return self._template.wrap_array(ids) if add_special_tokens and self._template else ids

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a string or bytes that is exactly one token (ordinary or special).

        >>> import tokenmill
        >>> tokenmill.load("gpt2").encode_single_token(" world")
        995
        """
        if isinstance(text_or_bytes, str):
            if text_or_bytes in self._specials:
                return self._specials[text_or_bytes]
            if text_or_bytes in self._added:
                return self._added[text_or_bytes]
            data = text_or_bytes.encode("utf-8", "surrogatepass")
        else:
            data = bytes(text_or_bytes)
        rank = self._core.rank(data)
        if rank is None:
            raise NotATokenError(f"{text_or_bytes!r} is not a single token of {self.name}")
        return rank

    def count(
        self,
        text: str,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
        num_threads: int = 1,
        add_special_tokens: bool = False,
    ) -> int:
        """How many tokens :meth:`encode` would return, without building the list
        (``num_threads``, ``add_special_tokens``: as in :meth:`encode`).

        >>> import tokenmill
        >>> tokenmill.load("cl100k_base").count("tokenization is fun")
        4
        """
        if allowed_special or disallowed_special not in _USUAL_DISALLOWED:
            a, d = self._special_args(allowed_special, disallowed_special)
        else:
            a, d = self._usual_args[disallowed_special]
        n = num_threads if type(num_threads) is int and num_threads > 0 else _threads(num_threads)
        try:
            count: int = self._core.count(text, a, d, n)
        except TypeError:
            _need_str(text)
            raise
        except UnicodeEncodeError:
            count = self._core.count(_fix_surrogates(text), a, d, n)
        return count + self._template.added if add_special_tokens else count

    def _batch(self, method: str, texts: Sequence[str], *args: Any) -> Any:
        if isinstance(texts, str):
            raise WrongTypeError("expected a list of texts, got one str (wrap it in a list)")
        if isinstance(texts, bytes | bytearray):
            raise WrongTypeError(
                f"expected a list of texts, got one {type(texts).__name__} (decode it, e.g. "
                "data.decode('utf-8'), and wrap it in a list)"
            )
        try:
            texts = list(texts)
        except TypeError:
            raise WrongTypeError(f"expected a list of texts, not {type(texts).__name__}") from None
        try:
            return getattr(self._core, method)(texts, *args)
        except TypeError:
            for i, t in enumerate(texts):
                _need_str(t, f"texts[{i}]")
            raise
        except UnicodeEncodeError:
            return getattr(self._core, method)([clean_text(t) for t in texts], *args)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
        add_special_tokens: bool = False,
    ) -> list[list[int]]:
        """Encode many texts on ``num_threads`` threads (default and most: the CPUs this
        process may use; at most one per 8 KB of text, so a small batch runs on the calling
        thread), GIL released (``add_special_tokens``: as in :meth:`encode`).

        >>> import tokenmill
        >>> tokenmill.load("gpt2").encode_batch(["hello", "world"], num_threads=2)
        [[31373], [6894]]
        """
        a, d = self._special_args(allowed_special, disallowed_special)
        batch: list[list[int]] = self._batch("encode_batch", texts, a, d, _threads(num_threads))
        if add_special_tokens and self._template:
            return [self._template.wrap(ids) for ids in batch]
        return batch

    def encode_ordinary_batch(
        self, texts: Sequence[str], *, num_threads: int | None = None
    ) -> list[list[int]]:
        """:meth:`encode_ordinary` for many texts, in parallel."""
        return self._batch("encode_batch", texts, self._added_ids, [], _threads(num_threads))

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
        add_special_tokens: bool = False,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
        """Encode many texts into one flat ``uint32`` array and ``len(texts) + 1`` offsets:
        the ids of text ``i`` are ``ids[offsets[i]:offsets[i + 1]]`` (``add_special_tokens``:
        as in :meth:`encode`).

        >>> import tokenmill
        >>> ids, offsets = tokenmill.load("gpt2").encode_batch_to_numpy(["hello", "big world"])
        >>> ids.tolist(), offsets.tolist()
        ([31373, 14261, 995], [0, 1, 3])
        """
        a, d = self._special_args(allowed_special, disallowed_special)
        ids, offsets = self._batch("encode_batch_flat", texts, a, d, _threads(num_threads))
        if add_special_tokens and self._template:
            return self._template.wrap_flat(ids, offsets)
        return ids, offsets

    def count_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
        add_special_tokens: bool = False,
    ) -> list[int]:
        """:meth:`count` for many texts, in parallel."""
        a, d = self._special_args(allowed_special, disallowed_special)
        counts: list[int] = self._batch("count_batch", texts, a, d, _threads(num_threads))
        if add_special_tokens and self._template:
            return [c + self._template.added for c in counts]
        return counts

    def truncate(
        self,
        text: str,
        max_tokens: int,
        *,
        allowed_special: SpecialArg = frozenset(),
        disallowed_special: SpecialArg = "all",
    ) -> str:
        """The longest prefix of ``text`` that ends at a token boundary of its encoding, is
        valid text, and encodes to at most ``max_tokens`` tokens.

        >>> import tokenmill
        >>> tokenmill.load("gpt2").truncate("The quick brown fox", 2)
        'The quick'
        """
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
            raise WrongTypeError(f"max_tokens must be an int, not {type(max_tokens).__name__}")
        if max_tokens < 0:
            raise InvalidArgumentError(f"max_tokens must be >= 0, got {max_tokens}")
        kwargs: dict[str, Any] = {
            "allowed_special": allowed_special,
            "disallowed_special": disallowed_special,
        }
        ids = self.encode(text, **kwargs)
        if len(ids) <= max_tokens:
            return text
        keep = max_tokens
        while True:
            # A character split across tokens is dropped whole: the prefix stays valid text.
            prefix = self.decode_bytes(ids[:keep]).decode("utf-8", "ignore")
            if not text.startswith(prefix):
                prefix = _common_prefix(text, prefix)
            if keep == 0 or self.count(prefix, **kwargs) <= max_tokens:
                return prefix
            keep -= 1

    # ------------------------------------------------------------------------------- decoding

    def decode_bytes(self, tokens: Sequence[int] | npt.NDArray[Any]) -> bytes:
        """The bytes of the tokens, concatenated.

        >>> import tokenmill
        >>> tokenmill.load("gpt2").decode_bytes([31373, 995])
        b'hello world'
        """
        ids = _as_ids(tokens)
        try:
            return self._core.decode_bytes(ids)
        except (TypeError, OverflowError):
            # pyo3's, for an element that is no int or no 64-bit one: found and named here,
            # on the failure path only.
            raise _ids_error(ids, self._core.n_vocab) from None

    def decode(self, tokens: Sequence[int] | npt.NDArray[Any], errors: str = "replace") -> str:
        """Decode to text; bytes that are not valid UTF-8 are handled by ``errors``
        (``"replace"`` by default, as tiktoken does).

        >>> import tokenmill
        >>> enc = tokenmill.load("gpt2")
        >>> enc.decode(enc.encode("naïve café"))
        'naïve café'
        """
        data = self.decode_bytes(tokens)
        try:
            return data.decode("utf-8", errors=errors)
        except TypeError:
            raise WrongTypeError(f"errors must be str, not {type(errors).__name__}") from None

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token.

        >>> import tokenmill
        >>> tokenmill.load("gpt2").decode_single_token_bytes(995)
        b' world'
        """
        try:
            return self._core.token_bytes(token)
        except (TypeError, OverflowError):
            raise _id_error(token, self._core.n_vocab) from None

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]:
        """The bytes of each token, as a list."""
        ids = tokens if isinstance(tokens, list) else _as_ids(tokens)
        if not isinstance(ids, list):  # a uint32 array
            ids = ids.tolist()
        token_bytes = self._core.token_bytes
        try:
            return [token_bytes(t) for t in ids]
        except (TypeError, OverflowError):
            raise _ids_error(ids, self._core.n_vocab) from None

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and, for each token, the index of the character it starts in (a token
        that starts inside a multi-byte character is given that character's index).

        >>> import tokenmill
        >>> tokenmill.load("gpt2").decode_with_offsets([31373, 995])
        ('hello world', [0, 5])
        """
        token_bytes = self.decode_tokens_bytes(tokens)
        offsets = []
        text_len = 0
        for b in token_bytes:
            # tiktoken's rule: a token starting with a continuation byte belongs to the
            # character before it.
            offsets.append(max(0, text_len - (0x80 <= b[0] < 0xC0)))
            text_len += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(token_bytes).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace") -> list[str]:
        """:meth:`decode` for many token lists."""
        docs = _id_lists(batch)
        try:
            return [self.decode(tokens, errors=errors) for tokens in docs]
        except WrongTypeError as e:
            raise self._batch_error(docs, e) from None

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]]) -> list[bytes]:
        """:meth:`decode_bytes` for many token lists."""
        docs = _id_lists(batch)
        try:
            return [self.decode_bytes(tokens) for tokens in docs]
        except WrongTypeError as e:
            raise self._batch_error(docs, e) from None

    def _batch_error(self, docs: list[Any], error: WrongTypeError) -> WrongTypeError:
        """The error of a decode batch one of whose lists was refused by type (``error``),
        naming the list: a batch of ids instead of lists is told to wrap them in a list."""
        for i, tokens in enumerate(docs):
            if hasattr(tokens, "__index__") and not hasattr(tokens, "__len__"):  # an id
                return WrongTypeError(
                    "expected a list of token-id lists, got one list of ids (wrap it in a list)"
                )
            try:
                self.decode_bytes(tokens)
            except WrongTypeError as e:
                return WrongTypeError(f"batch[{i}]: {e}")
            except TokenmillError:
                pass
        return error

    def stream_decoder(self, errors: str = "replace") -> StreamDecoder:
        """A decoder fed one token at a time that emits text only once characters are whole.

        >>> import tokenmill
        >>> enc = tokenmill.load("cl100k_base")
        >>> dec = enc.stream_decoder()
        >>> [dec.push(t) for t in enc.encode("🙂")]
        ['', '🙂']
        """
        return StreamDecoder(self, errors)

    def decode_stream(self, tokens: Iterable[int], errors: str = "replace") -> Iterator[str]:
        """Decode an iterable of tokens lazily, yielding text as characters complete."""
        dec = self.stream_decoder(errors)
        for t in tokens:
            piece = dec.push(t)
            if piece:
                yield piece
        tail = dec.flush()
        if tail:
            yield tail

    # ---------------------------------------------------------------------------- inspection

    def chunks(self, text: str) -> list[str]:
        """The pre-tokenization chunks of ``text`` (merges never cross them).

        >>> import tokenmill
        >>> tokenmill.load("gpt2").chunks("I've got 12 cats")
        ['I', "'ve", ' got', ' 12', ' cats']
        """
        try:
            return self._core.chunks(text)
        except TypeError:
            _need_str(text)
            raise
        except UnicodeEncodeError:
            return self._core.chunks(_fix_surrogates(text))

    def encode_chunk(self, chunk: bytes) -> list[int]:
        """The ids of one chunk, merged as :meth:`encode` merges each chunk of a text: no
        splitting, no special tokens. ``chunk`` may be any bytes, UTF-8 or not.

        >>> import tokenmill
        >>> enc = tokenmill.load("gpt2")
        >>> enc.encode_chunk(b"helloqqqq"), enc.encode_chunk(b"\\xff\\xfe"), enc.encode_chunk(b"")
        ([31373, 38227, 38227], [187, 186], [])
        """
        if not isinstance(chunk, bytes):
            raise WrongTypeError(f"chunk must be bytes, not {type(chunk).__name__}")
        return self._core.encode_chunk(chunk)

    # ------------------------------------------------------------------ changing the vocabulary

    def with_tokens(self, tokens: Iterable[str]) -> Tokenizer:
        """A new tokenizer with ``tokens`` as added tokens (:attr:`added_tokens`: found in any
        text before it is split, as HF's ``add_tokens`` makes them), at the next ids in order;
        see :mod:`tokenmill.editing`.

        >>> import tokenmill
        >>> tok = tokenmill.load("gpt2").with_tokens(["<think>", "</think>"])
        >>> tok.encode("<think>hi</think>"), tok.n_vocab
        ([50257, 5303, 50258], 50259)
        """
        from tokenmill import editing

        return self._with_named(self._specials, editing.added_tokens_with(self, tokens))

    def with_special_tokens(self, special_tokens: Mapping[str, int] | Sequence[str]) -> Tokenizer:
        """A new tokenizer with more special tokens: a list takes the next ids in order, a
        dict gives them; see :mod:`tokenmill.editing`.

        >>> import tokenmill
        >>> chat = tokenmill.load("cl100k_base").with_special_tokens({"<|im_start|>": 100264})
        >>> chat.encode("<|im_start|>user", allowed_special="all")
        [100264, 882]
        """
        from tokenmill import editing

        return self._with_named(editing.special_tokens_with(self, special_tokens), self._added)

    def _with_named(self, specials: dict[str, int], added: dict[str, int]) -> Tokenizer:
        """This tokenizer with the special tokens ``specials`` and added tokens ``added`` (its
        own among them): the core copies its tables instead of building them again
        (docs/performance.md)."""
        need_special_names(specials)
        need_special_names(added)
        core = self._core.with_specials(
            list((specials | added).items()),
            sorted(self._normalized_specials),
            sorted(self._strips[0]),
            sorted(self._strips[1]),
        )
        return Tokenizer.from_core(
            core, name=self.name, merges=self._merges, template=self._template, added_tokens=added
        )

    def without(self, ids: Iterable[int]) -> tuple[Tokenizer, npt.NDArray[np.int64]]:
        """A new tokenizer without the tokens ``ids`` (and those that encoding then cannot make),
        and the map from old ids to new ones (-1 for the removed), which
        :func:`tokenmill.embedding.remap` applies to an embedding table; see
        :mod:`tokenmill.editing`.

        >>> import tokenmill
        >>> enc = tokenmill.load("gpt2")
        >>> pruned, new_id = enc.without([enc.encode_single_token(" SolidGoldMagikarp")])
        >>> pruned.encode(" SolidGoldMagikarp"), int(new_id[enc.eot_token]), pruned.eot_token
        ([15831, 42202], 50255, 50255)
        """
        from tokenmill import editing

        left = editing.removal(self, ids)
        named = left.special_tokens.keys() | left.added_tokens.keys()
        result = Tokenizer(
            left.tokens,
            self.pattern,
            left.special_tokens,
            name=self.name,
            merges=left.merges,
            normalizer=self.normalizer,
            template=left.template,
            normalized_specials=self._normalized_specials & named,
            lstrip_specials=self._strips[0] & named,
            rstrip_specials=self._strips[1] & named,
            added_tokens=left.added_tokens,
        )
        return result, left.new_id

    # -------------------------------------------------------------------------------- saving

    def save(self, path: str | os.PathLike[str], format: str | None = None) -> list[str]:
        """Write the tokenizer (atomically) in ``format``, else in the format its name says;
        returns the paths written. ``tokenmill.load(path)`` reads any of them back.

        - ``tokenmill``: ``*.tokenmill`` or ``*.tokenmill.json``, tokenmill's versioned file
          with everything (merge counts too), plus a readable ``*.vocab.txt`` beside it;
        - ``hf``: ``tokenizer.json`` or any other ``*.json``, for HF ``tokenizers``;
        - ``tiktoken``: ``*.tiktoken`` (``*.tiktoken.gz`` gzipped), the ranks alone, for
          tiktoken: the pattern is given when loading it (``pattern=``), and special tokens,
          which it cannot hold, are refused unless it is an OpenAI vocabulary;
        - ``gpt2``: a folder (or a name without a suffix, or ``encoder.json``) with GPT-2's
          ``encoder.json`` + ``vocab.bpe``, for tokenizers with GPT-2's pattern.

        Another name is an :class:`~tokenmill.UnsupportedFormatError` naming these, as is a
        format that cannot hold this tokenizer (see :mod:`tokenmill.formats`).

        >>> import tempfile, pathlib, tokenmill
        >>> tok = tokenmill.train("ab cd ab cd", 259, pattern="gpt2")
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> [pathlib.Path(p).name for p in tok.save(folder / "tiny.tokenmill")]
        ['tiny.tokenmill', 'tiny.vocab.txt']
        >>> tokenmill.load(folder / "tiny.tokenmill").merges == tok.merges
        True
        >>> [pathlib.Path(p).name for p in tok.save(folder / "tiny.json")]  # HF's format
        ['tiny.json']
        >>> tokenmill.load(folder / "tiny.json") == tok
        True
        """
        from tokenmill import formats

        return formats.write(self, path, format)

    def to_transformers(self, **options: Any) -> Any:
        """This tokenizer as HF ``transformers``' ``PreTrainedTokenizerFast``, giving its ids
        (:mod:`tokenmill.compat.transformers` says how special tokens map); ``options``
        (``pad_token``, ``model_max_length``, ...) go to its constructor.

        >>> import tokenmill
        >>> fast = tokenmill.load("gpt2").to_transformers(pad_token="<|endoftext|>")
        >>> fast(["hello world", "hi"], padding=True)["input_ids"]
        [[31373, 995], [5303, 50256]]
        """
        from tokenmill.compat import transformers

        return transformers.to_transformers(self, **options)

    # ------------------------------------------------------------------------------- pickling

    def __reduce__(self) -> tuple[Any, ...]:
        # A tokenizer its loader shares by name pickles as the loader's call (see from_core);
        # any other as its data, which _rebuild turns back into a tokenizer.
        if self._pickle_as is not None:
            return self._pickle_as
        return (
            _rebuild,
            (
                self._core.tokens(),
                self.pattern,
                self._specials,
                self.name,
                self._merges,
                self.normalizer,
                self._template,
                self._normalized_specials,
                *self._strips,
                self._added,
            ),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return (
            self.pattern == other.pattern
            and self._specials == other._specials
            and self._added == other._added
            and self.normalizer == other.normalizer
            and self._template == other._template
            and self._normalized_specials == other._normalized_specials
            and self._strips == other._strips
            and self._core.tokens() == other._core.tokens()
        )

    __hash__ = None  # type: ignore[assignment]


class StreamDecoder:
    """Turns tokens into text incrementally: bytes of a character split across tokens are held
    back until the character is complete.

    >>> import tokenmill
    >>> enc = tokenmill.load("cl100k_base")
    >>> dec = enc.stream_decoder()
    >>> "".join(dec.push(t) for t in enc.encode("日本語 ok")) + dec.flush()
    '日本語 ok'
    """

    def __init__(self, tokenizer: Tokenizer, errors: str = "replace") -> None:
        self._tokenizer = tokenizer
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def push(self, token: int) -> str:
        """Add one token; return the text it completes (possibly empty)."""
        return self._decoder.decode(self._tokenizer.decode_single_token_bytes(token))

    def push_many(self, tokens: Iterable[int]) -> str:
        """Add several tokens; return the text they complete."""
        return self._decoder.decode(self._tokenizer.decode_bytes(_as_ids(tokens)))

    def flush(self) -> str:
        """End of stream: return what is held back (decoded with ``errors``)."""
        return self._decoder.decode(b"", final=True)

    @property
    def pending(self) -> bytes:
        """Bytes held back because they do not complete a character yet."""
        return self._decoder.getstate()[0]


def _rebuild(
    tokens: list[bytes],
    pattern: Pattern,
    special_tokens: dict[str, int],
    name: str,
    merges: Sequence[Merge] | None,
    normalizer: str | None = None,
    template: Template | None = None,
    normalized_specials: Collection[str] = (),
    lstrip_specials: Collection[str] = (),
    rstrip_specials: Collection[str] = (),
    added_tokens: Mapping[str, int] | None = None,
) -> Tokenizer:
    return Tokenizer(
        tokens,
        pattern,
        special_tokens,
        name=name,
        merges=merges,
        normalizer=normalizer,
        template=template,
        normalized_specials=normalized_specials,
        lstrip_specials=lstrip_specials,
        rstrip_specials=rstrip_specials,
        added_tokens=added_tokens,
    )


# The special-token arguments of most calls: none allowed, and every special disallowed (the
# default) or none (`disallowed_special=()`, tiktoken's advice for speed). `encode`,
# `encode_to_numpy` and `count` take them from `Tokenizer._usual_args` and an int thread count
# as it is, calling neither `_special_args` nor `_threads`: on a short text the two calls
# cost over a quarter of the call (docs/performance.md).
_USUAL_DISALLOWED = ("all", ())


def _usual_args(specials: Mapping[str, int], added: list[int]) -> dict[Any, tuple[Any, Any]]:
    # The core's "all" disallowed would take in the added tokens, which are always allowed.
    every: Any = list(specials.values()) if added else "all" if specials else []
    return {"all": (added, every), (): (added, [])}


def _threads(num_threads: int | None) -> int:
    if num_threads is None:
        return default_threads()
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise WrongTypeError(f"num_threads must be an int, got {type(num_threads).__name__}")
    if num_threads < 1:
        raise InvalidArgumentError(f"num_threads must be >= 1, got {num_threads}")
    return num_threads


def clean_text(text: str) -> str:
    """``text`` as tiktoken encodes it: itself when it is valid Unicode, else with its
    surrogates fixed (see ``_fix_surrogates``).

    >>> clean_text("ok"), clean_text("\\ud83d\\ude00 \\ud800")
    ('ok', '😀 �')
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _fix_surrogates(text)


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


# What the decoding methods take as ids, as their errors say it.
IDS_WANTED = "a list of int token ids or a numpy integer array"


def _as_ids(tokens: object) -> Any:
    """Lists pass through; numpy integer arrays become uint32 arrays (or lists if out of
    range); other sequences lists. What is no sequence of ids (a str, None, an int, a float
    array) is a :class:`WrongTypeError`; the elements are the core's to check."""
    if isinstance(tokens, list):
        return tokens
    if hasattr(tokens, "dtype"):
        import numpy as np

        arr = np.asarray(tokens)
        if arr.ndim != 1:
            raise InvalidArgumentError(f"expected a 1-D array of token ids, got shape {arr.shape}")
        if arr.dtype == np.uint32:
            return np.ascontiguousarray(arr)
        if arr.dtype.kind not in "iubO":  # floats were decoded as the ids they round to
            raise WrongTypeError(f"tokens must be token ids of an integer dtype, not {arr.dtype}")
        if arr.dtype.kind in "iu" and arr.size and arr.min() >= 0 and arr.max() < 2**32:
            return arr.astype(np.uint32)  # not a Python int per id
        return arr.tolist()
    if isinstance(tokens, str):
        raise WrongTypeError(f"tokens must be {IDS_WANTED}, not str")
    try:
        return list(tokens)  # type: ignore[call-overload]
    except TypeError:
        raise WrongTypeError(f"tokens must be {IDS_WANTED}, not {type(tokens).__name__}") from None


def _id_lists(batch: object) -> list[Any]:
    """The lists of a decode batch, as a list; what is no batch is a :class:`WrongTypeError`."""
    if isinstance(batch, list):
        return batch
    if isinstance(batch, str):
        raise WrongTypeError("expected a list of token-id lists, got one str")
    try:
        return list(batch)  # type: ignore[call-overload]
    except TypeError:
        raise WrongTypeError(
            f"expected a list of token-id lists, not {type(batch).__name__}"
        ) from None


def _id_error(token: object, n_vocab: int) -> TokenmillError:
    """The error of one token id that the core refused with pyo3's ``TypeError`` or
    ``OverflowError``: no int, or an int past 64 bits (so past every id)."""
    try:
        value = operator.index(token)  # type: ignore[arg-type]
    except TypeError:
        return WrongTypeError(f"a token id must be an int, not {type(token).__name__}")
    return UnknownTokenIdError(value, n_vocab)


def _ids_error(ids: Sequence[Any], n_vocab: int) -> TokenmillError:
    """The error of ids that the core refused with pyo3's ``TypeError`` or ``OverflowError``:
    the first that is no int, or no id. Only called once the core has failed, so checking
    each id here costs the calls that succeed nothing."""
    for i, token in enumerate(ids):
        try:
            value = operator.index(token)
        except TypeError:
            shown = "None" if token is None else f"{type(token).__name__} {token!r:.40}"
            return WrongTypeError(f"tokens[{i}] is {shown}: token ids must be ints")
        if not 0 <= value < n_vocab:
            return UnknownTokenIdError(value, n_vocab)
    return WrongTypeError(f"tokens must be {IDS_WANTED}")


def need_pattern(pattern: object) -> None:
    """A :class:`WrongTypeError` unless ``pattern`` is a str or a non-empty list or tuple of
    them (applied one after another), an :class:`InvalidPatternError` if one holds a lone
    surrogate (not text UTF-8 can hold)."""
    if isinstance(pattern, str):
        patterns = [pattern]
    elif isinstance(pattern, list | tuple) and pattern and all(isinstance(p, str) for p in pattern):
        patterns = list(pattern)
    else:
        raise WrongTypeError(
            f"pattern must be str, not {type(pattern).__name__} {pattern!r:.40} (a name: gpt2, "
            "cl100k, o200k, or a regex; or a list of them, applied one after another)"
        )
    for one in patterns:
        if problem := lone_surrogate(one):
            raise InvalidPatternError(f"invalid split pattern {one!r:.60}: it holds {problem}")


def _specials_named(
    names: Collection[str], specials: Mapping[str, int], argument: str
) -> list[str]:
    """``argument`` (``normalized_specials``...) checked: a collection of special-token
    strings; they are returned in the order of ``specials``."""
    if isinstance(names, str) or not isinstance(names, Collection):
        raise WrongTypeError(
            f"{argument} must be a collection of special-token strings, not {names!r:.40}"
        )
    unknown = sorted(str(n) for n in names if n not in specials)
    if unknown:
        raise InvalidSpecialTokensError(
            f"{argument} names {unknown[0]!r:.40}, which is not a special token"
        )
    return [n for n in specials if n in names]


def need_normalizer(normalizer: object) -> None:
    """An :class:`InvalidArgumentError` unless ``normalizer`` is None or one of
    ``NFC``, ``NFD``, ``NFKC``, ``NFKD``."""
    if normalizer is not None and normalizer not in NORMALIZERS:
        raise InvalidArgumentError(
            f"normalizer must be None or one of {', '.join(NORMALIZERS)}, not {normalizer!r:.40}"
        )


def need_special_names(specials: Mapping[Any, Any]) -> None:
    """A :class:`WrongTypeError` unless every special token (a key of ``specials``) is a
    str, an :class:`InvalidSpecialTokensError` if one holds a lone surrogate."""
    for token in specials:
        if not isinstance(token, str):
            raise WrongTypeError(
                f"special_tokens: a special token must be a str, not "
                f"{type(token).__name__} {token!r:.40}"
            )
        if problem := lone_surrogate(token):
            raise InvalidSpecialTokensError(
                f"invalid special tokens: special token {token!r:.60} holds {problem}"
            )


def need_name(name: object) -> None:
    """A :class:`WrongTypeError` unless a tokenizer's ``name`` is a str, an
    :class:`InvalidArgumentError` if it holds a lone surrogate (no file could hold it)."""
    if not isinstance(name, str):
        raise WrongTypeError(f"name must be str, not {type(name).__name__}")
    if problem := lone_surrogate(name):
        raise InvalidArgumentError(f"the tokenizer name {name!r:.60} holds {problem}")


def lone_surrogate(text: str) -> str | None:
    """What is wrong with ``text`` as UTF-8 text (a lone surrogate, which UTF-8 cannot hold,
    named with its position), or None when nothing is.

    >>> lone_surrogate("ab"), lone_surrogate("a\\ud800")
    (None, 'a lone surrogate U+D800 at position 1, which UTF-8 text cannot hold')
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return (
            f"a lone surrogate U+{ord(text[e.start]):04X} at position {e.start}, which "
            "UTF-8 text cannot hold"
        )
    return None


def valid_name(name: str) -> str:
    """A name derived from a file (its file name, or the name it holds) as valid text: the
    bytes of a file name that is not UTF-8 (which Python decodes to lone surrogates) and any
    other lone surrogate become U+FFFD, so that the tokenizer can be saved.

    >>> valid_name("ab"), valid_name("a\\udcffb"), valid_name("a\\ud800")
    ('ab', 'a\\ufffdb', 'a\\ufffd')
    """
    if lone_surrogate(name) is None:
        return name
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return _fix_surrogates(name)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The garbage collector paused, if it runs, while the core builds a list of many tuples
    (as ``CollectorPaused`` in py/batch.rs does for lists of ids). None of them can be part of
    a cycle, but each counts toward the next collection, and the collections walk everything
    made since the last (when loading a file, the file's whole document), again as it ages."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def _tokens_by_rank(ranks: Mapping[bytes, int] | Sequence[bytes]) -> list[bytes]:
    """Token bytes indexed by rank, ``b""`` for a gap (a rank no token has)."""
    if not isinstance(ranks, Mapping):
        if isinstance(ranks, str | bytes | bytearray) or not isinstance(ranks, Iterable):
            raise WrongTypeError(
                "mergeable_ranks must be a dict of token bytes to ranks or a list of token "
                f"bytes, not {type(ranks).__name__}"
            )
        given = list(ranks)
        # Loaders pass bytes: their types are checked in one pass, in C, not a token at a time.
        if set(map(type, given)) <= {bytes}:
            return given
        return [
            t if type(t) is bytes else _token_bytes(t, f"mergeable_ranks[{i}]")
            for i, t in enumerate(given)
        ]
    # The core takes at most as many gaps as tokens; a larger rank must not size the list.
    most = 2 * sum(1 for t in ranks if t)
    for token, rank in ranks.items():
        if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank < most:
            raise InvalidVocabError(
                f"rank {rank!r} of token {token!r} is outside 0..{most - 1}: ranks are ints "
                "from 0, and may leave fewer gaps than there are tokens"
            )
    tokens = [b""] * (max(ranks.values(), default=-1) + 1)
    if len(set(ranks.values())) < len(ranks):
        by_rank: dict[int, bytes] = {}
        for token, rank in ranks.items():
            if rank in by_rank:
                raise InvalidVocabError(
                    f"rank {rank} is given to both {by_rank[rank]!r} and {token!r}"
                )
            by_rank[rank] = token
    for token, rank in ranks.items():
        tokens[rank] = (
            token if type(token) is bytes else _token_bytes(token, "a key of mergeable_ranks")
        )
    return tokens


def _token_bytes(token: object, where: str) -> bytes:
    """A token given as bytes-like, as bytes; anything else (bytes(5) would be five zero
    bytes) is a :class:`WrongTypeError` naming ``where``."""
    if isinstance(token, bytes | bytearray | memoryview):
        return bytes(token)
    raise WrongTypeError(f"{where} is {type(token).__name__} {token!r:.40}: a token must be bytes")


__all__ = [
    "Merge",
    "Pattern",
    "StreamDecoder",
    "Tokenizer",
    "UnknownTokenIdError",
    "clean_text",
    "default_threads",
]
