"""The playground's HTTP server: the standard library's ``ThreadingHTTPServer``, one page of
static files shipped in the package, and the JSON API of :mod:`tokenmill.serve.api`.

Safe by default for a server on a developer's machine:

- it binds 127.0.0.1 unless told otherwise;
- it answers only requests whose ``Host`` header is ``localhost``, an IP address, or a name
  allowed explicitly, so a web page on another site cannot reach it by DNS rebinding;
- a body over ``max_body`` bytes is refused with 413 before it is read, and the API only
  takes ``application/json`` (which a cross-site form cannot send without a CORS preflight,
  which this server never grants);
- the page runs under a Content-Security-Policy without inline script or style and with no
  request to any other origin, and puts user text into the DOM only as text.

>>> import json, threading, urllib.request, tokenmill
>>> server = PlaygroundServer(Playground({"gpt2": tokenmill.load("gpt2")}), port=0)
>>> threading.Thread(target=server.serve_forever, daemon=True).start()
>>> req = urllib.request.Request(server.url + "api/encode", data=b'{"text": "hi there"}',
...                              headers={"Content-Type": "application/json"})
>>> json.load(urllib.request.urlopen(req))["results"][0]["ids"]
[5303, 612]
>>> server.shutdown(); server.server_close()
"""

from __future__ import annotations

import ipaddress
import json
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tokenmill.errors import PlaygroundRequestError
from tokenmill.serve.api import DEFAULT_MAX_BODY, Playground

STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
}

# No inline script or style, nothing from another origin, no framing, no form posts.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server private to this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1")
    (True, True, True)
    >>> is_loopback("0.0.0.0"), is_loopback("192.168.1.5")
    (False, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(header: str | None, allowed_names: frozenset[str]) -> bool:
    """Whether a request's ``Host`` header may be answered.

    IP literals and ``localhost`` are safe from DNS rebinding (the attacker controls a
    *name*, never an address literal in the victim's address bar); other names only when
    allowed explicitly.

    >>> host_allowed("127.0.0.1:8000", frozenset()), host_allowed("localhost:8000", frozenset())
    (True, True)
    >>> host_allowed("[::1]:8000", frozenset()), host_allowed("evil.example:8000", frozenset())
    (True, False)
    >>> host_allowed("box.lan:8000", frozenset({"box.lan"})), host_allowed(None, frozenset())
    (True, False)
    """
    if not header:
        return False
    host = header.strip().lower()
    if host.startswith("["):  # [v6]:port
        name = host[1 : host.find("]")] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if name in ("localhost", *allowed_names) or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class PlaygroundServer(ThreadingHTTPServer):
    """A threading HTTP server holding a :class:`Playground` and its limits, bound to
    ``host:port`` (port 0: any free port; see ``.url``).

    Call ``serve_forever()`` (in a thread if need be) and ``shutdown()``. ``log`` is a text
    stream for one line per refused request (None: silent).
    """

    daemon_threads = True

    def __init__(
        self,
        playground: Playground,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_body: int = DEFAULT_MAX_BODY,
        allowed_hosts: frozenset[str] = frozenset(),
        log: Any = None,
    ) -> None:
        if ":" in host and not host.startswith("["):
            import socket

            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), _Handler)
        self.playground = playground
        self.max_body = max_body
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts) | {host.lower()}
        self.log = log

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The page aborts a request once newer text makes it stale, and a closed tab drops
        # its connections: writing the answer then fails, which is normal, not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        """The page's address, e.g. ``http://127.0.0.1:8000/``."""
        host, port = self.server_address[:2]
        if isinstance(host, bytes):
            host = host.decode()
        shown = f"[{host}]" if ":" in host else host
        if host in ("0.0.0.0", "::"):
            shown = "127.0.0.1" if host == "0.0.0.0" else "[::1]"
        return f"http://{shown}:{port}/"


def _static(name: str) -> bytes:
    return resources.files("tokenmill.serve.static").joinpath(name).read_bytes()


