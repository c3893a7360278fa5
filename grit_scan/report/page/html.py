"""The page: one self-contained HTML document (inline CSS, inline SVG
charts, a small inline script for sorting and filtering).  It loads nothing:
every ``href`` is a fragment of the page itself (and the icon an empty
``data:`` URL), so it works from file:// with no network.

Every string from the input goes through ``text.shown`` and then jinja2's
HTML autoescaping; the templates never mark input as safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jinja2.environment import Environment
from jinja2.loaders import PackageLoader
from jinja2.runtime import StrictUndefined

from . import charts
from .model import OUTCOMES, SEVERITIES, Summary, Target, TargetDiff, worst
from .text import shown


@dataclass(frozen=True)
class RuleText:
    """One finding kind's documentation, as ``grit rule CODE`` prints it."""

    code: str
    name: str
    severity: str
    summary: str
    doc: str

    @property
    def anchor(self) -> str:
        return f"rule-{self.code}"

    @property
    def text(self) -> str:
        return f"# {self.name} ({self.code})\n\n{self.doc}"


def _env() -> Environment:
    env = Environment(loader=PackageLoader("grit_scan.report.page", "templates"),
                      autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["shown"] = shown
    return env


def render_html(targets: Sequence[Target], summary: Summary, rules: Sequence[RuleText],
                inputs: Sequence[str], version: str,
                changes: Sequence[TargetDiff] | None = None,
                baseline: Sequence[str] = ()) -> str:
    """The page for these targets (and, with ``changes``, the diff against
    the baseline sweep read from ``baseline``)."""
    used = {f.code for t in targets for f in t.findings}
    if changes:
        for d in changes:
            used.update(f.code for f in (*d.new, *d.fixed))
            used.update(c.new.code for c in d.changed)
            used.update(c.old.code for c in d.changed)
    linked = [r for r in rules if r.code in used]
    page = _env().get_template("page.html.j2")
    return str(page.render(
        targets=targets, summary=summary, rules=linked,
        anchors={r.code: r.anchor for r in linked},
        inputs=inputs, baseline=baseline, version=version, changes=changes,
        outcomes=OUTCOMES, severities=SEVERITIES,
        chart_list=[charts.findings_by_kind(summary.kinds),
                    charts.grades_by_convention(summary.grades),
                    charts.per_target(worst(targets))]))
