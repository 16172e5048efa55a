"""docs/bad-input.md, kept true: every row of its tables is run here and gives what it says.

A row is ``| id | input | what you get |``. The last cell starts with the outcome in code: a
class of ``tokenmill.errors`` (`VocabFileError`), `HTTP 405`, `exit 2` or `works`; every later
code span in that cell is words of the message: the exception's text, the API's ``"error"``
(and the response's headers), the command's stderr. ``CASES`` maps each id to a function that
gives the row's input; a row without a case, a case without a row, another exception class,
status or message fails. An exception row also fails unless the class is a
``tokenmill.TokenmillError``; an ``exit 2`` row unless stderr is one line, ``tokenmill: error:
...``.

Oracle: the document itself (what users are told), and for the inputs that once crashed,
hung or sized a table by an attacker's number, the bounds written in the cases (a response
within the socket's timeout, no more new threads than CPUs).
"""

from __future__ import annotations

import base64
import fcntl
import functools
import gzip
import json
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_runner import run_tokenmill

import tokenmill
from tokenmill import Tokenizer, corpus
from tokenmill.serve.api import Playground
from tokenmill.serve.server import PlaygroundServer

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "bad-input.md"
BYTES = [bytes([b]) for b in range(256)]
EOT = "<|endoftext|>"
NESTED = "[" * 200_000 + "]" * 200_000
MAX_BODY = 200_000  # the test server's --max-body

# ------------------------------------------------------------------------- the document


@dataclass(frozen=True)
class Row:
    id: str
    outcome: str  # an error class's name, "HTTP 405", "exit 2" or "works"
    words: tuple[str, ...]  # quoted from the message


CELL_BORDER = re.compile(r"(?<!\\)\|")
CODE_SPAN = re.compile(r"`([^`]+)`")
OUTCOME = re.compile(r"[A-Z][A-Za-z]+Error|HTTP [1-5]\d\d|exit \d+|works")


def parse(text: str) -> dict[str, Row]:
    """The rows of every table in ``text``, by id, in the document's order."""
    rows: dict[str, Row] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line.startswith("|"):
            continue
        assert line.endswith("|") and not line.endswith("\\|"), f"line {n}: {line}"
        cells = [c.strip().replace("\\|", "|") for c in CELL_BORDER.split(line)[1:-1]]
        assert len(cells) == 3, f"line {n}: a row is | id | input | what you get |: {line}"
        if cells[0] == "id" or set("".join(cells)) <= set("-: "):
            continue  # a table's header or its rule
        row_id, _, got = cells
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", row_id), f"line {n}: id {row_id!r}"
        assert row_id not in rows, f"line {n}: the id {row_id} is used twice"
        spans = CODE_SPAN.findall(got)
        assert got.startswith("`") and OUTCOME.fullmatch(spans[0]), (
            f"line {n}: what you get starts with `ErrorClass`, `HTTP NNN`, `exit N` or `works`"
        )
        assert spans[1:] or spans[0] == "works", f"line {n}: no words of the message in code"
        rows[row_id] = Row(row_id, spans[0], tuple(spans[1:]))
    return rows


ROWS = parse(DOC.read_text("utf-8"))

# ------------------------------------------------------------------------- running a row


@dataclass
class Ctx:
    tmp: Path
    request: pytest.FixtureRequest

    @property
    def server(self) -> PlaygroundServer:
        server: PlaygroundServer = self.request.getfixturevalue("server")
        return server


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: its status, and its head then its JSON body's "error" as text."""

    status: int
    text: str


@dataclass(frozen=True)
class Exit:
    """The ``tokenmill`` command's exit status and output."""

    code: int
    stdout: str
    stderr: str


