"""Remote byte sources: ``hf://``, ``http(s)://``, ``s3://`` and anything
fsspec opens, behind the same ``ByteSource`` interface as a local file.

* ``RemoteOptions`` (timeouts, retries, backoff, the per-run byte budget,
  the speculative first read) has sane defaults; ``Budget`` counts every
  byte and request of a run and refuses a fetch that would exceed it.
* ``open_source(url)`` opens one file; ``collect.collect_url`` reads a
  remote file or repository as one model, exactly as ``tree`` reads a
  local directory.
* A failed fetch raises ``RemoteError`` (a ``ReadError``) naming the URL
  and the HTTP status; the collector turns it into a finding on that file
  and the scan goes on.
* Tokens (``HF_TOKEN``, huggingface_hub's stored token) are sent as an
  Authorization header to the Hub's host only; they are never printed,
  logged or put in a message.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from ...artifact import ReadError
from ...codec.errors import GritError
from ..interface import ByteSource

__all__ = ["Budget", "MissingExtra", "RemoteError", "RemoteOptions", "is_url", "open_source",
           "scheme"]

# compiled where first used (re's cache), not at import: start-up, issue 15
_SCHEME = r"^([A-Za-z][A-Za-z0-9+.-]*)://"
SPECULATIVE = 100_000  # the first read of a file (huggingface_hub reads 100 kB too)


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


class RemoteError(ReadError):
    """A remote read failed (the message names the URL and the status)."""

    def __init__(self, message: str, url: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class BudgetExceeded(RemoteError):
    """The run's byte budget would be exceeded."""


class MissingExtra(GritError):
    """A URL needs an optional dependency that is not installed."""


class Budget:
    """Bytes and requests of one run, shared by all its sources (thread-safe)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.bytes = 0
        self.requests = 0
        self._lock = threading.Lock()

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


def scheme(target: str) -> str | None:
    """The URL scheme of ``target`` (lower case), or None for a local path."""
    m = re.match(_SCHEME, target)
    return m.group(1).lower() if m else None


def is_url(target: str) -> bool:
    return scheme(target) not in (None, "file")


def require(module: str, extra: str, url: str) -> None:
    """Raise MissingExtra (one line naming the extra) when ``module`` is absent."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{url}: {scheme(url)}:// URLs need the {module} package: "
                           f"pip install 'grit-scan[{extra}]'") from None


def open_source(url: str, opts: RemoteOptions | None = None,
                budget: Budget | None = None) -> ByteSource:
    """One remote file as a ByteSource (raises RemoteError, MissingExtra)."""
    opts = opts or RemoteOptions()
    budget = budget or Budget(opts.budget)
    sch = scheme(url)
    if sch in ("http", "https"):
        from .http import HttpSource

        return HttpSource(url, opts, budget)
    if sch == "hf":
        from . import hf

        return hf.open_file(url, opts, budget)
    from .fsspec_source import FsspecSource

    return FsspecSource(url, opts, budget)
