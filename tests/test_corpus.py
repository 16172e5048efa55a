"""tokenmill.corpus: shards equal the documents encoded one by one in memory (tiktoken ids as
the oracle), for any worker count, item size and shard size; resume after SIGKILL (and a kill
at any file operation); one run per folder; verify; bad inputs; the loader against slicing the
concatenated stream."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_runner import run_tokenmill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import tiktoken_encoding

import tokenmill
import tokenmill.corpus as corpus
from tokenmill.corpus import ShardLoader
from tokenmill.corpus.shards import sha256_file
from tokenmill.errors import CorpusInputError, CorruptShardError, ManifestError
from tokenmill.sources import bundled_corpus

EOT = 50256
DOCS = [
    "Hello world! It's 2024.",
    "",
    "naïve café 🙂 — ünïcödé\n\nwith  spaces   and\ttabs",
    "<|endoftext|> is plain text inside a document",
    "x" * 3000,
    "The quick brown fox.\nJumps over\nthe lazy dog.\n",
]


def oracle_stream(docs: list[str], position: str = "before") -> list[int]:
    enc = tiktoken_encoding("gpt2")
    out: list[int] = []
    for d in docs:
        ids = enc.encode_ordinary(d)
        out += [EOT, *ids] if position == "before" else [*ids, EOT]
    return out


def read_split(out: Path, split: str = "train") -> list[int]:
    m = corpus.read_manifest(out)
    dtype = np.dtype(m["dtype"])
    parts = [np.fromfile(out / s["file"], dtype=dtype) for s in m["splits"][split]["shards"]]
    return np.concatenate(parts).astype(np.int64).tolist() if parts else []


def folder_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def write_jsonl(path: Path, docs: list[str], field: str = "text") -> Path:
    path.write_text("".join(json.dumps({field: d, "id": i}) + "\n" for i, d in enumerate(docs)))
    return path


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> tuple[list[Path], list[str]]:
    """A .jsonl, a .jsonl.gz, text files and a Parquet file, and their documents in order."""
    d = tmp_path_factory.mktemp("mixed")
    holmes = bundled_corpus("holmes")[:300_000]
    files = [write_jsonl(d / "a.jsonl", DOCS)]
    with gzip.open(d / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("".join(json.dumps({"text": t}) + "\n" for t in DOCS[::-1]))
    files.append(d / "b.jsonl.gz")
    (d / "c.txt").write_text(holmes, encoding="utf-8")
    files.append(d / "c.txt")
    (d / "d.txt.gz").write_bytes(gzip.compress(holmes[:5000].encode()))
    files.append(d / "d.txt.gz")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": DOCS[:4]}), d / "e.parquet", row_group_size=2)
    files.append(d / "e.parquet")
    docs = DOCS + DOCS[::-1] + [holmes, holmes[:5000]] + DOCS[:4]
    return files, docs


@pytest.mark.parametrize("position", ["before", "after"])
def test_shards_are_the_documents_encoded_one_by_one(tmp_path, mixed, position):
    files, docs = mixed
    # Small items (the text file is cut into ~16 KB pieces) and small shards (many cuts).
    r = corpus.encode(
        files,
        "gpt2",
        tmp_path / "out",
        shard_tokens=7_777,
        item_bytes=16_000,
        eot_position=position,
        workers=2,
        progress=False,
    )
    m = r.manifest
    expected = oracle_stream(docs, position)
    assert read_split(tmp_path / "out") == expected
    shards = m["splits"]["train"]["shards"]
    assert [s["tokens"] for s in shards[:-1]] == [7_777] * (len(shards) - 1)
    assert 0 < shards[-1]["tokens"] <= 7_777
    assert m["plan"]["items"] > len(files)  # the text file was really cut
    assert m["documents"] == len(docs) == sum(s["documents"] for s in shards)
    assert m["tokens"] == len(expected)
    assert m["dtype"] == "uint16" and m["eot"] == {"id": EOT, "position": position}
    assert m["complete"] and "resume" not in m
    for s in shards:
        assert sha256_file(tmp_path / "out" / s["file"]) == s["sha256"]
    # Documents per shard: the documents whose first token is in it.
    starts, at = [], 0
    enc = tiktoken_encoding("gpt2")
    for d in docs:
        starts.append(at)
        at += len(enc.encode_ordinary(d)) + 1
    assert [s["documents"] for s in shards] == [
        sum(1 for x in starts if k * 7_777 <= x < (k + 1) * 7_777) for k in range(len(shards))
    ]


def test_identical_for_any_worker_count_and_item_size(tmp_path, mixed):
    files, _ = mixed
    runs = []
    for workers, item_bytes in [(1, 1 << 20), (2, 1 << 20), (2, 9_000), (1, 50_000)]:
        out = tmp_path / f"w{workers}-{item_bytes}"
        corpus.encode(
            files, "gpt2", out, shard_tokens=10_000, workers=workers, progress=False,
            item_bytes=item_bytes,
        )  # fmt: skip
        b = folder_bytes(out)
        # The plan (items) is recorded in the manifest; everything else must be equal.
        m = json.loads(b.pop("manifest.json"))
        m.pop("plan")
        m.pop("item_bytes")
        runs.append((b, m))
    for b, m in runs[1:]:
        assert b == runs[0][0]
        assert m == runs[0][1]


def test_progress_line_on_stderr(tmp_path, capsys):
    path = write_jsonl(tmp_path / "a.jsonl", DOCS)
    r = corpus.encode([path], "gpt2", tmp_path / "o", progress=True)
    err = capsys.readouterr().err
    last = err.split("\r")[-1]
    # The final redraw reports every byte and token, and ends the line.
    assert f"{r.manifest['tokens']:,} tokens" in last and "MB/s" in last and "(100%)" in last
    assert last.endswith("\x1b[K\n")
    corpus.encode([path], "gpt2", tmp_path / "p", progress=False)
    assert capsys.readouterr().err == ""


def test_uint32_for_large_vocabularies_and_no_eot(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", DOCS)
    corpus.encode([path], "o200k_base", tmp_path / "o", eot=None, progress=False)
    m = corpus.read_manifest(tmp_path / "o")
    assert m["dtype"] == "uint32" and m["eot"] == {"id": None, "position": None}
    enc = tiktoken_encoding("o200k_base")
    assert read_split(tmp_path / "o") == [i for d in DOCS for i in enc.encode_ordinary(d)]
    assert m["documents"] == len(DOCS)


def test_custom_pattern_reads_a_text_file_whole(tmp_path):
    tok = tokenmill.train(bundled_corpus("shakespeare")[:50_000], 300, pattern=r"\w+|\s+|.")
    text = bundled_corpus("shakespeare")[:100_000]
    (tmp_path / "t.txt").write_text(text)
    r = corpus.encode(
        [tmp_path / "t.txt"], tok, tmp_path / "o", eot=None, item_bytes=1000, progress=False
    )
    assert r.manifest["plan"]["items"] == 1
    assert read_split(tmp_path / "o") == tok.encode_ordinary(text)


def test_validation_split_by_document_hash(tmp_path):
    docs = [f"document number {i} " * (i % 7 + 1) for i in range(300)] + ["twin"] * 5
    path = write_jsonl(tmp_path / "a.jsonl", docs)
    r = corpus.encode([path], "gpt2", tmp_path / "o", val_fraction=0.2, progress=False)
    from tokenmill.sources.read import doc_split

    val = [d for d in docs if doc_split(d.encode(), 0.2)]
    train = [d for d in docs if not doc_split(d.encode(), 0.2)]
    assert 30 < len(val) < 100  # about 20%
    assert read_split(tmp_path / "o", "train") == oracle_stream(train)
    assert read_split(tmp_path / "o", "val") == oracle_stream(val)
    assert r.manifest["splits"]["val"]["documents"] == len(val)
    assert "twin" in val or "twin" in train  # duplicates land together
    assert (docs.count("twin") == val.count("twin")) or (docs.count("twin") == train.count("twin"))


def test_a_long_text_file_cut_into_items_lands_whole_in_one_split(tmp_path):
    from tokenmill.sources.read import SPLIT_KEY_BYTES, doc_split

    text = bundled_corpus("holmes")[:300_000]
    (tmp_path / "t.txt").write_text(text)
    r = corpus.encode(
        [tmp_path / "t.txt"], "gpt2", tmp_path / "o", val_fraction=0.5, item_bytes=20_000,
        progress=False,
    )  # fmt: skip
    assert r.manifest["plan"]["items"] > 10
    side = "val" if doc_split(text.encode()[:SPLIT_KEY_BYTES], 0.5) else "train"
    other = "train" if side == "val" else "val"
    assert read_split(tmp_path / "o", side) == oracle_stream([text])
    assert read_split(tmp_path / "o", other) == []


def test_indented_and_crlf_text_is_cut_into_items(tmp_path):
    holmes = bundled_corpus("holmes")[:200_000]  # every line is indented
    (tmp_path / "h.txt").write_bytes(holmes.replace("\n", "\r\n").encode())
    r = corpus.encode([tmp_path / "h.txt"], "gpt2", tmp_path / "o", item_bytes=20_000,
                      progress=False)  # fmt: skip
    assert r.manifest["plan"]["items"] >= 10
    assert read_split(tmp_path / "o") == oracle_stream([holmes.replace("\n", "\r\n")])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    docs=st.lists(st.text(max_size=40), max_size=12),
    shard_tokens=st.integers(1, 30),
    position=st.sampled_from(["before", "after"]),
)
def test_any_documents_any_shard_size(tmp_path, docs, shard_tokens, position):
    out = tmp_path / "p"
    path = write_jsonl(tmp_path / "a.jsonl", docs)
    r = corpus.encode(
        [path], "gpt2", out, shard_tokens=shard_tokens, eot_position=position, overwrite=True,
        progress=False, workers=2, item_bytes=64,
    )  # fmt: skip
    expected = oracle_stream(docs, position)
    assert read_split(out) == expected
    sizes = [s["tokens"] for s in r.manifest["splits"]["train"]["shards"]]
    assert sum(sizes) == len(expected)
    assert all(n == shard_tokens for n in sizes[:-1])


# --------------------------------------------------------------------------- resume, verify

KILL_SCRIPT = """
import sys, tokenmill.corpus
tokenmill.corpus.encode(sys.argv[1:-1], "gpt2", sys.argv[-1], shard_tokens=20_000,
                        item_bytes=40_000, workers=1, progress=False)
