"""unregistered_grade: a valid grade that is not one of the registered six."""

from __future__ import annotations

from collections import defaultdict

from ...artifact import Artifact
from ...codec.grade import Grade
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import judged

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


def check_file(art: Artifact) -> list[Finding]:
    unreg: dict[int, list[str]] = defaultdict(list)
    grades: dict[int, Grade] = {}
    for q in art.quantized:
        if judged(q) and q.grade is not None and q.grade.name is None:
            unreg[q.grade.grade_id].append(q.name)
            grades[q.grade.grade_id] = q.grade
    out = []
    for gid, names in sorted(unreg.items()):
        g = grades[gid]
        out.append(RULE.finding(
            art.path,
            f"{len(names)} tensor(s) use grade {g.canonical} ({gid:#018x}), which is valid but "
            "not one of the six registered grades: tools must carry its string to agree on it",
            names[0] if len(names) == 1 else None,
            {"grade": g.canonical, "grade_id": f"0x{gid:016x}", "count": len(names),
             "tensors": names[:50]}))
    return out
