"""The `grit` typer app and the console-script entry point.

Command modules in this package register themselves on ``app``; ``main``
runs it: every error, click's usage errors included, becomes one line on
stderr in one style (``grit: error: ...``) and a defined exit code, never a
traceback (``--debug`` shows it); the lines and codes are outcome.py's,
shared with fast_scan.py.  Nothing here imports upward: ``grit_scan.cli``,
the console script, answers ``--version`` itself (startup.py), runs a plain
``grit scan`` without typer (fast_scan.py) and hands every other command
line, help included, to ``main``/``run`` here.
"""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

import gc
import os
import signal
import sys

import typer
import typer.core
import typer.main
from typer.exceptions import Abort, Exit

from ..collector import paused
from .coercion import direct_command
from .outcome import EXIT_INTERRUPTED, ended, failed, on_sigint

# re-exported: the command modules take them from here
from .outcome import EXIT_USAGE as EXIT_USAGE
from .outcome import UsageError as UsageError
from .outcome import error_line as error_line
from .startup import COMMAND_OF, hoist_globals, version_text
from .startup import subcommand as _subcommand

EPILOG = """\b
Examples:
  grit scan models/                      audit a tree (concise, one line per finding)
  grit scan --output-format full model.safetensors
  grit scan --output-format sarif --output-file grit.sarif .
  grit scan --output-format github .     annotations in a GitHub Actions log
  grit rule size_mismatch                what a finding means and how to fix it
  grit explain A.safetensors::W B.gguf::W

\b
Exit codes of grit scan (--exit-policy graded, the default):
  0 clean   1 structural   2 disagreement   3 warnings only   4 nothing parsed
  (--exit-policy simple: 0 clean, 1 any finding, 2 nothing parsed)
  Every command: 64 usage error, 70 internal error, 130 interrupted.

\b
Every finding kind: grit rule --all; one kind: grit rule KIND.
"""

app = typer.Typer(
    name="grit",
    help="Audit quantized model checkpoints against the GRIT v1 specification.",
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_DEBUG = {"on": False}


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True,
        help="Print the version and exit.",
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show the traceback of internal errors (also after the "
                               "command: grit scan --debug).",
    ),
) -> None:
    """grit: GRIT v1 descriptors, checks and checkpoint scans."""
    _DEBUG["on"] = debug or bool(os.environ.get("GRIT_DEBUG"))


def debug_enabled() -> bool:
    return _DEBUG["on"]


# Command modules, in the order help lists them: scan first.
COMMAND_MODULES = ("scan_cmds", "sweep_cmd", "report_cmd", "show_cmd", "rule_cmd", "codec_cmds",
                   "codec_ops")


# COMMAND_OF (startup.py) names the module defining each command, so that
# running one command imports only its module (start-up cost, docs/performance.md).


def register(only: str | None = None) -> None:
    """Import the command modules (each registers its commands on ``app``);
    ``only``: just the module of that command."""
    import importlib

    for name in COMMAND_MODULES if only is None else (only,):
        importlib.import_module(f"{__package__}.{name}")


def _no_type_name(ctx: object = None) -> None:
    return None


def _tidy(cmd: typer.core.TyperCommand | typer.core.TyperGroup) -> None:
    """Help without typer's type names (``<list[str]>``, ``<str>``) and with
    plain argument metavars (``[PATH]...``, not ``[[PATH]...]...``); values
    that need no conversion skip pydantic (coercion.py)."""
    direct_command(cmd)
    for p in cmd.params:
        if isinstance(p, typer.core.TyperArgument):
            setattr(p, "display_type_rich", _no_type_name)  # noqa: B010 - a method override
            if p.metavar:
                p.metavar = p.metavar.strip("[]").removesuffix("...").strip("[]")
    for sub in getattr(cmd, "commands", {}).values():
        _tidy(sub)


def command(args: list[str] | None = None) -> typer.core.TyperGroup:
    """The click command tree of ``grit`` (registered, tidied); with ``args``,
    only as much of it as that command line needs."""
    sub = _subcommand(args) if args is not None and "_GRIT_COMPLETE" not in os.environ else None
    register(COMMAND_OF[sub] if sub is not None else None)
    _in_help_order()
    cmd = typer.main.get_command(app)
    assert isinstance(cmd, typer.core.TyperGroup)  # the app has a callback: a group
    _tidy(cmd)
    return cmd


def _in_help_order() -> None:
    """The registered commands in COMMAND_MODULES order, whatever order their
    modules were imported in (a process that ran ``grit rule`` before
    ``grit --help`` listed rule before sweep); stable within a module."""
    rank = {f"{__package__}.{m}": k for k, m in enumerate(COMMAND_MODULES)}
    app.registered_commands.sort(
        key=lambda c: rank.get(getattr(c.callback, "__module__", ""), len(rank)))


# Click's usage errors (an unknown option, a bad value, a missing argument)
# exit 2; its other errors (a file that cannot be opened) exit 1.
CLICK_USAGE = 2


def _usage_error(exc: typer.TyperException) -> int:
    """Click's errors, which typer's raise as TyperExceptions: a usage error
    (click's exit code 2) exits 64 with a pointer to the command's help; a
    usage error whose message is the command's help is a command given no
    arguments that prints its help (``no_args_is_help``): exit 0."""
    message = exc.format_message()
    ctx = getattr(exc, "ctx", None)
    if exc.exit_code != CLICK_USAGE:
        error_line(message)
        return exc.exit_code
    if ctx is not None and message == ctx.get_help():
        sys.stdout.write(message + "\n")
        return 0
    error_line(message)
    if ctx is not None:
        sys.stderr.write(f"  (see '{ctx.command_path} --help')\n")
    return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    """Console-script entry: run the app, map exceptions to exit codes."""
    args = hoist_globals(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args or bool(os.environ.get("GRIT_DEBUG"))
    if args and args[0] == "--version" and _subcommand(args) is None:
        sys.stdout.write(version_text() + "\n")  # no command module: start-up stays cheap
        return 0
    try:
        rv = _command_paused_gc(args).main(args=args, prog_name="grit", standalone_mode=False)
    except Exit as exc:
        rv = exc.exit_code
    except typer.TyperException as exc:
        return _usage_error(exc)
    except (Abort, KeyboardInterrupt):
        rv = EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        return failed(exc, debug)
    # typer turns KeyboardInterrupt into Exit(130)
    return ended(rv if isinstance(rv, int) else 0)


def _command_paused_gc(args: list[str]) -> typer.core.TyperGroup:
    """``command(args)`` with the cyclic garbage collector paused: importing
    the command modules allocates tens of thousands of objects that live
    until exit, and the collector would walk them again and again (api.scan
    pauses it for header records, for the same reason)."""
    with paused():
        return command(args)


def run() -> None:
    signal.signal(signal.SIGINT, on_sigint)
    code = main()
    # What is still alive now lives until exit: frozen, it is skipped by the
    # interpreter's last garbage collections at shutdown (start-up cost, docs/performance.md)
    gc.freeze()
    sys.exit(code)
