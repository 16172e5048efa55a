"""Changing a vocabulary: ``with_tokens``, ``with_special_tokens``, ``without`` and
``embedding.remap``.

Oracles: HF ``tokenizers`` reading tokenmill's export of the base tokenizer and then running its
own ``add_tokens`` / ``add_special_tokens`` gives the ids ``with_tokens`` /
``with_special_tokens`` give; ``reference.remove`` (on the merge list) defines what ``without``
leaves of a trained tokenizer, and the reference encoder encodes with it; on tiktoken's
vocabularies, a text whose tokens all stay encodes to the same tokens, renumbered.
"""

from __future__ import annotations

import functools
import json
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import Tokenizer, reference
from tokenmill.embedding import embedding_table, grow, remap

tokenizers = pytest.importorskip("tokenizers")

NEW = ["<think>", "</think>", " tokenmill", "Ωmega", "  \t"]  # none is a gpt2 token


@functools.cache
def holmes() -> str:
    return tokenmill.sources.bundled_corpus("holmes")


@functools.cache
def trained() -> Tokenizer:
    base = tokenmill.train(holmes(), 600, pattern="gpt2")
    return base.with_special_tokens(["<|endoftext|>"])


def merges(tok: Tokenizer) -> list[tuple[int, int, int]]:
    assert tok.merges is not None
    return [(m.left, m.right, m.count) for m in tok.merges]


TEXTS = st.lists(
    st.sampled_from([*NEW, "<think", "Ω", "mega", " token", "mill", "a", " ", "\t", "é\n"]),
    max_size=10,
).map("".join) | st.text(max_size=30)


# --------------------------------------------------------------------------- adding tokens


@functools.cache
def added_both_ways(special: bool) -> tuple[Tokenizer, tokenizers.Tokenizer]:
    """gpt2 with NEW added (as special tokens or not) by tokenmill and by HF."""
    enc = tokenmill.load("gpt2")
    hf = tokenizers.Tokenizer.from_str(json.dumps(tokenmill.formats.hf.to_dict(enc)))
    if special:
        assert hf.add_special_tokens(NEW) == len(NEW)
        return enc.with_special_tokens(NEW), hf
    assert hf.add_tokens(NEW) == len(NEW)
    return enc.with_tokens(NEW), hf


@settings(max_examples=200, deadline=None)
@given(text=TEXTS)
def test_with_tokens_gives_hf_add_tokens_ids(text):
    tok, hf = added_both_ways(special=False)
    want = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text) == want
    assert tok.encode_ordinary(text) == want
    assert tok.count(text) == len(want)
    assert tok.decode(want) == text


@settings(max_examples=100, deadline=None)
@given(text=TEXTS)
def test_with_special_tokens_gives_hf_add_special_tokens_ids(text):
    tok, hf = added_both_ways(special=True)
    assert tok.encode(text, allowed_special="all") == hf.encode(text).ids
    hf.encode_special_tokens = True
    try:
        assert tok.encode_ordinary(text) == hf.encode(text).ids
    finally:
        hf.encode_special_tokens = False


def test_new_ids_follow_in_order_and_the_rest_is_kept():
    enc = tokenmill.load("cl100k_base")
    tok = enc.with_tokens(["<a>", "<b>", "<a>"])
    assert tok.added_tokens == {"<a>": enc.n_vocab, "<b>": enc.n_vocab + 1}
    assert tok.special_tokens == enc.special_tokens
    assert tok.scanner == enc.scanner
    assert tok.token_bytes_list() == enc.token_bytes_list()
    again = tok.with_tokens(["<b>", "<c>"])  # an added token keeps its id
    assert again.added_tokens["<c>"] == enc.n_vocab + 2
    chat_tokens = {"<|im_start|>": 100264, "<|im_end|>": 100265}
    chat = enc.with_special_tokens(chat_tokens)
    assert chat.special_tokens == enc.special_tokens | chat_tokens
    assert chat.n_vocab == enc.n_vocab  # ids in cl100k's gap
    assert enc.with_special_tokens(["<|endoftext|>"]) == enc
    assert enc.with_tokens([]) == enc


def test_added_tokens_keep_what_hf_files_carry():
    enc = tokenmill.load("gpt2")
    parts = {
        "normalizer": "NFC",
        "template": tokenmill.Template(prefix=(50257,)),
        "lstrip_specials": ["<s>"],
        "normalized_specials": ["<n>"],
    }
    specials = {"<|endoftext|>": 50256, "<s>": 50257, "<n>": 50258}
    tok = Tokenizer(enc.token_bytes_list(), enc.pattern, specials, **parts)
    got = tok.with_tokens(["<t>"]).with_special_tokens(["<u>"])
    want = Tokenizer(
        enc.token_bytes_list(),
        enc.pattern,
        specials | {"<u>": 50260},
        added_tokens={"<t>": 50259},
        **parts,
    )
    assert got == want
    for text in ("a <s>e\u0301<t> <n><u>", "<t><t>  <s>"):
        for special in (True, False):
            assert got.encode(text, allowed_special="all", add_special_tokens=special) == (
                want.encode(text, allowed_special="all", add_special_tokens=special)
            )


