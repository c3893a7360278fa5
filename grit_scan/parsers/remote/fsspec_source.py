"""``s3://`` and anything else fsspec opens, as a ``ByteSource``.

Reads are ranged (``fs.cat_file(path, start, end)``) and charged to the
run's ``Budget`` before they are made; fsspec's own caching is bypassed so
nothing is read ahead.  Errors become ``RemoteError`` naming the URL.
"""

from __future__ import annotations

from typing import Any

from . import Budget, RemoteError, RemoteOptions, require, scheme


def _fs(url: str, opts: RemoteOptions) -> tuple[Any, str]:
    require("fsspec", "remote", url)
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url)
    except ImportError as exc:  # fsspec names the package it needs (s3fs, gcsfs, ...)
        raise RemoteError(f"{url}: {scheme(url)}:// needs a package that is not installed "
                          f"({exc}); pip install 'grit-scan[remote]'", url) from None
    except (ValueError, OSError) as exc:
        raise RemoteError(f"{url}: cannot open: {exc}", url) from None
    return fs, path


def _error(url: str, exc: Exception) -> RemoteError:
    status = 404 if isinstance(exc, FileNotFoundError) else (
        403 if isinstance(exc, PermissionError) else None)
    what = f"HTTP {status}: " if status else ""
    return RemoteError(f"{url}: {what}{type(exc).__name__}: {exc}", url, status)


class FsspecSource:
    def __init__(self, url: str, opts: RemoteOptions, budget: Budget,
                 fs: Any = None, path: str | None = None) -> None:
        self.name = url
        self.budget = budget
        if fs is None or path is None:
            fs, path = _fs(url, opts)
        self.fs, self.path = fs, path
        budget.request()
        try:
            self.size = int(fs.size(path))
        except Exception as exc:  # noqa: BLE001 - any backend error is this file's finding
            raise _error(url, exc) from None

    def read_at(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if n == 0:
            return b""
        self.budget.take(n, self.name)
        self.budget.request()
        try:
            data = self.fs.cat_file(self.path, start=offset, end=offset + n)
        except Exception as exc:  # noqa: BLE001
            raise _error(self.name, exc) from None
        return bytes(data[:n])

    def changed(self) -> str | None:
        return None


def list_files(url: str, opts: RemoteOptions, budget: Budget
               ) -> tuple[Any, str, list[tuple[str, int]]] | None:
    """(fs, root path, [(rel, size)]) when ``url`` is a directory, else None."""
    fs, path = _fs(url, opts)
    budget.request()
    try:
        if not fs.isdir(path):
            return None
        found = fs.find(path, detail=True)
    except Exception as exc:  # noqa: BLE001
        raise _error(url, exc) from None
    root = path.rstrip("/")
    out = []
    for full, info in found.items():
        rel = full[len(root):].lstrip("/") if full.startswith(root) else full
        out.append((rel, int(info.get("size") or 0)))
    return fs, root, sorted(out)