"""


def test_resume_after_sigkill_gives_the_same_shards(tmp_path):
    text = bundled_corpus("holmes")
    docs = [text[i : i + 5_000] for i in range(0, len(text), 5_000)]
    inputs = [str(write_jsonl(tmp_path / "a.jsonl", docs)), str(tmp_path / "b.txt")]
    (tmp_path / "b.txt").write_text(text)
    clean = tmp_path / "clean"
    corpus.encode(inputs, "gpt2", clean, shard_tokens=20_000, item_bytes=40_000, progress=False)
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, *inputs, str(out)])
    deadline = time.monotonic() + 60
    # Kill it once a checkpoint exists and some shards are done, well before the end.
    while time.monotonic() < deadline:
        try:
            m = json.loads((out / "manifest.json").read_text())
            if len(m["splits"]["train"]["shards"]) >= 3:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    m = json.loads((out / "manifest.json").read_text())
    assert not m["complete"], "the run finished before it was killed; make the corpus larger"
    # What a kill in the middle of an atomic write leaves behind is cleaned up.
    (out / ".train_000999.bin.x1y2z3").write_bytes(b"half a shard")
    r = corpus.encode(inputs, "gpt2", out, shard_tokens=20_000, item_bytes=40_000, progress=False)
    assert r.resumed_from_item > 0
    assert r.bytes_read < r.manifest["bytes"]  # the done part was not read again
    assert folder_bytes(out) == folder_bytes(clean)
    # A finished run is not redone.
    again = corpus.encode(
        inputs, "gpt2", out, shard_tokens=20_000, item_bytes=40_000, progress=False
    )
    assert again.bytes_read == 0 and again.manifest == r.manifest


class _Killed(BaseException):
    """Stands for SIGKILL: the run stops where it is (its finally blocks only close files)."""


@pytest.mark.parametrize("layout", ["shards", "llmc"])
@pytest.mark.parametrize("shard_tokens", [3_000, 700])  # one or several shards per item
def test_a_run_killed_after_a_shard_filled_but_before_its_checkpoint_resumes(
    tmp_path, monkeypatch, shard_tokens, layout
):
    # The window the SIGKILL test hits only by chance: the pending shard filled, was renamed
    # to its shard name and a new pending file holds what followed, but the manifest still
    # describes the previous checkpoint.
    import tokenmill.corpus.driver as driver

    text = bundled_corpus("holmes")[:200_000]
    path = write_jsonl(
        tmp_path / "a.jsonl", [text[i : i + 2_000] for i in range(0, 200_000, 2_000)]
    )
    opts = dict(shard_tokens=shard_tokens, item_bytes=10_000, layout=layout, progress=False)
    if layout == "llmc":
        opts["name"] = "c"
    corpus.encode([path], "gpt2", tmp_path / "clean", **opts)
    want = folder_bytes(tmp_path / "clean")
    real = driver._checkpoint
    shards_at_checkpoint = 0

    def checkpoint_or_die(out, header, writers, *args):
        nonlocal shards_at_checkpoint
        w = writers["train"]
        if shards_at_checkpoint >= 2 and w.new_shards and w.fill:
            raise _Killed
        real(out, header, writers, *args)
        shards_at_checkpoint = len(w.shards)

    monkeypatch.setattr(driver, "_checkpoint", checkpoint_or_die)
    with pytest.raises(_Killed):
        corpus.encode([path], "gpt2", tmp_path / "o", **opts)
    monkeypatch.setattr(driver, "_checkpoint", real)
    m = corpus.read_manifest(tmp_path / "o")
    listed = len(m["splits"]["train"]["shards"])
    prefix = "c_" if layout == "llmc" else ""
    # Written after the checkpoint.
    assert (tmp_path / "o" / f"{prefix}train_{listed:06d}.bin").is_file()
    r = corpus.encode([path], "gpt2", tmp_path / "o", **opts)
    assert r.resumed_from_item > 0
    assert folder_bytes(tmp_path / "o") == want


def test_a_run_killed_before_its_first_shard_resumes(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", DOCS)
    out = tmp_path / "o"
    corpus.encode([path], "gpt2", out, progress=False)
    want = folder_bytes(out)
    # The state right after start: the first manifest, no shard, a shard half written.
    m = json.loads(want["manifest.json"])
    first = {k: v for k, v in m.items() if k not in ("tokens", "documents", "bytes", "skipped")}
    first["complete"] = False
    first["splits"]["train"] = {"shards": [], "tokens": 0, "documents": 0}
    empty = hashlib.sha256(b"").hexdigest()
    counts = {"bytes": 0, "skipped_records": 0, "skipped_files": 0, "train_documents": 0}
    first["resume"] = {
        "next_item": 0,
        "line_base": 0,
        "pending": {"train": {"tokens": 0, "documents": 0, "sha256": empty}},
        "counts": counts,
    }
    for p in out.iterdir():
        p.unlink()
    (out / "manifest.json").write_text(json.dumps(first))
    (out / ".pending-train.bin").write_bytes(b"")
    (out / ".train_000000.bin.abcdef").write_bytes(b"xx")
    r = corpus.encode([path], "gpt2", out, progress=False)
    assert r.resumed_from_item == 0 and folder_bytes(out) == want


DIE_AT_FIRST_MANIFEST = """
import os, sys, tokenmill.corpus, tokenmill.corpus.shards as shards
shards.write_manifest = lambda *args: os._exit(9)  # a SIGKILL just before the first manifest
tokenmill.corpus.encode([sys.argv[1]], "gpt2", sys.argv[2], shard_tokens=500, progress=False)
"""


def test_a_run_killed_before_its_first_manifest_starts_over(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", DOCS)
    corpus.encode([path], "gpt2", tmp_path / "clean", shard_tokens=500, progress=False)
    want = folder_bytes(tmp_path / "clean")
    out = tmp_path / "o"
    p = subprocess.run([sys.executable, "-c", DIE_AT_FIRST_MANIFEST, str(path), str(out)])
    assert p.returncode == 9
    # No file yet but the dead run's lock (which binds no one): nothing to take for a shard.
    assert [q.name for q in out.iterdir() if q.name != ".lock"] == []
    r = corpus.encode([path], "gpt2", out, shard_tokens=500, progress=False)
    assert r.resumed_from_item == 0 and folder_bytes(out) == want
    # What an older tokenmill killed in that window left: a pending file and no manifest.
    for q in out.iterdir():
        q.unlink()
    (out / ".pending-train.bin").write_bytes(b"\x01\x02" * 100)
    (out / ".lock").write_text("12345\n")
    corpus.encode([path], "gpt2", out, shard_tokens=500, progress=False)
    assert folder_bytes(out) == want


class _KillAt:
    """Raises _Killed at the k-th call of the operations that change a run's files on disk
    (fsync, rename, unlink), once; counts them."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.n = 0

    def patch(self, mp: pytest.MonkeyPatch) -> None:
        for name in ("fsync", "replace", "unlink"):
            mp.setattr(os, name, self._wrap(getattr(os, name)))

    def _wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def op(*args: Any, **kwargs: Any) -> Any:
            self.n += 1
            if self.n == self.k:
                raise _Killed
            return real(*args, **kwargs)

        return op


