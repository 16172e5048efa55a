"""The playground's HTTP server (``tokenmill serve``) on arbitrary requests, over a socket.

A :class:`tokenmill.serve.server.PlaygroundServer` serving gpt2 and a small trained tokenizer
(with a special token) runs in a thread from import on, on a free port, as tests/test_serve.py
runs one. Each input is sent on a new connection, which is then half-closed (so the server
sees the request end and never waits), and the answer is read to its end.

Input: a mode byte, then the request. Mode (the byte modulo 4): 0 and 1, the bytes as they
are; 2, a well-formed ``POST /api/encode`` whose body is the bytes; 3, the bytes with a valid
``Host`` header put after their first line (so that raw requests get past the Host check).

Checks: the server answers every request that has a request line with a well-formed HTTP
status line (unless http.server answers it as HTTP/0.9, with the bare body: ``GET /path``
without a version, or a request line whose version it cannot read; see status_line_due),
every status in the answer (pipelined requests get several) is below 500, except
http.server's 501 (a method it has no handler for) and 505 (an HTTP version it does not
speak); no handler raises (the server's ``handle_error`` is recorded: any exception but a
dropped connection is a finding); no answer takes 5 s; a connection reset before any answer
is fine only when the server logged the error status it refused the request with (it closes
without reading a body it refuses); and after each input ``GET /api/tokenizers`` answers 200.
A 200 from ``/api/encode`` must give the library's ids for each tokenizer
(``encode``/``encode_ordinary`` as ``special`` says) with byte and character offsets that add
up to the text's; a 200 from ``/api/token`` the token's bytes as the library has them.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
import traceback
import warnings
from typing import Any

if __name__ == "__main__":  # run by atheris: instrument tokenmill's code as it is imported
    import atheris

    instrumented: Any = atheris.instrument_imports(include=["tokenmill"])
else:  # imported (tests/test_fuzz_seeds.py replays the seeds): no atheris needed
    instrumented = contextlib.nullcontext()
with instrumented:
    import tokenmill
    from tokenmill.serve.api import Playground
    from tokenmill.serve.server import PlaygroundServer

# Seconds the client waits for an answer to end.
ANSWER_TIMEOUT = 5.0
# Statuses at 500 and over that http.server sends on purpose: no handler for the method, and
# an HTTP version it does not speak.
SERVER_REFUSALS = {501, 505}
STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([0-9]{3}) ")
ANY_STATUS = re.compile(rb"(?:^|\r\n)HTTP/1\.[01] ([0-9]{3}) ")
LOGGED = re.compile(r"tokenmill serve: ([0-9]{3}) ")


class Log:
    """The server's log stream: one line per refused request, kept."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines.append(text)
        return len(text)

    def flush(self) -> None:
        pass


class RecordingServer(PlaygroundServer):
    """The playground's server, recording what its handlers raise (http.server only prints
    it and drops the connection)."""

    failures: list[str]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            self.failures.append(traceback.format_exc())
        super().handle_error(request, client_address)


def _start() -> tuple[RecordingServer, dict[str, tokenmill.Tokenizer], Log]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tiny = tokenmill.train(
            "the cat sat on the mat; naïve café, 日本語 🙂 " * 20,
            400,
            pattern="gpt2",
            special_tokens=["<|endoftext|>"],
        )
    toks = {"gpt2": tokenmill.load("gpt2"), "tiny": tiny}
    log = Log()
    server = RecordingServer(Playground(toks), port=0, max_body=1 << 14, log=log)
    server.failures = []
    server.read_timeout = 3.0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, toks, log


SERVER, TOKENIZERS, LOG = _start()
PORT = SERVER.server_address[1]
HOST = f"Host: 127.0.0.1:{PORT}\r\n".encode()


def exchange(request: bytes) -> tuple[bytes, bool]:
    """Send ``request`` on a new connection, half-close it, and read the answer to its end;
    returns the answer and whether the connection was reset."""
    with socket.create_connection(("127.0.0.1", PORT), timeout=ANSWER_TIMEOUT) as s:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            # The server may close early: it refuses a body it will not read unread.
            s.sendall(request)
            s.shutdown(socket.SHUT_WR)
        chunks = []
        while True:
            try:
                chunk = s.recv(1 << 16)
            except ConnectionResetError:
                return b"".join(chunks), True
            except TimeoutError:
                raise AssertionError(
                    f"no end of the answer in {ANSWER_TIMEOUT} s; so far {b''.join(chunks)[:300]!r}"
                ) from None
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)


def status_line_due(request: bytes) -> bool:
    """Whether http.server answers ``request`` with a status line: only once it has read an
    HTTP version below 2.0 (and not 0.9) from a request line of 3 or more words. Before that
    (``GET /path`` without a version, a version it cannot read or does not speak, a request
    line over 64 KB) it answers as HTTP/0.9 does, with the bare body."""
    line = request.split(b"\n", 1)[0]
    if len(line) >= 65536:
        return False
    words = line.decode("iso-8859-1").rstrip("\r").split()
    m = re.fullmatch(r"HTTP/([0-9]{1,10})\.([0-9]{1,10})", words[-1]) if len(words) >= 3 else None
    return m is not None and (int(m[1]), int(m[2])) < (2, 0) and words[-1] != "HTTP/0.9"


