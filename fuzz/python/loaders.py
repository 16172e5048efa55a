"""``tokenmill.load`` on damaged and hostile tokenizer files, in every format it reads.

Input: a flags byte, then the file's content (raw mode) or edits to a valid small file (edit
mode). Flags: bits 0-2 the format, which fixes the file's name and the base file of edit mode:

  0 ``v.tiktoken`` (a rank file; ``pattern=`` decides its split, none is an error);
  1 ``v.tiktoken.gz``: the content gzipped here;
  2 ``tokenizer.json`` (HF's);
  3 a folder holding GPT-2's ``encoder.json`` and ``vocab.bpe`` (the content split at its first
    NUL byte), loaded as ``encoder.json`` or (bit 6) as the folder;
  4 ``t.tokenmill``;
  5 ``tok.bin``: a name that says nothing, so that the content alone decides (base: HF's);
  6 a folder holding ``tokenizer.json``, loaded as the folder;
  7 ``v.tiktoken.gz`` holding the content as it is (damaged gzip data).

Bits 3-4: the call: ``load(path)``, ``pattern="gpt2"``, ``pattern="cl100k"``, or
``special_tokens={"<|x|>": 300}``; bit 5: gzip the file (formats 0, 2, 4, 5); bit 7: edit mode,
where the rest of the input is edits to the format's file for a small tokenizer trained at
import (overwrite, insert or delete bytes, copy a slice, and replace the k-th number or JSON
string with a value that breaks readers: ids past 32 and 64 bits, negatives, floats, null,
surrogates, empty strings, regexes).

Checks: ``load`` either raises a :class:`tokenmill.TokenmillError` (a damaged file's error) or
gives a :class:`tokenmill.Tokenizer` that takes a short text of several scripts back and forth
(``decode(encode_ordinary(t)) == t``, and with special tokens allowed), counts it as it
encodes it, and that saved as ``.tokenmill`` (or, for a vocabulary that merges do not make,
as HF's ``tokenizer.json``) loads back equal. The only error encoding may
raise is :class:`tokenmill.InvalidPatternError` (a pattern that fails on an input); anything
else raised is a finding.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import json
import re
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run by atheris: instrument tokenmill's code as it is imported
    import atheris

    instrumented: Any = atheris.instrument_imports(include=["tokenmill"])
else:  # imported (tests/test_fuzz_seeds.py replays the seeds): no atheris needed
    instrumented = contextlib.nullcontext()
with instrumented:
    import tokenmill
    import tokenmill.formats
    from tokenmill.errors import InvalidPatternError, TokenmillError, UnsupportedFormatError
    from tokenmill.formats import native

TEXT = "Hello world! naïve café Привет 日本語 🙂 1234567\n\tdef f(x):  return x <|endoftext|>"
# Larger inputs are cut: the files stay small, so a run stays well inside its memory limit.
MAX_INPUT = 1 << 16
# The merges of a .tokenmill file may double a token's length each time: a few hundred bytes
# of file then make megabytes of tokens (see steer_around).
MOST_MERGED_BYTES = 1 << 22

NAMES = {0: "v.tiktoken", 1: "v.tiktoken.gz", 2: "tokenizer.json", 4: "t.tokenmill"}
NAMES |= {5: "tok.bin", 7: "v.tiktoken.gz"}
CALLS: list[dict[str, Any]] = [
    {},
    {"pattern": "gpt2"},
    {"pattern": "cl100k"},
    {"special_tokens": {"<|x|>": 300}},
]

NUMBERS = [
    b"0",
    b"1",
    b"-1",
    b"255",
    b"256",
    b"257",
    b"300",
    b"2147483647",
    b"2147483648",
    b"4294967295",
    b"4294967296",
    b"9223372036854775808",
    b"18446744073709551616",
    b"1" * 5000,
    b"1e3",
    b"1.0",
    b"-0",
    b"true",
    b"null",
    b'"3"',
    b"[]",
    b"{}",
]
STRINGS = [
    b'""',
    b'"a"',
    b'"\\ud800"',
    b'"\\udc80\\ud800"',
    b'"\\u0000"',
    b'"<|endoftext|>"',
    b'"<|x|>"',
    b'"\\u0120"',
    b'"\\u0120a"',
    b'"a b"',
    b'"tokenmill"',
    b'"BPE"',
    b'"WordPiece"',
    b'"ByteLevel"',
    b'"Split"',
    b'"Sequence"',
    b'"Isolated"',
    b'"Removed"',
    b'"Regex"',
    b'"NFC"',
    b'"("',
    b'"(a*)*b"',
    b'"\\\\p{L}+"',
    b'"[^\\\\s]+"',
    b'"(?i)a"',
    b'"."',
    b'"gpt2"',
    b'"o200k"',
    b"null",
    b"0",
    b"[]",
    b"{}",
]
DIGITS = re.compile(rb"-?[0-9]+")
JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def _bases() -> dict[int, bytes]:
    """Each format's file for a small tokenizer: what edit mode starts from."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = "ab ab abc abc café café 🙂🙂 the the cat"
        special = tokenmill.train(text, 270, pattern="gpt2", special_tokens=["<|endoftext|>"])
        plain = tokenmill.train(text, 270, pattern="gpt2")
    folder = Path(tempfile.mkdtemp(prefix="tokenmill-fuzz-bases-"))
    try:
        special.save(folder / "t.tokenmill")
        special.save(folder / "tokenizer.json")
        plain.save(folder / "v.tiktoken")
        plain.save(folder / "gpt2")
        ranks = (folder / "v.tiktoken").read_bytes()
        hf = (folder / "tokenizer.json").read_bytes()
        gpt2 = (folder / "gpt2" / "encoder.json").read_bytes() + b"\0"
        gpt2 += (folder / "gpt2" / "vocab.bpe").read_bytes()
        native = (folder / "t.tokenmill").read_bytes()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {0: ranks, 1: ranks, 2: hf, 3: gpt2, 4: native, 5: hf, 6: hf, 7: gzip.compress(ranks)}


