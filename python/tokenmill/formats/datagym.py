"""GPT-2's original vocabulary files: ``encoder.json`` (token string -> id) and
``vocab.bpe`` (the merges, one ``a b`` pair per line).

Both spell bytes with GPT-2's printable alphabet (byte ``0x20`` is ``Ġ``...); this module is
the only place that alphabet exists, so bytes stay bytes everywhere else.

>>> BYTE_TO_CHAR[ord(" ")], BYTE_TO_CHAR[ord("a")]
('Ġ', 'a')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from tokenmill.errors import VocabFileError

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


def to_bytes(token: str, source: str = "<gpt2 vocabulary>", line: int | None = None) -> bytes:
    """Bytes of a token spelled in GPT-2's alphabet."""
    try:
        return bytes(CHAR_TO_BYTE[c] for c in token)
    except KeyError as e:
        raise VocabFileError(
            source, line, f"{e.args[0]!r} is not in GPT-2's byte alphabet"
        ) from None


def to_text(token: bytes) -> str:
    """A token's bytes spelled in GPT-2's alphabet."""
    return "".join(BYTE_TO_CHAR[b] for b in token)


def parse(
    encoder_json: bytes, vocab_bpe: bytes, source: str = "encoder.json"
) -> tuple[list[bytes], dict[str, int]]:
    """Tokens by id and special tokens from the two files' contents.

    The 256 single bytes take the ids ``encoder.json`` gives them (GPT-2's own order for
    GPT-2, byte order for tokenizers trained here); each line of ``vocab.bpe`` then makes the
    next token. ``encoder.json`` must agree; its entries that are not built by the merges
    (``<|endoftext|>``) are special tokens.
    """
    try:
        encoder = json.loads(encoder_json)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise VocabFileError(source, getattr(e, "lineno", None), f"not valid JSON: {e}") from None
    if not isinstance(encoder, dict):
        raise VocabFileError(source, None, "expected a JSON object of token -> id")
    bpe_source = str(Path(source).with_name("vocab.bpe"))
    lines = vocab_bpe.decode("utf-8", errors="strict").split("\n")
    byte_ids = [encoder.get(BYTE_TO_CHAR[b]) for b in range(256)]
    if sorted(i for i in byte_ids if isinstance(i, int)) != list(range(256)):
        raise VocabFileError(source, None, "the 256 single bytes must have the ids 0..255")
    tokens: list[bytes] = [b""] * 256
    for b, i in enumerate(byte_ids):
        tokens[i] = bytes([b])  # type: ignore[index]
    seen = set(tokens)
    for number, line in enumerate(lines, start=1):
        if not line or line.startswith("#version"):
            continue
        parts = line.split(" ")
        if len(parts) != 2:
            raise VocabFileError(bpe_source, number, "expected two space-separated tokens")
        merged = to_bytes(parts[0], bpe_source, number) + to_bytes(parts[1], bpe_source, number)
        if merged in seen:
            raise VocabFileError(bpe_source, number, f"the merge {line!r} makes a token twice")
        seen.add(merged)
        tokens.append(merged)
    specials: dict[str, int] = {}
    by_bytes = {t: i for i, t in enumerate(tokens)}
    for text, idx in encoder.items():
        if not isinstance(idx, int):
            raise VocabFileError(source, None, f"id of {text!r} is not an integer")
        try:
            token = bytes(CHAR_TO_BYTE[c] for c in text)
        except KeyError:
            token = None
        if token is not None and by_bytes.get(token) == idx:
            continue
        if token is not None and token in by_bytes:
            raise VocabFileError(
                source, None, f"{text!r} has id {idx} but vocab.bpe gives it rank {by_bytes[token]}"
            )
        specials[text] = idx
    if len(encoder) - len(specials) != len(tokens):
        raise VocabFileError(
            source,
            None,
            f"{len(tokens)} tokens from vocab.bpe but "
            f"{len(encoder) - len(specials)} in encoder.json",
        )
    return tokens, specials


def read(path: str | Path) -> tuple[list[bytes], dict[str, int]]:
    """Read ``encoder.json`` + ``vocab.bpe`` from a directory, or given either file's path."""
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    enc, bpe = folder / "encoder.json", folder / "vocab.bpe"
    for f in (enc, bpe):
        if not f.is_file():
            raise VocabFileError(
                f, None, "missing: a GPT-2 vocabulary needs encoder.json and vocab.bpe side by side"
            )
    return parse(enc.read_bytes(), bpe.read_bytes(), str(enc))


def dump(
    tokens: Sequence[bytes],
    parents: Sequence[tuple[int, int] | None],
    special_tokens: dict[str, int],
) -> tuple[bytes, bytes]:
    """``encoder.json`` and ``vocab.bpe`` contents. ``parents[i]`` is the pair of earlier
    tokens that merges into token ``i`` (None for single bytes)."""
    encoder = {to_text(t): i for i, t in enumerate(tokens)}
    for s, i in special_tokens.items():
        encoder[s] = i
    lines = ["#version: 0.2"]
    for i, t in enumerate(tokens):
        if len(t) == 1:
            continue
        pair = parents[i]
        if pair is None:
            raise ValueError(f"token {i} ({t!r}) is not the merge of two earlier tokens")
        lines.append(f"{to_text(tokens[pair[0]])} {to_text(tokens[pair[1]])}")
    return (
        json.dumps(encoder, ensure_ascii=False).encode("utf-8"),
        ("\n".join(lines) + "\n").encode("utf-8"),
    )
