"""Grade drift: one role carrying several grades (role_drift), and several
roles carrying different grades in one file (artifact_drift).

A role's *family* drops its layer index (``blk.3.attn_q.weight`` ->
``blk.*.attn_q.weight``), so a half-converted checkpoint — some layers in
one grade, the rest in another — shows as one family with two grades.
Grouping is by hashing, never pairwise.  A GGUF whose general.file_type
declares a k-quant mix (Q4_K_M, ...) mixes types by design: that is shown
in its summary, not reported as drift.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ..model import Artifact, QTensor
from .finding import Finding

_LAYER = re.compile(r"(?<=\.)\d+(?=\.)|^\d+(?=\.)")
_KMIX = re.compile(r"^(Q\d_K_[SML]|Q\d_K|IQ\d_\w+|Q\d_K_XL|TQ\d_\d)$")


def family(role: str) -> str:
    return _LAYER.sub("*", role)


def identity(q: QTensor) -> str:
    """What a tensor is quantised as: its grade, or its convention."""
    if q.grade is not None:
        return q.grade.name or q.grade.canonical
    if q.desc is not None:
        return f"grade_id {q.desc.grade_id:#018x}"
    return q.convention or "unknown"


def declared_mix(art: Artifact) -> str | None:
    name = art.metadata.get("file_type_name")
    if art.format == "gguf" and isinstance(name, str) and _KMIX.match(name):
        return name
    return None


_SPLIT = re.compile(r"-\d{5}-of-\d{5}(?=\.gguf$)")


def checkpoint_key(a: Artifact) -> str:
    """Which checkpoint a file belongs to: a safetensors directory, a GGUF
    file, or the set of a split GGUF's parts."""
    if a.format == "gguf":
        return _SPLIT.sub("", a.path)
    return a.group or a.path


def role_drift(arts: list[Artifact]) -> list[Finding]:
    """Per checkpoint: a family with more than one grade."""
    by_group: dict[str, list[Artifact]] = defaultdict(list)
    for a in arts:
        if a.quantized and a.format in ("safetensors", "gguf"):
            by_group[checkpoint_key(a)].append(a)
    out = []
    for group, members in sorted(by_group.items()):
        fam: dict[str, dict[str, list[tuple[Artifact, QTensor]]]] = defaultdict(
            lambda: defaultdict(list))
        mixed_ok = {a.path for a in members if declared_mix(a)}
        for a in members:
            if a.path in mixed_ok:
                continue
            for q in a.quantized:
                if q.desc is None and q.convention is None:
                    continue
                fam[(a.format, family(q.role))][identity(q)].append((a, q))  # type: ignore[index]
        for (_fmt, f), ids in sorted(fam.items()):
            if len(ids) < 2:
                continue
            counts = {k: len(v) for k, v in ids.items()}
            first = sorted(ids.items(), key=lambda kv: -len(kv[1]))
            path = first[0][1][0][0].path
            examples = {k: [q.name for _, q in v[:5]] for k, v in ids.items()}
            msg = (f"role {f} carries {len(ids)} grades in one checkpoint: "
                   + ", ".join(f"{k} x{n}" for k, n in sorted(counts.items(),
                                                              key=lambda kv: -kv[1]))
                   + " — a half-converted checkpoint?")
            out.append(Finding("role_drift", path, msg, None,
                               {"role": f, "group": group, "grades": counts,
                                "examples": examples,
                                "suggested_fix": "re-run the conversion over every layer"}))
    return out


def artifact_drift(art: Artifact, drifting: set[str]) -> list[Finding]:
    """Different families carrying different grades in one file."""
    if art.path in drifting or declared_mix(art):
        return []
    fams: dict[str, set[str]] = defaultdict(set)
    for q in art.quantized:
        if q.desc is None and q.convention is None:
            continue
        fams[identity(q)].add(family(q.role))
    if len(fams) < 2:
        return []
    detail = {k: sorted(v)[:10] for k, v in fams.items()}
    msg = (f"{len(fams)} grades in one file: " + "; ".join(
        f"{k} for {len(v)} role(s)" for k, v in sorted(fams.items())))
    return [Finding("artifact_drift", art.path, msg, None, {"grades": detail})]
