"""The ``tokenmill`` command, run for real in a subprocess: each subcommand, stdin/stdout
piping, ``--json``, and user errors (one line on stderr, exit status 2, no traceback).

Expected ids come from the library (itself checked against tiktoken in
test_tiktoken_oracle.py), never from the command under test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_runner import run_tokenmill

import tokenmill

TEXT = "Hello world! naïve café 日本語 🙂\n  indented\tline\n"


def run(*args: str, stdin: bytes | str | None = None, cwd: Path | None = None):
    return run_tokenmill(*args, stdin=stdin, cwd=cwd, text=False)


def ok(*args: str, stdin: bytes | str | None = None, cwd: Path | None = None) -> str:
    r = run(*args, stdin=stdin, cwd=cwd)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


def user_error(*args: str, stdin: bytes | str | None = None) -> str:
    r = run(*args, stdin=stdin)
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokenmill: error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def gpt2():
    return tokenmill.load("gpt2")


def test_encode_stdin_to_stdout_and_back(gpt2):
    out = ok("encode", stdin=TEXT)
    assert out == " ".join(map(str, gpt2.encode(TEXT))) + "\n"
    assert ok("decode", stdin=out) == TEXT


def test_encode_files_one_line_each_and_json(tmp_path, gpt2):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("first file")
    b.write_text("second\nfile")
    out = ok("encode", str(a), str(b), "-t", "cl100k_base")
    cl = tokenmill.load("cl100k_base")
    assert out.splitlines() == [
        " ".join(map(str, cl.encode(t))) for t in ["first file", "second\nfile"]
    ]
    as_json = json.loads(ok("encode", str(tmp_path / "*.txt"), "-f", "json"))
    assert as_json == [gpt2.encode("first file"), gpt2.encode("second\nfile")]


def test_encode_a_long_file_on_threads(tmp_path):
    from tokenmill.sources import bundled_corpus

    text = bundled_corpus("holmes")[:400_000]
    (tmp_path / "h.txt").write_text(text)
    want = tokenmill.load("o200k_base").encode(text)
    for threads in ("1", "2"):
        out = tmp_path / f"ids{threads}.npy"
        ok("encode", str(tmp_path / "h.txt"), "-t", "o200k_base", "--threads", threads,
           "-o", str(out))  # fmt: skip
        assert np.load(out).tolist() == want
    assert "--threads must be >= 1" in user_error("encode", "--threads", "0", stdin="x")


@pytest.mark.parametrize(("name", "dtype"), [("gpt2", np.uint16), ("o200k_base", np.uint32)])
def test_binary_id_files_round_trip(tmp_path, name, dtype):
    tok = tokenmill.load(name)
    for suffix in ("npy", "bin"):
        out = tmp_path / f"ids.{suffix}"
        ok("encode", "-t", name, "-o", str(out), stdin=TEXT)
        arr = np.load(out) if suffix == "npy" else np.fromfile(out, dtype=dtype)
        assert arr.dtype == dtype
        assert arr.tolist() == tok.encode(TEXT)
        assert ok("decode", "-t", name, str(out)) == TEXT
    # Raw binary ids go through a pipe too.
    raw = run("encode", "-t", name, "-f", "bin", stdin=TEXT).stdout
    assert np.frombuffer(raw, dtype=dtype).tolist() == tok.encode(TEXT)
    assert ok("decode", "-t", name, "-f", "bin", stdin=raw) == TEXT


@pytest.mark.parametrize(
    "text", ["abc", "abc\n", "", "\n", "two\r\nlines\n\n", "naïve 🙂", " trailing ", TEXT]
)
def test_encode_decode_pipe_is_byte_exact(text):
    data = text.encode()
    for fmt in ("text", "json"):
        ids = run("encode", "-f", fmt, stdin=data).stdout
        assert run("decode", "-f", fmt, stdin=ids).stdout == data, fmt


def test_decode_writes_several_inputs_back_to_back(tmp_path):
    # encode writes a line of ids per input; decode writes their texts as `cat` would.
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"first\n")
    b.write_bytes(b"second, no newline")
    ids = run("encode", str(a), str(b)).stdout
    assert len(ids.splitlines()) == 2
    assert run("decode", stdin=ids).stdout == b"first\nsecond, no newline"
    as_json = run("encode", str(a), str(b), "-f", "json").stdout
    assert run("decode", "-f", "json", stdin=as_json).stdout == b"first\nsecond, no newline"


def test_decode_help_gives_the_default_dtype():
    help_text = " ".join(ok("decode", "--help").split())
    assert "default: uint16)" not in help_text
    assert "smallest that fits the tokenizer" in help_text


def test_special_tokens_policy_on_the_command_line(gpt2):
    text = "a<|endoftext|>b"
    for command in (["encode"], ["count", "-t", "gpt2"], ["show"]):
        err = user_error(*command, stdin=text)
        # The one line names the token and the flags that decide, not the library's arguments.
        assert "'<|endoftext|>'" in err and "--allow-special" in err and "--plain-special" in err
    assert ok("encode", "--allow-special", stdin=text).split() == list(
        map(str, gpt2.encode(text, allowed_special="all"))
    )
    assert ok("encode", "--plain-special", stdin=text).split() == list(
        map(str, gpt2.encode_ordinary(text))
    )


def test_count_per_file_total_and_json(tmp_path):
    files = []
    for i, text in enumerate(["one two three", "日本語のテキスト", TEXT]):
        f = tmp_path / f"{i}.txt"
        f.write_text(text)
        files.append((str(f), text))
    names = ["gpt2", "cl100k_base", "o200k_base"]
    args = [a for n in names for a in ("-t", n)]
    result = json.loads(ok("count", *[f for f, _ in files], *args, "--json"))
    toks = {n: tokenmill.load(n) for n in names}
    for row, (f, text) in zip(result["files"], files, strict=True):
        assert row["file"] == f and row["bytes"] == len(text.encode())
        for n in names:
            assert row[n] == len(toks[n].encode(text))
    for n in names:
        assert result["total"][n] == sum(len(toks[n].encode(t)) for _, t in files)
    table = ok("count", *[f for f, _ in files], "-t", "gpt2")
    assert table.splitlines()[-1].split()[0] == "total"


def test_count_gzip_input(tmp_path, gpt2):
    import gzip

    f = tmp_path / "t.txt.gz"
    f.write_bytes(gzip.compress(TEXT.encode()))
    assert json.loads(ok("count", str(f), "-t", "gpt2", "--json"))["total"]["gpt2"] == len(
        gpt2.encode(TEXT)
    )


def test_show_plain_colour_ids_and_json(gpt2):
    ids = gpt2.encode("hello world")
    assert ok("show", "hello", "world") == "hello| world\n"
    coloured = ok("show", "--color", "always", "hello world")
    assert "\x1b[" in coloured and "hello" in coloured
    with_ids = ok("show", "--ids", "hello world")
    assert all(str(i) in with_ids for i in ids)
    tokens = json.loads(ok("show", "--json", stdin="hello world"))["tokens"]
    assert [t["id"] for t in tokens] == ids
    assert [t["text"] for t in tokens] == ["hello", " world"]


def test_inspect_text_and_json():
    info = json.loads(ok("inspect", "gpt2", "--json", "--top", "3"))
    assert info["n_vocab"] == 50257
    assert len(info["longest_tokens"]) == 3
    assert "50,257" in ok("inspect", "gpt2") or "50257" in ok("inspect", "gpt2")
    assert "split by the gpt2 scanner" in ok("inspect", "gpt2")


def test_inspect_lists_a_few_special_tokens_and_says_how_many_more(tmp_path):
    specials = {f"<|s{k}|>": 256 + k for k in range(20)}
    path = tmp_path / "many.tokenmill"
    tokenmill.Tokenizer([bytes([b]) for b in range(256)], "cl100k", specials).save(path)
    text = ok("inspect", str(path))
    assert "<|s7|> = 263, and 12 more (--json lists all)" in text
    assert "<|s8|>" not in text
    assert len(json.loads(ok("inspect", str(path), "--json"))["special_tokens"]) == 20


def test_compare_snippets_and_files(tmp_path):
    result = json.loads(ok("compare", "-t", "gpt2", "-t", "o200k_base", "--json"))
    rows = result["rows"]
    by = {(r["tokenizer"], r["sample"]): r for r in rows}
    o200k, gpt2 = tokenmill.load("o200k_base"), tokenmill.load("gpt2")
    from tokenmill.analysis.compare import SNIPPETS

    for name, text in SNIPPETS.items():
        assert by[("gpt2", name)]["tokens"] == len(gpt2.encode_ordinary(text))
        assert by[("o200k_base", name)]["tokens"] == len(o200k.encode_ordinary(text))
    f = tmp_path / "x.txt"
    f.write_text(TEXT)
    assert "x.txt" in ok("compare", str(f), "-t", "gpt2")


def test_convert_to_each_format_and_load_back(tmp_path):
    gpt2 = tokenmill.load("gpt2")
    hf = tmp_path / "tokenizer.json"
    ok("convert", "gpt2", str(hf))
    assert ok("encode", "-t", str(hf), stdin=TEXT).split() == list(map(str, gpt2.encode(TEXT)))
    rank = tmp_path / "g.tiktoken"
    ok("convert", "gpt2", str(rank))
    assert tokenmill.load(str(rank)).encode(TEXT) == gpt2.encode(TEXT)
    folder = tmp_path / "gpt2-files"
    ok("convert", "gpt2", str(folder), "--to", "gpt2")
    assert (folder / "encoder.json").exists() and (folder / "vocab.bpe").exists()
    assert tokenmill.load(str(folder)).encode(TEXT) == gpt2.encode(TEXT)


def test_train_refuses_an_output_name_that_says_no_format(tmp_path):
    # The name says the format, as for convert: one that says none fails before the training,
    # where it used to get tokenmill's format whatever it was.
    r = run(
        "train", "--corpus", "shakespeare", "--vocab-size", "300", "--out", "x.bin", cwd=tmp_path
    )
    assert r.returncode == 2 and "cannot tell the format from 'x.bin'" in r.stderr.decode()
    assert list(tmp_path.iterdir()) == []
    ok("train", "--corpus", "shakespeare", "--vocab-size", "300", "--out", "x.json", cwd=tmp_path)
    assert tokenmill.load(tmp_path / "x.json").n_vocab == 300  # HF's tokenizer.json


@pytest.mark.parametrize(
    ("args", "stdin", "needle"),
    [
        (("encode", "-t", "no-such-tokenizer"), "x", "unknown tokenizer"),
        (("encode", "/no/such/file.txt"), None, "no such file"),
        (("encode", "nothing-matches-*.txt"), None, "no files match"),
        (("encode",), b"\xff\xfe bad", "not UTF-8"),
        (("decode",), "1 2 x", "integers"),
        (("decode",), "99999999", "99999999"),
        (("decode", "-f", "json"), "{", "JSON"),
        (("encode", "-t", "o200k_base", "--dtype", "uint16", "-f", "bin"), "x", "uint32"),
        (("convert", "gpt2", "out.unknown"), None, "format"),
        (("count", "-t", "gpt2", "--bogus"), "x", "unrecognized"),
        (("inspect",), None, "required"),
        (("nonsense",), None, "invalid choice"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(args, stdin, needle):
    assert needle in user_error(*args, stdin=stdin)


def test_broken_pipe_is_not_an_error():
    big = "word " * 200_000
    r = subprocess.run(
        f"{sys.executable} -m tokenmill encode | head -c 10",
        shell=True,
        input=big.encode(),
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 0 and len(r.stdout) == 10
    assert b"Traceback" not in r.stderr


def test_no_command_prints_help_and_exits_2():
    r = run()
    assert r.returncode == 2 and b"usage" in r.stderr


def test_train_with_no_input_uses_the_bundled_corpus(tmp_path):
    out = ok("train", "--vocab-size", "600", cwd=tmp_path)
    assert "trained holmes-600: 600 tokens (344 merges)" in out
    assert "first merges:" in out and "seen" in out and "bytes per token" in out
    assert "|" in out.split("an unseen sentence:")[1]
    tok = tokenmill.load(str(tmp_path / "holmes-600.tokenmill"))
    assert tok.n_vocab == 600
    assert (tmp_path / "holmes-600.vocab.txt").exists()
    text = "Sherlock Holmes took his bottle from the corner of the mantel-piece."
    assert tok.decode(tok.encode(text)) == text


def test_train_from_a_base(tmp_path):
    out = ok("train", "--corpus", "shakespeare", "--from", "gpt2", "-v", "50300", cwd=tmp_path)
    assert "trained shakespeare-50300: 50,300 tokens (43 merges)" in out
    first = out.split("first merges:")[1].splitlines()[1].split()
    assert first[0] == "50257"  # the new tokens follow the base's ids
    tok = tokenmill.load(tmp_path / "shakespeare-50300.json")
    gpt2 = tokenmill.load("gpt2")
    assert tok.n_vocab == 50300 and tok.special_tokens == gpt2.special_tokens
    text = "Sherlock Holmes took his bottle from the corner of the mantel-piece."
    assert tok.encode(text)[:3] == gpt2.encode(text)[:3] and tok.decode(tok.encode(text)) == text
    r = run("train", "--from", "gpt2", "-p", "cl100k", "-v", "50300", cwd=tmp_path)
    assert r.returncode == 2 and "not the pattern of base" in r.stderr.decode()


def test_train_files_folder_specials_json(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    from tokenmill.sources import bundled_corpus

    lines = bundled_corpus("shakespeare")[:60_000].splitlines(keepends=True)
    (corpus / "a.txt").write_text("".join(lines[: len(lines) // 2]))
    records = [json.dumps({"text": line}) + "\n" for line in lines[len(lines) // 2 :]]
    (corpus / "sub" / "b.jsonl").write_text("".join(records))
    out_path = tmp_path / "t.tokenmill"
    report = json.loads(
        ok(
            "train",
            str(corpus),
            "--vocab-size",
            "300",
            "--special",
            "<|endoftext|>",
            "--pattern",
            "gpt2",
            "--out",
            str(out_path),
            "--json",
            "--quiet",
        )
    )
    assert report["n_vocab"] == 300 and report["merges_learned"] == 300 - 256 - 1
    assert report["corpus"] == [str(corpus / "a.txt"), str(corpus / "sub" / "b.jsonl")]
    tok = tokenmill.load(str(out_path))
    assert tok.special_tokens == {"<|endoftext|>": 299}
    # The same corpus through the library gives the same tokenizer.
    lib = tokenmill.train(
        [corpus / "a.txt", corpus / "sub" / "b.jsonl"],
        300,
        pattern="gpt2",
        special_tokens=["<|endoftext|>"],
    )
    assert [(m.left, m.right) for m in lib.merges] == [(m.left, m.right) for m in tok.merges]
    # And the trained tokenizer works in the other subcommands.
    ids = ok("encode", "-t", str(out_path), "--allow-special", stdin="the cat<|endoftext|>")
    assert ids.split() == list(map(str, tok.encode("the cat<|endoftext|>", allowed_special="all")))


def test_train_a_folder_of_records_and_data_files(tmp_path):
    """A folder of .jsonl, .csv, .json and Parquet files is their texts in name order: the
    records' and rows' --text-field, each data file whole; a .parquet file its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tokenmill.sources import bundled_corpus

    lines = bundled_corpus("shakespeare")[:60_000].splitlines(keepends=True)
    q = len(lines) // 4
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in lines[:q]))
    csv = "line\n" + "".join(json.dumps(t.strip()) + "\n" for t in lines[q : 2 * q])
    (d / "b.csv").write_text(csv)
    data = json.dumps(lines[2 * q : 3 * q], indent=1)
    (d / "c.json").write_text(data)
    pq.write_table(pa.table({"body": lines[3 * q :]}), d / "d.parquet", row_group_size=200)
    out = tmp_path / "t.tokenmill"
    report = json.loads(
        ok("train", str(d), "-v", "400", "--text-field", "body", "-o", str(out), "--json", "-q")
    )
    names = ["a.jsonl", "b.csv", "c.json", "d.parquet"]
    assert report["corpus"] == [str(d / n) for n in names]
    want = tokenmill.train([*lines[:q], csv, data, *lines[3 * q :]], 400)
    assert tokenmill.load(str(out)).merges == want.merges

    pq.write_table(pa.table({"text": lines}), tmp_path / "x.parquet", row_group_size=500)
    ok("train", str(tmp_path / "x.parquet"), "-v", "400", "-o", str(out), "-q")
    assert tokenmill.load(str(out)).merges == tokenmill.train(lines, 400).merges


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("train", "--vocab-size", "100"), "vocab_size"),
        (("train", "--pattern", "(unclosed"), "pattern"),
        (("train", "/no/such/corpus.txt"), "no such file"),
        (("train", "--special", ""), "special"),
        (("train", "--vocab-size", "many"), "invalid int"),
    ],
)
def test_train_user_errors(args, needle, tmp_path):
    assert needle in user_error(*args, "--out", str(tmp_path / "x.tokenmill"))


