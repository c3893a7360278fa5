"""artifact_drift: different roles carrying different grades in one file.

Often deliberate mixed precision; reported so it is never a surprise.  Not
reported where role_drift already explains the file, nor for a declared GGUF
k-quant mix.
"""

from __future__ import annotations

from ...artifact import ScanInput
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import declared_mix, families, kins
from .role_drift import described, role_drift

RULE = Rule(
    code="GRIT301",
    kind=Kind.ARTIFACT_DRIFT,
    severity=Severity.WARNING,
    summary='different roles carry different grades in one artifact',
    doc="""\
**Warning.** Different roles carry different grades in one file (attention
in one format, MLP in another). Often deliberate mixed precision; reported so
it is never a surprise. Not reported when role_drift already explains the
file, nor for a declared GGUF k-quant mix.

Example (`fixtures/conventions/grit-gguf`):

    3 grades in one file: GRADE_MXFP4 for 1 role(s); GRADE_NVF4 for 1 role(s); GRADE_Q4KS for 1 role(s)

Fix: none needed if intended.
""",
)
RULES = (RULE,)


def check_scan(scan: ScanInput) -> list[Finding]:
    drifting = {f.path for f in role_drift(scan.artifacts)}
    out = []
    for art in scan.artifacts:
        if art.path in drifting or declared_mix(art) or not art.format.is_checkpoint_file:
            continue
        # asked once per kin (docs/performance.md); the families only when there are two grades
        ks = [kin for kin in kins(art) if described(kin)]
        fams: dict[str, set[str]] = {kin.identity: set() for kin in ks}
        if len(fams) < 2:
            continue
        roles = art.quantized.roles()
        for kin in ks:  # in order of their first tensor, as a per-tensor loop meets them
            fams[kin.identity].update(families(list(map(roles.__getitem__, kin.idx))))
        detail = {k: sorted(v)[:10] for k, v in fams.items()}
        msg = (f"{len(fams)} grades in one file: " + "; ".join(
            f"{k} for {len(v)} role(s)" for k, v in sorted(fams.items())))
        out.append(RULE.finding(art.path, msg, None, {"grades": detail}))
    return out
