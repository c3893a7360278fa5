"""A ranged-GET ``ByteSource`` over HTTP(S) on urllib3.

* urllib3 makes the connections (verified TLS with SNI and host name
  checks), frames the responses (Content-Length, chunked), parses URLs
  (``parse_url``: user info, IDNA) and ``Retry-After``.  Redirects and
  retries are followed here, not by urllib3's pool: its pool gives no hold
  on a connection before the headers arrive, and the whole-request deadline
  below needs one.
* **Deadline.**  One request (connect, headers, body, and the redirects it
  follows) must finish within ``opts.timeout`` seconds: a timer shuts the
  connection's socket when it runs out, so a server that drips one byte a
  second is cut off like a silent one.  Each retry gets its own deadline.
* Opening a file is its first read: one speculative ranged GET of
  ``opts.speculative`` bytes that yields the size (``Content-Range``), the
  safetensors length prefix and most headers.  A read that the cached
  block covers costs no request; one that runs past it fetches only the
  missing tail (so a safetensors header costs at most two requests).
* Only what a reader asks for is fetched, every byte is charged to the
  run's ``Budget`` before it is read off the socket, and a body is never
  read past what was asked.
* 408, 429 and 5xx responses, timeouts and connections reset mid-body are
  retried ``opts.retries`` times with exponential backoff (``Retry-After``
  honoured up to ``opts.max_backoff``).  What cannot succeed on a retry is
  final at once: other 4xx, a refused connection, a failed DNS lookup, a
  TLS failure.  Redirects are followed (at most 5).
* Credentials: ``http://USER:PASSWORD@host/`` is fetched from ``host`` with
  basic authentication; every Authorization header (that one, or the Hub
  token) is dropped when a redirect leaves the URL's origin (scheme, host
  and port), so it never reaches another host nor plain http.  Messages
  name ``redact(url)``: no password, user name or query value.
* A server that ignores ``Range`` (200 with the whole body) is accepted
  when the whole body is at most ``WHOLE_BODY_LIMIT`` bytes (the file then
  carries a note); a larger body is refused before a byte of it is read.
"""

from __future__ import annotations

import http.client
import re
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NameResolutionError,
    NewConnectionError,
)
from urllib3.exceptions import SSLError as Urllib3SSLError

from . import (
    WHOLE_BODY_LIMIT,
    Budget,
    RemoteError,
    RemoteOptions,
    redact,
    scrub,
)

MAX_REDIRECTS = 5
RETRY_STATUS = frozenset({408, 429})  # and every 5xx
_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_TOTAL = re.compile(r"bytes\s+\*/(\d+)")
CHUNK = 1 << 16
_DEFAULT_PORT = {"http": 80, "https": 443}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of ``url``: what a credential is bound to."""
    u = urllib3.util.parse_url(url)
    sch = (u.scheme or "http").lower()
    return sch, (u.host or "").lower(), u.port or _DEFAULT_PORT.get(sch, 0)


def split_credentials(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its user info, and the basic-auth header it names
    (user and password percent-decoded), or no header."""
    u = urllib3.util.parse_url(url)
    if not u.auth:
        return url, {}
    user, _, pw = u.auth.partition(":")
    auth = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(pw)}"
    bare = u._replace(auth=None).url
    return bare, dict(urllib3.util.make_headers(basic_auth=auth))


