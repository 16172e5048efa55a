"""Bad input gets a clear Python exception naming the problem, never a panic."""

from __future__ import annotations

import base64
import re

import pytest

import tokenmill
from tokenmill import Tokenizer
from tokenmill.formats import rankfile

BYTES = {bytes([b]): b for b in range(256)}


@pytest.mark.parametrize(
    ("name", "bad"), [("gpt2", 50257), ("gpt2", -1), ("gpt2", 2**40), ("cl100k_base", 100256)]
)
def test_unknown_ids(name, bad):
    enc = tokenmill.load(name)
    with pytest.raises(tokenmill.UnknownTokenIdError, match=f"unknown token id {bad}") as err:
        enc.decode([1, bad])
    assert isinstance(err.value, KeyError)
    assert err.value.token_id == bad
    with pytest.raises(KeyError, match=str(bad)):
        enc.decode_single_token_bytes(bad)


def rank_file(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def good_lines() -> list[str]:
    return [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]


@pytest.mark.parametrize(
    ("edit", "line", "problem"),
    [
        (lambda ls: ls.__setitem__(3, "!!!! 3"), 4, "bad base64"),
        (lambda ls: ls.__setitem__(10, ls[10].split()[0]), 11, "truncated or malformed"),
        (
            lambda ls: ls.__setitem__(20, ls[20].split()[0] + " 19"),
            21,
            "rank 19 was already given on line 20",
        ),
        (lambda ls: ls.__setitem__(5, "YQ== five"), 6, "not a non-negative integer"),
        (
            lambda ls: ls.append(base64.b64encode(b"ab").decode() + " 3000"),
            257,
            "rank 3000 is far past the file's 257 tokens",
        ),
    ],
    ids=["base64", "truncated", "duplicate-rank", "rank-not-int", "far-rank"],
)
def test_malformed_rank_files_name_the_line(tmp_path, edit, line, problem):
    lines = good_lines()
    edit(lines)
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(rank_file(lines))
    with pytest.raises(tokenmill.VocabFileError) as err:
        tokenmill.load(path, pattern="gpt2")
    assert err.value.line == line
    assert problem in str(err.value)
    assert str(path) in str(err.value)
    with pytest.raises(tokenmill.VocabFileError, match=problem):
        rankfile.read_ranks(path)


def test_rank_file_without_pattern_says_what_to_pass(tmp_path):
    path = tmp_path / "v.tiktoken"
    path.write_bytes(rank_file(good_lines()))
    with pytest.raises(tokenmill.UnknownTokenizerError, match="pattern="):
        tokenmill.load(path)
    assert tokenmill.load(path, pattern="cl100k").encode("hi") == [104, 105]


def test_vocabularies_that_cannot_work():
    with pytest.raises(tokenmill.InvalidVocabError, match="byte 0x00"):
        Tokenizer({b"a": 0}, "gpt2")
    with pytest.raises(tokenmill.InvalidVocabError, match="may leave fewer gaps"):
        Tokenizer(BYTES | {b"ab": 3000}, "gpt2")
    with pytest.raises(tokenmill.InvalidVocabError, match="only 257 tokens"):
        Tokenizer([b""] * 300 + list(BYTES) + [b"ab"], "gpt2")
    with pytest.raises(tokenmill.InvalidVocabError, match="same bytes"):
        Tokenizer([*BYTES, b"ab", b"ab"], "gpt2")
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="already an ordinary token"):
        Tokenizer(BYTES, "gpt2", {"<s>": 5})
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="empty"):
        Tokenizer(BYTES, "gpt2", {"": 300})


@pytest.mark.parametrize("pattern", ["(", "[a-", r"\p{Nope}", ""])
def test_invalid_pattern(pattern):
    with pytest.raises(tokenmill.InvalidPatternError, match=r"pattern"):
        Tokenizer(BYTES, pattern)


