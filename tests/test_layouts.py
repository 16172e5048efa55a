"""encode-corpus's foreign layouts read back the way their projects' loaders read them.

Oracles, written from the projects' sources (nanoGPT at 3adf61e, llm.c at f1e2ace):

- nanoGPT: ``train.py``'s ``get_batch`` memory-maps ``data/<dataset>/{train,val}.bin`` as
  ``np.uint16`` and slices windows at random offsets; it reads ``meta.pkl`` only for
  ``vocab_size`` (``data/shakespeare_char/prepare.py`` writes ``vocab_size``, ``itos``,
  ``stoi``; ``data/openwebtext/prepare.py`` and ``data/shakespeare/prepare.py``, GPT-2's
  vocabulary, write none and append the end-of-text id to each document).
- llm.c: ``llmc/dataloader.h`` (``dataloader_load_shard_``) checks the 256-int32 header's magic
  20240520 and version 1 and that the file is ``256 * 4 + ntok * 2`` bytes; ``train_gpt2.py``
  (``_load_data_shard``) and ``train_llama3.py`` (magic 20240801, version 7, ``uint32``) check
  the same and that ``ntok`` tokens follow; both glob ``<name>_train_*.bin`` sorted and read
  ``B*T+1`` tokens at a time. ``dev/data/data_common.py`` (``write_datafile``) writes them.

The ids must be ``tok.encode`` of each document (special-token strings as plain text) with the
end-of-text id before (llm.c) or after (nanoGPT) it, split by tokenmill's document hash.
"""

from __future__ import annotations

import glob
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_tokenmill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenmill
import tokenmill.corpus as corpus
from tokenmill.corpus import layouts
from tokenmill.errors import CorpusOptionError, CorruptShardError
from tokenmill.sources import bundled_corpus
from tokenmill.sources.read import doc_split

VAL = 0.2
EXTRA = [
    "",
    "naïve café 🙂 — ünïcödé\n\nwith  spaces   and\ttabs",
    "<|endoftext|> is plain text inside a document",
    "x" * 3000,
]


@pytest.fixture(scope="module")
def docs() -> list[str]:
    text = bundled_corpus("shakespeare")[:150_000]
    return text.split("\n\n") + EXTRA


@pytest.fixture(scope="module")
def jsonl(docs, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("layouts") / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs))
    return path


def expected(
    tok, docs: list[str], position: str, val_fraction: float = VAL
) -> dict[str, list[int]]:
    """Each split's stream: the documents encoded one by one, the end-of-text id around each."""
    eot = tok.special_tokens["<|endoftext|>"]
    out: dict[str, list[int]] = {"train": [], "val": []}
    for d in docs:
        ids = tok.encode(d, disallowed_special=())
        split = "val" if val_fraction and doc_split(d.encode(), val_fraction) else "train"
        out[split] += [eot, *ids] if position == "before" else [*ids, eot]
    return out


# ------------------------------------------------------------------------ nanoGPT's reading


def nanogpt_get_batch(data_dir: Path, split: str, block_size: int, batch_size: int, rng):
    """nanoGPT's train.py get_batch, with numpy's generator for torch.randint."""
    data = np.memmap(os.path.join(data_dir, f"{split}.bin"), dtype=np.uint16, mode="r")
    ix = rng.integers(len(data) - block_size, size=batch_size)
    x = np.stack([(data[i : i + block_size]).astype(np.int64) for i in ix])
    y = np.stack([(data[i + 1 : i + 1 + block_size]).astype(np.int64) for i in ix])
    return ix, x, y


def nanogpt_vocab_size(data_dir: Path) -> int | None:
    """What nanoGPT's train.py takes from meta.pkl (None: it defaults to 50304)."""
    meta_path = os.path.join(data_dir, "meta.pkl")
    if not os.path.exists(meta_path):
        return None
    with open(meta_path, "rb") as f:
        meta = pickle.load(f)
    return int(meta["vocab_size"])


