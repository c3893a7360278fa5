"""Remote byte sources: ``hf://``, ``http(s)://``, ``s3://`` and anything
fsspec opens, behind the same ``ByteSource`` interface as a local file.

* ``RemoteOptions`` (timeouts, retries, backoff, the per-run byte budget,
  the speculative first read) has sane defaults; ``Budget`` counts every
  byte and request of a run and refuses a fetch that would exceed it.
* ``collect.open_source(url)`` opens one file; ``collect.collect_url``
  reads a remote file or repository as one model, exactly as ``tree``
  reads a local directory.  This package module imports none of its
  submodules (they import it).
* A failed fetch raises ``RemoteError`` (a ``ReadError``) naming the URL
  and the HTTP status; the collector turns it into a finding on that file
  and the scan goes on.
* Every request has a whole-request deadline (``RemoteOptions.timeout``:
  connect, headers and body together), and each retry gets its own.
* Tokens (``HF_TOKEN``, huggingface_hub's stored token) are sent as an
  Authorization header to the Hub's own origin only (its scheme, host and
  port; https, or a loopback address), never after a redirect elsewhere;
  user names, passwords and signed query strings in a URL are never
  printed: ``redact`` is the only form of a URL that reaches a message.
* A run's remote work is bounded: bytes (``Budget``), listings (pages,
  bytes, entries, no page twice) and failed fetches (``MAX_FAILED_FETCHES``).
* A remote model's files are fetched several at a time
  (``RemoteOptions.in_flight``, collect.py), each ahead of its turn on a
  ``Tab``: its bytes are held against the budget while it waits, and
  charged, or refused, when its turn comes, in the order a one-at-a-time
  reading charges them, so the report is the same.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ...artifact import ReadError
from ...codec.errors import GritError

__all__ = ["Budget", "MissingExtra", "Tab", "RemoteError", "RemoteOptions", "UnsafePath", "is_url",
           "redact", "scheme", "unsafe_path"]

# compiled where first used (re's cache), not at import: start-up, docs/performance.md
_SCHEME = r"^([A-Za-z][A-Za-z0-9+.-]*)://"
SPECULATIVE = 100_000  # the first read of a file (huggingface_hub reads 100 kB too)
# A server that ignores Range sends the whole file: accepted when the whole
# body is at most this (an index, a config, a small checkpoint), else refused
# before a body byte is read.
WHOLE_BODY_LIMIT = 16 * 1024 * 1024
# Listings (the Hub's tree API, fsspec's find): what one remote root may cost.
MAX_LISTING_BYTES = 16 * 1024 * 1024
MAX_LISTING_PAGES = 100
MAX_LISTING_ENTRIES = 50_000
# Fetches that may fail in one remote root before the rest is not requested
# (a listing of 40,000 names that all answer 404 costs 32 requests, not 40,000).
MAX_FAILED_FETCHES = 32
# Requests one scan (one sweep worker) keeps in flight on one remote model:
# the files of a directory are fetched and parsed this many at a time.
IN_FLIGHT = 8


@dataclass(frozen=True)
class RemoteOptions:
    """How remote sources behave.  ``budget`` is the most bytes one run (one
    scan, one sweep target) fetches; 0 means no limit."""

    timeout: float = 30.0
    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    budget: int = 1 << 30
    speculative: int = SPECULATIVE
    in_flight: int = IN_FLIGHT


class RemoteError(ReadError):
    """A remote read failed (the message names the URL and the status)."""

    def __init__(self, message: str, url: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class UnsafePath(RemoteError):
    """A path named by a URL or a listing is absolute or has dot segments:
    it is refused (a path_escape finding) and never requested."""


class BudgetExceeded(RemoteError):
    """The run's byte budget would be exceeded."""


class MissingExtra(GritError):
    """A URL needs an optional dependency that is not installed."""


T = TypeVar("T")


class Budget:
    """Bytes and requests of one run, shared by all its sources (thread-safe).
    ``bytes`` are the bytes charged; ``held`` those fetched ahead of their
    turn on a ``Tab`` and not charged yet; ``short`` says the budget came
    close enough to its end that nothing more is fetched ahead."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self.requests = 0
        self.held = 0
        self.short = False
        self._lock = threading.Lock()

    def fetch(self, key: object, get: Callable[[Budget], T]) -> T:
        """One fetch (``get``, charging this budget); a ``Tab`` keeps it by
        ``key`` to replay at the file's turn."""
        return get(self)

    def tab(self) -> Tab:
        return Tab(self)

    def request(self) -> None:
        with self._lock:
            self.requests += 1

    def take(self, n: int, url: str) -> None:
        """Account for ``n`` more bytes from ``url``; raise BudgetExceeded
        (nothing is counted) when they would not fit."""
        with self._lock:
            if self.limit and self.bytes + n > self.limit:
                raise BudgetExceeded(
                    f"{url}: the remote byte budget of {self.limit:,} bytes is exhausted "
                    f"({self.bytes:,} fetched; raise it with --max-remote-bytes)", url)
            self.bytes += n

    def room(self) -> int | None:
        with self._lock:
            return None if not self.limit else max(0, self.limit - self.bytes)


class _Ahead(BudgetExceeded):
    """A fetch ahead of its turn would not fit beside what is charged and
    held: the file's reading is redone at its turn, one fetch at a time."""


