"""A sweep's results as records: one ``Target`` per sweep line (or scan
report), the counts the page and the Markdown summary show, and the diff
against a baseline sweep.

The input is JSON that ``grit sweep`` or ``grit scan --json`` wrote, but it
is read as untrusted: a value of the wrong type counts as absent, never as an
error, and every string is kept exactly as it was (the renderers escape).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Outcomes, best to worst; a target's outcome is its worst finding's
# severity, or ``unreadable`` when nothing of it could be read.
OUTCOMES = ("clean", "warning", "disagreement", "structural", "unreadable")
SEVERITIES = ("structural", "disagreement", "warning", "info")
# The exit code of ``grit scan`` (graded policy) when nothing could be parsed.
EXIT_NOTHING_PARSED = 4


@dataclass(frozen=True)
class FindingRow:
    code: str
    kind: str
    severity: str
    path: str
    tensor: str | None
    message: str

    @property
    def key(self) -> tuple[str, str, str | None]:
        """What identifies a finding across two sweeps: its kind and place."""
        return (self.kind, self.path, self.tensor)


@dataclass(frozen=True)
class GradeUse:
    """How many of a target's quantised tensors carry one (convention, grade)."""

    convention: str
    grade: str  # the registered name when there is one, else the canonical grade
    tensors: int


@dataclass(frozen=True)
class Target:
    target: str
    outcome: str
    exit_code: int | None
    error: str | None
    files: int
    parsed: int
    tensors: int
    quantized: int
    findings: tuple[FindingRow, ...]
    grades: tuple[GradeUse, ...]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)


