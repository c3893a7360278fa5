"""inferred_descriptor: descriptors inferred from a known convention, not
read from a GRIT header.  One finding per file and convention."""

from __future__ import annotations

from collections import defaultdict

from ...artifact import Artifact, Source
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import judged

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


def check_file(art: Artifact) -> list[Finding]:
    inferred: dict[str, list[str]] = defaultdict(list)
    for q in art.quantized:
        if judged(q) and q.source in (Source.INFERRED, Source.GGML_TYPE):
            inferred[q.convention or "?"].append(q.name)
    out = []
    for conv, names in sorted(inferred.items()):
        how = ("ggml's block struct" if conv.startswith("ggml:") else f"the {conv} convention")
        out.append(RULE.finding(
            art.path,
            f"{len(names)} tensor descriptor(s) inferred from {how}; the file carries no GRIT "
            f"descriptor for them (e.g. {names[0]})", names[0] if len(names) == 1 else None,
            {"convention": conv, "count": len(names), "tensors": names[:50],
             "suggested_fix": "write a __grit__ header (or grit.* GGUF keys) at export time"}))
    return out
