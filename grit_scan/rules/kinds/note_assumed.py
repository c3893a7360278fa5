"""note_assumed: NOTE_ASSUMED is set (§12): a placement was assumed by
assume_placement, never verified from the bytes.  Grouped by producer tag."""

from __future__ import annotations

from ...artifact import Artifact, QTensor
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import judged, positions

RULE = Rule(
    code="GRIT302",
    kind=Kind.NOTE_ASSUMED,
    severity=Severity.WARNING,
    summary='NOTE_ASSUMED is set: a placement was assumed, not verified',
    doc="""\
**Warning.** Tensors carry NOTE_ASSUMED (§12): someone called
`assume_placement` and the placement was never verified from the bytes.
Grouped by producer tag, with the producer's name when the file names it.

Example (`fixtures/broken/note-assumed`):

    2 tensor(s) carry NOTE_ASSUMED from legacy-dump/1.4 (tag 0xb855): their placement was assumed ...

Fix: `verify_placement` against the producer's canonical digest.
""",
)
RULES = (RULE,)


def _assumed(q: QTensor) -> tuple[int, ...]:
    if judged(q) and q.desc is not None and q.desc.assumed:
        return (q.desc.producer_tag,)
    return ()


def check_file(art: Artifact) -> list[Finding]:
    qs = art.quantized
    out = []
    # grouped once per kin, not per tensor (docs/performance.md)
    for tag, idx in sorted(positions(art, _assumed).items()):
        names = qs.names_at(idx[:50])
        from ...codec.descriptor import producer_tag  # here: start-up, docs/performance.md

        who = art.producer if art.producer and producer_tag(art.producer) == tag else None
        label = f"{who} (tag {tag:#06x})" if who else (f"producer tag {tag:#06x}" if tag else
                                                      "an unknown producer")
        out.append(RULE.finding(
            art.path,
            f"{len(idx)} tensor(s) carry NOTE_ASSUMED from {label}: their placement was "
            "assumed by assume_placement, never verified from the bytes (§12)",
            names[0] if len(idx) == 1 else None,
            {"producer_tag": f"{tag:#06x}", "producer": who, "count": len(idx),
             "tensors": names,
             "suggested_fix": "verify_placement against the producer's canonical digest"}))
    return out