def check(row: Row, run: Callable[[Ctx], Any], ctx: Ctx) -> None:
    kind, _, number = row.outcome.partition(" ")
    if row.outcome == "works":
        text = run(ctx)
        assert isinstance(text, str), f"{row.id}: the case returns the text to find words in"
    elif kind == "HTTP":
        got = run(ctx)
        assert isinstance(got, Answer), row.id
        assert got.status == int(number), f"{row.id}: HTTP {got.status}: {got.text}"
        text = got.text
    elif kind == "exit":
        got = run(ctx)
        assert isinstance(got, Exit), row.id
        assert "Traceback" not in got.stderr, f"{row.id}:\n{got.stderr}"
        assert got.code == int(number), f"{row.id}: exit {got.code}: {got.stderr}"
        if got.code != 0:
            assert got.stderr.count("\n") == 1 and got.stderr.endswith("\n"), got.stderr
            assert got.stderr.startswith("tokenmill: error: "), got.stderr
        text = got.stderr + got.stdout
    else:
        cls = getattr(tokenmill, row.outcome, None)
        assert isinstance(cls, type), f"{row.outcome} is no class of tokenmill"
        assert issubclass(cls, tokenmill.TokenmillError), f"{row.outcome} is no TokenmillError"
        try:
            result = run(ctx)
        except Exception as e:
            err = e
        else:
            pytest.fail(f"{row.id}: no {row.outcome}; the call returned {result!r:.200}")
        assert type(err) is cls, f"{row.id}: {type(err).__module__}.{type(err).__name__}: {err}"
        text = str(err)
    for words in row.words:
        assert words in text, f"{row.id}: {words!r} is not in:\n{text}"


CASES: dict[str, Callable[[Ctx], Any]] = {}


def case(row_id: str) -> Callable[[Callable[[Ctx], Any]], Callable[[Ctx], Any]]:
    def register(f: Callable[[Ctx], Any]) -> Callable[[Ctx], Any]:
        assert row_id not in CASES, row_id
        CASES[row_id] = f
        return f

    return register


@pytest.fixture(scope="module")
def server() -> Iterator[PlaygroundServer]:
    srv = PlaygroundServer(Playground({"gpt2": gpt2()}), port=0, max_body=MAX_BODY)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_the_table_is_read_as_it_is_shown():
    text = (
        "| id | input | what you get |\n| --- | --- | --- |\n"
        "| a-1 | `x \\| y` | `HTTP 400`: `one \\| two` and `three` |\n"
        "not a row | a\n"
    )
    assert parse(text) == {"a-1": Row("a-1", "HTTP 400", ("one | two", "three"))}
    for bad in ["| a-1 | x |", "| A | x | `works` |", "| a | x | `ValueErr` |", "| a | x | y |"]:
        with pytest.raises(AssertionError):
            parse(bad)
    with pytest.raises(AssertionError, match="twice"):
        parse("| a | x | `works` |\n| a | y | `works` |")
    with pytest.raises(AssertionError, match="no words"):
        parse("| a | x | `exit 2`: fails |")


# ------------------------------------------------------------------------- inputs


@functools.cache
def gpt2() -> Tokenizer:
    return tokenmill.load("gpt2")


def small(pattern: str = "cl100k") -> Tokenizer:
    """Ordinary ids 0..257 (the bytes, "th", "the") and <|endoftext|> 258."""
    return Tokenizer([*BYTES, b"th", b"the"], pattern, {EOT: 258})


def rank_lines() -> list[str]:
    return [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]


def rank_file(ctx: Ctx, name: str, lines: list[str]) -> Path:
    path = ctx.tmp / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def hf_file(ctx: Ctx, edit: Callable[[dict[str, Any]], object] | None = None) -> Path:
    """A small tokenizer's tokenizer.json, changed by ``edit``."""
    path = ctx.tmp / "tokenizer.json"
    small().save(path)
    doc = json.loads(path.read_text("utf-8"))
    if edit is not None:
        edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def hf_text(ctx: Ctx, text: str) -> Path:
    path = ctx.tmp / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    return path


def tokenmill_file(ctx: Ctx, edit: Callable[[dict[str, Any]], object] | None = None) -> Path:
    path = ctx.tmp / "t.tokenmill"
    small().save(path)
    doc = json.loads(path.read_text("utf-8"))
    if edit is not None:
        edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def gpt2_folder(ctx: Ctx) -> Path:
    folder = ctx.tmp / "gpt2-files"
    small("gpt2").save(folder, format="gpt2")
    return folder


def bad_jsonl(ctx: Ctx) -> Path:
    path = ctx.tmp / "bad.jsonl"
    lines = [{"text": "good one"}, {"body": "no text field"}, {"text": "good two"}]
    path.write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
    return path