def test_bytes_where_str_is_expected():
    enc = tokenmill.load("gpt2")
    for call in (enc.encode, enc.encode_ordinary, enc.count, enc.encode_to_numpy):
        with pytest.raises(TypeError, match=r"must be str, not bytes.*decode"):
            call(b"hello")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        enc.encode_batch(["ok", b"no"])
    with pytest.raises(TypeError, match="list of texts"):
        enc.encode_batch("one string")


def test_disallowed_special_names_token_and_argument():
    enc = tokenmill.load("cl100k_base")
    with pytest.raises(tokenmill.DisallowedSpecialTokenError) as err:
        enc.encode("user text with <|endofprompt|> inside")
    msg = str(err.value)
    assert "'<|endofprompt|>'" in msg and "allowed_special" in msg and "disallowed_special" in msg
    assert err.value.token == "<|endofprompt|>"
    assert isinstance(err.value, ValueError)
    with pytest.raises(tokenmill.DisallowedSpecialTokenError):
        enc.count("<|endoftext|>")
    with pytest.raises(tokenmill.DisallowedSpecialTokenError):
        enc.encode_batch(["fine", "<|endoftext|>"], num_threads=2)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    ("n", "doc", "failing"),
    [
        # Documents of 2 KB (a run of two, `work_sharing::RUN_BYTES`), failing in two runs.
        (40, "plain text " * 200, (9, 30)),
        # Documents of 11 bytes, hundreds to a run: the two failing ones are in one run, then
        # each in a run of its own.
        (4000, "plain text ", (1203, 1204)),
        (4000, "plain text ", (1203, 3900)),
    ],
)
def test_a_batch_reports_the_first_failing_document(threads, n, doc, failing):
    # Two documents fail, each with its own special token: every batch form names the first
    # one's, however the documents were shared out among the threads.
    enc = tokenmill.load("cl100k_base")
    docs = [doc] * n
    docs[failing[0]] = docs[failing[0]] + "<|endoftext|>"
    docs[failing[1]] = "<|fim_prefix|>" + docs[failing[1]]
    for call in (enc.encode_batch, enc.count_batch, enc.encode_batch_to_numpy):
        for _ in range(5):
            with pytest.raises(tokenmill.DisallowedSpecialTokenError) as err:
                call(docs, num_threads=threads)
            assert err.value.token == "<|endoftext|>", call.__name__


def test_unknown_names_and_bad_arguments():
    with pytest.raises(tokenmill.UnknownTokenizerError, match="cl100k_base"):
        tokenmill.load("cl100k")
    enc = tokenmill.load("gpt2")
    with pytest.raises(ValueError, match="num_threads"):
        enc.encode_batch(["a"], num_threads=0)
    # Every single-text method checks the count (they test an int inline, for speed).
    one_text = (enc.encode, enc.encode_ordinary, enc.encode_to_numpy, enc.count)
    for call in one_text:
        with pytest.raises(ValueError, match="num_threads"):
            call("a", num_threads=0)
        assert repr(call("a b", num_threads=None)) == repr(call("a b", num_threads=1))
    for bad in ("2", 2.0, True):
        for call in one_text:
            with pytest.raises(TypeError, match="num_threads must be an int"):
                call("a", num_threads=bad)
        with pytest.raises(TypeError, match="num_threads must be an int"):
            enc.encode_ordinary_batch(["a"], num_threads=bad)
    with pytest.raises(ValueError, match="max_tokens"):
        enc.truncate("abc", -1)


@pytest.mark.parametrize("bad", [10**9, 2**32, 10**12, -1, True, 3.0, "300"])
def test_special_ids_that_cannot_be_used_are_refused_at_load(tmp_path, bad):
    # An id far past the vocabulary once loaded, then sized a table by it on the first encode
    # (8 GB for 10**9; an abort, not an exception, past the machine's memory); ids that are
    # not ints in range were pyo3's OverflowError or TypeError.
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match=re.escape('<|x|>" has id')):
        Tokenizer(BYTES, "gpt2", {"<|x|>": bad})
    path = tmp_path / "v.tiktoken"
    path.write_bytes(rank_file(good_lines()))
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match=re.escape('<|x|>" has id')):
        tokenmill.load(path, pattern="gpt2", special_tokens={"<|x|>": bad})


