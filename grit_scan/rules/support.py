"""Pieces several kind modules share (no checks of their own live here).

* ``issue_findings``: reader issues (``IssueCode``) -> findings of one rule;
* grade families (``family``, ``identity``, ``declared_mix``,
  ``checkpoint_key``): what "the same role" and "the same grade" mean for the
  drift rules;
* ``plain_quantised``: the tensors a descriptor rule may judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from ..artifact import Artifact, Format, Issue, IssueCode, QTensor, Source
from .finding import Finding
from .registry import Rule


def issue_findings(art: Artifact, rule: Rule, codes: Collection[IssueCode],
                   keep: Callable[[Issue], bool] | None = None,
                   message: Callable[[Issue], str] | None = None) -> list[Finding]:
    """The artifact's issues with one of ``codes`` as findings of ``rule``."""
    return [rule.finding(art.path, message(iss) if message else iss.message, iss.tensor,
                         iss.detail)
            for iss in art.issues if iss.code in codes and (keep is None or keep(iss))]


def judged(q: QTensor) -> bool:
    """A tensor whose descriptor the descriptor rules judge: one recovered or
    inferred from the file (not a manifest's record, not a refusal)."""
    return q.desc is not None and q.reason is None and q.source not in (Source.NONE,
                                                                        Source.MANIFEST)


_LAYER = re.compile(r"(?<=\.)\d+(?=\.)|^\d+(?=\.)")
_KMIX = re.compile(r"^(Q\d_K_[SML]|Q\d_K|IQ\d_\w+|Q\d_K_XL|TQ\d_\d)$")
_SPLIT = re.compile(r"-\d{5}-of-\d{5}(?=\.gguf$)")


def family(role: str) -> str:
    """A role with its layer index dropped: ``blk.3.attn_q.weight`` ->
    ``blk.*.attn_q.weight``."""
    return _LAYER.sub("*", role)


def identity(q: QTensor) -> str:
    """What a tensor is quantised as: its grade, or its convention."""
    if q.grade is not None:
        return q.grade.name or q.grade.canonical
    if q.desc is not None:
        return f"grade_id {q.desc.grade_id:#018x}"
    return q.convention or "unknown"


def declared_mix(art: Artifact) -> str | None:
    """The k-quant mix a GGUF's general.file_type declares (Q4_K_M, ...)."""
    name = art.metadata.get("file_type_name")
    if art.format is Format.GGUF and isinstance(name, str) and _KMIX.match(name):
        return name
    return None


def checkpoint_key(a: Artifact) -> str:
    """Which checkpoint a file belongs to: a safetensors directory, a GGUF
    file, or the set of a split GGUF's parts."""
    if a.format is Format.GGUF:
        return _SPLIT.sub("", a.path)
    return a.group or a.path
