"""tokenmill.sources: the one safe-cut rule against the splitter (hypothesis), the one file
finder against the files written, and ``tokenmill train`` and ``encode-corpus`` reading the
same folder as the same texts (the texts given directly as the oracle)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_tokenmill
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
import tokenmill.corpus as corpus
from tokenmill import _core
from tokenmill.errors import CorpusFileError, CorpusInputError
from tokenmill.sources import bundled_corpus, cut, find, read, read_text

# --------------------------------------------------------------------------- the cut rule

CUT_ALPHABET = st.sampled_from(
    [*"aZ  \n\n\r\t.'1é中\u0301!", "'s", "  ", "\r\n", "ab cd", "x\ny", ".\nA"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(CUT_ALPHABET, max_size=30).map("".join))
def test_cutting_text_at_safe_places_keeps_every_chunk(text):
    """Every place the rule allows (where a reader cuts a range or a block, the report and
    the trainer a long text) leaves the chunks of gpt2, cl100k and o200k unchanged, on bytes
    and on str alike: the ids cannot change either."""
    data = text.encode()
    cuts = cut.every_cut(data)
    assert [len(data[:c].decode()) for c in cuts] == cut.every_cut(text)
    for pattern in ("gpt2", "cl100k", "o200k"):
        whole = _core.split(pattern, text)
        for at in cuts:
            left, right = data[:at].decode(), data[at:].decode()
            assert _core.split(pattern, left) + _core.split(pattern, right) == whole, (
                pattern,
                at,
            )


@settings(max_examples=200, deadline=None)
@given(st.lists(CUT_ALPHABET, max_size=40).map("".join), st.integers(1, 40))
def test_first_and_last_cut_are_places_of_the_rule(text, start):
    data = text.encode()
    places = cut.every_cut(data)
    first = cut.first_cut(data, start)
    if first:
        assert first in places and first > start
    else:  # a place at start + 2 or later has its whole match after start
        assert all(p < start + 2 for p in places)
    last = cut.last_cut(data)
    assert (last == 0) == (not places) and (last == 0 or last in places)


def test_special_tokens_with_a_space_or_newline_forbid_cuts():
    assert cut.may_cut("gpt2") and cut.may_cut("o200k", ["<|endoftext|>", "<|fim|>"])
    assert not cut.may_cut(None)
    assert not cut.may_cut("cl100k", ["END OF DOC"]) and not cut.may_cut("gpt2", ["a\nB"])


# ---------------------------------------------------------------------------- the finder


def write(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_folder_gives_its_input_files_sorted_without_hidden_ones(tmp_path):
    for name in ["b.txt", "a.jsonl", "c.csv", "d.json", "e.py", "f.txt.gz", "g.parquet",
                 "sub/h.md", "skip.bin", ".hidden.txt", ".git/x.txt", "sub/.y.py"]:  # fmt: skip
        write(tmp_path / name)
    got = [(Path(f.path).relative_to(tmp_path).as_posix(), f.kind, f.gzip) for f in find(tmp_path)]
    assert got == [
        ("a.jsonl", "jsonl", False),
        ("b.txt", "text", False),
        ("c.csv", "text", False),
        ("d.json", "text", False),
        ("e.py", "text", False),
        ("f.txt.gz", "text", True),
        ("g.parquet", "parquet", False),
        ("sub/h.md", "text", False),
    ]


def test_globs_names_and_errors(tmp_path):
    for name in ["a.txt", "b.txt", "sub/c.txt", "odd[1].txt"]:
        write(tmp_path / name)
    names = [Path(f.path).name for f in find([str(tmp_path / "*.txt"), tmp_path / "sub"])]
    assert names == ["a.txt", "b.txt", "odd[1].txt", "c.txt"]
    # `**` matches the folders on the way too: they are left out, not expanded twice.
    assert [Path(f.path).name for f in find(str(tmp_path / "**"))] == [
        "a.txt", "b.txt", "odd[1].txt", "c.txt"
    ]  # fmt: skip
    # A name that exists is itself, whatever it holds; any name that is a file is read.
    assert [f.path for f in find(str(tmp_path / "odd[1].txt"))] == [str(tmp_path / "odd[1].txt")]
    assert find(write(tmp_path / "data.bin"))[0].kind == "text"
    with pytest.raises(CorpusInputError, match="no files match"):
        find(str(tmp_path / "*.nothing"))
    with pytest.raises(CorpusInputError, match=r"missing\.txt: no such file"):
        find(tmp_path / "missing.txt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusInputError, match="no input files in this folder"):
        find(tmp_path / "empty")


def test_bundled_corpora_by_name():
    assert "Sherlock Holmes" in bundled_corpus("holmes")[:10_000]
    with pytest.raises(CorpusInputError, match="holmes, shakespeare"):
        bundled_corpus("nope")


# ---------------------------------------------------------------------------- the reader


def test_read_text_of_every_kind(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    write(tmp_path / "a.txt", "plain text\n")
    (tmp_path / "b.txt.gz").write_bytes(gzip.compress(b"gzipped text"))
    write(tmp_path / "c.jsonl", '{"text": "one "}\n\n{"text": "two"}\n')
    pq.write_table(pa.table({"text": ["row 1 ", "row 2"]}), tmp_path / "d.parquet")
    got = [read_text(tmp_path / n) for n in ["a.txt", "b.txt.gz", "c.jsonl", "d.parquet"]]
    assert got == ["plain text\n", "gzipped text", "one two", "row 1 row 2"]


@pytest.mark.parametrize("block", [3, 64, 1 << 20])
def test_blocks_of_a_text_file_are_its_text(tmp_path, monkeypatch, block):
    monkeypatch.setattr(read, "BLOCK", block)
    monkeypatch.setattr(read, "PIECE", 16)
    text = bundled_corpus("shakespeare")[:20_000] + "naïve café 😀 the end"
    path = write(tmp_path / "t.txt", text)
    f = [tokenmill.sources.input_file(path)]
    texts = list(read.read_texts(read.whole(0), f, "text", True))
    assert "".join(texts) == text
    if block < len(text):
        assert len(texts) > 10
    assert list(read.read_texts(read.whole(0), f, "text", False)) == [text]


def test_the_first_bad_record_is_an_error_naming_the_file_and_place(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": ["ok", None]}), tmp_path / "n.parquet")
    with pytest.raises(CorpusFileError, match=r"n\.parquet, row 2: column 'text' is null"):
        read_text(tmp_path / "n.parquet")
    with pytest.raises(CorpusFileError, match=r"n\.parquet: no column 'body'"):
        read_text(tmp_path / "n.parquet", "body")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(CorpusFileError, match=r"bad\.jsonl: not UTF-8 at byte 28 \(invalid"):
        read_text(bad)
    with pytest.raises(CorpusFileError, match="is a folder"):
        read_text(tmp_path)


# ------------------------------------------------ train and encode-corpus read a folder alike


def test_train_and_encode_corpus_read_a_folder_as_the_same_texts(tmp_path):
    """The same folder is the same files (names, order) and the same texts (the .jsonl
    field, the Parquet column, every other file whole) for ``train`` and ``encode-corpus``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = bundled_corpus("shakespeare")[:60_000].splitlines(keepends=True)
    q = len(lines) // 5
    d = tmp_path / "corpus"
    write(d / "a.jsonl", "".join(json.dumps({"body": t}) + "\n" for t in lines[:q]))
    csv = "line\n" + "".join(json.dumps(t.strip()) + "\n" for t in lines[q : 2 * q])
    write(d / "b.csv", csv)
    data = json.dumps(lines[2 * q : 3 * q], indent=1)
    (d / "c.json.gz").write_bytes(gzip.compress(data.encode()))
    code = "def f(x):\n    return x\n" * 50
    write(d / "sub" / "d.py", code)
    pq.write_table(pa.table({"body": lines[3 * q :]}), d / "e.parquet", row_group_size=300)
    write(d / ".hidden.txt", "never read")
    write(d / "notes.bin", "never read")
    names = ["a.jsonl", "b.csv", "c.json.gz", "e.parquet", "sub/d.py"]
    texts = [*lines[:q], csv, data, *lines[3 * q :], code]

    out = tmp_path / "t.tokenmill"
    p = run_tokenmill("train", str(d), "-v", "400", "--text-field", "body", "-o", str(out),
                      "--json", "-q")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["corpus"] == [str(d / n) for n in names]
    assert tokenmill.load(str(out)).merges == tokenmill.train(texts, 400).merges

    shards = tmp_path / "shards"
    p = run_tokenmill("encode-corpus", str(d), "-o", str(shards), "--text-field", "body",
                      "--no-eot", "-q")  # fmt: skip
    assert p.returncode == 0, p.stderr
    m = corpus.read_manifest(shards)
    assert [i["path"] for i in m["inputs"]] == [str(d / n) for n in names]
    got = np.concatenate(
        [np.fromfile(shards / s["file"], dtype=np.uint16) for s in m["splits"]["train"]["shards"]]
    )
    gpt2 = tokenmill.load("gpt2")
    assert got.tolist() == [i for t in texts for i in gpt2.encode_ordinary(t)]
    assert m["documents"] == len(texts)


def test_one_finder_for_train_report_and_encode_corpus(tmp_path):
    write(tmp_path / "b.txt", "the second file\n")
    write(tmp_path / "a.md", "the first file\n")
    want = [str(tmp_path / "a.md"), str(tmp_path / "b.txt")]
    assert [f.path for f in find(tmp_path)] == want
    from tokenmill.analysis.failures.corpus import corpus_from

    assert list(corpus_from([tmp_path]).texts) == ["a.md", "b.txt"]
    r = corpus.encode([tmp_path], "gpt2", tmp_path / "o", progress=False)
    assert [i["path"] for i in r.manifest["inputs"]] == want
