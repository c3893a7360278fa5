"""The body of `grit scan`, without typer: what the command does once its
command line is parsed.

``commands.scan_cmds`` declares the command's options to typer and calls
``run_scan`` with what typer parsed; ``commands.fast_scan`` calls it for a
plain ``grit scan`` command line without importing typer at all (start-up,
issue 31).  Either way ``run_scan`` returns the exit code or raises
``UsageError``.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING, TextIO

from ..api import (
    SLOW_PATH,
    NoSuchPath,
    ReadMeter,
    RemoteOptions,
    changed_roots,
    load_settings,
    nothing_found,
    scan,
)
from ..codec.errors import GritError
from ..collector import paused
from ..config import Settings
from ..report.formats import OutputFormat, RenderOptions, render
from ..report.policy import NOTHING_PARSED, ExitPolicy
from ..report.report import Report
from .outcome import UsageError, error_line

if TYPE_CHECKING:
    from pathlib import Path  # in annotations only: pathlib stays off a plain scan's imports

PROGRESS_AFTER_ENV = "GRIT_PROGRESS_AFTER"  # seconds before the progress line shows


def _progress() -> _Progress | None:
    """The progress line, only when stderr is a terminal; plain under
    ``NO_COLOR`` (no escape code at all), never hidden by it."""
    if not sys.stderr.isatty():
        return None
    return _Progress(sys.stderr, color=not os.environ.get("NO_COLOR"))


class _Progress:
    """One transient progress line on stderr once a scan has run for
    PROGRESS_AFTER seconds (``GRIT_PROGRESS_AFTER`` overrides it): what is
    being done, files done and total, files/s, MB/s read and the elapsed
    time.  It is redrawn in place with a carriage return (no cursor escape
    codes), at most ten times a second, and erased when the scan ends.
    ``meter`` counts the scan's bytes (handed to ``scan``).  Not rich's
    progress: docs/architecture.md says why."""

    PROGRESS_AFTER = 1.0
    REDRAW = 0.1

    def __init__(self, stream: TextIO, color: bool) -> None:
        self.stream, self.color = stream, color
        self.start = time.monotonic()
        self.meter = ReadMeter()
        try:
            self.after = float(os.environ.get(PROGRESS_AFTER_ENV, self.PROGRESS_AFTER))
        except ValueError:
            self.after = self.PROGRESS_AFTER
        self.shown = False
        self.drawn = 0.0
        self.width = 0

    def update(self, label: str, done: int, total: int) -> None:
        now = time.monotonic()
        elapsed = now - self.start
        if elapsed < self.after or (self.shown and now - self.drawn < self.REDRAW
                                    and done < total):
            return
        self.shown, self.drawn = True, now
        secs = max(elapsed, 1e-6)
        mb = self.meter.total / 1e6
        rate = f"{done / secs:.0f} files/s  {mb / secs:.1f} MB/s"
        clock = f"{int(elapsed) // 60}:{int(elapsed) % 60:02d}"
        plain = f"{label} {done}/{total} files  {rate}  {clock}"
        plain = plain[:max(self._columns() - 1, 20)]
        text = plain
        if self.color:
            head, _, rest = plain.partition(" ")
            text = f"\x1b[1m{head}\x1b[0m {rest}"
        self.stream.write("\r" + text + " " * max(0, self.width - len(plain)))
        self.stream.flush()
        self.width = len(plain)

    def _columns(self) -> int:
        """The terminal's width (a line longer than it would not be redrawn
        in place); ``COLUMNS`` or 80 when the terminal does not say."""
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError):
            cols = 0
        if cols > 0:
            return cols
        import shutil  # a terminal that does not say its width (start-up: issue 31)

        return shutil.get_terminal_size().columns

    def stop(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()



def run_scan(paths: list[str] | None = None, deep: bool = False,
             output_format: OutputFormat = OutputFormat.CONCISE, as_json: bool = False,
             as_sarif: bool = False, statistics: bool = False,
             output_file: Path | None = None, policy: str | None = None,
             fail_on: str | None = None, config: str | None = None, isolated: bool = False,
             changed: bool = False, select: str | None = None, ignore: str | None = None,
             timeout: float = 30.0, retries: int = 3, max_remote_bytes: int = 1 << 30,
             jobs: int | None = None, debug: bool = False) -> int:
    """`grit scan` with its options' values (scan_cmds.scan_cmd's parameters,
    whose defaults these are; tests/test_startup.py holds the two to each
    other) and ``debug`` (``--debug``): scan, write the report, and return the
    exit code.  A bad option value raises ``UsageError``."""
    fmt = output_format_of(output_format, as_json, as_sarif)
    if statistics and fmt in (OutputFormat.SARIF, OutputFormat.GITHUB):
        raise UsageError("--statistics works with concise, full, grouped or json")
    if policy is not None and policy not in {p.value for p in ExitPolicy}:
        raise UsageError("--exit-policy takes graded or simple")
    if jobs is not None and jobs < 1:
        raise UsageError("--jobs takes a positive number")
    if timeout <= 0 or retries < 0 or max_remote_bytes < 0:
        raise UsageError("--timeout takes a positive number, --retries and "
                         "--max-remote-bytes a non-negative one")
    if config is not None and isolated:
        raise UsageError("--config and --isolated are exclusive")
    targets = paths or ["."]
    try:
        settings = load_settings(targets, config, isolated)
    except GritError as exc:
        raise UsageError(str(exc)) from None
    exit_policy = ExitPolicy(policy or settings.exit_policy or ExitPolicy.GRADED)
    if changed:
        # pre-commit puts the file names after the hook's entry (which ends
        # with ``--``): an option the user added with ``args:`` arrives as
        # a "file" that does not exist, and is said to, never dropped
        stray = [t for t in targets if t.startswith("-") and not os.path.lexists(t)]
        if stray:
            raise UsageError(f"--changed: {stray[0]!r} is not a file (options go before "
                             "`--`; in a pre-commit hook, in its entry:)")
        targets, refused = changed_roots(targets)
        for r in refused:
            error_line(f"{r}: not scanned: its model is a symbolic link out of the "
                       "repository (the working directory)", "warning")
        if not targets:
            sys.stdout.write("grit: no model among the changed files; nothing to scan\n")
            sys.stdout.flush()  # as click's echo did
            return 0
    # The collector stays paused from the scan to the end of the report (api.scan
    # and render pause it each, and in between it would walk every object the
    # scan made, once or twice: docs/performance.md); the report is let go before it runs
    # again, so it finds only what outlives the command.
    with paused():
        code = _scan_and_emit(targets, fmt, exit_policy, statistics, output_file, deep,
                              select, ignore, jobs, fail_on, settings, debug,
                              RemoteOptions(timeout=timeout, retries=retries,
                                            budget=max_remote_bytes))
    return code


def _scan_and_emit(targets: list[str], fmt: OutputFormat, exit_policy: ExitPolicy,
                   statistics: bool, output_file: Path | None, deep: bool,
                   select: str | None, ignore: str | None, jobs: int | None,
                   fail_on: str | None, settings: Settings, debug: bool,
                   remote: RemoteOptions) -> int:
    """Scan, write the report, and return the exit code."""
    progress = read_progress = None
    bar = _progress()
    if bar is not None:
        def read_progress(done: int, total: int) -> None:
            bar.update("reading", done, total)

        if deep:
            def progress(done: int, total: int) -> None:
                bar.update("--deep", done, total)
    try:
        report = scan(targets, deep=deep, select=select, ignore=ignore, jobs=jobs,
                      debug=debug, progress=progress, read_progress=read_progress,
                      fail_on=fail_on, settings=settings, remote=remote,
                      meter=bar.meter if bar is not None else None)
    except NoSuchPath as exc:
        error_line(str(exc))
        return NOTHING_PARSED[exit_policy]
    except GritError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if bar is not None:
            bar.stop()
    for tb in report.tracebacks:
        sys.stderr.write(tb)
    if SLOW_PATH in report.messages:  # the slow path is never silent, whatever the format
        sys.stderr.write(f"grit: warning: {SLOW_PATH}\n")
    empty = nothing_found(report)
    if empty is not None:
        error_line(empty)
        # what was found on the way (a link out of the root) is still shown
        if fmt not in (OutputFormat.JSON, OutputFormat.SARIF) and not report.findings:
            return report.exit_code_for(exit_policy)
    emit(report, fmt, RenderOptions(policy=exit_policy, statistics=statistics), output_file)
    return report.exit_code_for(exit_policy)


def output_format_of(fmt: OutputFormat, as_json: bool, as_sarif: bool) -> OutputFormat:
    """``--json`` and ``--sarif`` are aliases of ``--output-format``."""
    aliases = [f for f, on in ((OutputFormat.JSON, as_json), (OutputFormat.SARIF, as_sarif))
               if on]
    if len(aliases) > 1:
        raise UsageError("--json and --sarif are exclusive")
    if aliases and fmt not in (OutputFormat.CONCISE, aliases[0]):
        raise UsageError(f"--{aliases[0].value} and --output-format {fmt.value} are exclusive")
    return aliases[0] if aliases else fmt


def emit(report: Report, fmt: OutputFormat, options: RenderOptions,
         output_file: Path | None = None) -> None:
    """Render ``report`` on stdout, or into ``output_file`` (never coloured)."""
    if output_file is None:
        render(report, fmt, sys.stdout, options)
        return
    read = _read_by_scan(report, output_file)
    if read is not None:
        raise UsageError(f"--output-file: {output_file} is {read}, which this scan read; "
                         "the report is never written over what it reads")
    try:
        with open(output_file, "w", encoding="utf-8") as fh:
            render(report, fmt, fh, replace(options, color=False))
    except OSError as exc:
        raise UsageError(f"--output-file: cannot write {output_file}: "
                         f"{exc.strerror or exc}") from None


def _read_by_scan(report: Report, output_file: Path) -> str | None:
    """The path of a file the scan read that ``output_file`` is (the same
    device and inode, through any link), or None."""
    try:
        st = os.stat(output_file)
    except OSError:
        return None  # a new file
    for a in report.artifacts:
        try:
            sa = os.stat(a.path)
        except (OSError, ValueError):
            continue
        if (sa.st_dev, sa.st_ino) == (st.st_dev, st.st_ino):
            return a.path
    return None