def test_nanogpt_train_and_val_bin_as_train_py_reads_them(tmp_path, jsonl, docs):
    tok = tokenmill.load("gpt2")
    r = corpus.encode([jsonl], tok, tmp_path / "owt", layout="nanogpt", val_fraction=VAL,
                      item_bytes=20_000, workers=2, progress=False)  # fmt: skip
    want = expected(tok, docs, "after")  # nanoGPT's prepare.py appends the end-of-text id
    assert sorted(p.name for p in (tmp_path / "owt").iterdir()) == [
        "manifest.json", "train.bin", "val.bin",
    ]  # fmt: skip
    rng = np.random.default_rng(0)
    for split in ("train", "val"):
        stream = np.array(want[split])
        data = np.memmap(tmp_path / "owt" / f"{split}.bin", dtype=np.uint16, mode="r")
        assert data.tolist() == want[split] and len(want[split]) > 1000
        for _ in range(5):
            ix, x, y = nanogpt_get_batch(tmp_path / "owt", split, 64, 8, rng)
            for i, start in enumerate(ix):
                assert (x[i] == stream[start : start + 64]).all()
                assert (y[i] == stream[start + 1 : start + 65]).all()
    # GPT-2's vocabulary: no meta.pkl, as nanoGPT's own GPT-2 datasets; train.py then sizes
    # the model for 50304 ids, more than GPT-2's 50257.
    assert nanogpt_vocab_size(tmp_path / "owt") is None
    m = r.manifest
    assert m["layout"] == "nanogpt" and m["nanogpt"] == {"meta": None}
    assert m["eot"]["position"] == "after" and m["shard_tokens"] is None
    assert [s["file"] for s in m["splits"]["train"]["shards"]] == ["train.bin"]
    assert corpus.verify(tmp_path / "owt") == {"shards": 2, "tokens": m["tokens"]}
    loader = corpus.ShardLoader(tmp_path / "owt", 16, 2, split="val")
    assert next(iter(loader))[0][0].tolist() == want["val"][:16]


def test_nanogpt_meta_pkl_gives_train_py_the_vocabulary_size(tmp_path, jsonl, docs):
    tok = tokenmill.train(bundled_corpus("shakespeare")[:100_000], 600,
                          special_tokens=["<|endoftext|>"])  # fmt: skip
    out = tmp_path / "sh"
    r = corpus.encode([jsonl], tok, out, layout="nanogpt", val_fraction=VAL, progress=False)
    want = expected(tok, docs, "after")
    assert np.fromfile(out / "train.bin", dtype=np.uint16).tolist() == want["train"]
    assert np.fromfile(out / "val.bin", dtype=np.uint16).tolist() == want["val"]
    vocab_size = nanogpt_vocab_size(out)
    assert vocab_size == tok.n_vocab == 600
    assert max(want["train"]) < vocab_size  # every id has a row in nanoGPT's embedding
    meta = pickle.loads((out / "meta.pkl").read_bytes())
    # No stoi/itos: sample.py would encode prompts character by character with them.
    assert meta == {"vocab_size": 600, "tokenizer": tok.name,
                    "tokenizer_sha256": corpus.tokenizer_hash(tok)}  # fmt: skip
    assert r.manifest["nanogpt"]["meta"]["file"] == "meta.pkl"
    corpus.verify(out)
    (out / "meta.pkl").write_bytes(pickle.dumps({"vocab_size": 50304}))
    with pytest.raises(CorruptShardError, match=r"meta.pkl: sha256 .* the file is corrupted"):
        corpus.verify(out)
    # Replaced by a run with GPT-2's vocabulary: the stale meta.pkl would size the model wrong.
    corpus.encode([jsonl], "gpt2", out, layout="nanogpt", val_fraction=VAL, overwrite=True,
                  progress=False)  # fmt: skip
    assert nanogpt_vocab_size(out) is None


def test_gpt2_hash_constant_is_gpt2s():
    assert layouts.GPT2_SHA256 == corpus.tokenizer_hash(tokenmill.load("gpt2"))