def test_the_files_before_the_damage_load(tmp_path, request):
    # Each loader row damages one thing in a file that loads: that thing is what is refused.
    ctx = Ctx(tmp_path, request)
    assert tokenmill.load(hf_file(ctx)) == small()
    assert tokenmill.load(tokenmill_file(ctx)) == small()
    assert tokenmill.load(gpt2_folder(ctx)) == small("gpt2")
    path = rank_file(ctx, "v.tiktoken", rank_lines())
    assert tokenmill.load(path, pattern="gpt2").n_vocab == 256
    path = ctx.tmp / "v.tiktoken.gz"
    path.write_bytes(gzip.compress((tmp_path / "v.tiktoken").read_bytes()))
    assert tokenmill.load(path, pattern="gpt2").n_vocab == 256
    assert run_cli(ctx, "encode", "-t", "gpt2", stdin=b"ok").code == 0


# --- loading


@case("load-gzip-truncated")
def _(ctx: Ctx) -> Any:
    data = "".join(line + "\n" for line in rank_lines()).encode()
    path = ctx.tmp / "v.tiktoken.gz"
    path.write_bytes(gzip.compress(data)[:30])
    return tokenmill.load(path, pattern="gpt2")


@case("load-rank-huge")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(
        rank_file(ctx, "big.tiktoken", ["YQ== 0", "Yg== 1000000000"]), pattern="gpt2"
    )


@case("load-rank-duplicate-token")
def _(ctx: Ctx) -> Any:
    lines = [*rank_lines(), "YQ== 256"]
    return tokenmill.load(rank_file(ctx, "dup.tiktoken", lines), pattern="gpt2")


@case("load-rank-bad-base64")
def _(ctx: Ctx) -> Any:
    lines = rank_lines()
    lines[3] = "!!!! 3"
    return tokenmill.load(rank_file(ctx, "bad.tiktoken", lines), pattern="gpt2")


@case("load-rank-empty")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(rank_file(ctx, "empty.tiktoken", []), pattern="gpt2")


@case("load-rank-no-pattern")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(rank_file(ctx, "v.tiktoken", rank_lines()))


@case("load-unknown-name")
def _(ctx: Ctx) -> Any:
    return tokenmill.load("cl100k")


@case("load-empty-name")
def _(ctx: Ctx) -> Any:
    return tokenmill.load("")


@case("load-not-a-name")
def _(ctx: Ctx) -> Any:
    with pytest.raises(tokenmill.WrongTypeError, match="not NoneType"):
        tokenmill.load(None)  # type: ignore[arg-type]
    return tokenmill.load(5)  # type: ignore[arg-type]


@case("load-not-a-tokenizer")
def _(ctx: Ctx) -> Any:
    path = ctx.tmp / "weights.bin"
    path.write_bytes(bytes(range(256)) * 4)
    return tokenmill.load(path)


@case("hf-list")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_text(ctx, "[1,2,3]"))


@case("hf-number")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_text(ctx, "2222"))


@case("hf-truncated")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_text(ctx, '{"model": {'))


@case("hf-nested")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_text(ctx, NESTED))


@case("hf-pre-tokenizer-int")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_file(ctx, lambda d: d.update(pre_tokenizer=5)))


@case("hf-added-tokens-string")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_file(ctx, lambda d: d.update(added_tokens="nope")))


@case("hf-added-token-no-content")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_file(ctx, lambda d: d["added_tokens"][0].pop("content")))


@case("hf-special-id-huge")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_file(ctx, lambda d: d["added_tokens"][0].update(id=10**12)))


@case("hf-special-id-negative")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_file(ctx, lambda d: d["added_tokens"][0].update(id=-1)))


@case("hf-normalizer")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_file(ctx, lambda d: d.update(normalizer={"type": "Lowercase"})))


@case("hf-add-prefix-space")
def _(ctx: Ctx) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        [byte_level] = [
            p for p in doc["pre_tokenizer"]["pretokenizers"] if p["type"] == "ByteLevel"
        ]
        byte_level["add_prefix_space"] = True

    return tokenmill.load(hf_file(ctx, edit))


@case("hf-wordpiece")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(hf_file(ctx, lambda d: d["model"].update(type="WordPiece")))


@case("gpt2-empty-vocab-bpe")
def _(ctx: Ctx) -> Any:
    folder = gpt2_folder(ctx)
    (folder / "vocab.bpe").write_text("#version: 0.2\n", encoding="utf-8")
    return tokenmill.load(folder)


@case("native-special-huge")
def _(ctx: Ctx) -> Any:
    return tokenmill.load(tokenmill_file(ctx, lambda d: d["special_tokens"].update({EOT: 10**9})))


