"""inferred_descriptor: descriptors inferred from a known convention, not
read from a GRIT header.  One finding per file and convention."""

from __future__ import annotations

from ...artifact import Artifact, QTensor, Source
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import judged, positions

RULE = Rule(
    code="GRIT305",
    kind=Kind.INFERRED_DESCRIPTOR,
    severity=Severity.WARNING,
    summary='the descriptor was inferred from a convention, not read from the file',
    doc="""\
**Warning.** The descriptor was inferred from a known convention (gpt-oss
MXFP4, compressed-tensors or ModelOpt NVFP4, FP8 scales, a ggml block type),
not read from a GRIT header. One finding per file and convention.

Example (`fixtures/conventions/gpt-oss-mxfp4`):

    4 tensor descriptor(s) inferred from the gpt-oss-mxfp4 convention; the file carries no GRIT descriptor for them

Fix: write a `__grit__` header (or grit.* GGUF keys) at export time.
""",
)
RULES = (RULE,)


def _inferred(q: QTensor) -> tuple[str, ...]:
    if judged(q) and q.source in (Source.INFERRED, Source.GGML_TYPE):
        return (q.convention or "?",)
    return ()


def check_file(art: Artifact) -> list[Finding]:
    qs = art.quantized
    out = []
    # grouped once per kin, not per tensor (docs/performance.md)
    for conv, idx in sorted(positions(art, _inferred).items()):
        names = qs.names_at(idx[:50])
        how = ("ggml's block struct" if conv.startswith("ggml:") else f"the {conv} convention")
        out.append(RULE.finding(
            art.path,
            f"{len(idx)} tensor descriptor(s) inferred from {how}; the file carries no GRIT "
            f"descriptor for them (e.g. {names[0]})", names[0] if len(idx) == 1 else None,
            {"convention": conv, "count": len(idx), "tensors": names,
             "suggested_fix": "write a __grit__ header (or grit.* GGUF keys) at export time"}))
    return out
