"""The ``tokenmill`` command's input parsing: ``encode``, ``decode``, ``count`` and ``show``
on arbitrary input, run in this process (``tokenmill.cli.main``, the command's entry point)
with stdin, stdout and stderr swapped for buffers.

Input: a command byte, an options byte, a file byte, then the data. Command (modulo 4):
encode, decode, count, show. Options: bit 0 the data as a file (else on stdin; for show, as
the text argument, as the shell would pass it); bit 1 ``--json``; bit 2 ``--quiet``; bits
3-5 for decode the ids' format (from the file name, ``-f text/json/npy/bin``, ``bin`` with
``--dtype uint32/uint16``), for encode the output (text, ``-f json/npy/bin``, ``bin`` with
``--dtype uint32``, ``-o`` a ``.npy``, ``.bin`` or ``.json`` file); bit 6 ``--allow-special``
(decode: ``--errors strict``), bit 7 ``--plain-special`` (decode: ``--errors ignore``). File
byte: the file's suffix (``.txt``, ``.json``, ``.npy``, ``.bin``, none) and, bit 7, the
tokenizer (``-t gpt2``, else ``-t cl100k_base``, whose ids need uint32).

Checks: the command ends with status 0, or with status 2, nothing on stdout and stderr's
last line, and only that line, ``tokenmill: error: ...`` (no traceback: an exception out of
``main`` is a finding, as is any other status). On status 0 the output is the library's:
encode's ids (read back from text, JSON, ``.npy`` or ``.bin``) are ``Tokenizer.encode``'s
with the special flags' arguments; decode writes exactly ``Tokenizer.decode`` of the ids the
file holds; ``count --json`` gives ``Tokenizer.count``; ``show --json`` gives the ids and
their bytes. An input that is not UTF-8 text (a show argument with bytes that are not UTF-8
too), or that holds a special token's text without a flag saying what it is, must be
refused (status 2) by the commands that read text.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

if __name__ == "__main__":  # run by atheris: instrument tokenmill's code as it is imported
    import atheris

    instrumented: Any = atheris.instrument_imports(include=["tokenmill"])
else:  # imported (tests/test_fuzz_seeds.py replays the seeds): no atheris needed
    instrumented = contextlib.nullcontext()
with instrumented:
    import tokenmill
    import tokenmill.analysis.show
    import tokenmill.cli
    import tokenmill.idio
    import tokenmill.sources.files
    from tokenmill.cli import main

COMMANDS = ("encode", "decode", "count", "show")
SUFFIXES = (".txt", ".json", ".npy", ".bin", "")
DECODE_FORMATS: list[list[str]] = [
    [],
    ["-f", "text"],
    ["-f", "json"],
    ["-f", "npy"],
    ["-f", "bin"],
    ["-f", "bin", "--dtype", "uint32"],
    ["-f", "bin", "--dtype", "uint16"],
    [],
]
ENCODE_OUTPUTS: list[list[str]] = [
    [],
    ["-f", "json"],
    ["-f", "npy"],
    ["-f", "bin"],
    ["-f", "bin", "--dtype", "uint32"],
    ["-o", "out.npy"],
    ["-o", "out.bin"],
    ["-o", "out.json"],
]
TOKENIZERS = {"gpt2": tokenmill.load("gpt2"), "cl100k_base": tokenmill.load("cl100k_base")}
WORK = Path(tempfile.mkdtemp(prefix="tokenmill-fuzz-cli-"))
atexit.register(shutil.rmtree, WORK, ignore_errors=True)


def run(argv: list[str], stdin: bytes) -> tuple[int, bytes, str]:
    """``tokenmill ARGV`` in this process: its status, stdout and stderr."""
    saved = sys.stdin, sys.stdout, sys.stderr
    out = io.BytesIO()
    err = io.BytesIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace")
    try:
        status = main(argv)
        sys.stdout.flush()
        sys.stderr.flush()
        return status, out.getvalue(), err.getvalue().decode("utf-8")
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def ids_written(data: bytes, fmt: str, dtype: str) -> list[list[int]]:
    """What ``encode`` wrote, read back here (not with the library's reader)."""
    if fmt == "text":
        return [[int(x) for x in line.split()] for line in data.decode().splitlines()]
    if fmt == "json":
        value = json.loads(data)
        return [value] if all(isinstance(x, int) for x in value) else value
    if fmt == "npy":
        return [np.load(io.BytesIO(data)).tolist()]
    return [np.frombuffer(data, dtype=dtype).tolist()]


def text_of(data: bytes) -> str | None:
    """The text a command reads from ``data``: strict UTF-8 (None: it is not UTF-8)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class Case:
    """One run of the command, as the input describes it."""

    command: str
    tok: tokenmill.Tokenizer
    body: bytes
    argv: list[str] = field(default_factory=list)
    path: Path | None = None  # the input file
    argument: str | None = None  # show's text argument
    special: dict[str, Any] = field(default_factory=dict)  # encode's arguments for the flags
    stdin: bytes = b""

    def option(self, name: str) -> str | None:
        """The value given to option ``name``, if any."""
        return self.argv[self.argv.index(name) + 1] if name in self.argv else None

    def text(self) -> str | None:
        """The text the command encodes (None: not UTF-8, or gzip, which it unpacks). An
        argument the shell passed with bytes that are not UTF-8 (lone surrogates here) is
        not UTF-8 text either."""
        if self.argument is not None:
            return text_of(self.argument.encode("utf-8", "surrogateescape"))
        if self.path is not None and self.body[:2] == b"\x1f\x8b":
            return None
        return text_of(self.body)


def steer_around(case: Case) -> bool:
    """Whether the input hits a defect reported and not fixed yet, which would stop the run
    before it finds others (each new, reported with fuzz/python/cli_inputs.py). None at
    present: damaged gzip input, a show argument that is not UTF-8 and damaged ``.npy``
    files were fixed, and their ``finding-*`` seeds check them."""
    del case
    return False


def case_of(data: bytes, folder: Path) -> Case:
    command = COMMANDS[data[0] % 4] if data else "encode"
    opts = data[1] if len(data) > 1 else 0
    file_byte = data[2] if len(data) > 2 else 0
    body = data[3:]
    as_file = bool(opts & 1)
    spec = "gpt2" if file_byte & 0x80 == 0 else "cl100k_base"
    case = Case(command, TOKENIZERS[spec], body, [command, "-t", spec])
    if opts & 2:
        case.argv.append("--json")
    if opts & 4:
        case.argv.append("--quiet")
    if command == "show" and as_file:
        # An argument, as the shell passes one: no NUL, undecodable bytes as surrogates.
        case.argument = body.replace(b"\0", b"").decode("utf-8", "surrogateescape")
        case.argv.append(case.argument)
    elif as_file:
        case.path = folder / ("in" + SUFFIXES[file_byte % len(SUFFIXES)])
        case.path.write_bytes(body)
        case.argv.append(str(case.path))
    else:
        case.stdin = body
    if command == "decode":
        case.argv += DECODE_FORMATS[(opts >> 3) & 7]
        errors = "strict" if opts & 0x40 else "ignore" if opts & 0x80 else "replace"
        if errors != "replace" or opts & 0x20:
            case.argv += ["--errors", errors]
        return case
    if opts & 0x40:
        case.argv.append("--allow-special")
        case.special = {"allowed_special": "all"}
    if opts & 0x80:
        case.argv.append("--plain-special")
        case.special = {"disallowed_special": ()}
    if command == "encode":
        outputs = ENCODE_OUTPUTS[(opts >> 3) & 7]
        case.argv += [str(folder / a) if a.startswith("out.") else a for a in outputs]
    return case


def test_one_input(data: bytes) -> None:
    folder = WORK / "case"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    case = case_of(data, folder)
    if steer_around(case):
        return
    status, out, err = run(case.argv, case.stdin)
    lines = err.splitlines()
    if status == 2:
        errs = [line for line in lines if line.startswith("tokenmill: error:")]
        assert len(errs) == 1 and lines[-1] == errs[0], f"{case.argv}: status 2, stderr {err!r}"
        # Refused before any output (show once printed the tokens, then failed).
        assert out == b"", f"{case.argv}: status 2 after output {out[:200]!r}"
        refused(case, err)
        return
    assert status == 0, f"{case.argv}: status {status}, stderr {err[-2000:]!r}"
    assert "tokenmill: error:" not in err, f"{case.argv}: status 0, stderr {err!r}"
    check_output(case, out)


def refused(case: Case, err: str) -> None:
    """A status 2 needs a reason: for the commands that read text, a text the library
    encodes with the flags' arguments is none, unless an option is at fault."""
    argv = case.argv
    if case.command == "decode" or ("--allow-special" in argv and "--plain-special" in argv):
        return  # ids files have reasons of their own; the two flags exclude each other
    if case.command == "encode" and "--json" in argv and case.option("-f") in ("npy", "bin"):
        return  # --json prints JSON: no binary format on stdout
    if case.argument is not None and case.argument.startswith("-"):
        return  # an option, for argparse
    text = case.text()
    if text is None:
        return
    try:
        case.tok.encode(text, **case.special)
    except tokenmill.TokenmillError:
        return
    raise AssertionError(f"{argv}: refused a text the library encodes: {err!r}")


def check_output(case: Case, out: bytes) -> None:
    """Status 0: the output against the library."""
    argv, tok = case.argv, case.tok
    if case.command == "decode":
        if "--json" in argv:
            return
        path = None if case.path is None else str(case.path)
        fmt = case.option("-f") or tokenmill.idio.guess_format(path)
        dtype = case.option("--dtype") or tokenmill.idio.dtype_for(tok.n_vocab)
        docs = tokenmill.idio.read_ids(case.body, fmt, dtype)
        errors = case.option("--errors") or "replace"
        want = tok.decode([i for d in docs for i in d], errors=errors).encode()
        assert out == want, f"{argv}: decode wrote {out[:200]!r}, the library {want[:200]!r}"
        return
    if (case.argument or "").startswith("-"):
        return  # an argument argparse takes for an option
    if case.path is not None and case.body[:2] == b"\x1f\x8b":
        return  # gzip: the command reads what it holds
    text = case.text()
    assert text is not None, f"{argv}: status 0 for input that is not UTF-8"
    try:
        ids = tok.encode(text, **case.special)
    except tokenmill.TokenmillError as e:
        raise AssertionError(f"{argv}: status 0 for a text the library refuses: {e}") from None
    if case.command == "encode":
        dest = case.option("-o")
        if "--json" in argv and dest is None:
            got = [d["ids"] for d in json.loads(out)["inputs"]]
        else:
            written = out if dest is None else Path(dest).read_bytes()
            fmt = case.option("-f") or tokenmill.idio.guess_format(dest)
            dtype = case.option("--dtype") or tokenmill.idio.dtype_for(tok.n_vocab)
            got = ids_written(written, fmt, dtype)
        assert got == [ids], f"{argv}: encode gave {got}, the library {ids}"
    elif case.command == "count" and "--json" in argv:
        n = json.loads(out)["files"][0][argv[2]]
        assert n == len(ids) == tok.count(text, **case.special), f"{argv}: count {n}"
    elif case.command == "show" and "--json" in argv:
        tokens = json.loads(out)["tokens"]
        assert [t["id"] for t in tokens] == ids, f"{argv}: show gave other ids"
        pieces = tok.decode_tokens_bytes(ids)
        assert [bytes(t["bytes"]) for t in tokens] == pieces, f"{argv}: show's bytes"


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
