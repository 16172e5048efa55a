"""(d) The stream decoder against whole decode, for gpt2 and a small trained tokenizer.

Input: a flags byte, then the ids, one element at a time. A byte below 0xF8 is the token of
that single byte (so a seed is mostly readable UTF-8, and the fuzzer cuts characters anywhere
between tokens); 0xF8-0xFB then a byte: that byte's token (0xF8-0xFF too); 0xFC/0xFD then two
bytes, 0xFE then three: any id, little-endian, modulo the vocabulary (special tokens too);
0xFF then a byte: an id that is no id (past the vocabulary, negative, past 32 and 64 bits, or
no int at all).

Flags: bit 0 the tokenizer (gpt2 / one trained at import on a fixed text of several scripts,
with a special token, whose merged tokens cut characters); bits 1-2 ``errors`` (replace,
replace, ignore, strict); bits 3-4 how the decoder is fed (``push`` per id, ``push_many`` in
chunks cut by the next input bytes, ``decode_stream``, push and push_many alternating); bit 5
the ids as a numpy array where they fit one.

Checks: with valid ids, the pieces the decoder returns plus ``flush()`` are exactly
``decode(ids, errors)``, which is ``decode_bytes(ids).decode("utf-8", errors)``, and
``decode_bytes`` is the tokens' bytes joined; after every push the text so far is a prefix of
the whole text and fewer than 4 bytes are ``pending``, none after ``flush``. With ``strict``,
the stream fails with ``UnicodeDecodeError`` (what ``errors="strict"`` means, as for
``bytes.decode``) exactly when whole decode does. An invalid id makes ``decode`` raise
``UnknownTokenIdError`` (an int) or ``WrongTypeError`` (no int), and the stream raise the same
at that id, having given a prefix of the decode of the ids before it. Anything else raised is
a finding.
"""

from __future__ import annotations

import codecs
import contextlib
import sys
import warnings
from typing import Any

import numpy as np

if __name__ == "__main__":  # run by atheris: instrument tokenmill's code as it is imported
    import atheris

    instrumented: Any = atheris.instrument_imports(include=["tokenmill"])
else:  # imported (tests/test_fuzz_seeds.py replays the seeds): no atheris needed
    instrumented = contextlib.nullcontext()
with instrumented:
    import tokenmill
    from tokenmill.errors import TokenmillError, UnknownTokenIdError, WrongTypeError

# Several scripts, so that training makes tokens that end or start inside a character.
TRAINING_TEXT = (
    "naïve café déjà vu, 日本語のテキスト, Привет мир, привет! "
    "emoji 🙂🙃🙂 and ẞ straße, ünïcödé ÄÖÜ, 中文文本 中文, 한국어 한국어, "
    "hello world, hello again <|endoftext|> \t\n\r\n  spaces   and 12345 67890 "
) * 4

ERRORS = ("replace", "replace", "ignore", "strict")


def _tokenizers() -> list[tokenmill.Tokenizer]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the text may run out of pairs: fine
        tiny = tokenmill.train(TRAINING_TEXT, 600, pattern="gpt2", special_tokens=["<|endoftext|>"])
    return [tokenmill.load("gpt2"), tiny]


TOKENIZERS = _tokenizers()
BYTE_IDS = [[tok.encode_single_token(bytes([b])) for b in range(256)] for tok in TOKENIZERS]


def invalid_ids(n_vocab: int) -> list[Any]:
    """Ids that are no id of a vocabulary of ``n_vocab``: ints out of range, then no ints."""
    return [
        n_vocab,
        n_vocab + 1,
        -1,
        -(2**31),
        2**32 - 1,
        2**32,
        2**32 + 97,  # 97 modulo 2**32: a wrap to u32 would make it 'a'
        2**63 - 1,
        2**63,
        2**64,
        2**64 + 97,
        -(2**63) - 1,
        10**30,
        None,
        1.5,
        "7",
        b"a",
    ]


