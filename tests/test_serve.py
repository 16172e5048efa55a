"""``tokenmill serve``: the JSON API checked against the library, and the page driven end to
end in headless Chromium.

Oracles: ``Tokenizer.encode`` / ``encode_ordinary`` / ``decode_with_offsets`` /
``decode_single_token_bytes`` for what the API and the page show (the library itself is checked
against tiktoken in test_tiktoken_oracle.py); the training log (``Tokenizer.merges``) for merge
parents; a brute-force re-run of tiktoken's merge rule, written here, for parents derived from
ranks. Each server runs in a thread on a free port (port 0).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cli_runner import run_tokenmill
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill.errors import PlaygroundRequestError
from tokenmill.serve.api import Playground
from tokenmill.serve.server import PlaygroundServer, warn_if_exposed
from tokenmill.sources import bundled_corpus

STATIC = Path(tokenmill.__file__).parent / "serve" / "static"
TEXT = "Hello world! naïve café Привет 日本語 🙂 1234567\n\tdef f(x):  return x\n"
MARKERS = {"·": " ", "→": "", "↵": "", "␍": "\r"}


def artifacts() -> Path:
    d = Path(os.environ.get("TOKENMILL_ARTIFACTS") or Path(__file__).parent / "artifacts")
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def trained():
    """A small tokenizer trained in the test, with a special token."""
    text = bundled_corpus("shakespeare")[:300_000]
    return tokenmill.train(text, 700, pattern="gpt2", special_tokens=["<|endoftext|>"])


@pytest.fixture(scope="module")
def toks(trained):
    return {
        "gpt2": tokenmill.load("gpt2"),
        "cl100k_base": tokenmill.load("cl100k_base"),
        "tiny": trained,
    }


@pytest.fixture(scope="module")
def playground(toks):
    return Playground(toks)


def start(playground, **kw):
    server = PlaygroundServer(playground, port=0, **kw)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def server(playground):
    server = start(playground)
    yield server
    server.shutdown()
    server.server_close()


def call(server, path, body=None, *, headers=None, raw=None):
    """(status, parsed JSON) of a request; errors are answers too."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    hdrs = {"Content-Type": "application/json"} if data is not None else {}
    hdrs.update(headers or {})
    req = urllib.request.Request(server.url + path.lstrip("/"), data=data, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


# ------------------------------------------------------------------------------------ API


def test_tokenizers_endpoint(server, toks):
    status, body = call(server, "/api/tokenizers")
    assert status == 200
    assert [t["name"] for t in body["tokenizers"]] == list(toks)
    for t in body["tokenizers"]:
        tok = toks[t["name"]]
        assert t["n_vocab"] == tok.n_vocab
        assert t["special_tokens"] == tok.special_tokens
        assert t["pattern"] == (tok.pattern_name or tok.pattern)
        assert t["merges_known"] == (t["name"] == "tiny")
    assert body["max_body"] == server.max_body


def check_result(r, tok, text, ids):
    """One tokenizer's answer against the library."""
    assert r["ids"] == ids
    assert r["count"] == len(ids)
    pieces = [tok.decode_single_token_bytes(t) for t in ids]
    data = text.encode()
    offs = r["byte_offsets"]
    assert len(offs) == len(ids) + 1 and offs[0] == 0 and offs[-1] == len(data)
    assert [data[a:b] for a, b in itertools.pairwise(offs)] == pieces
    assert r["char_offsets"][:-1] == tok.decode_with_offsets(ids)[1]
    assert r["char_offsets"][-1] == len(text)
    whole = []
    for p in pieces:
        try:
            whole.append(p.decode("utf-8"))
        except UnicodeDecodeError:
            whole.append(None)
    assert r["partial"] == [i for i, w in enumerate(whole) if w is None]
    for i, (w, shown) in enumerate(zip(whole, r["texts"], strict=True)):
        if w is not None:
            assert shown == w
        else:  # bytes shown escaped, never raw: \xNN for each byte that is not a character
            assert shown == pieces[i].decode("utf-8", "backslashreplace")
            assert "\\x" in shown
    if ids:
        assert r["chars_per_token"] == round(len(text) / len(ids), 3)
        assert r["bytes_per_token"] == round(len(data) / len(ids), 3)


def test_encode_endpoint_matches_the_library(server, toks):
    status, body = call(server, "/api/encode", {"text": TEXT})
    assert status == 200
    assert body["chars"] == len(TEXT) and body["bytes"] == len(TEXT.encode())
    assert [r["tokenizer"] for r in body["results"]] == list(toks)
    for r in body["results"]:
        tok = toks[r["tokenizer"]]
        check_result(r, tok, TEXT, tok.encode(TEXT))
    # gpt2 cuts Cyrillic, CJK and the emoji inside characters: those tokens are partial.
    assert body["results"][0]["partial"]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=60))
