"""undeclared_zp_convention: GPTQ zero points whose v1 (stored z-1) or v2
convention is not declared."""

from __future__ import annotations

from ...artifact import Artifact
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule

RULE = Rule(
    code="GRIT204",
    kind=Kind.UNDECLARED_ZP_CONVENTION,
    severity=Severity.DISAGREEMENT,
    summary='GPTQ zero points whose v1/v2 convention is not declared',
    doc="""\
**Disagreement.** GPTQ zero points whose convention is not declared: v1
(`checkpoint_format: "gptq"`) stores z−1 and adds 1 at load; `gptq_v2`
stores z. A loader that guesses wrong shifts every weight by a step
(vllm#38966).

Example (`fixtures/broken/gptq-unmarked`):

    1 GPTQ tensor(s) store zero points but no checkpoint_format says whether they are v1 ... or 'gptq_v2'

Fix: set `checkpoint_format` in quantize_config.json.
""",
)
RULES = (RULE,)


def check_file(a: Artifact) -> list[Finding]:
    names = [q.name for q in a.quantized if q.convention == "gptq"]
    if not names:
        return []
    dec = next((q.declared for q in a.quantized if q.convention == "gptq"), None) or {}
    fmt_ = dec.get("format")
    if fmt_ in ("gptq", "gptq_v2"):
        return []
    return [RULE.finding(
        a.path, f"{len(names)} GPTQ tensor(s) store zero points but no checkpoint_format says "
        "whether they are v1 ('gptq': z-1 stored, added back at load) or 'gptq_v2' (z); "
        "a loader that guesses wrong shifts every weight by one step (vllm#38966)",
        names[0] if len(names) == 1 else None,
        {"count": len(names), "tensors": names[:50], "declared_format": fmt_,
         "suggested_fix": "set checkpoint_format in quantize_config.json"})]