@pytest.mark.parametrize("removed", [[], [300, 450]])
def test_edited_tokenizers_save_and_pickle(tmp_path, removed):
    tok = trained().with_tokens(["<think>"]).with_special_tokens(["<|pad|>"])
    tok, _ = tok.without(removed)
    assert pickle.loads(pickle.dumps(tok)) == tok
    text = "<think> Holmes, hi<|pad|>"
    for name in ("t.tokenmill", "tokenizer.json"):
        (path,) = [p for p in tok.save(tmp_path / name) if not p.endswith(".txt")]
        back = tokenmill.load(path)
        assert back == tok
        assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_adding_refuses_what_it_cannot_add():
    enc = tokenmill.load("gpt2")
    with pytest.raises(tokenmill.InvalidArgumentError, match="already ordinary token 31373"):
        enc.with_tokens(["hello"])
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="already a special token"):
        enc.with_tokens(["<|endoftext|>"])
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="already an added token"):
        enc.with_tokens(["<t>"]).with_special_tokens(["<t>"])
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="with id 50256"):
        enc.with_special_tokens({"<|endoftext|>": 50257})
    with pytest.raises(tokenmill.InvalidSpecialTokensError):
        enc.with_special_tokens({"<x>": 5})  # an ordinary id
    with pytest.raises(TypeError, match="list of strings"):
        enc.with_tokens("<think>")
    with pytest.raises(TypeError, match="not a set"):
        enc.with_tokens({"<a>", "<b>"})
    with pytest.raises(TypeError, match="non-empty strings"):
        enc.with_tokens(["<a>", ""])
    with pytest.raises(TypeError, match="non-empty strings"):
        enc.with_special_tokens([b"<a>"])


# -------------------------------------------------------------------------- removing tokens


def tiktoken_rule(text: str, tokens: list[bytes], pattern: str) -> list[int]:
    """tiktoken's encoding, spelled out: a chunk that is a token is that token, else
    ``reference.merge_by_rank`` on it."""
    ranks = {t: i for i, t in enumerate(tokens)}
    ids = []
    for chunk in reference.split(text, pattern):
        piece = chunk.encode("utf-8")
        parts = [piece] if piece in ranks else reference.merge_by_rank(piece, ranks)
        ids += [ranks[p] for p in parts]
    return ids


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_without_on_a_trained_tokenizer_is_reference_remove(data):
    tok = trained()
    removed = data.draw(st.lists(st.integers(256, tok.n_vocab - 2), max_size=6))
    pruned, new_id = tok.without(removed)
    want_tokens, want_id = reference.remove(tok.token_bytes_list(), removed)
    assert pruned.token_bytes_list() == want_tokens
    assert new_id.tolist() == [-1 if i is None else i for i in want_id] + [len(want_tokens)]
    assert pruned.special_tokens == {"<|endoftext|>": len(want_tokens)}
    assert int(new_id[tok.eot_token]) == pruned.eot_token
    start = data.draw(st.integers(0, 200_000))
    text = holmes()[start : start + 3000]
    assert pruned.encode_ordinary(text) == tiktoken_rule(text, want_tokens, "gpt2")
    if pruned.merges is not None:  # kept only when they are still what encoding does
        assert pruned.encode_ordinary(text) == reference.encode(
            text, merges(pruned), pattern="gpt2"
        )
        kept = [m for k, m in enumerate(tok.merges) if new_id[256 + k] >= 0]
        assert merges(pruned) == [(new_id[m.left], new_id[m.right], m.count) for m in kept]


def test_without_takes_the_tokens_it_can_no_longer_make():
    enc = tokenmill.load("gpt2")
    ale = enc.encode_single_token("ale")
    pruned, new_id = enc.without([ale])
    want_tokens, want_id = reference.remove(enc.token_bytes_list(), [ale])
    assert pruned.token_bytes_list() == want_tokens
    assert new_id[: len(want_id)].tolist() == [-1 if i is None else i for i in want_id]
    gone = [enc.decode_single_token_bytes(int(i)) for i in np.flatnonzero(new_id < 0)]
    # " male" was " m" + "ale" and is now " mal" + "e"; " female" (" fem" + "ale") is not made.
    assert b" female" in gone and b" male" not in gone
    assert pruned.decode_tokens_bytes(pruned.merge_parents()[pruned.rank(b" male")]) == [
        b" mal",
        b"e",
    ]
    assert pruned.merge_parents().count(None) == enc.merge_parents().count(None)  # the bytes


@functools.cache
def pruned_of(name: str) -> tuple[Tokenizer, np.ndarray]:
    enc = tokenmill.load(name)
    gone = [enc.encode_single_token(" world"), 1000, 5000]
    pruned, new_id = enc.without(gone)
    assert (new_id[gone] == -1).all()
    return pruned, new_id