def test_encode_answers_any_text(playground, toks, text):
    body = playground.encode({"text": text, "tokenizers": ["gpt2", "tiny"], "special": "plain"})
    for r in body["results"]:
        tok = toks[r["tokenizer"]]
        check_result(r, tok, text, tok.encode_ordinary(text))


def test_encode_endpoint_on_every_language(playground, toks, shared_data):
    """Extended: 10,000 characters of each language and the emoji list, every offset and
    partial token checked (gpt2 cuts most scripts inside characters)."""
    files = sorted((shared_data / "multilingual").glob("*.txt"))
    assert len(files) >= 20
    for path in files:
        text = path.read_text("utf-8")[:10_000]
        body = playground.encode({"text": text, "special": "plain"})
        for r in body["results"]:
            tok = toks[r["tokenizer"]]
            check_result(r, tok, text, tok.encode_ordinary(text))


def test_special_token_modes(server, toks):
    text = "a<|endoftext|>b"
    status, body = call(server, "/api/encode", {"text": text, "tokenizers": ["tiny"]})
    assert status == 400
    assert "'<|endoftext|>'" in body["error"] and '"special": "allow"' in body["error"]
    tiny = toks["tiny"]
    _, body = call(
        server, "/api/encode", {"text": text, "tokenizers": ["tiny"], "special": "allow"}
    )
    r = body["results"][0]
    assert r["ids"] == tiny.encode(text, allowed_special="all")
    assert [r["ids"][i] for i in r["special"]] == [tiny.eot_token]
    assert r["texts"][r["special"][0]] == "<|endoftext|>"
    _, body = call(server, "/api/encode", {"text": text, "special": "plain"})
    for r in body["results"]:
        assert r["ids"] == toks[r["tokenizer"]].encode_ordinary(text) and r["special"] == []


def rank_rule_parents(tok, token_id):
    """tiktoken's merge rule, brute force: merge the token's bytes lowest rank first, using
    only ranks below its own; if two parts remain, they are the parents."""
    ranks = tok.mergeable_ranks
    parts = [bytes([b]) for b in tok.decode_single_token_bytes(token_id)]
    while len(parts) > 2:
        rank, i = min(
            (ranks.get(parts[i] + parts[i + 1], 1 << 30), i) for i in range(len(parts) - 1)
        )
        if rank >= token_id:
            break
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    if len(parts) != 2 or ranks.get(parts[0] + parts[1]) != token_id:
        return None
    return ranks[parts[0]], ranks[parts[1]]


def test_parents_of_trained_tokens_are_the_training_merges(playground, trained):
    merges = trained.merges
    assert merges
    for k, m in enumerate(merges):
        assert playground.parents("tiny", 256 + k) == (m.left, m.right, m.count)
    # The same vocabulary without its training log: parents derived by the rank rule agree.
    bare = tokenmill.Tokenizer(trained.mergeable_ranks, trained.pattern, name="bare")
    assert bare.merges is None
    derived = Playground({"bare": bare})
    for k, m in enumerate(merges):
        assert derived.parents("bare", 256 + k) == (m.left, m.right, None)
    assert derived.parents("bare", 65) is None


def test_token_endpoint_for_gpt2_follows_the_rank_rule(server, toks):
    gpt2 = toks["gpt2"]
    for token_id in [*range(256, 50256, 997), 995, 50255]:
        status, info = call(server, f"/api/token?tokenizer=gpt2&id={token_id}")
        assert status == 200
        data = gpt2.decode_single_token_bytes(token_id)
        assert info["hex"] == data.hex(" ") and info["length"] == len(data)
        expected = rank_rule_parents(gpt2, token_id)
        if expected is None:
            assert info["parents"] == []
            continue
        top = info["parents"][0]
        assert (top["id"], top["left"], top["right"]) == (token_id, *expected)
        assert top["source"] == "rank rule" and top["count"] is None
        for m in info["parents"]:  # every step of the lineage is a real merge
            left = gpt2.decode_single_token_bytes(m["left"])
            right = gpt2.decode_single_token_bytes(m["right"])
            assert left + right == gpt2.decode_single_token_bytes(m["id"])
            assert max(m["left"], m["right"]) < m["id"]


def test_token_endpoint_for_trained_and_special_tokens(server, trained):
    m = trained.merges[-1]
    last = 255 + len(trained.merges)
    _, info = call(server, f"/api/token?tokenizer=tiny&id={last}")
    top = info["parents"][0]
    assert (top["left"], top["right"], top["count"]) == (m.left, m.right, m.count)
    assert top["source"] == "training"
    _, info = call(server, f"/api/token?tokenizer=tiny&id={trained.eot_token}")
    assert info["special"] and info["text"] == "<|endoftext|>" and info["parents"] == []
    _, info = call(server, "/api/token?tokenizer=tiny&id=10")
    assert info["text"] == "\n" and info["parents"] == []


