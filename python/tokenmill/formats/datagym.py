"""GPT-2's original vocabulary files: ``encoder.json`` (token string -> id) and
``vocab.bpe`` (the merges, one ``a b`` pair per line).

Both spell bytes with GPT-2's printable alphabet (byte ``0x20`` is ``Ġ``...); this module is
the only place that alphabet exists, so bytes stay bytes everywhere else.

The files do not say how to split text: they are read with GPT-2's pattern, so :func:`write`
takes only tokenizers that split by it.

>>> BYTE_TO_CHAR[ord(" ")], BYTE_TO_CHAR[ord("a")]
('Ġ', 'a')
>>> is_encoder({"a": 0, "Ġ": 1}), is_encoder({"model": {}}), is_merges(b"#version: 0.2\\n")
(True, False, True)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenmill.errors import UnsupportedFormatError, VocabFileError
from tokenmill.fileio import write_atomic
from tokenmill.formats import loading
from tokenmill.formats.loading import Vocabulary

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

ENCODER, MERGES = "encoder.json", "vocab.bpe"

_PRINTABLE = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
# GPT-2's ids 0..255: the printable Latin-1 bytes first, then the other 68, each in byte order.
BYTE_ORDER: list[int] = _PRINTABLE + [b for b in range(256) if b not in _PRINTABLE]


def _gpt2_alphabet() -> list[str]:
    """Byte -> printable character: printable Latin-1 bytes map to themselves, the other 68
    bytes to U+0100 onwards, in byte order."""
    out = [""] * 256
    for i, b in enumerate(BYTE_ORDER):
        out[b] = chr(b) if i < len(_PRINTABLE) else chr(256 + i - len(_PRINTABLE))
    return out


BYTE_TO_CHAR: list[str] = _gpt2_alphabet()
CHAR_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_CHAR)}
# str.translate tables between the alphabet and Latin-1 (one character a byte), so that whole
# vocabularies convert at C speed. Latin-1 characters outside the alphabet map to U+FFFF,
# which Latin-1 cannot encode: those strings fail to encode, as other characters do.
_TO_LATIN1 = {ord(c): b for c, b in CHAR_TO_BYTE.items()} | {
    b: 0xFFFF for b in range(256) if BYTE_TO_CHAR[b] != chr(b)
}
_FROM_LATIN1 = {b: ord(c) for b, c in enumerate(BYTE_TO_CHAR)}


def to_bytes(token: str, source: str = "<gpt2 vocabulary>", line: int | None = None) -> bytes:
    """Bytes of a token spelled in GPT-2's alphabet."""
    spelled = bytes_or_none(token)
    if spelled is None:
        bad = next(c for c in token if c not in CHAR_TO_BYTE)
        raise VocabFileError(source, line, f"{bad!r} is not in GPT-2's byte alphabet")
    return spelled


def bytes_or_none(text: str) -> bytes | None:
    """The bytes ``text`` spells in GPT-2's alphabet, or None when it is not in it.

    >>> bytes_or_none("Ġhi"), bytes_or_none(" hi")
    (b' hi', None)
    """
    try:
        return text.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return None


def to_text(token: bytes) -> str:
    """A token's bytes spelled in GPT-2's alphabet."""
    return token.decode("latin-1").translate(_FROM_LATIN1)


# GPT-2's added tokens are spelled <|name|>: <|endoftext|> in GPT-2's own files, the same
# shape as every special token of tiktoken's vocabularies.
_SPECIAL = re.compile(r"<\|[^\s|]+\|>")


def is_special_name(text: str) -> bool:
    """Whether ``text`` has the shape of GPT-2's added tokens, ``<|name|>``.

    >>> is_special_name("<|endoftext|>"), is_special_name("Ġthe"), is_special_name("<s>")
    (True, False, False)
    """
    return _SPECIAL.fullmatch(text) is not None


def is_encoder(doc: object) -> bool:
    """Whether a JSON document has the shape of ``encoder.json``: an object of token -> id
    (and nothing else)."""
    return (
        isinstance(doc, dict)
        and bool(doc)
        and all(type(idx) is int for idx in doc.values())  # not bools
    )


def is_merges(data: bytes) -> bool:
    """Whether file contents start as ``vocab.bpe`` does, with its ``#version`` line."""
    return data.removeprefix(b"\xef\xbb\xbf").startswith(b"#version")


def parse(
    encoder_json: bytes, vocab_bpe: bytes, source: str = ENCODER
) -> tuple[list[bytes], dict[str, int]]:
    """Tokens by id and special tokens from the two files' contents (see
    :func:`from_encoder`)."""
    return from_encoder(loading.parse_json(encoder_json, source), vocab_bpe, source)


