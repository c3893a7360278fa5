"""grit_check (§7): the boundary check.

``grit_check`` evaluates strictly in the normative order of §7.3 and returns
exactly one status with a detail.  It is safe for every 64-byte input (§14):
it never raises on descriptor contents, tests every divisor before dividing,
and at level 1 never touches plane contents.  ``grit_check_or_raise`` is the
must-use form of §7.1: it raises the ``GritError`` subclass of the status.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from . import fmt
from .descriptor import SIZE, Descriptor, unpack
from .errors import (
    ERROR_FOR_STATUS,
    Detail,
    GritSizeError,
    GritValueError,
    Status,
)
from .fingerprint import digest_planes
from .grade import FRAME_FIELDS, Grade, registry
from .placement import placement_name, placement_problem
from .planes import PLANE_NAMES, Plane
from .sizes import PlaneSizes as PlaneSizes  # re-exported: the check's result type
from .sizes import ceil8 as _ceil8
from .sizes import cw as _cw
from .sizes import expected_plane_sizes as expected_plane_sizes  # re-exported
from .tables import (
    CT_PAD8,
    F_HAS_ZP,
    F_RESERVED,
    F_SPARSE,
    F_ZP_L1SCALED,
    FORMAT_TOKENS,
    GRIT_HDR_BYTES,
    GRIT_MAGIC,
    GRIT_VERSION,
    SP_META_BITS,
    SPORDER_ASC_LSB,
    CheckLevel,
)

_DEFAULT_GRADES = registry()


@dataclass(frozen=True)
class CheckResult:
    """What grit_check found (§7.3): the status, its detail and the plane sizes."""

    status: Status
    detail: Detail | None = None
    sizes: PlaneSizes | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.status == Status.OK


class _Fail(Exception):
    """Internal: carries the first failure out of the step functions."""

    def __init__(self, status: Status, detail: Detail) -> None:
        self.status = status
        self.detail = detail


def _fail(status: Status, step: int, clause: str, message: str, **kw: object) -> _Fail:
    return _Fail(status, Detail(message=message, step=step, clause=clause, **kw))  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Step 1 — frame
# --------------------------------------------------------------------------


def _step1(d: Descriptor) -> None:
    g = Status.GRADE_UNKNOWN

    def need(cond: bool, clause: str, msg: str, expected: object, actual: object) -> None:
        if not cond:
            raise _fail(g, 1, clause, msg, expected=expected, actual=actual)

    need(d.magic == GRIT_MAGIC, "magic",
         f"bad magic {d.magic:#010x}; a GRIT descriptor starts with 'GRT1' ({GRIT_MAGIC:#010x})",
         f"{GRIT_MAGIC:#010x}", f"{d.magic:#010x}")
    need(d.hdr_bytes == GRIT_HDR_BYTES, "hdr_bytes",
         f"hdr_bytes is {d.hdr_bytes}; version 1 requires {GRIT_HDR_BYTES}",
         GRIT_HDR_BYTES, d.hdr_bytes)
    need(d.version == GRIT_VERSION, "version",
         f"descriptor version {d.version}; this implementation reads version {GRIT_VERSION}",
         GRIT_VERSION, d.version)
    need(d.n_levels in (1, 2), "n_levels",
         f"n_levels is {d.n_levels}; it must be 1 or 2", "1 or 2", d.n_levels)
    need(d.flags & F_RESERVED == 0, "flags_reserved",
         f"flags {d.flags:#04x} set reserved bits {d.flags & F_RESERVED:#04x} (must be 0)",
         0, d.flags & F_RESERVED)
    need(d.frame_rsvd == 0, "frame_rsvd",
         f"frame_rsvd is {d.frame_rsvd}; it must be 0", 0, d.frame_rsvd)
    need(d.container in (0, 1), "container",
         f"container is {d.container}; it must be 0 (CT_DENSE) or 1 (CT_PAD8)",
         "0 or 1", d.container)
    need(d.n_levels != 1 or (d.k1 == 0 and d.scale1 == 0), "one_level",
         f"n_levels is 1 but k1={d.k1} and scale1={d.scale1:#06x}; both must be 0 (§3.3)",
         "k1=0, scale1=0x0000", f"k1={d.k1}, scale1={d.scale1:#06x}")
    need(not (d.flags & F_SPARSE and d.flags & F_HAS_ZP), "sparse_and_zp",
         "SPARSE and HAS_ZP are both set; there is only one aux plane (§3.3)",
         "not both", f"flags={d.flags:#04x}")
    need(not (d.flags & F_ZP_L1SCALED) or (bool(d.flags & F_HAS_ZP) and d.n_levels == 2),
         "zp_l1scaled",
         "ZP_L1SCALED requires HAS_ZP and n_levels == 2 (§3.3)",
         "HAS_ZP and n_levels=2", f"flags={d.flags:#04x}, n_levels={d.n_levels}")
    need(not (d.elem >> 15) & 1, "bias_ovr",
         f"elem format {d.elem:#06x} sets bias_ovr; version 1 requires 0 (§2.1, §0.3a)",
         0, 1)
    for fname in ("elem", "scale0", "scale1", "zp_fmt"):
        word = getattr(d, fname)
        need((word >> 11) & 3 != 3, "nan_enc",
             f"{fname} format {word:#06x} uses the reserved nan_enc value 3 (§2.3)",
             "nan_enc != 3", f"{fname}.nan_enc=3")


# --------------------------------------------------------------------------
# Step 2 — grade
# --------------------------------------------------------------------------


def _frame_value_text(fname: str, v: int) -> str:
    if fname in ("elem", "scale0", "scale1", "zp_fmt"):
        return f"{fmt.name(v)} ({v:#06x})" if v else "absent (0x0000)"
    if fname == "flags":
        return f"{v:#04x}"
    return str(v)


def _step2(d: Descriptor, grades: Mapping[int, Grade]) -> Grade:
    g = grades.get(d.grade_id)
    if g is None:
        raise _fail(Status.GRADE_UNKNOWN, 2, "grade_id",
                    f"grade_id {d.grade_id:#018x} does not resolve to a known grade "
                    "(not registered, and not supplied by the file's grades map)",
                    expected="a known grade_id", actual=f"{d.grade_id:#018x}")
    want = g.frame
    for fname in FRAME_FIELDS:
        exp, act = getattr(want, fname), getattr(d, fname)
        if exp != act:
            cause = None
            if fname == "k0":
                cause = (f"the tensor was quantised at group size {act} but the grade says "
                         f"{exp} (or the other way round)")
            if fname == "elem" and {exp, act} == {FORMAT_TOKENS["u4"], FORMAT_TOKENS["s4"]}:
                cause = "u4 and s4 confused: Q4_K-style nibbles are unsigned (§10.2)"
            raise _fail(Status.GRADE_UNKNOWN, 2, f"frame.{fname}",
                        f"frame field {fname} is {_frame_value_text(fname, act)} but grade "
                        f"{g.name or g.canonical} implies {_frame_value_text(fname, exp)}",
                        expected=exp, actual=act, cause=cause)
    return g


# --------------------------------------------------------------------------
# Step 3 — placement
# --------------------------------------------------------------------------


def _step3(d: Descriptor) -> None:
    for fname in ("placement_data", "placement_scale", "placement_meta"):
        word = getattr(d, fname)
        why = placement_problem(word)
        if why is not None:
            raise _fail(Status.PLACEMENT_UNKNOWN, 3, f"{fname}.class", f"{fname}: {why}",
                        expected="UNSPECIFIED, registered class 0x1, class 0x8 or 0xF",
                        actual=f"{word:#018x}")
    meta_set = d.placement_meta != 0
    if d.has_aux and not meta_set:
        raise _fail(Status.PLACEMENT_UNKNOWN, 3, "aux_without_meta",
                    "the descriptor has an aux plane (zero points or sparsity metadata) but "
                    "placement_meta is UNSPECIFIED",
                    expected="placement_meta set", actual="UNSPECIFIED", plane=3)
    if meta_set and not d.has_aux:
        raise _fail(Status.PLACEMENT_UNKNOWN, 3, "meta_without_aux",
                    f"placement_meta is {placement_name(d.placement_meta)} but the descriptor "
                    "has no aux plane",
                    expected="UNSPECIFIED", actual=f"{d.placement_meta:#018x}", plane=3)


# --------------------------------------------------------------------------
# Step 4 — the size equations
# --------------------------------------------------------------------------


def plane_sizes(d: Descriptor, shape: Sequence[int]) -> PlaneSizes:
    """The exact plane sizes of §7.3 step 4 (sizes.py); raises _Fail
    (SizeMismatch) when the equations cannot be evaluated."""
    try:
        return expected_plane_sizes(d, shape)
    except GritSizeError as e:
        raise _Fail(Status.SIZE_MISMATCH, e.detail) from None


def _likeliest_cause(d: Descriptor, sz: PlaneSizes, plane: int, actual: int) -> str | None:
    """Name the likeliest cause when the numbers point to one (§7.5)."""
    expected = sz.as_list()[plane]
    if plane == 0:
        if d.flags & F_SPARSE and actual == _ceil8(sz.numel * _cw(d.elem, d.container)):
            return (f"dense/sparse confusion: the data plane holds all {sz.numel} elements, "
                    f"not the {sz.nnz} survivors of {d.sp_n}:{d.sp_m} sparsity")
        other = CT_PAD8 if d.container == 0 else 0
        if _cw(d.elem, other) != _cw(d.elem, d.container) and actual == _ceil8(
            sz.nnz * _cw(d.elem, other)
        ):
            return ("container confusion: the elements are stored "
                    + ("one per byte (CT_PAD8)" if other == CT_PAD8
                       else "densely packed (CT_DENSE)")
                    + " but the descriptor says the other (§3.4)")
    if plane == 1 and actual > 0 and sz.numel > 0:
        cw = _cw(d.scale0, CT_PAD8)
        if (actual * 8) % cw == 0:
            groups = actual * 8 // cw
            if groups and sz.numel % groups == 0:
                k = sz.numel // groups
                if k != d.k0:
                    return f"the checkpoint was quantised at group_size={k}, not {d.k0}"
    if plane == 2 and d.flags & F_ZP_L1SCALED and actual * 2 == expected:
        return ("the level-1 plane holds one value per group; ZP_L1SCALED stores [S1, Z1] "
                "pairs (§8.4)")
    zp_nibbles = d.flags & F_HAS_ZP and fmt.width(d.zp_fmt) <= 4
    if plane == Plane.AUX and zp_nibbles and actual * 2 == expected:
        return ("zero points packed two per byte (dense nibbles, as GPTQ and AWQ ship them); "
                "GRIT v1 stores sub-byte zero points one per byte (§3.4, §0.3d)")
    if plane == Plane.AUX and d.flags & F_HAS_ZP and actual == 0:
        return "the zero-point plane is missing (symmetric checkpoint described as asymmetric?)"
    if actual < expected:
        return (f"the plane is short by {expected - actual} bytes: a truncated shard, a short "
                "read or a mis-served range")
    if actual > expected:
        return ("the plane is larger than the descriptor allows: somebody's model of the "
                "layout (group size, container, sparsity) is wrong")
    return None


def _step4(d: Descriptor, shape: Sequence[int], plane_bytes: Sequence[int]) -> PlaneSizes:
    sz = plane_sizes(d, shape)
    for i, (exp, act) in enumerate(zip(sz.as_list(), plane_bytes, strict=False)):
        if exp != act:
            cause = _likeliest_cause(d, sz, i, act)
            msg = (f"{PLANE_NAMES[i]} plane is {act} bytes; descriptor requires {exp}."
                   f"\n  {sz.equations[i]}.")
            if cause:
                msg += f"\n  Likeliest cause: {cause}."
            raise _Fail(Status.SIZE_MISMATCH, Detail(
                message=msg, step=4, clause=f"size.{PLANE_NAMES[i]}", expected=exp, actual=act,
                plane=i, cause=cause))
    return sz


# --------------------------------------------------------------------------
# Step 5 — content
# --------------------------------------------------------------------------


def sparse_order_violation(
    aux: bytes | memoryview, n_quads: int, n: int, m: int, metabits: int,
    chunk_quads: int = 1 << 20,
) -> tuple[int, list[int]] | None:
    """First group whose metadata indices are not strictly increasing and < m
    (§7.4), as (group index, indices); None when all are in order.  Streams
    in chunks so memory stays bounded."""
    import numpy as np  # here, not at the top: a scan without --deep imports no numpy

    buf = np.frombuffer(aux, dtype=np.uint8)
    per_quad_bits = n * metabits
    for q0 in range(0, n_quads, chunk_quads):
        q1 = min(n_quads, q0 + chunk_quads)
        bit0, bit1 = q0 * per_quad_bits, q1 * per_quad_bits
        byte0, byte1 = bit0 // 8, -(-bit1 // 8)
        bits = np.unpackbits(buf[byte0:byte1], bitorder="little")[bit0 - byte0 * 8 :]
        bits = bits[: (q1 - q0) * per_quad_bits].reshape(q1 - q0, n, metabits)
        weights = (1 << np.arange(metabits, dtype=np.uint16)).astype(np.uint16)
        idx = (bits.astype(np.uint16) * weights).sum(axis=2)
        bad = (idx >= m).any(axis=1)
        if n > 1:
            bad |= (np.diff(idx.astype(np.int32), axis=1) <= 0).any(axis=1)
        if bad.any():
            g = int(np.argmax(bad))
            return q0 + g, [int(x) for x in idx[g]]
    return None


def _step5(d: Descriptor, sz: PlaneSizes, planes: Sequence[bytes | memoryview | None] | None,
           expected_digest: bytes | None, planes_digest: bytes | None) -> None:
    if expected_digest is not None:
        if planes_digest is not None:
            got = planes_digest
        else:
            assert planes is not None
            got = digest_planes(planes)
        if got != expected_digest:
            raise _fail(Status.DIGEST_MISMATCH, 5, "digest",
                        f"plane digest is {got.hex()}; the descriptor's owner expected "
                        f"{expected_digest.hex()}: the bytes are not the ones that were described",
                        expected=expected_digest.hex(), actual=got.hex())
    if needs_contents(d):
        if planes is None:
            raise GritValueError("SPORDER_ASC_LSB metadata order is checked on the aux "
                                 "plane's contents; pass planes")
        metabits = SP_META_BITS.get(d.sp_meta_fmt, 0)
        aux_plane = planes[Plane.AUX]
        aux = aux_plane if aux_plane is not None else b""
        bad = sparse_order_violation(aux, sz.numel // d.sp_m, d.sp_n, d.sp_m, metabits)
        if bad is not None:
            g, idx = bad
            raise _fail(Status.DIGEST_MISMATCH, 5, "asc_lsb",
                        f"sparsity metadata of group {g} is {idx}; SPORDER_ASC_LSB requires "
                        f"strictly increasing indices < {d.sp_m} (§7.4)",
                        expected=f"strictly increasing < {d.sp_m}", actual=idx, plane=3)


# --------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------


def grit_check(
    desc: bytes | bytearray | memoryview | Descriptor,
    shape: Sequence[int],
    plane_bytes: Sequence[int] | None = None,
    level: CheckLevel | int = CheckLevel.STRUCTURE,
    *,
    planes: Sequence[bytes | memoryview | None] | None = None,
    expected_digest: bytes | None = None,
    grades: Mapping[int, Grade] | None = None,
    planes_digest: bytes | None = None,
) -> CheckResult:
    """§7.3: return the first failure, in the normative order, or OK.

    ``plane_bytes`` are the four plane lengths; when omitted they are taken
    from ``planes``.  Level 2 and above need ``planes`` (the contents).
    ``planes_digest``: the §6.5 digest of the planes when the caller has it
    already (hashed while it read them), so step 5 does not hash them again;
    with it, level 2 needs ``planes`` only where ``needs_contents`` says so.
    """
    if level not in tuple(CheckLevel):
        raise GritValueError(f"check level must be 0..3; got {level}")
    if planes is not None:
        if len(planes) != 4:
            raise GritValueError("planes are four: data, scale0, scale1, aux")
        if plane_bytes is None:
            plane_bytes = [0 if p is None else len(p) for p in planes]
    if plane_bytes is None or len(plane_bytes) != 4:
        raise GritValueError("plane_bytes are four integers: data, scale0, scale1, aux")
    if level >= CheckLevel.CONTENT and planes is None and (
            planes_digest is None or level >= CheckLevel.PROBES):
        raise GritValueError(f"check level {level} reads plane contents; pass planes")
    # numpy integers count too; none can exist before numpy is imported
    np = sys.modules.get("numpy")
    integer = (int, np.integer) if np is not None else int
    if not all(isinstance(n, integer) and not isinstance(n, bool) for n in shape):
        raise GritValueError("shape extents must be integers")
    if not all(isinstance(n, integer) for n in plane_bytes):
        raise GritValueError("plane_bytes must be integers")
    if level == CheckLevel.NONE:
        return CheckResult(Status.OK)
    if isinstance(desc, Descriptor):
        d = desc
    else:
        if len(desc) < SIZE:
            return CheckResult(Status.GRADE_UNKNOWN, Detail(
                message=f"a descriptor is {SIZE} bytes; got {len(desc)}", step=1,
                clause="length", expected=SIZE, actual=len(desc)))
        d = unpack(desc)
    try:
        _step1(d)
        _step2(d, _DEFAULT_GRADES if grades is None else grades)
        _step3(d)
        sz = _step4(d, shape, plane_bytes)
        if level >= CheckLevel.CONTENT:
            _step5(d, sz, planes, expected_digest, planes_digest)
    except _Fail as f:
        return CheckResult(f.status, f.detail)
    warnings: tuple[str, ...] = ()
    if level >= CheckLevel.PROBES:
        from .probes import probe  # §7.6: advisory, never changes the status

        assert planes is not None
        warnings = tuple(probe(d, shape, [b"" if p is None else p for p in planes]))
    return CheckResult(Status.OK, sizes=sz, warnings=warnings)


def needs_contents(d: Descriptor) -> bool:
    """Whether level 2 reads plane contents beyond their digest: the §7.4
    order of SPORDER_ASC_LSB sparsity metadata (the aux plane)."""
    return bool(d.flags & F_SPARSE) and d.sp_order == SPORDER_ASC_LSB


def grit_check_or_raise(*args: object, **kwargs: object) -> CheckResult:
    """§7.1's must-use form: raise the status's GritError subclass on failure."""
    res = grit_check(*args, **kwargs)  # type: ignore[arg-type]
    if not res.ok:
        assert res.detail is not None
        raise ERROR_FOR_STATUS[res.status](res.detail)
    return res
