"""zp_convention_mismatch / zp_convention_undeclared / zp_convention_unverified:
the GPTQ zero-point
convention (v1 stores z−1, v2 stores z; §8.4 ZP_MINUS1) as declared, against
what the ``qzeros`` bytes say.

Declared: ``checkpoint_format`` (synonym ``format``) ``gptq`` is v1,
``gptq_v2`` is v2; none is v1, as every loader assumes (AutoGPTQ <= 0.4 wrote
no such key).  The bytes are read only under ``--deep`` and only from
``qzeros`` (b-bit fields, LSB-first in int32 words).  The rule (documented in
docs/spec-notes.md):

* symmetric: every stored zero point is one constant; v1 stores
  2^(b−1)−1, v2 stores 2^(b−1).  Any other constant settles nothing.
* asymmetric (values vary): a group's true zero point z = round(−min/step)
  lies in [0, 2^b−1] and, for a group holding weights of both signs (every
  real group of 32+ weights), sits near the middle of that range: the stored
  values centre on (2^b−1)/2 under v2 and one lower under v1.  The bytes
  settle it only when the mean of the stored values lies within 1/4 of one
  of those centres (the two are a whole step apart); otherwise they do not,
  and the finding says so instead of guessing.  The extremes of the range
  are not used: one skewed group moves them, and v1's z = 0 wraps to 2^b−1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from ...artifact import Artifact, PlaneReader, QTensor, ScanInput
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import positions

if TYPE_CHECKING:  # imported by zero_points, with --deep: a scan imports this module
    import numpy as np

MISMATCH = Rule(
    code="GRIT206",
    kind=Kind.ZP_CONVENTION_MISMATCH,
    severity=Severity.DISAGREEMENT,
    summary="--deep: the GPTQ qzeros bytes contradict the declared v1/v2 zero-point convention",
    doc="""\