@pytest.mark.parametrize(
    ("path", "body", "status", "words"),
    [
        ("/api/encode", b"{not json", 400, "not JSON"),
        ("/api/encode", b"[1, 2]", 400, "JSON object"),
        ("/api/encode", b'{"text": 5}', 400, '"text" must be a string'),
        ("/api/encode", b"\xff\xfe", 400, "not JSON"),
        ("/api/encode", b"[" * 100_000, 400, "nest too deeply"),
        ("/api/encode", b'{"text": "a", "x": ' * 100_000, 400, "nest too deeply"),
        ("/api/encode", b'{"text": "a", "tokenizers": ["nope"]}', 404, "unknown tokenizer 'nope'"),
        ("/api/encode", b'{"text": "a", "tokenizers": "gpt2"}', 400, "list of tokenizer names"),
        ("/api/encode", b'{"text": "a", "special": "yes"}', 400, "error, allow, plain"),
        ("/api/elsewhere", b"{}", 404, "no POST endpoint"),
        ("/api/token?tokenizer=gpt2&id=50257", None, 404, "0..50256"),
        ("/api/token?tokenizer=gpt2&id=-1", None, 404, "0..50256"),
        ("/api/token?tokenizer=gpt2&id=x", None, 400, "integer"),
        ("/api/token?tokenizer=gpt2", None, 400, "?tokenizer=NAME&id=ID"),
        ("/api/token?tokenizer=nope&id=1", None, 404, "unknown tokenizer"),
        ("/api/nothing", None, 404, "no API endpoint"),
        ("/etc/passwd", None, 404, "no page"),
    ],
)
def test_bad_requests_get_json_errors(server, path, body, status, words):
    got, answer = call(server, path, raw=body)
    assert got == status and answer["status"] == status
    assert words in answer["error"]


def test_wrong_content_type_is_refused(server):
    got, answer = call(
        server, "/api/encode", raw=b'{"text": "a"}', headers={"Content-Type": "text/plain"}
    )
    assert got == 415 and "application/json" in answer["error"]


def read_until_closed(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


def raw_request(server, request: bytes) -> bytes:
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(request)
        return read_until_closed(s)


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", "/api/encode", "POST"),
        ("HEAD", "/api/encode", "POST"),
        ("POST", "/api/tokenizers", "GET, HEAD"),
        ("POST", "/api/token", "GET, HEAD"),
        ("POST", "/", "GET, HEAD"),
    ],
)
def test_a_path_asked_with_the_wrong_method_gets_405(server, method, path, allow):
    data = b'{"text": "a"}' if method == "POST" else None
    req = urllib.request.Request(
        server.url + path.lstrip("/"),
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=30)
    assert err.value.code == 405 and err.value.headers["Allow"] == allow
    if method != "HEAD":
        answer = json.load(err.value)
        assert answer["status"] == 405 and f"{path} takes {allow}, not {method}" in answer["error"]


def test_a_body_cut_short_gets_400(server):
    """The client stops writing before the Content-Length is reached: the part that came is
    no request, even when it parses (here it is a whole JSON object)."""
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(
            b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"text": "a"}'
        )
        s.shutdown(socket.SHUT_WR)
        out = read_until_closed(s)
    assert out.startswith(b"HTTP/1.1 400 "), out[:100]
    assert b"ended after 13 of the 100 bytes" in out


def test_oversized_body_gets_413_without_being_read(playground):
    server = start(playground, max_body=1000)
    try:
        got, answer = call(server, "/api/encode", {"text": "x" * 2000})
        assert got == 413 and "at most 1,000" in answer["error"]
        # Headers promise 50 MB that never come: the answer arrives anyway, and the
        # connection is closed (recv returns), so the body was never waited for.
        out = raw_request(
            server,
            b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 50000000\r\n\r\n",
        )
        assert out.startswith(b"HTTP/1.1 413 ")
        out = raw_request(
            server,
            b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        )
        assert out.startswith(b"HTTP/1.1 411 ")
        got, _ = call(server, "/api/encode", {"text": "x" * 900, "tokenizers": ["gpt2"]})
        assert got == 200
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("host", "ok"),
    [
        ("127.0.0.1", True),
        ("localhost:8000", True),
        ("[::1]:80", True),
        ("10.1.2.3:8000", True),
        ("attacker.example", False),
        ("attacker.example:8000", False),
        ("localhost.attacker.example", False),
        ("", False),
        ("LOCALHOST:8000", True),
        ("app.localhost:8000", True),
        ("[::ffff:127.0.0.1]:8000", True),
        # Only exactly host[:port] passes: no part of a longer value is read as the host.
        ("localhost:80@attacker.example", False),
        ("127.0.0.1:80@attacker.example", False),
        ("attacker.example:80@127.0.0.1", False),
        ("localhost:http", False),
        ("localhost:", False),
        ("localhost:99999", False),
        ("localhost:80:80", False),
        ("localhost attacker.example", False),
        ("localhost.:8000", False),
        ("::1", False),
        ("[::1", False),
        ("[::1]attacker.example", False),
        ("[fe80::1%25attacker.example]:80", False),
    ],
)
def test_host_header_guards_against_dns_rebinding(server, host, ok):
    host_line = f"Host: {host}\r\n" if host else ""
    out = raw_request(
        server, f"GET /api/tokenizers HTTP/1.1\r\n{host_line}Connection: close\r\n\r\n".encode()
    )
    assert out.startswith(b"HTTP/1.1 200 " if ok else b"HTTP/1.1 421 "), out[:100]


