"""Bounded, read-only file access for the readers.

Every byte a reader looks at goes through ``SafeFile.read_at``, which
* opens with O_NOFOLLOW (where the platform has it): callers hand over a
  path the walk already resolved and found inside the scanned root, so a
  symlink in its place now was put there after that check (a swap to a file
  outside the tree) and is refused, never followed,
* opens non-blocking and refuses anything that is not a regular file (a FIFO
  named *.safetensors must never block the scan),
* reads with pread at explicit offsets, never past the size seen at open and
  never more than asked (no mmap: a truncated file must not raise SIGBUS),
* counts the bytes it returns into the scan's ``ReadMeter`` when it is
  given one (the progress line's MB/s, and how the tests prove that scans
  are header-only): a meter belongs to one scan, never to the process,
* re-checks the file's identity and size on ``changed()`` (fstat of the open
  descriptor, and lstat of the path: the name must still be that file).
The file is opened read-only; nothing here can write.
"""

from __future__ import annotations

import errno
import os
import stat
import threading

from ..artifact import ReadError

__all__ = ["NOFOLLOW", "NotRegular", "ReadError", "ReadMeter", "SafeFile", "SymlinkRefused"]


class ReadMeter:
    """The bytes the files of one scan returned (``SafeFile.read_at``), from
    every thread that reads them (``--deep``'s digest threads too).  Made
    by whoever runs the scan and handed down with it; nothing keeps one
    between scans."""

    __slots__ = ("_lock", "_total")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = 0

    def add(self, n: int) -> None:
        with self._lock:
            self._total += n

    @property
    def total(self) -> int:
        return self._total

# 0 where the platform has no O_NOFOLLOW (Windows): there the open follows a
# link, and the identity re-checks below are what remains.
NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
# What open(2) reports when O_NOFOLLOW meets a symlink: ELOOP on Linux and
# macOS, EMLINK on FreeBSD, EFTYPE on NetBSD.
_LINK_ERRNOS = {errno.ELOOP, errno.EMLINK, getattr(errno, "EFTYPE", errno.ELOOP)}


class NotRegular(ReadError):
    """The path is a FIFO, socket, device or directory."""


class SymlinkRefused(ReadError):
    """The resolved path is a symlink at open time (O_NOFOLLOW refused it)."""


class SafeFile:
    """A regular file opened read-only, read by offset.

    ``path`` must already be resolved (``os.path.realpath``, as the walk and
    the operand handling in tree.collect do): its last component is opened
    with O_NOFOLLOW, so a symlink found there is refused.  ``meter``, when
    given, counts the bytes ``read_at`` returns."""

    def __init__(self, path: str, meter: ReadMeter | None = None) -> None:
        self.path = path
        self.name = path
        self.meter = meter
        flags = (os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_BINARY", 0))
        try:
            self.fd = os.open(path, flags)
        except OSError as exc:
            if NOFOLLOW and exc.errno in _LINK_ERRNOS and os.path.islink(path):
                raise SymlinkRefused(
                    "it is now a symbolic link (replaced after the scan resolved its path); "
                    "not followed, not read") from None
            raise ReadError(f"cannot open: {exc.strerror or exc}") from None
        try:
            st = os.fstat(self.fd)
            if not stat.S_ISREG(st.st_mode):
                kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(
                    st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(
                    st.st_mode) else "a directory" if stat.S_ISDIR(st.st_mode) else "not a file")
                raise NotRegular(f"{kind}, not a regular file; skipped")
            if hasattr(os, "set_blocking"):
                os.set_blocking(self.fd, True)
        except BaseException:
            os.close(self.fd)
            raise
        self.size = st.st_size
        self.allocated = getattr(st, "st_blocks", 0) * 512
        self._ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    @property
    def identity(self) -> tuple[int, int, int, int]:
        """(device, inode, size, mtime) when opened: what --deep re-checks."""
        return self._ident

    def read_at(self, offset: int, n: int) -> bytes:
        """Up to ``n`` bytes at ``offset``; fewer only at the end of the file
        (the ``ByteSource`` interface, parsers/interface.py)."""
        if offset < 0 or n < 0:
            raise ReadError(f"bad read request ({offset}, {n})")
        n = max(0, min(n, self.size - offset))
        chunks = []
        got = 0
        while got < n:
            try:
                if hasattr(os, "pread"):
                    b = os.pread(self.fd, min(n - got, 1 << 26), offset + got)
                else:  # pragma: no cover - Windows
                    os.lseek(self.fd, offset + got, os.SEEK_SET)
                    b = os.read(self.fd, min(n - got, 1 << 26))
            except OSError as exc:
                raise ReadError(f"read failed at offset {offset + got}: "
                                f"{exc.strerror or exc}") from None
            if not b:
                break
            chunks.append(b)
            got += len(b)
        data = b"".join(chunks)
        if self.meter is not None:
            self.meter.add(len(data))
        return data

    def changed(self) -> str | None:
        """Why the file is no longer the one opened, or None."""
        try:
            st = os.fstat(self.fd)
            # lstat: a symlink put in the file's place is a replacement even
            # when it points back at the same inode
            pst = os.lstat(self.path)
        except OSError as exc:
            return f"it disappeared while being read ({exc.strerror or exc})"
        if (st.st_size, st.st_mtime_ns) != (self._ident[2], self._ident[3]):
            return (f"it changed while being read (size {self._ident[2]} -> {st.st_size})")
        if (pst.st_dev, pst.st_ino) != (self._ident[0], self._ident[1]):
            return "it was replaced while being read (a different file now has its name)"
        return None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> SafeFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