@settings(max_examples=100, deadline=None)
@given(
    text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
    | st.sampled_from(["hello world", "hello there", " worlds apart", "   x"])
)
def test_text_of_kept_tokens_encodes_to_the_same_tokens_renumbered(text):
    for name in ("gpt2", "cl100k_base"):
        enc = tokenmill.load(name)
        pruned, new_id = pruned_of(name)
        ids = enc.encode(text, disallowed_special=())
        got = pruned.encode(text, disallowed_special=())
        if (new_id[ids] >= 0).all():
            assert got == new_id[ids].tolist()
        assert pruned.decode(got) == text


def test_without_closes_ids_up_and_keeps_specials_and_hf_agrees():
    enc = tokenmill.load("gpt2")
    magikarp = enc.encode_single_token(" SolidGoldMagikarp")
    pruned, new_id = enc.without([magikarp, enc.eot_token])
    assert new_id.shape == (enc.n_vocab,) and new_id.dtype == np.int64
    assert new_id[:magikarp].tolist() == list(range(magikarp))
    assert pruned.n_vocab == enc.n_vocab - 2 and pruned.special_tokens == {}
    assert pruned.encode_single_token(" world") == 995
    hf = tokenizers.Tokenizer.from_str(json.dumps(tokenmill.formats.hf.to_dict(pruned)))
    for text in ("hi SolidGoldMagikarp", " SolidGoldMagikarp!", "<|endoftext|> x"):
        assert hf.encode(text).ids == pruned.encode(text)
    same, identity = enc.without([])
    assert same == enc and identity.tolist() == list(range(enc.n_vocab))


def test_without_keeps_template_added_and_flags():
    enc = tokenmill.load("gpt2")
    tok = Tokenizer(
        enc.token_bytes_list(),
        enc.pattern,
        {"<s>": 50257, "<|endoftext|>": 50256},
        template=tokenmill.Template(prefix=(50257,)),
        lstrip_specials=["<s>"],
        added_tokens={"<t>": 50258},
    )
    pruned, new_id = tok.without([300, 50256])
    assert pruned.template.prefix == (int(new_id[50257]),)
    assert pruned.lstrip_specials == frozenset({"<s>"})
    assert pruned.added_tokens == {"<t>": int(new_id[50258])}
    assert pruned.encode("hi<t>", add_special_tokens=True) == [int(new_id[50257])] + [
        int(i) for i in new_id[tok.encode("hi<t>")]
    ]
    with pytest.raises(tokenmill.InvalidArgumentError, match="template"):
        tok.without([50257])


def test_removing_refuses_what_it_cannot_remove():
    enc = tokenmill.load("cl100k_base")
    with pytest.raises(tokenmill.InvalidArgumentError, match="single byte"):
        enc.without([65])
    with pytest.raises(KeyError):
        enc.without([100256])  # a gap: no token has it
    with pytest.raises(KeyError):
        enc.without([10**9])
    with pytest.raises(KeyError):
        enc.without([-1])
    with pytest.raises(TypeError, match="hold ints"):
        enc.without(["a"])
    with pytest.raises(TypeError, match="list of token ids"):
        enc.without(5)


# -------------------------------------------------------------------------------- embedding


def test_remap_moves_rows_by_the_map():
    enc = tokenmill.load("gpt2")
    table = embedding_table(enc.n_vocab + 47, 8, seed=3)  # padded to a multiple of 64
    pruned, new_id = enc.without([enc.encode_single_token(" SolidGoldMagikarp"), 1000])
    moved = remap(table, new_id, pruned)
    assert moved.shape == (pruned.n_vocab, 8) and moved.dtype == table.dtype
    kept = np.flatnonzero(new_id >= 0)
    assert (moved[new_id[kept]] == table[kept]).all()
    grown = remap(table, new_id, 50304)
    assert grown.shape == (50304, 8) and (grown[: pruned.n_vocab] == moved).all()
    # A permutation: rows swap places.
    swap = np.arange(4)[::-1].copy()
    assert (remap(table[:4], swap) == table[:4][::-1]).all()


def test_remap_refuses_bad_maps():
    table = embedding_table(10, 4)
    with pytest.raises(tokenmill.InvalidArgumentError, match="same new id"):
        remap(table, [0, 0])
    with pytest.raises(tokenmill.InvalidArgumentError, match="only 10 rows"):
        remap(table, list(range(11)))
    with pytest.raises(tokenmill.InvalidArgumentError, match="does not fit"):
        remap(table, [5], 3)
    with pytest.raises(tokenmill.InvalidArgumentError, match="-1"):
        remap(table, [-2])


def test_remap_and_grow_a_torch_embedding():
    torch = pytest.importorskip("torch")
    emb = torch.nn.Embedding(6, 3, padding_idx=4).to(torch.bfloat16)
    moved = remap(emb, [1, -1, 0, 2, 3, 4])
    assert isinstance(moved, torch.nn.Embedding) and moved.weight.dtype == torch.bfloat16
    assert moved.num_embeddings == 5 and moved.padding_idx == 3
    assert torch.equal(moved.weight[1], emb.weight[0])
    assert torch.equal(moved.weight[0], emb.weight[2])
    grown = grow(moved, 7)
    assert grown.weight.dtype == torch.bfloat16 and grown.padding_idx == 3
    assert torch.equal(grown.weight[:5], moved.weight)