def test_two_host_headers_are_refused(server):
    out = raw_request(
        server,
        b"GET /api/tokenizers HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n"
        b"Connection: close\r\n\r\n",
    )
    assert out.startswith(b"HTTP/1.1 421 "), out[:100]
    assert b"2 Host headers" in out


def test_allowed_host_names(playground):
    server = start(playground, allowed_hosts=frozenset({"box.lan"}))
    try:
        assert call(server, "/api/tokenizers", headers={"Host": "box.lan:1"})[0] == 200
        assert call(server, "/api/tokenizers", headers={"Host": "other.lan:1"})[0] == 421
    finally:
        server.shutdown()
        server.server_close()


def test_page_is_served_with_security_headers(server):
    for path, ctype in [("", "text/html"), ("app.js", "text/javascript"), ("app.css", "text/css")]:
        with urllib.request.urlopen(server.url + path) as r:
            assert r.headers["Content-Type"].startswith(ctype)
            csp = r.headers["Content-Security-Policy"]
            assert "script-src 'self'" in csp and "default-src 'none'" in csp
            assert "unsafe-inline" not in csp
            assert r.headers["X-Content-Type-Options"] == "nosniff"
            assert r.read() == (STATIC / (path or "index.html")).read_bytes()


def test_static_files_make_no_outside_requests_and_never_use_inner_html():
    files = {
        p.name: p.read_text("utf-8") for p in STATIC.iterdir() if p.is_file() and p.suffix != ".py"
    }
    assert {"index.html", "app.js", "app.css"} <= set(files)
    for name, text in files.items():
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), name
        assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write", text), name
    html = files["index.html"]
    assert not re.search(r"<script(?![^>]*\bsrc=)", html), "inline script in index.html"
    assert "style=" not in html and "<style" not in html, "inline style in index.html"


def test_warning_when_not_loopback(capsys):
    warn_if_exposed("127.0.0.1", sys.stderr)
    assert capsys.readouterr().err == ""
    warn_if_exposed("0.0.0.0", sys.stderr)
    assert "other machines" in capsys.readouterr().err


def test_playground_needs_tokenizers():
    with pytest.raises(ValueError, match="at least one tokenizer"):
        Playground({})
    pg = Playground({"gpt2": tokenmill.load("gpt2")})
    with pytest.raises(PlaygroundRequestError, match=r"its ids are 0\.\.50256") as err:
        pg.token("gpt2", 10**6)
    assert err.value.status == 404 and isinstance(err.value, ValueError)
    with pytest.raises(ValueError, match='"text" must be a string'):
        pg.encode({"text": b"bytes"})


# ------------------------------------------------------------------- many and slow clients