@pytest.mark.parametrize(
    ("layout", "start"),
    [
        ("shards", "empty"),
        ("shards", "overwrite"),
        ("shards", "no-resume"),
        ("llmc", "empty"),  # a header, rewritten in each split's last shard
        ("nanogpt", "overwrite"),  # one file per split and meta.pkl, over another layout's run
    ],
)
def test_a_run_killed_at_any_file_operation_completes_when_run_again(
    tmp_path, monkeypatch, layout, start
):
    # Killed at each step in turn, the same call run again gives the shards of a run never
    # killed. "overwrite" and "no-resume" start over in a folder holding a finished run.
    tok = tokenmill.load("gpt2")
    if layout == "nanogpt":  # a tokenizer that gets a meta.pkl
        tok = tokenmill.train(bundled_corpus("holmes")[:20_000], 300,
                              special_tokens=["<|endoftext|>"])  # fmt: skip
    path = write_jsonl(tmp_path / "a.jsonl", [f"{d} {k}" for k, d in enumerate(DOCS * 4)])
    opts: dict[str, Any] = dict(
        layout=layout, item_bytes=3_000, val_fraction=0.3, workers=1, progress=False
    )
    if layout != "nanogpt":
        opts["shard_tokens"] = 500
    if layout == "llmc":
        opts["name"] = "corpus"  # the same file names in every folder
    corpus.encode([path], tok, tmp_path / "clean", **opts)
    want = folder_bytes(tmp_path / "clean")
    assert len(json.loads(want["manifest.json"])["splits"]["val"]["shards"]) >= 1
    again = {"empty": {}, "overwrite": {"overwrite": True}, "no-resume": {"resume": False}}[start]
    if start != "empty":
        # The finished run: another shard size (in tokenmill's layout) for "overwrite", the
        # same run for "no-resume".
        before = opts
        if start == "overwrite":
            before = dict(opts, layout="shards", shard_tokens=300)
        corpus.encode([path], tok, tmp_path / "before", **before)
    k = 0
    killed = True
    while killed:
        k += 1
        out = tmp_path / f"k{k}"
        if start != "empty":
            shutil.copytree(tmp_path / "before", out)
        kill = _KillAt(k)
        with monkeypatch.context() as mp:
            kill.patch(mp)
            try:
                corpus.encode([path], tok, out, **opts, **again)
                killed = False
            except _Killed:
                pass
        if killed:
            corpus.encode([path], tok, out, **opts, **again)
        assert folder_bytes(out) == want, f"killed at operation {k}"
        shutil.rmtree(out)
    assert k > 20  # every shard, checkpoint and removal was a place to die


