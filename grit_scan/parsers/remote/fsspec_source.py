"""``s3://`` and anything else fsspec opens, as a ``ByteSource``.

Reads are ranged (``fs.cat_file(path, start, end)``) and charged to the
run's ``Budget`` before they are made; fsspec's own caching is bypassed so
nothing is read ahead, and each scan makes its own filesystem
(``skip_instance_cache``).  Every call into fsspec (opening the filesystem,
a size, a read, a listing) has the whole-request deadline
(``opts.timeout``): it runs on a helper thread, and a call still running at
the deadline is abandoned and becomes a "timed out" finding (the thread is
a daemon; backends that take a timeout, as ftp does, are given it too, so
it ends soon after).  Errors become ``RemoteError`` naming the redacted URL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from . import (
    MAX_LISTING_ENTRIES,
    Budget,
    RemoteError,
    RemoteOptions,
    redact,
    require,
    scheme,
    scrub,
)

T = TypeVar("T")
# backends that take a per-operation timeout of their own (seconds)
_TIMEOUT_OPTION = {"ftp": "timeout", "sftp": "timeout"}


def _bounded(fn: Callable[[], T], opts: RemoteOptions, url: str) -> T:
    """``fn()`` within the whole-request deadline (raises RemoteError)."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append((True, fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box.append((False, exc))

    t = threading.Thread(target=run, name="grit-fsspec", daemon=True)
    t.start()
    t.join(opts.timeout)
    if not box:
        raise RemoteError(f"{redact(url)}: timed out: the request took longer than "
                          f"{opts.timeout:g} s", redact(url))
    ok, value = box[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _fs(url: str, opts: RemoteOptions) -> tuple[Any, str]:
    require("fsspec", "remote", url)
    import fsspec

    kw: dict[str, Any] = {"skip_instance_cache": True}
    if (scheme(url) or "") in _TIMEOUT_OPTION:
        kw[_TIMEOUT_OPTION[scheme(url) or ""]] = opts.timeout
    try:
        fs, path = _bounded(lambda: fsspec.core.url_to_fs(url, **kw), opts, url)
    except RemoteError:
        raise
    except ImportError as exc:  # fsspec names the package it needs (s3fs, gcsfs, ...)
        raise RemoteError(scrub(f"{redact(url)}: {scheme(url)}:// needs a package that is "
                                f"not installed ({exc}); pip install 'grit-scan[remote]'", url),
                          redact(url)) from None
    except Exception as exc:  # noqa: BLE001 - any backend error is this URL's finding
        raise _error(url, exc) from None
    return fs, path


def _error(url: str, exc: BaseException) -> RemoteError:
    if isinstance(exc, RemoteError):
        return exc
    status = 404 if isinstance(exc, FileNotFoundError) else (
        403 if isinstance(exc, PermissionError) else None)
    what = f"HTTP {status}: " if status else ""
    text = f"{redact(url)}: {what}{type(exc).__name__}: {exc}"
    return RemoteError(scrub(text, url)[:1000], redact(url), status)


class FsspecSource:
    def __init__(self, url: str, opts: RemoteOptions, budget: Budget,
                 fs: Any = None, path: str | None = None) -> None:
        self.name = redact(url)
        self.url = url
        self.opts = opts
        self.budget = budget
        if fs is None or path is None:
            fs, path = _fs(url, opts)
        self.fs, self.path = fs, path
        budget.request()
        try:
            self.size = int(_bounded(lambda: fs.size(path), opts, url))
        except Exception as exc:  # noqa: BLE001 - any backend error is this file's finding
            raise _error(url, exc) from None

    def read_at(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if n == 0:
            return b""
        self.budget.take(n, self.name)
        self.budget.request()
        try:
            data = _bounded(lambda: self.fs.cat_file(self.path, start=offset, end=offset + n),
                            self.opts, self.url)
        except Exception as exc:  # noqa: BLE001
            raise _error(self.url, exc) from None
        return bytes(data[:n])

    def changed(self) -> str | None:
        return None


def list_files(url: str, opts: RemoteOptions, budget: Budget
               ) -> tuple[Any, str, list[tuple[str, int]]] | None:
    """(fs, root path, [(rel, size)]) when ``url`` is a directory, else None."""
    fs, path = _fs(url, opts)
    budget.request()
    try:
        if not _bounded(lambda: fs.isdir(path), opts, url):
            return None
        found = _bounded(lambda: fs.find(path, detail=True), opts, url)
    except Exception as exc:  # noqa: BLE001
        raise _error(url, exc) from None
    if len(found) > MAX_LISTING_ENTRIES:
        raise RemoteError(f"{redact(url)}: the listing has more than {MAX_LISTING_ENTRIES:,} "
                          "entries (the listing budget); name a folder", redact(url))
    root = path.rstrip("/")
    out = []
    for full, info in found.items():
        rel = full[len(root):].lstrip("/") if full.startswith(root) else full
        out.append((rel, int(info.get("size") or 0)))
    return fs, root, sorted(out)