ENCODE_BODY = b'{"text": "a", "tokenizers": ["gpt2"]}'
ENCODE = (
    b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(ENCODE_BODY), ENCODE_BODY)
)
# A request whose body stops after 4 of the 100,000 bytes it announces.
STALLED = (
    b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100000\r\n\r\n[1,2"
)


def listen_queue_limit() -> int:
    """The longest listen queue this system grants (the kernel caps every backlog to it)."""
    try:
        return min(socket.SOMAXCONN, int(Path("/proc/sys/net/core/somaxconn").read_text()))
    except OSError:
        return socket.SOMAXCONN


def test_a_burst_of_connections_waits_in_the_listen_queue(playground):
    """200 clients connect at once while the server accepts none of them (as when its accept
    loop is behind): the listen queue holds every one, and each gets its answer. A queue of 5
    would hold 6 of them and leave the rest hanging."""
    n = min(200, listen_queue_limit())
    server = PlaygroundServer(playground, port=0)  # bound and listening; not accepting yet
    serving = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    clients = []
    try:
        for _ in range(n):
            # The kernel completes the handshake when the queue has room; else the
            # connection hangs until the timeout.
            clients.append(socket.create_connection(server.server_address[:2], timeout=5))
        for c in clients:
            c.sendall(ENCODE)
        serving.start()
        for c in clients:
            c.settimeout(30)
            out = read_until_closed(c)
            assert out.startswith(b"HTTP/1.1 200 "), out[:100]
    finally:
        for c in clients:
            c.close()
        if serving.is_alive():  # shutdown() waits for a serve_forever that never started
            server.shutdown()
        server.server_close()


def test_a_stalled_client_is_dropped_and_its_thread_freed(playground):
    """A body that stops arriving gets 408 once read_timeout passes with nothing received,
    and a connection that sends nothing is closed; their threads end, so later requests are
    served even though every thread was taken."""
    server = start(playground)
    server.read_timeout = 0.3
    server.max_handlers = 2
    stalled = []
    try:
        for _ in range(3):  # one more than max_handlers: it is served once a thread ends
            s = socket.create_connection(server.server_address[:2], timeout=10)
            s.sendall(STALLED)
            stalled.append(s)
        silent = socket.create_connection(server.server_address[:2], timeout=10)
        stalled.append(silent)
        for s in stalled[:3]:
            out = read_until_closed(s)
            assert out.startswith(b"HTTP/1.1 408 "), out[:100]
            assert b"before the 100,000 bytes its Content-Length promises" in out
        assert read_until_closed(silent) == b""
        # The request below gets the usual timeout: on a busy machine urllib can pause
        # longer than 0.3 s between the writes of one request.
        server.read_timeout = 10
        got, answer = call(server, "/api/encode", {"text": "a", "tokenizers": ["gpt2"]})
        assert got == 200 and answer["results"][0]["ids"] == [64]
    finally:
        for s in stalled:
            s.close()
        server.shutdown()
        server.server_close()


def test_connections_beyond_max_handlers_wait_for_a_thread(playground):
    """At most max_handlers connections are served at once: the next waits in the listen
    queue, without a thread, until one ends. shutdown() does not wait for that."""
    server = start(playground)
    server.read_timeout = None  # the stalled clients below hold their threads until closed
    server.max_handlers = 2
    clients = []
    stopping = threading.Thread(target=server.shutdown, daemon=True)

    def connect(request):
        c = socket.create_connection(server.server_address[:2], timeout=10)
        c.sendall(request)
        clients.append(c)
        return c

    try:
        first = connect(STALLED)
        connect(STALLED)
        waiting = connect(ENCODE)
        waiting.settimeout(0.5)
        with pytest.raises(TimeoutError):  # no thread for it while both are taken
            waiting.recv(1)
        first.close()  # its thread ends, and the waiting request gets it
        waiting.settimeout(30)
        assert read_until_closed(waiting).startswith(b"HTTP/1.1 200 ")
        connect(STALLED)  # both threads taken again
        queued = connect(ENCODE)
        queued.settimeout(0.5)
        with pytest.raises(TimeoutError):  # meanwhile the accept loop waits for a thread
            queued.recv(1)
        stopping.start()
        stopping.join(10)
        assert not stopping.is_alive(), "shutdown() waited for a stalled client"
    finally:
        for c in clients:  # ends the stalled clients' threads, and so a shutdown waiting
            c.close()
        if stopping.ident is None:
            server.shutdown()
        else:
            stopping.join(30)
        server.server_close()


# ------------------------------------------------------------------------------ the page


def open_page(page, server):
    page.goto(server.url)
    page.wait_for_selector("body[data-ready]")


def wait_rendered(page, text):
    """Until the page shows ``text`` and no newer request is in flight."""
    page.wait_for_function(
        "n => { const p = document.querySelector('#panels');"
        " return p.dataset.chars === String(n) && !('busy' in p.dataset); }",
        arg=len(text),
    )


def type_text(page, text):
    """Type ``text`` into the input and wait until every panel shows it."""
    page.fill("#input", text)
    wait_rendered(page, text)


def panel_tokens(page, name):
    """Each coloured token span of a panel: (id, shown text)."""
    return page.eval_on_selector_all(
        f'#panels .panel[data-tokenizer="{name}"] .tokens .tok',
        "spans => spans.map(s => [Number(s.dataset.id), s.textContent])",
    )


def unmark(shown: str) -> str:
    for mark, real in MARKERS.items():
        shown = shown.replace(mark, real)
    return shown


def set_tokenizers(page, names):
    for box in page.query_selector_all("#choose input"):
        want = box.get_attribute("value") in names
        if box.is_checked() != want:
            box.click()


def panel_names(page):
    return page.eval_on_selector_all(".panel", "ps => ps.map(p => p.dataset.tokenizer)")


def test_typing_shows_the_right_tokens_for_gpt2_and_a_trained_tokenizer(page, server, toks):
    open_page(page, server)
    wait_rendered(page, page.input_value("#input"))  # the sample text, on load
    set_tokenizers(page, ["gpt2", "tiny"])
    page.fill("#input", "")
    typed = "The tokenizer's   merges\tand 1234 spaces.\nThat's all"
    # Keystroke by keystroke: many requests, stale ones cancelled; the last one is shown.
    page.locator("#input").press_sequentially(typed, delay=5)
    wait_rendered(page, typed)
    assert panel_names(page) == ["gpt2", "tiny"]
    for name in ["gpt2", "tiny"]:
        shown = panel_tokens(page, name)
        ids = toks[name].encode(typed)
        assert [i for i, _ in shown] == ids
        assert len(shown) == len(ids)
        assert [unmark(s) for _, s in shown] == [
            toks[name].decode_single_token_bytes(i).decode() for i in ids
        ]
        count = page.text_content(f'.panel[data-tokenizer="{name}"] .count')
        assert count == str(len(ids))
        cpt = page.text_content(f'.panel[data-tokenizer="{name}"] .cpt')
        assert float(cpt) == pytest.approx(len(typed) / len(ids), abs=0.006)
    # whitespace is visible
    gpt2_text = "".join(s for _, s in panel_tokens(page, "gpt2"))
    assert "·merges" in gpt2_text and "→" in gpt2_text and "↵" in gpt2_text


def test_unicode_and_partial_tokens_on_the_page(page, server, toks):
    open_page(page, server)
    type_text(page, TEXT)
    for name in ["gpt2", "cl100k_base", "tiny"]:
        ids = toks[name].encode(TEXT)
        assert [i for i, _ in panel_tokens(page, name)] == ids
        n_partial = page.locator(f'.panel[data-tokenizer="{name}"] .tok.partial').count()
        assert n_partial == sum(
            1 for i in ids if not _utf8(toks[name].decode_single_token_bytes(i))
        )


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_switching_and_comparing_tokenizers(page, server, toks):
    open_page(page, server)
    page.fill("#input", TEXT)
    set_tokenizers(page, ["tiny"])
    page.wait_for_function("() => document.querySelectorAll('.panel').length === 1")
    wait_rendered(page, TEXT)
    assert panel_names(page) == ["tiny"]
    assert [i for i, _ in panel_tokens(page, "tiny")] == toks["tiny"].encode(TEXT)
    set_tokenizers(page, ["gpt2", "cl100k_base", "tiny"])
    page.wait_for_function("() => document.querySelectorAll('.panel').length === 3")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.panel')].every(p => p.querySelector('.tok'))"
    )
    assert panel_names(page) == ["gpt2", "cl100k_base", "tiny"]
    for name in panel_names(page):
        assert [i for i, _ in panel_tokens(page, name)] == toks[name].encode(TEXT)
    boxes = [
        page.locator(f'.panel[data-tokenizer="{n}"]').bounding_box() for n in panel_names(page)
    ]
    assert len({round(b["y"]) for b in boxes}) == 1, "panels are side by side"
    assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
    set_tokenizers(page, [])
    page.wait_for_function("() => document.querySelectorAll('.panel').length === 0")
    assert "choose a tokenizer" in page.text_content("#status")


