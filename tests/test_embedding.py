"""tokenmill.embedding: lookup = row indexing = one-hot times the matrix, cosine similarity
recomputed by hand, growing keeps old rows, parameter counts by arithmetic. The torch
versions run where torch is installed (the test extras install it), each checked against
the numpy result."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill.embedding import (
    cosine_similarity,
    embedding_parameters,
    embedding_table,
    grow,
    lookup,
    most_similar,
    one_hot,
)
from tokenmill.errors import UnknownTokenIdError

N_VOCAB, D = 300, 16
TABLE = embedding_table(N_VOCAB, D, seed=1)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, N_VOCAB - 1), max_size=40))
def test_lookup_is_row_indexing_is_one_hot_product(ids):
    rows = lookup(TABLE, ids)
    assert rows.shape == (len(ids), D)
    for k, i in enumerate(ids):
        assert np.array_equal(rows[k], TABLE[i])
    assert np.allclose(one_hot(ids, N_VOCAB) @ TABLE, rows, atol=1e-7)


def test_one_hot_rows_have_a_single_one_at_the_id():
    m = one_hot([5, 0, 5], 8)
    assert m.sum(axis=1).tolist() == [1, 1, 1]
    assert m.argmax(axis=1).tolist() == [5, 0, 5]


def test_table_for_a_tokenizer_and_its_ids():
    enc = tokenmill.load("gpt2")
    t = embedding_table(enc, 8, std=0.02, seed=3)
    assert t.shape == (enc.n_vocab, 8) and t.dtype == np.float32
    assert 0.015 < float(t.std()) < 0.025  # N(0, 0.02)
    assert np.array_equal(embedding_table(enc, 8, seed=3), t)  # seeded: reproducible
    ids = enc.encode("hello world")
    assert np.array_equal(lookup(t, ids), t[ids])


def test_unknown_ids_raise_a_keyerror_naming_the_id():
    with pytest.raises(UnknownTokenIdError, match="unknown token id 300"):
        lookup(TABLE, [1, 300])
    with pytest.raises(KeyError):
        one_hot([-1], N_VOCAB)
    with pytest.raises(UnknownTokenIdError):
        cosine_similarity(TABLE, 0, 10_000)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, N_VOCAB - 1), st.integers(0, N_VOCAB - 1))
def test_cosine_similarity_by_hand(a, b):
    x, y = TABLE[a].astype(float), TABLE[b].astype(float)
    want = sum(p * q for p, q in zip(x, y, strict=True)) / (
        sum(p * p for p in x) ** 0.5 * sum(q * q for q in y) ** 0.5
    )
    assert cosine_similarity(TABLE, a, b) == pytest.approx(want, abs=1e-9)
    assert cosine_similarity(TABLE, a, a) == pytest.approx(1.0)


def test_most_similar_is_the_brute_force_ranking():
    token = 7
    sims = [(j, cosine_similarity(TABLE, token, j)) for j in range(N_VOCAB) if j != token]
    want = sorted(sims, key=lambda p: -p[1])[:5]
    got = most_similar(TABLE, token, k=5)
    assert [j for j, _ in got] == [j for j, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want])


def test_grow_for_added_special_tokens_keeps_old_rows():
    enc = tokenmill.load("gpt2")
    chat = tokenmill.Tokenizer(
        enc.mergeable_ranks,
        enc.pattern,
        {**enc.special_tokens, "<|im_start|>": 50257, "<|im_end|>": 50258},
    )
    t = embedding_table(enc, 32, seed=0)
    t2 = grow(t, chat.n_vocab, std=0.01, seed=5)
    assert t2.shape == (50259, 32) and t2.dtype == t.dtype
    assert np.array_equal(t2[: enc.n_vocab], t)
    new = t2[enc.n_vocab :]
    assert np.abs(new).max() < 0.1 and new.std() > 0  # small random values, not zeros
    ids = chat.encode("<|im_start|>hi<|im_end|>", allowed_special="all")
    assert ids[0] == 50257 and ids[-1] == 50258
    assert np.array_equal(lookup(t2, ids)[0], t2[50257])
    with pytest.raises(UnknownTokenIdError):
        lookup(t, ids)  # the old table has no row for the new special token
    assert np.array_equal(grow(t, chat, std=0.01, seed=5), t2)  # a tokenizer gives its n_vocab
    with pytest.raises(ValueError, match="only adds rows"):
        grow(t2, 10)


def test_parameter_counts_and_megabytes_by_arithmetic():
    for n_vocab in (50257, 100277, 200019):
        for d in (256, 768, 4096):
            p = embedding_parameters(n_vocab, d)
            assert p["input"] == p["output"] == n_vocab * d
            assert p["total"] == 2 * n_vocab * d
            assert p["mb"] == {"fp32": 8 * n_vocab * d / 1e6, "bf16": 4 * n_vocab * d / 1e6}
            tied = embedding_parameters(n_vocab, d, tied=True)
            assert tied["total"] == n_vocab * d and tied["output"] == 0
    with pytest.raises(ValueError):
        embedding_parameters(0, 8)


def test_not_a_table_is_a_clear_type_error():
    with pytest.raises(TypeError, match=r"numpy array or a torch\.nn\.Embedding"):
        lookup([[1.0]], [0])


def test_torch_embedding_same_helpers():
    torch = pytest.importorskip("torch")
    from tokenmill.embedding import torch_embedding

    emb = torch_embedding(N_VOCAB, D, seed=1)
    assert isinstance(emb, torch.nn.Embedding)
    assert np.allclose(emb.weight.detach().numpy(), TABLE)
    ids = [3, 1, 3]
    assert np.allclose(lookup(emb, ids).numpy(), TABLE[ids])
    oh = torch.from_numpy(one_hot(ids, N_VOCAB))
    assert torch.allclose(oh @ emb.weight.detach(), lookup(emb, ids))
    assert cosine_similarity(emb, 2, 9) == pytest.approx(cosine_similarity(TABLE, 2, 9), abs=1e-6)
    got, want = most_similar(emb, 7, k=6), most_similar(TABLE, 7, k=6)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
    bigger = grow(emb, N_VOCAB + 2, std=0.01, seed=5)
    assert isinstance(bigger, torch.nn.Embedding) and bigger.num_embeddings == N_VOCAB + 2
    assert torch.equal(bigger.weight[:N_VOCAB], emb.weight)
    # the new rows are the numpy version's, in the table's dtype
    numpy_bigger = grow(TABLE, N_VOCAB + 2, std=0.01, seed=5)
    assert np.allclose(bigger.weight.detach().numpy(), numpy_bigger, atol=1e-7)
    assert bigger.weight.dtype == emb.weight.dtype
    with pytest.raises(UnknownTokenIdError, match=f"unknown token id {N_VOCAB}"):
        lookup(emb, [0, N_VOCAB])
    with pytest.raises(UnknownTokenIdError):
        cosine_similarity(emb, -1, 0)
    with pytest.raises(ValueError, match="only adds rows"):
        grow(bigger, N_VOCAB)
