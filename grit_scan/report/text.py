"""Rich text rendering: a summary table per artifact, then findings grouped
by severity with their explanations and explain diffs.  No colour when
NO_COLOR is set or stdout is not a terminal (rich decides both)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..rules.finding import Severity
from .json_format import artifact_summary, listed
from .policy import ExitPolicy
from .report import Report


def clean(s: str) -> str:
    """Control characters (ANSI escapes, NUL, newlines) in names from files
    are shown escaped, never sent to the terminal."""
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)


STYLE = {Severity.STRUCTURAL: "bold red", Severity.DISAGREEMENT: "bold yellow",
         Severity.WARNING: "yellow", Severity.INFO: "dim"}
TITLE = {Severity.STRUCTURAL: "Structural", Severity.DISAGREEMENT: "Disagreements",
         Severity.WARNING: "Warnings", Severity.INFO: "Information"}


def _grades(s: dict[str, Any]) -> str:
    parts = []
    for g in s["grades"][:6]:
        label = (g["name"] or g["grade"]).removeprefix("GRADE_")
        parts.append(f"{label} x{g['count']}")
    if len(s["grades"]) > 6:
        parts.append(f"+{len(s['grades']) - 6} more")
    if s.get("declared_mix"):
        parts.append(f"(declared mix {s['declared_mix']})")
    return ", ".join(parts) or "-"


def render(report: Report, console: Console,
           policy: ExitPolicy = ExitPolicy.GRADED) -> None:
    table = Table(title="Artifacts", show_lines=False, expand=False)
    for col in ("file", "format", "tensors", "quantised", "grades", "descriptor sources"):
        table.add_column(col, overflow="fold")
    for a in listed(report):
        s = artifact_summary(a)
        src = ", ".join(f"{k} {v}" for k, v in s["sources"].items()) or "-"
        fmt_ = a.format.value if a.parsed else f"{a.format.value} (unparsed)"
        table.add_row(Text(clean(a.path)), fmt_, str(s["n_tensors"]), str(s["n_quantized"]),
                      Text(clean(_grades(s))), src)
    console.print(table)
    for m in report.messages:
        console.print(Text(f"note: {m}", style="dim"))
    groups = report.by_severity()
    for sev in Severity:
        items = groups[sev]
        if not items:
            continue
        console.print()
        console.print(Text(f"{TITLE[sev]} ({len(items)})", style=STYLE[sev]))
        for f in items:
            head = Text("  ")
            head.append(f"{f.kind.value}", style=STYLE[sev])
            head.append(f"  {clean(f.path)}")
            if f.tensor:
                head.append(f" :: {clean(f.tensor)}")
            console.print(head)
            console.print(Text(f"    {clean(f.message)}"))
            cause = f.detail.get("likeliest_cause")
            if cause and "Likeliest cause" not in f.message:
                console.print(Text(f"    Likeliest cause: {cause}", style="italic"))
            fix = f.detail.get("suggested_fix")
            if fix:
                console.print(Text(f"    Fix: {fix}", style="dim"))
            ex = f.detail.get("explain")
            if isinstance(ex, dict):
                _explain(console, ex)
    if report.skipped:
        console.print()
        console.print(Text(f"Skipped ({len(report.skipped)})", style="dim"))
        for s in report.skipped[:20]:
            console.print(Text(f"  {clean(s['reason'])}", style="dim"))
    codes = report.exit_codes
    console.print()
    n = sum(1 for f in report.findings if f.counts)
    console.print(Text(f"{n} finding(s); exit {codes[policy.value]} ({policy.value} policy; graded "
                       f"{codes['graded']}, simple {codes['simple']})"))


def _explain(console: Console, ex: dict[str, Any]) -> None:
    """The differing fields of an explain diff, one per line: A -> B."""
    rows = [r for r in ex.get("fields", []) if not r["same"]]
    if not rows:
        return
    console.print(Text(f"    A = {clean(ex['a']['label'])}", style="dim"))
    console.print(Text(f"    B = {clean(ex['b']['label'])}", style="dim"))
    for r in rows:
        tail = "   (note: not hashed)" if not r.get("hashed", True) else ""
        line = Text(f"      {r['field']:<18} ")
        line.append(r["a"])
        line.append("  ->  ", style="dim")
        line.append(r["b"])
        line.append(tail, style="dim")
        console.print(line)