def _str(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _dict(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _finding(f: Mapping[str, Any]) -> FindingRow:
    tensor = f.get("tensor")
    return FindingRow(code=_str(f.get("code")), kind=_str(f.get("kind"), "?"),
                      severity=_str(f.get("severity"), "?"), path=_str(f.get("path")),
                      tensor=tensor if isinstance(tensor, str) else None,
                      message=_str(f.get("message")))


def _grade_of(t: Mapping[str, Any]) -> tuple[str, str]:
    return (_str(t.get("convention")) or "none",
            _str(t.get("grade_name")) or _str(t.get("grade")) or "none")


def _outcome(error: str | None, exit_code: int | None, parsed: int,
             findings: tuple[FindingRow, ...]) -> str:
    if error is not None or exit_code == EXIT_NOTHING_PARSED or parsed == 0:
        return "unreadable"
    present = {f.severity for f in findings}
    for outcome in ("structural", "disagreement", "warning"):
        if outcome in present:
            return outcome
    return "clean"


def target_of(line: Mapping[str, Any]) -> Target:
    """One sweep line (``{"target", "exit_code", "report"}`` or
    ``{"target", "error"}``) as a record."""
    name = _str(line.get("target"), "?")
    error = line.get("error")
    err = error if isinstance(error, str) else ("error" if error is not None else None)
    report = _dict(line.get("report"))
    code = line.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool):
        graded = _dict(report.get("exit_codes")).get("graded")
        code = graded if isinstance(graded, int) and not isinstance(graded, bool) else None
    summary = _dict(report.get("summary"))
    findings = tuple(_finding(f) for f in _list(report.get("findings")) if isinstance(f, dict))
    uses = Counter(_grade_of(t) for a in _list(report.get("artifacts")) if isinstance(a, dict)
                   for t in _list(a.get("tensors")) if isinstance(t, dict))
    parsed = _int(summary.get("parsed"))
    return Target(target=name, outcome=_outcome(err, code, parsed, findings), exit_code=code,
                  error=err, files=_int(summary.get("files")), parsed=parsed,
                  tensors=_int(summary.get("tensors")), quantized=_int(summary.get("quantized")),
                  findings=findings,
                  grades=tuple(GradeUse(c, g, n) for (c, g), n in sorted(uses.items())))


def scan_report_line(report: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A ``grit scan --json`` report as the sweep line it would have been:
    its target is its roots (or ``name`` when it has none)."""
    roots = [r for r in _list(report.get("roots")) if isinstance(r, str)]
    return {"target": " ".join(roots) or name, "report": dict(report)}


@dataclass(frozen=True)
class KindCount:
    code: str
    kind: str
    severity: str
    findings: int
    targets: int


@dataclass(frozen=True)
class GradeCount:
    convention: str
    grade: str
    tensors: int
    targets: int


@dataclass(frozen=True)
class Summary:
    targets: int
    outcomes: tuple[tuple[str, int], ...]  # every outcome, in OUTCOMES order
    kinds: tuple[KindCount, ...]  # by findings, most first
    conventions: tuple[tuple[str, int, int], ...]  # (convention, tensors, targets)
    grades: tuple[GradeCount, ...]  # by convention, then tensors, most first
    findings: int


def summarise(targets: Iterable[Target]) -> Summary:
    rows = list(targets)
    outcomes = Counter(t.outcome for t in rows)
    per_kind: Counter[tuple[str, str, str]] = Counter()
    kind_targets: Counter[tuple[str, str, str]] = Counter()
    per_grade: Counter[tuple[str, str]] = Counter()
    grade_targets: Counter[tuple[str, str]] = Counter()
    per_conv: Counter[str] = Counter()
    conv_targets: Counter[str] = Counter()
    for t in rows:
        keys = [(f.code, f.kind, f.severity) for f in t.findings]
        per_kind.update(keys)
        kind_targets.update(set(keys))
        for u in t.grades:
            per_grade[(u.convention, u.grade)] += u.tensors
            grade_targets[(u.convention, u.grade)] += 1
            per_conv[u.convention] += u.tensors
        conv_targets.update({u.convention for u in t.grades})
    kinds = tuple(KindCount(c, k, s, n, kind_targets[(c, k, s)])
                  for (c, k, s), n in sorted(per_kind.items(),
                                             key=lambda kv: (-kv[1], kv[0])))
    conventions = tuple((c, n, conv_targets[c])
                        for c, n in sorted(per_conv.items(), key=lambda kv: (-kv[1], kv[0])))
    grades = tuple(GradeCount(c, g, n, grade_targets[(c, g)])
                   for (c, g), n in sorted(per_grade.items(),
                                           key=lambda kv: (kv[0][0], -kv[1], kv[0][1])))
    return Summary(targets=len(rows), outcomes=tuple((o, outcomes[o]) for o in OUTCOMES),
                   kinds=kinds, conventions=conventions, grades=grades,
                   findings=sum(len(t.findings) for t in rows))


def worst(targets: Iterable[Target], n: int | None = None) -> list[Target]:
    """The targets with findings, the most severe first: by structural
    findings, then disagreements, warnings and info (then by name); the
    first ``n`` of them."""
    hit = [t for t in targets if t.findings]
    hit.sort(key=lambda t: (tuple(-t.count(s) for s in SEVERITIES), t.target))
    return hit if n is None else hit[:n]


@dataclass(frozen=True)
class Change:
    old: FindingRow
    new: FindingRow


@dataclass(frozen=True)
class TargetDiff:
    target: str
    old_outcome: str | None  # None: not in the baseline
    new_outcome: str | None  # None: not in this sweep
    new: tuple[FindingRow, ...]
    fixed: tuple[FindingRow, ...]
    changed: tuple[Change, ...]

    @property
    def empty(self) -> bool:
        return (not (self.new or self.fixed or self.changed)
                and self.old_outcome == self.new_outcome)


def _diff_findings(old: tuple[FindingRow, ...], new: tuple[FindingRow, ...]
                   ) -> tuple[list[FindingRow], list[FindingRow], list[Change]]:
    """Equal findings cancel out (as multisets); what is left of one kind
    and place on both sides is changed, pairwise in order; the rest is new
    or fixed."""
    left = Counter(old)
    right = Counter(new)
    common = left & right
    old_rest = list(old)
    new_rest = list(new)
    for f, n in common.items():
        for _ in range(n):
            old_rest.remove(f)
            new_rest.remove(f)
    by_key: dict[tuple[str, str, str | None], list[FindingRow]] = {}
    for f in old_rest:
        by_key.setdefault(f.key, []).append(f)
    changed: list[Change] = []
    added: list[FindingRow] = []
    for f in new_rest:
        pending = by_key.get(f.key)
        if pending:
            changed.append(Change(pending.pop(0), f))
        else:
            added.append(f)
    fixed = [f for fs in by_key.values() for f in fs]
    fixed.sort(key=old_rest.index)
    return added, fixed, changed


def diff(baseline: Iterable[Target], current: Iterable[Target]) -> tuple[TargetDiff, ...]:
    """Per target of either sweep (this sweep's order, then the baseline's
    targets that are gone): new, fixed and changed findings; targets with no
    change are left out."""
    old = {t.target: t for t in baseline}
    new = {t.target: t for t in current}
    out = []
    for name in [*new, *(n for n in old if n not in new)]:
        o, c = old.get(name), new.get(name)
        added, fixed, changed = _diff_findings(o.findings if o else (), c.findings if c else ())
        d = TargetDiff(name, o.outcome if o else None, c.outcome if c else None,
                       tuple(added), tuple(fixed), tuple(changed))
        if not d.empty:
            out.append(d)
    return tuple(out)
