"""The size equations of §7.3 step 4: the exact byte size of each plane for
a descriptor and a shape.

Its own module so that everything that lays planes out (layout.py) can use
the equations without importing the boundary check (check.py), which in
turn runs the advisory probes built on the layout."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import fmt
from .bits import container_bits
from .descriptor import Descriptor
from .errors import Detail, GritSizeError
from .tables import CT_PAD8, F_HAS_ZP, F_SPARSE, F_ZP_L1SCALED, SP_META_BITS

_I64_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class PlaneSizes:
    """The §7.3 step-4 quantities for one descriptor and shape."""

    numel: int
    nnz: int
    n_groups0: int
    n_groups1: int
    data: int
    scale0: int
    scale1: int
    aux: int
    equations: tuple[str, str, str, str]

    def as_list(self) -> list[int]:
        return [self.data, self.scale0, self.scale1, self.aux]

    @property
    def total(self) -> int:
        return self.data + self.scale0 + self.scale1 + self.aux


def cw(word: int, container: int) -> int:
    """cw(f, ct) of §7.3 step 4 for a format word and a container code."""
    return container_bits(fmt.width(word), container == CT_PAD8)


def ceil8(bits: int) -> int:
    return -(-bits // 8)


def expected_plane_sizes(d: Descriptor, shape: Sequence[int]) -> PlaneSizes:
    """The exact plane sizes of §7.3 step 4; raises GritSizeError when the
    equations cannot be evaluated (bad shape, zero divisor, indivisible)."""

    def bad(clause: str, msg: str, expected: object = None,
            actual: object = None) -> GritSizeError:
        return GritSizeError(Detail(message=msg, step=4, clause=clause,
                                    expected=expected, actual=actual))

    rank = len(shape)
    for i, n in enumerate(shape):
        if not 0 <= n <= _I64_MAX:
            raise bad("shape", f"shape[{i}] = {n} is not an extent in 0..2^63-1", "0..2^63-1", n)
    ga = d.group_axis
    if not 0 <= ga < rank:
        raise bad("group_axis", f"group_axis {ga} is outside the tensor's rank {rank}",
                  f"0..{rank - 1}", ga)
    numel = 1
    for n in shape:
        numel *= n
    if d.k0 == 0:
        raise bad("k0_zero", "k0 is 0; a level-0 group needs at least one element", ">= 1", 0)
    if shape[ga] % d.k0:
        raise bad("k0_divides",
                  f"shape[{ga}] = {shape[ga]} is not a multiple of k0 = {d.k0} (§3.7)",
                  f"multiple of {d.k0}", shape[ga])
    sparse = bool(d.flags & F_SPARSE)
    if sparse:
        if d.sp_m == 0:
            raise bad("sp_m_zero", "SPARSE with sp_m = 0", ">= 1", 0)
        if shape[ga] % d.sp_m:
            raise bad("sp_m_divides",
                      f"shape[{ga}] = {shape[ga]} is not a multiple of sp_m = {d.sp_m}",
                      f"multiple of {d.sp_m}", shape[ga])
        nnz = numel * d.sp_n // d.sp_m
    else:
        nnz = numel
    n_groups0 = numel // d.k0
    if d.n_levels == 2:
        if d.k1 == 0:
            n_groups1 = 1
        else:
            if n_groups0 % d.k1:
                raise bad("k1_divides",
                          f"n_groups0 = {n_groups0} is not a multiple of k1 = {d.k1} (§3.7)",
                          f"multiple of {d.k1}", n_groups0)
            n_groups1 = n_groups0 // d.k1
    else:
        n_groups1 = 0
    cw_e = cw(d.elem, d.container)
    cw_s0 = cw(d.scale0, CT_PAD8)
    l1_mult = 2 if d.flags & F_ZP_L1SCALED else 1
    w_s1 = fmt.width(d.scale1)
    data = ceil8(nnz * cw_e)
    scale0 = ceil8(n_groups0 * cw_s0)
    scale1 = ceil8(n_groups1 * l1_mult * w_s1)
    eq_aux: str
    if sparse:
        metabits = SP_META_BITS.get(d.sp_meta_fmt, 0)
        aux = ceil8(numel // d.sp_m * d.sp_n * metabits)
        eq_aux = (f"numel={numel}, sp={d.sp_n}:{d.sp_m}, metabits={metabits} -> "
                  f"ceil({numel // d.sp_m}*{d.sp_n}*{metabits}/8) = {aux} bytes")
    elif d.flags & F_HAS_ZP:
        cw_z = cw(d.zp_fmt, CT_PAD8)
        aux = ceil8(n_groups0 * cw_z)
        eq_aux = (f"n_groups0={n_groups0}, cw({fmt.name(d.zp_fmt)})={cw_z} -> {aux} bytes")
    else:
        aux = 0
        eq_aux = "no zero points and no sparsity -> 0 bytes"
    eqs = (
        f"numel={numel}" + (f", nnz={nnz}" if sparse else "")
        + f", cw({fmt.name(d.elem)}, {'pad8' if d.container == CT_PAD8 else 'dense'})={cw_e}"
        f" -> {data} bytes",
        f"numel={numel}, k0={d.k0} -> n_groups0={n_groups0}, cw({fmt.name(d.scale0)})={cw_s0}"
        f" -> {scale0} bytes",
        (f"n_groups1={n_groups1}" + (" x2 (ZP_L1SCALED)" if l1_mult == 2 else "")
         + f", width({fmt.name(d.scale1)})={w_s1} -> {scale1} bytes")
        if d.n_levels == 2 else "one scale level -> 0 bytes",
        eq_aux,
    )
    return PlaneSizes(numel, nnz, n_groups0, n_groups1, data, scale0, scale1, aux, eqs)
