"""SARIF 2.1.0: one rule per finding kind, so CI can upload it to code scanning."""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..rules.finding import _plain
from ..rules.kinds import KINDS
from .model import Report

DOCS = "https://github.com/grit-scan/grit-scan/blob/main/docs/findings.md"
LEVEL = {"structural": "error", "disagreement": "error", "warning": "warning", "info": "note"}


def _rule_name(kind: str) -> str:
    return "".join(p.capitalize() for p in kind.split("_"))


def to_sarif(report: Report) -> dict[str, Any]:
    kinds = list(KINDS)
    rules = [{
        "id": k,
        "name": _rule_name(k),
        "shortDescription": {"text": KINDS[k][1]},
        "helpUri": f"{DOCS}#{k.replace('_', '-')}",
        "defaultConfiguration": {"level": LEVEL[KINDS[k][0]]},
        "properties": {"severity": KINDS[k][0]},
    } for k in kinds]
    results = []
    for f in report.findings:
        loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {
            "uri": f.path.replace("\\", "/") or "."}}}
        if f.tensor:
            loc["logicalLocations"] = [{"name": f.tensor, "kind": "member"}]
        results.append({
            "ruleId": f.kind,
            "ruleIndex": kinds.index(f.kind),
            "level": LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [loc],
            "properties": {"severity": f.severity, "detail": _plain(f.detail)},
        })
    codes = report.exit_codes
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "grit-scan", "version": __version__,
                                "informationUri": "https://github.com/grit-scan/grit-scan",
                                "rules": rules}},
            "results": results,
            "invocations": [{"executionSuccessful": True, "exitCode": codes["graded"],
                             "properties": {"exit_codes": codes}}],
        }],
    }
