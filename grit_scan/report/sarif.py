"""SARIF 2.1.0: one rule per finding kind, generated from the rule registry,
so CI can upload the report to code scanning.

Stable across runs and checkouts:
- URIs are normalised (``./a``, ``a/b/../c`` and absolute paths under the
  working directory become repo-relative), percent-encoded, and carry
  ``uriBaseId: %SRCROOT%`` (the working directory, where CI checks out the
  repository).  A path outside it stays an absolute ``file://`` URI.
- ``partialFingerprints["gritFinding/v1"]`` is a hash of the kind, the path
  relative to the scan root that holds the file (so moving the repository,
  or scanning it by an absolute path, changes nothing) and the tensor or
  role, plus an occurrence number for findings that share all three.
- The tensor is a logical location; when it is a stored tensor of the file,
  its bytes are a region (``byteOffset``, ``byteLength``).
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Any

from .._version import __version__
from ..artifact import Artifact, StoredTensor, TensorTable
from ..rules.finding import Finding, Severity, plain
from ..rules.registry import Rule, rules
from .escape import esc, uri_path
from .report import Report

DOCS = "https://github.com/grit-scan/grit-scan/blob/main/docs/findings.md"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "gritFinding/v1"
LEVEL = {Severity.STRUCTURAL: "error", Severity.DISAGREEMENT: "error",
         Severity.WARNING: "warning", Severity.INFO: "note"}


def _rule_name(kind: str) -> str:
    return "".join(p.capitalize() for p in kind.split("_"))


def sarif_rule(r: Rule) -> dict[str, Any]:
    """A reportingDescriptor with the rule's documentation as its help."""
    first = r.doc.strip().split("\n\n", 1)[0].replace("\n", " ")
    return {
        "id": r.code,
        "name": _rule_name(r.name),
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": first, "markdown": first},
        "help": {"text": r.doc, "markdown": r.doc},
        "helpUri": f"{DOCS}#{r.code.lower()}-{r.name.replace('_', '-')}",
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"severity": r.severity.value, "kind": r.name},
    }


def repo_path(path: str, cwd: str | None = None) -> str:
    """``path`` normalised and relative to the working directory when it lies
    under it (``/`` separators); otherwise the absolute normalised path."""
    base = os.path.abspath(cwd or os.getcwd())
    full = os.path.abspath(path or ".")
    if full == base:
        return "."
    if full.startswith(base.rstrip(os.sep) + os.sep):
        return os.path.relpath(full, base).replace(os.sep, "/")
    return full.replace(os.sep, "/")


def model_path(path: str, roots: list[str]) -> str:
    """``path`` relative to the scan root that holds it (a file root: its
    name), independent of where the repository lives."""
    full = os.path.abspath(path or ".")
    best: str | None = None
    for r in roots:
        root = os.path.abspath(r)
        if full == root:
            cand = os.path.basename(root)
        elif full.startswith(root.rstrip(os.sep) + os.sep):
            cand = os.path.relpath(full, root)
        else:
            continue
        if best is None or len(cand) < len(best):
            best = cand
    return (best if best is not None else os.path.normpath(path)).replace(os.sep, "/")


def artifact_location(path: str) -> dict[str, Any]:
    rel = repo_path(path)
    if rel.startswith("/"):
        return {"uri": "file://" + uri_path(rel)}
    return {"uri": uri_path(rel), "uriBaseId": SRCROOT}


def _subject(f: Finding) -> str | None:
    """The tensor, else the role a finding is about (role_drift has no tensor)."""
    if f.tensor:
        return f.tensor
    role = f.detail.get("role")
    return role if isinstance(role, str) else None


def fingerprint(f: Finding, roots: list[str], occurrence: int = 0) -> str:
    key = "\0".join([f.kind.value, model_path(f.path, roots), _subject(f) or ""])
    return f"{hashlib.sha256(key.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}:{occurrence}"


class _Regions:
    """Byte regions of stored tensors, one name index per file, built on demand."""

    def __init__(self, artifacts: list[Artifact]) -> None:
        self._arts = {a.path: a for a in artifacts}
        self._index: dict[str, dict[str, StoredTensor]] = {}

    def of(self, f: Finding) -> dict[str, int] | None:
        a = self._arts.get(f.path)
        if a is None or not f.tensor:
            return None
        if f.path not in self._index:
            tensors = a.tensors
            self._index[f.path] = (tensors.by_name() if isinstance(tensors, TensorTable)
                                   else {t.name: t for t in tensors})
        t = self._index[f.path].get(f.tensor)
        if t is None or t.offset < 0 or t.nbytes < 0:
            return None
        return {"byteOffset": t.offset, "byteLength": t.nbytes}


def result(f: Finding, index: int, roots: list[str], regions: _Regions,
           occurrence: int = 0) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": artifact_location(f.path)}
    region = regions.of(f)
    if region is not None:
        phys["region"] = region
    loc: dict[str, Any] = {"physicalLocation": phys}
    subject = _subject(f)
    if subject:
        loc["logicalLocations"] = [{"name": subject, "fullyQualifiedName": subject,
                                    "kind": "member" if f.tensor else "namespace"}]
    return {
        "ruleId": f.code,
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": esc(f.message)},
        "locations": [loc],
        "partialFingerprints": {FINGERPRINT: fingerprint(f, roots, occurrence)},
        "properties": {"severity": f.severity.value, "kind": f.kind.value,
                       "detail": plain(f.detail)},
    }


def to_sarif(report: Report) -> dict[str, Any]:
    from .summary import next_step, summary_line

    all_rules = rules()
    index = {r.code: i for i, r in enumerate(all_rules)}
    regions = _Regions(report.artifacts)
    seen: Counter[tuple[str, str, str]] = Counter()
    results = []
    for f in report.findings:
        key = (f.kind.value, model_path(f.path, report.roots), _subject(f) or "")
        results.append(result(f, index[f.code], report.roots, regions, seen[key]))
        seen[key] += 1
    codes = report.exit_codes
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "grit-scan", "version": __version__,
                                "informationUri": "https://github.com/grit-scan/grit-scan",
                                "rules": [sarif_rule(r) for r in all_rules]}},
            "results": results,
            "columnKind": "unicodeCodePoints",
            "invocations": [{"executionSuccessful": True, "exitCode": codes["graded"],
                             "properties": {"exit_codes": codes}}],
            "properties": {"summary": summary_line(report), "next_step": next_step(report),
                           "ignored": report.ignored},
        }],
    }
