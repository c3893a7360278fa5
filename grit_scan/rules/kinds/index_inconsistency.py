"""index_inconsistency: an index and the shard headers disagree."""

from __future__ import annotations

from ...artifact import Artifact, ScanInput
from ...issues import IssueCode
from ...issues import index_inconsistency as owned  # the issues this kind reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issue_findings, split_issues

RULE = Rule(
    code="GRIT107",
    kind=Kind.INDEX_INCONSISTENCY,
    severity=Severity.STRUCTURAL,
    summary='an index and the shard headers disagree',
    doc="""\
**Structural.** `model.safetensors.index.json` and the shard headers
disagree: a tensor mapped to a shard that lacks it, a tensor in two shards
(the winner depends on load order, vllm#54230), a tensor no index entry
names, a file named as a shard of the index's set (`model-00002-of-00004.safetensors`
beside `model.safetensors.index.json`) that the index maps no tensor to
(loaders read only the files the index names: transformers'
get_checkpoint_shard_files; a file of another shard count,
or of another base name, is another set's), or an index that names a
pickle-style file.

Example (`fixtures/broken/index-inconsistent`):

    tensor 'model.b.weight' is in 2 shards (model-00001-of-00002.safetensors, model-00002-of-00002.safetensors)

Fix: regenerate the index from the shards.
""",
)
RULES = (RULE,)


def check_file(art: Artifact) -> list[Finding]:
    return issue_findings(art, RULE, owned.CODES)


def check_scan(scan: ScanInput) -> list[Finding]:
    """The parts of each GGUF split set (a missing, extra or duplicated
    part; counts that disagree)."""
    return [RULE.finding(path, iss.message, iss.tensor, iss.detail)
            for path, iss in split_issues(scan) if iss.code is IssueCode.INDEX_INCONSISTENT]
