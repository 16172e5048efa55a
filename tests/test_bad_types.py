"""Arguments of the wrong type or out of every range: each gets an error of tokenmill's naming
the problem (a ``tokenmill.TokenmillError``: ``WrongTypeError``, ``UnknownTokenIdError``...),
never pyo3's bare ``TypeError`` or ``OverflowError``; the command answers each with one line
``tokenmill: error: ...`` and exit status 2, never a traceback; nothing is decoded wrong.

What still works is checked beside what is refused: ids tiktoken takes (ints, bools, numpy
integers in a list, tuples, numpy integer arrays of any width) decode as before.

Oracle: the rule of the project (docs/bad-input.md) and, for what works, ``decode`` of the
same ids as a plain list of ints; for the drop-in, the builtin tiktoken raises.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_runner import run_tokenmill

import tokenmill
from tokenmill import Tokenizer, UnknownTokenIdError, WrongTypeError, idio
from tokenmill.serve.api import Playground
from tokenmill.serve.server import PlaygroundServer

BYTES = [bytes([b]) for b in range(256)]
N_VOCAB = 50257  # gpt2's


@pytest.fixture(scope="module")
def enc() -> Tokenizer:
    return tokenmill.load("gpt2")


def one_line_error(args: tuple[str, ...], cwd: Path, stdin: bytes = b"") -> str:
    """Run ``tokenmill ARGS``: exit 2 and one line ``tokenmill: error: ...``; that line."""
    p = run_tokenmill(*args, stdin=stdin, cwd=cwd, timeout=120, text=False)
    err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert p.returncode == 2, (p.returncode, err)
    assert err.count("\n") == 1 and err.startswith("tokenmill: error: "), err
    assert p.stdout == b"", p.stdout[:200]
    return err


# ------------------------------------------------------------------ ids past every integer type

HUGE = [2**63, 2**64 - 1, 2**64, 10**30, -(2**63) - 1, -(10**30)]


@pytest.mark.parametrize("bad", [*HUGE, 2**63 - 1, 2**32, N_VOCAB, -1])
@pytest.mark.parametrize("method", ["decode", "decode_bytes"])
def test_an_id_of_any_size_is_an_unknown_id_naming_it(enc, method, bad):
    # Ids past a C long were pyo3's OverflowError ("Python int too large to convert").
    with pytest.raises(UnknownTokenIdError) as err:
        getattr(enc, method)([1, bad, 2])
    assert err.value.token_id == bad
    assert f"unknown token id {bad}: this vocabulary has ids 0..50256" in str(err.value)


@pytest.mark.parametrize("bad", HUGE)
def test_one_huge_id_is_an_unknown_id_everywhere(enc, bad):
    calls = [
        lambda: enc.decode_single_token_bytes(bad),
        lambda: enc.decode_tokens_bytes([1, bad]),
        lambda: enc.decode_with_offsets([1, bad]),
        lambda: enc.decode_batch([[1], [bad]]),
        lambda: enc.decode_bytes_batch([[bad]]),
        lambda: enc.stream_decoder().push(bad),
        lambda: enc.stream_decoder().push_many([bad]),
        lambda: enc.decode(np.array([bad], dtype=object)),
    ]
    for call in calls:
        with pytest.raises(UnknownTokenIdError, match=f"unknown token id {bad}") as err:
            call()
        assert err.value.token_id == bad


def test_the_first_bad_id_is_named(enc):
    with pytest.raises(UnknownTokenIdError, match=f"unknown token id {N_VOCAB}:"):
        enc.decode([1, N_VOCAB, 2**70])
    with pytest.raises(UnknownTokenIdError, match=f"unknown token id {2**70}:"):
        enc.decode([1, 2**70, N_VOCAB])


# ------------------------------------------------------------------------ ids that are no ints

NOT_IDS = [
    ("abc", "not str"),
    (b"", None),  # bytes are a sequence of ints: they decode (as in tiktoken)
    (None, "not NoneType"),
    (5, "not int"),
    (1.5, "not float"),
    ({"a": 1}, None),  # iterates its keys: "tokens[0] is str 'a'"
    ([None], "tokens[0] is None"),
    ([1, 1.5], "tokens[1] is float 1.5"),
    ([1, 2.0], "tokens[1] is float 2.0"),
    (["1"], "tokens[0] is str '1'"),
    ([[1, 2]], "tokens[0] is list"),
    ([np.float64(3.0)], "tokens[0] is float64"),
]


@pytest.mark.parametrize(("bad", "words"), NOT_IDS, ids=repr)
@pytest.mark.parametrize("method", ["decode", "decode_bytes", "decode_with_offsets"])
def test_ids_that_are_not_ints_are_refused_by_type(enc, method, bad, words):
    if isinstance(bad, bytes):
        assert getattr(enc, method)(bad) in ("", b"", ("", []))
        return
    with pytest.raises(WrongTypeError) as err:
        getattr(enc, method)(bad)
    message = str(err.value)
    assert "token ids" in message and "int" in message, message
    if words is not None:
        assert words in message, message


@pytest.mark.parametrize("bad", [None, "1", 1.5, [1]])
def test_one_id_that_is_not_an_int_is_refused_by_type(enc, bad):
    for call in (enc.decode_single_token_bytes, enc.stream_decoder().push):
        with pytest.raises(
            WrongTypeError, match=f"token id must be an int, not {type(bad).__name__}"
        ):
            call(bad)


@pytest.mark.parametrize("method", ["decode_batch", "decode_bytes_batch"])
def test_a_batch_that_is_no_list_of_id_lists_is_refused_by_type(enc, method):
    call = getattr(enc, method)
    with pytest.raises(WrongTypeError, match="expected a list of token-id lists, got one str"):
        call("abc")
    for bad, name in [(None, "NoneType"), (5, "int")]:
        with pytest.raises(WrongTypeError, match=f"expected a list of token-id lists, not {name}"):
            call(bad)
    with pytest.raises(WrongTypeError, match=r"got one list of ids \(wrap it in a list\)"):
        call([1, 2])
    with pytest.raises(WrongTypeError, match=r"batch\[1\]: tokens\[0\] is None"):
        call([[1], [None]])
    with pytest.raises(WrongTypeError, match="tokens must be a list of int token ids"):
        enc.decode_tokens_bytes(None)
    with pytest.raises(WrongTypeError, match="tokens must be a list of int token ids"):
        enc.stream_decoder().push_many(None)


def test_errors_of_another_type_is_refused_by_type(enc):
    with pytest.raises(WrongTypeError, match="errors must be str"):
        enc.decode([1], errors=5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "ids",
    [
        [True, False],
        (1, 2),
        [np.int64(5), np.uint8(3), np.int32(7)],
        np.array([1, 2], dtype=np.int64),
        np.array([1, 2], dtype=np.uint64),
        np.array([1, 2], dtype=np.int8),
        np.array([1, 2], dtype=np.uint16),
        np.array([1, 2], dtype=np.uint32),
        np.array([True, False]),
        np.array([1, 2], dtype=object),
        range(1, 3),
    ],
    ids=repr,
)
def test_ids_that_are_ints_of_any_kind_decode_as_before(enc, ids):
    want = enc.decode([int(i) for i in ids])
    assert enc.decode(ids) == want
    assert enc.decode_bytes(ids) == want.encode()


def test_numpy_arrays_of_no_integer_dtype_are_refused(enc):
    # A float array once decoded as ids through .tolist() when its values were whole.
    for bad in (np.array([1.5]), np.array([1.0, 2.0]), np.array(["1"]), np.array([1j])):
        with pytest.raises(WrongTypeError, match=f"integer dtype, not {bad.dtype}"):
            enc.decode(bad)
        with pytest.raises(WrongTypeError, match=f"integer dtype, not {bad.dtype}"):
            enc.decode_bytes(bad)


def test_numpy_ids_past_every_id_are_named_with_their_value(enc):
    big = np.array([1, 2**64 - 1], dtype=np.uint64)
    with pytest.raises(UnknownTokenIdError, match=f"unknown token id {2**64 - 1}:"):
        enc.decode(big)
    with pytest.raises(UnknownTokenIdError, match="unknown token id -5:"):
        enc.decode(np.array([1, -5], dtype=np.int64))
    with pytest.raises(UnknownTokenIdError, match=f"unknown token id {2**63 - 1}:"):
        enc.decode(np.array([2**63 - 1], dtype=np.int64))


def test_the_drop_in_keeps_tiktokens_builtins(enc):
    # Code written for tiktoken catches OverflowError and TypeError; they are tokenmill's too.
    from tokenmill.compat import tiktoken

    drop_in = tiktoken.get_encoding("gpt2")
    for bad in (2**63, 2**64, -(2**70)):
        with pytest.raises(OverflowError) as err:
            drop_in.decode([1, bad])
        assert isinstance(err.value, UnknownTokenIdError) and err.value.token_id == bad
    for bad_ids in ([None], ["1"], "abc", None, 5):
        for call in (drop_in.decode, drop_in.decode_tokens_bytes, drop_in.decode_with_offsets):
            with pytest.raises(TypeError) as type_err:
                call(bad_ids)  # type: ignore[arg-type]
            assert isinstance(type_err.value, tokenmill.TokenmillError), repr(type_err.value)
    for bad_batch in (None, 5, [[None]]):
        for call in (drop_in.decode_batch, drop_in.decode_bytes_batch):
            with pytest.raises(TypeError) as type_err:
                call(bad_batch)  # type: ignore[arg-type]
            assert isinstance(type_err.value, tokenmill.TokenmillError), repr(type_err.value)


# ----------------------------------------------------------------- other arguments of bad types


def test_special_token_arguments_of_bad_types(enc):
    for arg in ("allowed_special", "disallowed_special"):
        with pytest.raises(WrongTypeError, match=f"{arg} must be 'all' or a set of special"):
            enc.encode("a", **{arg: 5})
        with pytest.raises(WrongTypeError, match=f"{arg} must be 'all' or a set of special"):
            enc.count("a", **{arg: 5})
        with pytest.raises(WrongTypeError, match=f"{arg} must be 'all' or a set of special"):
            enc.encode_batch(["a"], **{arg: 5})
        # One special token's name, not in a set: its characters were taken for names.
        with pytest.raises(WrongTypeError, match=r"not one str \(wrap it in a set"):
            enc.encode("a", **{arg: "<|endoftext|>"})
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match=r"names \['x', 5\]"):
        enc.encode("a", allowed_special={5, "x"})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "method", ["encode_batch", "encode_ordinary_batch", "encode_batch_to_numpy", "count_batch"]
)
def test_a_batch_of_texts_of_a_bad_type(enc, method):
    call = getattr(enc, method)
    for bad, name in [(None, "NoneType"), (5, "int")]:
        with pytest.raises(WrongTypeError, match=f"expected a list of texts, not {name}"):
            call(bad)
    with pytest.raises(WrongTypeError, match="got one bytes"):
        call(b"abc")


@pytest.mark.parametrize("bad", [5, None, b"gpt2", 1.5])
def test_load_of_a_bad_type(bad):
    with pytest.raises(WrongTypeError) as err:
        tokenmill.load(bad)
    assert "name_or_path must be a name, path or URL (str or os.PathLike)" in str(err.value)
    assert f"not {type(bad).__name__}" in str(err.value)


def test_load_of_no_name():
    # It once looked for tokenizer files in the current folder (".").
    for empty in ("", "   "):
        with pytest.raises(tokenmill.UnknownTokenizerError, match="the tokenizer name is empty"):
            tokenmill.load(empty)


def test_load_options_of_bad_types():
    with pytest.raises(WrongTypeError, match="pattern must be str, not int"):
        tokenmill.load("gpt2", pattern=5)  # type: ignore[arg-type]
    with pytest.raises(WrongTypeError, match="special_tokens must be a dict"):
        tokenmill.load("gpt2", special_tokens=5)  # type: ignore[arg-type]


def test_tokenizer_arguments_of_bad_types():
    with pytest.raises(WrongTypeError, match="pattern must be str, not int"):
        Tokenizer(BYTES, 5)  # type: ignore[arg-type]
    with pytest.raises(WrongTypeError, match="pattern must be str, not NoneType"):
        Tokenizer(BYTES, None)  # type: ignore[arg-type]
    with pytest.raises(WrongTypeError, match="special_tokens must be a dict"):
        Tokenizer(BYTES, "gpt2", 5)  # type: ignore[arg-type]
    with pytest.raises(WrongTypeError, match="special_tokens must be a dict"):
        Tokenizer(BYTES, "gpt2", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(WrongTypeError, match="mergeable_ranks must be"):
        Tokenizer(5, "gpt2")  # type: ignore[arg-type]
    with pytest.raises(WrongTypeError, match=r"mergeable_ranks\[3\] is int"):
        Tokenizer([*BYTES[:3], 5, *BYTES[4:]], "gpt2")  # type: ignore[list-item]


def test_text_methods_of_bad_types(enc):
    with pytest.raises(WrongTypeError, match="text must be str, not int"):
        enc.chunks(5)  # type: ignore[arg-type]
    with pytest.raises(WrongTypeError, match="max_tokens must be an int, not NoneType"):
        enc.truncate("abc", None)  # type: ignore[arg-type]


# -------------------------------------------------------------------------------- the command


@pytest.mark.parametrize("big", ["99999999999999999999999", str(2**63), str(-(2**70))])
def test_cli_decode_of_a_huge_id(tmp_path, big):
    err = one_line_error(("decode", "-t", "gpt2"), tmp_path, stdin=f"1 {big}\n".encode())
    assert f"unknown token id {big}" in err
    (tmp_path / "h.json").write_text(f"[{big}]")
    err = one_line_error(("decode", "-t", "gpt2", "h.json"), tmp_path)
    assert f"unknown token id {big}" in err


def test_cli_decode_of_deeply_nested_json(tmp_path):
    (tmp_path / "n.json").write_text("[" * 100_000 + "\n")
    err = one_line_error(("decode", "-t", "gpt2", "n.json"), tmp_path)
    assert "n.json: not usable JSON: nested too deeply" in err
    err = one_line_error(("decode", "-t", "gpt2", "-f", "json"), tmp_path, stdin=b"[" * 100_000)
    assert "nested too deeply" in err


def test_cli_decode_of_json_that_is_not_ids(tmp_path):
    # JSON's true is a Python bool, which is an int: it decoded as id 1.
    for body in ("[true]", "[1.0]", '["1"]', "[[1], [true]]"):
        (tmp_path / "b.json").write_text(body)
        err = one_line_error(("decode", "-t", "gpt2", "b.json"), tmp_path)
        assert "b.json: expected a JSON list of ids or a list of lists of ids" in err


def test_cli_decode_of_npy_ids(tmp_path):
    np.save(tmp_path / "u64.npy", np.array([2**64 - 1], dtype=np.uint64))
    err = one_line_error(("decode", "-t", "gpt2", "u64.npy"), tmp_path)
    assert f"unknown token id {2**64 - 1}" in err  # was "unknown token id -1"
    # Floats decoded silently as the ids they round to.
    for name, arr in [("f.npy", np.array([1.5, 2.0])), ("b.npy", np.array([True]))]:
        np.save(tmp_path / name, arr)
        err = one_line_error(("decode", "-t", "gpt2", name), tmp_path)
        assert f"{name}: expected token ids of an integer dtype, not {arr.dtype}" in err
    np.save(tmp_path / "i8.npy", np.array([31373, 995], dtype=np.int64))
    p = run_tokenmill("decode", "-t", "gpt2", "i8.npy", cwd=tmp_path, text=False)
    assert (p.returncode, p.stdout) == (0, b"hello world"), p.stderr


# -------------------------------------------------------------------------------- the server


@pytest.fixture(scope="module")
def server(enc) -> Iterator[PlaygroundServer]:
    srv = PlaygroundServer(Playground({"gpt2": enc}), port=0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def post(server: PlaygroundServer, headers: list[str], body: bytes = b"") -> tuple[int, Any]:
    lines = ["POST /api/encode HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    request = "\r\n".join([*lines, *headers, "Connection: close"]) + "\r\n\r\n"
    with socket.create_connection(server.server_address[:2], timeout=10) as s:
        s.sendall(request.encode() + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, answer = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(answer)


@pytest.mark.parametrize("value", ["-1", "abc", "", "1_3", "+13", "0x0d", "13, 13", "1e3"])
def test_a_content_length_that_is_no_length_is_400(server, value):
    # It was 411 "a Content-Length is required", although one was sent.
    status, answer = post(server, [f"Content-Length: {value}"], b'{"text": "a"}')
    assert (status, answer["status"]) == (400, 400), answer
    assert f"invalid Content-Length {value.strip()!r}" in answer["error"], answer


def test_two_content_lengths_that_differ_are_400(server):
    status, answer = post(server, ["Content-Length: 13", "Content-Length: 5"], b'{"text": "a"}')
    assert status == 400 and "Content-Length" in answer["error"], answer


def test_a_content_length_of_thousands_of_digits_is_413(server):
    # int() refuses strings of 4,300 digits and more: that ValueError was a 411 too.
    for digits in ("9" * 5000, "1" + "0" * 30):
        status, answer = post(server, [f"Content-Length: {digits}"])
        assert status == 413 and "this server takes at most" in answer["error"], answer
    status, answer = post(server, ["Content-Length: " + "0" * 5000 + "13"], b'{"text": "a"}')
    assert status == 200, answer


def test_a_content_length_that_is_a_length_still_works(server):
    status, answer = post(server, ["Content-Length: 13"], b'{"text": "a"}')
    assert status == 200, answer
    status, answer = post(server, ["Content-Length: 13", "Content-Length: 13"], b'{"text": "a"}')
    assert status == 200, answer
    status, answer = post(server, [])
    assert status == 411 and "a Content-Length is required" in answer["error"], answer


# -------------------------------------------------------------------------- what fuzzing found
# Each was a seed fuzz/corpus/<target>/finding-* that the target skipped until it was fixed.

SURROGATE = "\ud800"


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, Path]:
    """A small tokenizer with a special token saved as .tokenmill and tokenizer.json, and its
    ranks alone as .tiktoken."""
    folder = tmp_path_factory.mktemp("small")
    with pytest.warns(tokenmill.TrainingWarning):
        tok = tokenmill.train("ab ab abc", 260, pattern="gpt2", special_tokens=["<|e|>"])
    tok.save(folder / "t.tokenmill")
    tok.save(folder / "tokenizer.json")
    Tokenizer(tok.mergeable_ranks, tok.pattern).save(folder / "v.tiktoken")
    return {p.name: p for p in folder.iterdir()}


def edited_json(source: Path, dest: Path, edit: Any) -> Path:
    doc = json.loads(source.read_text())
    edit(doc)
    dest.write_text(json.dumps(doc))  # ensure_ascii: a lone surrogate as "\ud800"
    return dest


def test_a_lone_surrogate_in_a_pattern_is_an_invalid_pattern(small_files):
    # It was UnicodeEncodeError from the native constructor.
    with pytest.raises(tokenmill.InvalidPatternError, match=r"lone surrogate U\+D800"):
        Tokenizer(BYTES, SURROGATE)
    with pytest.raises(tokenmill.InvalidPatternError, match="lone surrogate"):
        tokenmill.train("ab ab", 258, pattern="a" + SURROGATE)
    for name in ("v.tiktoken", "t.tokenmill"):
        with pytest.raises(tokenmill.InvalidPatternError, match="lone surrogate"):
            tokenmill.load(small_files[name], pattern=SURROGATE)


def test_a_lone_surrogate_in_a_special_token_is_refused(small_files):
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match=r"lone surrogate U\+D800"):
        Tokenizer(BYTES, "gpt2", {SURROGATE: 256})
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="lone surrogate"):
        tokenmill.train("ab ab", 258, special_tokens=[SURROGATE])
    with pytest.raises(tokenmill.InvalidSpecialTokensError, match="lone surrogate"):
        tokenmill.load(small_files["v.tiktoken"], pattern="gpt2", special_tokens={SURROGATE: 300})


def test_a_file_with_a_lone_surrogate_in_its_pattern_or_special_tokens(small_files, tmp_path):
    native, hf = small_files["t.tokenmill"], small_files["tokenizer.json"]

    def pattern(doc):
        doc["pattern"] = SURROGATE

    def specials(doc):
        doc["special_tokens"] = {SURROGATE: doc["special_tokens"]["<|e|>"]}

    def regex(doc):
        doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = SURROGATE

    def content(doc):
        doc["added_tokens"][0]["content"] = SURROGATE

    for source, edit in ((native, pattern), (native, specials), (hf, regex), (hf, content)):
        path = edited_json(source, tmp_path / f"x-{edit.__name__}{source.suffix}", edit)
        with pytest.raises(tokenmill.VocabFileError, match=r"lone surrogate U\+D800") as err:
            tokenmill.load(path)
        assert err.value.path == str(path)


def test_a_name_with_a_lone_surrogate(small_files, tmp_path):
    # save() raised UnicodeEncodeError from the .tokenmill writer.
    with pytest.raises(tokenmill.InvalidArgumentError, match=r"name .* lone surrogate"):
        Tokenizer(BYTES, "gpt2", name=SURROGATE)
    with pytest.raises(tokenmill.InvalidArgumentError, match=r"name .* lone surrogate"):
        tokenmill.train("ab ab", 258, name="x" + SURROGATE)
    with pytest.raises(WrongTypeError, match="name must be str"):
        Tokenizer(BYTES, "gpt2", name=5)  # type: ignore[arg-type]

    def name(doc):
        doc["name"] = SURROGATE

    def no_name(doc):
        del doc["name"]

    native = small_files["t.tokenmill"]
    named = edited_json(native, tmp_path / "named.tokenmill", name)
    # A file name that is not UTF-8, as Python gives it: the byte as a surrogate.
    unnamed = edited_json(native, tmp_path / os.fsdecode(b"\xffx.tokenmill"), no_name)
    for path, want in ((named, "\ufffd"), (unnamed, "\ufffdx")):
        tok = tokenmill.load(path)
        assert tok.name == want
        tok.save(tmp_path / "again.tokenmill")
        assert tokenmill.load(tmp_path / "again.tokenmill") == tok


def test_a_named_tokenizer_with_a_pattern_says_so():
    # It said "unknown tokenizer 'gpt2': not a known name (gpt2, ...)".
    with pytest.raises(tokenmill.InvalidArgumentError) as err:
        tokenmill.load("gpt2", pattern="cl100k")
    assert "unknown" not in str(err.value) and "named tokenizer" in str(err.value)
    assert "pattern=" in str(err.value) and "rank file" in str(err.value)
    with pytest.raises(tokenmill.InvalidArgumentError, match="special_tokens="):
        tokenmill.load("cl100k_base", special_tokens={"<|x|>": 200000})


def test_is_special_token_of_a_bad_type(enc):
    # It was a bare TypeError ("'>=' not supported").
    for bad in (None, "1", 1.5):
        with pytest.raises(WrongTypeError, match="token must be an int"):
            enc.is_special_token(bad)
    assert enc.is_special_token(np.int64(50256)) and not enc.is_special_token(np.uint16(5))


def damaged_gzip(folder: Path) -> dict[str, Path]:
    import gzip

    data = gzip.compress(b"hello world " * 50)
    files = {
        "truncated": data[: len(data) // 2],
        "corrupt": data[:10] + b"\xff" * (len(data) - 18) + data[-8:],
        "bad-method": b"\x1f\x8b" + b"x" * 30,
    }
    for name, body in files.items():
        (folder / f"{name}.txt.gz").write_bytes(body)
    return {name: folder / f"{name}.txt.gz" for name in files}


@pytest.mark.parametrize("command", ["encode", "count"])
def test_cli_on_damaged_gzip(tmp_path, command):
    # A traceback: EOFError, zlib.error or BadGzipFile out of gzip.decompress.
    for path in damaged_gzip(tmp_path).values():
        err = one_line_error((command, "-t", "gpt2", path.name), tmp_path)
        assert f"{path.name}: damaged gzip data" in err, err


def npy_with_header(header: str, data: bytes = b"") -> bytes:
    text = header.ljust(117) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin-1") + data


def test_damaged_npy_headers_are_ids_file_errors(tmp_path):
    # tokenize.TokenError (brackets that do not close) and MemoryError (a shape of terabytes
    # in 128 bytes: np.load allocated it first) escaped read_ids.
    unclosed = npy_with_header("{'descr': '<u2', 'fortran_order': False, 'shape': (5L,(, }")
    huge = npy_with_header("{'descr': '<u2', 'fortran_order': False, 'shape': (1099511627776,), }")
    unhashable = npy_with_header("{[1]: 2}")
    for data, words in (
        (unclosed, "header does not parse"),
        (huge, "declares shape (1099511627776,)"),
        (unhashable, "header does not parse"),
    ):
        with pytest.raises(tokenmill.IdsFileError) as e:
            idio.read_ids(data, "npy")
        assert words in str(e.value)
        (tmp_path / "ids.npy").write_bytes(data)
        err = one_line_error(("decode", "-t", "gpt2", "ids.npy"), tmp_path)
        assert f"ids.npy: {str(e.value)[:40]}" in err, err


@pytest.mark.parametrize("flags", [(), ("-q",), ("--json",), ("--ids",)])
def test_cli_show_of_an_argument_that_is_not_utf8(tmp_path, flags):
    # It printed the tokens, then failed on the summary line (exit 2 after output), and
    # exited 0 with -q or --json; stdin that is not UTF-8 was refused already.
    err = one_line_error(("show", "-t", "gpt2", *flags, os.fsdecode(b"ab\xffcd")), tmp_path)
    assert "not UTF-8 text (bad byte 0xff at offset 2)" in err, err
    err = one_line_error(("show", "-t", "gpt2", *flags), tmp_path, stdin=b"ab\xffcd")
    assert "not UTF-8 text" in err, err
