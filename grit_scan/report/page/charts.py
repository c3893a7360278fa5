"""The page's charts as geometry: horizontal bar charts, each bar a stack
of segments, laid out here and drawn as inline SVG by the template."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .model import SEVERITIES, GradeCount, KindCount, Target
from .text import clip, shown

WIDTH = 720
LABEL_WIDTH = 300
BAR_AREA = WIDTH - LABEL_WIDTH - 60
ROW = 20
TOP = 8
LABEL_CHARS = 38
MAX_BARS = 25  # a chart shows at most this many bars; the table has every target


@dataclass(frozen=True)
class Segment:
    css: str  # a class of the page's stylesheet: the colour
    label: str
    value: int
    x: float
    width: float


@dataclass(frozen=True)
class Bar:
    label: str  # clipped for the chart; ``title`` is the whole of it
    title: str
    total: int
    y: int
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    bars: tuple[Bar, ...]
    height: int
    omitted: int  # bars left out beyond MAX_BARS
    legend: tuple[tuple[str, str], ...]  # (css class, label)

    @property
    def label_width(self) -> int:
        return LABEL_WIDTH

    @property
    def width(self) -> int:
        return WIDTH


def _chart(id: str, title: str, rows: Sequence[tuple[str, Sequence[tuple[str, str, int]]]],
           legend: tuple[tuple[str, str], ...]) -> Chart:
    shown_rows = rows[:MAX_BARS]
    top = max((sum(v for _, _, v in segs) for _, segs in shown_rows), default=0) or 1
    bars = []
    for i, (label, segs) in enumerate(shown_rows):
        x = float(LABEL_WIDTH)
        parts = []
        for css, name, value in segs:
            if value <= 0:
                continue
            w = BAR_AREA * value / top
            parts.append(Segment(css, name, value, round(x, 2), round(w, 2)))
            x += w
        text = shown(label)
        bars.append(Bar(clip(text, LABEL_CHARS), text, sum(v for _, _, v in segs),
                        TOP + i * ROW, tuple(parts)))
    return Chart(id, title, tuple(bars), TOP * 2 + ROW * max(1, len(bars)),
                 max(0, len(rows) - MAX_BARS), legend)


_SEVERITY_LEGEND = tuple((f"sev-{s}", s) for s in SEVERITIES)


def findings_by_kind(kinds: Sequence[KindCount]) -> Chart:
    merged: dict[tuple[str, str], dict[str, int]] = {}
    for k in kinds:
        merged.setdefault((k.code, k.kind), {})[k.severity] = k.findings
    rows = [(f"{code} {kind}".strip(), [(f"sev-{s}", s, n.get(s, 0)) for s in SEVERITIES])
            for (code, kind), n in merged.items()]
    return _chart("chart-kinds", "Findings by kind", rows, _SEVERITY_LEGEND)


def grades_by_convention(grades: Sequence[GradeCount]) -> Chart:
    """A bar per (convention, grade), most tensors first, coloured by
    convention (the label names both)."""
    conventions = sorted({g.convention for g in grades})
    palette = {c: f"conv-{i % 6}" for i, c in enumerate(conventions)}
    ordered = sorted(grades, key=lambda g: (-g.tensors, g.convention, g.grade))
    rows = [(f"{g.convention} \u00b7 {g.grade}", [(palette[g.convention], g.convention,
                                                   g.tensors)]) for g in ordered]
    return _chart("chart-grades", "Quantised tensors by convention and grade", rows, ())


def per_target(targets: Sequence[Target]) -> Chart:
    rows = [(t.target, [(f"sev-{s}", s, t.count(s)) for s in SEVERITIES]) for t in targets]
    return _chart("chart-targets", "Findings per model (worst first)", rows, _SEVERITY_LEGEND)