def test_no_resume_encodes_a_finished_folder_again(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", DOCS)
    out = tmp_path / "o"
    corpus.encode([path], "gpt2", out, shard_tokens=10, progress=False)
    want = folder_bytes(out)
    # Damaged since, and a stray shard of this tool: starting over replaces and removes them.
    (out / "train_000001.bin").write_bytes(bytes(20))
    (out / "train_000999.bin").write_bytes(b"..")
    p = run_cli("encode-corpus", str(path), "-o", str(out), "--shard-tokens", "10", "--no-resume")
    assert p.returncode == 0, p.stderr
    assert "resumed" not in p.stdout
    assert folder_bytes(out) == want
    r = corpus.encode([path], "gpt2", out, shard_tokens=10, resume=False, progress=False)
    assert r.resumed_from_item == 0 and r.bytes_read == r.manifest["bytes"] > 0


def test_a_second_run_into_a_folder_in_use_is_refused(tmp_path, monkeypatch):
    import tokenmill.corpus.driver as driver

    paths = [str(write_jsonl(tmp_path / f"{k}.jsonl", DOCS[k:] + DOCS[:k])) for k in range(3)]
    corpus.encode(paths, "gpt2", tmp_path / "clean", shard_tokens=500, progress=False)
    want = folder_bytes(tmp_path / "clean")
    out = tmp_path / "o"
    held, go = threading.Event(), threading.Event()
    real = driver._checkpoint

    def checkpoint_and_wait(out_, header, writers, next_item, *args):
        real(out_, header, writers, next_item, *args)
        if next_item == 1:  # one of three items done: the run holds the folder mid-way
            held.set()
            assert go.wait(120)

    monkeypatch.setattr(driver, "_checkpoint", checkpoint_and_wait)
    failed: list[BaseException] = []

    def first_run() -> None:
        try:
            corpus.encode(paths, "gpt2", out, shard_tokens=500, progress=False)
        except BaseException as e:
            failed.append(e)
        finally:
            held.set()

    t = threading.Thread(target=first_run)
    t.start()
    try:
        assert held.wait(120) and not failed
        said = rf"{re.escape(str(out))}: another encode run \(pid {os.getpid()}\) holds this folder"
        for how in ({}, {"resume": False}, {"overwrite": True}):
            with pytest.raises(ManifestError, match=said) as err:
                corpus.encode(paths, "gpt2", out, shard_tokens=500, progress=False, **how)
            assert isinstance(err.value, corpus.FolderLockedError)
        p = run_cli("encode-corpus", *paths, "-o", str(out), "--shard-tokens", "500")
        assert p.returncode == 2
        assert re.search(said, p.stderr.replace("\n", " ")), p.stderr
        corpus.verify(out)  # the checkpoint's shards check out while the run holds the lock
    finally:
        go.set()
        t.join()
    assert not failed
    assert folder_bytes(out) == want


def test_the_lock_taken_is_on_the_file_in_the_folder(tmp_path, monkeypatch):
    # A run that finishes between another's open and flock of .lock removes the file; the
    # other then locks the new file (which a third run may hold), not the removed one.
    import fcntl

    from tokenmill.corpus.driver import _locked

    out = tmp_path / "o"
    real_flock = fcntl.flock
    third = []

    def flock_after_a_swap(fd, op):
        if not third:
            (out / ".lock").unlink()
            third.append(open(out / ".lock", "w"))
            real_flock(third[0].fileno(), fcntl.LOCK_EX)
        return real_flock(fd, op)

    monkeypatch.setattr(fcntl, "flock", flock_after_a_swap)
    with pytest.raises(ManifestError, match="another encode run"):
        with _locked(out):
            pass
    third[0].close()
    with _locked(out):  # the third run is gone: this one holds the folder
        assert (out / ".lock").read_text() == f"{os.getpid()}\n"
    assert list(out.iterdir()) == []


def test_resume_refuses_a_different_run_and_overwrite_replaces_it(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", DOCS)
    corpus.encode([path], "gpt2", tmp_path / "o", progress=False)
    with pytest.raises(ManifestError, match=r"shard_tokens differ.*overwrite"):
        corpus.encode([path], "gpt2", tmp_path / "o", shard_tokens=5, progress=False)
    r = corpus.encode(
        [path], "gpt2", tmp_path / "o", shard_tokens=5, overwrite=True, progress=False
    )
    assert len(r.manifest["splits"]["train"]["shards"]) > 1
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == sorted(
        ["manifest.json"] + [s["file"] for s in r.manifest["splits"]["train"]["shards"]]
    )


def test_verify_names_a_corrupted_shard(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", DOCS * 3)
    corpus.encode([path], "gpt2", tmp_path / "o", shard_tokens=100, progress=False)
    assert corpus.verify(tmp_path / "o")["tokens"] == len(oracle_stream(DOCS * 3))
    shard = tmp_path / "o" / "train_000002.bin"
    data = bytearray(shard.read_bytes())
    data[17] ^= 1
    shard.write_bytes(bytes(data))
    with pytest.raises(CorruptShardError, match=r"train_000002.bin: sha256"):
        corpus.verify(tmp_path / "o")
    cli = run_cli("verify-shards", str(tmp_path / "o"))
    assert cli.returncode == 2
    assert "train_000002.bin" in cli.stderr and cli.stderr.startswith("tokenmill: error:")
    shard.write_bytes(bytes(data[:-2]))
    with pytest.raises(CorruptShardError, match=r"train_000002.bin: 198 bytes"):
        corpus.verify(tmp_path / "o")
    shard.unlink()
    with pytest.raises(CorruptShardError, match=r"train_000002.bin: missing"):
        corpus.verify(tmp_path / "o")


# ------------------------------------------------------------------------------ bad inputs


@pytest.fixture()
def bad_jsonl(tmp_path) -> Path:
    lines = [
        json.dumps({"text": "good one"}),
        json.dumps({"body": "no text field"}),
        json.dumps({"text": "good two"}),
        '{"text": "broken json',
        json.dumps({"text": 17}),
    ]
    raw = "\n".join(lines).encode() + b'\n{"text": "bad \xff utf8"}\n' + b'{"text": "last"}\n'
    path = tmp_path / "bad.jsonl"
    path.write_bytes(raw)
    return path


@pytest.mark.parametrize(
    "item_bytes",
    [1 << 20, 30],  # one item, and an item per line (line numbers add up)
)
def test_bad_records_stop_with_file_and_line(tmp_path, bad_jsonl, item_bytes):
    with pytest.raises(CorpusInputError, match=r"bad.jsonl, line 2: no 'text' field.*skip"):
        corpus.encode([bad_jsonl], "gpt2", tmp_path / "o", item_bytes=item_bytes, progress=False)


def test_a_stop_while_the_reader_is_ahead_does_not_hang(tmp_path, monkeypatch):
    from tokenmill.corpus import driver

    monkeypatch.setattr(driver, "BATCH_BYTES", 50)  # the reader fills its queue at once
    lines = ['{"no": "text"}'] + [json.dumps({"text": f"document {i} " * 20}) for i in range(300)]
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CorpusInputError, match=r"a.jsonl, line 1: no 'text' field"):
        corpus.encode([path], "gpt2", tmp_path / "o", progress=False)
    assert not [t for t in threading.enumerate() if t.name == "tokenmill-corpus-reader"]


def test_bad_records_skipped_and_counted(tmp_path, bad_jsonl, capsys):
    r = corpus.encode(
        [bad_jsonl], "gpt2", tmp_path / "o", on_error="skip", item_bytes=30, progress=None
    )
    assert read_split(tmp_path / "o") == oracle_stream(["good one", "good two", "last"])
    assert r.manifest["skipped"] == {"records": 4, "files": 0}
    err = capsys.readouterr().err
    for where in ["line 2: no 'text'", "line 4: not JSON", "line 5: field 'text' is int",
                  "line 6: not UTF-8"]:  # fmt: skip
        assert f"bad.jsonl, {where}" in err


def test_invalid_utf8_line_in_a_text_file(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"line one\nline \xc3\x28 two\nline three\n")
    with pytest.raises(CorpusInputError, match=r"t.txt, line 2: not UTF-8 at byte 5"):
        corpus.encode([path], "gpt2", tmp_path / "o", progress=False)
    r = corpus.encode([path], "gpt2", tmp_path / "o", on_error="skip", progress=False)
    assert read_split(tmp_path / "o") == oracle_stream(["line one\nline three\n"])
    assert r.manifest["skipped"]["records"] == 1


def test_unreadable_files(tmp_path):
    good = write_jsonl(tmp_path / "a.jsonl", ["fine"])
    (tmp_path / "dangling.txt").symlink_to(tmp_path / "nowhere")
    (tmp_path / "fake.txt.gz").write_bytes(b"not gzip at all")
    inputs = [good, tmp_path / "dangling.txt", tmp_path / "fake.txt.gz"]
    with pytest.raises(CorpusInputError, match=r"dangling.txt: cannot read it"):
        corpus.encode(inputs, "gpt2", tmp_path / "o", progress=False)
    r = corpus.encode(inputs, "gpt2", tmp_path / "o", on_error="skip", progress=False)
    assert r.manifest["skipped"] == {"records": 0, "files": 2}
    assert read_split(tmp_path / "o") == oracle_stream(["fine"])
    with pytest.raises(CorpusInputError, match=r"nothing.txt: no such file"):
        corpus.encode([tmp_path / "nothing.txt"], "gpt2", tmp_path / "o2", progress=False)


def test_parquet_missing_column_and_null_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"body": ["a", None, "c"]}), tmp_path / "p.parquet")
    with pytest.raises(CorpusInputError, match=r"p.parquet: no column 'text'.*body"):
        corpus.encode([tmp_path / "p.parquet"], "gpt2", tmp_path / "o", progress=False)
    with pytest.raises(CorpusInputError, match=r"p.parquet, row 2: column 'body' is null"):
        corpus.encode(
            [tmp_path / "p.parquet"], "gpt2", tmp_path / "o2", text_field="body", progress=False
        )
    # The stopped run resumes with on_error="skip" (the choice is not part of its identity).
    r = corpus.encode(
        [tmp_path / "p.parquet"], "gpt2", tmp_path / "o2", text_field="body", on_error="skip",
        progress=False,
    )  # fmt: skip
    assert read_split(tmp_path / "o2") == oracle_stream(["a", "c"])
    assert r.manifest["skipped"]["records"] == 1


