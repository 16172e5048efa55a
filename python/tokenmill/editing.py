"""Changing a tokenizer's vocabulary: add tokens, add special tokens, remove tokens.

The rules of the :class:`~tokenmill.Tokenizer` methods ``with_tokens``, ``with_special_tokens``
and ``without``, which build the new tokenizer from what these functions say it holds; the one
they start from stays as it was. New tokens take the ids past the last one, in the order given,
so a model's embedding table keeps its rows and gains new ones
(:func:`tokenmill.embedding.grow`); removing tokens closes their ids up and gives the map from
old ids to new ones, which :func:`tokenmill.embedding.remap` applies to a table.

Removing a merged token also removes the tokens that encoding, by tiktoken's rule, made by
merging and then cannot make (``" male"`` when ``"ale"`` goes, unless the rule finds it from other
parts): they would only ever be whole chunks of their own, never seen in training. A trained
tokenizer keeps its merges and counts when every token left is made from the parts it learned.
``reference.remove`` is the definition.

>>> import tokenmill
>>> enc = tokenmill.load("gpt2")
>>> special_tokens_with(enc, ["<|im_start|>", "<|im_end|>"])
{'<|endoftext|>': 50256, '<|im_start|>': 50257, '<|im_end|>': 50258}
>>> left = removal(enc, [enc.encode_single_token(" SolidGoldMagikarp")])
>>> len(left.tokens), left.special_tokens, int(left.new_id[43453]), int(left.new_id[50256])
(50255, {'<|endoftext|>': 50255}, -1, 50255)
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tokenmill import _core
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


def added_tokens_with(tok: Tokenizer, tokens: Iterable[str]) -> dict[str, int]:
    """The added tokens ``tok.with_tokens(tokens)`` has: ``tok``'s, then each string of
    ``tokens`` at the next id past ``tok.n_vocab``, in the order given. A string that already is
    one of its added tokens keeps its id; one that is a special token, or whose bytes are an
    ordinary token, is an error naming it (an added token gets an id of its own)."""
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
    return added


def special_tokens_with(
    tok: Tokenizer, special_tokens: Mapping[str, int] | Sequence[str]
) -> dict[str, int]:
    """The special tokens ``tok.with_special_tokens(special_tokens)`` has: ``tok``'s, and a list
    of strings at the next ids past ``tok.n_vocab`` in order (one that already is a special
    token keeps its id), or a dict with its ids (tiktoken's way: free ids past the ordinary ones
    or in their gaps, which the tokenizer checks). Naming an added token is an error."""
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
    return specials | wanted


@dataclass(frozen=True)
class Removal:
    """What ``tok.without(ids)`` holds: its ordinary tokens by id (``b""`` for a gap), special
    and added tokens, template and merges (None unless kept), and ``new_id``, each old id's new
    id (-1 for one that is gone)."""

    tokens: list[bytes]
    special_tokens: dict[str, int]
    added_tokens: dict[str, int]
    template: Template
    merges: list[Merge] | None
    new_id: npt.NDArray[np.int64]


def removal(tok: Tokenizer, ids: Iterable[int]) -> Removal:
    """``tok`` without the tokens ``ids`` (ordinary, special or added) and without the tokens
    encoding made by merging that it then cannot make (see the module docstring), the ids left
    closed up in order. Single bytes cannot be removed: any text must stay encodable."""
    tokens = tok.token_bytes_list()
    gone = _removed(tok, tokens, ids)
    if used := sorted(gone.intersection(tok.template.ids)):
        raise InvalidArgumentError(
            f"the template of {tok.name} adds token {used[0]}, so it cannot be removed"
        )
    before = tok.merge_parents()
    kept, new_id, after = _kept(tokens, tok.n_vocab, gone)
    # A token that is made by merging no more is never a part that merges either, so removing
    # it changes no other token's parents: one more pass is the last.
    lost = {
        i
        for i, pair in enumerate(before)
        if pair is not None and i not in gone and after[new_id[i]] is None
    }
    if lost:
        gone |= lost
        kept, new_id, after = _kept(tokens, tok.n_vocab, gone)

    def moved(mapping: Mapping[str, int]) -> dict[str, int]:
        return {s: int(new_id[i]) for s, i in mapping.items() if i not in gone}

    specials, added = moved(tok.special_tokens), moved(tok.added_tokens)
    n_vocab = max([len(kept), *(i + 1 for i in (specials | added).values())])
    new_id[new_id >= n_vocab] = -1  # gaps past the new last id
    return Removal(
        tokens=kept,
        special_tokens=specials,
        added_tokens=added,
        template=Template(
            tuple(int(new_id[i]) for i in tok.template.prefix),
            tuple(int(new_id[i]) for i in tok.template.suffix),
        ),
        merges=_learned(tok, gone, new_id, after),
        new_id=new_id,
    )


def _kept(
    tokens: list[bytes], n_vocab: int, gone: set[int]
) -> tuple[list[bytes], npt.NDArray[np.int64], list[tuple[int, int] | None]]:
    """The ordinary tokens left when the ids ``gone`` go, each of ``n_vocab`` ids' new id once
    those are closed up (-1 for them), and the parents of the tokens left."""
    keep = np.ones(n_vocab, dtype=bool)
    keep[sorted(gone)] = False
    new_id = np.cumsum(keep, dtype=np.int64) - 1
    new_id[~keep] = -1
    kept = [t for i, t in enumerate(tokens) if i not in gone]
    while kept and not kept[-1]:
        kept.pop()  # a gap is no last token
    # The parents come from tiktoken's rule on the tokens alone: no pattern plays a part.
    return kept, new_id, _core.CoreTokenizer(kept, "gpt2", []).merge_parents()


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
