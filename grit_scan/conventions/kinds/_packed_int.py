"""What GPTQ and AWQ share: int32-packed b-bit values (``qweight``), float16
scales and int32-packed zero points (``qzeros``).  Which of the two a module
is follows from the shapes (``packed_bits``)."""

from __future__ import annotations

from ...artifact import PlaneRef
from ...codec import descriptor as desc_mod
from ...codec.check import expected_plane_sizes
from ...codec.errors import GritError
from ...codec.grade import Grade, parse_grade
from ...issues.grit_check import PackedIntUnfit
from ...issues.not_representable import ActOrder
from ...issues.notes import NotGraded, QweightWithoutScales
from ..base import Ctx, Parts, new_q, not_representable

SUFFIXES = (".qweight", ".qzeros", ".scales", ".g_idx")


def packed_bits(ctx: Ctx, parts: Parts, w: tuple[int, ...], s: tuple[int, ...]
                 ) -> tuple[str, int, str] | None:
    """(convention, bits, evidence) from the shapes alone, where they settle it.

    GPTQ qweight is [in·b/32, out] and scales [groups, out]: b follows from
    ``in``, which g_idx [in] states, or from qzeros [groups, out·b/32].  AWQ
    GEMM qweight is [in, out·b/32] with scales [groups, out]: b follows directly."""
    t = ctx.tensors
    if w[1] == s[1]:
        gi, qz = parts.get(".g_idx"), parts.get(".qzeros")
        if gi and len(t[gi].shape) == 1 and t[gi].shape[0] and (32 * w[0]) % t[gi].shape[0] == 0:
            return "gptq", 32 * w[0] // t[gi].shape[0], "qweight rows against g_idx length"
        if qz and len(t[qz].shape) == 2 and s[1] and (32 * t[qz].shape[1]) % s[1] == 0:
            return "gptq", 32 * t[qz].shape[1] // s[1], "qzeros columns against scales columns"
        return "gptq", 0, ""
    if w[1] and s[1] and s[1] % w[1] == 0 and 32 % (s[1] // w[1]) == 0:
        return "awq", 32 // (s[1] // w[1]), "qweight columns against scales columns"
    return None


def infer_packed(ctx: Ctx, mod: str, parts: Parts) -> None:
    """GPTQ and AWQ: recognised, reported as not byte-representable (§0.3(d))
    with the predicted and present zero-point bytes; act-order (§0.3(c)).

    The bit width comes from the bytes where the shapes settle it (so a wrong
    declared ``bits`` is a declared_mismatch on bits, not a group-size story),
    else from the declaration."""
    t = ctx.tensors
    qw, qz, sc = parts.get(".qweight"), parts.get(".qzeros"), parts.get(".scales")
    names = [n for n in parts.values()]
    if not (qw and sc):
        ctx.art.add(QweightWithoutScales(mod))
        return
    w, s = t[qw], t[sc]
    decl = ctx.declared or {}
    if len(w.shape) != 2 or len(s.shape) != 2:
        return
    found = packed_bits(ctx, parts, tuple(w.shape), tuple(s.shape))
    if found is None:
        ctx.art.add(PackedIntUnfit(mod, tuple(w.shape), tuple(s.shape)))
        return
    convention, bits, evidence = found
    if not bits:
        db = decl.get("bits")
        bits, evidence = (db, "declared") if isinstance(db, int) and db in (2, 3, 4, 8) else (
            4, "assumed (no g_idx, qzeros or declared bits)")
    per_word = 32 // bits if bits in (2, 4, 8) else 0
    if convention == "gptq":
        k = w.shape[0] * 32 // bits if (w.shape[0] * 32) % bits == 0 else 0
        n = w.shape[1]
    else:
        k, n = w.shape[0], s.shape[1]
    groups = s.shape[0]
    group = k // groups if groups and k and k % groups == 0 else None
    shape = (k, n)  # as stored: [in, out]; groups run along in (axis 0)
    grade = None
    if group is not None and 1 <= group <= 65535 and per_word:
        zpc = ",zpc=minus1" if convention == "gptq" and decl.get("format") != "gptq_v2" else ""
        grade = parse_grade(f"grit1(e=u{bits},k0={group},s0=binary16,zp=u{bits}{zpc},"
                            "esr=affineminmax)")
    detail: dict[str, object] = {"bits": bits, "bits_from": evidence, "group_size": group,
                                 "in": k, "out": n}
    predicted = present = None
    if grade is not None and qz:
        d = desc_mod.from_grade(grade, group_axis=0)
        try:
            sizes = expected_plane_sizes(d, shape)
            predicted, present = sizes.aux, t[qz].nbytes
            detail.update(predicted_aux=predicted, present_aux=present,
                          data_ok=sizes.data == w.nbytes, scale_ok=sizes.scale0 == s.nbytes)
        except GritError:
            pass
    planes = [ctx.ref(qw), ctx.ref(sc), None, ctx.ref(qz) if qz else None]
    notes: tuple[str, ...] = ()
    if convention == "awq":
        notes = ("AWQ's [0,2,4,6,1,3,5,7] nibble interleave is the placement "
                 "Perm([0,2,4,6,1,3,5,7]) (§3.5); the zero points are what v1 cannot hold",)
    if convention == "gptq":
        notes = ("zero points: v1 'gptq' stores z-1 (ZP_MINUS1), 'gptq_v2' stores z",)
    if bits == 8 and grade is not None:
        # 8-bit zero points are one per byte already: §0.3(d) does not apply.
        gptq8(ctx, mod, shape, convention, grade, predicted, names, detail, planes=planes,
              notes=notes)
    else:
        reason = (f"{convention.upper()} packs its {bits}-bit zero points densely "
                  f"({32 // bits if bits else '?'} per int32 word); GRIT v1 stores sub-byte "
                  "zero points one per byte (§3.4), so the checkpoint is not byte-representable "
                  "(§0.3(d))")
        if predicted is not None:
            reason += (f": GRIT predicts {predicted:,} zero-point bytes, the file holds "
                       f"{present:,}")
        not_representable(ctx, mod, mod + ".weight", shape, convention, "§0.3(d)", reason,
                          names, grade, group_axis=0, planes=planes, notes=notes, **detail)
    if convention == "gptq" and decl.get("desc_act"):
        ctx.art.add(ActOrder(mod + ".weight"))


def gptq8(ctx: Ctx, mod: str, shape: tuple[int, int], convention: str, grade: Grade,
           predicted: int | None, names: list[str], detail: dict[str, object], *,
           planes: list[PlaneRef | None], notes: tuple[str, ...]) -> None:
    """8-bit GPTQ/AWQ: the zero-point plane matches §3.4 (one per byte), so no
    spec exclusion applies; what this scanner does not derive is the qweight
    word packing (4 input rows per int32 word) as a placement (§5), so it gives
    no descriptor and says exactly that (a note, not not_representable).
    ``planes`` and ``notes`` (after its own two) are the module's QTensor's."""
    why = (f"8-bit {convention.upper()}: zero points are one per byte as §3.4 stores them "
           f"(GRIT predicts {predicted:,} zero-point bytes and the file holds as many), so "
           "§0.3(d) does not apply; this scanner does not derive the qweight word packing "
           "(4 input rows per int32 word) as a placement (§5), so it infers no descriptor"
           if predicted is not None else
           f"8-bit {convention.upper()}: this scanner does not derive the qweight word packing "
           "(4 input rows per int32 word) as a placement (§5), so it infers no descriptor")
    q = new_q(ctx, mod, mod + ".weight", shape, None, convention, group_axis=0, planes=planes,
              notes=(why, f"would be {grade} with a word-packing placement", *notes), reason=why)
    ctx.add(q, *names)
    ctx.art.add(NotGraded(mod + ".weight", why, detail))
