"""not_representable: a recognised convention GRIT v1 cannot express, with
the §0.3 clause (or section) that excludes it, grouped per file."""

from __future__ import annotations

from itertools import compress, repeat
from operator import attrgetter, eq, is_
from typing import Any

from ...artifact import Artifact
from ...issues import not_representable as owned  # the issues this kind reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issues_with

RULE = Rule(
    code="GRIT307",
    kind=Kind.NOT_REPRESENTABLE,
    severity=Severity.WARNING,
    summary='a recognised convention GRIT v1 cannot express',
    doc="""\
**Warning.** A recognised convention GRIT v1 cannot express, with the §0.3
clause (or section) that excludes it: codebooks (bitsandbytes NF4/FP4,
llama.cpp IQ*: §0.3(b)), GPTQ act-order (§0.3(c)), GPTQ/AWQ dense-nibble zero
points (§0.3(d), with the predicted and present zero-point bytes), 2-D block
FP8 (§3.7), one FP8 scale over a weight of more than one row (per-tensor:
§3.7 groups are runs of k0 along one axis and k0 is a uint16, §3.1; v1 scales
a whole tensor only at level 1, over a level-0 scale plane), ggml types with
offset-binary codes or split bit planes. Such a tensor has no descriptor and
no gid; its size equation and declared parameters are still checked.

Example (`fixtures/conventions/gptq`):

    GPTQ packs its zero points as dense nibbles; GRIT v1 stores sub-byte zero points one per byte (§3.4),
    so the checkpoint is not byte-representable (§0.3(d)): GRIT predicts 6,272 zero-point bytes, the file holds 3,136

Fix: none within GRIT v1; the finding documents the coverage gap.
""",
)
RULES = (RULE,)

_DETAIL, _TENSOR = attrgetter("detail"), attrgetter("tensor")


def check_file(art: Artifact) -> list[Finding]:
    issues = issues_with(art, owned.CODES)
    if not issues:
        return []
    # the key of each detail mapping, asked once: the modules a convention's
    # plan was replayed on share their issue's detail (conventions/engine.py).
    # ``details`` keeps every mapping alive while its id is a key
    details = list(map(_DETAIL, issues))
    key_of: dict[int, tuple[str, str] | None] = {}
    for i, d in dict(zip(map(id, details), details)).items():
        key_of[i] = None if d.get("unsupported") else (str(d.get("convention", "?")),
                                                       str(d.get("clause", "")))
    keys = list(map(key_of.__getitem__, map(id, details)))
    out = [RULE.finding(art.path, iss.message, detail=iss.detail)
           for iss in compress(issues, map(is_, keys, repeat(None)))]
    tensors: list[str] = [t or "?" for t in map(_TENSOR, issues)]
    nrep: dict[tuple[str, str], list[str]] = {}
    reasons: dict[tuple[str, str], str] = {}
    first: dict[tuple[str, str], Any] = {}
    for key in dict.fromkeys(keys):  # in the order first seen, as the issues are
        if key is None:
            continue
        at = keys.index(key)
        reasons[key] = issues[at].message.split(": ", 1)[-1]
        first[key] = details[at]
        nrep[key] = list(compress(tensors, map(eq, keys, repeat(key))))
    for (conv, clause), names in sorted(nrep.items()):
        detail = {"convention": conv, "clause": clause, "count": len(names),
                  "tensors": names[:50], "reason": reasons[(conv, clause)]}
        for k in ("predicted_aux", "present_aux", "group_size", "bits"):
            if k in first[(conv, clause)]:
                detail[k] = first[(conv, clause)][k]
        out.append(RULE.finding(
            art.path,
            f"{len(names)} tensor(s) in a convention GRIT v1 cannot express ({clause}): "
            f"{reasons[(conv, clause)]}", names[0] if len(names) == 1 else None, detail))
    return out
