"""The file layouts a corpus is written in, each the one a training loop reads as it is.
Every layout has ``manifest.json`` beside its files (the training loops ignore it).

- ``shards``: ``train_000000.bin``, ..., ``val_000000.bin``, raw ids without a header; read by
  :class:`~tokenmill.corpus.ShardLoader` or ``np.memmap``.
- ``nanogpt``: ``train.bin`` and ``val.bin``, raw ``uint16`` ids, and ``meta.pkl`` (see
  :func:`nanogpt_meta`); read by nanoGPT's ``train.py`` (``get_batch``).
- ``llmc``: ``{name}_train_000000.bin``, ..., ``{name}_val_000000.bin``, a header of 256 int32
  then the ids; read by llm.c's ``llmc/dataloader.h`` and ``train_gpt2.py`` (``uint16``) and
  ``train_llama3.py`` (``uint32``).

llm.c's header (``dev/data/data_common.py``, ``write_datafile``): 256 little-endian int32, of
which ``[0]`` is the magic number, ``[1]`` the version, ``[2]`` the number of tokens after the
header, the rest 0. ``uint16`` tokens are magic 20240520, version 1 (what ``llmc/dataloader.h``
and ``train_gpt2.py`` accept); ``uint32`` tokens are magic 20240801, version 7 (what
``train_llama3.py`` accepts; its model descriptor is ``llama-3``). The count is an int32, so a
shard holds fewer than 2**31 tokens. Each split's shards are numbered from 0: llm.c's loaders
take a glob (``fineweb_train_*.bin``) and read the files in sorted order, so only the order
within a split matters. (llm.c's ``fineweb.py`` numbers across splits because its one
validation shard is simply the first shard it writes; here the two splits are written side by
side, so neither can know the other's count.) llm.c's loaders assert that every shard, the
last and shorter one too, holds at least ``B*T*processes + 1`` tokens, as with the shards of
its own scripts.

What the manifest guards, a loader that does not read it cannot see. nanoGPT's files appear
only when the run ends (each split is written as one pending file, renamed at the end); llm.c's
shards appear one by one as they are finished, under their final names, and its loaders glob
them: a loader started on an unfinished or stopped run reads the shards done so far, so
start training once the run has ended (``"complete": true`` in the manifest).

nanoGPT's ``train.py`` reads ``train.bin`` and ``val.bin`` (its evaluation) with
``np.memmap(path, dtype=np.uint16, mode="r")``, so the layout is ``uint16`` only and needs a
validation split. Its ``prepare.py`` scripts append the end-of-text id to each document.
"""

from __future__ import annotations

import pickle
import re
from dataclasses import dataclass

import numpy as np

from tokenmill.errors import CorpusOptionError

LAYOUTS = ("shards", "nanogpt", "llmc")

# llm.c's header: 256 int32; magic and version by token width (dev/data/data_common.py).
LLMC_HEADER_INTS = 256
LLMC_HEADER = {"uint16": (20240520, 1), "uint32": (20240801, 7)}
# The header's token count is an int32.
LLMC_MAX_SHARD_TOKENS = 2**31 - 1