class _Transient(Exception):
    def __init__(self, message: str, status: int | None, retry_after: float | None = None
                 ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class _Deadline:
    """The whole-request deadline: when it runs out, the socket of the
    connection being used is shut, which ends any read blocked on it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._conn: Any = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def watch(self, conn: Any) -> None:
        with self._lock:
            self._conn = conn
            fired = self.expired
        if fired:
            self._fire()

    def _fire(self) -> None:
        with self._lock:
            self.expired = True
            sock = getattr(self._conn, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cancel(self) -> None:
        self._timer.cancel()

    def check(self) -> None:
        if self.expired or self.remaining() <= 0:
            raise _Transient(f"timed out: the whole request took longer than "
                             f"{self.seconds:g} s", None)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    notes: list[str] = field(default_factory=list)


def http_get(url: str, headers: Mapping[str, str], opts: RemoteOptions, budget: Budget,
             limit: int, shown: str | None = None, want_range: bool = True) -> Response:
    """GET ``url`` with retries and redirects; read at most ``limit`` body
    bytes.  Raises RemoteError for a final failure (4xx, refused, DNS, TLS,
    retries exhausted, budget, a too large body from a server that ignored
    Range)."""
    shown = shown or redact(url)
    key = (url, tuple(sorted(headers.items())), limit, want_range)
    try:
        return budget.fetch(key, lambda b: _get(url, headers, opts, b, limit, shown,
                                                want_range))
    except RemoteError as exc:
        clean = scrub(str(exc), url)
        if clean != str(exc):
            exc.args = (clean,)
        raise


def _get(url: str, headers: Mapping[str, str], opts: RemoteOptions, budget: Budget,
         limit: int, shown: str, want_range: bool) -> Response:
    bare, auth = split_credentials(url)
    hdrs = {**auth, **headers}
    attempt = 0
    while True:
        deadline = _Deadline(opts.timeout)
        try:
            return _get_once(bare, dict(hdrs), opts, budget, limit, shown, want_range,
                             deadline)
        except _Transient as exc:
            attempt += 1
            if attempt > opts.retries:
                status = f"HTTP {exc.status}: " if exc.status else ""
                raise RemoteError(scrub(f"{shown}: {status}{exc} (gave up after "
                                        f"{opts.retries} retries)", url),
                                  shown, exc.status) from None
            delay = min(opts.max_backoff, exc.retry_after if exc.retry_after is not None
                        else opts.backoff * 2 ** (attempt - 1))
            time.sleep(max(0.0, delay))
        finally:
            deadline.cancel()


def _connect(url: str, deadline: _Deadline) -> tuple[Any, str]:
    u = urllib3.util.parse_url(url)
    left = max(0.001, deadline.remaining())
    cls = (urllib3.connection.HTTPSConnection if u.scheme == "https"
           else urllib3.connection.HTTPConnection)
    conn = cls(u.host or "", u.port, timeout=left)
    deadline.watch(conn)
    return conn, u.request_uri


def _final(shown: str, what: str) -> RemoteError:
    return RemoteError(f"{shown}: {what} (not retried: a retry cannot succeed)", shown)


def _get_once(url: str, headers: dict[str, str], opts: RemoteOptions, budget: Budget,
              limit: int, shown: str, want_range: bool, deadline: _Deadline) -> Response:
    here = origin(url)
    for _ in range(MAX_REDIRECTS + 1):
        scheme = urllib3.util.parse_url(url).scheme
        if scheme not in ("http", "https"):
            raise RemoteError(f"{shown}: redirected to a {scheme or 'relative'} URL; "
                              "not followed", shown)
        if origin(url) != here:
            # a credential is bound to its origin: never another host, and
            # never plain http after https
            headers.pop("Authorization", None)
        budget.request()
        conn, path = _connect(url, deadline)
        try:
            conn.connect()
            conn.request("GET", path, headers=headers, preload_content=False,
                         decode_content=False)
            resp = conn.getresponse()
            status = resp.status
            hdrs = {k.lower(): v for k, v in resp.headers.items()}
            location = resp.get_redirect_location()
            if location:
                url = urllib.parse.urljoin(url, location)
                continue
            if status in RETRY_STATUS or 500 <= status < 600:
                ra = hdrs.get("retry-after", "")
                after = None
                if ra:
                    try:
                        after = urllib3.util.Retry().parse_retry_after(ra)
                    except HTTPError:
                        after = None
                raise _Transient(f"{resp.reason or 'server error'}", status, after)
            notes: list[str] = []
            if status == 200 and want_range and "range" in {k.lower() for k in headers}:
                limit = _whole_body(hdrs, shown)
                notes.append(
                    f"the server ignored the Range request and sent the whole file; "
                    f"it was read whole (at most {WHOLE_BODY_LIMIT:,} bytes are accepted "
                    "from such a server)")
            if status not in (200, 206):
                if status == 416:
                    return Response(status, hdrs, b"")
                raise RemoteError(f"{shown}: HTTP {status} {resp.reason}".rstrip(), shown,
                                  status)
            body = _read_body(resp, hdrs, limit, budget, shown, deadline,
                              whole=bool(notes))
            return Response(status, hdrs, body, notes)
        except (RemoteError, _Transient):
            raise
        except NameResolutionError:
            host = urllib3.util.parse_url(url).host
            raise _final(shown, f"the host name {host!r} could not be resolved") from None
        except (Urllib3SSLError, ssl.SSLError, ssl.CertificateError) as exc:
            raise _final(shown, f"TLS failed: {_reason(exc)}") from None
        except ConnectTimeoutError as exc:
            if isinstance(exc, NewConnectionError) and not _timed_out(exc, deadline):
                raise _final(shown, f"connection failed: {_reason(exc)}") from None
            deadline.check()
            raise _Transient(f"connection timed out after {opts.timeout:g} s", None) from None
        except (TimeoutError, OSError, HTTPError, http.client.HTTPException) as exc:
            deadline.check()
            if isinstance(exc, TimeoutError):
                raise _Transient(f"timed out after {opts.timeout:g} s", None) from None
            raise _Transient(f"connection failed: {_reason(exc)}", None) from None
        finally:
            conn.close()
    raise RemoteError(f"{shown}: more than {MAX_REDIRECTS} redirects", shown)


def _timed_out(exc: BaseException, deadline: _Deadline) -> bool:
    return deadline.expired or isinstance(exc.__cause__ or exc.__context__, TimeoutError)


def _reason(exc: BaseException) -> str:
    """The innermost cause of ``exc`` as one short line."""
    inner: BaseException = exc
    while isinstance(inner, HTTPError) and (inner.__cause__ or inner.__context__):
        inner = inner.__cause__ or inner.__context__  # type: ignore[assignment]
    text = str(inner).splitlines()[0] if str(inner) else ""
    return f"{type(inner).__name__}: {text}"[:300]


def _whole_body(hdrs: dict[str, str], shown: str) -> int:
    """The read limit for a server that ignored Range: the whole body, when
    it is at most WHOLE_BODY_LIMIT (else RemoteError before a body byte)."""
    cl = hdrs.get("content-length", "")
    if cl.isdigit() and int(cl) > WHOLE_BODY_LIMIT:
        raise RemoteError(
            f"{shown}: the server ignored the Range request (HTTP 200 with the whole "
            f"body, {int(cl):,} bytes, over the {WHOLE_BODY_LIMIT:,}-byte limit for "
            "servers without ranged reads); not downloaded", shown, 200)
    return int(cl) if cl.isdigit() else WHOLE_BODY_LIMIT + 1


def _read_body(resp: Any, hdrs: dict[str, str], limit: int, budget: Budget, shown: str,
               deadline: _Deadline, whole: bool = False) -> bytes:
    """At most ``limit`` bytes of the body, each chunk charged to the budget
    before it is read; a body shorter than its Content-Length is transient."""
    cl = hdrs.get("content-length")
    expect = min(limit, int(cl)) if cl and cl.isdigit() else limit
    chunks: list[bytes] = []
    got = 0
    while got < expect:
        n = min(CHUNK, expect - got)
        budget.take(n, shown)
        try:
            b = resp.read(n, decode_content=False)
        except (HTTPError, OSError, http.client.HTTPException):
            deadline.check()
            b = b""
        if not b:
            deadline.check()
            if cl is not None:
                raise _Transient(f"the connection closed after {got:,} of {expect:,} bytes",
                                 None)
            break
        chunks.append(b)
        got += len(b)
    if whole and cl is None and got > WHOLE_BODY_LIMIT:
        raise RemoteError(
            f"{shown}: the server ignored the Range request (HTTP 200 with the whole "
            f"body, over the {WHOLE_BODY_LIMIT:,}-byte limit for servers without ranged "
            "reads); not downloaded", shown, 200)
    return b"".join(chunks)


class HttpSource:
    """One remote file read by ranged GETs (the ``ByteSource`` interface)."""

    def __init__(self, url: str, opts: RemoteOptions, budget: Budget,
                 headers: Mapping[str, str] | None = None, shown: str | None = None) -> None:
        self.url = url
        self.name = shown or redact(url)
        self.opts = opts
        self.budget = budget
        self.headers = dict(headers or {})
        self.notes: list[str] = []
        self._blocks: list[tuple[int, bytes]] = []  # the head and the last fetch
        self._changed: str | None = None
        first = max(1, opts.speculative)
        got = self._fetch(0, first)
        if got.status == 416:  # an empty file has no byte 0
            m = _TOTAL.search(got.headers.get("content-range", ""))
            self.size = int(m.group(1)) if m else 0
        elif got.status == 200:  # the whole file (a server that ignores Range)
            self.size = len(got.body)
            self.notes += got.notes
        else:
            self.size = self._total(got.headers)
        self._blocks = [(0, got.body)]

    def _fetch(self, offset: int, n: int) -> Response:
        h = dict(self.headers)
        h["Range"] = f"bytes={offset}-{offset + n - 1}"
        h.setdefault("Accept-Encoding", "identity")
        got = http_get(self.url, h, self.opts, self.budget, n, self.name)
        if got.status == 206:
            m = _RANGE.search(got.headers.get("content-range", ""))
            if m is None or int(m.group(1)) != offset:
                raise RemoteError(f"{self.name}: the server answered a range request for "
                                  f"offset {offset} with Content-Range "
                                  f"{got.headers.get('content-range')!r}", self.name, 206)
        elif got.status == 200 and offset:
            raise RemoteError(f"{self.name}: the server ignored a Range request after "
                              "answering one; not read", self.name, 200)
        return got

    def _total(self, hdrs: dict[str, str]) -> int:
        m = _RANGE.search(hdrs.get("content-range", ""))
        if m is None or m.group(3) == "*":
            raise RemoteError(f"{self.name}: the server did not state the file's size "
                              "(no Content-Range total)", self.name)
        return int(m.group(3))

    def read_at(self, offset: int, n: int) -> bytes:
        if offset < 0 or n < 0:
            raise RemoteError(f"bad read request ({offset}, {n})", self.name)
        n = max(0, min(n, self.size - offset))
        if n == 0:
            return b""
        prefix = b""
        for start, data in self._blocks:
            end = start + len(data)
            if start <= offset < end:
                if offset + n <= end:
                    return data[offset - start : offset - start + n]
                prefix = data[offset - start :]
                break
        at = offset + len(prefix)
        got = self._fetch(at, n - len(prefix))
        if got.status == 206:
            m = _RANGE.search(got.headers.get("content-range", ""))
            if m and m.group(3) != "*" and int(m.group(3)) != self.size:
                self._changed = (f"it changed while being read (size {self.size} -> "
                                 f"{m.group(3)})")
        data = prefix + got.body
        self._blocks = [self._blocks[0], (offset, data)] if self._blocks else [(offset, data)]
        return data

    def changed(self) -> str | None:
        return self._changed

    def close(self) -> None:
        self._blocks = []