def test_nanogpt_refuses_what_train_py_cannot_read(tmp_path, jsonl):
    args = dict(layout="nanogpt", val_fraction=VAL, progress=False)
    with pytest.raises(CorpusOptionError, match=r"uint16.*o200k_base has ids up to 200,018.*llmc"):
        corpus.encode([jsonl], "o200k_base", tmp_path / "o", **args)
    with pytest.raises(CorpusOptionError, match=r"uint16.*dtype uint32 was asked for"):
        corpus.encode([jsonl], "gpt2", tmp_path / "o", dtype="uint32", **args)
    with pytest.raises(CorpusOptionError, match=r"reads val.bin.*--val-fraction"):
        corpus.encode([jsonl], "gpt2", tmp_path / "o", layout="nanogpt", progress=False)
    with pytest.raises(CorpusOptionError, match=r"one file per split.*--shard-tokens"):
        corpus.encode([jsonl], "gpt2", tmp_path / "o", shard_tokens=10, **args)
    with pytest.raises(CorpusOptionError, match=r"--name.*'llmc' only"):
        corpus.encode([jsonl], "gpt2", tmp_path / "o", name="x", **args)
    with pytest.raises(CorpusOptionError, match=r"layout must be one of shards, nanogpt, llmc"):
        corpus.encode([jsonl], "gpt2", tmp_path / "o", layout="megatron")
    assert not (tmp_path / "o").exists()


def test_nanogpt_says_when_a_split_is_empty(tmp_path, capsys):
    (tmp_path / "one.txt").write_text("a single document goes to one split whole")
    corpus.encode([tmp_path / "one.txt"], "gpt2", tmp_path / "o", layout="nanogpt",
                  val_fraction=0.1, progress=None)  # fmt: skip
    err = capsys.readouterr().err
    empty = "val" if (tmp_path / "o" / "val.bin").stat().st_size == 0 else "train"
    assert f"note: {empty}.bin is empty" in err
    assert (tmp_path / "o" / f"{empty}.bin").read_bytes() == b""
    corpus.verify(tmp_path / "o")


# ------------------------------------------------------------------------ llm.c's reading

LLMC = {np.uint16: (20240520, 1), np.uint32: (20240801, 7)}


def llmc_load_data_shard(filename: str, dtype) -> np.ndarray:
    """llm.c's shard read: train_gpt2.py / train_llama3.py's _load_data_shard, with the file
    size check of dataloader.h's dataloader_load_shard_."""
    magic, version = LLMC[dtype]
    with open(filename, "rb") as f:
        header = np.frombuffer(f.read(256 * 4), dtype=np.int32)
        assert header[0] == magic, "magic number mismatch in the data .bin file"
        assert header[1] == version, "unsupported version"
        ntok = int(header[2])
        tokens = np.frombuffer(f.read(), dtype=dtype)
    assert ntok > 0
    assert os.path.getsize(filename) == 256 * 4 + ntok * np.dtype(dtype).itemsize
    assert len(tokens) == ntok, "number of tokens read does not match header?"
    return tokens


def llmc_batches(pattern: str, B: int, T: int, dtype):
    """One pass of train_gpt2.py's DistributedDataLoader (one process): sorted glob, B*T+1
    tokens per batch, the next shard when the next batch would not fit."""
    files = sorted(glob.glob(pattern))
    assert files, f"did not find any files that match the pattern {pattern}"
    for fname in files:
        tokens = llmc_load_data_shard(fname, dtype)
        assert len(tokens) >= B * T + 1
        pos = 0
        while pos + B * T + 1 <= len(tokens):
            buf = tokens[pos : pos + B * T + 1].astype(np.int64)
            yield fname, pos, buf[:-1].reshape(B, T), buf[1:].reshape(B, T)
            pos += B * T


