"""SARIF 2.1.0: one rule per finding kind, generated from the rule registry,
so CI can upload the report to code scanning."""

from __future__ import annotations

from typing import Any

from .._version import __version__
from ..rules.finding import Severity, plain
from ..rules.registry import Rule, rules
from .report import Report

DOCS = "https://github.com/grit-scan/grit-scan/blob/main/docs/findings.md"
LEVEL = {Severity.STRUCTURAL: "error", Severity.DISAGREEMENT: "error",
         Severity.WARNING: "warning", Severity.INFO: "note"}


def _rule_name(kind: str) -> str:
    return "".join(p.capitalize() for p in kind.split("_"))


def sarif_rule(r: Rule) -> dict[str, Any]:
    """A reportingDescriptor with the rule's documentation as its help."""
    return {
        "id": r.code,
        "name": _rule_name(r.name),
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.summary},
        "help": {"text": r.doc, "markdown": r.doc},
        "helpUri": f"{DOCS}#{r.code.lower()}-{r.name.replace('_', '-')}",
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"severity": r.severity.value, "kind": r.name},
    }


def to_sarif(report: Report) -> dict[str, Any]:
    all_rules = rules()
    index = {r.code: i for i, r in enumerate(all_rules)}
    results = []
    for f in report.findings:
        loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {
            "uri": f.path.replace("\\", "/") or "."}}}
        if f.tensor:
            loc["logicalLocations"] = [{"name": f.tensor, "kind": "member"}]
        results.append({
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [loc],
            "properties": {"severity": f.severity.value, "kind": f.kind.value,
                           "detail": plain(f.detail)},
        })
    codes = report.exit_codes
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "grit-scan", "version": __version__,
                                "informationUri": "https://github.com/grit-scan/grit-scan",
                                "rules": [sarif_rule(r) for r in all_rules]}},
            "results": results,
            "invocations": [{"executionSuccessful": True, "exitCode": codes["graded"],
                             "properties": {"exit_codes": codes}}],
        }],
    }