class _Handler(BaseHTTPRequestHandler):
    server: PlaygroundServer
    protocol_version = "HTTP/1.1"

    def version_string(self) -> str:
        return "tokenmill"

    # ------------------------------------------------------------------------------- plumbing

    def log_message(self, format: str, *args: Any) -> None:
        pass  # access logs off: the page sends a request per pause in typing

    def _send(self, status: int, body: bytes, content_type: str, *, close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in SECURITY_HEADERS.items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: Any, *, close: bool = False) -> None:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8", close=close)

    def _error(self, status: int, message: str, *, close: bool = False) -> None:
        if self.server.log is not None:
            print(
                f"tokenmill serve: {status} {self.command} {self.path[:200]}: {message}",
                file=self.server.log,
                flush=True,
            )
        self._json(status, {"error": message, "status": status}, close=close)

    def _checked(self) -> bool:
        if not host_allowed(self.headers.get("Host"), self.server.allowed_hosts):
            self._error(
                HTTPStatus.MISDIRECTED_REQUEST,
                f"Host {self.headers.get('Host')!r} is not this server's: open it as "
                "http://127.0.0.1:PORT/ or allow the name with --allow-host",
                close=True,
            )
            return False
        return True

    # -------------------------------------------------------------------------------- methods

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._checked():
            return
        url = urlsplit(self.path)
        pg = self.server.playground
        try:
            if url.path in STATIC:
                name, ctype = STATIC[url.path]
                self._send(HTTPStatus.OK, _static(name), ctype)
            elif url.path == "/api/tokenizers":
                self._json(HTTPStatus.OK, pg.describe() | {"max_body": self.server.max_body})
            elif url.path == "/api/token":
                q = parse_qs(url.query)
                name = q.get("tokenizer", [""])[0]
                raw_id = q.get("id", [""])[0]
                if not name or not raw_id:
                    raise PlaygroundRequestError(400, "give ?tokenizer=NAME&id=ID")
                try:
                    token_id = int(raw_id)
                except ValueError:
                    raise PlaygroundRequestError(
                        400, f"id must be an integer, not {raw_id!r}"
                    ) from None
                self._json(HTTPStatus.OK, pg.token(name, token_id))
            elif url.path.startswith("/api/"):
                raise PlaygroundRequestError(404, f"no API endpoint {url.path}")
            else:
                raise PlaygroundRequestError(404, f"no page {url.path}")
        except PlaygroundRequestError as e:
            self._error(e.status, e.message)

    def do_POST(self) -> None:
        if not self._checked():
            return
        url = urlsplit(self.path)
        if url.path != "/api/encode":
            self._error(HTTPStatus.NOT_FOUND, f"no POST endpoint {url.path}", close=True)
            return
        if self.headers.get("Transfer-Encoding"):
            self._error(
                HTTPStatus.LENGTH_REQUIRED, "send a Content-Length (no chunked bodies)", close=True
            )
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
            if length < 0:
                raise ValueError
        except ValueError:
            self._error(HTTPStatus.LENGTH_REQUIRED, "a Content-Length is required", close=True)
            return
        if length > self.server.max_body:
            # Not read: the connection is closed instead.
            self._error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"the body is {length:,} bytes; this server takes at most "
                f"{self.server.max_body:,} (tokenmill serve --max-body)",
                close=True,
            )
            return
        body = self.rfile.read(length)
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            self._error(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                "send the body as Content-Type: application/json",
            )
            return
        try:
            request = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            self._error(HTTPStatus.BAD_REQUEST, f"the body is not JSON: {e}")
            return
        try:
            self._json(HTTPStatus.OK, self.server.playground.encode(request))
        except PlaygroundRequestError as e:
            self._error(e.status, e.message)


def warn_if_exposed(host: str, stream: Any = sys.stderr) -> None:
    """Tell the user when ``host`` makes the playground reachable from other machines."""
    if not is_loopback(host):
        print(
            f"tokenmill serve: warning: listening on {host}: other machines on the network can "
            "reach this playground and make it encode text",
            file=stream,
            flush=True,
        )