def test_bad_arguments(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", ["x"])
    trained = tokenmill.train("ab ab ab", 258)
    with pytest.raises(ValueError, match=r"has no special token '<\|endoftext\|>'.*eot="):
        corpus.encode([path], trained, tmp_path / "o")
    with pytest.raises(ValueError, match="do not fit in uint16"):
        corpus.encode([path], "o200k_base", tmp_path / "o", dtype="uint16")
    with pytest.raises(ValueError, match="on_error"):
        corpus.encode([path], "gpt2", tmp_path / "o", on_error="ignore")
    with pytest.raises(ValueError, match="val_fraction"):
        corpus.encode([path], "gpt2", tmp_path / "o", val_fraction=1.5)
    with pytest.raises(ValueError, match="workers"):
        corpus.encode([path], "gpt2", tmp_path / "o", workers=0)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "x.bin").write_bytes(b"..")
    with pytest.raises(ManifestError, match=r"no manifest.*overwrite"):
        corpus.encode([path], "gpt2", tmp_path / "junk")


# ------------------------------------------------------------------------------ loader


@pytest.fixture(scope="module")
def shard_dir(tmp_path_factory) -> tuple[Path, np.ndarray]:
    d = tmp_path_factory.mktemp("loader")
    text = bundled_corpus("shakespeare")[:40_000]
    path = write_jsonl(d / "a.jsonl", [text[i : i + 700] for i in range(0, len(text), 700)])
    corpus.encode([path], "gpt2", d / "s", shard_tokens=1_000, progress=False)
    return d / "s", np.array(read_split(d / "s"), dtype=np.int64)


