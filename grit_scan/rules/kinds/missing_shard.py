"""missing_shard: an index or a manifest names a file that is not there."""

from __future__ import annotations

from ...artifact import Artifact, ScanInput
from ...issues import IssueCode
from ...issues import missing_shard as owned  # the issues this kind reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issue_findings, split_issues

RULE = Rule(
    code="GRIT105",
    kind=Kind.MISSING_SHARD,
    severity=Severity.STRUCTURAL,
    summary='an index or manifest names a file that is not there',
    doc="""\
**Structural.** An index names a shard that is not there, or a
grit-manifest.json lists a file that is gone. Loaders that drop a missing
shard silently leave garbage weights (sglang#32279).

Example (`fixtures/broken/missing-shard`):

    shard 'model-00002-of-00002.safetensors' is named by 4 tensor(s) in the index but is not there

Fix: download the missing shard, or regenerate the index.
""",
)
RULES = (RULE,)


def check_file(art: Artifact) -> list[Finding]:
    return issue_findings(art, RULE, owned.CODES)


def check_scan(scan: ScanInput) -> list[Finding]:
    """The parts of each GGUF split set (a missing, extra or duplicated
    part; counts that disagree)."""
    return [RULE.finding(path, iss.message, iss.tensor, iss.detail)
            for path, iss in split_issues(scan) if iss.code is IssueCode.MISSING_SHARD]