def from_encoder(
    encoder: Any, vocab_bpe: bytes, source: str = ENCODER
) -> tuple[list[bytes], dict[str, int]]:
    """Tokens by id and special tokens from ``encoder.json`` (parsed) and ``vocab.bpe``.

    The 256 single bytes take the ids ``encoder.json`` gives them (GPT-2's own order for
    GPT-2, byte order for tokenizers trained here); each merge line of ``vocab.bpe`` joins two
    tokens the bytes and earlier lines made into the next token. ``encoder.json`` must give
    every merged token exactly that id.

    A special token is an entry of ``encoder.json`` that no merge makes *and* that is spelled
    like GPT-2's added tokens, ``<|name|>`` (GPT-2's files have one, ``<|endoftext|>``, after
    the 50,000 merged tokens); its id must be past the merged tokens'. Any other entry that no
    merge makes is an error naming ``vocab.bpe``: an empty or mismatched ``vocab.bpe`` must
    not turn ordinary tokens into special ones.
    """
    bpe_source = str(Path(source).with_name(MERGES))
    if not isinstance(encoder, dict):
        raise VocabFileError(
            source, None, f"expected a JSON object of token -> id, not {loading.kind(encoder)}"
        )
    for text, idx in encoder.items():
        if not loading.is_id(idx):
            raise VocabFileError(
                source,
                None,
                f"{text!r} has id {idx!r}: an id must be an integer in 0..{loading.MAX_ID}",
            )
    tokens: list[bytes] = [b""] * 256
    for b in range(256):
        idx = encoder.get(BYTE_TO_CHAR[b])
        if idx is None or idx >= 256 or tokens[idx]:
            raise VocabFileError(
                source,
                None,
                f"the 256 single bytes must have the ids 0..255, once each; byte 0x{b:02x} "
                f"({BYTE_TO_CHAR[b]!r}) has id {idx!r}",
            )
        tokens[idx] = bytes([b])
    by_bytes = {t: i for i, t in enumerate(tokens)}
    try:
        lines = vocab_bpe.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        at = vocab_bpe.count(b"\n", 0, e.start) + 1
        raise VocabFileError(bpe_source, at, f"not UTF-8 at byte {e.start}") from None
    line_of: dict[int, int] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.removesuffix("\r")
        if not line or line.startswith("#version"):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise VocabFileError(
                bpe_source, number, f"expected two tokens separated by one space, not {line!r}"
            )
        left, right = (to_bytes(part, bpe_source, number) for part in parts)
        for part, got in ((parts[0], left), (parts[1], right)):
            if got not in by_bytes:
                raise VocabFileError(
                    bpe_source,
                    number,
                    f"{part!r} is not a token: a merge joins single bytes or tokens that earlier "
                    "lines made",
                )
        merged = left + right
        if merged in by_bytes:
            raise VocabFileError(bpe_source, number, f"the merge {line!r} makes a token twice")
        by_bytes[merged] = len(tokens)
        line_of[len(tokens)] = number
        tokens.append(merged)
    for idx in range(256, len(tokens)):
        text = to_text(tokens[idx])
        if encoder.get(text) != idx:
            given = "has no such token" if text not in encoder else f"gives it id {encoder[text]}"
            raise VocabFileError(
                bpe_source,
                line_of[idx],
                f"this merge makes {text!r}, token {idx}, but encoder.json {given}",
            )
    specials: dict[str, int] = {}
    unmade: list[tuple[int, str]] = []
    for text, idx in encoder.items():
        token = bytes_or_none(text)
        if token is not None and token in by_bytes:
            continue  # a single byte or a merged token, checked above
        if is_special_name(text):
            if idx < len(tokens):
                raise VocabFileError(
                    source,
                    None,
                    f"the special token {text!r} has id {idx}, an ordinary token's: special "
                    f"tokens need ids from {len(tokens)} on",
                )
            specials[text] = idx
        else:
            unmade.append((idx, text))
    if unmade:
        idx, text = min(unmade)
        merges = len(tokens) - 256
        problem = (
            f"has no merges, but encoder.json has {len(unmade)} more tokens than the 256 bytes"
            if merges == 0
            else f"its {merges} merges do not make {len(unmade)} of encoder.json's tokens"
        )
        raise VocabFileError(
            bpe_source,
            None,
            f"{problem} (the first: {text!r}, id {idx}); only entries spelled <|name|> may be "
            "special tokens, so these two files do not belong together",
        )
    return tokens, specials


def read(path: str | Path) -> tuple[list[bytes], dict[str, int]]:
    """Read ``encoder.json`` + ``vocab.bpe`` from a directory, or given either file's path."""
    enc, bpe = _pair(Path(path))
    return parse(enc.read_bytes(), bpe.read_bytes(), str(enc))


def vocabulary(path: str | Path, encoder: Any = None) -> Vocabulary:
    """What ``encoder.json`` + ``vocab.bpe`` say, from their folder or either file's path
    (``encoder``: the encoder file's document, when the caller has parsed it already). The
    pattern is GPT-2's: the files do not name one."""
    p = Path(path)
    enc, bpe = _pair(p)
    if encoder is None:
        encoder = loading.parse_json(enc.read_bytes(), str(enc))
    tokens, specials = from_encoder(encoder, bpe.read_bytes(), str(enc))
    return Vocabulary(str(enc), enc.parent.name or "gpt2", tokens, "gpt2", specials)


