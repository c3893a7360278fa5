"""unlisted_checkpoint: a checkpoint under a manifest's directory that the
manifest does not list, so the gate never checks it."""

from __future__ import annotations

import posixpath

from ...artifact import Artifact, Format
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule

RULE = Rule(
    code="GRIT205",
    kind=Kind.UNLISTED_CHECKPOINT,
    severity=Severity.DISAGREEMENT,
    summary='a checkpoint under a manifest\'s directory is not listed in it',
    doc="""\
**Disagreement.** Scanning a grit-manifest.json found a safetensors or GGUF
file under the manifest's directory that the manifest does not list: the
tree and the record disagree about what the model is, and the gate checks
nothing in that file. A disagreement, not a warning, so that the default
CI gate (`--fail-on structural,disagreement`) fails until it is recorded.

Example (`tests/test_ci_gate.py`, a shard added after recording):

    models/extra.safetensors: a checkpoint under the manifest's directory that grit-manifest.json does not list; the gate does not check it

Fix: record it (`grit manifest --deep ...` again and commit the manifest),
or remove the file.
""",
)
RULES = (RULE,)


def check_file(art: Artifact) -> list[Finding]:
    if art.format is not Format.MANIFEST or not art.parsed:
        return []
    unlisted = art.metadata.get("unlisted", [])
    if not isinstance(unlisted, list):
        return []
    where = posixpath.dirname(art.path.replace("\\", "/"))
    name = posixpath.basename(art.path.replace("\\", "/"))
    return [RULE.finding(posixpath.join(where, rel), f"{posixpath.join(where, rel)}: a "
                         f"checkpoint under the manifest's directory that {name} does not "
                         "list; the gate does not check it",
                         detail={"manifest": art.path, "file": rel})
            for rel in unlisted if isinstance(rel, str)]