def test_script_tags_are_shown_as_text(page, server, toks):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_page(page, server)
    evil = '<script>alert(1)</script><img src=x onerror="alert(2)"><b>bold</b>'
    type_text(page, evil)
    page.wait_for_timeout(200)
    assert dialogs == []
    for name in panel_names(page):
        shown = panel_tokens(page, name)
        assert [i for i, _ in shown] == toks[name].encode(evil)
        assert "".join(unmark(s) for _, s in shown) == evil
    # the token views hold token spans and text, nothing else
    assert page.locator("#panels .tokens *:not(span.tok, div.chunk)").count() == 0
    assert page.locator("#panels .tokens .tok *").count() == 0
    # hovering a token puts its text in the inspector, as text too
    page.hover('.panel[data-tokenizer="gpt2"] .tok >> nth=0')
    page.wait_for_selector("#token-info .big")
    assert page.locator("#token-info script, #token-info img").count() == 0
    assert page.text_content("#token-info .big") == "<"


def test_special_tokens_on_the_page(page, server, toks):
    open_page(page, server)
    set_tokenizers(page, ["tiny"])
    text = "end<|endoftext|>start"
    type_text(page, text)
    tiny = toks["tiny"]
    assert [i for i, _ in panel_tokens(page, "tiny")] == tiny.encode_ordinary(text)  # as text
    page.select_option("#special", "allow")
    page.wait_for_selector("#panels .tok.special")
    assert [i for i, _ in panel_tokens(page, "tiny")] == tiny.encode(text, allowed_special="all")
    assert page.text_content("#panels .tok.special") == "<|endoftext|>"
    page.select_option("#special", "error")
    page.wait_for_selector(".panel .error")
    assert "special token '<|endoftext|>'" in page.text_content(".panel .error")


def test_text_over_the_limit_is_not_sent(page, playground, toks):
    server = start(playground, max_body=2000)
    try:
        open_page(page, server)
        text = "word " * 500
        type_text(page, text)
        assert "too long" in page.text_content("#status")
        assert page.locator("#panels .tok").count() == 0
        short = "word " * 100  # back under the limit
        type_text(page, short)
        ids = [i for i, _ in panel_tokens(page, "gpt2")]
        assert ids == toks["gpt2"].encode(short)
    finally:
        server.shutdown()
        server.server_close()


