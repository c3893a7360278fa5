"""Reader issues -> findings (file-level problems).

Readers record what they found wrong as ``Issue`` codes; this rule turns
each into a finding of the vocabulary.  A truncated stored tensor that a
quantised tensor uses is left to the size rule, which names the logical
tensor and the §7.3 equation instead of reporting the same bytes twice.
"""

from __future__ import annotations

from ..model import Artifact, IssueCode, ScanInput
from .finding import Finding

CODE_KIND: dict[IssueCode, str | None] = {
    IssueCode.UNPARSEABLE: "file_unparseable",
    IssueCode.TRUNCATED: "size_mismatch",
    IssueCode.BAD_OFFSETS: "size_mismatch",
    IssueCode.BAD_TENSOR: "size_mismatch",
    IssueCode.DUPLICATE: "file_unparseable",
    IssueCode.GRIT_HEADER: "file_unparseable",
    IssueCode.SIZE: "size_mismatch",
    IssueCode.MISSING_SHARD: "missing_shard",
    IssueCode.INDEX_INCONSISTENT: "index_inconsistency",
    IssueCode.PATH_ESCAPE: "path_escape",
    IssueCode.CHANGED: "file_unparseable",
    IssueCode.SKIPPED: "file_unparseable",
    IssueCode.DECLARED_MISMATCH: "declared_mismatch",
    IssueCode.ZP_CONVENTION: "undeclared_zp_convention",
    IssueCode.PARTIAL: "partial_quantization",
    IssueCode.NOT_REPRESENTABLE: None,  # grouped by the representability rule
    IssueCode.UNREGISTERED_GRADE: None,
    IssueCode.NOTE: None,  # notes are listed with their artifact, not findings
}
CHECKPOINT_NAMES = (".safetensors", ".gguf", ".json")


def file_findings(art: Artifact) -> list[Finding]:
    covered = {p.tensor for q in art.quantized if q.desc is not None
               for p in (q.planes or []) + [q.payload] if p is not None}
    out = []
    for iss in art.issues:
        kind = CODE_KIND.get(iss.code)
        if kind is None:
            continue
        if iss.code == IssueCode.TRUNCATED and iss.tensor in covered:
            continue  # the size rule reports it against the logical tensor
        msg = iss.message
        if iss.code == IssueCode.GRIT_HEADER:
            msg = f"malformed GRIT metadata: {msg}"
        out.append(Finding(kind, art.path, msg, iss.tensor, dict(iss.detail)))
    return out


def skipped_findings(scan: ScanInput) -> list[Finding]:
    """Paths the walker would not open: symlinks out of the root are path
    escapes; special files or unreadable paths that look like checkpoints
    cannot be parsed; everything else is only counted."""
    out = []
    for iss in scan.skipped:
        path = str(iss.detail.get("path", ""))
        if "outside the scanned root" in iss.message:
            out.append(Finding("path_escape", path, iss.message))
        elif iss.detail.get("missing"):
            out.append(Finding("file_unparseable", path, iss.message))
        elif path.lower().endswith(CHECKPOINT_NAMES):
            out.append(Finding("file_unparseable", path, iss.message))
    return out