@pytest.mark.parametrize("t,b", [(7, 3), (64, 4), (1_000, 2), (2_500, 1)])
def test_loader_sequential_is_the_stream_sliced(shard_dir, t, b):
    out, stream = shard_dir
    loader = ShardLoader(out, t, b)
    batches = list(loader)
    assert len(batches) == len(loader) == ((len(stream) - 1) // t) // b > 0
    for k, (x, y) in enumerate(batches):
        assert x.shape == y.shape == (b, t) and x.dtype == np.int64
        for i in range(b):
            p = (k * b + i) * t
            assert x[i].tolist() == stream[p : p + t].tolist()
            assert y[i].tolist() == stream[p + 1 : p + t + 1].tolist()


def test_loader_ranks_share_the_batches(shard_dir):
    out, _ = shard_dir
    whole = [x.tolist() for x, _ in ShardLoader(out, 16, 4)]
    parts = [
        [x.tolist() for x, _ in ShardLoader(out, 16, 4, rank=r, world_size=3)] for r in range(3)
    ]
    merged = [parts[k % 3][k // 3] for k in range(len(whole))]
    assert merged == whole


def test_loader_random_is_seeded_windows_of_the_stream(shard_dir):
    out, stream = shard_dir
    a = ShardLoader(out, 50, 8, order="random", seed=3)
    it = iter(a)
    first = [next(it) for _ in range(20)]
    again = iter(ShardLoader(out, 50, 8, order="random", seed=3))
    assert all((x == next(again)[0]).all() for x, _ in first)
    other = next(iter(ShardLoader(out, 50, 8, order="random", seed=4)))[0]
    assert not (other == first[0][0]).all()
    index = {tuple(stream[p : p + 51].tolist()) for p in range(len(stream) - 50)}
    for x, y in first:
        for i in range(8):
            assert (x[i, 1:] == y[i, :-1]).all()
            assert (*tuple(x[i].tolist()), int(y[i, -1])) in index
    with pytest.raises(TypeError):
        len(a)


def test_loader_errors(shard_dir, tmp_path):
    out, stream = shard_dir
    with pytest.raises(ManifestError, match="no 'val' split"):
        ShardLoader(out, 8, 2, split="val")
    with pytest.raises(ValueError, match="fewer than context_length"):
        ShardLoader(out, len(stream), 1)
    with pytest.raises(ManifestError, match="no manifest"):
        ShardLoader(tmp_path, 8, 2)


# ------------------------------------------------------------------------------ CLI


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_tokenmill(*args, timeout=120)


def test_cli_encode_corpus(tmp_path, mixed):
    files, docs = mixed
    out = tmp_path / "o"
    p = run_cli("encode-corpus", *map(str, files), "-t", "gpt2", "-o", str(out),
                "--shard-tokens", "50000", "--json", "-q")  # fmt: skip
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["splits"]["train"]["documents"] == len(docs)
    assert summary["splits"]["train"]["tokens"] == len(oracle_stream(docs))
    assert read_split(out) == oracle_stream(docs)
    p = run_cli("encode-corpus", str(files[0]), "-o", str(tmp_path / "n"), "--no-eot",
                "--eot-position", "after")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"train: {len(DOCS)} documents")
    assert read_split(tmp_path / "n") == [
        i for d in DOCS for i in tiktoken_encoding("gpt2").encode_ordinary(d)
    ]
    p = run_cli("verify-shards", str(out))
    assert p.returncode == 0 and p.stdout.startswith("ok: 2 shards, 90,410 tokens")
    p = run_cli("encode-corpus", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "m"))
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        f"tokenmill: error: {tmp_path / 'missing.jsonl'}: no such file"
    ]


def test_shared_corpus_equals_tiktoken(tmp_path, shared_data):
    files = sorted((shared_data / "english_large").iterdir())
    corpus.encode([shared_data / "english_large"], "cl100k_base", tmp_path / "o",
                  item_bytes=1 << 20, shard_tokens=1 << 20, progress=False)  # fmt: skip
    enc = tiktoken_encoding("cl100k_base")
    want: list[int] = []
    for f in files:
        want += [enc.eot_token, *enc.encode_ordinary(f.read_text("utf-8"))]
    assert read_split(tmp_path / "o") == want
    assert os.path.getsize(tmp_path / "o" / "train_000000.bin") == 4 << 20
