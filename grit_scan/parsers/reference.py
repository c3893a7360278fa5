"""The reference loader: what the official ``safetensors`` library makes of a
local file.

``safe_open`` maps the file and parses its header (no tensor is read). grit
asks it where grit itself found a file broken (is grit stricter than the
library that loaders use?) and, under ``--deep``, for every local file
(does the library refuse a file grit reads?). The library is given the
file grit already opened (``/proc/self/fd/N``), so it reads exactly what
grit read and never follows a path of its own. Remote sources, and systems
without a file-descriptor directory, are not checked (``None``).
"""

from __future__ import annotations

import os
from typing import NamedTuple

MESSAGE_CHARS = 300  # the library's message, cut to this many characters


class Verdict(NamedTuple):
    """``opens``: the library opens the file; ``error``: its message when not."""

    opens: bool
    error: str = ""


def _fd_path(fd: int) -> str | None:
    for path in (f"/proc/self/fd/{fd}", f"/dev/fd/{fd}"):
        if os.path.exists(path):
            return path
    return None


def safetensors_verdict(source: object) -> Verdict | None:
    """The library's verdict on the local file behind ``source`` (a
    ``fileio.SafeFile``), or None when it cannot be asked."""
    fd = getattr(source, "fd", None)
    if type(fd) is not int or fd < 0:
        return None
    path = _fd_path(fd)
    if path is None:
        return None
    try:
        from safetensors import safe_open
    except ImportError:  # a broken install: say nothing rather than guess
        return None
    try:
        with safe_open(path, framework="numpy"):
            pass
    except Exception as exc:  # noqa: BLE001 - the library's refusal, whatever its type
        text = " ".join(str(exc).split()) or type(exc).__name__
        if len(text) > MESSAGE_CHARS:
            text = text[:MESSAGE_CHARS] + "..."
        return Verdict(False, text)
    return Verdict(True)