def test_train_names_a_non_utf8_file_and_offset(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text\n" * 10 + b"\xff oops")
    err = user_error("train", str(bad), "--out", str(tmp_path / "x.tokenmill"))
    assert "bad.txt" in err and "100" in err


# ------------------------------------------------------------------------ --json everywhere


def subcommands() -> list[str]:
    from tokenmill.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and "encode" in a.choices)
    return sorted(sub.choices)


def test_every_subcommand_answers_json(tmp_path, gpt2):
    (tmp_path / "t.txt").write_text("hello world\n")
    shards = str(tmp_path / "shards")
    runs = {
        "train": ["--corpus", "shakespeare", "-v", "300", "-o", str(tmp_path / "t.tokenmill")],
        "encode": ["t.txt"],
        "decode": [],
        "count": ["-t", "gpt2", "t.txt"],
        "show": ["hello world"],
        "inspect": ["gpt2", "--top", "2"],
        "compare": ["-t", "gpt2"],
        "convert": ["gpt2", "g.json"],
        "report": ["gpt2", "--corpus", "t.txt"],
        "encode-corpus": ["t.txt", "-t", "gpt2", "-o", shards],
        "verify-shards": [shards],
    }
    assert sorted([*runs, "serve"]) == subcommands()  # a new subcommand is tested here too
    answers = {}
    for command, args in runs.items():
        r = run(command, *args, "--json", "-q", stdin="31373 995", cwd=tmp_path)
        assert r.returncode == 0, (command, r.stderr.decode())
        answers[command] = json.loads(r.stdout)
    assert answers["encode"]["inputs"] == [
        {"file": "t.txt", "tokens": 3, "ids": gpt2.encode("hello world\n")}
    ]
    assert answers["decode"]["texts"] == ["hello world"]
    assert answers["convert"]["written"] == ["g.json"]
    assert tokenmill.load(tmp_path / "g.json").encode("hello") == gpt2.encode("hello")
    # With -o the ids go to the file, and stdout says what was written.
    r = run("encode", "t.txt", "-o", "ids.npy", "--json", cwd=tmp_path)
    assert json.loads(r.stdout)["written"] == "ids.npy"
    assert np.load(tmp_path / "ids.npy").tolist() == gpt2.encode("hello world\n")