BASES = _bases()
WORK = Path(tempfile.mkdtemp(prefix="tokenmill-fuzz-loaders-"))
atexit.register(shutil.rmtree, WORK, ignore_errors=True)


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

    def word(self) -> int:
        return self.byte() | self.byte() << 8


def edited(base: bytes, r: Reader) -> bytes:
    """``base`` with the edits the rest of the input describes (at most 64)."""
    out = bytearray(base)
    for _ in range(64):
        if not r.more():
            break
        op = r.byte() % 6
        n = len(out)
        if op == 0 and n:
            out[r.word() % n] = r.byte()
        elif op == 1:
            out.insert(r.word() % (n + 1), r.byte())
        elif op == 2 and n:
            at = r.word() % n
            del out[at : at + 1 + r.byte()]
        elif op == 3 and n:
            at = r.word() % n
            piece = out[at : at + 1 + r.byte()]
            dest = r.word() % (n + 1)
            out[dest:dest] = piece
        elif op in (4, 5):
            found = list((DIGITS if op == 4 else JSON_STRING).finditer(out))
            k, v = r.byte(), r.byte()
            if found:
                m = found[k % len(found)]
                values = NUMBERS if op == 4 else STRINGS
                out[m.start() : m.end()] = values[v % len(values)]
        if len(out) > MAX_INPUT:
            del out[MAX_INPUT:]
    return bytes(out)


def document(content: bytes) -> Any:
    """The JSON document in ``content`` (gzipped or not), or None."""
    with contextlib.suppress(Exception):
        if content[:2] == b"\x1f\x8b":
            content = gzip.decompress(content)
        return json.loads(content)
    return None


