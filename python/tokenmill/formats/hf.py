"""HuggingFace ``tokenizer.json`` for byte-level BPE: export and import.

The export is a ``BPE`` model whose merges are each token's parents (the only pairs that can
ever be adjacent, so HF's merge-list rule gives tiktoken's ids), ``ignore_merges`` on (a chunk
that is a whole token is that token, as in tiktoken), a ``Split`` pre-tokenizer carrying the
split pattern, byte-level alphabet and decoder, the special tokens as added tokens (``special``
true) beside its added tokens (``special`` false), and the tokenizer's template, if any, as a
``TemplateProcessing`` post-processor.

HF compiles patterns with Oniguruma, which reads a possessive interval such as cl100k's
``\\p{N}{1,3}+`` as "one to three digits, repeated" (so ``1234567`` would be one piece); the
export writes ``\\p{N}{1,3}``, which splits identically here because nothing follows it in its
alternative.

The import reads a file only when tokenmill reproduces its ids exactly, and refuses any other
with a :class:`~tokenmill.VocabFileError` naming the component and its setting. What is read,
``encode(text, allowed_special="all")`` encodes as HF's ``encode(text,
add_special_tokens=False)`` does, and with ``add_special_tokens=True`` as HF's ``encode(text)``
(the post-processor's BOS/EOS, kept as ``Tokenizer.template``):

- ``model``: ``BPE`` over GPT-2's byte alphabet, every byte among the ordinary tokens (the 13
  that UTF-8 never holds may be left out), whose ids may leave gaps (ids no ordinary token has,
  at most as many as there are tokens); ``dropout`` null or 0, ``byte_fallback`` false,
  ``continuing_subword_prefix`` and ``end_of_word_suffix`` null or empty (``unk_token`` may be
  set: every byte is a token, so it is never used);
- ``pre_tokenizer``: ``ByteLevel`` with ``add_prefix_space`` false, alone (it splits by
  GPT-2's pattern) or in a ``Sequence`` after ``Split`` (a ``Regex``, behavior ``Isolated``,
  or ``Removed`` with ``invert`` true when the regex matches every character), ``Digits`` and
  ``Punctuation`` pre-tokenizers, applied one after another (``Tokenizer.patterns``), with
  GPT-2's pattern last if ``use_regex`` is true. A Split regex runs on tokenmill's engine (or
  a scanner of its shape); one with a possessive interval (``{1,3}+``) is refused, since
  Oniguruma reads that as a repeated interval;
- ``normalizer`` null, ``NFC``, ``NFD``, ``NFKC`` or ``NFKD`` (alone or the one step of a
  ``Sequence``; the core applies it to the text between special tokens with HF's own Unicode
  tables, as HF does to the text its added tokens leave); ``truncation`` and ``padding`` null;
  ``decoder`` null or ``ByteLevel``; ``post_processor`` null, ``ByteLevel``,
  ``TemplateProcessing`` (its single template: special tokens around ``$A``; tokenmill has no
  pairs of texts), ``RobertaProcessing``, ``BertProcessing``, or a ``Sequence`` of them with
  at most one that adds tokens, each added an added token;
- ``added_tokens``: special or not (HF matches both kinds in all text before it splits it:
  the special ones are tokenmill's special tokens, matched when allowed; the others its
  :attr:`~tokenmill.Tokenizer.added_tokens`, matched by every encoding method, as HF's are even
  with ``split_special_tokens``), ``single_word`` false, ``lstrip`` and
  ``rstrip`` true or false (the whitespace before or after a match goes with it:
  ``Tokenizer.lstrip_specials``, ``rstrip_specials``; with ``rstrip`` no added token may start
  with whitespace); ``normalized`` true or false (HF matches the false ones first, then
  the true ones, normalized, in the normalized text between: ``Tokenizer.normalized_specials``,
  which the core runs the same way); each at the id HF gives it: its id in the model's vocab,
  else the next id past the vocab; one in the vocab spelled as its own text (else HF's model
  gives its id for the bytes the spelling stands for).

The merge rule. tokenmill encodes by tiktoken's rule: merge the adjacent pair whose merged
token has the lowest id, and a chunk that is itself a token is that one id. HF's BPE merges
the adjacent pair that comes first in ``merges``, and takes a whole-chunk token directly only
with ``ignore_merges``. Run on a token's own bytes, tiktoken's rule merges last the token's
*parents*, the one pair that ever merges into it in any text (see src/vocab/mod.rs). The two
rules give the same ids when

1. every merge joins two ordinary tokens into an ordinary token, and the results' ids never
   decrease along the list (so HF's list order is the id order);
2. every token that tiktoken's rule makes by merging has a merge of its parents. Only the
   parents of a token are ever adjacent in a run of the rule (src/vocab/mod.rs proves it), so
   a listed merge into a token from other parts never applies in either rule, and HF merges
   the pair tiktoken's rule merges (a merge of the token from other parts alone is not
   enough: HF never joins the parts the rule leaves);
3. with ``ignore_merges`` false, every token of two or more bytes is made by merging its
   bytes (tiktoken takes a whole-chunk token directly; HF must reach it by merges).

:func:`check_merges` checks these; tests/test_bad_files.py compares the ids with HF
``tokenizers`` on random vocabularies and merge lists.

>>> import json, tokenmill
>>> doc = json.loads(to_json(tokenmill.load("gpt2")))
>>> doc["model"]["type"], len(doc["model"]["merges"]), doc["added_tokens"][0]["content"]
('BPE', 50000, '<|endoftext|>')
>>> doc["normalizer"] = {"type": "Lowercase"}
>>> try:
...     parse(doc)
... except VocabFileError as e:
...     print(e.problem.split(":")[0])
normalizer Lowercase is not supported
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from tokenmill.errors import UnsupportedFormatError, VocabFileError
from tokenmill.fileio import write_atomic
from tokenmill.formats import datagym, loading
from tokenmill.formats.loading import Vocabulary, is_id, kind
from tokenmill.patterns import PATTERNS, scanner
from tokenmill.template import Template

if TYPE_CHECKING:
    from tokenmill.tokenizer import Tokenizer

# {m,n}+ (possessive interval) -> {m,n}: see the module docstring.
_POSSESSIVE_INTERVAL = re.compile(r"(\{\d+(?:,\d*)?\})\+")

Refuse = Callable[[str], VocabFileError]


def hf_pattern(pattern: str) -> str:
    """The split pattern rewritten for Oniguruma."""
    return _POSSESSIVE_INTERVAL.sub(r"\1", pattern)


def to_dict(tok: Tokenizer) -> dict[str, Any]:
    """The ``tokenizer.json`` document as a dict."""
    tokens = tok.token_bytes_list()
    parents = tok.merge_parents()
    vocab = {datagym.to_text(t): i for i, t in enumerate(tokens) if t}
    # Special and added tokens also go in the model's vocab: HF renumbers added tokens that are
    # not in it to close gaps (cl100k's specials start at 100257, leaving 100256 unused).
    matched = tok.special_tokens | tok.added_tokens
    if clash := next((s for s in matched if s in vocab), None):
        raise UnsupportedFormatError(
            f"{tok.name}'s token {clash!r} is spelled as model.vocab spells the bytes "
            f"{datagym.bytes_or_none(clash)!r}, so a tokenizer.json cannot hold both; save it "
            "as *.tokenmill, which holds it"
        )
    vocab.update(matched)
    merges = [
        [datagym.to_text(tokens[p[0]]), datagym.to_text(tokens[p[1]])]
        for p in parents
        if p is not None
    ]
    added = [
        {
            "id": i,
            "content": s,
            "single_word": False,
            "lstrip": s in tok.lstrip_specials,
            "rstrip": s in tok.rstrip_specials,
            "normalized": s in tok.normalized_specials,
            "special": s in tok.special_tokens,
        }
        for s, i in sorted(matched.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": tok.normalizer} if tok.normalizer else None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                *(
                    {
                        "type": "Split",
                        "pattern": {"Regex": hf_pattern(pattern)},
                        "behavior": "Isolated",
                        "invert": False,
                    }
                    for pattern in tok.patterns
                ),
                {
                    "type": "ByteLevel",
                    "add_prefix_space": False,
                    "trim_offsets": True,
                    "use_regex": False,
                },
            ],
        },
        "post_processor": _template_processing(tok) if tok.template else None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": merges,
        },
    }


def _template_processing(tok: Tokenizer) -> dict[str, Any]:
    """HF's ``TemplateProcessing`` for ``tok.template``: the single template, and the pair
    template HF requires (the single one for each text, the second with type id 1)."""
    name_of = {i: name for name, i in (tok.special_tokens | tok.added_tokens).items()}

    def template(text: str, type_id: int) -> list[dict[str, Any]]:
        def special(i: int) -> dict[str, Any]:
            return {"SpecialToken": {"id": name_of[i], "type_id": type_id}}

        return [
            *map(special, tok.template.prefix),
            {"Sequence": {"id": text, "type_id": type_id}},
            *map(special, tok.template.suffix),
        ]

    used = dict.fromkeys(tok.template.ids)
    return {
        "type": "TemplateProcessing",
        "single": template("A", 0),
        "pair": template("A", 0) + template("B", 1),
        "special_tokens": {
            name_of[i]: {"id": name_of[i], "ids": [i], "tokens": [name_of[i]]} for i in used
        },
    }


def to_json(tok: Tokenizer) -> str:
    """The ``tokenizer.json`` text."""
    return json.dumps(to_dict(tok), ensure_ascii=False)


def write(tok: Tokenizer, path: str | os.PathLike[str]) -> list[str]:
    """Write ``tok`` as a ``tokenizer.json`` to ``path`` (atomically); returns the paths
    written. Every tokenizer can be written: the format holds its pattern and special tokens."""
    write_atomic(path, to_json(tok).encode("utf-8"))
    return [str(path)]


def is_hf(doc: object) -> bool:
    """Whether a JSON document is a ``tokenizer.json``: an object whose ``model`` is an object
    (GPT-2's ``encoder.json`` has a token ``model`` too, with an id).

    >>> is_hf({"model": {"type": "BPE"}}), is_hf({"model": 2235})
    (True, False)
    """
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict)


def vocabulary(doc: object, source: str, name: str) -> Vocabulary:
    """What a ``tokenizer.json`` document says, checked by :func:`parse`; the tokenizer built
    from it must still pass :func:`check_merges`, which ``check_parents`` runs.

    >>> import tokenmill
    >>> vocab = vocabulary(to_dict(tokenmill.load("gpt2")), "gpt2.json", "gpt2")
    >>> len(vocab.tokens), vocab.special_tokens, vocab.check_parents is not None
    (50256, {'<|endoftext|>': 50256}, True)
    """
    bpe = parse(doc, source)

    def check_parents(parents: list[tuple[int, int] | None]) -> None:
        check_merges(bpe, parents, source)

    return Vocabulary(
        source,
        name,
        bpe.tokens,
        bpe.pattern,
        {s: i for s, i in bpe.special_tokens.items() if s not in bpe.added.plain},
        normalizer=bpe.normalizer,
        template=bpe.template,
        normalized_specials=bpe.added.normalized,
        lstrip_specials=bpe.added.lstrip,
        rstrip_specials=bpe.added.rstrip,
        added_tokens={s: i for s, i in bpe.special_tokens.items() if s in bpe.added.plain},
        check_parents=check_parents,
    )


@dataclass(frozen=True)
class BpeFile:
    """A ``tokenizer.json`` that :func:`parse` checked (all but the merge rule, which
    :func:`check_merges` checks against tiktoken's parents)."""

    tokens: list[bytes]  # the ordinary tokens, by id
    texts: list[str]  # the same, spelled as the file spells them
    ids: dict[str, int]  # the ordinary tokens' ids, by their spelling
    pattern: str | list[str]  # several are applied one after another
    special_tokens: dict[str, int]  # every added token, special or not (see added.plain)
    # The merges in the file's order, each "left right" (a token's spelling holds no space).
    merges: list[str]
    parts: list[str]  # the merges' parts: left, right, left, right...
    results: list[int]  # the id each merge makes (never decreasing)
    ignore_merges: bool
    normalizer: str | None  # NFC, NFD, NFKC or NFKD, applied before splitting; or None
    template: Template  # what the post-processor adds with add_special_tokens=True
    added: AddedTokens  # how HF matches the special tokens


def parse(doc: object, source: str = "tokenizer.json") -> BpeFile:
    """Everything in a ``tokenizer.json`` but the merge rule, checked: its structure, and that
    each component is one whose ids tokenmill reproduces (see the module docstring)."""

    def refuse(problem: str) -> VocabFileError:
        return VocabFileError(source, None, problem)

    if not isinstance(doc, dict):
        raise refuse(f"expected a JSON object at the top level, not {kind(doc)}")
    for key in ("truncation", "padding"):
        if doc.get(key) is not None:
            raise refuse(
                f"{key} is set: tokenmill neither truncates nor pads, so its ids would differ "
                f'from HF\'s; set "{key}": null'
            )
    normalizer = _normalizer_of(doc.get("normalizer"), refuse)
    model = doc.get("model")
    if not isinstance(model, dict) or model.get("type") != "BPE":
        found = model.get("type") if isinstance(model, dict) else kind(model)
        raise refuse(f"not a BPE model: expected model.type 'BPE', found {found!r}")
    ignore_merges = _check_model_options(model, refuse)
    pattern = _pattern_of(doc.get("pre_tokenizer"), refuse)
    _check_component("decoder", doc.get("decoder"), ("ByteLevel",), refuse)
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise refuse(f"model.vocab must be an object of token -> id, not {kind(vocab)}")
    _check_ids(vocab, refuse)
    added = _added_tokens(doc.get("added_tokens"), vocab, normalizer, refuse)
    specials = added.ids
    template = _template_of(doc.get("post_processor"), specials, refuse)
    ordinary = vocab  # a file's added tokens are seldom in its vocab: then there is no copy
    if not specials.keys().isdisjoint(vocab):
        ordinary = {text: idx for text, idx in vocab.items() if text not in specials}
    texts, tokens = _ordinary_tokens(ordinary, refuse)
    for text, idx in specials.items():
        if idx < len(tokens) and tokens[idx]:
            raise refuse(
                f"the added token {text!r} has id {idx}, which is the ordinary token "
                f"{texts[idx]!r}'s"
            )
    merges, parts, results = _merges(model.get("merges"), ordinary, refuse)
    return BpeFile(
        tokens,
        texts,
        ordinary,
        pattern,
        specials,
        merges,
        parts,
        results,
        ignore_merges,
        normalizer,
        template,
        added,
    )


def _check_ids(vocab: dict[str, Any], refuse: Refuse) -> None:
    """Refuse a ``model.vocab`` with an id that is not an integer in 0..MAX_ID: checked in
    whole-list passes, then one by one to name the first at fault."""
    ids = vocab.values()
    # type() rather than isinstance, as in is_id: a bool is an int.
    if not vocab or (set(map(type, ids)) == {int} and min(ids) >= 0 and max(ids) <= loading.MAX_ID):
        return
    for text, idx in vocab.items():
        if not is_id(idx):
            raise refuse(
                f"model.vocab gives {text!r} the id {idx!r}: an id must be an integer in "
                f"0..{loading.MAX_ID}"
            )


def check_merges(bpe: BpeFile, parents: list[tuple[int, int] | None], source: str) -> None:
    """Refuse a file whose merges give other ids than tiktoken's rule: conditions 2 and 3 of
    the module docstring, and of 1 that a merge's parts are ordinary tokens (:func:`parse`
    checks the rest). ``parents[i]`` is token ``i``'s parents under tiktoken's rule, None when
    the rule never makes it (``merge_parents`` of the core).

    The conditions are checked with whole-list passes (:func:`merges_agree`: Llama 3 lists
    280,147 merges); when one fails, the merges and tokens are gone through one by one to name
    the first at fault.
    """
    if merges_agree(bpe, parents):
        return

    def refuse(problem: str) -> VocabFileError:
        return VocabFileError(source, None, problem)

    refuse_first_disagreement(bpe, parents, refuse)
    raise AssertionError("the merges failed the whole-list checks but none one by one")


def merges_agree(bpe: BpeFile, parents: list[tuple[int, int] | None]) -> bool:
    """Whether :func:`check_merges` accepts the file: each merge's parts are ordinary tokens,
    each token the rule makes by merging has the merge of its parents listed, and with
    ``ignore_merges`` false every token of two or more bytes is one the rule makes."""
    if not bpe.ids.keys() >= set(bpe.parts):
        return False
    # The merges of the tokens' parents, spelled "left right" as the merges are (parts hold no
    # space, so the spelling names a merge alone), each struck off when it is listed.
    texts = bpe.texts
    unlisted = {f"{texts[a]} {texts[b]}" for a, b in filter(None, parents)}
    unlisted.difference_update(bpe.merges)
    if unlisted:
        return False
    # The rule makes no single byte by merging, so the bytes are always without parents, as
    # are gaps (ids without a token): any other token without them is one the rule never makes.
    if bpe.ignore_merges:
        return True
    singles = sum(map((1).__eq__, map(len, bpe.tokens)))
    return parents.count(None) - texts.count("") == singles


def refuse_first_disagreement(
    bpe: BpeFile, parents: list[tuple[int, int] | None], refuse: Refuse
) -> None:
    """Raise for the first merge with a part that is no ordinary token, else the first token
    whose parents' merge is not listed, else (:func:`_check_reachable`) the first token of two
    or more bytes the rule never makes."""
    texts, parts = bpe.texts, bpe.parts
    merges = list(zip(parts[0::2], parts[1::2], strict=True))
    for k, merge in enumerate(merges):
        part = next((part for part in merge if part not in bpe.ids), None)
        if part is not None:
            raise refuse(
                f"model.merges[{k}] ({_spelled(merge)}): {part!r} is not an ordinary token "
                "of model.vocab"
            )
    listed = set(merges)
    missing = next(
        (
            i
            for i, pair in enumerate(parents)
            if pair is not None and (texts[pair[0]], texts[pair[1]]) not in listed
        ),
        None,
    )
    if missing is not None:
        spelled = _spelled(texts[i] for i in parents[missing] or ())
        other = next((m for m, r in zip(merges, bpe.results, strict=True) if r == missing), None)
        how = f"model.merges makes it only from {_spelled(other)}" if other else "no merge makes it"
        raise refuse(
            f"token {texts[missing]!r} (id {missing}): {how}, but tiktoken's rule, which "
            f"tokenmill encodes by, makes it from {spelled}, so HF's ids would differ"
        )
    _check_reachable(bpe, parents, refuse)


def _check_reachable(bpe: BpeFile, parents: list[tuple[int, int] | None], refuse: Refuse) -> None:
    """Condition 3 of the module docstring."""
    if bpe.ignore_merges:
        return
    texts = bpe.texts
    # A single byte, or a token the rule never makes by merging: tiktoken's rule gives it for
    # a chunk that is exactly it, HF does only with ignore_merges.
    never = next((i for i, p in enumerate(parents) if p is None and len(texts[i]) > 1), None)
    if never is not None:
        raise refuse(
            f"token {texts[never]!r} (id {never}) is one that tiktoken's rule, which "
            "tokenmill encodes by, never makes by merging: tokenmill gives it for a chunk "
            "that is exactly it, HF with ignore_merges false does not"
        )


def _spelled(parts: Iterable[str]) -> str:
    """Two parts as messages show them: 'a' + 'b'."""
    return " + ".join(map(repr, parts))


def _describe(node: object) -> str:
    """A component as messages name it: its type, else its JSON kind."""
    if isinstance(node, dict) and isinstance(node.get("type"), str):
        return str(node["type"])
    return kind(node)


def _setting(node: dict[str, Any], key: str) -> str:
    return json.dumps(node[key]) if key in node else "missing"


def _check_model_options(model: dict[str, Any], refuse: Refuse) -> bool:
    """Refuse the BPE options tokenmill does not run; return ``ignore_merges``."""
    dropout = model.get("dropout")
    if dropout is not None and (
        isinstance(dropout, bool) or not isinstance(dropout, int | float) or dropout != 0
    ):
        raise refuse(
            f"model dropout {_setting(model, 'dropout')} is not supported: HF then skips merges "
            "at random, tokenmill always merges (expected null or 0)"
        )
    if model.get("byte_fallback", False) is not False:
        raise refuse(
            f"model byte_fallback {_setting(model, 'byte_fallback')} is not supported: "
            "tokenmill's vocabularies are byte-level (expected false)"
        )
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise refuse(
                f"model {key} {_setting(model, key)} is not supported: tokenmill's tokens carry "
                "no word-piece markers (expected null or empty)"
            )
    if not isinstance(model.get("unk_token"), str | None):
        raise refuse(f"model.unk_token must be a string or null, not {kind(model['unk_token'])}")
    ignore_merges = model.get("ignore_merges", False)
    if not isinstance(ignore_merges, bool):
        raise refuse(f"model.ignore_merges must be true or false, not {kind(ignore_merges)}")
    return ignore_merges


@dataclass(frozen=True)
class AddedTokens:
    """A file's added tokens, and how HF matches them."""

    ids: dict[str, int]
    # Those with special false: tokenmill's added tokens; the others are its special tokens.
    plain: frozenset[str] = frozenset()
    # Looked for in the normalized text (see _added_tokens).
    normalized: frozenset[str] = frozenset()
    lstrip: frozenset[str] = frozenset()  # take the whitespace before them
    rstrip: frozenset[str] = frozenset()  # ... and after them


def _added_tokens(
    raw: object, vocab: dict[str, int], normalizer: str | None, refuse: Refuse
) -> AddedTokens:
    """The added tokens as special tokens, each checked to be at the id HF gives it, and
    how HF matches them (see below)."""
    if raw is None:
        return AddedTokens({})
    if not isinstance(raw, list):
        raise refuse(f"added_tokens must be a list, not {kind(raw)}")
    specials: dict[str, int] = {}
    normalized: dict[str, bool] = {}
    lstrip: set[str] = set()
    rstrip: set[str] = set()
    plain: set[str] = set()
    next_id = len(vocab)  # HF numbers added tokens missing from the vocab from here on
    for k, entry in enumerate(raw):
        where = f"added_tokens[{k}]"
        if not isinstance(entry, dict):
            raise refuse(f"{where} must be an object, not {kind(entry)}")
        content = entry.get("content")
        if not isinstance(content, str) or not content:
            raise refuse(f'{where}: "content" must be a non-empty string, not {content!r}')
        if problem := _lone_surrogate(content):
            raise refuse(f'{where}: "content" {content!r:.60} holds {problem}')
        where = f"{where} ({content!r})"
        idx = entry.get("id")
        if not is_id(idx):
            raise refuse(f'{where}: "id" must be an integer in 0..{loading.MAX_ID}, not {idx!r}')
        for flag in ("special", "single_word", "lstrip", "rstrip", "normalized"):
            if not isinstance(entry.get(flag), bool):
                raise refuse(
                    f'{where}: "{flag}" must be true or false, not {kind(entry.get(flag))}'
                )
        if entry["single_word"]:
            raise refuse(
                f"added token {content!r} has single_word true: tokenmill matches special "
                "tokens exactly, without HF's single_word rule"
            )
        if content in specials:
            raise refuse(f"added token {content!r} is listed twice")
        if content in vocab:
            hf_id = vocab[content]
            spelled = datagym.bytes_or_none(content)
            if spelled is not None and spelled != content.encode():
                # HF's model would also give this id for the text those bytes are.
                raise refuse(
                    f"added token {content!r} is also in model.vocab, where it spells the bytes "
                    f"{spelled!r}: HF's model can give its id for those bytes, tokenmill cannot"
                )
        else:
            hf_id, next_id = next_id, next_id + 1
        if idx != hf_id:
            why = "its id in model.vocab" if content in vocab else "the next id past model.vocab"
            raise refuse(f"added token {content!r} has id {idx}, but HF gives it {hf_id} ({why})")
        specials[content] = idx
        if not entry["special"]:
            plain.add(content)
        normalized[content] = entry["normalized"]
        for flag, names in (("lstrip", lstrip), ("rstrip", rstrip)):
            if entry[flag]:
                names.add(content)
    # HF matches the added tokens with normalized false first, then the others, normalized, in
    # the normalized text between them (Tokenizer.normalized_specials). Without a normalizer
    # that is matching all at once unless a match of the first kind can start inside one of
    # the second, and all at once is one pass over the text instead of two.
    # HF's search resumes where a match ended, before the whitespace rstrip takes; tokenmill's
    # after it. The same unless an added token starts with whitespace.
    if rstrip and (spaced := next((t for t in specials if t[0].isspace()), None)):
        raise refuse(
            f"added token {spaced!r} starts with whitespace beside tokens with rstrip true: HF "
            "can match it inside the whitespace they take, tokenmill cannot"
        )
    strips = {"lstrip": frozenset(lstrip), "rstrip": frozenset(rstrip), "plain": frozenset(plain)}
    late = [t for t, n in normalized.items() if n]
    if (
        normalizer is None
        and _first_clash([t for t in specials if not normalized[t]], late) is None
    ):
        return AddedTokens(specials, **strips)
    return AddedTokens(specials, normalized=frozenset(late), **strips)


def _first_clash(first: list[str], later: list[str]) -> tuple[str, str] | None:
    """A token of ``first`` and one of ``later`` such that matching ``first`` before
    ``later`` (HF's two passes) differs from matching all at once, leftmost and longest: the
    first token lies inside the later one, or starts inside it and runs past its end. None when
    there is none (DeepSeek V3's tokens of each kind never overlap one another)."""
    if not first or not later:
        return None
    firsts = set(first)
    starts = {f[:i] for f in first for i in range(1, len(f))}
    lengths = sorted(set(map(len, first)))
    for t in later:
        for i in range(len(t)):
            for n in lengths:
                if i + n <= len(t) and t[i : i + n] in firsts:
                    return t[i : i + n], t
            if i > 0 and t[i:] in starts:
                f = next(f for f in first if f.startswith(t[i:]))
                return f, t
    return None


def _ordinary_tokens(ordinary: dict[str, int], refuse: Refuse) -> tuple[list[str], list[bytes]]:
    """The ordinary tokens by id, as spelled and as bytes; ``""`` and
    ``b""`` for an id no ordinary token has (a gap, as tokenmill's core takes them: fewer gaps
    than tokens)."""
    n = len(ordinary)
    by_id = dict(zip(ordinary.values(), ordinary, strict=True))
    top = max(by_id, default=-1)
    # n distinct ids, none past n - 1 (none is negative), are 0..n-1 once each.
    if len(by_id) == n and "" not in ordinary and top < n:
        texts = list(map(by_id.__getitem__, range(n)))
    else:
        if top >= 2 * n:
            text = by_id[top]
            raise refuse(
                f"token {text!r} has id {top}, far past the {n} ordinary tokens: ids may leave "
                "fewer gaps than there are tokens"
            )
        texts = [""] * (top + 1)
        for text, idx in ordinary.items():
            if not text:
                raise refuse("model.vocab has the empty string as a token")
            if texts[idx]:
                raise refuse(
                    f"tokens {texts[idx]!r} and {text!r} have the same id {idx}: each ordinary "
                    "token needs an id of its own"
                )
            texts[idx] = text
    # The alphabet spells a byte a character, so the whole vocabulary converts at once and is
    # cut by the texts' lengths.
    spelled = datagym.bytes_or_none("".join(texts))
    if spelled is None:
        text = next(t for t in texts if datagym.bytes_or_none(t) is None)
        raise refuse(
            f"model.vocab has the token {text!r}, which is not spelled in GPT-2's byte "
            "alphabet: tokenmill reads byte-level BPE only"
        )
    ends = list(itertools.accumulate(map(len, texts)))
    tokens = [spelled[start:end] for start, end in itertools.pairwise([0, *ends])]
    # Whether every byte UTF-8 text holds is a token, the core checks (it builds the tokenizer).
    return texts, tokens


# HF's Digits and Punctuation pre-tokenizers as the Split regexes that cut the same pieces:
# Digits isolates each character Rust's char::is_numeric takes (Unicode's N categories), or
# with individual_digits false each run of them; Punctuation each ASCII punctuation character
# and each of Unicode's P categories (behavior Isolated), or each run of them (Contiguous).
_DIGITS = {True: r"\p{N}", False: r"\p{N}+"}
_PUNCTUATION = {"Isolated": r"[\p{P}!-/:-@\[-`{-~]", "Contiguous": r"[\p{P}!-/:-@\[-`{-~]+"}


def _pattern_of(pre: object, refuse: Refuse) -> str | list[str]:
    """The split regexes in effect, one after another: of the ``Split``, ``Digits`` and
    ``Punctuation`` pre-tokenizers before the ``ByteLevel`` one, then ``ByteLevel``'s own
    (GPT-2's) if it has ``use_regex``; a list when there are several."""
    expected = (
        "expected ByteLevel (add_prefix_space false), alone or in a Sequence after Split, "
        "Digits or Punctuation pre-tokenizers"
    )
    if not isinstance(pre, dict):
        raise refuse(f"pre_tokenizer is {kind(pre)}: {expected}")
    nodes: list[tuple[str, object]] = [("pre_tokenizer", pre)]
    if pre.get("type") == "Sequence":
        inner = pre.get("pretokenizers")
        if not isinstance(inner, list):
            raise refuse(f"pre_tokenizer.pretokenizers must be a list, not {kind(inner)}")
        nodes = [(f"pre_tokenizer.pretokenizers[{i}]", node) for i, node in enumerate(inner)]
    splits: list[str] = []
    byte_level = False
    for where, node in nodes:
        if not isinstance(node, dict):
            raise refuse(f"{where} must be an object, not {kind(node)}")
        what = node.get("type")
        if what == "Split" and not byte_level:
            splits.append(_split_regex(node, where, refuse))
        elif what == "Digits" and not byte_level:
            individual = node.get("individual_digits", False)
            if not isinstance(individual, bool):
                raise refuse(f"{where}: individual_digits must be true or false")
            splits.append(_DIGITS[individual])
        elif what == "Punctuation" and not byte_level:
            behavior = node.get("behavior", "Isolated")
            if behavior not in _PUNCTUATION:
                raise refuse(
                    f"{where} Punctuation has behavior {_setting(node, 'behavior')}: tokenmill "
                    'keeps each match as a piece (expected "Isolated" or "Contiguous")'
                )
            splits.append(_PUNCTUATION[behavior])
        elif what == "ByteLevel" and not byte_level:
            if node.get("add_prefix_space") is not False:
                raise refuse(
                    f"{where} ByteLevel has add_prefix_space {_setting(node, 'add_prefix_space')}"
                    ": HF then puts a space before the text, tokenmill never does (expected false)"
                )
            use_regex = node.get("use_regex", True)
            if not isinstance(use_regex, bool):
                raise refuse(f"{where}: use_regex must be true or false, not {kind(use_regex)}")
            if use_regex:
                splits.append(PATTERNS["gpt2"])
            byte_level = True
        else:
            moved = ("Split", "ByteLevel", "Digits", "Punctuation")
            after = " after ByteLevel" if byte_level and what in moved else ""
            raise refuse(
                f"{where}: pre-tokenizer {_describe(node)}{after} is not supported: {expected}"
            )
    if not byte_level:
        raise refuse(f"no ByteLevel pre-tokenizer: {expected}")
    if not splits:
        raise refuse(
            "no split regex in effect (ByteLevel's use_regex is false and no Split comes "
            "before it): tokenmill splits by one regex at least"
        )
    named = {hf_pattern(full): full for full in PATTERNS.values()}
    patterns = [named.get(split, split) for split in splits]
    return patterns[0] if len(patterns) == 1 else patterns


def _split_regex(node: dict[str, Any], where: str, refuse: Refuse) -> str:
    pattern = node.get("pattern")
    regex = pattern.get("Regex") if isinstance(pattern, dict) else None
    if not isinstance(regex, str):
        raise refuse(
            f"{where} Split has pattern {_setting(node, 'pattern')}: expected "
            '{"Regex": "..."} (tokenmill splits by a regex)'
        )
    if problem := _lone_surrogate(regex):
        raise refuse(f"{where} Split's regex {regex!r:.60} holds {problem}")
    invert = node.get("invert")
    if not isinstance(invert, bool):
        raise refuse(f"{where} Split: invert must be true or false, not {kind(invert)}")
    behavior = node.get("behavior")
    # Inverted, the text the regex does not match is the delimiter: "Removed" drops it, which
    # changes nothing when the regex matches every character, as the patterns a scanner runs
    # do (DBRX's, OLMo 2's and Phi's files split so).
    total = invert and behavior == "Removed" and scanner(regex) is not None
    if behavior != "Isolated" and not total:
        raise refuse(
            f"{where} Split has behavior {_setting(node, 'behavior')} "
            f"(invert {str(invert).lower()}): tokenmill keeps each match and the text between "
            'matches as pieces (expected "Isolated", or "Removed" with invert true and a regex '
            "that matches every character)"
        )
    found = _POSSESSIVE_INTERVAL.search(regex)
    if found:
        raise refuse(
            f"{where} Split's regex has the possessive interval {found.group(0)!r}, which HF's "
            "regex engine (Oniguruma) reads as a repeated interval and tokenmill's as "
            "possessive, so they would split text differently"
        )
    return regex


def _normalizer_of(node: object, refuse: Refuse) -> str | None:
    """The normalization form of a ``normalizer`` (one of Unicode's, alone or the one
    non-empty step of a Sequence), or None for none; any other is refused."""
    steps: list[object] = [node]
    if isinstance(node, dict) and node.get("type") == "Sequence":
        inner = node.get("normalizers")
        if not isinstance(inner, list):
            raise refuse(f"normalizer.normalizers must be a list, not {kind(inner)}")
        steps = [step for step in inner if not _is_no_op(step, "normalizers")]
    if not steps or steps == [None]:
        return None
    if len(steps) == 1 and _describe(steps[0]) in loading.NORMALIZERS:
        return _describe(steps[0])
    what = " + ".join(_describe(step) for step in steps)
    raise refuse(
        f"normalizer {what} is not supported: tokenmill runs one of "
        f"{', '.join(loading.NORMALIZERS)} or none, so its ids would differ from HF's"
    )


def _is_no_op(node: object, key: str) -> bool:
    """Whether a normalizer (``key`` "normalizers") or post-processor is null or a Sequence of
    none (as DeepSeek's files have)."""
    return node is None or (
        isinstance(node, dict) and node.get("type") == "Sequence" and node.get(key) == []
    )


def _template_of(node: object, specials: dict[str, int], refuse: Refuse) -> Template:
    """The special tokens a post-processor adds around a text when HF is asked to add them:
    ``TemplateProcessing``'s single template (Llama 3's ``<|begin_of_text|> $A``),
    ``RobertaProcessing``'s and ``BertProcessing``'s ``cls $A sep``; ``ByteLevel`` moves only
    offsets. A ``Sequence`` may hold one that adds tokens (Llama 3.1's and GLM-4's files put
    ``ByteLevel`` beside ``TemplateProcessing``). Every id added must be an added token's."""
    if node is None:
        return Template()
    inner = node.get("processors") if isinstance(node, dict) else None
    if isinstance(node, dict) and node.get("type") == "Sequence" and isinstance(inner, list):
        found = [
            _one_template(f"post_processor.processors[{k}]", p, refuse) for k, p in enumerate(inner)
        ]
        adding = [t for t in found if t]
        if len(adding) > 1:
            raise refuse("post_processor is a Sequence with two processors that add tokens")
        template = adding[0] if adding else Template()
    else:
        template = _one_template("post_processor", node, refuse)
    known = set(specials.values())
    for i in template.ids:
        if i not in known:
            raise refuse(f"post_processor adds id {i}, which is no added token's")
    return template


def _one_template(key: str, node: object, refuse: Refuse) -> Template:
    kind_of = _describe(node)
    if kind_of == "ByteLevel":
        return Template()
    if kind_of in ("RobertaProcessing", "BertProcessing"):
        ends = [cast("dict[str, Any]", node).get(side) for side in ("cls", "sep")]
        if not all(isinstance(e, list) and len(e) == 2 and is_id(e[1]) for e in ends):
            raise refuse(f'{key} {kind_of}: "cls" and "sep" must each be [token, id]')
        return Template((ends[0][1],), (ends[1][1],))  # type: ignore[index]
    if kind_of != "TemplateProcessing":
        raise refuse(
            f"{key} {kind_of} is not supported: expected null, ByteLevel, TemplateProcessing, "
            "RobertaProcessing, BertProcessing or a Sequence of them"
        )
    node = cast("dict[str, Any]", node)
    single, named = node.get("single"), node.get("special_tokens")
    if not isinstance(single, list) or not isinstance(named, dict):
        raise refuse(
            f'{key} TemplateProcessing needs a "single" list and a "special_tokens" object'
        )
    sides: tuple[list[int], list[int]] = ([], [])
    texts = 0
    for piece in single:
        if isinstance(piece, dict) and isinstance(piece.get("Sequence"), dict):
            if piece["Sequence"].get("id") != "A" or texts:
                raise refuse(f'{key} TemplateProcessing: "single" must hold the text $A once')
            texts += 1
            continue
        token = piece.get("SpecialToken") if isinstance(piece, dict) else None
        name = token.get("id") if isinstance(token, dict) else None
        entry = named.get(name) if isinstance(name, str) else None
        ids = entry.get("ids") if isinstance(entry, dict) else None
        if not isinstance(ids, list) or not all(is_id(i) for i in ids):
            raise refuse(
                f"{key} TemplateProcessing: {piece!r:.80} is not $A or a special token that "
                '"special_tokens" gives ids'
            )
        sides[texts].extend(ids)
    if not texts:
        raise refuse(f'{key} TemplateProcessing: "single" must hold the text $A once')
    return Template(tuple(sides[0]), tuple(sides[1]))


def _check_component(key: str, node: object, allowed: tuple[str, ...], refuse: Refuse) -> None:
    if node is not None and _describe(node) not in allowed:
        raise refuse(
            f"{key} {_describe(node)} is not supported: expected null or {' or '.join(allowed)}"
        )


ParsedMerges = tuple[list[str], list[str], list[int]]


def _merges(raw: object, ordinary: dict[str, int], refuse: Refuse) -> ParsedMerges:
    """The merges as "left right" strings, their parts (left, right, left, right...) and the
    ids they make, which must be ordinary tokens' and never decrease along the list. (Whether
    the parts are tokens, :func:`check_merges` sees.)

    A file's merges are checked with whole-list passes (:func:`merges_at_once`); when one
    fails, the merges are gone through one by one to name the first at fault.
    """
    if not isinstance(raw, list):
        raise refuse(f"model.merges must be a list, not {kind(raw)}")
    found = merges_at_once(raw, ordinary)
    if found is not None:
        return found
    refuse_first_bad_merge(raw, ordinary, refuse)
    raise AssertionError("a merge failed the whole-list checks but none one by one")


def merges_at_once(raw: list[Any], ordinary: dict[str, int]) -> ParsedMerges | None:
    """What :func:`_merges` returns, from whole-list passes; None when a merge is at fault."""
    if not raw:
        return [], [], []
    merges = _merge_strings(raw)
    if merges is None:
        return None
    # One newline-separated text splits into all the parts, or all the results, at once. Its
    # lines are the merges when none holds a newline; each merge holds exactly one space when
    # each holds a space and there are as many spaces as merges.
    lines = "\n".join(merges)
    if not (
        lines.count("\n") == len(merges) - 1
        and lines.count(" ") == len(merges)
        and all(map(str.__contains__, merges, itertools.repeat(" ")))
    ):
        return None
    results = list(map(ordinary.get, lines.replace(" ", "").split("\n")))
    if None in results:
        return None
    ids = cast(list[int], results)
    if ids != sorted(ids):
        return None
    return merges, lines.replace("\n", " ").split(" "), ids


def _merge_strings(raw: list[Any]) -> list[str] | None:
    """The merges spelled "left right" (a file may give ``["left", "right"]``), or None when
    one is neither a string nor a list of two strings."""
    types = set(map(type, raw))
    if types == {str}:
        return raw
    if not types <= {str, list}:
        return None
    pairs = [m for m in raw if type(m) is list]
    if set(map(len, pairs)) != {2} or set(map(type, itertools.chain.from_iterable(pairs))) != {str}:
        return None
    return [m if type(m) is str else " ".join(m) for m in raw]


def refuse_first_bad_merge(raw: list[Any], ordinary: dict[str, int], refuse: Refuse) -> None:
    """Raise for the first merge that is not two strings making an ordinary token, or that
    makes a lower id than the merge before it."""
    last = -1
    for k, merge in enumerate(raw):
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not (
            isinstance(parts, list)
            and len(parts) == 2
            and all(isinstance(part, str) for part in parts)
        ):
            raise refuse(f'model.merges[{k}] must be "a b" or ["a", "b"], not {merge!r}')
        made = "".join(parts)
        if made not in ordinary:
            raise refuse(
                f"model.merges[{k}] ({_spelled(parts)}) makes {made!r}, which is not an "
                "ordinary token of model.vocab"
            )
        if ordinary[made] < last:
            raise refuse(
                f"model.merges[{k}] makes {made!r}, id {ordinary[made]}, after a merge made id "
                f"{last}: HF merges in the list's order, tokenmill by id, so the ids of the "
                "merges' results must not decrease along the list"
            )
        last = ordinary[made]


def _lone_surrogate(text: str) -> str | None:
    """A lone surrogate in ``text`` (which JSON's ``"\\ud800"`` gives, and UTF-8 text cannot
    hold), described with its position; None when there is none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"a lone surrogate U+{ord(text[e.start]):04X} at position {e.start}"
    return None
