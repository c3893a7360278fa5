"""How a ``grit`` command line ends, without typer: the exit codes, the
usage error, the one-line message on stderr and the Ctrl-C handler.

``commands._app`` (the typer app) and ``commands.fast_scan`` (a plain
``grit scan``, which never imports typer) both end here, so the two give
the same lines and codes.  This module imports nothing from typer.
"""

from __future__ import annotations

import errno
import os
import sys
from types import FrameType
from typing import Any, TextIO

from ..codec.errors import GritError

# A usage error (unknown option, bad value) exits 64 (sysexits EX_USAGE), a
# code no finding class uses (docs/exit-codes.md), so a CI script can tell a
# mistyped flag from a finding.
EXIT_USAGE = 64
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


class UsageError(GritError):
    """A command-line usage error: exit 64."""


def error_line(message: str, level: str = "error") -> None:
    """One clear line on stderr (multi-line details are indented below it).
    Control and bidi characters, which may come from a file, are escaped."""
    from ..report.escape import esc

    lines = message.split("\n")
    sys.stderr.write(f"grit: {level}: " + "\n".join(esc(x) for x in lines) + "\n")


def failed(exc: Exception, debug: bool) -> int:
    """How a command that raised ``exc`` ends: a GritError is the user's
    (its message, exit 64), anything else an internal error (exit 70);
    with ``debug`` the traceback follows the line."""
    if isinstance(exc, GritError):
        error_line(str(exc))
        code = EXIT_USAGE
    else:
        error_line(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        code = EXIT_INTERNAL
    if debug:
        import traceback  # only for --debug: a plain scan never loads it

        traceback.print_exc()
    return code


def ended(code: int) -> int:
    """``code``, said on stderr when it is Ctrl-C's."""
    if code == EXIT_INTERRUPTED:
        error_line("interrupted")
    return code


def on_sigint(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C: one line and exit 130 now, without waiting for worker threads
    (a --jobs pool would otherwise finish its files first)."""
    try:
        error_line("interrupted")
        sys.stderr.flush()
    finally:
        os._exit(EXIT_INTERRUPTED)


class _Pacified:
    """A stream whose ``flush`` ignores a closed pipe (EPIPE), as click's
    main leaves stdout and stderr after ``grit scan ... | head``: the
    interpreter's last flush at exit then prints nothing more."""

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def closed_pipe() -> None:
    """What click's main does when the command hits a closed pipe: both
    streams pacified, exit 1."""
    sys.stdout = _Pacified(sys.stdout)
    sys.stderr = _Pacified(sys.stderr)
    sys.exit(1)
