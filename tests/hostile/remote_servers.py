"""Hostile servers on 127.0.0.1 for the remote defects (test_remote_defects.py).

Each server runs on its own thread in the test process and records what it
was asked (raw request path, Authorization header, Host, whether the
connection was TLS), so a test can check what grit sent as well as what it
reported.  ``Served`` is the common base; the subclasses' ``respond`` says
what a request gets.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


@dataclass
class Request:
    path: str  # as sent on the request line (not unquoted)
    auth: str | None
    host: str | None
    tls: bool
    range: str | None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    ctx: ssl.SSLContext | None = None
    box: Served

    def finish_request(self, request: Any, client_address: Any) -> None:
        # one port speaks both: a TLS ClientHello starts with 0x16, anything
        # else is read as plain http (so a redirect from https to http on the
        # same host and port reaches this server in the clear, and is seen)
        self.box.connections += 1
        if self.ctx is not None:
            try:
                first = request.recv(1, socket.MSG_PEEK)
            except OSError:
                return
            if first == b"\x16":
                try:
                    request = self.ctx.wrap_socket(request, server_side=True)
                except (ssl.SSLError, OSError):
                    return
        super().finish_request(request, client_address)


class Served:
    """A loopback server; ``respond(handler)`` answers one GET."""

    handler_base: type[BaseHTTPRequestHandler] = BaseHTTPRequestHandler

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.requests: list[Request] = []
        self.connections = 0
        self.lock = threading.Lock()
        box = self
        base = self.handler_base

        class Handler(base):  # type: ignore[valid-type, misc]
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
                with box.lock:
                    box.requests.append(Request(
                        self.path, self.headers.get("Authorization"), self.headers.get("Host"),
                        isinstance(self.connection, ssl.SSLSocket), self.headers.get("Range")))
                box.respond(self)

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.box = self
        self.httpd.ctx = tls
        self.port = self.httpd.server_address[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def respond(self, h: Any) -> None:
        h.send_error(404)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextlib.contextmanager
def running(server: Served) -> Iterator[Any]:
    try:
        yield server
    finally:
        server.stop()


def reply(h: Any, status: int, body: bytes = b"", headers: dict[str, str] | None = None
          ) -> None:
    h.send_response(status)
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def serve_file(h: Any, data: bytes) -> None:
    """``data`` with Range support (206 / 416), as the Hub's CDN does."""
    m = _RANGE.match(h.headers.get("Range") or "")
    if m is None:
        return reply(h, 200, data)
    start = int(m.group(1))
    end = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
    if start >= len(data):
        return reply(h, 416, b"", {"Content-Range": f"bytes */{len(data)}"})
    return reply(h, 206, data[start:end + 1],
                 {"Content-Range": f"bytes {start}-{end}/{len(data)}"})


class Drip(Served):
    """Sends a 206 one byte a second: the status line and headers too
    (``headers=True``), or the body only."""

    def __init__(self, headers: bool) -> None:
        self.drip_headers = headers
        super().__init__()

    def respond(self, h: Any) -> None:
        body = b"x" * 1000
        head = (f"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-999/1000\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        if not self.drip_headers:
            h.wfile.write(head)
            h.wfile.flush()
        for b in (head if self.drip_headers else body):
            try:
                h.wfile.write(bytes([b]))
                h.wfile.flush()
            except OSError:
                return
            time.sleep(1.0)


class Silent:
    """Accepts connections and never sends a byte (a silent ftp server)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self.held.append(c)

    def stop(self) -> None:
        self.sock.close()
        for c in self.held:
            c.close()


class Files(Served):
    """Files of a directory under /files/, with Range; with ``user`` and
    ``password`` set, only to basic authentication."""

    def __init__(self, root: str, user: str = "", password: str = "",
                 tls: ssl.SSLContext | None = None) -> None:
        self.root = root
        self.need = ("Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
                     if user else None)
        super().__init__(tls)

    def respond(self, h: Any) -> None:
        if self.need is not None and h.headers.get("Authorization") != self.need:
            return reply(h, 401, b"no", {"WWW-Authenticate": 'Basic realm="m"'})
        path = unquote(urlsplit(h.path).path)
        full = os.path.join(self.root, path[len("/files/"):])
        if not path.startswith("/files/") or ".." in path.split("/") or not os.path.isfile(full):
            return reply(h, 404, b"not found")
        with open(full, "rb") as fh:
            serve_file(h, fh.read())


class Hub(Served):
    """The Hub's tree API and resolve URLs, with hostile answers:
    ``listing(page) -> (body bytes, Link header or None)``; resolve answers
    ``resolve(handler, repo, rev, path)``."""

    def __init__(self, listing: Callable[[int], tuple[bytes, str | None]],
                 resolve: Callable[[Any, str, str, str], None] | None = None,
                 tls: ssl.SSLContext | None = None) -> None:
        self.listing = listing
        self.resolve = resolve or (lambda h, repo, rev, path: reply(h, 404, b"Entry not found"))
        super().__init__(tls)

    def listing_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.startswith("/api/")]

    def respond(self, h: Any) -> None:
        parts = urlsplit(h.path)
        if parts.path.startswith("/api/models/"):
            q = dict(p.partition("=")[::2] for p in parts.query.split("&") if p)
            body, link = self.listing(int(q.get("page", "0") or 0))
            return reply(h, 200, body, {"Link": link} if link else {})
        m = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", parts.path)
        if m:
            return self.resolve(h, m.group(1), unquote(m.group(2)), unquote(m.group(3)))
        return reply(h, 404, b"not found")


def plain_http_server(root: str) -> Served:
    """What ``python -m http.server`` runs: SimpleHTTPRequestHandler, which
    ignores Range and answers 200 with the whole file."""

    class Plain(Served):
        handler_base = SimpleHTTPRequestHandler

        def respond(self, h: Any) -> None:
            SimpleHTTPRequestHandler.do_GET(h)

    class InRoot(SimpleHTTPRequestHandler):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, directory=root, **kw)

    Plain.handler_base = InRoot
    return Plain()


def self_signed(tmp: str) -> tuple[str, ssl.SSLContext]:
    """A certificate for 127.0.0.1 (openssl), and a server context using it;
    a client trusts it through SSL_CERT_FILE=<the returned path>."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return cert, ctx