def test_llmc_uint16_shards_as_llmc_reads_them(tmp_path, jsonl, docs):
    tok = tokenmill.load("gpt2")
    out = tmp_path / "tinyshakespeare"
    r = corpus.encode([jsonl], tok, out, layout="llmc", name="tiny_shakespeare",
                      shard_tokens=3_000, val_fraction=VAL, item_bytes=20_000, workers=2,
                      progress=False)  # fmt: skip
    want = expected(tok, docs, "before")  # fineweb.py: every document starts with it
    m = r.manifest
    assert m["layout"] == "llmc" and m["eot"]["position"] == "before"
    assert m["llmc"] == {"name": "tiny_shakespeare",
                         "header": {"ints": 256, "magic": 20240520, "version": 1}}  # fmt: skip
    for split in ("train", "val"):
        files = sorted(glob.glob(str(out / f"tiny_shakespeare_{split}_*.bin")))
        assert [Path(f).name for f in files] == [
            f"tiny_shakespeare_{split}_{k:06d}.bin" for k in range(len(files))
        ]
        assert len(files) == -(-len(want[split]) // 3_000) >= 2
        stream = np.concatenate([llmc_load_data_shard(f, np.uint16) for f in files])
        assert stream.tolist() == want[split]
        assert [s["file"] for s in m["splits"][split]["shards"]] == [Path(f).name for f in files]
    # The training loop's batches are the stream's windows, shard by shard.
    starts = {}
    at = 0
    for f in sorted(glob.glob(str(out / "tiny_shakespeare_train_*.bin"))):
        starts[f] = at
        at += len(llmc_load_data_shard(f, np.uint16))
    stream = np.array(want["train"])
    n = 0
    for fname, pos, x, y in llmc_batches(str(out / "tiny_shakespeare_train_*.bin"), 4, 16,
                                         np.uint16):  # fmt: skip
        p = starts[fname] + pos
        assert (x.reshape(-1) == stream[p : p + 64]).all()
        assert (y.reshape(-1) == stream[p + 1 : p + 65]).all()
        n += 1
    assert n > 300
    assert corpus.verify(out)["tokens"] == m["tokens"]
    loader = corpus.ShardLoader(out, 100, 3)
    x, y = next(iter(loader))
    assert x.reshape(-1).tolist() == want["train"][:300]


@pytest.mark.parametrize("spec", ["o200k_base", "gpt2-as-uint32"])
def test_llmc_uint32_shards_as_train_llama3_reads_them(tmp_path, jsonl, docs, spec):
    tok = tokenmill.load(spec.split("-")[0])
    dtype = "uint32" if spec.endswith("uint32") else None
    r = corpus.encode([jsonl], tok, tmp_path / "fineweb", layout="llmc", shard_tokens=20_000,
                      dtype=dtype, progress=False)  # fmt: skip
    assert r.manifest["llmc"]["header"] == {"ints": 256, "magic": 20240801, "version": 7}
    files = sorted(glob.glob(str(tmp_path / "fineweb" / "fineweb_train_*.bin")))
    stream = np.concatenate([llmc_load_data_shard(f, np.uint32) for f in files])
    assert stream.tolist() == expected(tok, docs, "before", 0)["train"]
    # The uint16 loader (dataloader.h) refuses them by their magic number.
    with pytest.raises(AssertionError, match="magic number mismatch"):
        llmc_load_data_shard(files[0], np.uint16)


def test_llmc_options(tmp_path, jsonl):
    with pytest.raises(CorpusOptionError, match=r"int32: use at most 2,147,483,647"):
        corpus.encode([jsonl], "gpt2", tmp_path / "o", layout="llmc", shard_tokens=2**31)
    with pytest.raises(CorpusOptionError, match=r"name 'a/b' cannot start llm.c's file names"):
        corpus.encode([jsonl], "gpt2", tmp_path / "o", layout="llmc", name="a/b")
    r = corpus.encode([jsonl], "gpt2", tmp_path / "edu_fineweb10B", layout="llmc",
                      progress=False)  # fmt: skip
    assert [s["file"] for s in r.manifest["splits"]["train"]["shards"]] == [
        "edu_fineweb10B_train_000000.bin"
    ]


def test_llmc_verify_names_a_damaged_header(tmp_path, jsonl):
    out = tmp_path / "o"
    corpus.encode([jsonl], "gpt2", out, layout="llmc", shard_tokens=5_000, progress=False)
    shard = out / "o_train_000001.bin"
    data = bytearray(shard.read_bytes())
    data[8] ^= 1  # the token count
    shard.write_bytes(bytes(data))
    with pytest.raises(CorruptShardError, match=r"o_train_000001.bin: sha256"):
        corpus.verify(out)
    shard.write_bytes(bytes(data[:-2]))
    said = r"11022 bytes, the manifest says 5000 tokens of 2 bytes after a header of 1024"
    with pytest.raises(CorruptShardError, match=said):
        corpus.verify(out)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    docs=st.lists(st.text(max_size=40), min_size=1, max_size=12),
    shard_tokens=st.integers(1, 30),
)
def test_llmc_any_documents_any_shard_size(tmp_path, docs, shard_tokens):
    tok = tokenmill.load("gpt2")
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in docs))
    out = tmp_path / "h"
    corpus.encode([path], tok, out, layout="llmc", shard_tokens=shard_tokens, workers=2,
                  item_bytes=64, overwrite=True, progress=False)  # fmt: skip
    files = sorted(glob.glob(str(out / "h_train_*.bin")))
    sizes = [len(llmc_load_data_shard(f, np.uint16)) for f in files]
    assert all(s == shard_tokens for s in sizes[:-1]) and 0 < sizes[-1] <= shard_tokens
    got = np.concatenate([llmc_load_data_shard(f, np.uint16) for f in files]).tolist()
    assert got == expected(tok, docs, "before", 0)["train"]


