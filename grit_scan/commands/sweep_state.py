"""The state of a ``grit sweep``: its ``--out`` file and its ``--from`` list.

Both names come from the user, but what they point at may not: a pull
request can make ``--out`` a symlink to a file the user owns, a FIFO or a
device, and a target list can be ``/dev/zero``.  So ``--out`` is opened
without following a final symlink (``O_NOFOLLOW``) and without blocking,
must be a regular file (or new), is locked (``flock``) for the whole sweep,
and is read as a sweep file before anything is written to it: a file that
is not one is refused and never truncated.  Resuming reads it a line at a
time, keeping the target and outcome of each record and nothing else (a
record longer than ``PARSE_WHOLE`` bytes is read by its two ends), so a
sweep's memory does not grow with its state.  ``--from`` must be a regular
file or ``-``, and each of its lines at most ``TARGET_LINE_MAX`` bytes.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from typing import IO, Any

from ._app import UsageError

# A record up to this many bytes is parsed whole; a longer one (a model with
# a very long report) by its first HEAD and last TAIL bytes.
PARSE_WHOLE = 1 << 20
HEAD = 64
TAIL = 1 << 16
# The longest line --from takes (a path or URL is far shorter): a longer one
# means the file is not a list of targets (/dev/zero on stdin).
TARGET_LINE_MAX = 1 << 16

# A record is written by json.dumps(sort_keys=True): it starts with its first
# key, "error" or "exit_code", and "target" (the last key) ends it.
_HEADS = (b'{"error": "', b'{"exit_code": ')
_LONG_HEAD = re.compile(rb'\{"(?:error": "|exit_code": (\d+), ")')
_TARGET_KEY = b', "target": "'


class OutFile:
    """The open, locked ``--out`` file, positioned after its last record."""

    def __init__(self, path: str, fd: int) -> None:
        self.path, self.fd = path, fd

    def append(self, record: dict[str, Any]) -> None:
        """One record as one line, written through and synced."""
        data = (json.dumps(record, sort_keys=True) + "\n").encode("ascii")
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)  # the lock goes with the descriptor


def open_out(path: str) -> OutFile:
    """Open (or create) ``path`` for a sweep and take its lock; a second
    sweep on the same file is refused, not made to wait."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"--out {path}: is a symbolic link; give the file itself") from None
        if exc.errno == errno.EISDIR:
            raise UsageError(f"--out {path}: is a directory, not a sweep file") from None
        raise UsageError(f"--out {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"--out {path}: not a regular file (a FIFO, device or socket); "
                             "give a sweep file")
        os.set_blocking(fd, True)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"--out {path}: another grit sweep is writing it (it holds the "
                             "file's lock); let it finish, or give another --out") from None
    except BaseException:
        os.close(fd)
        raise
    return OutFile(path, fd)


def _lines(fh: IO[bytes]) -> Iterator[tuple[int, bytes, bytes, int]]:
    """(offset, head, tail, length) of each line; ``head`` is the whole line
    when it is at most PARSE_WHOLE bytes (then ``tail`` is empty).  A last
    line without a newline is a line too (a torn record)."""
    pos = 0
    while True:
        chunk = fh.readline(PARSE_WHOLE)
        if not chunk:
            return
        if chunk.endswith(b"\n") or len(chunk) < PARSE_WHOLE:
            yield pos, chunk, b"", len(chunk)
            pos += len(chunk)
            continue
        head, tail, n = chunk[:HEAD], chunk[-TAIL:], len(chunk)
        while not tail.endswith(b"\n"):
            more = fh.readline(PARSE_WHOLE)
            if not more:
                break
            n += len(more)
            tail = (tail + more)[-TAIL:]
        yield pos, head, tail, n
        pos += n


