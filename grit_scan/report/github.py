"""GitHub Actions workflow annotations (``--output-format github``).

One workflow command per finding, in the documented syntax
(https://docs.github.com/actions/reference/workflow-commands-for-github-actions)::

    ::error file=PATH,title=GRIT101 size_mismatch::MESSAGE

with the escaping of the Actions toolkit (``@actions/core`` command.ts):
in the message ``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``; in a property
value also ``:`` -> ``%3A`` and ``,`` -> ``%2C``.  Control and bidi characters
from files are shown as ``\\x1b``/``\\u202e`` first (escape.esc), so no
annotation can smuggle a second workflow command.  The summary and the next
step follow as plain log lines.
"""

from __future__ import annotations

from typing import TextIO

from ..rules.finding import Finding, Severity
from .escape import esc
from .options import RenderOptions
from .report import Report
from .sarif import repo_path
from .summary import ignored_lines, next_step, summary_line

COMMAND = {Severity.STRUCTURAL: "error", Severity.DISAGREEMENT: "error",
           Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    where = f" ({esc(f.tensor)})" if f.tensor else ""
    props = {"file": repo_path(f.path), "title": f"{f.code} {f.kind.value}{where}"}
    head = ",".join(f"{k}={escape_property(esc(v))}" for k, v in props.items())
    return f"::{COMMAND[f.severity]} {head}::{escape_data(esc(f.message))}"


def render(report: Report, out: TextIO, options: RenderOptions = RenderOptions()) -> None:
    for f in report.findings:
        out.write(annotation(f) + "\n")
    out.write(summary_line(report) + "\n")
    for line in ignored_lines(report):
        out.write(escape_data(esc(line)) + "\n")
    step = next_step(report)
    if step:
        out.write(f"Next: {escape_data(esc(step))}\n")