# ------------------------------------------------------------------------ across layouts


def test_a_new_layout_over_an_old_run_removes_its_files(tmp_path, jsonl):
    out = tmp_path / "d"
    corpus.encode([jsonl], "gpt2", out, shard_tokens=20_000, progress=False)
    r = corpus.encode([jsonl], "gpt2", out, layout="llmc", shard_tokens=30_000, overwrite=True,
                      progress=False)  # fmt: skip
    listed = [s["file"] for s in r.manifest["splits"]["train"]["shards"]]
    assert sorted(p.name for p in out.iterdir()) == sorted(["manifest.json", *listed])
    r = corpus.encode([jsonl], "gpt2", out, layout="nanogpt", val_fraction=VAL, overwrite=True,
                      progress=False)  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "train.bin", "val.bin"]


def test_cli_layouts(tmp_path, jsonl):
    p = run_tokenmill("encode-corpus", str(jsonl), "-o", str(tmp_path / "n"), "--layout",
                      "nanogpt", "--val-fraction", "0.2", timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("train: ") and lines[0].endswith(" tokens in train.bin")
    assert lines[2].endswith(f"nanoGPT's uint16 train.bin, val.bin and manifest.json in "
                             f"{tmp_path / 'n'}")  # fmt: skip
    p = run_tokenmill("encode-corpus", str(jsonl), "-o", str(tmp_path / "l"), "--layout",
                      "llmc", "--name", "shakespeare", "--shard-tokens", "20000", "--json",
                      timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["layout"] == "llmc" and summary["splits"]["train"]["shards"] >= 2
    assert (tmp_path / "l" / "shakespeare_train_000000.bin").is_file()
    p = run_tokenmill("verify-shards", str(tmp_path / "l"), timeout=120)
    assert p.returncode == 0 and p.stdout.startswith("ok: ")
    p = run_tokenmill("encode-corpus", str(jsonl), "-o", str(tmp_path / "x"), "--layout",
                      "nanogpt", "-t", "cl100k_base", "--val-fraction", "0.1",
                      timeout=120)  # fmt: skip
    assert p.returncode == 2
    assert p.stderr.startswith("tokenmill: error: the nanogpt layout is uint16")
