"""A plain `grit scan` without typer (start-up, issue 31).

Importing typer (its vendored click, inspect, pydantic's hooks, completion)
costs more than a whole scan of a small file, so the console script hands
the commonest command lines to ``run_scan`` (commands/scan_run.py) itself:
``grit [--debug] scan`` followed only by paths and the options

    --deep  --json  --sarif  --statistics  --isolated
    --output-format concise|full|json|sarif|github|grouped

in any order (``--debug`` anywhere before a ``--``, as commands/startup.py
hoists it).  ``parse`` declines (returns None) every other command line:
any other option or form (``-h``, ``--output-format=json``, ``--``, ``-``),
an empty argument, a format value that is not exactly a format's name, or
shell completion (``_GRIT_COMPLETE``); typer then parses it as before, so
its help, its errors and every other option stay typer's alone.

What ``parse`` gives is what typer hands the command function
(scan_cmds.scan_cmd) for the same command line; tests/test_startup.py holds
the two to each other on generated command lines.  ``main`` then ends the
command as typer and commands/_app.py do: the same exit codes, the same
one-line errors, Ctrl-C as exit 130, a closed stdout as exit 1.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from ..collector import paused
from ..report.options import OutputFormat
from .outcome import EXIT_INTERRUPTED, closed_pipe, ended, failed
from .startup import hoist_globals

# The flags taken here, each with the run_scan parameter it sets to True.
FLAGS = (("--deep", "deep"), ("--json", "as_json"), ("--sarif", "as_sarif"),
         ("--statistics", "statistics"), ("--isolated", "isolated"))


def parse(argv: list[str]) -> dict[str, Any] | None:
    """run_scan's keyword arguments for this command line (``debug``
    included), or None when typer must parse it."""
    if "_GRIT_COMPLETE" in os.environ:
        return None
    args = hoist_globals(argv)
    debug = False
    while args and args[0] == "--debug":
        debug, args = True, args[1:]
    if not args or args[0] != "scan":
        return None
    flags = dict(FLAGS)
    formats = {f.value: f for f in OutputFormat}
    kwargs: dict[str, Any] = {}
    paths: list[str] = []
    rest = iter(args[1:])
    for a in rest:
        if a in flags:
            kwargs[flags[a]] = True
        elif a == "--output-format":
            fmt = formats.get(next(rest, ""))
            if fmt is None:
                return None
            kwargs["output_format"] = fmt
        elif not a or a.startswith("-"):
            return None
        else:
            paths.append(a)
    return {"paths": paths or None, **kwargs,
            "debug": debug or bool(os.environ.get("GRIT_DEBUG"))}


def main(kwargs: dict[str, Any]) -> int:
    """Run ``grit scan`` with what ``parse`` gave and return the exit code,
    every error ended as commands/_app.py's ``main`` ends it."""
    debug = bool(kwargs["debug"])
    try:
        with paused():  # the scan's modules allocate objects that live until exit
            from .scan_run import run_scan
        try:
            code = run_scan(**kwargs)
        except KeyboardInterrupt:
            code = EXIT_INTERRUPTED  # typer's Exit(130)
        except EOFError:
            sys.stderr.write("\n")  # click's Abort, which _app.main ends as Ctrl-C
            code = EXIT_INTERRUPTED
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                closed_pipe()
            raise
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the last line of defence
        return failed(exc, debug)
    return ended(code)
