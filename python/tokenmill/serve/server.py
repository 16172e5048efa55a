"""The playground's HTTP server: the standard library's ``ThreadingHTTPServer``, one page of
static files shipped in the package, and the JSON API of :mod:`tokenmill.serve.api`.

Safe by default for a server on a developer's machine:

- it binds 127.0.0.1 unless told otherwise;
- it answers only requests whose ``Host`` header is exactly ``host[:port]`` with the host
  ``localhost``, an IP address, or a name allowed explicitly, so a web page on another site
  cannot reach it by DNS rebinding;
- a body over ``max_body`` bytes is refused with 413 before it is read, and the API only
  takes ``application/json`` (which a cross-site form cannot send without a CORS preflight,
  which this server never grants);
- a connection that sends nothing for ``read_timeout`` seconds is dropped, and at most
  ``max_handlers`` connections are served at once (the rest wait in the listen queue), so
  slow or stalled clients cannot hold threads and file descriptors without end;
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
import re
import socket
import sys
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tokenmill.errors import PlaygroundRequestError
from tokenmill.serve.api import DEFAULT_MAX_BODY, Playground

# Seconds a connection may send nothing (while its request is awaited or its body read) or
# accept nothing of an answer before it is dropped. Idle keep-alive connections end this way
# too; a browser opens a new one for its next request.
READ_TIMEOUT = 10.0

# Connections served at once, each on its own thread. Beyond this, new connections wait in
# the kernel's listen queue, which holds them without a thread or a file descriptor of this
# process. A browser opens at most 6 connections to a host, so 64 serves several tabs; the
# bound keeps clients that hold connections open from exhausting threads and descriptors.
MAX_HANDLERS = 64

STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
    "/favicon.svg": ("favicon.svg", "image/svg+xml"),
}
# The API's paths and the methods each takes: another method gets 405 and an Allow header.
API_METHODS = {
    "/api/tokenizers": "GET, HEAD",
    "/api/token": "GET, HEAD",
    "/api/encode": "POST",
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


# A DNS name: dot-separated labels of letters, digits and inner hyphens (lowercase here, as
# the Host value is lowercased first).
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_NAME = re.compile(rf"(?:{_LABEL}\.)*{_LABEL}")
# A Host value: a bracketed IPv6 literal or a name or IPv4 address, then an optional port.
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[^:\[\]]+))(?::(?P<port>[0-9]{1,5}))?")


def host_of(header: str) -> str | None:
    """The host a ``Host`` header names, lowercased, or None when the header is not exactly
    ``host[:port]``: a DNS name, an IPv4 address or a bracketed IPv6 address, and digits
    for the port.

    Anything looser lets a name pass for an allowed one: ``localhost:80@evil.example`` is
    no ``host:port``, and a check that reads ``localhost`` out of it lets in a page that
    reached this server by rebinding ``evil.example``.

    >>> host_of("LocalHost:8000"), host_of("[::1]:80"), host_of("10.0.0.1")
    ('localhost', '::1', '10.0.0.1')
    >>> [host_of(h) for h in ["localhost:80@evil.example", "localhost:x", "::1", "a..b"]]
    [None, None, None, None]
    """
    m = _HOST.fullmatch(header.strip(" \t").lower())
    if m is None or (m["port"] is not None and int(m["port"]) > 65535):
        return None
    if m["v6"] is not None:
        try:
            ipaddress.IPv6Address(m["v6"])
        except ValueError:
            return None
        return str(m["v6"])
    name = m["name"]
    return name if _NAME.fullmatch(name) else None


def host_allowed(header: str | None, allowed_names: frozenset[str]) -> bool:
    """Whether a request's ``Host`` header may be answered.

    IP literals and ``localhost`` (and its subdomains, which browsers resolve to this
    machine themselves) are safe from DNS rebinding: the attacker controls a *name*, never
    an address literal in the victim's address bar. Other names pass only when allowed
    explicitly, and only the whole host counts (see :func:`host_of`).

    >>> host_allowed("127.0.0.1:8000", frozenset()), host_allowed("localhost:8000", frozenset())
    (True, True)
    >>> host_allowed("[::1]:8000", frozenset()), host_allowed("evil.example:8000", frozenset())
    (True, False)
    >>> host_allowed("box.lan:8000", frozenset({"box.lan"})), host_allowed(None, frozenset())
    (True, False)
    >>> host_allowed("localhost:80@evil.example", frozenset())
    False
    """
    host = host_of(header) if header else None
    if host is None:
        return False
    if host in allowed_names or host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:  # a name, or dotted numbers that are no IPv4 address (127.1)
        return False


class PlaygroundServer(ThreadingHTTPServer):
    """A threading HTTP server holding a :class:`Playground` and its limits, bound to
    ``host:port`` (port 0: any free port; see ``.url``).

    Call ``serve_forever()`` (in a thread if need be) and ``shutdown()``. ``log`` is a text
    stream for one line per refused request (None: silent). ``read_timeout`` and
    ``max_handlers`` (:data:`READ_TIMEOUT`, :data:`MAX_HANDLERS`) may be set on an instance;
    they apply to the connections accepted after.
    """

    daemon_threads = True
    # The kernel's largest listen queue (it caps the number to its own setting): a burst of
    # connections waits there while the accept loop catches up, instead of being refused.
    request_queue_size = socket.SOMAXCONN
    read_timeout: float | None = READ_TIMEOUT
    max_handlers: int = MAX_HANDLERS

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
        self._slots = threading.Condition()
        self._handlers = 0
        self._stopping = False

    def process_request(self, request: Any, client_address: Any) -> None:
        # Runs in the accept loop: while every slot is taken, no more connections are
        # accepted, and they wait in the listen queue until a handler ends.
        with self._slots:
            while self._handlers >= self.max_handlers and not self._stopping:
                self._slots.wait()
            if self._stopping:
                self.shutdown_request(request)
                return
            self._handlers += 1
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release_slot()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release_slot()

    def _release_slot(self) -> None:
        with self._slots:
            self._handlers -= 1
            self._slots.notify()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        try:
            super().serve_forever(poll_interval)
        finally:
            with self._slots:
                self._stopping = False

    def shutdown(self) -> None:
        # The accept loop may be waiting for a free slot, which a stalled client holds for
        # up to read_timeout: wake it, so that it sees the shutdown at once.
        with self._slots:
            self._stopping = True
            self._slots.notify_all()
        super().shutdown()

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

    def setup(self) -> None:
        super().setup()
        # A read or write that waits longer raises TimeoutError: handle_one_request drops
        # the connection then (after a 408 when the body stops arriving).
        self.connection.settimeout(self.server.read_timeout)

    # ------------------------------------------------------------------------------- plumbing

    def log_message(self, format: str, *args: Any) -> None:
        pass  # access logs off: the page sends a request per pause in typing

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str,
        *,
        close: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
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

    def _json(
        self,
        status: int,
        value: Any,
        *,
        close: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8", close=close, headers=headers)

    def _error(
        self,
        status: int,
        message: str,
        *,
        close: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        if self.server.log is not None:
            print(
                f"tokenmill serve: {status} {self.command} {self.path[:200]}: {message}",
                file=self.server.log,
                flush=True,
            )
        self._json(status, {"error": message, "status": status}, close=close, headers=headers)

    def _checked(self) -> bool:
        hosts = self.headers.get_all("Host") or []
        if len(hosts) > 1:
            # Which of them a proxy or a browser goes by is anyone's guess: none is trusted.
            problem = f"the request has {len(hosts)} Host headers; send one"
        elif not host_allowed(hosts[0] if hosts else None, self.server.allowed_hosts):
            problem = (
                f"Host {self.headers.get('Host')!r} is not this server's: open it as "
                "http://127.0.0.1:PORT/ or allow the name with --allow-host"
            )
        else:
            return True
        self._error(HTTPStatus.MISDIRECTED_REQUEST, problem, close=True)
        return False

    def _method_not_allowed(self, path: str, allowed: str) -> None:
        # The connection is closed: a POST's body is left unread.
        self._error(
            HTTPStatus.METHOD_NOT_ALLOWED,
            f"{path} takes {allowed}, not {self.command}",
            close=True,
            headers={"Allow": allowed},
        )

    # -------------------------------------------------------------------------------- methods

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._checked():
            return
        url = urlsplit(self.path)
        pg = self.server.playground
        allowed = API_METHODS.get(url.path)
        if allowed is not None and "GET" not in allowed:
            self._method_not_allowed(url.path, allowed)
            return
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

    def _content_length(self) -> int | None:
        """The body's length the headers give; None when the request was answered instead:
        411 without a Content-Length, 400 for one that is no length (``-1``, ``abc``, ``+5``,
        ``1_000``, which ``int`` would take) or two that differ."""
        values = [v.strip() for v in self.headers.get_all("Content-Length") or []]
        if not values:
            self._error(HTTPStatus.LENGTH_REQUIRED, "a Content-Length is required", close=True)
            return None
        if len(set(values)) > 1:
            self._error(
                HTTPStatus.BAD_REQUEST,
                f"invalid Content-Length: the request gives {len(values)} that differ "
                f"({', '.join(map(repr, values))})",
                close=True,
            )
            return None
        if not (values[0].isascii() and values[0].isdigit()):
            self._error(
                HTTPStatus.BAD_REQUEST,
                f"invalid Content-Length {values[0][:100]!r}: it must be the body's length in "
                "bytes, digits 0-9 only",
                close=True,
            )
            return None
        digits = values[0].lstrip("0") or "0"
        if len(digits) > 18:  # past any body, and int() refuses 4,300 digits and more
            self._error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"the body is a {len(digits):,}-digit number of bytes; this server takes at "
                f"most {self.server.max_body:,} (tokenmill serve --max-body)",
                close=True,
            )
            return None
        return int(digits)

    def do_POST(self) -> None:
        if not self._checked():
            return
        url = urlsplit(self.path)
        if url.path != "/api/encode":
            if url.path in API_METHODS or url.path in STATIC:
                self._method_not_allowed(url.path, API_METHODS.get(url.path, "GET, HEAD"))
            else:
                self._error(HTTPStatus.NOT_FOUND, f"no POST endpoint {url.path}", close=True)
            return
        if self.headers.get("Transfer-Encoding"):
            self._error(
                HTTPStatus.LENGTH_REQUIRED, "send a Content-Length (no chunked bodies)", close=True
            )
            return
        length = self._content_length()
        if length is None:
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
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            self._error(
                HTTPStatus.REQUEST_TIMEOUT,
                f"the body stopped arriving (nothing for {self.server.read_timeout:g} s) "
                f"before the {length:,} bytes its Content-Length promises",
                close=True,
            )
            return
        if len(body) < length:
            self._error(
                HTTPStatus.BAD_REQUEST,
                f"the body ended after {len(body):,} of the {length:,} bytes the "
                "Content-Length promises",
                close=True,
            )
            return
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
        except RecursionError:
            # The parser recurses once per level of [ and {, so deep nesting passes Python's
            # recursion limit, well inside max_body.
            self._error(
                HTTPStatus.BAD_REQUEST,
                "the body is not JSON this server can parse: its arrays and objects nest "
                "too deeply",
            )
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