def test_special_ids_may_leave_gaps_as_real_vocabularies_do():
    tok = Tokenizer(BYTES, "gpt2", {"<|a|>": 256, "<|b|>": 1000, "<|c|>": 100_000})
    assert tok.encode("<|c|>x", allowed_special="all") == [100_000, 120]
    assert tok.n_vocab == 100_001


def test_a_rank_past_the_files_tokens_is_refused_before_it_sizes_a_table(tmp_path):
    # One line of rank 10**9 asked for 24 GB and aborted the process; 10**8 peaked at 3 GB.
    path = tmp_path / "big.tiktoken"
    for rank in (10**8, 10**9):
        path.write_bytes(rank_file(["YQ== 0", f"Yg== {rank}"]))
        with pytest.raises(tokenmill.VocabFileError, match=f"rank {rank} is far past") as err:
            tokenmill.load(path, pattern="gpt2")
        assert err.value.line == 2


def test_thread_counts_are_clamped_and_pools_bounded():
    # num_threads=3000 started 3000 threads for one call (53 s); every count's pool lived on,
    # so counts 2..41 left 861 OS threads. Counts are clamped to the CPUs the process may
    # use, and at most four pools are kept.
    import subprocess
    import sys

    code = (
        "import os, tokenmill\n"
        "enc = tokenmill.load('gpt2')\n"
        "text = 'hi ' * 100000\n"
        "want = enc.encode(text)\n"
        "assert enc.encode(text, num_threads=3000) == want\n"
        "for n in range(2, 42):\n"
        "    assert enc.encode(text, num_threads=n) == want\n"
        "    assert enc.count_batch([text] * 3, num_threads=n) == [len(want)] * 3\n"
        "print(len(os.listdir('/proc/self/task')), len(os.sched_getaffinity(0)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    threads, cpus = map(int, out.stdout.split())
    # The main thread and a few of Python's and numpy's, plus the pools kept (4 at most, of
    # at most `cpus` workers each).
    assert threads <= 8 + 4 * cpus, out.stdout


# ------------------------------------------------------------------ every error is tokenmill's

BUILTINS = {"ValueError", "TypeError", "KeyError", "OSError", "IndexError", "RuntimeError",
            "FileNotFoundError", "ImportError", "LookupError", "Exception"}  # fmt: skip


def test_every_error_class_is_a_tokenmill_error_exported_from_the_package():
    import inspect

    from tokenmill import errors

    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)]
    assert classes and all(c.__module__ == "tokenmill.errors" for c in classes)
    for c in classes:
        assert c.__name__ in tokenmill.__all__ and getattr(tokenmill, c.__name__) is c
        if c is not errors.TrainingWarning:
            assert issubclass(c, errors.TokenmillError), c
    # Each also is the builtin a caller catches, so `except ValueError` code keeps working.
    assert issubclass(errors.UsageError, ValueError)
    assert issubclass(errors.WrongTypeError, TypeError)
    assert issubclass(errors.NotATokenError, KeyError)
    assert issubclass(errors.MissingDependencyError, ImportError)
    assert issubclass(errors.CorpusOptionError, errors.InvalidArgumentError)


def test_tokenmill_raises_no_bare_builtin_exception():
    import ast
    from pathlib import Path

    root = Path(tokenmill.__file__).parent
    bare = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in BUILTINS:
                    bare.append(f"{name}:{node.lineno}: {exc.id}")
    assert bare == []


def test_library_errors_keep_their_builtin_bases():
    enc = tokenmill.load("gpt2")
    with pytest.raises(tokenmill.NotATokenError) as err:
        enc.encode_single_token("not one token at all")
    assert isinstance(err.value, KeyError)
    with pytest.raises(tokenmill.WrongTypeError, match="decode bytes first"):
        enc.encode(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(tokenmill.InvalidArgumentError, match="max_tokens"):
        enc.truncate("text", -1)
    with pytest.raises(tokenmill.WrongTypeError, match="wrap it in a list"):
        enc.encode_batch("one str")  # type: ignore[arg-type]
