"""quantizations: several quantisations of one model side by side (the
layout of every ``-GGUF`` repository), listed so that nobody mistakes them
for disagreeing tools.  Information only: they are never compared."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from ...artifact import Artifact, ScanInput
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import models, quant_label

RULE = Rule(
    code="GRIT401",
    kind=Kind.QUANTIZATIONS,
    severity=Severity.INFO,
    summary="several quantisations of one model side by side; listed, never compared",
    doc="""\
**Info.** Two or more models that hold the same tensors (the same roles with
the same shapes, for at least half of the smaller model) in different kinds
of quantisation — a `-GGUF` repository's Q4_K_M, Q8_0 and IQ4_XS files, an
NVFP4 export beside an FP8 one. Different quantisations are expected to
describe their tensors differently, so gid_disagreement never compares them;
this lists them instead. In a Hugging Face cache only the files of one
repository are grouped. Never changes the exit code.

Example (`fixtures/producers/gguf-quants`):

    12 quantisations of one model: IQ2_XS (tiny-llama-IQ2_XS.gguf), IQ4_XS (tiny-llama-IQ4_XS.gguf), ...

Fix: nothing to fix.
""",
)
RULES = (RULE,)

OVERLAP = 0.5  # shared (role, shape) pairs, as a fraction of the smaller model


def _skeleton(members: Sequence[Artifact]) -> set[tuple[str, tuple[int, ...]]]:
    return {(q.role, tuple(q.shape)) for a in members for q in a.quantized}


def check_scan(scan: ScanInput) -> list[Finding]:
    ms = [(key, members) for key, members in models(scan.artifacts).items()
          if any(a.quantized for a in members)]
    parent = list(range(len(ms)))
    # a skeleton visits every tensor: built only for models of one repository
    # that are compared (issue 15)
    skeletons: dict[int, set[tuple[str, tuple[int, ...]]]] = {}

    def skeleton(i: int) -> set[tuple[str, tuple[int, ...]]]:
        s = skeletons.get(i)
        if s is None:
            s = skeletons[i] = _skeleton(ms[i][1])
        return s

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(ms)):
        for j in range(i + 1, len(ms)):
            mi, mj = ms[i][1], ms[j][1]
            if mi[0].repo != mj[0].repo:
                continue
            si, sj = skeleton(i), skeleton(j)
            if not si or not sj:
                continue
            if len(si & sj) >= OVERLAP * min(len(si), len(sj)):
                parent[find(j)] = find(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(ms)):
        groups.setdefault(find(i), []).append(i)
    out = []
    for idx in groups.values():
        if len(idx) < 2:
            continue  # one model is one quantisation: its label need not be looked for
        labels: dict[str, list[str]] = {}
        for i in idx:
            key, members = ms[i]
            labels.setdefault(quant_label(members), []).append(posixpath.basename(key))
        if len(labels) < 2:
            continue
        paths = [ms[i][1][0].path for i in idx]
        where = posixpath.commonpath(paths) if len(paths) > 1 else paths[0]
        listing = ", ".join(f"{lab} ({', '.join(v)})" for lab, v in sorted(labels.items()))
        out.append(RULE.finding(
            where, f"{len(labels)} quantisations of one model: {listing}", None,
            {"quantizations": sorted(labels), "models": sorted(ms[i][0] for i in idx),
             "repo": ms[idx[0]][1][0].repo}))
    return out