def has_request_line(request: bytes) -> bool:
    """Whether http.server sees a request line (it drops a connection whose first line is
    blank, answering nothing, as RFC 9112 lets a server ignore empty lines)."""
    return bool(request.split(b"\n", 1)[0].decode("iso-8859-1").split())


def body_of(answer: bytes) -> Any:
    """The JSON body of a single answer."""
    head, _, body = answer.partition(b"\r\n\r\n")
    m = re.search(rb"\r\nContent-Length: ([0-9]+)\r\n", head + b"\r\n")
    assert m is not None, f"an answer without a Content-Length: {head[:300]!r}"
    assert len(body) >= int(m[1]), f"the body is cut short: {answer[:300]!r}"
    return json.loads(body[: int(m[1])])


def check_encode(body: bytes, answer: dict[str, Any]) -> None:
    """A 200 from /api/encode against the library."""
    request = json.loads(body.decode("utf-8"))  # as the server reads it
    text, special = request["text"], request.get("special", "error")
    assert answer["chars"] == len(text), f"chars {answer['chars']} for {len(text)}"
    for r in answer["results"]:
        tok = TOKENIZERS[r["tokenizer"]]
        if special == "allow":
            ids = tok.encode(text, allowed_special="all")
        elif special == "plain":
            ids = tok.encode_ordinary(text)
        else:
            ids = tok.encode(text)
        assert r["ids"] == ids, f"{r['tokenizer']}: ids {r['ids']} != the library's {ids}"
        assert r["count"] == len(ids)
        pieces = tok.decode_tokens_bytes(ids)
        offsets = [0]
        for p in pieces:
            offsets.append(offsets[-1] + len(p))
        assert r["byte_offsets"] == offsets, f"{r['tokenizer']}: byte_offsets {r['byte_offsets']}"
        assert offsets[-1] == answer["bytes"], f"the tokens make {offsets[-1]} bytes"
        assert len(r["char_offsets"]) == len(ids) + 1
        assert r["char_offsets"][-1] == len(text), f"char_offsets end at {r['char_offsets'][-1]}"
        assert r["char_offsets"] == sorted(r["char_offsets"]), "char_offsets go back"


def check_token(answer: dict[str, Any]) -> None:
    """A 200 from /api/token against the library."""
    tok = TOKENIZERS[answer["tokenizer"]]
    token_id = answer["id"]
    specials = {v: k for k, v in tok.special_tokens.items()}
    data = (
        specials[token_id].encode()
        if token_id in specials
        else tok.decode_single_token_bytes(token_id)
    )
    assert answer["hex"] == data.hex(" "), f"token {token_id}: hex {answer['hex']}"
    assert answer["length"] == len(data)


def test_one_input(data: bytes) -> None:
    mode = data[0] % 4 if data else 0
    rest = data[1:]
    if mode == 2:
        request = (
            b"POST /api/encode HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(rest) + rest
        )
    elif mode == 3:
        first, nl, after = rest.partition(b"\n")
        request = first + nl + HOST + after if nl else first + b"\r\n" + HOST + b"\r\n"
    else:
        request = rest

    SERVER.failures.clear()
    LOG.lines.clear()
    answer, reset = exchange(request)
    assert not SERVER.failures, "a handler raised:\n" + "\n".join(SERVER.failures)

    if not answer:
        if not has_request_line(request):
            pass  # nothing asked: nothing answered
        elif reset:
            logged = [int(m[1]) for line in LOG.lines if (m := LOGGED.match(line))]
            assert logged and all(s < 500 for s in logged), (
                f"the connection was reset with no answer and nothing logged: {request[:300]!r}"
            )
        else:
            raise AssertionError(f"no answer to {request[:300]!r}")
    elif status_line_due(request):
        assert STATUS_LINE.match(answer), f"the answer starts {answer[:200]!r}"
    statuses = [int(m[1]) for m in ANY_STATUS.finditer(answer)]
    bad = [s for s in statuses if s >= 500 and s not in SERVER_REFUSALS]
    assert not bad, f"status {bad[0]} to {request[:300]!r}: {answer[:600]!r}"

    if answer.startswith(b"HTTP/1.1 200 ") and len(statuses) == 1:
        if mode == 2:
            check_encode(rest, body_of(answer))
        elif b"/api/token?" in request.split(b"\n", 1)[0] and not request.startswith(b"HEAD"):
            check_token(body_of(answer))

    # The server still serves.
    answer, _ = exchange(b"GET /api/tokenizers HTTP/1.1\r\n" + HOST + b"\r\n")
    assert answer.startswith(b"HTTP/1.1 200 "), f"after that, /api/tokenizers: {answer[:300]!r}"


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
