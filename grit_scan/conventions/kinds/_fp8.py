"""What the FP8 conventions share (a float scale per tensor, channel, group,
single block row, or 2-D block): the plan their dtypes and shapes settle,
and the module's QTensor."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from math import prod
from types import MappingProxyType

from ...codec.grade import Grade, parse_grade
from ...issues import shape
from ...issues.grit_check import Fp8PerTensorSizes
from ...issues.notes import Fp8ScalesUnmatched, UnknownLayout
from ..base import Ctx, Parts, new_q, not_representable
from ..scales import SCALE_TOKENS, ScaleLayout, dt_field, scale_layout


def infer_fp8(ctx: Ctx, mod: str, w: str, sc: str, parts: Parts,
         key: str = "weight_scale") -> None:
    """FP8 with per-tensor, per-channel, per-group or single-block-row scales
    (expressible), or 2-D block scales (not)."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    plan = _fp8_plan(wt.dtype, st.dtype, tuple(wt.shape), tuple(st.shape), key)
    if plan.status == "unknown":
        ctx.art.add(UnknownLayout(mod, w, f"FP8 weight with a {st.dtype} scale of shape "
                                  f"{shape(st.shape)}", "a layout"))
        return
    if plan.status == "blocks":
        return _fp8_blocks(ctx, mod, w, sc, key)
    lay = plan.layout
    if lay is None or plan.grade is None:
        rows, cols = wt.shape
        ctx.art.add(Fp8ScalesUnmatched(mod, w, prod(st.shape), rows, cols))
        return
    if lay.name == "block-row" and not _block_fits(ctx, mod, w, sc, key, lay):
        return
    if lay.name == "per-tensor":
        return _per_tensor(ctx, mod, w, sc, parts)
    q = new_q(ctx, mod, w, tuple(wt.shape), plan.grade, plan.convention,
              planes=[ctx.ref(w), ctx.ref(sc, lay.broadcast), None, None],
              notes=(plan.note,) if plan.note is not None else ())
    ctx.add(q, w, sc, *[parts[s] for s in (".input_scale",) if s in parts])


@dataclass(frozen=True)
class _Fp8Plan:
    """What an FP8 weight's dtypes and shapes settle (memoised per signature)."""

    status: str  # "ok", "unknown" (not 2-D or no float scale), "blocks", "no-layout"
    grade: Grade | None = None
    convention: str = ""
    layout: ScaleLayout | None = None
    note: str | None = None


@functools.lru_cache(maxsize=1024)
def _fp8_plan(wdt: str, sdt_name: str, wshape: tuple[int, ...], sshape: tuple[int, ...],
              key: str) -> _Fp8Plan:
    """What an FP8 weight and its scale are, from dtypes and shapes alone:
    memoised, since every layer repeats a handful of them (docs/performance.md)."""
    elem = "e4m3" if wdt == "F8_E4M3" else "e5m2"
    sdt = SCALE_TOKENS.get(sdt_name)
    if len(wshape) != 2 or sdt is None or 0 in wshape:  # an empty weight has no layout
        return _Fp8Plan("unknown")
    rows, cols = wshape
    if len(sshape) == 2 and sshape[0] > 1 and sshape[1] > 1 and sshape[0] != rows:
        return _Fp8Plan("blocks")
    lay = scale_layout(rows, cols, sshape)
    if lay is None:
        return _Fp8Plan("no-layout")
    g = parse_grade(f"grit1(e={elem},k0={lay.k0},s0={sdt}{dt_field(sdt)},esr=ratiomaxabs)")
    conv = "fp8-block" if lay.name == "block-row" else sys.intern(f"fp8-{lay.name}")
    note = None
    if lay.name == "block-row":
        note = (f"{key} {list(sshape)}: all {rows} rows lie in one block row, so the "
                f"2-D blocks are runs of {lay.k0} along each row (§3.7) with every row's "
                "scales equal: GRIT's scale0 plane repeats the stored row once per row")
    return _Fp8Plan("ok", g, conv, lay, note)