def test_show_ids_toggle(page, server, toks):
    open_page(page, server)
    type_text(page, "hello world")
    first = '.panel[data-tokenizer="gpt2"] .tok >> nth=0'
    after = "s => getComputedStyle(s, '::after').content"
    assert page.locator(first).evaluate(after) in ("none", "normal")
    page.check("#show-ids")
    assert page.locator(first).evaluate(after) == '"31373"'
    page.hover(first)  # the id shows on hover, as a tooltip
    assert page.locator(first).get_attribute("title") == "id 31373"
    page.uncheck("#show-ids")
    assert page.locator(first).evaluate(after) in ("none", "normal")


def test_inspector_explains_the_token_under_the_cursor(page, server, trained):
    open_page(page, server)
    set_tokenizers(page, ["tiny"])
    text = "the thing there"
    type_text(page, text)
    ids = trained.encode(text)
    target = max(ids)  # the latest merge among them: it has parents
    index = ids.index(target)
    page.hover(f'.panel[data-tokenizer="tiny"] .tok >> nth={index}')
    page.wait_for_function(
        "id => document.querySelector('#token-info dd')?.textContent === String(id)", arg=target
    )
    m = trained.merges[target - 256]
    info = page.text_content("#token-info")
    assert f"{target} = " in info and f"seen {m.count:,}×" in info
    assert "merges learned in training" in info
    data = trained.decode_single_token_bytes(target)
    assert data.hex(" ") in info
    # a parent is a button: clicking it explains the parent
    page.click("#token-info .merge >> nth=0 >> button >> nth=0")
    page.wait_for_function(
        "id => document.querySelector('#token-info dd')?.textContent === String(id)", arg=m.left
    )
    # the text cursor selects a token too: the one holding the character before the caret
    starts = trained.decode_with_offsets(ids)[1]
    for caret in (6, 9, 12):
        page.click("#input")
        page.evaluate("c => document.querySelector('#input').setSelectionRange(c, c)", caret - 1)
        page.keyboard.press("ArrowRight")
        expected = max(i for i, s in enumerate(starts) if s <= caret - 1)
        page.wait_for_function(
            "id => document.querySelector('#token-info dd')?.textContent === String(id)",
            arg=ids[expected],
        )
        caret_index = page.eval_on_selector(
            '.panel[data-tokenizer="tiny"]',
            "p => [...p.querySelectorAll('.tok')].findIndex(s => s.classList.contains('caret'))",
        )
        assert caret_index == expected


def test_the_inspector_shows_the_token_asked_for_last(page, server, trained):
    """Answers about tokens can come back out of order (a click in the text asks about one
    token, the arrow key after it about another already known): a late answer about the first
    must not replace the second. Once, the stale answer made the caret test above time out."""
    open_page(page, server)
    set_tokenizers(page, ["tiny"])
    text = "the thing there"
    type_text(page, text)
    ids = trained.encode(text)
    first = 0
    second = next(i for i, t in enumerate(ids) if t != ids[first])
    held = []
    page.route(lambda url: url.endswith(f"id={ids[first]}"), lambda route: held.append(route))
    page.hover(f'.panel[data-tokenizer="tiny"] .tok >> nth={first}')
    while not held:  # the request about the first token, held back
        page.wait_for_timeout(10)
    page.hover(f'.panel[data-tokenizer="tiny"] .tok >> nth={second}')
    shown = "id => document.querySelector('#token-info dd')?.textContent === String(id)"
    page.wait_for_function(shown, arg=ids[second])
    with page.expect_response(lambda r: r.url.endswith(f"id={ids[first]}")):
        held[0].continue_()
    page.wait_for_timeout(100)  # the late answer has been handled
    assert page.text_content("#token-info dd") == str(ids[second])


def test_a_100kb_paste_is_drawn_whole(page, server, toks):
    text = bundled_corpus("holmes")[:100_000]
    open_page(page, server)
    set_tokenizers(page, ["gpt2", "cl100k_base"])
    page.evaluate(
        "t => { const i = document.querySelector('#input'); i.value = t;"
        " i.dispatchEvent(new Event('input')); }",
        text,
    )
    wait_rendered(page, text)
    for name in ["gpt2", "cl100k_base"]:
        n = page.locator(f'.panel[data-tokenizer="{name}"] .tok').count()
        assert n == toks[name].count(text)
        assert page.text_content(f'.panel[data-tokenizer="{name}"] .note') == ""


