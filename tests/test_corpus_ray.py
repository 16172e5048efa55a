"""The Ray engine: a local Ray started once for these tests. Shards equal the local engine's
byte for byte; `train(engine="ray")` learns exactly the local trainer's merges."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from cli_runner import run_tokenmill

import tokenmill
import tokenmill.corpus as corpus
from tokenmill import training
from tokenmill.errors import CorpusFileError, CorpusInputError
from tokenmill.sources import bundled_corpus

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray (2 CPUs) for the module, shut down at its end (start-up costs seconds)."""
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def folder_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("ray")
    holmes = bundled_corpus("holmes")
    # Shakespeare's lines start with letters: a text file with many safe cut points.
    (d / "a.txt").write_text(bundled_corpus("shakespeare")[:400_000])
    docs = [holmes[i : i + 3_000] for i in range(400_000, 700_000, 3_000)]
    (d / "b.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs))
    (d / "c.txt.gz").write_bytes(gzip.compress(holmes[:200_000].encode()))
    return [d / "a.txt", d / "b.jsonl", d / "c.txt.gz"]


def test_ray_shards_equal_local_shards(local_ray, inputs, tmp_path):
    kw = dict(shard_tokens=30_000, item_bytes=50_000, val_fraction=0.1, progress=False)
    corpus.encode(inputs, "gpt2", tmp_path / "local1", workers=1, **kw)
    corpus.encode(inputs, "gpt2", tmp_path / "local2", workers=2, **kw)
    r = corpus.encode(inputs, "gpt2", tmp_path / "ray", engine="ray", workers=2, **kw)
    assert r.manifest["plan"]["items"] > 10  # many tasks, several in flight
    local = folder_bytes(tmp_path / "local1")
    assert folder_bytes(tmp_path / "local2") == local
    assert folder_bytes(tmp_path / "ray") == local
    assert r.manifest["splits"]["val"]["tokens"] > 0


def test_ray_reports_bad_records_with_file_and_line(local_ray, tmp_path):
    path = tmp_path / "bad.jsonl"
    lines = [json.dumps({"text": f"doc {i}"}) for i in range(50)]
    lines[37] = '{"text": oops}'
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CorpusInputError, match=r"bad.jsonl, line 38: not JSON"):
        corpus.encode([path], "gpt2", tmp_path / "o", engine="ray", item_bytes=100, progress=False)
    r = corpus.encode(
        [path], "gpt2", tmp_path / "o", engine="ray", item_bytes=100, on_error="skip",
        progress=False,
    )  # fmt: skip
    assert r.manifest["skipped"]["records"] == 1 and r.manifest["documents"] == 49


@pytest.mark.parametrize("pattern", ["cl100k", "gpt2", r"\w+| ?[^\w\s]+|\s+"])
def test_train_on_ray_learns_the_local_merges(local_ray, inputs, monkeypatch, pattern):
    monkeypatch.setattr(training, "RAY_ITEM_BYTES", 40_000)  # many pieces per file
    files = [*inputs[:2], inputs[2]]
    kw = dict(pattern=pattern, special_tokens=["<|endoftext|>"], progress=False)
    local = tokenmill.train(files, 1_500, **kw)
    on_ray = tokenmill.train(files, 1_500, engine="ray", num_threads=2, **kw)
    assert on_ray.merges == local.merges
    assert on_ray == local


def test_train_on_ray_from_a_base(local_ray, inputs, monkeypatch):
    monkeypatch.setattr(training, "RAY_ITEM_BYTES", 40_000)
    kw = dict(base="gpt2", special_tokens=["<|domain|>"], progress=False)
    local = tokenmill.train(inputs[:2], 50_400, **kw)
    assert tokenmill.train(inputs[:2], 50_400, engine="ray", num_threads=2, **kw) == local


def test_train_on_ray_reads_parquet_as_the_local_trainer_does(local_ray, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = bundled_corpus("holmes")[:200_000].splitlines(keepends=True)
    pq.write_table(pa.table({"body": lines}), tmp_path / "h.parquet", row_group_size=1000)
    files = [tmp_path / "h.parquet"]
    local = tokenmill.train(files, 800, text_field="body", progress=False)
    assert local.merges == tokenmill.train(lines, 800, progress=False).merges
    on_ray = tokenmill.train(files, 800, text_field="body", engine="ray", progress=False)
    assert on_ray.merges == local.merges


def test_train_on_ray_of_a_shared_corpus(local_ray, shared_data, monkeypatch):
    monkeypatch.setattr(training, "RAY_ITEM_BYTES", 2 << 20)
    files = sorted((shared_data / "english_large").iterdir())
    local = tokenmill.train(files, 4_096, progress=False)
    assert tokenmill.train(files, 4_096, engine="ray", progress=False).merges == local.merges


def test_train_on_ray_errors(local_ray, tmp_path):
    with pytest.raises(ValueError, match="engine='ray' trains on files"):
        tokenmill.train("some text", 300, engine="ray")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"nope": 1}\n')
    with pytest.raises(CorpusFileError, match=r"bad.jsonl, line 2"):
        tokenmill.train([bad], 300, engine="ray")


def test_cli_train_engine_ray(inputs, tmp_path):
    """`tokenmill train --engine ray` (its own local Ray, in a subprocess) writes the tokenizer
    the local trainer learns."""
    out = tmp_path / "t.tokenmill"
    p = run_tokenmill(
        "train", str(inputs[0]), "-v", "600", "--engine", "ray", "--threads", "2",
        "-o", str(out), "--json", "-q",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert tokenmill.load(out).merges == tokenmill.train([inputs[0]], 600, progress=False).merges
    p = run_tokenmill("train", "--engine", "ray", timeout=60)
    assert p.returncode == 2
    assert p.stderr == "tokenmill: error: --engine ray trains on files: name them (FILE...)\n"