@case("native-special-huge-n-vocab")
def _(ctx: Ctx) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        doc["special_tokens"][EOT] = 10**9
        doc["n_vocab"] = 10**9 + 1

    return tokenmill.load(tokenmill_file(ctx, edit))


# --- building a Tokenizer


CASES.update(
    {
        "tok-special-far": lambda ctx: Tokenizer(BYTES, "gpt2", {"<|x|>": 10**9}),
        "tok-special-clash": lambda ctx: Tokenizer(BYTES, "gpt2", {"<|x|>": 5}),
        "tok-duplicate-bytes": lambda ctx: Tokenizer([*BYTES, b"ab", b"ab"], "gpt2"),
        "tok-missing-byte": lambda ctx: Tokenizer(BYTES[1:], "gpt2"),
        "tok-bad-pattern": lambda ctx: Tokenizer(BYTES, "("),
        "tok-pattern-int": lambda ctx: Tokenizer(BYTES, 5),  # type: ignore[arg-type]
    }
)

# --- encoding and decoding

CASES.update(
    {
        "encode-disallowed-special": lambda ctx: gpt2().encode("a<|endoftext|>"),
        "encode-unknown-allowed-special": (
            lambda ctx: gpt2().encode("a", allowed_special={"<|nope|>"})
        ),
        "encode-bytes": lambda ctx: gpt2().encode(b"hello"),  # type: ignore[arg-type]
        "encode-int": lambda ctx: gpt2().encode(5),  # type: ignore[arg-type]
        "encode-batch-one-str": lambda ctx: gpt2().encode_batch("one text"),  # type: ignore[arg-type]
        "encode-threads-zero": lambda ctx: gpt2().encode("a", num_threads=0),
        "decode-unknown-id": lambda ctx: gpt2().decode([1, 50257]),
        "decode-negative-id": lambda ctx: gpt2().decode([-1]),
        "decode-huge-id": lambda ctx: gpt2().decode([2**63]),
        "decode-not-int": lambda ctx: gpt2().decode([1, None]),  # type: ignore[list-item]
        "decode-str": lambda ctx: gpt2().decode("abc"),  # type: ignore[arg-type]
        "decode-float-array": lambda ctx: gpt2().decode(np.array([1.0, 2.0])),
        "decode-uint64-array": (lambda ctx: gpt2().decode(np.array([2**64 - 1], dtype=np.uint64))),
        "encode-allowed-special-int": (
            lambda ctx: gpt2().encode("a", allowed_special=5)  # type: ignore[arg-type]
        ),
        "encode-batch-none": lambda ctx: gpt2().encode_batch(None),  # type: ignore[arg-type]
        "encode-single-token": lambda ctx: gpt2().encode_single_token("not one token"),
        "save-unknown-format": lambda ctx: small().save(ctx.tmp / "x.txt"),
    }
)


def live_threads() -> int:
    return len(os.listdir("/proc/self/task"))


@case("encode-threads-3000")
def _(ctx: Ctx) -> str:
    # It once started 3,000 threads for the call (53 s).
    enc = gpt2()
    text = "It was the best of times. " * 20_000  # 520 KB: shared among the threads
    want = enc.encode(text, num_threads=1)
    before = live_threads()
    assert enc.encode(text, num_threads=3000) == want
    assert live_threads() - before <= len(os.sched_getaffinity(0))
    return ""


@case("encode-lone-surrogate")
def _(ctx: Ctx) -> str:
    enc = gpt2()
    ids = enc.encode("a\ud800b")
    assert ids == enc.encode("a\ufffdb")
    return enc.decode(ids)


# --- training


@case("train-str-names-file")
def _(ctx: Ctx) -> Any:
    path = ctx.tmp / "corpus.txt"
    path.write_text("hello world " * 10, encoding="utf-8")
    return tokenmill.train(str(path), 300)


CASES.update(
    {
        "train-vocab-too-small": lambda ctx: tokenmill.train("hello world", 100),
        "train-empty": lambda ctx: tokenmill.train("", 300),
        "train-bytes": lambda ctx: tokenmill.train(b"hello", 300),  # type: ignore[arg-type]
        "train-missing-file": lambda ctx: tokenmill.train(ctx.tmp / "nothere.txt", 300),
        "train-bad-pattern": lambda ctx: tokenmill.train("hello world", 300, pattern="("),
    }
)