def test_serve_answers_json_and_stops_at_once_on_sigterm():
    import signal
    import time

    p = subprocess.Popen(
        [sys.executable, "-m", "tokenmill", "serve", "gpt2", "--port", "0", "--json", "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        info = json.loads(p.stdout.readline())
        assert info["tokenizers"] == ["gpt2"] and info["url"].startswith("http://127.0.0.1:")
        start = time.perf_counter()
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
        # Measured 3-7 ms; a second leaves room for a loaded machine.
        assert time.perf_counter() - start < 1.0
    finally:
        p.kill()
        p.wait()


# ------------------------------------------------------------------------ rank files


@pytest.fixture(scope="module")
def rank_file(tmp_path_factory):
    """A tokenizer trained here, saved as a rank file: its ranks alone, no pattern."""
    from tokenmill.sources import bundled_corpus

    tok = tokenmill.train(bundled_corpus("holmes")[:100_000], 400, pattern="gpt2")
    path = tmp_path_factory.mktemp("ranks") / "holmes.tiktoken"
    tok.save(path)
    return path, tok


def test_a_rank_file_gets_its_pattern_and_special_tokens_from_flags(rank_file, tmp_path):
    path, tok = rank_file
    rank = str(path)
    err = user_error("encode", "-t", rank, stdin="x")
    assert "holmes.tiktoken" in err and "--pattern" in err and "pattern=" not in err
    ids = ok("encode", "-t", rank, "--pattern", "gpt2", stdin=TEXT)
    assert ids.split() == list(map(str, tok.encode(TEXT)))
    assert ok("decode", "-t", rank, "-p", "gpt2", stdin=ids) == TEXT
    # --special TOKEN takes the next id, as in train; TOKEN=ID names the id.
    text = "the end<|endoftext|>"
    for special, want in (("<|endoftext|>", "400"), ("<|endoftext|>=1000", "1000")):
        out = ok("encode", "-t", rank, "-p", "gpt2", "--special", special, "--allow-special",
                 stdin=text)  # fmt: skip
        assert out.split()[-1] == want
    # Every command that takes a TOKENIZER takes them.
    counted = json.loads(ok("count", "-t", "gpt2", "-t", rank, "-p", "gpt2", "--json", stdin=TEXT))
    assert counted["total"][rank] == len(tok.encode(TEXT))
    shown = "|".join(tok.decode([i]) for i in tok.encode("hello there"))
    assert ok("show", "-t", rank, "-p", "gpt2", "hello there") == shown + "\n"
    assert json.loads(ok("inspect", rank, "-p", "gpt2", "--json"))["n_vocab"] == 400
    assert "holmes.tiktoken" in ok("compare", "-t", rank, "-p", "gpt2")
    out = tmp_path / "h.tokenmill"
    ok("convert", rank, str(out), "-p", "gpt2", "--special", "<|endoftext|>")
    back = tokenmill.load(out)
    assert back.pattern_name == "gpt2" and back.special_tokens == {"<|endoftext|>": 400}
    (tmp_path / "c.txt").write_text(TEXT)
    data = json.loads(ok("report", rank, "-p", "gpt2", "--corpus", str(tmp_path / "c.txt"),
                         "--json", "-q"))  # fmt: skip
    assert data["tokenizers"][0]["pattern"] == "gpt2"
    shards = tmp_path / "shards"
    ok("encode-corpus", str(tmp_path / "c.txt"), "-t", rank, "-p", "gpt2", "-s", "<|endoftext|>",
       "-o", str(shards), "-q")  # fmt: skip
    assert np.fromfile(shards / "train_000000.bin", np.uint16).tolist() == [400, *tok.encode(TEXT)]
    # A tokenizer that says its own pattern refuses the flags rather than ignoring them.
    assert "--pattern" in user_error("encode", "-t", "gpt2", "--pattern", "cl100k", stdin="x")
    assert "--special" in user_error("encode", "-t", "gpt2", "--special", "<|x|>", stdin="x")


# ------------------------------------------------------------------------ how things look


def test_train_with_a_special_token_its_summary_sentence_holds(tmp_path):
    # The summary's unseen sentence holds 'a': it is encoded as plain text, as the corpus is.
    r = run("train", "--corpus", "shakespeare", "-v", "300", "-s", "a", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert "an unseen sentence:" in r.stdout.decode()
    assert tokenmill.load(tmp_path / "shakespeare-300.tokenmill").special_tokens == {"a": 299}


def test_a_training_warning_is_one_line_that_quiet_silences(tmp_path):
    args = ("train", "--corpus", "shakespeare", "-v", "300", "--min-frequency", "10000000",
            "-o", str(tmp_path / "t.tokenmill"))  # fmt: skip
    r = run(*args)
    assert r.returncode == 0
    err = r.stderr.decode()
    assert err.startswith("tokenmill: warning: training stopped after 0 merges")
    assert err.count("\n") == 1 and "--min-frequency" in err
    r = run(*args, "-q")
    assert r.returncode == 0 and r.stderr == b""


def test_train_max_memory_drops_rare_chunks_with_a_warning(tmp_path):
    import random

    rng = random.Random(3)
    words = ["".join(rng.choices("abcdefghij", k=rng.randint(5, 10))) for _ in range(200_000)]
    corpus = tmp_path / "words.txt"
    corpus.write_text(" ".join(words) + "\n")
    r = run("train", str(corpus), "-v", "300", "--max-memory", "16M", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    err = r.stderr.decode()
    assert err.startswith("tokenmill: warning: the corpus has more distinct chunks than fit")
    assert "chunks seen once were dropped" in err and "--max-memory" in err
    assert tokenmill.load(tmp_path / "words-300.tokenmill").n_vocab == 300
    r = run("train", str(corpus), "-v", "300", "--max-memory", "1x", cwd=tmp_path)
    assert r.returncode == 2 and "not a size: '1x'" in r.stderr.decode()
    r = run("train", str(corpus), "-v", "300", "--max-memory", "1M", cwd=tmp_path)
    assert r.returncode == 2 and "max_memory must be None or a number of bytes" in r.stderr.decode()


def test_compare_columns_line_up_and_keep_file_names(tmp_path):
    long_name = tmp_path / "a-rather-long-file-name.txt"
    long_name.write_text("x " * 1_100_000)  # 1,100,001 gpt2 tokens: seven digits
    out = ok("compare", "-t", "gpt2", "-t", "o200k_base", str(long_name))
    table = [line for line in out.splitlines() if not line.startswith("cells:")]
    assert len({len(line) for line in table}) == 1, out
    assert "a-rather-long-file-name.txt " in out and "1,100,001" in out


def test_tokens_are_shown_one_way(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    for t in (b"  ", b"    ", b" " * 8, b" " * 16, b" " * 24, b"\xe3\x81", b"\\n"):
        ranks[t] = len(ranks)
    tokenmill.Tokenizer(ranks, "gpt2", name="t").save(tmp_path / "t.tokenmill")
    out = ok("inspect", str(tmp_path / "t.tokenmill"), "--top", "7")
    # A byte that is not a whole character: one backslash, as in a bytes literal.
    assert "'\\xe3' + '\\x81'  " in out and "-> '\\xe3\\x81'" in out
    assert "\\\\x" not in out
    # A real backslash is doubled, so the two bytes \n are not the newline '\n'.
    assert "'\\\\' + 'n'  " in out and "-> '\\\\n'" in out
    # Runs of one character: the same form at every length.
    assert "' ' x 8 + ' ' x 8  " in out and "-> ' ' x 16" in out
    assert "' ' x 24" in out and "' ' x 4" in out and "'  '" in out
    assert not re.search("'( {4,})'", out)
