"""Small helpers shared by the command modules."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from ._app import UsageError


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def parse_int_list(
    text: str, option: str, *, count: int | None = None, minimum: int | None = None
) -> list[int]:
    """Parse 'a,b,c' into integers, or raise a usage error naming the option."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    try:
        vals = [int(p, 0) for p in parts]
    except ValueError:
        raise UsageError(f"{option} takes comma-separated integers; got {text!r}") from None
    if count is not None and len(vals) != count:
        raise UsageError(f"{option} takes {count} integers; got {len(vals)}")
    if minimum is not None and any(v < minimum for v in vals):
        raise UsageError(f"{option}: values must be >= {minimum}")
    if option == "--shape":
        if not vals:
            raise UsageError("--shape needs at least one extent")
        _check_shape(vals)
    return vals


INT64_MAX = (1 << 63) - 1


def _check_shape(dims: list[int]) -> None:
    """GRIT hashes a shape as int64 extents (§6.4): every extent, and the
    product of the non-zero ones, must fit int64.  Checked step by step, so
    300 large extents are one usage line, never a product thousands of
    digits long (whose text Python refuses to make)."""
    n = 1
    for d in dims:
        if d.bit_length() > 63:
            raise UsageError("--shape: an extent exceeds int64 (§6.4)")
        if d:
            n *= d
    # at most 63 bits per extent: the product of a command line's extents is
    # printed only while its text stays short
    if n > INT64_MAX:
        what = (f"has {n:,} elements, more than int64 holds" if n.bit_length() <= 1024
                else f"has {len(dims)} extents whose product exceeds int64")
        raise UsageError(f"--shape {what} (§6.4: a shape is hashed as int64 extents)")


def complete_tensor(incomplete: str) -> list[str]:
    """Shell completion of ``FILE::PREFIX``: ``FILE::NAME`` for each
    quantised tensor of FILE whose name starts with PREFIX (the header only is
    read; an unreadable file offers nothing)."""
    if "::" not in incomplete:
        return []
    path, _, prefix = incomplete.rpartition("::")
    if not path:
        return []
    from ..api import quantized_names

    return [f"{path}::{n}" for n in quantized_names(path) if n.startswith(prefix)]


def read_regular(path: Path, what: str, limit: int | None = None) -> bytes:
    """A regular file's bytes.  It is opened without blocking (a FIFO is
    refused, never waited on), must be a regular file (``/dev/zero`` never
    ends), and is read no further than the size its descriptor gives when
    opened (or ``limit``), so a file growing while read cannot make it read
    more.  Anything else is one usage line naming ``what``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UsageError(f"{what}: {exc.strerror or exc}: {path}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{what}: not a regular file: {path}")
        size = st.st_size
        if limit is not None and size > limit:
            raise UsageError(f"{what}: {path} is {size:,} bytes; at most {limit:,} are read")
        chunks: list[bytes] = []
        got = 0
        while got < size:
            chunk = os.read(fd, min(1 << 24, size - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{what}: {exc.strerror or exc}: {path}") from None
    finally:
        os.close(fd)
