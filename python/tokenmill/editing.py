"""Changing a tokenizer's vocabulary: add tokens, add special tokens, remove tokens.

Each change gives a new tokenizer and leaves the one it starts from as it was; the
:class:`~tokenmill.Tokenizer` methods ``with_tokens``, ``with_special_tokens`` and ``without``
call these. New tokens take the ids past the last one, in the order given, so a model's
embedding table keeps its rows and gains new ones (:func:`tokenmill.embedding.grow`);
removing tokens closes their ids up and gives the map from old ids to new ones, which
:func:`tokenmill.embedding.remap` applies to a table.

Removing a merged token also removes the tokens that encoding, by tiktoken's rule, made by
merging and then cannot make (``" male"`` when ``"ale"`` goes, unless the rule finds it from other
parts): they would only ever be whole chunks of their own, never seen in training. A trained
tokenizer keeps its merges and counts when every token left is made from the parts it learned.
``reference.remove`` is the definition.

>>> import tokenmill
>>> enc = tokenmill.load("gpt2")
>>> chat = with_special_tokens(enc, ["<|im_start|>", "<|im_end|>"])
>>> chat.special_tokens["<|im_end|>"], chat.n_vocab
(50258, 50259)
>>> pruned, new_id = without(enc, [enc.encode_single_token(" SolidGoldMagikarp")])
>>> pruned.n_vocab, int(new_id[43453]), int(new_id[50256])
(50256, -1, 50255)
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tokenmill.errors import (
    InvalidArgumentError,
    InvalidSpecialTokensError,
    UnknownTokenIdError,
    WrongTypeError,
)
from tokenmill.template import Template

if TYPE_CHECKING:
    import numpy.typing as npt

    from tokenmill.tokenizer import Merge, Tokenizer


def with_tokens(tok: Tokenizer, tokens: Iterable[str]) -> Tokenizer:
    """``tok`` with the strings ``tokens`` as added tokens (found in any text before it is
    split, by every encoding method, as HF's ``add_tokens`` makes them), each at the next id
    past ``tok.n_vocab`` in the order given. A string that already is one of its added tokens
    keeps its id; one that is a special token, or whose bytes are an ordinary token, is an
    error naming it (an added token gets an id of its own)."""
    names = _strings(tokens, "tokens")
    added = tok.added_tokens
    next_id = tok.n_vocab
    for s in names:
        if s in added:
            continue
        if s in tok.special_tokens:
            raise InvalidSpecialTokensError(
                f"{s!r:.60} is already a special token of {tok.name} (id {tok.special_tokens[s]})"
            )
        if (rank := tok.rank(s.encode("utf-8", "surrogatepass"))) is not None:
            raise InvalidArgumentError(
                f"{s!r:.60} is already ordinary token {rank} of {tok.name}; an added token "
                "needs text that is not a token yet"
            )
        added[s] = next_id
        next_id += 1
    return _rebuilt(tok, added_tokens=added)


def with_special_tokens(
    tok: Tokenizer, special_tokens: Mapping[str, int] | Sequence[str]
) -> Tokenizer:
    """``tok`` with more special tokens: a list of strings takes the next ids past
    ``tok.n_vocab`` in order (one that already is a special token keeps its id), a dict gives
    the ids (tiktoken's way: free ids past the ordinary ones or in their gaps). Naming an added
    token is an error."""
    specials = tok.special_tokens
    if isinstance(special_tokens, Mapping):
        wanted = dict(special_tokens)
        names = _strings(wanted, "special_tokens")
        for s in names:
            if specials.get(s, wanted[s]) != wanted[s]:
                raise InvalidSpecialTokensError(
                    f"{s!r:.60} is already a special token of {tok.name}, with id {specials[s]}"
                )
    else:
        names = _strings(special_tokens, "special_tokens")
        wanted = {}
        next_id = tok.n_vocab
        for s in names:
            if s not in specials and s not in wanted:
                wanted[s] = next_id
                next_id += 1
    if clash := next((s for s in names if s in tok.added_tokens), None):
        raise InvalidSpecialTokensError(f"{clash!r:.60} is already an added token of {tok.name}")
    return _rebuilt(tok, special_tokens=specials | wanted)


def without(tok: Tokenizer, ids: Iterable[int]) -> tuple[Tokenizer, npt.NDArray[np.int64]]:
    """``tok`` without the tokens ``ids`` (ordinary, special or added) and without the tokens
    encoding made by merging that it then cannot make (see the module docstring), the ids left
    closed up in order; and the map from old ids to new ones, an array of ``tok.n_vocab`` ids
    with -1 for each id that is gone (``new_id[old_ids]`` renumbers token data). Single bytes
    cannot be removed: any text must stay encodable."""
    tokens = tok.token_bytes_list()
    gone = _removed(tok, tokens, ids)
    if used := sorted(gone.intersection(tok.template.ids)):
        raise InvalidArgumentError(
            f"the template of {tok.name} adds token {used[0]}, so it cannot be removed"
        )
    result, new_id = _pruned(tok, tokens, gone)
    before, after = tok.merge_parents(), result.merge_parents()
    # A token that is made by merging no more is never a part that merges either, so removing
    # it changes no other token's parents: one more pass is the last.
    lost = {
        i
        for i, pair in enumerate(before)
        if pair is not None and i not in gone and after[new_id[i]] is None
    }
    if lost:
        gone |= lost
        result, new_id = _pruned(tok, tokens, gone)
        after = result.merge_parents()
    if (merges := _learned(tok, gone, new_id, after)) is not None:
        result = _rebuilt(result, merges=merges)
    return result, new_id


def _pruned(
    tok: Tokenizer, tokens: list[bytes], gone: set[int]
) -> tuple[Tokenizer, npt.NDArray[np.int64]]:
    """``tok`` without the ids ``gone``, the others closed up, and the map of old ids to new."""
    keep = np.ones(tok.n_vocab, dtype=bool)
    keep[sorted(gone)] = False
    new_id = np.cumsum(keep, dtype=np.int64) - 1
    new_id[~keep] = -1

    def moved(mapping: Mapping[str, int]) -> dict[str, int]:
        return {s: int(new_id[i]) for s, i in mapping.items() if i not in gone}

    kept_tokens = [t for i, t in enumerate(tokens) if i not in gone]
    while kept_tokens and not kept_tokens[-1]:
        kept_tokens.pop()  # a gap is no last token
    result = _rebuilt(
        tok,
        tokens=kept_tokens,
        special_tokens=moved(tok.special_tokens),
        added_tokens=moved(tok.added_tokens),
        template=Template(
            tuple(int(new_id[i]) for i in tok.template.prefix),
            tuple(int(new_id[i]) for i in tok.template.suffix),
        ),
        merges=None,
    )
    new_id[new_id >= result.n_vocab] = -1  # gaps past the new last id
    return result, new_id


def _learned(
    tok: Tokenizer,
    gone: set[int],
    new_id: npt.NDArray[np.int64],
    parents: list[tuple[int, int] | None],
) -> list[Merge] | None:
    """A trained tokenizer's merges (with their counts) renumbered, when every token left is
    still made by merging the parts it learned; else None (the counts of other pairs are not
    known)."""
    if tok.merges is None:
        return None
    out: list[Merge] = []
    for k, merge in enumerate(tok.merges):
        if 256 + k in gone:
            continue
        left, right = int(new_id[merge.left]), int(new_id[merge.right])
        if left < 0 or right < 0 or parents[256 + len(out)] not in (None, (left, right)):
            return None
        out.append(dataclasses.replace(merge, left=left, right=right))
    return out


def _strings(values: Iterable[Any], argument: str) -> list[str]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise WrongTypeError(f"{argument} must be a list of strings, not {values!r:.40}")
    if isinstance(values, set | frozenset):
        raise WrongTypeError(
            f"{argument} must be a list (its order gives the ids), not a {type(values).__name__}"
        )
    out = list(values)
    for s in out:
        if not isinstance(s, str) or not s:
            raise WrongTypeError(f"{argument} must hold non-empty strings, not {s!r:.40}")
    return out


def _removed(tok: Tokenizer, tokens: list[bytes], ids: Iterable[int]) -> set[int]:
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise WrongTypeError(f"ids must be a list of token ids, not {ids!r:.40}")
    named = set(tok.special_tokens.values()) | set(tok.added_tokens.values())
    gone: set[int] = set()
    for value in ids:
        try:
            i = operator.index(value)
        except TypeError:
            raise WrongTypeError(f"ids must hold ints, not {value!r:.40}") from None
        if not (0 <= i < len(tokens) and tokens[i]) and i not in named:
            raise UnknownTokenIdError(i, tok.n_vocab)
        if i < len(tokens) and len(tokens[i]) == 1 and i not in named:
            raise InvalidArgumentError(
                f"token {i} of {tok.name} is the single byte {tokens[i]!r}; every byte stays a "
                "token, so that any text can be encoded"
            )
        gone.add(i)
    return gone


def _rebuilt(tok: Tokenizer, **changes: Any) -> Tokenizer:
    """A tokenizer like ``tok`` with ``changes`` to the constructor's arguments."""
    specials = changes.get("special_tokens", tok.special_tokens)
    added = changes.get("added_tokens", tok.added_tokens)
    named = specials.keys() | added.keys()
    return type(tok)(
        changes["tokens"] if "tokens" in changes else tok.token_bytes_list(),
        tok.pattern,
        specials,
        name=tok.name,
        merges=changes.get("merges", tok.merges),
        normalizer=tok.normalizer,
        template=changes.get("template", tok.template),
        normalized_specials=tok.normalized_specials & named,
        lstrip_specials=tok.lstrip_specials & named,
        rstrip_specials=tok.rstrip_specials & named,
        added_tokens=added,
    )
