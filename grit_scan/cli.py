"""The console-script entry point (``grit``); the app is commands/_app.py.

Kept tiny because every ``grit`` process imports it first: ``--version`` is
answered by commands/startup.py without importing typer (or anything
heavy); a plain ``grit scan`` (paths and a few options) is run by
commands/fast_scan.py, also without typer; every other command line, help
included, goes to ``commands._app``.  The
app's names (``app``, ``register``) are still importable from here; they
load on first use.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .commands.startup import answer, subcommand

if TYPE_CHECKING:
    from .commands._app import app, register

__all__ = ["app", "main", "register", "run"]


def main(argv: list[str] | None = None) -> int:
    """Run ``grit`` on ``argv`` (default: the process's) and return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = answer(args)
    if text is not None:
        sys.stdout.write(text)
        return 0
    plain = _plain_scan(args)
    if plain is not None:
        from .commands import fast_scan

        return fast_scan.main(plain)
    from .commands._app import main as app_main

    return app_main(args)


def run() -> None:
    """The console script: exit with ``main``'s code."""
    text = answer(sys.argv[1:])
    if text is not None:
        sys.stdout.write(text)
        sys.exit(0)
    plain = _plain_scan(sys.argv[1:])
    if plain is not None:
        _fast_scan(plain)
    from .collector import paused

    # typer's import allocates objects that live until exit: the cyclic
    # collector would walk them again and again (commands._app pauses it for
    # the command modules too)
    with paused():
        from .commands._app import run as app_run
    app_run()


def _plain_scan(args: list[str]) -> dict[str, Any] | None:
    """What commands/fast_scan.py makes of a ``grit scan`` command line, or
    None (not ``scan``, or not for it: typer's)."""
    if subcommand(args) != "scan":
        return None
    from .collector import paused

    with paused():  # as for typer's modules (commands/_app.py): what they make lives on
        from .commands.fast_scan import parse
    return parse(args)


def _fast_scan(plain: dict[str, Any]) -> None:
    """The console script's end for a plain scan, as commands/_app.py's
    ``run`` ends typer's: Ctrl-C handled, what is alive frozen, exit."""
    import gc
    import signal

    from .commands import fast_scan
    from .commands.outcome import on_sigint

    signal.signal(signal.SIGINT, on_sigint)
    code = fast_scan.main(plain)
    gc.freeze()  # as commands/_app.py's run: skipped by the last collections at exit
    sys.exit(code)


def __getattr__(name: str) -> Any:
    if name in ("app", "register"):
        from .commands import _app

        return getattr(_app, name)
    raise AttributeError(f"module 'grit_scan.cli' has no attribute {name!r}")
