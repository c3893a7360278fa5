"""The console-script entry point (``grit``); the app is commands/_app.py.

Kept tiny because every ``grit`` process imports it first: ``--version`` is
answered by commands/startup.py without importing typer (or anything
heavy); every other command line, help included, goes to ``commands._app``.  The
app's names (``app``, ``register``) are still importable from here; they
load on first use.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .commands.startup import answer

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
    from .commands._app import main as app_main

    return app_main(args)


def run() -> None:
    """The console script: exit with ``main``'s code."""
    text = answer(sys.argv[1:])
    if text is not None:
        sys.stdout.write(text)
        sys.exit(0)
    from .collector import paused

    # typer's import allocates objects that live until exit: the cyclic
    # collector would walk them again and again (commands._app pauses it for
    # the command modules too)
    with paused():
        from .commands._app import run as app_run
    app_run()


def __getattr__(name: str) -> Any:
    if name in ("app", "register"):
        from .commands import _app

        return getattr(_app, name)
    raise AttributeError(f"module 'grit_scan.cli' has no attribute {name!r}")
