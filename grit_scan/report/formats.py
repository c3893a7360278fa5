"""The output formats of ``grit scan`` and the one dispatch that renders them.

Every format ends with the same summary ("Found 7 findings: 1 structural,
3 disagreements, 3 warnings in 3 of 3 files") and, when there is something
to do, a next step: the exact ``grit explain`` command a finding suggests,
or ``grit rule KIND`` for the most serious finding.  The machine formats
carry both as fields (JSON ``summary.text`` and ``next_step``; SARIF
``runs[0].properties``) so their documents stay parseable.
"""

from __future__ import annotations

from typing import Any, TextIO

from ..collector import paused
from .options import OutputFormat as OutputFormat  # re-exported: the formats' names
from .options import RenderOptions as RenderOptions  # re-exported
from .report import Report
from .summary import next_step as next_step  # re-exported
from .summary import statistics, summary_line


def dumps(doc: Any) -> str:
    """A JSON document as printed: ASCII only, so no raw control byte or bidi
    character from a file ever reaches the output (they appear as ``\\u001b``)."""
    from .json_format import dumps as json_text  # the --json module loads when JSON is written

    return json_text(doc) + "\n"


def render(report: Report, fmt: OutputFormat, out: TextIO,
           options: RenderOptions = RenderOptions()) -> None:
    """Write ``report`` to ``out`` in ``fmt``.

    The cyclic garbage collector is paused while it writes, as api.scan
    pauses it while reading: the JSON writer holds per-tensor tuples a batch
    (and an artifact) at a time while the whole model is alive, and each
    time a generation filled the collector would walk the model's hundreds
    of thousands of objects again (performance: a third of the writing)."""
    with paused():
        _render(report, fmt, out, options)


def _render(report: Report, fmt: OutputFormat, out: TextIO, options: RenderOptions) -> None:
    if fmt is OutputFormat.JSON:
        if options.statistics:
            out.write(dumps({"statistics": statistics(report.findings),
                             "summary": summary_line(report), "ignored": report.ignored,
                             "next_step": next_step(report)}))
        else:
            # written as it is built: a large report's text never exists whole
            from .json_format import dump

            dump(report.to_json(lazy=True), out)
            out.write("\n")
        return
    if fmt is OutputFormat.SARIF:
        from .sarif import to_sarif

        out.write(dumps(to_sarif(report)))
        return
    if fmt is OutputFormat.GITHUB:
        from .github import render as render_github

        render_github(report, out, options)
        return
    from . import text

    text.render_format(report, fmt, out, options)
