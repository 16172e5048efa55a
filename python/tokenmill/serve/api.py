"""The JSON API of the playground, as plain functions over a :class:`Playground`.

The HTTP layer (:mod:`tokenmill.serve.server`) only parses requests and writes responses;
everything a script can ask for is here and returns plain data.

>>> import tokenmill
>>> pg = Playground({"gpt2": tokenmill.load("gpt2")})
>>> r = pg.encode({"text": "hello world", "tokenizers": ["gpt2"]})["results"][0]
>>> r["ids"], r["texts"], r["byte_offsets"]
([31373, 995], ['hello', ' world'], [0, 5, 11])
>>> m = pg.token("gpt2", 995)["parents"][0]  # ' world' is ' wor' + 'ld'
>>> m["left"], m["left_text"], m["right"], m["right_text"]
(476, ' wor', 335, 'ld')
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from tokenmill.analysis.show import token_text
from tokenmill.errors import (
    DisallowedSpecialTokenError,
    InvalidArgumentError,
    PlaygroundRequestError,
    TokenmillError,
)
from tokenmill.tokenizer import Tokenizer

# The largest request body a server accepts unless told otherwise (`--max-body`).
DEFAULT_MAX_BODY = 2 * 1024 * 1024

# What `special` in an encode request may say; the CLI's --allow-special / --plain-special.
SPECIAL_MODES = ("error", "allow", "plain")


class Playground:
    """The tokenizers a playground serves, loaded once and kept, by display name.

    ``tokenizers`` maps names to loaded tokenizers. Tokenizers are read-only and their
    native core releases the GIL, so one instance serves concurrent requests.
    """

    def __init__(self, tokenizers: Mapping[str, Tokenizer]) -> None:
        if not tokenizers:
            raise InvalidArgumentError("a playground needs at least one tokenizer")
        self.tokenizers = dict(tokenizers)
        self._parents: dict[str, list[tuple[int, int] | None]] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------------------------- /api/tokenizers

    def describe(self) -> dict[str, Any]:
        """``GET /api/tokenizers``: each tokenizer's name, size, pattern and special tokens.

        ``merges_known`` says whether the merge parents and counts come from training (a
        tokenmill-trained tokenizer) rather than being derived from the ranks.
        """
        return {
            "tokenizers": [
                {
                    "name": name,
                    "n_vocab": tok.n_vocab,
                    "pattern": tok.pattern_name or tok.pattern,
                    "special_tokens": tok.special_tokens,
                    "merges_known": tok.merges is not None,
                }
                for name, tok in self.tokenizers.items()
            ]
        }

    # ------------------------------------------------------------------------------ /api/encode

    def encode(self, request: Any) -> dict[str, Any]:
        """``POST /api/encode``: ``{"text": str, "tokenizers": [names], "special": mode}``.

        ``tokenizers`` defaults to all of them; ``special`` is ``"error"`` (the default, as
        in :meth:`Tokenizer.encode`: special-token text is refused), ``"allow"`` (encoded as
        special tokens) or ``"plain"`` (encoded as ordinary text). Each result has the ids,
        ``byte_offsets`` (token ``i`` is bytes ``byte_offsets[i]:byte_offsets[i + 1]`` of
        the UTF-8 text, so one more offset than ids), ``char_offsets`` (the character each
        token starts in, tiktoken's rule, plus the text's length), each token's ``texts``
        (bytes that are not whole UTF-8 characters shown as ``\\xNN``) and ``partial`` (the
        indices of those tokens), and the counts and ratios.
        """
        if not isinstance(request, dict):
            raise PlaygroundRequestError(400, 'the body must be a JSON object like {"text": "..."}')
        text = request.get("text")
        if not isinstance(text, str):
            raise PlaygroundRequestError(400, '"text" must be a string')
        names = request.get("tokenizers", list(self.tokenizers))
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise PlaygroundRequestError(400, '"tokenizers" must be a list of tokenizer names')
        special = request.get("special", "error")
        if special not in SPECIAL_MODES:
            raise PlaygroundRequestError(
                400, f'"special" must be one of {", ".join(SPECIAL_MODES)}, not {special!r}'
            )
        toks = [(name, self._get(name)) for name in names]
        data = text.encode("utf-8", "surrogatepass")
        n_chars = len(text)
        return {
            "chars": n_chars,
            "bytes": len(data),
            "results": [self._encode_one(name, tok, text, special) for name, tok in toks],
        }

    def _encode_one(self, name: str, tok: Tokenizer, text: str, special: str) -> dict[str, Any]:
        try:
            if special == "allow":
                ids = tok.encode(text, allowed_special="all")
            elif special == "plain":
                ids = tok.encode_ordinary(text)
            else:
                ids = tok.encode(text)
        except DisallowedSpecialTokenError as e:
            raise PlaygroundRequestError(
                400,
                f"{name}: the text contains the special token {e.token!r}; send "
                '"special": "allow" to encode it as a special token, or "special": "plain" '
                "to encode it as ordinary text",
            ) from None
        except TokenmillError as e:
            raise PlaygroundRequestError(400, f"{name}: {e}") from None
        pieces = tok.decode_tokens_bytes(ids)
        byte_offsets = [0]
        char_offsets = [0]
        texts = []
        partial = []
        n_bytes = 0
        n_chars = 0
        for i, piece in enumerate(pieces):
            # One pass over each token's bytes, which sum to the text's length: linear.
            try:
                shown = piece.decode("utf-8")
                starts = len(shown)
            except UnicodeDecodeError:
                shown = token_text(piece)
                # The characters that start in this token; a token that starts inside a
                # character belongs to that character (tiktoken's rule, as in
                # Tokenizer.decode_with_offsets).
                starts = sum(1 for b in piece if not 0x80 <= b < 0xC0)
                partial.append(i)
                if 0x80 <= piece[0] < 0xC0:
                    char_offsets[i] = max(0, char_offsets[i] - 1)
            texts.append(shown)
            n_bytes += len(piece)
            n_chars += starts
            byte_offsets.append(n_bytes)
            char_offsets.append(n_chars)
        count = len(ids)
        return {
            "tokenizer": name,
            "count": count,
            "ids": ids,
            "byte_offsets": byte_offsets,
            "char_offsets": char_offsets,
            "texts": texts,
            "partial": partial,
            "special": [i for i, t in enumerate(ids) if tok.is_special_token(t)],
            "chars_per_token": round(n_chars / count, 3) if count else None,
            "bytes_per_token": round(n_bytes / count, 3) if count else None,
        }

    # ------------------------------------------------------------------------------- /api/token

    def token(self, name: str, token_id: int) -> dict[str, Any]:
        """``GET /api/token?tokenizer=NAME&id=ID``: one token's bytes and merge parents.

        ``parents`` lists the merges that built the token, the token itself first, then its
        parents' parents (breadth first, at most 8 entries) — enough to read how a long token
        grew. For a tokenmill-trained tokenizer each merge is the one training made, with
        its count; for the others (gpt2, cl100k_base, ...) the parents follow tiktoken's
        rank rule: merge the token's bytes using only ranks below its own, and the last
        merge's two halves are its parents. Single bytes and special tokens have none.
        """
        tok = self._get(name)
        if not 0 <= token_id < tok.n_vocab:
            raise PlaygroundRequestError(
                404, f"{name} has no token {token_id}: its ids are 0..{tok.n_vocab - 1}"
            )
        special = {v: k for k, v in tok.special_tokens.items()}
        if token_id in special:
            data = special[token_id].encode("utf-8")
        else:
            try:
                data = tok.decode_single_token_bytes(token_id)
            except KeyError:
                raise PlaygroundRequestError(404, f"{name} has no token {token_id}") from None
        return {
            "tokenizer": name,
            "id": token_id,
            "special": token_id in special,
            "text": token_text(data),
            "hex": data.hex(" "),
            "length": len(data),
            "parents": [] if token_id in special else self._lineage(name, tok, token_id),
        }

    def parents(self, name: str, token_id: int) -> tuple[int, int, int | None] | None:
        """The two tokens merged into ``token_id`` and the merge's training count (None
        when the tokenizer was not trained by tokenmill), or None for a token no merge
        makes (single bytes, special tokens)."""
        tok = self._get(name)
        merges = tok.merges
        if merges is not None and 256 <= token_id < 256 + len(merges):
            m = merges[token_id - 256]
            return m.left, m.right, m.count
        if merges is not None:
            return None
        derived = self._derived_parents(name, tok)
        if 0 <= token_id < len(derived) and derived[token_id] is not None:
            left, right = derived[token_id]  # type: ignore[misc]
            return left, right, None
        return None

    def _lineage(self, name: str, tok: Tokenizer, token_id: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        queue = [token_id]
        while queue and len(out) < 8:
            t = queue.pop(0)
            p = self.parents(name, t)
            if p is None:
                continue
            left, right, count = p
            out.append(
                {
                    "id": t,
                    "left": left,
                    "right": right,
                    "left_text": token_text(tok.decode_single_token_bytes(left)),
                    "right_text": token_text(tok.decode_single_token_bytes(right)),
                    "source": "training" if count is not None else "rank rule",
                    "count": count,
                }
            )
            queue.extend((left, right))
        return out

    def _derived_parents(self, name: str, tok: Tokenizer) -> list[tuple[int, int] | None]:
        # Derived once per tokenizer on first use, then kept: deriving it takes a noticeable
        # fraction of a second for a large vocabulary (docs/performance.md).
        with self._lock:
            if name not in self._parents:
                self._parents[name] = tok.merge_parents()
            return self._parents[name]

    def _get(self, name: str) -> Tokenizer:
        try:
            return self.tokenizers[name]
        except KeyError:
            raise PlaygroundRequestError(
                404, f"unknown tokenizer {name!r}: this playground has {', '.join(self.tokenizers)}"
            ) from None


def display_names(specs: Sequence[str]) -> list[str]:
    """Short names for tokenizers given on the command line: the file name for paths,
    unless two would collide.

    >>> display_names(["gpt2", "runs/a/tok.tokenmill", "runs/b/tok.tokenmill", "x/y.json"])
    ['gpt2', 'runs/a/tok.tokenmill', 'runs/b/tok.tokenmill', 'y.json']
    """
    from pathlib import PurePath

    short = [PurePath(s).name or s for s in specs]
    return [s if short.count(n) > 1 else n for s, n in zip(specs, short, strict=True)]
