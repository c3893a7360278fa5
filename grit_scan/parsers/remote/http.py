"""A ranged-GET ``ByteSource`` over HTTP(S), on the standard library only.

* Opening a file is its first read: one speculative ranged GET of
  ``opts.speculative`` bytes that yields the size (``Content-Range``), the
  safetensors length prefix and most headers.  A read that the cached
  block covers costs no request; one that runs past it fetches only the
  missing tail (so a safetensors header costs at most two requests).
* Only what a reader asks for is fetched (the GGUF reader bounds its own
  read-ahead), every byte is charged to the run's ``Budget`` before it is
  read off the socket, and a body is never read past what was asked.
* 429 and 5xx responses, timeouts and connections reset mid-body are
  retried ``opts.retries`` times with exponential backoff (``Retry-After``
  honoured up to ``opts.max_backoff``); 4xx is final.  Redirects are
  followed (at most 5); the Authorization header is dropped when a
  redirect leaves the original host.
* A server that ignores ``Range`` (200 with the whole body) is detected
  from the status line: the body is not read and the file is refused.
"""

from __future__ import annotations

import http.client
import re
import time
import urllib.parse
from collections.abc import Mapping

from . import Budget, RemoteError, RemoteOptions

MAX_REDIRECTS = 5
_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_TOTAL = re.compile(r"bytes\s+\*/(\d+)")
CHUNK = 1 << 16


def _redact(url: str) -> str:
    """A URL fit for a message: no query string (signed URLs carry secrets)."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class _Transient(Exception):
    def __init__(self, message: str, status: int | None, retry_after: float | None = None
                 ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def http_get(url: str, headers: Mapping[str, str], opts: RemoteOptions, budget: Budget,
             limit: int, shown: str | None = None, want_range: bool = True
             ) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` with retries and redirects; read at most ``limit`` body
    bytes.  Returns (status, lower-cased headers, body).  Raises RemoteError
    for a final failure (4xx, retries exhausted, budget, ignored Range)."""
    shown = shown or _redact(url)
    attempt = 0
    while True:
        try:
            return _get_once(url, dict(headers), opts, budget, limit, shown, want_range)
        except _Transient as exc:
            attempt += 1
            if attempt > opts.retries:
                status = f"HTTP {exc.status}: " if exc.status else ""
                raise RemoteError(f"{shown}: {status}{exc} (gave up after {opts.retries} "
                                  "retries)", shown, exc.status) from None
            delay = min(opts.max_backoff, exc.retry_after if exc.retry_after is not None
                        else opts.backoff * 2 ** (attempt - 1))
            time.sleep(max(0.0, delay))


def _get_once(url: str, headers: dict[str, str], opts: RemoteOptions, budget: Budget,
              limit: int, shown: str, want_range: bool) -> tuple[int, dict[str, str], bytes]:
    host0 = urllib.parse.urlsplit(url).netloc
    for _ in range(MAX_REDIRECTS + 1):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise RemoteError(f"{shown}: redirected to a {parts.scheme or 'relative'} URL; "
                              "not followed", shown)
        if parts.netloc != host0:
            headers.pop("Authorization", None)  # a token never leaves its host
        conn_cls = (http.client.HTTPSConnection if parts.scheme == "https"
                    else http.client.HTTPConnection)
        conn = conn_cls(parts.netloc, timeout=opts.timeout)
        path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        budget.request()
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            status = resp.status
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            if status in (301, 302, 303, 307, 308) and "location" in hdrs:
                url = urllib.parse.urljoin(url, hdrs["location"])
                continue
            if status == 429 or 500 <= status < 600:
                ra = hdrs.get("retry-after", "")
                raise _Transient(f"{resp.reason or 'server error'}", status,
                                 float(ra) if ra.isdigit() else None)
            if status == 200 and want_range and "range" in {k.lower() for k in headers}:
                raise RemoteError(
                    f"{shown}: the server ignored the Range request (HTTP 200 with the whole "
                    f"body, {hdrs.get('content-length', 'unknown')} bytes); not downloaded",
                    shown, 200)
            if status not in (200, 206):
                if status == 416:
                    return status, hdrs, b""
                raise RemoteError(f"{shown}: HTTP {status} {resp.reason}".rstrip(), shown,
                                  status)
            return status, hdrs, _read_body(resp, hdrs, limit, budget, shown)
        except TimeoutError as exc:
            raise _Transient(f"timed out after {opts.timeout:g} s ({exc})", None) from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            if isinstance(exc, RemoteError):
                raise
            raise _Transient(f"connection failed: {type(exc).__name__}: {exc}", None) from None
        finally:
            conn.close()
    raise RemoteError(f"{shown}: more than {MAX_REDIRECTS} redirects", shown)


def _read_body(resp: http.client.HTTPResponse, hdrs: dict[str, str], limit: int,
               budget: Budget, shown: str) -> bytes:
    """At most ``limit`` bytes of the body, each chunk charged to the budget
    before it is read; a body shorter than its Content-Length is transient."""
    cl = hdrs.get("content-length")
    expect = min(limit, int(cl)) if cl and cl.isdigit() else limit
    chunks: list[bytes] = []
    got = 0
    while got < expect:
        n = min(CHUNK, expect - got)
        budget.take(n, shown)
        b = resp.read(n)
        if not b:
            if cl is not None:
                raise _Transient(f"the connection closed after {got:,} of {expect:,} bytes",
                                 None)
            break
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


class HttpSource:
    """One remote file read by ranged GETs (the ``ByteSource`` interface)."""

    def __init__(self, url: str, opts: RemoteOptions, budget: Budget,
                 headers: Mapping[str, str] | None = None, shown: str | None = None) -> None:
        self.url = url
        self.name = shown or _redact(url)
        self.opts = opts
        self.budget = budget
        self.headers = dict(headers or {})
        self._blocks: list[tuple[int, bytes]] = []  # the head and the last fetch
        self._changed: str | None = None
        first = max(1, opts.speculative)
        status, hdrs, body = self._fetch(0, first)
        if status == 416:  # an empty file has no byte 0
            m = _TOTAL.search(hdrs.get("content-range", ""))
            self.size = int(m.group(1)) if m else 0
        else:
            self.size = self._total(hdrs, len(body))
        self._blocks = [(0, body)]

    def _fetch(self, offset: int, n: int) -> tuple[int, dict[str, str], bytes]:
        h = dict(self.headers)
        h["Range"] = f"bytes={offset}-{offset + n - 1}"
        h.setdefault("Accept-Encoding", "identity")
        status, hdrs, body = http_get(self.url, h, self.opts, self.budget, n, self.name)
        if status == 206:
            m = _RANGE.search(hdrs.get("content-range", ""))
            if m is None or int(m.group(1)) != offset:
                raise RemoteError(f"{self.name}: the server answered a range request for "
                                  f"offset {offset} with Content-Range "
                                  f"{hdrs.get('content-range')!r}", self.name, 206)
        return status, hdrs, body

    def _total(self, hdrs: dict[str, str], got: int) -> int:
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
        status, hdrs, body = self._fetch(at, n - len(prefix))
        if status == 206:
            m = _RANGE.search(hdrs.get("content-range", ""))
            if m and m.group(3) != "*" and int(m.group(3)) != self.size:
                self._changed = (f"it changed while being read (size {self.size} -> "
                                 f"{m.group(3)})")
        data = prefix + body
        self._blocks = [self._blocks[0], (offset, data)] if self._blocks else [(offset, data)]
        return data

    def changed(self) -> str | None:
        return self._changed

    def close(self) -> None:
        self._blocks = []
