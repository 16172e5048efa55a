"""tokenmill's own format: one versioned JSON file, plus a readable companion.

The JSON holds everything needed to rebuild the tokenizer and nothing derivable: the split
pattern, the special tokens and the merges as ``[left, right, count]`` (token ``256 + k`` is
``left + right``; ids 0..255 are the bytes). One merge per line keeps diffs readable. The
companion ``<name>.vocab.txt`` lists every token for people: id, its bytes (escaped), its two
parents and how often the pair was seen when it was merged. Loading checks everything and says
what is wrong.

>>> import json, tempfile, pathlib, tokenmill
>>> tok = tokenmill.train("ab cd ab cd", 259, pattern="gpt2", name="tiny")
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> [pathlib.Path(p).name for p in write(tok, folder / "tiny.tokenmill")]
['tiny.tokenmill', 'tiny.vocab.txt']
>>> (folder / "tiny.vocab.txt").read_text().splitlines()[-1].split("\\t")
['258', "b' cd'", '257', '100', '2']
>>> doc = json.loads((folder / "tiny.tokenmill").read_text())
>>> is_native(doc), vocabulary(doc, "tiny.tokenmill").merges
(True, [(97, 98, 2), (32, 99, 2), (257, 100, 2)])
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tokenmill.errors import UnsupportedFormatError, VocabFileError
from tokenmill.fileio import write_atomic
from tokenmill.formats import loading
from tokenmill.formats.loading import NORMALIZERS, Vocabulary
from tokenmill.template import Template

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

FORMAT = "tokenmill"
# Version 2 adds "normalizer", version 3 a "pattern" that is a list of patterns applied one
# after another, version 4 a "template" (the special tokens add_special_tokens puts around a
# text), version 5 "normalized_specials" (special tokens looked for in the normalized text)
# and "lstrip_specials", "rstrip_specials" (special tokens that take the whitespace beside),
# version 6 "added_tokens" (matched like special tokens, but by every encoding method; the
# lists of version 5 may name them). A file is written with the lowest version that holds it
# (1 without any), so a tokenmill that would misread it refuses it as newer.
VERSION = 6
# The most bytes a file's tokens may hold together: hundreds of times a real vocabulary's.
MAX_TOKEN_BYTES = 1 << 28
SUFFIXES = (".tokenmill.json", ".tokenmill", ".json")
# The lists of special tokens a file may hold (version 5), as Tokenizer and Vocabulary name them.
NAMED_SPECIALS = ("normalized_specials", "lstrip_specials", "rstrip_specials")


def companion_path(path: str | os.PathLike[str]) -> Path:
    """Where the readable token list of ``path`` goes: ``x.tokenmill`` -> ``x.vocab.txt``.

    >>> companion_path("out/holmes-4096.tokenmill").as_posix()
    'out/holmes-4096.vocab.txt'
    """
    p = Path(path)
    stem = p.name
    for suffix in SUFFIXES:
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
            break
    return p.with_name(stem + ".vocab.txt")


def merges_of(tok: Tokenizer) -> list[tuple[int, int, int | None]]:
    """The merges of ``tok`` as (left, right, count); count is None when it is not known.

    A trained tokenizer has them; for another one (e.g. a loaded tiktoken vocabulary) they are
    derived from the vocabulary, which works when ids 0..255 are the bytes in order and every
    other token is the merge of two earlier ones.
    """
    if tok.merges is not None:
        return [(m.left, m.right, m.count) for m in tok.merges]
    tokens = tok.token_bytes_list()
    hint = "; save it as tokenizer.json (HF) or *.tiktoken instead, which hold any vocabulary"
    gap = loading.first_gap(tokens)
    if gap is not None:
        raise UnsupportedFormatError(
            f"{tok.name}: no ordinary token has id {gap}, and tokenmill's format numbers the "
            f"merged tokens one after another{hint}"
        )
    if tokens[:256] != [bytes([b]) for b in range(256)]:
        raise UnsupportedFormatError(
            f"{tok.name}: ids 0..255 are not the 256 bytes in order, which tokenmill's format "
            f"requires{hint}"
        )
    out: list[tuple[int, int, int | None]] = []
    for rank, parents in enumerate(tok.merge_parents()[256:], 256):
        if parents is None:
            raise UnsupportedFormatError(
                f"{tok.name}: token {rank} ({tokens[rank]!r}) is not the merge of two earlier "
                f"tokens{hint}"
            )
        out.append((parents[0], parents[1], None))
    return out


def write(tok: Tokenizer, path: str | os.PathLike[str]) -> list[str]:
    """Write ``tok`` to ``path`` and its readable token list next to it (both atomically).

    Returns the paths written.
    """
    merges = merges_of(tok)
    matched = tok.special_tokens | tok.added_tokens
    named = {key: [s for s in matched if s in getattr(tok, key)] for key in NAMED_SPECIALS}
    path = Path(path)
    lines = [
        "{",
        f'  "format": "{FORMAT}",',
        f'  "version": {_version(tok)},',
        f'  "name": {json.dumps(tok.name, ensure_ascii=False)},',
        f'  "pattern": {json.dumps(tok.pattern, ensure_ascii=False)},',
        f'  "normalizer": "{tok.normalizer}",' if tok.normalizer else "",
        f'  "template": {json.dumps(asdict(tok.template))},' if tok.template else "",
        *(
            f'  "{key}": {json.dumps(names, ensure_ascii=False)},'
            for key, names in named.items()
            if names
        ),
        f'  "n_vocab": {tok.n_vocab},',
        f'  "special_tokens": {json.dumps(tok.special_tokens, ensure_ascii=False)},',
        (
            f'  "added_tokens": {json.dumps(tok.added_tokens, ensure_ascii=False)},'
            if tok.added_tokens
            else ""
        ),
        '  "merges": [',
    ]
    body = [f"    [{left}, {right}, {json.dumps(count)}]" for left, right, count in merges]
    lines.append(",\n".join(body))
    lines += ["  ]", "}", ""]
    text = "\n".join(line for line in lines if line)
    write_atomic(path, (text + "\n").encode("utf-8"))
    companion = companion_path(path)
    write_atomic(companion, _vocab_listing(tok, merges).encode("utf-8"))
    return [str(path), str(companion)]


def _version(tok: Tokenizer) -> int:
    """The lowest format version that holds ``tok`` (see ``VERSION``)."""
    if tok.added_tokens:
        return 6
    if any(getattr(tok, key) for key in NAMED_SPECIALS):
        return 5
    if tok.template:
        return 4
    return 3 if len(tok.patterns) > 1 else 2 if tok.normalizer else 1


def _read_template(raw: object, specials: dict[str, int], bad: Any) -> Template | None:
    if raw is None:
        return None
    known = set(specials.values())
    sides = [raw.get(side, []) for side in ("prefix", "suffix")] if isinstance(raw, dict) else []
    if (
        not isinstance(raw, dict)
        or set(raw) - {"prefix", "suffix"}
        or not all(
            isinstance(ids, list) and all(loading.is_id(i) and i in known for i in ids)
            for ids in sides
        )
    ):
        raise bad(
            '"template" must be {"prefix": [ids], "suffix": [ids]}, each id a special or '
            "added token's"
        )
    return Template(tuple(sides[0]), tuple(sides[1]))


def _vocab_listing(tok: Tokenizer, merges: list[tuple[int, int, int | None]]) -> str:
    tokens = [bytes([b]) for b in range(256)]
    for left, right, _ in merges:
        tokens.append(tokens[left] + tokens[right])
    out = [
        f"# {tok.name}: {tok.n_vocab} tokens = 256 bytes + {len(merges)} merges + "
        f"{len(tok.special_tokens)} special tokens; pattern {tok.pattern_name or tok.pattern!r}",
        "# id\tbytes\tleft\tright\tcount (how often the pair was seen when it was merged)",
    ]
    out += [f"{i}\t{tokens[i]!r}" for i in range(256)]
    for k, (left, right, count) in enumerate(merges):
        seen = "" if count is None else str(count)
        out.append(f"{256 + k}\t{tokens[256 + k]!r}\t{left}\t{right}\t{seen}".rstrip("\t"))
    kinds = {i: (s, "special") for s, i in tok.special_tokens.items()}
    kinds |= {i: (s, "added") for s, i in tok.added_tokens.items()}
    for i, (s, kind) in sorted(kinds.items()):
        out.append(f"{i}\t{s!r}\t{kind}")
    return "\n".join(out) + "\n"


def is_native(doc: object) -> bool:
    """Whether a JSON document is one :func:`write` writes: an object with ``"format":
    "tokenmill"``."""
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def vocabulary(doc: object, source: str) -> Vocabulary:
    """What a document written by :func:`write` says, everything checked; a problem is a
    :class:`VocabFileError` naming ``source``."""

    def bad(problem: str, line: int | None = None) -> VocabFileError:
        return VocabFileError(source, line, problem)

    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise bad(f'not a tokenmill file: expected "format": "{FORMAT}" at the top level')
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise bad(f'"version" must be an integer, not {version!r}')
    if version > VERSION:
        raise bad(
            f"written in format version {version} by a newer tokenmill; this one reads "
            f"version {VERSION}: upgrade tokenmill"
        )
    if version < 1:
        raise bad(f"unknown format version {version}")
    pattern = doc.get("pattern")
    patterns = pattern if isinstance(pattern, list) and version >= 3 else [pattern]
    if len(patterns) < 1 + isinstance(pattern, list) or not all(
        isinstance(p, str) and p for p in patterns
    ):
        raise bad(
            '"pattern" must be a non-empty string (or, from version 3, a list of two or more)'
        )
    name = doc.get("name", Path(source).name.split(".")[0])
    if not isinstance(name, str):
        raise bad(f'"name" must be a string, not {name!r}')
    normalizer = doc.get("normalizer")
    if normalizer not in (None, *NORMALIZERS):
        raise bad(f'"normalizer" must be one of {", ".join(NORMALIZERS)}, not {normalizer!r:.40}')

    merges = _read_merges(doc.get("merges"), bad)
    # A merge doubles a token with a dozen bytes of JSON: the lengths are added up before any
    # token is built, so that a small file cannot ask for terabytes.
    lengths = [1] * 256
    for left, right, _ in merges:
        lengths.append(lengths[left] + lengths[right])
    if sum(lengths) > MAX_TOKEN_BYTES:
        raise bad(
            f"the merges make {sum(lengths):,} bytes of tokens; tokenmill reads at most "
            f"{MAX_TOKEN_BYTES:,} (the largest real vocabularies have a few MB)"
        )
    tokens = [bytes([b]) for b in range(256)]
    first: dict[bytes, int] = {t: i for i, t in enumerate(tokens)}
    for k, (left, right, _) in enumerate(merges):
        token = tokens[left] + tokens[right]
        if token in first:
            raise bad(
                f"merge {k} ({left} + {right}) makes token {256 + k} = {token!r}, "
                f"which is already token {first[token]}"
            )
        first[token] = len(tokens)
        tokens.append(token)

    specials = doc.get("special_tokens", {})
    added = doc.get("added_tokens", {}) if version >= 6 else {}
    ids: dict[int, str] = {}
    for key, kind, table in (
        ("special_tokens", "special", specials),
        ("added_tokens", "added", added),
    ):
        if not isinstance(table, dict):
            raise bad(f'"{key}" must be an object mapping strings to ids')
        for s, i in table.items():
            if not s:
                raise bad(f"{'an' if kind == 'added' else 'a'} {kind} token is the empty string")
            if not loading.is_id(i) or i < len(tokens):
                raise bad(
                    f"{kind} token {s!r} has id {i!r}: it must be an integer >= {len(tokens)} "
                    f"(ids below are the {len(tokens)} ordinary tokens) and <= {loading.MAX_ID}"
                )
            if i in ids:
                raise bad(f"tokens {ids[i]!r} and {s!r} have the same id {i}")
            ids[i] = s
    if both := sorted(specials.keys() & added.keys()):
        raise bad(f"{both[0]!r} is both a special token and an added token")
    matched = specials | added
    n_vocab = doc.get("n_vocab")
    expected = max([len(tokens) - 1, *ids]) + 1
    if n_vocab is not None and (
        not isinstance(n_vocab, int) or isinstance(n_vocab, bool) or n_vocab != expected
    ):
        raise bad(f'"n_vocab" says {n_vocab!r}, but the merges and special tokens make {expected}')
    template = _read_template(doc.get("template"), matched, bad)
    named: dict[str, frozenset[str]] = {}
    for key in NAMED_SPECIALS:
        names = doc.get(key, [])
        if not isinstance(names, list) or not all(
            isinstance(n, str) and n in matched for n in names
        ):
            raise bad(f'"{key}" must be a list of special- or added-token strings')
        named[key] = frozenset(names)
    return Vocabulary(
        source,
        name,
        tokens,
        pattern,
        specials,
        merges=merges,
        normalizer=normalizer,
        template=template,
        normalized_specials=named["normalized_specials"],
        lstrip_specials=named["lstrip_specials"],
        rstrip_specials=named["rstrip_specials"],
        added_tokens=added,
    )


def _read_merges(raw: Any, bad: Any) -> list[tuple[int, int, int | None]]:
    if not isinstance(raw, list):
        raise bad('"merges" must be a list of [left, right, count]')
    merges: list[tuple[int, int, int | None]] = []
    for k, m in enumerate(raw):
        if not (isinstance(m, list) and len(m) == 3):
            raise bad(f"merge {k} must be [left, right, count], not {m!r}")
        left, right, count = m
        for part in (left, right):
            if not isinstance(part, int) or isinstance(part, bool) or not 0 <= part < 256 + k:
                raise bad(
                    f"merge {k} (token {256 + k}) refers to {part!r}: a merge may only use ids "
                    f"0..{255 + k} (the bytes and earlier merges)"
                )
        if count is not None and (
            not isinstance(count, int) or isinstance(count, bool) or count < 0
        ):
            raise bad(f"merge {k}: the count must be a non-negative integer or null, not {count!r}")
        merges.append((left, right, count))
    return merges