**Disagreement, `--deep` only.** GPTQ's `checkpoint_format` says how zero
points are stored: `gptq` (v1, and what loaders assume when the key is
absent) stores z−1 and adds 1 at load (§8.4 ZP_MINUS1); `gptq_v2` stores z.
Read from the `qzeros` bytes, the stored values say the other convention. A
loader that follows the declaration shifts every weight by one quantisation
step (vllm#38966).

How the bytes decide (docs/spec-notes.md): symmetric zero points are one
constant, 2^(b−1)−1 in v1 and 2^(b−1) in v2; asymmetric ones centre on
(2^b−1)/2 in v2 and one lower in v1 (the mean must lie within 1/4 of one).

Example (`fixtures/producers/gptq/m2-declares-v1-stores-v2`):

    14 GPTQ tensor(s): quantize_config.json declares v1 zero points (checkpoint_format 'gptq': z-1 stored)
    but the qzeros bytes are v2 (z stored): every stored 4-bit zero point is 8 = 2^(b-1) (symmetric v2)

Fix: set `checkpoint_format` to what the bytes are (`gptq_v2` here), or
convert the zero points.
""",
)
UNVERIFIED = Rule(
    code="GRIT309",
    kind=Kind.ZP_CONVENTION_UNVERIFIED,
    severity=Severity.WARNING,
    summary="the GPTQ zero-point convention was not checked against the qzeros bytes",
    doc="""\
**Warning.** The v1/v2 GPTQ zero-point convention (declared, or assumed v1
when `checkpoint_format` is absent) was not checked against the `qzeros`
bytes: without `--deep` the bytes are not read (`--deep` settles it), or,
under `--deep`, asymmetric zero points whose centre is ambiguous cannot
settle it (the message gives the stored range and mean).

Example (`fixtures/broken/gptq-unmarked`):

    14 GPTQ tensor(s) assume v1 zero points (no checkpoint_format; loaders assume 'gptq': z-1 stored);
    the qzeros bytes were not read: `grit scan --deep` settles it

Fix: run with `--deep`; set `checkpoint_format` explicitly.
""",
)
UNDECLARED = Rule(
    code="GRIT207",
    kind=Kind.ZP_CONVENTION_UNDECLARED,
    severity=Severity.DISAGREEMENT,
    summary="a GPTQ checkpoint declares no zero-point convention (no checkpoint_format)",
    doc="""\
**Disagreement, without `--deep`.** §13 lists an undeclared zero-point
convention among the disagreements: a GPTQ checkpoint without
`checkpoint_format` leaves v1 (z−1 stored) and v2 (z stored) to the
loader's default, and a loader that guesses wrong shifts every weight by one
quantisation step. grit assumes v1, as the loaders do, and says so. With
`--deep` the `qzeros` bytes decide instead: bytes that agree with v1 give no
finding, bytes that say v2 are `zp_convention_mismatch`.

Example (`fixtures/broken/gptq-unmarked`):

    1 GPTQ tensor(s) declare no zero-point convention (no checkpoint_format): grit assumes v1 (z-1 stored), as the loaders do;
    add "checkpoint_format": "gptq" to quantize_config.json, or run grit scan --deep to check the qzeros bytes

Fix: add `"checkpoint_format": "gptq"` (or `"gptq_v2"`, whichever the bytes
are) to quantize_config.json, or run `grit scan --deep`.
""",
)
RULES = (MISMATCH, UNDECLARED, UNVERIFIED)

CENTRE_TOLERANCE = 0.25


def _gptq_positions(a: Artifact) -> Sequence[int]:
    """The positions in ``a.quantized`` of its GPTQ tensors (asked once per
    kin, not per tensor: docs/performance.md)."""
    return positions(a, lambda q: (True,) if q.convention == "gptq" else ()).get(True, ())


def _gptq(a: Artifact) -> list[QTensor]:
    return [a.quantized[i] for i in _gptq_positions(a)]


def declared_convention(q: QTensor) -> tuple[str, str]:
    """('v1' | 'v2' | '?', how it is declared)."""
    dec = q.declared or {}
    fmt_ = dec.get("format")
    src = str(dec.get("source", "the config")).split(" ")[0]
    if fmt_ == "gptq_v2":
        return "v2", f"{src} declares v2 zero points (checkpoint_format 'gptq_v2': z stored)"
    if fmt_ == "gptq":
        return "v1", f"{src} declares v1 zero points (checkpoint_format 'gptq': z-1 stored)"
    if fmt_ in (None, ""):
        return "v1", ("assume v1 zero points (no checkpoint_format; loaders assume 'gptq': "
                      "z-1 stored)")
    return "?", f"{src} declares checkpoint_format {fmt_!r}"


def check_scan(scan: ScanInput) -> list[Finding]:
    """Without --deep: per artifact, a disagreement when no convention is
    declared (§13), else a warning that --deep settles it."""
    if scan.deep:
        return []
    out = []
    for a in scan.artifacts:
        idx = _gptq_positions(a)
        if not idx:
            continue
        # the first tensor and the first 50 names: the others are not made
        first = a.quantized[idx[0]]
        names = a.quantized.names_at(idx[:50])
        conv, how = declared_convention(first)
        if (first.declared or {}).get("format") in (None, ""):
            out.append(UNDECLARED.finding(
                a.path, f"{len(idx)} GPTQ tensor(s) declare no zero-point convention (no "
                "checkpoint_format): grit assumes v1 (z-1 stored), as the loaders do; add "
                '"checkpoint_format": "gptq" to quantize_config.json, or run grit scan --deep '
                "to check the qzeros bytes", first.name if len(idx) == 1 else None,
                {"count": len(idx), "tensors": names, "declared": None,
                 "assumed": conv,
                 "suggested_fix": '"checkpoint_format": "gptq" in quantize_config.json, or '
                                  "grit scan --deep"}))
            continue
        out.append(UNVERIFIED.finding(
            a.path, f"{len(idx)} GPTQ tensor(s) {how}; the qzeros bytes were not read: "
            "`grit scan --deep` settles it", first.name if len(idx) == 1 else None,
            {"count": len(idx), "tensors": names, "declared": conv,
             "suggested_fix": "run grit scan --deep"}))
    return out


class Verdict(NamedTuple):
    """What the stored zero points settle (a NamedTuple, not a dataclass:
    every scan imports this module for its RULES, docs/performance.md)."""

    convention: str | None  # "v1", "v2", or None when the bytes do not settle it
    why: str


def zero_points(raw: bytes, bits: int) -> np.ndarray:
    """The b-bit fields of little-endian int32 words, LSB-first (GPTQ qzeros)."""
    import numpy as np

    words = np.frombuffer(raw[: len(raw) // 4 * 4], dtype="<u4")
    per = 32 // bits
    mask = (1 << bits) - 1
    return np.stack([(words >> (bits * j)) & mask for j in range(per)], -1).reshape(-1)


def verdict(values: np.ndarray, bits: int) -> Verdict:
    """What the stored zero points say (module docstring)."""
    half = 1 << (bits - 1)
    if values.size == 0:
        return Verdict(None, "no zero points stored")
    lo, hi = int(values.min()), int(values.max())
    if lo == hi:
        if lo == half - 1:
            return Verdict("v1", f"every stored {bits}-bit zero point is {lo} = 2^(b-1)-1 "
                                 "(symmetric v1)")
        if lo == half:
            return Verdict("v2", f"every stored {bits}-bit zero point is {lo} = 2^(b-1) "
                                 "(symmetric v2)")
        return Verdict(None, f"every stored {bits}-bit zero point is {lo}, which is neither "
                             f"v1's {half - 1} nor v2's {half}")
    mean = float(values.mean())
    mid = (lo + hi) / 2
    centre_v2 = ((1 << bits) - 1) / 2
    stats = f"stored zero points range {lo}..{hi} (midpoint {mid:g}), mean {mean:.3f}"
    for conv, c in (("v2", centre_v2), ("v1", centre_v2 - 1)):
        if abs(mean - c) <= CENTRE_TOLERANCE:
            return Verdict(conv, f"asymmetric: {stats}, centred on {c:g} as {conv} stores them")
    return Verdict(None, f"asymmetric: {stats}: centred on neither v2's {centre_v2:g} nor "
                         f"v1's {centre_v2 - 1:g}, so the bytes do not settle the convention")


def _bits(a: Artifact, q: QTensor) -> int | None:
    """b: the descriptor's element width, else from the shapes: qzeros
    [groups, out·b/32] against scales [groups, out]."""
    if q.desc is not None:
        from ...codec import fmt  # here: a described GPTQ tensor (start-up, docs/performance.md)

        return fmt.unpack(q.desc.elem).width
    if not q.planes or q.planes[1] is None or q.planes[3] is None:
        return None
    st = {t.name: t for t in a.tensors}
    qz, sc = st.get(q.planes[3].tensor or ""), st.get(q.planes[1].tensor or "")
    if qz is None or sc is None or len(qz.shape) != 2 or len(sc.shape) != 2 or not sc.shape[1]:
        return None
    b, r = divmod(32 * qz.shape[1], sc.shape[1])
    return b if not r and b in (2, 4, 8) else None


def check_deep(a: Artifact, planes: PlaneReader) -> list[Finding]:
    qs = _gptq(a)
    if not qs:
        return []
    conv, how = declared_convention(qs[0])
    by: dict[str | None, list[tuple[QTensor, Verdict]]] = {}
    for q in qs:
        bits = _bits(a, q)
        ref = q.planes[3] if q.planes else None
        if bits is None or ref is None:
            continue
        v = verdict(zero_points(planes.read(ref.offset, ref.length), bits), bits)
        by.setdefault(v.convention, []).append((q, v))
    out: list[Finding] = []
    for got, items in sorted(by.items(), key=lambda kv: str(kv[0])):
        if got == conv:
            continue
        names = [q.planes[3].tensor for q, _ in items if q.planes and q.planes[3]]
        first = items[0][1].why
        tensor = names[0] if len(names) == 1 else None
        detail = {"count": len(items), "tensors": names[:50], "declared": conv,
                  "bytes": got, "evidence": first}
        if got is None or conv == "?":
            out.append(UNVERIFIED.finding(
                a.path, f"{len(items)} GPTQ tensor(s) {how}; the qzeros bytes do not settle it: "
                f"{first} (e.g. {names[0] if names else items[0][0].name})", tensor, detail))
            continue
        stored = "z stored" if got == "v2" else "z-1 stored"
        out.append(MISMATCH.finding(
            a.path, f"{len(items)} GPTQ tensor(s): {how} but the qzeros bytes are {got} "
            f"({stored}): {first} (e.g. {names[0] if names else items[0][0].name})", tensor,
            {**detail, "suggested_fix": "set checkpoint_format to "
             + ("'gptq_v2'" if got == "v2" else "'gptq'")}))
    return out


__all__: Sequence[str] = ("MISMATCH", "UNDECLARED", "UNVERIFIED", "check_deep", "check_scan", "verdict",
                          "zero_points")