def test_newer_text_replaces_a_paste_being_drawn(page, server, toks):
    """A long paste is drawn in slices; text typed meanwhile wins, with nothing stale left."""
    open_page(page, server)
    set_tokenizers(page, ["gpt2", "cl100k_base"])
    big = bundled_corpus("holmes")[:200_000]
    page.evaluate(
        "t => { const i = document.querySelector('#input'); i.value = t;"
        " i.dispatchEvent(new Event('input')); }",
        big,
    )
    # As soon as the first slice is on screen, replace the text and change an option, which
    # sends the new text at once (no typing debounce): it arrives while the paste is drawn.
    page.wait_for_function("() => document.querySelectorAll('#panels .tok').length > 3000")
    short = "Replaced while drawing."
    page.evaluate(
        "t => { document.querySelector('#input').value = t;"
        " const s = document.querySelector('#special'); s.value = 'allow';"
        " s.dispatchEvent(new Event('change')); }",
        short,
    )
    wait_rendered(page, short)
    page.wait_for_timeout(300)  # any stale slice would land by now
    for name in ["gpt2", "cl100k_base"]:
        assert [i for i, _ in panel_tokens(page, name)] == toks[name].encode(short)


def test_concurrent_requests_get_their_own_answers(server, toks):
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"request {i}: " + "naïve café 🙂 " * (i % 7) + str(i) * i for i in range(40)]

    def one(text):
        return text, call(server, "/api/encode", {"text": text, "tokenizers": ["gpt2", "tiny"]})

    with ThreadPoolExecutor(8) as pool:
        for text, (status, body) in pool.map(one, texts):
            assert status == 200
            for r in body["results"]:
                assert r["ids"] == toks[r["tokenizer"]].encode(text)


def test_screenshot(page, server):
    open_page(page, server)
    page.wait_for_selector("#panels[data-seq] .tok")
    page.hover('.panel[data-tokenizer="gpt2"] .tok >> nth=2')
    page.wait_for_selector("#token-info .merge")
    path = artifacts() / "playground.png"
    bottom = page.evaluate(
        "() => Math.max(...['#panels', '#inspector'].map("
        "s => document.querySelector(s).getBoundingClientRect().bottom))"
    )
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": 1280, "height": bottom + 16})
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -------------------------------------------------------------------------------- the CLI


def run_cli(*args, timeout=120):
    return run_tokenmill(*args, timeout=timeout)


def test_cli_help():
    r = run_cli("serve", "--help")
    assert r.returncode == 0
    for option in ["--port", "--host", "--open", "--max-body", "--allow-host", "TOKENIZER"]:
        assert option in r.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["nope"], "unknown tokenizer 'nope'"),
        (["--port", "70000"], "--port must be 0..65535"),
        (["--max-body", "lots"], "not a size"),
        (["gpt2", "gpt2"], "given twice"),
    ],
)
def test_cli_user_errors(args, words):
    r = run_cli("serve", *args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokenmill: error: "), r.stderr
    assert words in lines[0]


def test_cli_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = run_cli("serve", "gpt2", "--port", str(port))
    assert r.returncode == 2 and "--port 0" in r.stderr


def test_cli_serves_a_trained_tokenizer_file(tmp_path, trained):
    path = tmp_path / "tiny.tokenmill"
    trained.save(path)
    # --open hands the URL to the browser named by $BROWSER (the webbrowser module's rule):
    # here a shell command that writes it to a file.
    opened = tmp_path / "opened.txt"
    browser = f"sh -c 'echo \"$0\" > {opened}' %s"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tokenmill", "serve", "gpt2", str(path), "--port", "0", "--open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # faulthandler: SIGABRT makes Python print every thread's stack (see below).
        env={**os.environ, "BROWSER": browser, "PYTHONFAULTHANDLER": "1"},
        # A shell without job control starts background commands with SIGINT ignored, and
        # the ignore passes to children: a suite run that way made the server deaf to the
        # SIGINT below (Python installs no KeyboardInterrupt handler then). Ctrl-C at a
        # terminal is what this stands for, so the child gets SIGINT's default back.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        with urllib.request.urlopen(url.group(0) + "api/tokenizers") as r:
            names = [t["name"] for t in json.load(r)["tokenizers"]]
        assert names == ["gpt2", "tiny.tokenmill"]
        req = urllib.request.Request(
            url.group(0) + "api/encode",
            data=json.dumps({"text": TEXT, "tokenizers": ["tiny.tokenmill"]}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req) as r:
            assert json.load(r)["results"][0]["ids"] == trained.encode(TEXT)
        for _ in range(100):
            if opened.exists() and opened.read_text().strip():
                break
            time.sleep(0.1)
        assert opened.read_text().strip() == url.group(0)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            # Seen once in a full run and never alone: say where the server was stuck.
            proc.send_signal(signal.SIGABRT)
            _, err = proc.communicate(timeout=30)
            pytest.fail(f"tokenmill serve did not stop on SIGINT within 30 s; stderr:\n{err}")
    assert proc.returncode == 0, err
    assert "Traceback" not in err