def _pair(path: Path) -> tuple[Path, Path]:
    """The encoder and merges files of a folder or of either file's path: ``vocab.bpe`` and
    an encoder beside it named ``encoder.json`` unless ``path`` is the encoder."""
    folder = path if path.is_dir() else path.parent
    enc = path if path.is_file() and path.name != MERGES else folder / ENCODER
    bpe = folder / MERGES
    for f in (enc, bpe):
        if not f.is_file():
            raise VocabFileError(
                f, None, "missing: a GPT-2 vocabulary needs encoder.json and vocab.bpe side by side"
            )
    return enc, bpe


def write(tok: Tokenizer, path: str | os.PathLike[str]) -> list[str]:
    """Write ``encoder.json`` and ``vocab.bpe`` for ``tok`` into the folder ``path`` (or the
    folder of ``path`` when it names either file), atomically; returns the paths written.
    Refuses a tokenizer these files cannot hold: one that does not split by GPT-2's pattern
    (the files name none), or one whose ids 0..255 are not the single bytes."""
    dest = Path(path)
    folder = dest.parent if dest.name in (ENCODER, MERGES) else dest
    instead = "save it as *.tokenmill or tokenizer.json, which hold any tokenizer"
    if tok.normalizer:
        raise UnsupportedFormatError(
            f"GPT-2's files hold no normalizer, and {tok.name} applies {tok.normalizer}; {instead}"
        )
    if tok.normalized_specials or tok.lstrip_specials or tok.rstrip_specials:
        raise UnsupportedFormatError(
            f"GPT-2's files cannot say how {tok.name}'s special tokens are matched (in the "
            f"normalized text, or taking the whitespace beside them); {instead}"
        )
    if tok.added_tokens:
        raise UnsupportedFormatError(
            f"GPT-2's files hold no added tokens, and {tok.name} has "
            f"{len(tok.added_tokens)}; {instead}"
        )
    if tok.template:
        raise UnsupportedFormatError(
            f"GPT-2's files hold no template, and {tok.name} adds special tokens around a "
            f"text with add_special_tokens=True; {instead}"
        )
    if tok.pattern_name != "gpt2":
        raise UnsupportedFormatError(
            f"GPT-2's files name no pattern and are read with GPT-2's, but {tok.name} splits "
            f"by {tok.pattern_name or 'a pattern of its own'}; {instead}"
        )
    tokens = tok.token_bytes_list()
    if any(len(t) != 1 for t in tokens[:256]):
        raise UnsupportedFormatError(
            f"GPT-2's files give ids 0..255 to the single bytes, and {tok.name} does not; {instead}"
        )
    gap = loading.first_gap(tokens)
    if gap is not None:
        raise UnsupportedFormatError(
            f"GPT-2's files number the merged tokens one after another, and no ordinary token "
            f"of {tok.name} has id {gap}; save it as tokenizer.json or *.tiktoken, which hold "
            "any vocabulary"
        )
    encoder, merges = dump(tokens, tok.merge_parents(), tok.special_tokens)
    write_atomic(folder / ENCODER, encoder)
    write_atomic(folder / MERGES, merges)
    return [str(folder / ENCODER), str(folder / MERGES)]


def dump(
    tokens: Sequence[bytes],
    parents: Sequence[tuple[int, int] | None],
    special_tokens: dict[str, int],
) -> tuple[bytes, bytes]:
    """``encoder.json`` and ``vocab.bpe`` contents. ``parents[i]`` is the pair of earlier
    tokens that merges into token ``i`` (None for single bytes)."""
    encoder = {to_text(t): i for i, t in enumerate(tokens)}
    for s, i in special_tokens.items():
        # parse() reads back as special only entries spelled <|name|> that are not tokens.
        if not is_special_name(s) or s in encoder:
            raise UnsupportedFormatError(
                f"GPT-2's files cannot hold the special token {s!r}: only names spelled "
                "<|name|> that are not also ordinary tokens; save it as *.tokenmill or "
                "tokenizer.json, which hold any special tokens"
            )
        encoder[s] = i
    lines = ["#version: 0.2"]
    for i, t in enumerate(tokens):
        if len(t) == 1:
            continue
        pair = parents[i]
        if pair is None:
            raise UnsupportedFormatError(
                f"token {i} ({t!r}) is not the merge of two earlier tokens, which is all "
                "vocab.bpe can say; save it as tokenizer.json or *.tiktoken, which hold any "
                "vocabulary"
            )
        lines.append(f"{to_text(tokens[pair[0]])} {to_text(tokens[pair[1]])}")
    return (
        json.dumps(encoder, ensure_ascii=False).encode("utf-8"),
        ("\n".join(lines) + "\n").encode("utf-8"),
    )
