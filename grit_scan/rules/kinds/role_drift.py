"""role_drift: one logical role carrying more than one grade inside one
checkpoint — the shape of a half-converted checkpoint.

A role's family drops its layer index, so some layers in one grade and the
rest in another show as one family with two grades.  Grouping is by
hashing, never pairwise.  A GGUF whose general.file_type declares a k-quant
mix (Q4_K_M, ...) mixes types by design and is left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ...artifact import Artifact, ScanInput
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule, memoised
from ..support import Kin, checkpoint_key, declared_mix, families, kins, per_tensor

RULE = Rule(
    code="GRIT202",
    kind=Kind.ROLE_DRIFT,
    severity=Severity.DISAGREEMENT,
    summary='one logical role carries more than one grade inside one checkpoint (a half-converted checkpoint)',
    doc="""\
**Disagreement.** One logical role (the layer index dropped:
`blk.*.attn_q.weight`) carries more than one grade inside one checkpoint —
the shape of a half-converted checkpoint. A GGUF whose `general.file_type`
declares a k-quant mix (Q4_K_M, ...) mixes types by design: its summary says
so and no finding is made.

Example (`fixtures/broken/half-converted`):

    role model.layers.*.self_attn.q_proj.weight carries 2 grades in one checkpoint: GRADE_MXFP4 x2, GRADE_NVF4 x2

Fix: re-run the conversion over every layer.
""",
)
RULES = (RULE,)


def check_scan(scan: ScanInput) -> list[Finding]:
    return role_drift(scan.artifacts)


class _Seen:
    """One identity within a role family: how many tensors, the file of the
    first, and the first five names."""

    __slots__ = ("count", "first", "names")

    def __init__(self, a: Artifact, name: str) -> None:
        self.count, self.first, self.names = 1, a, [name]

    def add(self, name: str) -> None:
        self.count += 1
        if len(self.names) < 5:
            self.names.append(name)


def role_drift(arts: Sequence[Artifact]) -> list[Finding]:
    """Per checkpoint: a family with more than one grade.  artifact_drift asks
    for it too: computed once per rules run (docs/performance.md)."""
    return list(memoised("role_drift", arts, lambda: _role_drift(arts)))


def described(kin: Kin) -> bool:
    """Tensors the drift rules compare: with a descriptor or a convention."""
    return kin.rep.desc is not None or kin.rep.convention is not None


def _identity(kin: Kin) -> str | None:
    return kin.identity if described(kin) else None


def _role_drift(arts: Sequence[Artifact]) -> list[Finding]:
    by_group: dict[str, list[Artifact]] = defaultdict(list)
    for a in arts:
        if a.quantized and a.format.is_checkpoint_file:
            by_group[checkpoint_key(a)].append(a)
    out = []
    for group, members in sorted(by_group.items()):
        # (format, family) -> identity -> what the finding needs: the count, the
        # first file and up to five names (not a record per tensor: docs/performance.md)
        fam: dict[tuple[str, str], dict[str, _Seen]] = {}
        members = [a for a in members if not declared_mix(a)]
        if len({kin.identity for a in members for kin in kins(a) if described(kin)}) < 2:
            continue  # one identity in the checkpoint: no family carries two (docs/performance.md)
        for a in members:
            fmt = a.format.value
            # from the columns: no tensor is made (artifact.QList, docs/performance.md)
            qs = a.quantized
            for name, fa, ident in zip(qs.names(), families(qs.roles()),
                                       per_tensor(a, _identity)):
                if ident is None:
                    continue
                ids = fam.setdefault((fmt, fa), {})
                seen = ids.get(ident)
                if seen is None:
                    ids[ident] = _Seen(a, name)
                else:
                    seen.add(name)
        for (_fmt, f), ids in sorted(fam.items()):
            if len(ids) < 2:
                continue
            counts = {k: v.count for k, v in ids.items()}
            first = sorted(ids.items(), key=lambda kv: -kv[1].count)
            path = first[0][1].first.path
            examples = {k: v.names for k, v in ids.items()}
            msg = (f"role {f} carries {len(ids)} grades in one checkpoint: "
                   + ", ".join(f"{k} x{n}" for k, n in sorted(counts.items(),
                                                              key=lambda kv: -kv[1]))
                   + " — a half-converted checkpoint?")
            out.append(RULE.finding(path, msg, None,
                                    {"role": f, "group": group, "grades": counts,
                                     "examples": examples,
                                     "suggested_fix": "re-run the conversion over every layer"}))
    return out