META = "meta.pkl"
# tokenizer_hash of GPT-2's vocabulary (r50k_base): nanoGPT's default, for which its scripts
# write no meta.pkl (tests/test_layouts.py checks the value).
GPT2_SHA256 = "5f8e3f9266e944c51a0d2a270878d3c6e9767490b2b0f2966c4ac801cb078f31"
# A protocol every Python 3 reads, fixed so that meta.pkl's bytes (and sha256) never change.
META_PICKLE_PROTOCOL = 4

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Layout:
    """How one run's data files are named and what precedes the ids in each."""

    kind: str  # one of LAYOUTS
    dtype: str  # "uint16" or "uint32"
    name: str = ""  # llmc: the dataset name that starts every file name

    @property
    def single_file(self) -> bool:
        """One file per split (nanoGPT's), not shards."""
        return self.kind == "nanogpt"

    @property
    def header_bytes(self) -> int:
        return LLMC_HEADER_INTS * 4 if self.kind == "llmc" else 0

    def header(self, n_tokens: int) -> bytes:
        """What precedes the ids in a file of ``n_tokens`` ids (nothing but for llm.c).

        >>> h = np.frombuffer(Layout("llmc", "uint16", "tiny").header(12), dtype="<i4")
        >>> h[:4].tolist(), len(h)
        ([20240520, 1, 12, 0], 256)
        """
        if self.kind != "llmc":
            return b""
        magic, version = LLMC_HEADER[self.dtype]
        h = np.zeros(LLMC_HEADER_INTS, dtype="<i4")
        h[0], h[1], h[2] = magic, version, n_tokens
        return h.tobytes()

    def shard_name(self, split: str, k: int) -> str:
        """The file name of shard ``k`` of ``split``.

        >>> Layout("llmc", "uint16", "fineweb").shard_name("val", 0)
        'fineweb_val_000000.bin'
        >>> Layout("nanogpt", "uint16").shard_name("train", 0)
        'train.bin'
        """
        if self.kind == "nanogpt":
            return f"{split}.bin"
        if self.kind == "llmc":
            return f"{self.name}_{split}_{k:06d}.bin"
        return f"{split}_{k:06d}.bin"

    def describe(self) -> dict[str, object]:
        """What the manifest records of the layout beyond its kind."""
        if self.kind != "llmc":
            return {}
        magic, version = LLMC_HEADER[self.dtype]
        header = {"ints": LLMC_HEADER_INTS, "magic": magic, "version": version}
        return {"name": self.name, "header": header}


def own_files(name: str) -> re.Pattern[str]:
    """The data files of every layout (llm.c's for the dataset ``name``): the files of this
    tool that a run removes when its manifest does not list them. (A ``meta.pkl`` is removed
    only when a manifest lists it: the name is not this tool's alone.)"""
    llmc = re.escape(name) + r"_(?:train|val)_\d{6}\.bin" if name else r"(?!)"
    return re.compile(rf"(?:train|val)_\d{{6}}\.bin|(?:train|val)\.bin|{llmc}")


def check_name(name: str) -> str:
    """A dataset name for llm.c's file names: letters, digits, ``.``, ``_``, ``-``."""
    if not _NAME.fullmatch(name):
        raise CorpusOptionError(
            f"name {name!r} cannot start llm.c's file names: use letters, digits, '.', '_' "
            "and '-', starting with a letter or digit (--name)"
        )
    return name


def nanogpt_meta(vocab_size: int, tokenizer: str, sha256: str) -> bytes | None:
    """The bytes of nanoGPT's ``meta.pkl`` for a tokenizer, or None when none is written.

    nanoGPT's ``train.py`` reads ``meta.pkl`` for ``vocab_size`` alone (the size of the
    model's embedding and output layer); without the file it takes GPT-2's 50,304. Its
    ``sample.py`` reads ``stoi``/``itos`` from it and encodes a prompt character by character
    (``[stoi[c] for c in s]``), which is right only for its character-level datasets: a BPE
    tokenizer's ids are not one per character, so those keys are left out, and ``sample.py``
    stops at ``meta["stoi"]`` instead of sampling from wrong ids. For GPT-2's own vocabulary
    no file is written, as nanoGPT's ``openwebtext`` and ``shakespeare`` scripts do: then
    ``train.py`` uses 50,304 and ``sample.py`` GPT-2's tiktoken encoding, both right.

    >>> import pickle
    >>> pickle.loads(nanogpt_meta(4096, "holmes-4096", "ab12"))["vocab_size"]
    4096
    >>> nanogpt_meta(50257, "gpt2", GPT2_SHA256) is None
    True
    """
    if sha256 == GPT2_SHA256:
        return None
    meta = {"vocab_size": vocab_size, "tokenizer": tokenizer, "tokenizer_sha256": sha256}
    return pickle.dumps(meta, protocol=META_PICKLE_PROTOCOL)