def merged_bytes(doc: Any) -> int:
    """How many bytes the tokens of a ``.tokenmill`` document's merges hold together (256
    when it has none)."""
    lengths = [1] * 256
    with contextlib.suppress(Exception):
        for m in doc["merges"]:
            left, right = m[0], m[1]
            if not (type(left) is int and type(right) is int):
                break
            if not (0 <= left < len(lengths) and 0 <= right < len(lengths)):
                break
            lengths.append(lengths[left] + lengths[right])
    return sum(lengths)


def steer_around(files: dict[str, bytes]) -> bool:
    """Whether the files would load a vocabulary too large for the run's budget: merges that
    double a token each time make one of 2**k bytes from a file of a few hundred. The loader
    refuses files whose tokens hold more than ``native.MAX_TOKEN_BYTES`` (those are loaded,
    and must be refused quickly); below that, such a vocabulary is valid and loads in
    ``n log n``, but building megabytes of tokens on every input would slow the run to a crawl.
    """
    for content in files.values():
        doc = document(content)
        if doc is None:
            continue
        if MOST_MERGED_BYTES < merged_bytes(doc) <= native.MAX_TOKEN_BYTES:
            return True
    return False


def roundtrip(tok: tokenmill.Tokenizer) -> None:
    """The checks a loaded tokenizer must pass."""
    try:
        ids = tok.encode_ordinary(TEXT)
        with_specials = tok.encode(TEXT, allowed_special="all")
    except InvalidPatternError:
        return  # documented: a pattern may fail on an input (its engine's limits)
    assert tok.decode(ids) == TEXT, f"{tok}: decode(encode_ordinary(text)) != text"
    assert tok.decode_bytes(ids) == TEXT.encode(), f"{tok}: decode_bytes differs"
    assert tok.decode(with_specials) == TEXT, f"{tok}: decode(encode(text, all)) != text"
    assert tok.count(TEXT, disallowed_special=()) == len(ids), f"{tok}: count != len(encode)"
    assert all(0 <= i < tok.n_vocab for i in with_specials), f"{tok}: an id past n_vocab"
    if tok.n_vocab > 100_000:
        return
    # .tokenmill holds the vocabularies merges make; HF's tokenizer.json any other.
    for name in ("again.tokenmill", "again.json"):
        try:
            tok.save(WORK / name)
        except UnsupportedFormatError:
            continue
        again = tokenmill.load(WORK / name)
        assert again == tok, f"{tok}: saved as {name}, loads back as {again}"
        return
    raise AssertionError(f"{tok}: neither .tokenmill nor tokenizer.json can hold it")


def test_one_input(data: bytes) -> None:
    r = Reader(data[:MAX_INPUT])
    flags = r.byte()
    fmt = flags & 7
    kwargs = CALLS[(flags >> 3) & 3]
    gzipped = bool(flags & 0x20) and fmt in (0, 2, 4, 5)
    if flags & 0x80:
        content = edited(BASES[fmt], r)
    else:
        content = r.data[r.pos :]

    folder = WORK / "case"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    files: dict[str, bytes] = {}
    if fmt == 3:
        encoder, _, merges = content.partition(b"\0")
        files = {"encoder.json": encoder, "vocab.bpe": merges}
        target = folder if flags & 0x40 else folder / "encoder.json"
    elif fmt == 6:
        files = {"tokenizer.json": content}
        target = folder
    else:
        files = {NAMES[fmt]: gzip.compress(content) if fmt == 1 or gzipped else content}
        target = folder / NAMES[fmt]
    if steer_around(files):
        return
    for name, body in files.items():
        (folder / name).write_bytes(body)

    try:
        tok = tokenmill.load(target, **kwargs)
    except TokenmillError:
        return
    assert isinstance(tok, tokenmill.Tokenizer), f"load gave {tok!r}"
    roundtrip(tok)


if __name__ == "__main__":
    import resource

    # A run that asks for too much memory fails here, with a MemoryError saved as a finding,
    # rather than on the machine's OOM killer (libFuzzer sees Python's allocations late).
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
