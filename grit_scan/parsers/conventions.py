"""Descriptors inferred from the conventions people ship in safetensors.

Research: checkpoint-conventions-and-peers.md, Part 2.  Tensors are grouped
by module (the name minus a known suffix); each module's set of tensors and
dtypes identifies a convention.  Expressible conventions get a descriptor
and their planes; conventions GRIT v1 cannot express are reported with the
§0.3 clause (or the section) that excludes them, never ignored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter

from ..artifact import Artifact, IssueCode, PlaneRef, QTensor, Source, StoredTensor
from ..codec import descriptor as desc_mod
from ..codec.check import expected_plane_sizes
from ..codec.errors import GritError
from ..codec.grade import GRADE_MXFP4, GRADE_NVF4, Grade, parse_grade
from ..names import Declared, split_name

UNQUANTISED = {"F32", "F16", "BF16", "F64"}
FP8 = {"F8_E4M3", "F8_E5M2"}


@dataclass
class Ctx:
    art: Artifact
    tensors: Mapping[str, StoredTensor]
    declared: Declared | None
    role: Callable[[str], str]
    out: list[QTensor]
    used: set[str]
    file_of: Mapping[str, str] | None = None  # tensor -> file, across a model's shards

    def ref(self, name: str, broadcast: int = 1) -> PlaneRef:
        st = self.tensors[name]
        file = self.file_of.get(name) if self.file_of is not None else None
        return PlaneRef(name, st.offset, st.available, broadcast, file)

    def add(self, q: QTensor, *names: str) -> None:
        q.declared = self.declared
        self.out.append(q)
        self.used.update(n for n in names if n)


def infer(art: Artifact, tensors: Mapping[str, StoredTensor], used: set[str],
          declared: Declared | None, role: Callable[[str], str],
          file_of: Mapping[str, str] | None = None) -> list[QTensor]:
    """QTensors for every recognised convention; marks consumed tensor names
    in ``used`` and counts the unquantised remainder on ``art``.  ``file_of``
    maps each tensor to its file when ``tensors`` are a model's shards merged
    (parsers/models.py): a module may keep its weight and scales in
    different shards."""
    if not used:
        counts = Counter(map(itemgetter(1), tensors.values()))  # dtype of each
        if set(counts) <= UNQUANTISED:
            # nothing here can be quantised: no convention uses only float dtypes
            for dt, n in counts.items():
                art.unquantized[dt] = art.unquantized.get(dt, 0) + n
            return []
    modules: dict[str, dict[str, str]] = {}
    for name in tensors:
        if name in used:
            continue
        mod, suf = split_name(name)
        modules.setdefault(mod, {})[suf] = name
    ctx = Ctx(art, tensors, declared, role, [], used, file_of)
    for mod in sorted(modules):
        _module(ctx, mod, modules[mod])
    for name, st in tensors.items():
        if name not in used:
            art.unquantized[st.dtype] = art.unquantized.get(st.dtype, 0) + 1
            if st.dtype in FP8:
                art.issue(IssueCode.NOTE, f"{st.dtype} tensor {name!r} has no scale tensor "
                          "beside it; its quantisation is not described", tensor=name)
    return ctx.out


def _dt(ctx: Ctx, name: str | None) -> str | None:
    return ctx.tensors[name].dtype if name else None


def _module(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    g = parts.get
    blocks = g("_blocks") or g(".blocks")
    scales_u8 = g("_scales") or (g(".scales") if _dt(ctx, g(".scales")) == "U8" else None)
    if blocks and scales_u8 and _dt(ctx, blocks) == "U8":
        return _gpt_oss(ctx, mod, blocks, scales_u8)
    if g(".qweight"):
        return _gptq_awq(ctx, mod, parts)
    if any(s in parts for s in (".weight.quant_map", ".weight.absmax",
                                ".weight.quant_state.bitsandbytes__nf4",
                                ".weight.quant_state.bitsandbytes__fp4")):
        return _bnb(ctx, mod, parts)
    packed = g(".weight_packed")
    if packed:
        sc = g(".weight_scale")
        if _dt(ctx, packed) == "U8" and sc and _dt(ctx, sc) == "F8_E4M3":
            return _nvfp4(ctx, mod, packed, sc, g(".weight_global_scale"), "compressed-tensors")
        if _dt(ctx, packed) == "U8" and sc and _dt(ctx, sc) == "U8":
            return _ct_mxfp4(ctx, mod, packed, sc)
        return _ct_pack(ctx, mod, parts)
    w = g(".weight")
    if w and _dt(ctx, w) == "U8" and _dt(ctx, g(".weight_scale")) == "F8_E4M3":
        return _nvfp4(ctx, mod, w, g(".weight_scale") or "", g(".weight_scale_2"), "modelopt")
    if w and _dt(ctx, w) in FP8:
        sinv = g(".weight_scale_inv")
        if sinv:
            return _fp8_blocks(ctx, mod, w, sinv, "weight_scale_inv")
        sc = g(".weight_scale")
        if sc:
            return _fp8(ctx, mod, w, sc, parts)
    return None  # everything else is left for the unquantised count


def _q(ctx: Ctx, mod: str, name: str, shape: tuple[int, ...], grade: Grade | None,
       convention: str, group_axis: int = -1, **placements: int) -> QTensor:
    d = None
    if grade is not None:
        ga = group_axis % len(shape) if shape else 0
        d = desc_mod.from_grade(grade, group_axis=ga, **placements)
    return QTensor(name=name, role=ctx.role(mod), shape=shape,
                   source=Source.INFERRED if grade is not None else Source.NONE,
                   desc=d, grade=grade, convention=convention)


# ---- expressible ---------------------------------------------------------------


def _gpt_oss(ctx: Ctx, mod: str, blocks: str, scales: str) -> None:
    """gpt-oss MXFP4: *_blocks U8 [..., G, 16] and *_scales U8 [..., G]."""
    b, s = ctx.tensors[blocks], ctx.tensors[scales]
    if len(b.shape) < 2 or b.shape[-1] != 16:
        ctx.art.issue(IssueCode.SIZE, f"{blocks}: gpt-oss MXFP4 blocks have a last dimension "
                      f"of 16 bytes (32 E2M1 codes); this one is {list(b.shape)}",
                      tensor=mod, expected=16, actual=b.shape[-1] if b.shape else None)
        return
    shape = tuple(b.shape[:-2]) + (b.shape[-2] * 32,)
    q = _q(ctx, mod, mod, shape, GRADE_MXFP4, "gpt-oss-mxfp4")
    q.planes = [ctx.ref(blocks), ctx.ref(scales), None, None]
    if tuple(b.shape[:-1]) != tuple(s.shape):
        q.notes.append(f"blocks.shape[:-1] {list(b.shape[:-1])} != scales.shape "
                       f"{list(s.shape)} (transformers asserts they are equal)")
    ctx.add(q, blocks, scales)


def _nvfp4(ctx: Ctx, mod: str, data: str, scale: str, glob: str | None, who: str) -> None:
    """NVFP4 (compressed-tensors nvfp4-pack-quantized, ModelOpt): E2M1 pairs
    with the even column in the low nibble, one E4M3 scale per 16, and a
    per-tensor F32 global scale."""
    d = ctx.tensors[data]
    if len(d.shape) != 2:
        ctx.art.issue(IssueCode.SIZE, f"{data}: NVFP4 data is [out, in/2]; got "
                      f"{list(d.shape)}", tensor=mod)
        return
    shape = (d.shape[0], d.shape[1] * 2)
    q = _q(ctx, mod, mod + ".weight", shape, GRADE_NVF4, f"{who}-nvfp4")
    q.planes = [ctx.ref(data), ctx.ref(scale), ctx.ref(glob) if glob else None, None]
    if glob is None:
        q.notes.append("the per-tensor global scale tensor is missing: decode would use a "
                       "wrong scale (transformers#48372)")
    elif who == "compressed-tensors":
        q.notes.append("compressed-tensors stores the global scale as a divisor "
                       "(weight_scale / weight_global_scale, global = 448*6/amax); GRIT's "
                       "scale1 is a multiplier, so these bytes are not a GRIT scale1 plane "
                       "as-is (ModelOpt's weight_scale_2 is)")
    ctx.add(q, data, scale, glob or "")


def _ct_mxfp4(ctx: Ctx, mod: str, packed: str, scale: str) -> None:
    d = ctx.tensors[packed]
    if len(d.shape) != 2:
        return
    shape = (d.shape[0], d.shape[1] * 2)
    q = _q(ctx, mod, mod + ".weight", shape, GRADE_MXFP4, "compressed-tensors-mxfp4")
    q.planes = [ctx.ref(packed), ctx.ref(scale), None, None]
    ctx.add(q, packed, scale)


def _fp8(ctx: Ctx, mod: str, w: str, sc: str, parts: dict[str, str]) -> None:
    """FP8 with per-tensor or per-channel scales (expressible), or 2-D block
    scales (not), or per-group scales along the input dimension."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    elem = "e4m3" if wt.dtype == "F8_E4M3" else "e5m2"
    sdt = {"F32": "binary32", "F16": "binary16", "BF16": "bfloat16"}.get(st.dtype)
    if len(wt.shape) != 2 or sdt is None:
        ctx.art.issue(IssueCode.NOTE, f"{w}: FP8 weight with a {st.dtype} scale of shape "
                      f"{list(st.shape)} is not a layout this scanner knows", tensor=mod)
        return
    rows, cols = wt.shape
    n_scale = 1
    for x in st.shape:
        n_scale *= x
    extra = [parts[s] for s in (".input_scale",) if s in parts]
    if len(st.shape) == 2 and st.shape[0] > 1 and st.shape[1] > 1 and st.shape[0] != rows:
        return _fp8_blocks(ctx, mod, w, sc, "weight_scale")
    if n_scale == rows and cols <= 65535:
        conv, broadcast = "fp8-per-channel", 1
    elif n_scale == 1 and cols <= 65535:
        conv, broadcast = "fp8-per-tensor", rows
    elif n_scale > rows and n_scale % rows == 0 and cols % (n_scale // rows) == 0 and (
            cols // (n_scale // rows)) <= 65535:
        k0 = cols // (n_scale // rows)
        g = parse_grade(f"grit1(e={elem},k0={k0},s0={sdt},esr=ratiomaxabs)")
        q = _q(ctx, mod, w, (rows, cols), g, "fp8-per-group")
        q.planes = [ctx.ref(w), ctx.ref(sc), None, None]
        return ctx.add(q, w, sc, *extra)
    else:
        ctx.art.issue(IssueCode.NOTE, f"{w}: {n_scale} scales for a {rows}x{cols} FP8 weight "
                      "match no per-tensor, per-channel or per-group layout", tensor=mod)
        return
    g = parse_grade(f"grit1(e={elem},k0={cols},s0={sdt},esr=ratiomaxabs)")
    q = _q(ctx, mod, w, (rows, cols), g, conv)
    q.planes = [ctx.ref(w), ctx.ref(sc, broadcast), None, None]
    if broadcast > 1:
        q.notes.append("a per-tensor scale is this per-channel grade with every row's scale "
                       "equal: GRIT's scale0 plane repeats the one stored binary32 per row")
    ctx.add(q, w, sc, *extra)


# ---- recognised, not expressible in v1 --------------------------------------------


def _not(ctx: Ctx, mod: str, name: str, shape: tuple[int, ...], convention: str,
         clause: str, reason: str, names: list[str], grade: Grade | None = None,
         group_axis: int = -1, **detail: object) -> QTensor:
    q = _q(ctx, mod, name, shape, grade, convention, group_axis)
    q.source = Source.NONE if grade is None else Source.INFERRED
    q.reason = reason
    q.notes.append(reason)
    ctx.add(q, *names)
    ctx.art.issue(IssueCode.NOT_REPRESENTABLE, f"{name}: {reason}", tensor=name,
                  clause=clause, convention=convention, **detail)
    return q


def _fp8_blocks(ctx: Ctx, mod: str, w: str, sc: str, key: str) -> None:
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    shape = tuple(wt.shape)
    _not(ctx, mod, w, shape, "fp8-block", "§3.7",
         f"DeepSeek-style block FP8: {key} {st.dtype} {list(st.shape)} holds one scale per "
         "2-D tile; GRIT v1 groups are runs along one axis (§3.7, §0.3), so 2-D blocks are "
         "not expressible", [w, sc])


def _bnb(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    kind = "nf4" if ".weight.quant_state.bitsandbytes__nf4" in parts else (
        "fp4" if ".weight.quant_state.bitsandbytes__fp4" in parts else "4-bit")
    w = parts.get(".weight", mod)
    _not(ctx, mod, w, ctx.tensors[w].shape if w in ctx.tensors else (), f"bitsandbytes-{kind}",
         "§0.3(b)", f"bitsandbytes {kind} decodes through a lookup table stored with the tensor "
         "(quant_map): a codebook format, which GRIT v1 has no element class for (§0.3(b))",
         list(parts.values()))


def _ct_pack(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    packed = parts[".weight_packed"]
    names = list(parts.values())
    _not(ctx, mod, packed, ctx.tensors[packed].shape, "compressed-tensors-pack-quantized",
         "§2.4", "compressed-tensors pack-quantized stores value + 2^(b-1) in int32 words "
         "(offset-binary codes); no v1 element format decodes a biased integer without a "
         "zero-point plane", names)


def _gptq_awq(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    """GPTQ and AWQ: recognised, reported as not byte-representable (§0.3(d))
    with the predicted and present zero-point bytes; act-order (§0.3(c))."""
    t = ctx.tensors
    qw, qz, sc = parts.get(".qweight"), parts.get(".qzeros"), parts.get(".scales")
    names = [n for n in parts.values()]
    if not (qw and sc):
        ctx.art.issue(IssueCode.NOTE, f"{mod}: qweight without scales", tensor=mod)
        return
    w, s = t[qw], t[sc]
    decl = ctx.declared or {}
    if len(w.shape) != 2 or len(s.shape) != 2:
        return
    bits = decl.get("bits") or 4
    per_word = 32 // bits if bits in (2, 4, 8) else 8
    if w.shape[1] == s.shape[1]:  # GPTQ: qweight [in*b/32, out], packed along in
        convention = "gptq"
        k, n = w.shape[0] * per_word, w.shape[1]
    elif w.shape[1] * per_word == s.shape[1]:  # AWQ GEMM: qweight [in, out/8]
        convention = "awq"
        k, n = w.shape[0], s.shape[1]
    else:
        ctx.art.issue(IssueCode.SIZE, f"{mod}: qweight {list(w.shape)} and scales "
                      f"{list(s.shape)} fit neither GPTQ nor AWQ packing", tensor=mod)
        return
    groups = s.shape[0]
    group = k // groups if groups and k % groups == 0 else None
    shape = (k, n)  # as stored: [in, out]; groups run along in (axis 0)
    grade = None
    if group is not None and 1 <= group <= 65535 and bits in (2, 4, 8):
        zpc = ",zpc=minus1" if convention == "gptq" and decl.get("format") != "gptq_v2" else ""
        grade = parse_grade(f"grit1(e=u{bits},k0={group},s0=binary16,zp=u{bits}{zpc},"
                            "esr=affineminmax)")
    detail: dict[str, object] = {"bits": bits, "group_size": group, "in": k, "out": n}
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
    reason = (f"{convention.upper()} packs its zero points as dense nibbles; GRIT v1 stores "
              "sub-byte zero points one per byte (§3.4), so the checkpoint is not "
              "byte-representable (§0.3(d))")
    if predicted is not None:
        reason += f": GRIT predicts {predicted:,} zero-point bytes, the file holds {present:,}"
    q = _not(ctx, mod, mod + ".weight", shape, convention, "§0.3(d)", reason, names, grade,
             group_axis=0, **detail)
    q.planes = [ctx.ref(qw), ctx.ref(sc), None, ctx.ref(qz) if qz else None]
    if convention == "awq":
        q.notes.append("AWQ's [0,2,4,6,1,3,5,7] nibble interleave is the placement "
                       "Perm([0,2,4,6,1,3,5,7]) (§3.5); the zero points are what v1 cannot hold")
    if convention == "gptq" and decl.get("desc_act"):
        ctx.art.issue(IssueCode.NOT_REPRESENTABLE,
                      f"{mod}.weight: GPTQ act-order (desc_act=true) assigns columns to groups "
                      "through g_idx; §3.7 grouping is contiguous, so it is not expressible "
                      "(§0.3(c))", tensor=mod + ".weight", clause="§0.3(c)", convention="gptq")
    if convention == "gptq":
        q.notes.append("zero points: v1 'gptq' stores z-1 (ZP_MINUS1), 'gptq_v2' stores z")
