"""What ``grit`` answers before typer loads, and the argv helpers.

``grit --version`` is answered here from the standard library only: typer,
numpy and gguf are never imported for it.  Help is typer's, rendered from the
registered commands when it is asked for.

This module imports nothing heavy; ``commands._app`` takes the argv helpers
from it, so there is one definition of each.
"""

from __future__ import annotations

from .._version import __version__

GLOBAL_FLAGS = ("--debug",)  # also accepted after the subcommand

# The module defining each command, so that running one command imports only
# its module; tests/test_docs.py holds it to the app.
COMMAND_OF = {"scan": "scan_cmds", "manifest": "scan_cmds", "sweep": "sweep_cmd",
              "report": "report_cmd",
              "show": "show_cmd",
              "rule": "rule_cmd", "grade": "codec_cmds", "check": "codec_cmds",
              "explain": "codec_cmds", "decode": "codec_ops", "encode": "codec_ops",
              "vectors": "codec_ops"}


def version_text() -> str:
    """``grit X.Y.Z`` and whether the compiled helpers are in use: the slow
    path is never silent."""
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


def answer(argv: list[str]) -> str | None:
    """What ``grit`` prints on stdout (exit 0) for this command line when it
    needs no command module (``--version``), else None."""
    args = hoist_globals(argv)
    if args and args[0] == "--version" and subcommand(args) is None:
        return version_text() + "\n"
    return None
