"""unsupported_convention: a declared quantisation, or tensors that look
quantised, that no convention recognises: the bytes are not checked."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from ...artifact import Artifact, ScanInput
from ...issues import (
    unsupported_convention as owned,  # the issues this kind reports, and their text
)
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import config_path, issues_with

RULE = Rule(
    code="GRIT310",
    kind=Kind.UNSUPPORTED_CONVENTION,
    severity=Severity.WARNING,
    summary="a declared or stored quantisation no convention recognises: not checked",
    doc="""\
**Warning.** The checkpoint declares a `quant_method`, `format` or
`quant_algo` that no convention grit knows recognises
([conventions.md](conventions.md)), or it holds tensors that look quantised
(`qweight`, `_packed`, `.scales`, `._data`, `_qdata`, `W_q`, or an integer or
FP8 tensor beside a `scale`) that no convention claims. Their bytes are not
checked: this says so rather than passing them in silence. It is never a
disagreement or a structural finding. A compressed-tensors config names
its storage by `format`: one no convention reads (`marlin-24`) is said
so when tensors go unchecked, and so is a `sparsity_config` format
(`sparse-24-bitmask`), naming the `.compressed`, `.bitmask` and
`.row_offsets` tensors it wrote.

Example (`fixtures/producers/quanto-qint4`):

    14 tensor(s) look quantised but no convention claims them (e.g. model.layers.0.mlp.down_proj.weight._data._data): their quantisation is not checked

Fix: none in the checkpoint; the finding documents the coverage gap.
""",
)
RULES = (RULE,)


def _count(a: Artifact) -> int:
    return sum(int(str(i.detail.get("count", 0))) for i in issues_with(a, owned.CODES))


def check_scan(scan: ScanInput) -> list[Finding]:
    out: list[Finding] = []
    by_group: dict[str, list[Artifact]] = defaultdict(list)
    for a in scan.artifacts:
        if a.format.hf_named and a.group is not None:
            by_group[a.group].append(a)
    unknown: set[str] = set()
    if scan.declared:
        # here: the convention registry, which only a declaring model needs (start-up)
        from ...conventions.base import declared_name, recognised

        for group, dec in sorted(scan.declared.items()):
            arts = by_group.get(group, [])
            if not arts or recognised(dec):
                continue
            looks = sum(map(_count, arts))
            unchecked = looks or sum(n for a in arts for dt, n in a.unquantized.items()
                                     if dt not in ("F32", "F16", "BF16", "F64"))
            if not unchecked and dec.get("method") == "compressed-tensors":
                # a format no convention reads, over tensors the conventions
                # read all of (by their layout): nothing goes unchecked
                continue
            unknown.add(group)
            src = dec.get("source", "config")
            out.append(RULE.finding(
                config_path(group, src),
                f"{src} declares {declared_name(dec)}, which no convention recognises: "
                f"{unchecked} tensor(s) in {len(arts)} file(s) are not checked", None,
                {"declared": {k: v for k, v in dec.items() if k not in ("raw", "all")},
                 "count": unchecked, "files": len(arts)}))
        out.extend(_sparse(scan.declared, by_group))
    for a in scan.artifacts:
        if a.group in unknown:
            continue
        for iss in issues_with(a, owned.CODES):
            out.append(RULE.finding(a.path, iss.message, None, iss.detail))
    return out


def _sparse(declared: Mapping[str, dict[str, Any]],
            by_group: dict[str, list[Artifact]]) -> list[Finding]:
    """A compressed-tensors sparsity format no convention reads
    (``sparsity_config.format``: sparse-bitmask, sparse-24-bitmask), with
    the tensors it wrote: their bytes are not checked (what is quantised
    among them is not known either: declared_mismatch does not call the
    config stale)."""
    # here: the convention registry's helpers, which only a declaring model needs (start-up)
    from ...conventions.base import ct_sparsity, sparse_parts

    out: list[Finding] = []
    for group, dec in sorted(declared.items()):
        fmt = ct_sparsity(dec)
        if fmt is None:
            continue
        arts = by_group.get(group, [])
        n = sum(sparse_parts(a.tensor_names()) for a in arts)
        if not n:
            continue
        src = dec.get("source", "config")
        out.append(RULE.finding(
            config_path(group, src),
            f"{src} declares compressed-tensors sparsity format {fmt!r}, which no convention "
            f"reads: {n} tensor(s) in {len(arts)} file(s) are stored sparse-compressed "
            "(.compressed, .bitmask, .row_offsets) and are not checked", None,
            {"sparsity_format": fmt, "count": n, "files": len(arts)}))
    return out
