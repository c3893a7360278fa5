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
from ..support import model_scheme, models, quant_label, scheme_parts

RULE = Rule(
    code="GRIT401",
    kind=Kind.QUANTIZATIONS,
    severity=Severity.INFO,
    summary="several quantisations of one model side by side; listed, never compared",
    doc="""\
**Info.** Two or more models that hold the same tensors (the same roles with
the same shapes, for at least half of the smaller model) in different kinds
of quantisation — a `-GGUF` repository's Q4_K_M, Q8_0 and IQ4_XS files, an
NVFP4 export beside an FP8 one, per-channel beside 128x128 block FP8.
Different quantisations are expected to describe their tensors differently,
so gid_disagreement never compares them; this lists them instead. Two models
that a producer labels alike but that hold different schemes (element and
scale formats, group shape, zero point, sparsity) are listed with their
scheme in brackets. Revisions of one Hugging Face repository whose formats
agree are one quantisation, whatever their group shapes: a change of group
shape between them is a `gid_disagreement`. Each model is named by its
folder (or its GGUF file); a long listing is cut short in the message and
whole in `--output-format full` and JSON (`full_message`, `listing`). In a
Hugging Face cache only the files of one repository are grouped. Never
changes the exit code.

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
    # that are compared (docs/performance.md)
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
        paths = [ms[i][1][0].path for i in idx]
        where = posixpath.commonpath(paths) if len(paths) > 1 else paths[0]
        # revisions of one repository whose formats agree are one quantisation:
        # a change of group shape between them is gid_disagreement's to report
        one_repo = ms[idx[0]][1][0].repo is not None
        named = [(quant_label(ms[i][1]), _formats(ms[i][1]) if one_repo
                  else model_scheme(ms[i][1]), _name(ms[i][0], where)) for i in idx]
        # a label two schemes share (compressed-tensors' float-quantized for
        # per-channel and block FP8) is told apart by its scheme
        schemes_of: dict[str, set[str | None]] = {}
        for lab, sch, _ in named:
            schemes_of.setdefault(lab, set()).add(sch)
        labels: dict[str, list[str]] = {}
        for lab, sch, name in named:
            if len(schemes_of[lab]) > 1 and sch is not None:
                lab = f"{lab} [{sch}]"
            labels.setdefault(lab, []).append(name)
        if len(labels) < 2:
            continue
        items = [f"{lab} ({', '.join(v)})" for lab, v in sorted(labels.items())]
        head = f"{len(labels)} quantisations of one model: "
        out.append(RULE.finding(
            where, head + _listing(items), None,
            {"full_message": head + ", ".join(items),"quantizations": sorted(labels), "models": sorted(ms[i][0] for i in idx),
             "listing": {lab: sorted(v) for lab, v in sorted(labels.items())},
             "repo": ms[idx[0]][1][0].repo}))
    return out


def _formats(members: Sequence[Artifact]) -> str | None:
    got = scheme_parts(members)
    return None if got is None else got[0]


_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json")
_LISTING = 160  # characters of the listing a message carries; the detail has all


def _name(key: str, where: str) -> str:
    """A model as a reader finds it under ``where``: its folder for a
    safetensors model (``fp8-block``, whatever its file is called), its file
    for a GGUF (a -GGUF repository holds several in one folder)."""
    rel = posixpath.relpath(key, where) if key != where else posixpath.basename(key)
    head, tail = posixpath.split(rel)
    if head and (tail in _WEIGHT_FILES or tail.endswith((".index.json", ".safetensors"))):
        return head
    return rel


def _listing(items: list[str]) -> str:
    text = ""
    for n, item in enumerate(items):
        nxt = item if not text else f"{text}, {item}"
        if len(nxt) > _LISTING and text:
            return f"{text} and {len(items) - n} more (--output-format full lists them)"
        text = nxt
    return text