class Tab(Budget):
    """One file's fetches made ahead of its turn (the ``Budget`` interface).

    While ``ahead``, a request is recorded, and bytes are held on the budget
    when what is charged and held leaves room for them (else the reading is
    cut: ``_Ahead``); each fetch is kept by its key with what it cost and
    what it returned.  ``settle()``, at the file's turn, charges all of it
    when it fits, as a reading one fetch at a time would have (True);
    otherwise (False) the reading is to be done again on this tab, now at
    its turn: each kept fetch replays its own charges, refused exactly where
    a fetch made then would be, and anything else is fetched then.  A cut
    or a failed settle marks the budget ``short``: from then on nothing is
    fetched ahead, so the bytes fetched ahead and never charged are at most
    those of the files already ahead when the budget ran short."""

    def __init__(self, budget: Budget) -> None:
        super().__init__(budget.limit)  # its own counters stay 0: the budget's count
        self.budget = budget
        self.ahead = True
        self.cut = False
        self._held = 0
        self._ops: list[tuple[int, str]] = []  # (-1, "") a request, (n, url) n bytes
        self._kept: dict[object, tuple[list[tuple[int, str]], Any]] = {}
        self._lock = threading.Lock()

    def request(self) -> None:
        if not self.ahead:
            self.budget.request()
            return
        with self._lock:
            self._ops.append((-1, ""))

    def take(self, n: int, url: str) -> None:
        if not self.ahead:
            self.budget.take(n, url)
            return
        b = self.budget
        with b._lock:
            if self.cut or b.short or (b.limit and b.bytes + b.held + n > b.limit):
                self.cut = b.short = True
                raise _Ahead(f"{url}: fetched at its turn", url)
            b.held += n
        with self._lock:
            self._held += n
            self._ops.append((n, url))

    def room(self) -> int | None:
        b = self.budget
        with b._lock:
            return None if not b.limit else max(0, b.limit - b.bytes - b.held)

    def fetch(self, key: object, get: Callable[[Budget], T]) -> T:
        if self.ahead:
            start = len(self._ops)
            try:
                got: Any = get(self)
            except RemoteError as exc:
                got = exc
            if not self.cut:
                with self._lock:
                    self._kept[key] = (self._ops[start:], got)
            if isinstance(got, BaseException):
                raise got
            return got  # type: ignore[no-any-return]
        kept = self._kept.pop(key, None)
        if kept is None:
            return get(self.budget)
        ops, got = kept
        for n, url in ops:
            if n < 0:
                self.budget.request()
            else:
                self.budget.take(n, url)
        if isinstance(got, BaseException):
            raise got
        return got  # type: ignore[no-any-return]

    def settle(self, redo: bool = False) -> bool:
        """At the file's turn: release what is held and charge it all
        (True), or keep the fetches for the reading to be done again (also
        when ``redo``)."""
        b = self.budget
        with b._lock:
            b.held -= self._held
            self._held = 0
            self.ahead = False
            if redo:
                return False
            total = sum(n for n, _ in self._ops if n > 0)
            if self.cut or (b.limit and b.bytes + total > b.limit):
                b.short = True
                return False
            b.bytes += total
            b.requests += sum(1 for n, _ in self._ops if n < 0)
            self._kept.clear()
            self._ops = []
            return True

    def done(self) -> None:
        """The reading is over: nothing kept outlives it."""
        self._kept.clear()
        self._ops = []


def scheme(target: str) -> str | None:
    """The URL scheme of ``target`` (lower case), or None for a local path."""
    m = re.match(_SCHEME, target)
    return m.group(1).lower() if m else None


def is_url(target: str) -> bool:
    return scheme(target) not in (None, "file")


def redact(url: str) -> str:
    """``url`` fit for a message or a report: a user name and password
    become ``***`` and every query value ``***`` (presigned URLs carry
    their signature, credential and token there); the rest is unchanged."""
    import urllib.parse  # here: a scan of local paths never needs it (start-up)

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return re.sub(r"[?#].*", "", url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "&".join(f"{k.partition('=')[0]}=***" if k else "" for k in
                     parts.query.split("&")) if parts.query else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def secrets_of(url: str) -> list[str]:
    """The secret strings of ``url`` (password, user name, query values), as
    written and percent-decoded: no message may contain them."""
    import urllib.parse  # as in redact()

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    out: list[str] = []
    if "@" in parts.netloc:
        out += [x for x in parts.netloc.rpartition("@")[0].split(":") if x]
    for kv in parts.query.split("&"):
        v = kv.partition("=")[2]
        if v:
            out.append(v)
    out += [urllib.parse.unquote(x) for x in out]
    return sorted({x for x in out if len(x) >= 2}, key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """``text`` with every secret of ``url`` replaced by ``***``."""
    for s in secrets_of(url):
        text = text.replace(s, "***")
    return text


def unsafe_path(rel: str) -> str | None:
    """Why a path inside a remote root may not be requested, or None: it is
    absolute, or has an empty, ``.`` or ``..`` segment (a server would
    resolve it to another file, or outside the repository)."""
    if not rel:
        return "an empty path"
    if "\x00" in rel or any(ord(c) < 0x20 for c in rel):
        return "a control character in the path"
    if rel.startswith(("/", "\\")):
        return "an absolute path"
    if "\\" in rel:
        return "a backslash (a Windows path separator)"
    for seg in rel.split("/"):
        if seg == "..":
            return "a '..' segment"
        if seg == ".":
            return "a '.' segment"
        if seg == "":
            return "an empty segment"
    return None


def require(module: str, extra: str, url: str) -> None:
    """Raise MissingExtra (one line naming the extra) when ``module`` is absent."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{redact(url)}: {scheme(url)}:// URLs need the {module} package: "
                           f"pip install 'grit-scan[{extra}]'") from None
