"""The model side of a tokenizer: its embedding table.

A language model turns each token id into a row of an ``n_vocab x d_model`` matrix. Looking a
token up *is* indexing that row, which *is* multiplying a one-hot vector by the matrix; adding
special tokens means growing the matrix by new rows. These helpers show it with numpy, and do
the same to a ``torch.nn.Embedding`` when torch is installed (imported only when one is passed).

>>> import numpy as np, tokenmill
>>> enc = tokenmill.load("gpt2")
>>> table = embedding_table(enc, 8, seed=0)
>>> table.shape
(50257, 8)
>>> ids = enc.encode("hello world")
>>> bool(np.array_equal(lookup(table, ids), table[ids]))
True
>>> bool(np.allclose(one_hot(ids, enc.n_vocab) @ table, table[ids]))
True
>>> embedding_parameters(enc.n_vocab, 768)["total"]  # input embedding + untied output layer
77194752
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tokenmill.errors import (
    InvalidArgumentError,
    MissingDependencyError,
    UnknownTokenIdError,
    WrongTypeError,
)

if TYPE_CHECKING:
    import numpy.typing as npt

    from tokenmill.tokenizer import Tokenizer

# GPT-2's initialisation: N(0, 0.02).
DEFAULT_STD = 0.02
BYTES_PER_PARAM = {"fp32": 4, "bf16": 2}
D_MODELS = (256, 512, 768, 1024, 2048, 4096)


def _n_vocab(tokenizer_or_n_vocab: Tokenizer | int) -> int:
    if isinstance(tokenizer_or_n_vocab, int):
        if tokenizer_or_n_vocab < 1:
            raise InvalidArgumentError(f"n_vocab must be >= 1, got {tokenizer_or_n_vocab}")
        return tokenizer_or_n_vocab
    return tokenizer_or_n_vocab.n_vocab


def embedding_table(
    tokenizer_or_n_vocab: Tokenizer | int,
    d_model: int,
    *,
    std: float = DEFAULT_STD,
    seed: int = 0,
    dtype: npt.DTypeLike = np.float32,
) -> npt.NDArray[Any]:
    """A random ``n_vocab x d_model`` table, values drawn from N(0, ``std``) (GPT-2's init).

    >>> embedding_table(300, 4).shape
    (300, 4)
    """
    n = _n_vocab(tokenizer_or_n_vocab)
    if d_model < 1:
        raise InvalidArgumentError(f"d_model must be >= 1, got {d_model}")
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, std, size=(n, d_model)).astype(dtype)


def _check_ids(ids: Sequence[int] | npt.NDArray[Any], n_vocab: int) -> npt.NDArray[np.int64]:
    arr = np.asarray(ids, dtype=np.int64).reshape(-1) if len(ids) else np.zeros(0, np.int64)
    bad = (arr < 0) | (arr >= n_vocab)
    if bad.any():
        raise UnknownTokenIdError(int(arr[bad][0]), n_vocab)
    return arr


def one_hot(ids: Sequence[int] | npt.NDArray[Any], n_vocab: int) -> npt.NDArray[np.float32]:
    """A ``len(ids) x n_vocab`` matrix with a single 1 in each row, at the token's id.

    >>> one_hot([2, 0], 3)
    array([[0., 0., 1.],
           [1., 0., 0.]], dtype=float32)
    """
    arr = _check_ids(ids, n_vocab)
    out = np.zeros((len(arr), n_vocab), dtype=np.float32)
    out[np.arange(len(arr)), arr] = 1.0
    return out


def lookup(table: Any, ids: Sequence[int] | npt.NDArray[Any]) -> Any:
    """The embedding rows of ``ids``: ``table[ids]`` for a numpy table, ``table(ids)`` for a
    ``torch.nn.Embedding`` (as a tensor). An id outside the table raises
    :class:`~tokenmill.errors.UnknownTokenIdError` instead of an ``IndexError`` deep inside.

    >>> t = np.arange(6.0).reshape(3, 2)
    >>> lookup(t, [2, 2, 0])
    array([[4., 5.],
           [4., 5.],
           [0., 1.]])
    """
    if isinstance(table, np.ndarray):
        return table[_check_ids(ids, table.shape[0])]
    torch = _torch_for(table)
    arr = _check_ids(ids, table.num_embeddings)
    with torch.no_grad():
        return table(torch.as_tensor(arr))


def cosine_similarity(table: Any, a: int, b: int) -> float:
    """Cosine of the angle between the embeddings of tokens ``a`` and ``b``.

    >>> t = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    >>> cosine_similarity(t, 0, 2), cosine_similarity(t, 0, 1)
    (1.0, 0.0)
    """
    rows = _weights(table)[_check_ids([a, b], _rows(table))]
    x, y = rows[0].astype(np.float64), rows[1].astype(np.float64)
    denom = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y / denom) if denom else 0.0


def most_similar(table: Any, token: int, k: int = 5) -> list[tuple[int, float]]:
    """The ``k`` tokens whose embeddings have the highest cosine similarity to ``token``'s
    (``token`` itself excluded), with their similarities, best first.

    >>> t = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]])
    >>> [i for i, _ in most_similar(t, 0, k=2)]
    [1, 2]
    """
    w = _weights(table).astype(np.float64)
    (i,) = _check_ids([token], w.shape[0])
    norms = np.linalg.norm(w, axis=1)
    norms[norms == 0] = 1.0
    sims = (w @ w[i]) / (norms * norms[i])
    sims[i] = -np.inf
    k = max(0, min(k, w.shape[0] - 1))
    best = np.argsort(-sims, kind="stable")[:k]
    return [(int(j), float(sims[j])) for j in best]


def grow(table: Any, n_vocab: Tokenizer | int, *, std: float = DEFAULT_STD, seed: int = 0) -> Any:
    """The table with new rows appended up to ``n_vocab`` rows (or a tokenizer's
    ``n_vocab``, e.g. after adding special tokens), each drawn from N(0, ``std``); existing
    rows are unchanged. Returns a new numpy array, or a new ``torch.nn.Embedding`` when
    given one.

    >>> import tokenmill
    >>> enc = tokenmill.load("gpt2")
    >>> chat = tokenmill.Tokenizer(enc.mergeable_ranks, enc.pattern,
    ...     {**enc.special_tokens, "<|im_start|>": 50257, "<|im_end|>": 50258})
    >>> t = embedding_table(enc, 16)
    >>> t2 = grow(t, chat)
    >>> t2.shape, bool((t2[:50257] == t).all())
    ((50259, 16), True)
    """
    rows = _rows(table)
    n_vocab = _n_vocab(n_vocab)
    if n_vocab < rows:
        raise InvalidArgumentError(
            f"the table already has {rows} rows; grow() only adds rows (asked for {n_vocab})"
        )
    rng = np.random.default_rng(seed)
    if isinstance(table, np.ndarray):
        new = rng.normal(0.0, std, size=(n_vocab - rows, table.shape[1])).astype(table.dtype)
        return np.concatenate([table, new])
    torch = _torch_for(table)
    weight = table.weight.detach()
    new_t = torch.as_tensor(
        rng.normal(0.0, std, size=(n_vocab - rows, weight.shape[1])), dtype=weight.dtype
    )
    out = torch.nn.Embedding(
        n_vocab,
        weight.shape[1],
        padding_idx=table.padding_idx,
        device=weight.device,
        dtype=weight.dtype,
    )
    with torch.no_grad():
        out.weight.copy_(torch.cat([weight, new_t.to(weight.device)]))
    return out


def remap(
    table: Any,
    new_id: Sequence[int] | npt.NDArray[Any],
    n_vocab: Tokenizer | int | None = None,
    *,
    std: float = DEFAULT_STD,
    seed: int = 0,
) -> Any:
    """The table with its rows moved to new ids: row ``i`` becomes row ``new_id[i]``, and is
    dropped where that is -1 (the map :meth:`~tokenmill.Tokenizer.without` gives). The new
    table has ``n_vocab`` rows (or a tokenizer's ``n_vocab``; by default one past the largest
    new id); a row no old one moves to is drawn from N(0, ``std``). Rows past the map's end
    (padding) are dropped. Returns a new numpy array, or a new ``torch.nn.Embedding`` when given
    one (its ``padding_idx`` moved too).

    >>> import tokenmill
    >>> enc = tokenmill.load("gpt2")
    >>> pruned, new_id = enc.without([enc.encode_single_token(" SolidGoldMagikarp")])
    >>> t = embedding_table(enc, 16)
    >>> t2 = remap(t, new_id, pruned)
    >>> t2.shape, bool((t2[pruned.eot_token] == t[enc.eot_token]).all())
    ((50256, 16), True)
    """
    rows = _rows(table)
    moves = np.asarray(new_id, dtype=np.int64).reshape(-1) if len(new_id) else np.zeros(0, np.int64)
    if len(moves) > rows:
        raise InvalidArgumentError(
            f"the id map covers {len(moves)} ids, and the table has only {rows} rows"
        )
    if (moves < -1).any():
        raise InvalidArgumentError(f"new ids are >= 0, or -1 for a removed row; got {moves.min()}")
    kept = np.flatnonzero(moves >= 0)
    targets = moves[kept]
    if n_vocab is None:
        n = int(targets.max()) + 1 if len(targets) else 0
    else:
        n = _n_vocab(n_vocab)
    if len(targets) and int(targets.max()) >= n:
        raise InvalidArgumentError(f"new id {int(targets.max())} does not fit in {n} rows")
    if len(np.unique(targets)) != len(targets):
        raise InvalidArgumentError("the id map moves two rows to the same new id")
    fresh = np.ones(n, dtype=bool)
    fresh[targets] = False
    rng = np.random.default_rng(seed)
    if isinstance(table, np.ndarray):
        d = _weights(table).shape[1]
        out = np.empty((n, d), dtype=table.dtype)
        out[targets] = table[kept]
        out[fresh] = rng.normal(0.0, std, size=(int(fresh.sum()), d))
        return out
    torch = _torch_for(table)
    weight = table.weight.detach()
    padding = table.padding_idx
    if padding is not None:
        padding = int(moves[padding]) if padding < len(moves) and moves[padding] >= 0 else None
    emb = torch.nn.Embedding(
        n, weight.shape[1], padding_idx=padding, device=weight.device, dtype=weight.dtype
    )
    new_rows = rng.normal(0.0, std, size=(int(fresh.sum()), weight.shape[1]))
    with torch.no_grad():
        emb.weight[torch.as_tensor(targets, device=weight.device)] = weight[
            torch.as_tensor(kept, device=weight.device)
        ]
        emb.weight[torch.as_tensor(np.flatnonzero(fresh), device=weight.device)] = (
            torch.as_tensor(new_rows, dtype=weight.dtype, device=weight.device)
        )
    return emb


def torch_embedding(
    tokenizer_or_n_vocab: Tokenizer | int,
    d_model: int,
    *,
    std: float = DEFAULT_STD,
    seed: int = 0,
) -> Any:
    """A ``torch.nn.Embedding`` with the same values as :func:`embedding_table` (needs torch)."""
    try:
        import torch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise MissingDependencyError("torch_embedding needs torch: pip install torch") from None
    table = embedding_table(tokenizer_or_n_vocab, d_model, std=std, seed=seed)
    emb = torch.nn.Embedding(table.shape[0], d_model)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(table))
    return emb


def embedding_parameters(n_vocab: int, d_model: int, *, tied: bool = False) -> dict[str, Any]:
    """What a vocabulary costs a model: ``n_vocab x d_model`` parameters for the input
    embedding, as many again for an untied output layer (no bias), and the megabytes (10^6
    bytes) they take at fp32 and bf16.

    >>> p = embedding_parameters(100277, 4096)
    >>> p["input"], p["output"], p["mb"]["bf16"]
    (410734592, 410734592, 1642.938368)
    """
    if n_vocab < 1 or d_model < 1:
        raise InvalidArgumentError(f"n_vocab and d_model must be >= 1, got {n_vocab} and {d_model}")
    per_table = n_vocab * d_model
    total = per_table if tied else 2 * per_table
    return {
        "n_vocab": n_vocab,
        "d_model": d_model,
        "tied": tied,
        "input": per_table,
        "output": 0 if tied else per_table,
        "total": total,
        "mb": {name: total * size / 1e6 for name, size in BYTES_PER_PARAM.items()},
    }


def _rows(table: Any) -> int:
    if isinstance(table, np.ndarray):
        return int(table.shape[0])
    _torch_for(table)
    return int(table.num_embeddings)


def _weights(table: Any) -> npt.NDArray[Any]:
    if isinstance(table, np.ndarray):
        if table.ndim != 2:
            raise InvalidArgumentError(
                f"an embedding table is 2-D (n_vocab x d_model), got {table.shape}"
            )
        return table
    _torch_for(table)
    return table.weight.detach().cpu().float().numpy()


def _torch_for(table: Any) -> Any:
    """torch, if ``table`` is a ``torch.nn.Embedding``; otherwise a clear TypeError."""
    if type(table).__module__.startswith("torch"):
        import torch  # type: ignore[import-not-found, unused-ignore]

        if isinstance(table, torch.nn.Embedding):
            return torch
    raise WrongTypeError(
        f"expected a 2-D numpy array or a torch.nn.Embedding, not {type(table).__name__}"
    )


__all__ = [
    "cosine_similarity",
    "embedding_parameters",
    "embedding_table",
    "grow",
    "lookup",
    "most_similar",
    "one_hot",
    "remap",
    "torch_embedding",
]
