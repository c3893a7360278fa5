"""unregistered_grade: a valid grade that is not one of the registered six."""

from __future__ import annotations

from ...artifact import Artifact, QTensor
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import judged, positions

RULE = Rule(
    code="GRIT306",
    kind=Kind.UNREGISTERED_GRADE,
    severity=Severity.WARNING,
    summary='the grade is valid but not one of the registered six',
    doc="""\
**Warning.** The grade is valid but not one of the six registered grades;
tools must carry its string to agree on it.

Example (`fixtures/conventions/fp8-per-channel`):

    1 tensor(s) use grade grit1(e=e4m3,k0=32,s0=binary32,esr=ratiomaxabs) (...), which is valid but not one of the six registered grades

Fix: none needed; make sure the grade string travels with the file.
""",
)
RULES = (RULE,)


def _unregistered(q: QTensor) -> tuple[int, ...]:
    if judged(q) and q.grade is not None and q.grade.name is None:
        return (q.grade.grade_id,)
    return ()


def check_file(art: Artifact) -> list[Finding]:
    qs = art.quantized
    out = []
    # grouped once per kin, not per tensor (docs/performance.md)
    for gid, idx in sorted(positions(art, _unregistered).items()):
        g = qs[idx[-1]].grade  # the last tensor's, as a per-tensor loop keeps it
        assert g is not None
        names = qs.names_at(idx[:50])
        out.append(RULE.finding(
            art.path,
            f"{len(idx)} tensor(s) use grade {g.canonical} ({gid:#018x}), which is valid but "
            "not one of the six registered grades: tools must carry its string to agree on it",
            names[0] if len(idx) == 1 else None,
            {"grade": g.canonical, "grade_id": f"0x{gid:016x}", "count": len(idx),
             "tensors": names}))
    return out
