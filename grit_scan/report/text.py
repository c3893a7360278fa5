"""The text formats: concise (the default), full and grouped, and the
``--statistics`` table.

Nothing here hard-wraps: every finding is one logical line (the terminal may
soft-wrap it, but no newline is ever inserted inside a path or a command), so
paths and suggested commands can always be copied.  Every string taken from
a file goes through ``escape.esc``.  Colour only on a terminal, never under
``NO_COLOR``; ``FORCE_COLOR`` forces it.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from ..artifact import Artifact
from ..rules.finding import Finding, Severity
from .escape import esc
from .json_format import artifact_summary
from .options import OutputFormat, RenderOptions
from .report import Report
from .styled import Console, Text
from .styled import make_console as styled_console
from .summary import ignored_lines, listed, next_step, statistics, summary_line

STYLE = {Severity.STRUCTURAL: "bold red", Severity.DISAGREEMENT: "bold yellow",
         Severity.WARNING: "yellow", Severity.INFO: "dim"}
TITLE = {Severity.STRUCTURAL: "Structural", Severity.DISAGREEMENT: "Disagreements",
         Severity.WARNING: "Warnings", Severity.INFO: "Information"}
GROUP_PATHS = 3  # paths shown on a grouped line


def use_color(out: TextIO, options: RenderOptions) -> bool:
    if options.color is not None:
        return options.color
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return out.isatty()


def make_console(out: TextIO, options: RenderOptions) -> Console:
    """A console that never wraps and styles only when colour is on (rich is
    loaded for colour only: styled.py)."""
    return styled_console(out, use_color(out, options), options.width)


def layout_width(out: TextIO, options: RenderOptions) -> int | None:
    """The width the explain diff is laid out for: the terminal's (``COLUMNS``
    honoured), or none at all when piped."""
    if options.width:
        return options.width
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    if out.isatty():
        try:
            return os.get_terminal_size(out.fileno()).columns
        except OSError:
            return None
    return None


def location(f: Finding) -> str:
    """``path[::tensor]``; a path that begins with ``::`` (which GitHub
    Actions would read as a workflow command at the start of a line) as
    ``./::...``, the same file."""
    path = esc(f.path)
    if path.startswith("::"):
        path = "./" + path
    return path + (f"::{esc(f.tensor)}" if f.tensor else "")


LINE_MAX = 299  # characters of a concise line (a long path alone may exceed it)
EXPR_SHOWN = 24  # characters of a layout expression a concise line keeps
MESSAGE_MIN = 80  # characters of a message kept whatever the path's length
_CUT = "… (--output-format full)"


def _short_exprs(text: str) -> str:
    """Each ``EXPR <expression>`` shortened to its first characters: the
    whole expression (hundreds of characters for a ggml block) is in
    ``--output-format full`` and JSON."""
    out: list[str] = []
    pos = 0
    while True:
        at = text.find("EXPR ", pos)
        if at < 0:
            break
        start = at + 5
        depth, end = 0, start
        while end < len(text):
            c = text[end]
            if c == "(" or c == "[":
                depth += 1
            elif c == ")" or c == "]":
                if depth == 0:
                    break
                depth -= 1
            elif c in " ,;" and depth == 0:
                break
            end += 1
        out.append(text[pos:start])
        expr = text[start:end]
        out.append(expr if len(expr) <= EXPR_SHOWN + 1 else expr[:EXPR_SHOWN] + "…")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def concise_message(message: str, room: int) -> str:
    """A message for one concise line: layout expressions shortened, and
    cut at a clause (``. ``, ``; ``, ``: ``) or a space so that it fits
    ``room`` characters, saying where the whole text is."""
    text = _short_exprs(message)
    room = max(room, MESSAGE_MIN)
    if len(text) <= room:
        return text
    keep = room - len(_CUT)
    head = text[:keep]
    cut = max(head.rfind(". "), head.rfind("; "), head.rfind(": "))
    if cut < keep // 2:
        cut = head.rfind(" ")
    if cut < keep // 2:
        cut = keep
    return head[:cut].rstrip(" .;:,") + _CUT


def _line(f: Finding) -> Text:
    t = Text(location(f), style="bold")
    t.append(": ")
    t.append(f.code, style=STYLE[f.severity])
    t.append(f" {f.kind.value} ")
    room = LINE_MAX - len(t.plain)
    t.append(esc(concise_message(f.message, room)))
    return t


def _tail(report: Report, console: Console) -> None:
    console.print()
    console.print(Text(summary_line(report), style="bold"))
    for line in ignored_lines(report):
        console.print(Text(esc(line), style="bold"))
    step = next_step(report)
    if step:
        console.print(Text(f"Next: {esc(step)}"))


def _notes(report: Report, console: Console, *, list_skipped: bool) -> None:
    for m in report.messages:
        console.print(Text(f"note: {esc(m)}", style="dim"))
    if report.skipped:
        if list_skipped:
            console.print()
            console.print(Text(f"Skipped ({len(report.skipped)})", style="dim"))
            for s in report.skipped[:20]:
                console.print(Text(f"  {esc(s['reason'])}", style="dim"))
            if len(report.skipped) > 20:
                console.print(Text(f"  ... and {len(report.skipped) - 20} more", style="dim"))
        else:
            console.print(Text(f"note: skipped {len(report.skipped)} path(s) "
                               "(--output-format full lists them)", style="dim"))


def render_format(report: Report, fmt: OutputFormat, out: TextIO,
                  options: RenderOptions = RenderOptions()) -> None:
    console = make_console(out, options)
    if options.statistics:
        render_statistics(report, console)
    elif fmt is OutputFormat.FULL:
        render_full(report, console, layout_width(out, options))
    elif fmt is OutputFormat.GROUPED:
        render_grouped(report, console)
    else:
        render_concise(report, console)
    _tail(report, console)


def render_concise(report: Report, console: Console) -> None:
    """One line per finding, ``path[::tensor]: CODE kind message``, by file."""
    for f in sorted(report.findings, key=lambda f: (f.path, f.severity.rank, f.code,
                                                    f.tensor or "", f.message)):
        console.print(_line(f))
    _notes(report, console, list_skipped=False)


def render_statistics(report: Report, console: Console) -> None:
    for row in statistics(report.findings):
        t = Text(f"{row['count']:>6}  ")
        t.append(row["code"], style=STYLE[Severity(row["severity"])])
        t.append(f"  {row['kind']}")
        console.print(t)


_NUM = r"\d+"  # compiled where first used (re's cache): start-up, docs/performance.md


def _group_key(f: Finding) -> tuple[str, str]:
    msg = f.message.replace(f.path, "")
    if f.tensor:
        msg = msg.replace(f.tensor, "")
    return f.code, re.sub(_NUM, "#", msg)


def render_grouped(report: Report, console: Console) -> None:
    """The same finding on many files is one line: count, first message and
    the first paths.  Output is bounded by the number of distinct findings."""
    groups: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for f in report.findings:
        groups[_group_key(f)].append(f)
    for items in sorted(groups.values(), key=lambda g: (g[0].severity.rank, -len(g),
                                                        g[0].code)):
        if len(items) == 1:
            console.print(_line(items[0]))
            continue
        f = items[0]
        paths = sorted({x.path for x in items})
        t = Text(f.code, style=STYLE[f.severity])
        t.append(f" {f.kind.value} x{len(items)} in {len(paths)} file(s): ")
        # as many of the first paths as leave the message its room
        n = min(len(paths), GROUP_PATHS)
        while True:
            shown = ", ".join(esc(p) for p in paths[:n])
            more = f" and {len(paths) - n} more" if len(paths) > n else ""
            tail = f" [{shown}{more}]"
            if n == 1 or len(t.plain) + len(tail) + MESSAGE_MIN <= LINE_MAX:
                break
            n -= 1
        t.append(esc(concise_message(f.message, LINE_MAX - len(t.plain) - len(tail))))
        t.append(tail, style="dim")
        console.print(t)
    _notes(report, console, list_skipped=False)


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


def _artifact_line(a: Artifact) -> Text:
    """One artifact on one line: the path first and whole, then its facts."""
    s = artifact_summary(a)
    src = ", ".join(f"{k} {v}" for k, v in s["sources"].items()) or "-"
    fmt_ = a.format.value if a.parsed else f"{a.format.value}, unparsed"
    t = Text("  ")
    t.append(esc(a.path), style="bold")
    t.append(f"  ({fmt_}; {s['n_tensors']} tensors, {s['n_quantized']} quantised; "
             f"grades {esc(_grades(s))}; sources {src})", style="dim")
    return t


def render_full(report: Report, console: Console, width: int | None = None) -> None:
    """Artifacts, then the findings by severity with causes, fixes and the
    explain diffs (laid out vertically where a row would not fit)."""
    arts = listed(report)
    console.print(Text(f"Artifacts ({len(arts)})", style="bold"))
    for a in arts:
        console.print(_artifact_line(a))
    groups = report.by_severity()
    for sev in Severity:
        items = groups[sev]
        if not items:
            continue
        console.print()
        console.print(Text(f"{TITLE[sev]} ({len(items)})", style=STYLE[sev]))
        for f in items:
            head = Text("  ")
            head.append(f"{f.code} {f.kind.value}", style=STYLE[sev])
            head.append(f"  {location(f)}")
            console.print(head)
            # a message shortened for concise lines keeps its whole text here
            full = f.detail.get("full_message")
            console.print(Text(f"    {esc(full if isinstance(full, str) else f.message)}"))
            cause = f.detail.get("likeliest_cause")
            if cause and "Likeliest cause" not in f.message:
                console.print(Text(f"    Likeliest cause: {esc(str(cause))}", style="italic"))
            fix = f.detail.get("suggested_fix")
            if fix:
                console.print(Text(f"    Fix: {esc(str(fix))}"))
            ex = f.detail.get("explain")
            if isinstance(ex, dict):
                _explain(console, ex, width)
    _notes(report, console, list_skipped=True)


def _explain(console: Console, ex: dict[str, Any], width: int | None) -> None:
    """The differing fields of an explain diff (``explain_row_lines``)."""
    rows = [r for r in ex.get("fields", []) if not r["same"]]
    if not rows:
        return
    console.print(Text(f"    A = {esc(str(ex['a']['label']))}", style="dim"))
    console.print(Text(f"    B = {esc(str(ex['b']['label']))}", style="dim"))
    for r in rows:
        for line in explain_row_lines(r, width, "      "):
            console.print(line)


FIELD_WIDTH = 18  # the field column of an explain row ("decode_projection" and a space)


def explain_row_lines(row: Mapping[str, Any], width: int | None, indent: str,
                      mark: str = "") -> list[Text]:
    """One explain row (``field``, ``a``, ``b``, ``hashed`` as in
    ``Explanation.to_json()["fields"]``): ``field  A -> B`` (``field  A``
    when they are equal) on one line when that fits ``width`` (always when
    ``width`` is None), else the field on a line and ``A:`` and ``B:`` on
    lines of their own.  A value is never split: one wider than the
    terminal keeps its line.  ``mark`` replaces the start of ``indent``
    (``grit explain`` marks differing rows with ``*``).  Shared by the full
    report and ``grit explain``."""
    a, b = esc(str(row["a"])), esc(str(row["b"]))
    lead = mark + indent[len(mark):]
    tail = "   (note: not hashed)" if not row.get("hashed", True) else ""
    name = str(row["field"])
    same = a == b
    flat = f"{lead}{name:<{FIELD_WIDTH}} {a}" + ("" if same else f"  ->  {b}") + tail
    if width is None or len(flat) <= width:
        line = Text(f"{lead}{name:<{FIELD_WIDTH}} ")
        line.append(a)
        if not same:
            line.append("  ->  ", style="dim")
            line.append(b)
        line.append(tail, style="dim")
        return [line]
    if same:
        return [Text(f"{lead}{name}{tail}"), Text(f"{indent}  A, B: {a}")]
    return [Text(f"{lead}{name}{tail}"), Text(f"{indent}  A: {a}"), Text(f"{indent}  B: {b}")]


def render_explain(ex: Mapping[str, Any], table: Sequence[str], out: TextIO,
                   options: RenderOptions = RenderOptions()) -> None:
    """``grit explain``'s text: ``table`` (one aligned row per field) when
    every line fits the terminal or output is piped; else vertical, with the
    rows of the full report (``explain_row_lines``) and the verdict's
    differences one per line.  Nothing is split inside a value."""
    width = layout_width(out, options)
    console = make_console(out, options)
    if width is None or all(len(line) <= width for line in table):
        for row in table:
            console.print(Text(esc(row)))
        return
    console.print(Text(f"  A = {esc(str(ex['a']['label']))}"))
    console.print(Text(f"  B = {esc(str(ex['b']['label']))}"))
    for r in ex["fields"]:
        for text in explain_row_lines(r, width, "  ", mark=" " if r["same"] else "*"):
            console.print(text)
    verdict = f"Verdict: {esc(str(ex['verdict']))}"
    if len(verdict) <= width or ex["identical"]:
        console.print(Text(verdict))
        return
    head, _, body = verdict.partition(": ")
    if ex["decode_equivalent"]:
        kind, _, via = body.partition(": ")
        console.print(Text(f"{head}: {kind}:"))
        items = via.split("; ")
    else:
        n = len(ex["differences"])
        console.print(Text(f"{head}: differ in {n} field{'s' if n != 1 else ''}:"))
        rows = {r["field"]: r for r in ex["fields"]}
        items = [f"{d} ({esc(str(rows[d]['a']))} vs {esc(str(rows[d]['b']))})"
                 if d in rows else d for d in ex["differences"]]
    for item in items:
        console.print(Text(f"  {item}"))