# --- the command line


def run_cli(ctx: Ctx, *args: str, stdin: bytes = b"") -> Exit:
    p = run_tokenmill(*args, stdin=stdin, cwd=ctx.tmp, timeout=120, text=False)
    return Exit(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8"))


@case("cli-rank-file-no-pattern")
def _(ctx: Ctx) -> Exit:
    rank_file(ctx, "v.tiktoken", rank_lines())
    return run_cli(ctx, "encode", "-t", "v.tiktoken", stdin=b"hello")


@case("cli-bad-tokenizer-file")
def _(ctx: Ctx) -> Exit:
    (ctx.tmp / "deep.json").write_text(NESTED, encoding="utf-8")
    return run_cli(ctx, "encode", "-t", "deep.json", stdin=b"hello")


@case("cli-decode-nested-json")
def _(ctx: Ctx) -> Exit:
    (ctx.tmp / "n.json").write_text("[" * 100_000 + "\n", encoding="utf-8")
    return run_cli(ctx, "decode", "-t", "gpt2", "n.json")


@case("cli-decode-npy-uint64")
def _(ctx: Ctx) -> Exit:
    np.save(ctx.tmp / "u64.npy", np.array([2**64 - 1], dtype=np.uint64))
    return run_cli(ctx, "decode", "-t", "gpt2", "u64.npy")


@case("cli-decode-npy-float")
def _(ctx: Ctx) -> Exit:
    np.save(ctx.tmp / "f.npy", np.array([1.5, 2.0]))
    return run_cli(ctx, "decode", "-t", "gpt2", "f.npy")


@case("cli-train-too-small")
def _(ctx: Ctx) -> Exit:
    (ctx.tmp / "corpus.txt").write_text("hello world " * 10, encoding="utf-8")
    return run_cli(ctx, "train", "corpus.txt", "--vocab-size", "10")


CASES.update(
    {
        "cli-unknown-tokenizer": lambda ctx: run_cli(ctx, "encode", "-t", "nope"),
        "cli-decode-not-ids": lambda ctx: run_cli(ctx, "decode", "-t", "gpt2", stdin=b"12 abc\n"),
        "cli-decode-unknown-id": lambda ctx: run_cli(ctx, "decode", "-t", "gpt2", stdin=b"50257"),
        "cli-decode-huge-id": (
            lambda ctx: run_cli(ctx, "decode", "-t", "gpt2", stdin=b"99999999999999999999999\n")
        ),
        "cli-encode-special": (
            lambda ctx: run_cli(ctx, "encode", "-t", "gpt2", stdin=b"a<|endoftext|>\n")
        ),
        "cli-not-utf8": lambda ctx: run_cli(ctx, "encode", "-t", "gpt2", stdin=b"\xff\xfe"),
        "cli-missing-file": lambda ctx: run_cli(ctx, "encode", "-t", "gpt2", "nothere.txt"),
        "cli-serve-bad-port": lambda ctx: run_cli(ctx, "serve", "--port", "70000"),
    }
)

# --- corpora into shards


@contextmanager
def held_by_another_run(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock as a running ``corpus.encode`` does (an flock on ``.lock``,
    which names the holder's pid)."""
    folder.mkdir()
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


@case("corpus-folder-locked")
def _(ctx: Ctx) -> Any:
    out = ctx.tmp / "shards"
    with held_by_another_run(out):
        return corpus.encode([bad_jsonl(ctx)], "gpt2", out, on_error="skip", progress=False)


@case("cli-corpus-folder-locked")
def _(ctx: Ctx) -> Exit:
    bad_jsonl(ctx)
    with held_by_another_run(ctx.tmp / "shards"):
        return run_cli(ctx, "encode-corpus", "bad.jsonl", "-o", "shards", "--on-error", "skip")


@case("corpus-bad-jsonl")
def _(ctx: Ctx) -> Any:
    return corpus.encode([bad_jsonl(ctx)], "gpt2", ctx.tmp / "shards", progress=False)


@case("cli-corpus-bad-jsonl")
def _(ctx: Ctx) -> Exit:
    bad_jsonl(ctx)
    return run_cli(ctx, "encode-corpus", "bad.jsonl", "-o", "shards")


@case("cli-corpus-skip")
def _(ctx: Ctx) -> Exit:
    bad_jsonl(ctx)
    done = run_cli(ctx, "encode-corpus", "bad.jsonl", "-o", "shards", "--on-error", "skip")
    manifest = corpus.read_manifest(ctx.tmp / "shards")
    assert manifest["skipped"] == {"records": 1, "files": 0}
    assert manifest["documents"] == 2, manifest
    return done


@case("corpus-missing-input")
def _(ctx: Ctx) -> Any:
    return corpus.encode([ctx.tmp / "nothere.jsonl"], "gpt2", ctx.tmp / "shards", progress=False)


@case("corpus-bad-on-error")
def _(ctx: Ctx) -> Any:
    out = ctx.tmp / "shards"
    return corpus.encode([bad_jsonl(ctx)], "gpt2", out, on_error="ignore", progress=False)


# --- the playground's API


def exchange(ctx: Ctx, request: bytes) -> Answer:
    """Send ``request`` and read the answer until the server closes the connection; a server
    that waits for more than was sent fails the test by the socket's timeout."""
    with socket.create_connection(ctx.server.server_address[:2], timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    answer = json.loads(body)
    assert answer["status"] == status, answer
    return Answer(status, head.decode("latin-1") + "\n" + answer["error"])


def http(
    ctx: Ctx,
    method: str,
    path: str,
    body: bytes | None = None,
    *,
    host: str = "127.0.0.1",
    headers: tuple[str, ...] | None = None,
) -> Answer:
    if headers is None:
        headers = () if body is None else ("Content-Type: application/json",)
    if body is not None:
        headers = (*headers, f"Content-Length: {len(body)}")
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", *headers, "Connection: close"]
    return exchange(ctx, ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b""))


CASES.update(
    {
        "serve-wrong-method": lambda ctx: http(ctx, "GET", "/api/encode"),
        "serve-nested": lambda ctx: http(ctx, "POST", "/api/encode", b"[" * 100_000),
        "serve-host": lambda ctx: http(ctx, "GET", "/api/tokenizers", host="localhost:80@evil.com"),
        "serve-body-too-big": (
            lambda ctx: http(ctx, "POST", "/api/encode", b'{"text": "%s"}' % (b"x" * MAX_BODY))
        ),
        "serve-length-promised": lambda ctx: http(
            ctx,
            "POST",
            "/api/encode",
            headers=("Content-Type: application/json", "Content-Length: 50000000"),
        ),
        "serve-chunked": lambda ctx: http(
            ctx,
            "POST",
            "/api/encode",
            headers=("Content-Type: application/json", "Transfer-Encoding: chunked"),
        ),
        "serve-content-length-invalid": lambda ctx: http(
            ctx,
            "POST",
            "/api/encode",
            headers=("Content-Type: application/json", "Content-Length: -1"),
        ),
        "serve-not-json": lambda ctx: http(ctx, "POST", "/api/encode", b"{not json"),
        "serve-content-type": lambda ctx: http(
            ctx, "POST", "/api/encode", b'{"text": "a"}', headers=("Content-Type: text/plain",)
        ),
        "serve-special": (
            lambda ctx: http(ctx, "POST", "/api/encode", b'{"text": "<|endoftext|>"}')
        ),
        "serve-unknown-tokenizer": lambda ctx: http(
            ctx, "POST", "/api/encode", b'{"text": "a", "tokenizers": ["nope"]}'
        ),
        "serve-token-id": lambda ctx: http(
            ctx, "GET", "/api/token?tokenizer=gpt2&id=99999999999999999999999"
        ),
        "serve-path": lambda ctx: http(ctx, "GET", "/../../etc/passwd"),
    }
)


# ------------------------------------------------------------------------- the test


# After every case is registered: a case without a row is a test that fails.
@pytest.mark.parametrize("row_id", [*ROWS, *(c for c in CASES if c not in ROWS)])
def test_row(row_id, tmp_path, request):
    assert row_id in ROWS, f"the case {row_id} has no row in docs/bad-input.md"
    assert row_id in CASES, f"the row {row_id} of docs/bad-input.md has no case here"
    check(ROWS[row_id], CASES[row_id], Ctx(tmp_path, request))


def test_every_row_has_a_case_and_every_case_a_row():
    assert [r for r in ROWS if r not in CASES] == []
    assert [c for c in CASES if c not in ROWS] == []
    assert len(ROWS) >= 30
