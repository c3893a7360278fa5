"""The `grit` typer app and the console-script entry point.

Command modules in this package register themselves on ``app``; ``main``
runs it: every error becomes one line on stderr and a defined exit code,
never a traceback (``--debug`` shows it).  Nothing here imports upward:
``grit_scan.cli`` re-exports ``main`` and ``run`` for the console script.
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from .._version import __version__
from ..codec.errors import GritError

app = typer.Typer(
    name="grit",
    help="Audit quantized model checkpoints against the GRIT v1 specification.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
)

EXIT_USAGE = 2
_DEBUG = {"on": False}


class UsageError(GritError):
    """A command-line usage error: exit 2."""


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"grit {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True,
        help="Print the version and exit.",
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show the traceback of internal errors.",
    ),
) -> None:
    """grit: GRIT v1 descriptors, checks and checkpoint scans."""
    _DEBUG["on"] = debug or bool(os.environ.get("GRIT_DEBUG"))


def debug_enabled() -> bool:
    return _DEBUG["on"]


def error_line(message: str) -> None:
    """One clear line on stderr (multi-line details are indented below it)."""
    sys.stderr.write(f"grit: error: {message}\n")


def register() -> None:
    from . import codec_cmds, codec_ops, rule_cmd, scan_cmds, sweep_cmd  # noqa: F401  (register)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: run the app, map exceptions to exit codes."""
    register()
    debug = "--debug" in (argv if argv is not None else sys.argv[1:]) or bool(
        os.environ.get("GRIT_DEBUG")
    )
    try:
        app(args=argv, prog_name="grit", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except GritError as exc:
        error_line(str(exc))
        if debug:
            traceback.print_exc()
        return EXIT_USAGE
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        error_line(f"internal error: {type(exc).__name__}: {exc} (run with --debug for details)")
        if debug:
            traceback.print_exc()
        return 70
    return 0


def run() -> None:
    sys.exit(main())
