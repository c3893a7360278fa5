r"""The Markdown summary (``grit report --format md``): tables that paste
into an issue or a pull request.

A string from the input is shown (``text.shown``), then every character
Markdown (GitHub's flavour) gives a meaning to inside a table cell is
neutralised: ``\ ` * _ [ ] | ~ $ #`` are backslash-escaped (``|`` cannot
end a cell, a backtick cannot open a code span, ``[`` cannot start a link,
``$`` cannot start maths, ``#`` cannot reference an issue), and ``<``,
``>``, ``&`` and ``@`` become character references (no tag, no entity of the
input's making, no mention).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .model import SEVERITIES, Summary, Target, TargetDiff, worst
from .text import shown

WORST = 10  # targets listed under "Worst targets"
_PUNCT = re.compile(r"([\\`*_\[\]|~$#])")
_REFS = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "@": "&#64;"}


def md(s: str) -> str:
    """``s`` as literal text in a Markdown table cell."""
    out = _PUNCT.sub(r"\\\1", shown(s))
    return re.sub("[<>&@]", lambda m: _REFS[m.group(0)], out)


def _n(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _table(head: Sequence[str], rows: Sequence[Sequence[str | int]]) -> list[str]:
    right = [i for i, h in enumerate(head) if h in {"targets", "findings", "tensors", "new",
                                                    "fixed", "changed", *SEVERITIES}]
    sep = ["---:" if i in right else "---" for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(sep) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return lines


def render_markdown(targets: Sequence[Target], summary: Summary, inputs: Sequence[str],
                    version: str, changes: Sequence[TargetDiff] | None = None) -> str:
    out = [f"### grit report: {_n(summary.targets, 'target')}, "
           f"{_n(summary.findings, 'finding')}", "",
           f"From {', '.join(md(i) for i in inputs)} (grit {md(version)}).", ""]
    out += _table(["outcome", "targets"], [(o, n) for o, n in summary.outcomes])
    out += ["", "#### Findings by kind", ""]
    if summary.kinds:
        out += _table(["code", "kind", "severity", "findings", "targets"],
                      [(md(k.code), md(k.kind), md(k.severity), k.findings, k.targets)
                       for k in summary.kinds])
    else:
        out.append("No findings.")
    out += ["", "#### Conventions and grades", ""]
    if summary.grades:
        out += _table(["convention", "grade", "tensors", "targets"],
                      [(md(g.convention), md(g.grade), g.tensors, g.targets)
                       for g in summary.grades])
    else:
        out.append("No quantised tensors.")
    bad = worst(targets, WORST)
    if bad:
        out += ["", f"#### Worst targets (up to {WORST})", ""]
        out += _table(["target", "outcome", *SEVERITIES],
                      [(md(t.target), t.outcome, *(t.count(s) for s in SEVERITIES))
                       for t in bad])
    if changes is not None:
        out += ["", "#### Changes since the baseline", ""]
        if changes:
            out += _table(["target", "outcome", "new", "fixed", "changed"],
                          [(md(d.target), f"{d.old_outcome or 'absent'} \u2192 "
                            f"{d.new_outcome or 'absent'}", len(d.new), len(d.fixed),
                            len(d.changed)) for d in changes])
        else:
            out.append("No finding differs from the baseline.")
    return "\n".join(out) + "\n"
