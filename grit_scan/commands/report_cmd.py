"""`grit report`: a sweep's JSON lines (or ``grit scan --json`` reports) as a
self-contained HTML page or a Markdown summary.

The inputs are read here; ``report.page`` counts and renders.  An input is
read whole and parsed as JSON: a file that is one JSON object is a scan
report (with a ``report_version``) or a one-line sweep; anything else is
read as JSON lines, one sweep result each.  A line that is not a sweep
result is skipped with a warning on stderr (a torn last line, left by a
killed sweep, silently).
"""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

import enum
import json
import os
import sys
from pathlib import Path
from typing import Any

import typer

from .._version import __version__
from ..api import rules
from ..report.page.model import Target, diff, scan_report_line, summarise, target_of
from ..report.page.text import shown
from ._app import UsageError, app, error_line

# The exit code when an input holds no result at all (as `grit scan` when
# nothing could be parsed; docs/exit-codes.md).
EXIT_NOTHING_READ = 4
MAX_WARNINGS = 10  # skipped lines named on stderr per input; the rest are counted


class PageFormat(str, enum.Enum):
    HTML = "html"
    MD = "md"


class NothingRead(Exception):
    """An input that cannot be read or holds no sweep result."""


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def read_results(path: Path) -> list[Target]:
    """The results of one input (a scan report is one); each line is made a
    record as it is parsed, so memory follows the records, not the JSON."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise NothingRead(f"{path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NothingRead(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                          ) from None
    del raw
    whole = _parse(text)
    if isinstance(whole, dict):
        if "target" in whole:
            return [target_of(whole)]
        if "report_version" in whole:
            return [target_of(scan_report_line(whole, str(path)))]
        raise NothingRead(f"{path}: a JSON object that is neither a sweep result nor a "
                          "grit scan --json report")
    del whole
    lines = text.split("\n")
    del text
    results: list[Target] = []
    skipped = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        obj = _parse(line)
        lines[number - 1] = ""
        if isinstance(obj, dict) and isinstance(obj.get("target"), str):
            results.append(target_of(obj))
            continue
        if number == len(lines):
            continue  # no newline after it: a line torn by a killed sweep
        skipped += 1
        if skipped <= MAX_WARNINGS:
            sys.stderr.write(f"grit: warning: {shown(str(path))}:{number}: not a sweep "
                             "result (a JSON object with a \"target\"); skipped\n")
    if skipped > MAX_WARNINGS:
        sys.stderr.write(f"grit: warning: {shown(str(path))}: {skipped} lines skipped in all\n")
    if not results:
        raise NothingRead(f"{path}: no sweep result or scan report in it")
    return results


def read_targets(paths: list[Path]) -> list[Target]:
    """Every input's results in order; a target given twice keeps its last
    result, in the place of its first."""
    by_name: dict[str, Target] = {}
    for p in paths:
        for t in read_results(p):
            by_name[t.target] = t
    return list(by_name.values())


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@app.command("report")
def report_cmd(
    inputs: list[Path] = typer.Argument(
        ..., metavar="INPUT...",
        help="Sweep JSON lines (grit sweep --out) or grit scan --json reports."),
    out: Path | None = typer.Option(None, "--out", metavar="FILE",
                                    help="Write the page here (default: stdout)."),
    fmt: PageFormat = typer.Option(PageFormat.HTML, "--format", metavar="html|md",
                                   help="html: a self-contained page; md: a Markdown "
                                        "summary for an issue."),
    baseline: list[Path] | None = typer.Option(
        None, "--baseline", metavar="OLD",
        help="An earlier sweep (repeatable): add its new, fixed and changed findings."),
) -> int:
    """Turn a sweep (or scan reports) into an HTML page or a Markdown summary."""
    if out is not None and any(_same_file(out, p) for p in [*inputs, *(baseline or [])]):
        raise UsageError(f"--out {out} is one of the inputs; grit never writes to what it reads")
    try:
        targets = read_targets(inputs)
        old = read_targets(baseline) if baseline else None
    except NothingRead as exc:
        error_line(str(exc))
        return EXIT_NOTHING_READ
    summary = summarise(targets)
    changes = diff(old, targets) if old is not None else None
    names = [str(p) for p in inputs]
    if fmt is PageFormat.MD:
        from ..report.page.markdown import render_markdown

        text = render_markdown(targets, summary, names, __version__, changes)
    else:
        from ..report.page.html import RuleText, render_html

        texts = [RuleText(r.code, r.name, r.severity.value, r.summary, r.doc) for r in rules()]
        text = render_html(targets, summary, texts, names, __version__, changes,
                           [str(p) for p in baseline or []])
    if out is None:  # UTF-8 whatever the locale: the page declares it
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    else:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--out {out}: {exc.strerror or exc}") from None
        sys.stderr.write(f"grit: wrote {shown(str(out))} ({summary.targets} targets)\n")
    return 0