def _record(head: bytes, tail: bytes) -> tuple[str | None, int | None] | None:
    """(target, exit code or None for an error record) of one complete
    line, ``(None, None)`` for a record whose target is too long to keep,
    or None when the line is not a sweep record."""
    if not tail:
        try:
            obj = json.loads(head)
        except ValueError:
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get("target"), str):
            return None
        if isinstance(obj.get("error"), str):
            return obj["target"], None
        code = obj.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and isinstance(
                obj.get("report"), dict):
            return obj["target"], code
        return None
    m = _LONG_HEAD.match(head)
    body = tail.rstrip(b"\n")
    if m is None or not body.endswith(b'"}'):
        return None
    code = int(m.group(1)) if m.group(1) is not None else None
    at = body.rfind(_TARGET_KEY)
    if at < 0:
        return None, code
    try:
        target = json.loads(body[at + len(_TARGET_KEY) - 1:-1])
    except ValueError:
        return None
    return (target, code) if isinstance(target, str) else None


def _torn(line: bytes) -> bool:
    """Whether a last line without a newline can be the start of a record
    (a sweep killed while writing it)."""
    return any(line[:len(h)] == h[:len(line)] for h in _HEADS)


def recorded(out: OutFile, wanted: set[str]) -> dict[str, int | None]:
    """The targets of ``wanted`` that ``out`` already records, with their
    exit code (None: an error record).  A torn last record is cut off; a
    file that is not a sweep file is refused (UsageError), untouched.  Only
    the targets asked for are kept: memory follows the target list, not
    the file."""
    done: dict[str, int | None] = {}
    cut: int | None = None
    with open(out.fd, "rb", closefd=False) as fh:
        for lineno, (pos, head, tail, _n) in enumerate(_lines(fh), 1):
            whole = (tail or head).endswith(b"\n")
            if not whole:
                if not _torn(head):
                    raise UsageError(f"--out {out.path}: not a grit sweep file (line {lineno} "
                                     "is not a sweep record); refusing to write to it")
                cut = pos
                break
            if not tail and not head.strip():
                continue  # a blank line
            rec = _record(head, tail)
            if rec is None:
                raise UsageError(f"--out {out.path}: not a grit sweep file (line {lineno} is "
                                 "not a sweep record); refusing to write to it")
            target, code = rec
            if target is not None and target in wanted:
                done[target] = code
    if cut is not None:
        os.ftruncate(out.fd, cut)
    os.lseek(out.fd, 0, os.SEEK_END)
    return done


def read_targets(args: list[str], from_file: str | None) -> list[str]:
    """Targets from the arguments and ``--from`` (one per line; blank lines
    and lines starting with # ignored), first occurrence kept.  A line that
    is not UTF-8 keeps its bytes (as a command-line argument does)."""
    lines = list(args)
    if from_file is not None:
        lines.extend(_from_lines(from_file))
    seen: dict[str, None] = {}
    for line in lines:
        t = line.strip()
        if t and not t.startswith("#"):
            seen.setdefault(t, None)
    return list(seen)


def _from_lines(spec: str) -> Iterator[str]:
    if spec == "-":
        yield from _decoded(sys.stdin.buffer, "-")
        return
    try:
        fd = os.open(spec, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"--from {spec}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UsageError(f"--from {spec}: not a regular file; give a file of targets, "
                             "one per line, or - for stdin")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb") as fh:
        yield from _decoded(fh, spec)


def _decoded(fh: IO[bytes], spec: str) -> Iterator[str]:
    try:
        for n, raw in enumerate(iter(lambda: fh.readline(TARGET_LINE_MAX + 1), b""), 1):
            if len(raw.rstrip(b"\r\n")) > TARGET_LINE_MAX:
                raise UsageError(f"--from {spec}: line {n} is longer than {TARGET_LINE_MAX:,} "
                                 "bytes; not a list of targets")
            yield raw.decode("utf-8", "surrogateescape")
    except OSError as exc:
        raise UsageError(f"--from {spec}: {exc.strerror or exc}") from None
