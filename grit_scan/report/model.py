"""The scan report: the one model the CLI renders and the library returns."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..codec.base32 import encode as b32
from ..codec.fingerprint import gid
from ..model import Artifact, IssueCode, ScanInput
from ..rules.drift import declared_mix
from ..rules.finding import Finding
from ..rules.kinds import DISAGREEMENT, SEVERITIES, STRUCTURAL, WARNING

REPORT_VERSION = 1
CHECKPOINT_FORMATS = ("safetensors", "gguf", "index", "grit-manifest")
_SEV_ORDER = {s: i for i, s in enumerate(SEVERITIES)}


def exit_codes(findings: list[Finding], parsed_any: bool) -> dict[str, int]:
    """§13: graded 0 clean, 1 structural, 2 disagreement, 3 warnings only,
    4 nothing parsed; simple 0 clean, 1 any finding, 2 nothing parsed.
    Info findings never count."""
    counting = {f.severity for f in findings if f.counts}
    if not parsed_any:
        return {"graded": 4, "simple": 2}
    if STRUCTURAL in counting:
        graded = 1
    elif DISAGREEMENT in counting:
        graded = 2
    elif WARNING in counting:
        graded = 3
    else:
        graded = 0
    return {"graded": graded, "simple": 1 if counting else 0}


def _tensor_json(q: Any) -> dict[str, Any]:
    g = None
    if q.desc is not None and q.grade is not None:
        g = gid(q.grade, q.desc, q.shape)
    return {
        "name": q.name, "role": q.role, "shape": list(q.shape),
        "grade": q.grade.canonical if q.grade is not None else None,
        "grade_name": q.grade.name if q.grade is not None else None,
        "grade_id": f"0x{q.desc.grade_id:016x}" if q.desc is not None else None,
        "gid": g.hex() if g else None, "gid_base32": b32(g) if g else None,
        "desc": q.desc.hex() if q.desc is not None else None,
        "source": q.source.value, "convention": q.convention, "reason": q.reason,
    }


def artifact_summary(a: Artifact) -> dict[str, Any]:
    grades: Counter[tuple[str, str | None, str]] = Counter()
    sources: Counter[str] = Counter()
    for q in a.quantized:
        sources[q.source.value] += 1
        if q.grade is not None:
            grades[(q.grade.canonical, q.grade.name, f"0x{q.grade.grade_id:016x}")] += 1
        elif q.convention:
            grades[(q.convention, None, "")] += 1
    md = {k: v for k, v in a.metadata.items() if isinstance(v, (str, int, float, list))}
    return {
        "path": a.path, "format": a.format, "parsed": a.parsed, "size": a.size,
        "producer": a.producer,
        "n_tensors": len(a.tensors), "n_quantized": len(a.quantized),
        "unquantized": dict(sorted(a.unquantized.items())),
        "grades": [{"grade": k[0], "name": k[1], "grade_id": k[2] or None, "count": n}
                   for k, n in sorted(grades.items(), key=lambda kv: -kv[1])],
        "sources": dict(sorted(sources.items())),
        "declared_mix": declared_mix(a),
        "metadata": md,
        "notes": [i.message for i in a.issues if i.code == IssueCode.NOTE],
        "tensors": [_tensor_json(q) for q in a.quantized],
    }


@dataclass
class Report:
    roots: list[str]
    deep: bool
    artifacts: list[Artifact]
    findings: list[Finding]
    skipped: list[dict[str, str]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # e.g. the --deep slow-path note
    declared: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def parsed_any(self) -> bool:
        return any(a.parsed and a.format in CHECKPOINT_FORMATS for a in self.artifacts)

    @property
    def exit_codes(self) -> dict[str, int]:
        return exit_codes(self.findings, self.parsed_any)

    def exit_code(self, policy: str = "graded") -> int:
        return self.exit_codes[policy]

    def by_severity(self) -> dict[str, list[Finding]]:
        out: dict[str, list[Finding]] = {s: [] for s in SEVERITIES}
        for f in self.findings:
            out[f.severity].append(f)
        return out

    def to_json(self) -> dict[str, Any]:
        counts = Counter(f.severity for f in self.findings)
        ckpt = [a for a in self.artifacts if a.format != "config" or not a.parsed]
        return {
            "report_version": REPORT_VERSION,
            "tool_version": __version__,
            "roots": self.roots,
            "deep": self.deep,
            "exit_codes": self.exit_codes,
            "summary": {
                "files": len(ckpt),
                "parsed": sum(1 for a in ckpt if a.parsed),
                "tensors": sum(len(a.tensors) for a in ckpt),
                "quantized": sum(len(a.quantized) for a in ckpt if a.format != "grit-manifest"),
                "findings": {s: counts.get(s, 0) for s in SEVERITIES},
            },
            "artifacts": [artifact_summary(a) for a in ckpt],
            "findings": [f.to_json() for f in self.findings],
            "skipped": self.skipped,
            "messages": self.messages,
        }


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (_SEV_ORDER[f.severity], f.path, f.kind,
                                           f.tensor or "", f.message))


def from_scan(scan: ScanInput, findings: list[Finding]) -> Report:
    skipped = [{"path": str(i.detail.get("path", "")), "reason": i.message}
               for i in scan.skipped]
    return Report(roots=scan.roots, deep=scan.deep, artifacts=scan.artifacts,
                  findings=sort_findings(findings), skipped=skipped,
                  declared={k: {x: y for x, y in v.items() if x not in ("raw", "all")}
                            for k, v in scan.declared.items()})
