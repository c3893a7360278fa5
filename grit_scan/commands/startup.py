"""What ``grit`` answers before typer loads (start-up cost, issue 15).

``grit --version`` and help (``grit``, ``grit --help``/``-h``, ``grit CMD
--help``/``-h``) are answered here from the standard library only: typer,
click, numpy and gguf are never imported for them.  Help is the text the
real typer app prints, rendered at 80 columns by
``python -m grit_scan.commands.help_gen`` into ``help_text.py``;
tests/test_startup.py fails when that module is stale.

Click wraps help at ``min(terminal columns, 80) - 2``, so the text is the
same for every width of 80 columns or more (and for a pipe or a file, where
the width falls back to 80).  A narrower terminal, a shell-completion
request, a stdout that cannot encode the text (click would write UTF-8
anyway) or any other command line goes to typer (``answer`` returns None).

This module imports nothing heavy; ``commands._app`` takes the argv helpers
from it, so there is one definition of each.
"""

from __future__ import annotations

import os
import sys

from .._version import __version__

GLOBAL_FLAGS = ("--debug",)  # also accepted after the subcommand
HELP_FLAGS = ("--help", "-h")
HELP_WIDTH = 80  # click's max help width: any terminal this wide or wider gets the same text

# The module defining each command, so that running one command imports only
# its module; tests/test_docs.py holds it to the app.
COMMAND_OF = {"scan": "scan_cmds", "manifest": "scan_cmds", "sweep": "sweep_cmd",
              "report": "report_cmd",
              "show": "show_cmd",
              "rule": "rule_cmd", "grade": "codec_cmds", "check": "codec_cmds",
              "explain": "codec_cmds", "decode": "codec_ops", "encode": "codec_ops",
              "vectors": "codec_ops"}

# Environment that changes what help prints (typer's completion options) or
# makes the command line a completion request, not a command.
_TYPER_ENV = ("_GRIT_COMPLETE", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION")


def version_text() -> str:
    """``grit X.Y.Z`` and whether the compiled helpers are in use: the slow
    path is never silent (issue 15)."""
    from ..codec.fnv import compiled_backend

    helpers = ("compiled helpers: in use" if compiled_backend() else
               "compiled helpers: not built; pure-Python fallback (digests and GGUF string "
               "skipping are slower)")
    return f"grit {__version__}\n{helpers}"


def subcommand(args: list[str]) -> str | None:
    """The command a command line runs, when it names one we know."""
    for a in args:
        if not a.startswith("-"):
            return a if a in COMMAND_OF else None
    return None


def hoist_globals(argv: list[str]) -> list[str]:
    """Move global flags given after the subcommand (``grit scan --debug``)
    to the front, where click expects them.  Nothing after ``--`` moves."""
    end = argv.index("--") if "--" in argv else len(argv)
    flags = [a for a in argv[:end] if a in GLOBAL_FLAGS]
    rest = [a for i, a in enumerate(argv) if i >= end or a not in GLOBAL_FLAGS]
    return flags + rest


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` (what click wraps help to),
    without importing shutil, which loads lzma, bz2 and zlib."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def help_key(args: list[str]) -> str | None:
    """The command whose help this command line asks for ('' for the
    top level), when it is one the pre-rendered text answers."""
    if not args:
        return ""  # no_args_is_help
    if len(args) == 1 and args[0] in HELP_FLAGS:
        return ""
    if len(args) == 2 and args[0] in COMMAND_OF and args[1] in HELP_FLAGS:
        return args[0]
    return None


def answer(argv: list[str]) -> str | None:
    """What ``grit`` prints on stdout (exit 0) for this command line when it
    needs no command module, else None."""
    args = hoist_globals(argv)
    if args and args[0] == "--version" and subcommand(args) is None:
        return version_text() + "\n"
    key = help_key(argv)
    if key is None or any(v in os.environ for v in _TYPER_ENV):
        return None
    if terminal_columns() < HELP_WIDTH:
        return None
    from .help_text import HELP

    text = HELP.get(key)
    return text if text is not None and _encodable(text) else None


def _encodable(text: str) -> bool:
    """Whether stdout takes ``text`` as it is.  Click writes UTF-8 past a
    stream it considers misconfigured (``PYTHONIOENCODING=ascii``): that
    case, and any stdout that cannot encode the help, is left to click."""
    try:
        text.encode(getattr(sys.stdout, "encoding", None) or "")
    except (UnicodeError, LookupError):
        return False
    return True
