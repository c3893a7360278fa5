"""path_escape: a path in an index, manifest, config or symlink that leaves
the scanned root.  It is never opened."""

from __future__ import annotations

from ...artifact import Artifact, ScanInput
from ...issues import path_escape as owned  # the issues this kind reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issue_findings

RULE = Rule(
    code="GRIT108",
    kind=Kind.PATH_ESCAPE,
    severity=Severity.STRUCTURAL,
    summary='a path in an index, manifest or symlink leaves the scanned root; it was not opened',
    doc="""\
**Structural.** A path in an index or manifest (absolute, `..`, a drive
letter, UNC, a backslash), a symlink whose target is outside the scanned
root, or a `config.json` `auto_map` entry that loads code from another
repository. The path is never opened.

Example (`fixtures/broken/path-escape`):

    weight_map sends 'model.x.weight' to '/etc/passwd': an absolute path would leave the scanned directory; it was not opened

Fix: keep every shard beside its index; scan the directory that contains a
symlink's target (for a Hugging Face cache, the repository directory, not a
snapshot).
""",
)
RULES = (RULE,)


def check_file(art: Artifact) -> list[Finding]:
    return issue_findings(art, RULE, owned.CODES)


def check_scan(scan: ScanInput) -> list[Finding]:
    return [RULE.finding(str(i.detail.get("path", "")), i.message)
            for i in scan.skipped if i.detail.get("escape")]