def _block_fits(ctx: Ctx, mod: str, w: str, sc: str, key: str, lay: ScaleLayout) -> bool:
    """A declared block width that is not the run length means a partial last
    block, which §3.7 (shape[group_axis] a multiple of k0) cannot express."""
    wbs = (ctx.declared or {}).get("weight_block_size")
    bw = wbs[-1] if isinstance(wbs, list) and wbs and isinstance(wbs[-1], int) else None
    if bw is None or bw == lay.k0:
        return True
    cols = ctx.tensors[w].shape[1]
    not_representable(ctx, mod, w, tuple(ctx.tensors[w].shape), "fp8-block", "§3.7",
         f"block FP8 with blocks {bw} wide over {cols} columns: the last block is partial, and "
         "§3.7 requires the group axis to be a multiple of k0", [w, sc], block_width=bw,
         formats=fp8_formats(ctx.tensors[w].dtype, ctx.tensors[sc].dtype),
         group_shape="2-D blocks")
    return False



def _fp8_blocks(ctx: Ctx, mod: str, w: str, sc: str, key: str) -> None:
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    shape = tuple(wt.shape)
    not_representable(ctx, mod, w, shape, "fp8-block", "§3.7",
         f"DeepSeek-style block FP8: {key} {st.dtype} {list(st.shape)} holds one scale per "
         "2-D tile; GRIT v1 groups are runs along one axis (§3.7, §0.3), so 2-D blocks are "
         "not expressible", [w, sc], weight_shape=list(shape), scale_shape=list(st.shape),
         formats=fp8_formats(wt.dtype, st.dtype), group_shape="2-D blocks")


def fp8_formats(wdt: str, sdt: str) -> str:
    """What a refused FP8 tensor still has without a descriptor: its element
    and scale formats, recorded with its group-shape class on the
    not_representable issue (the rules compare revisions by them)."""
    elem = "e4m3" if wdt == "F8_E4M3" else "e5m2"
    return f"{elem}/{SCALE_TOKENS.get(sdt, sdt)}"


_SCALE_BYTES = MappingProxyType({"F32": 4, "F16": 2, "BF16": 2})


def _per_tensor(ctx: Ctx, mod: str, w: str, sc: str, parts: Parts) -> None:
    """One scale over a weight of more than one row: not representable.
    §3.7 groups are runs of k0 along the group axis, whose extent must be a
    multiple of k0, and k0 is a uint16 (§3.1), so one group cannot cover
    rows x cols; per-tensor scaling exists in v1 only as a level-1 scale
    (k1 = 0), which needs a level-0 scale plane these files do not have.
    The size equation of what the file holds (one byte per element, one
    scale) is checked before the refusal; a weight of one row is the
    per-channel case and never comes here."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    rows, cols = wt.shape
    shape = (rows, cols)
    data_want, scale_want = rows * cols, _SCALE_BYTES[st.dtype]
    if wt.nbytes != data_want or st.nbytes != scale_want:
        ctx.art.add(Fp8PerTensorSizes(w, st.dtype, data_want, scale_want, wt.nbytes,
                                      st.nbytes))
        return
    reason = (f"one {st.dtype} scale for a {rows}x{cols} FP8 weight (per-tensor): GRIT v1 "
              f"groups are runs of k0 along one axis, whose extent must be a multiple of k0 "
              f"(§3.7), and k0 is at most 65,535 (§3.1), so one group cannot span {rows} "
              "rows; v1 scales a whole tensor only at level 1 (k1 = 0), over a level-0 scale "
              "plane this file does not have")
    extra = [parts[s] for s in (".input_scale",) if s in parts]
    not_representable(ctx, mod, w, shape, "fp8-per-tensor", "§3.7", reason,
                          [w, sc, *extra], planes=[ctx.ref(w), ctx.ref(sc), None, None],
                          weight_shape=[rows, cols], scale_shape=[1, 1],
                          actual_group_size=rows * cols, data_bytes=wt.nbytes,
                          scale_bytes=st.nbytes, formats=fp8_formats(wt.dtype, st.dtype),
                          group_shape="per-tensor")