class Reader:
    """The input's bytes, read front to back; 0 past the end."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def more(self) -> bool:
        return self.pos < len(self.data)

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def little(self, n: int) -> int:
        return sum(self.byte() << (8 * i) for i in range(n))


def read_ids(r: Reader, tok: tokenmill.Tokenizer, byte_ids: list[int]) -> list[Any]:
    bad = invalid_ids(tok.n_vocab)
    ids: list[Any] = []
    while r.more() and len(ids) < 4096:
        h = r.byte()
        if h < 0xF8:
            ids.append(byte_ids[h])
        elif h < 0xFC:
            ids.append(byte_ids[r.byte()])
        elif h < 0xFE:
            ids.append(r.little(2) % tok.n_vocab)
        elif h == 0xFE:
            ids.append(r.little(3) % tok.n_vocab)
        else:
            ids.append(bad[r.byte() % len(bad)])
    return ids


def is_id(value: Any, n_vocab: int) -> bool:
    return type(value) is int and 0 <= value < n_vocab


def as_array(ids: list[Any]) -> Any:
    """The ids as a numpy array: int64 when they fit, else of objects."""
    if all(type(i) is int and -(2**63) <= i < 2**63 for i in ids):
        return np.array(ids, dtype=np.int64)
    return np.array(ids, dtype=object)


def outcome(call: Any) -> tuple[str | None, BaseException | None]:
    """What ``call()`` gives: its text, or the documented error it raises."""
    try:
        return call(), None
    except (TokenmillError, UnicodeDecodeError) as e:
        return None, e


def expected_error(bad: Any) -> type[TokenmillError]:
    return UnknownTokenIdError if isinstance(bad, int) else WrongTypeError


def stream(
    tok: tokenmill.Tokenizer, ids: list[Any], errors: str, feed: int, r: Reader, whole: str | None
) -> tuple[list[str], BaseException | None, int]:
    """Feed ``ids`` to a stream decoder; returns the pieces, the error that stopped it (None
    if none) and the index of the first id not fed whole (len(ids) when all were)."""
    dec = tok.stream_decoder(errors)
    pieces: list[str] = []
    i = 0

    def check_progress() -> None:
        assert len(dec.pending) < 4, f"pending {dec.pending!r}: 4 bytes or more held back"
        if whole is not None:
            so_far = "".join(pieces)
            assert whole.startswith(so_far), f"stream gave {so_far!r}, not a prefix of {whole!r}"

    try:
        while i < len(ids):
            many = feed == 1 or (feed == 3 and i % 2 == 1)
            if many:
                n = 1 + r.byte() % 8
                chunk = ids[i : i + n]
                arg = as_array(chunk) if r.byte() & 1 else chunk
                pieces.append(dec.push_many(arg))
                i += len(chunk)
            else:
                pieces.append(dec.push(ids[i]))
                i += 1
            check_progress()
        pieces.append(dec.flush())
    except (TokenmillError, UnicodeDecodeError) as e:
        return pieces, e, i
    assert dec.pending == b"", f"pending {dec.pending!r} after flush"
    return pieces, None, i


def test_one_input(data: bytes) -> None:
    r = Reader(data)
    flags = r.byte()
    which = flags & 1
    tok = TOKENIZERS[which]
    errors = ERRORS[(flags >> 1) & 3]
    feed = (flags >> 3) & 3
    use_array = bool(flags & 0x20)
    ids = read_ids(r, tok, BYTE_IDS[which])

    first_bad = next((k for k, t in enumerate(ids) if not is_id(t, tok.n_vocab)), None)
    valid = ids if first_bad is None else ids[:first_bad]
    raw = b"".join(tok.decode_single_token_bytes(t) for t in valid)
    assert tok.decode_bytes(valid) == raw, "decode_bytes differs from the tokens' bytes joined"

    # Whole decode of the valid prefix: the oracle for the stream.
    try:
        whole: str | None = raw.decode("utf-8", errors)
    except UnicodeDecodeError:
        whole = None  # strict, and the bytes are no UTF-8
    text, err = outcome(lambda: tok.decode(as_array(valid) if use_array else valid, errors))
    assert (text, type(err) if err else None) == (
        whole,
        None if whole is not None else UnicodeDecodeError,
    ), f"decode gave {text!r} / {err!r}, expected {whole!r}"

    if first_bad is not None:
        bad = ids[first_bad]
        want = expected_error(bad)
        text, err = outcome(lambda: tok.decode(as_array(ids) if use_array else ids, errors))
        assert isinstance(err, want), f"decode with {bad!r} gave {text!r} / {err!r}, not {want}"

    if feed == 2:
        pieces: list[str] = []
        err = None
        gen = tok.decode_stream(iter(ids), errors)
        try:
            for piece in gen:
                pieces.append(piece)
        except (TokenmillError, UnicodeDecodeError) as e:
            err = e
        # A lazy generator: it stops at the bad id, having yielded what the ids before gave.
        stopped = len(ids) if first_bad is None else first_bad
    else:
        pieces, err, stopped = stream(tok, ids, errors, feed, r, whole)
    got = "".join(pieces)

    if first_bad is None:
        if whole is None:
            assert isinstance(err, UnicodeDecodeError), f"strict stream gave {got!r} / {err!r}"
            # What came out before the failure is a prefix of the bytes' valid start.
            start = raw[: err_start(raw)].decode("utf-8")
            assert start.startswith(got), f"strict stream gave {got!r} before failing"
        else:
            assert err is None, f"stream of valid ids raised {err!r}"
            assert got == whole, f"stream gave {got!r}, decode {whole!r}"
        return

    # An invalid id: the stream fails at it (or earlier, with strict, on bytes no UTF-8).
    bad = ids[first_bad]
    if isinstance(err, UnicodeDecodeError):
        assert errors == "strict" and whole is None, f"stream raised {err!r}"
        return
    assert isinstance(err, expected_error(bad)), f"stream with {bad!r} gave {got!r} / {err!r}"
    assert stopped <= first_bad < stopped + 8, f"stream failed at {stopped}, bad id {first_bad}"
    prefix = b"".join(tok.decode_single_token_bytes(t) for t in ids[:stopped])
    dec = codecs.getincrementaldecoder("utf-8")(errors=errors)
    try:
        before = dec.decode(prefix)
    except UnicodeDecodeError:
        return  # strict: the prefix alone is no UTF-8 either way
    assert got == before, f"stream gave {got!r} before the bad id, expected {before!r}"


def err_start(raw: bytes) -> int:
    """Where strict UTF-8 decoding of ``raw`` first fails."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start
    return len(raw)


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
