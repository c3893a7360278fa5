"""GritArray: a descriptor, a shape and the planes, with the §5.4 laws.

Operations keep the planes in canonical (ROW_MAJOR) form internally and
carry the descriptor's placements as the claim about stored bytes:

* ``relayout(p)`` — a placement change (L1: decode is invariant; L2:
  through ROW_MAJOR, so composition and identity hold);
* ``slice(axis, start, stop)`` — along the group axis the bounds must be
  multiples of k0 (and of the level-1 span and of M), else an error (L5);
* ``transpose(axes)`` — refused when it moves the group axis (L4: the only
  spelling is ``requantize``); otherwise the units are permuted;
* ``concat`` — along any axis with aligned bounds.

NOTE_ASSUMED is sticky through all of them and through serialisation
(§12 rule 2): the result's note keeps the bit if any input had it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np

from .decode import canonical_planes, decode
from .descriptor import Descriptor
from .errors import GritValueError
from .fingerprint import digest_planes, gid
from .grade import Grade, registry
from .layout import Geometry, Units, from_canonical, geometry, unit_bytes, unit_codes
from .placement import ROW_MAJOR, UNSPECIFIED
from .tables import F_SPARSE, NOTE_ASSUMED


@dataclass(frozen=True)
class GritArray:
    """A decoded-or-encodable tensor: descriptor, shape and its canonical planes."""

    desc: Descriptor
    shape: tuple[int, ...]
    planes: tuple[bytes, bytes, bytes, bytes]  # canonical (ROW_MAJOR) planes
    grades: Mapping[int, Grade] = field(default_factory=registry, compare=False)
    layouts: Mapping[int, str] = field(default_factory=dict, compare=False)

    # ---- construction ------------------------------------------------------
    @classmethod
    def from_payload(cls, desc: Descriptor, shape: Sequence[int], payload: bytes,
                     grades: Mapping[int, Grade] | None = None,
                     layouts: Mapping[int, str] | None = None) -> GritArray:
        planes = canonical_planes(desc, shape, payload, layouts)
        return cls(desc, tuple(shape), tuple(bytes(p) for p in planes),  # type: ignore[arg-type]
                   registry() if grades is None else grades, dict(layouts or {}))

    @property
    def grade(self) -> Grade:
        g = self.grades.get(self.desc.grade_id)
        if g is None:
            raise GritValueError(f"grade_id {self.desc.grade_id:#018x} is not known")
        return g

    @property
    def assumed(self) -> bool:
        return bool(self.desc.note & NOTE_ASSUMED)

    @property
    def gid(self) -> bytes:
        return gid(self.grade, self.desc, self.shape)

    def canonical_digest(self) -> bytes:
        return digest_planes(self.planes)

    def decode(self) -> np.ndarray:
        return decode(self._canonical_desc(), self.shape, planes=self.planes,
                      grades=self.grades)

    def payload(self) -> bytes:
        """Serialised bytes in the descriptor's placements (§3.6)."""
        return from_canonical(self.desc, self.shape, self.planes, self.layouts)

    def _canonical_desc(self) -> Descriptor:
        meta = UNSPECIFIED if self.desc.placement_meta == UNSPECIFIED else ROW_MAJOR
        return self.desc.with_placements(ROW_MAJOR, ROW_MAJOR, meta)

    def _geo(self) -> Geometry:
        return geometry(self.desc, self.shape)

    # ---- §5.4 operations ---------------------------------------------------
    def relayout(self, data: int | None = None, scale: int | None = None,
                 meta: int | None = None, layouts: Mapping[int, str] | None = None) -> GritArray:
        """A placement change; the canonical planes (and decode) are unchanged."""
        lay = {**self.layouts, **(layouts or {})}
        new = self.desc.with_placements(data, scale, meta)
        arr = replace(self, desc=new, layouts=lay)
        arr.payload()  # prove the target placement is realisable (raises otherwise)
        return arr

    def _unit_views(self) -> list[Units | None]:
        """Each plane's units as a (outer, per_row, per_unit) array of codes."""
        g = self._geo()
        out: list[Units | None] = []
        for spec, raw in zip(g.planes, self.planes):
            if not spec.present:
                out.append(None)
                continue
            u = unit_codes(spec, raw)
            out.append(u)
        return out

    def _rebuild(self, shape: tuple[int, ...], group_axis: int,
                 units: Sequence[Units | None], desc: Descriptor | None = None) -> GritArray:
        d = replace(desc or self.desc, group_axis=group_axis)
        g = geometry(d, shape)
        planes = []
        for spec, u in zip(g.planes, units):
            planes.append(b"" if u is None or not spec.present else unit_bytes(spec, u))
        return replace(self, desc=d, shape=shape, planes=tuple(planes))  # type: ignore[arg-type]

    def _row_split(self) -> tuple[list[int], list[int | None]]:
        """Units per canonical row for each plane (None: the plane does not tile rows)."""
        g = self._geo()
        per_row: list[int | None] = []
        for spec in g.planes:
            if not spec.present:
                per_row.append(0)
            elif spec.dims[0] == g.outer and spec.units == g.outer * spec.dims[1]:
                per_row.append(spec.dims[1])
            else:
                per_row.append(None)
        return [g.outer, g.inner], per_row

    def slice(self, axis: int, start: int, stop: int) -> GritArray:
        """x[..., start:stop, ...] along ``axis``; L5 on the group axis."""
        d = self.desc
        rank = len(self.shape)
        if not 0 <= axis < rank:
            raise GritValueError(f"axis {axis} outside rank {rank}")
        n = self.shape[axis]
        start, stop = max(0, start), min(n, stop)
        if stop < start:
            stop = start
        ga = d.group_axis
        align = d.k0 * (d.k1 if d.n_levels == 2 and d.k1 else 1)
        if d.flags & F_SPARSE:
            align = int(np.lcm(align, d.sp_m))
        if axis == ga and (start % align or (stop % align and stop != n)):
            raise GritValueError(
                f"L5: a group-axis slice must start and stop on multiples of {align} "
                f"(k0={d.k0}); got {start}:{stop}. Never a silent view.")
        if axis == ga and stop % align:
            raise GritValueError(f"L5: slice end {stop} splits a group of {align}")
        units = self._unit_views()
        (outer, inner), per_row = self._row_split()
        if any(p is None for p in per_row) or (d.n_levels == 2 and d.k1 == 0):
            if d.n_levels == 2 and d.k1 == 0:
                return self._slice_per_tensor(axis, start, stop, units)
            raise GritValueError("level-1 groups span rows: only whole-tensor slices are exact")
        return self._slice_rows(axis, start, stop, units, per_row)

    def _axes_grid(self, units: Sequence[Units | None], per_row: Sequence[int | None]
                   ) -> list[Units | None]:
        """Each plane as (*non-group extents, units per row, per_unit)."""
        d = self.desc
        other = [s for i, s in enumerate(self.shape) if i != d.group_axis]
        out: list[Units | None] = []
        for u, pr in zip(units, per_row):
            # per_row is None only for planes whose groups span rows; callers
            # refuse those before asking for a grid.
            out.append(None if u is None else u.reshape(*other, cast(int, pr), u.shape[-1]))
        return out

    def _slice_rows(self, axis: int, start: int, stop: int,
                    units: Sequence[Units | None], per_row: Sequence[int | None]) -> GritArray:
        d = self.desc
        ga = d.group_axis
        grids = self._axes_grid(units, per_row)
        new_shape = list(self.shape)
        new_shape[axis] = stop - start
        res: list[Units | None] = []
        for i, gr in enumerate(grids):
            if gr is None:
                res.append(None)
                continue
            if axis == ga:
                ratio = cast(int, per_row[i]) / self.shape[ga]
                a, b = int(start * ratio), int(stop * ratio)
                sl = gr[..., a:b, :]
            else:
                pos = axis if axis < ga else axis - 1
                idx = [slice(None)] * gr.ndim
                idx[pos] = slice(start, stop)
                sl = gr[tuple(idx)]
            res.append(np.ascontiguousarray(sl).reshape(-1, gr.shape[-1]))
        return self._rebuild(tuple(new_shape), ga, res)

    def _slice_per_tensor(self, axis: int, start: int, stop: int,
                          units: Sequence[Units | None]) -> GritArray:
        """k1 = 0: the level-1 scale is shared; slice the others by rows."""
        d = self.desc
        per_row: list[int] = []
        g = self._geo()
        for i, spec in enumerate(g.planes):
            per_row.append(0 if not spec.present else (1 if i == 2 else spec.dims[1]))
        grids = []
        other = [s for k, s in enumerate(self.shape) if k != d.group_axis]
        for i, u in enumerate(units):
            if u is None or i == 2:
                grids.append(u)
            else:
                grids.append(u.reshape(*other, per_row[i], u.shape[-1]))
        new_shape = list(self.shape)
        new_shape[axis] = stop - start
        res: list[Units | None] = []
        for i, gr in enumerate(grids):
            if gr is None or i == 2:
                res.append(gr)
                continue
            if axis == d.group_axis:
                ratio = per_row[i] / self.shape[axis]
                sl = gr[..., int(start * ratio):int(stop * ratio), :]
            else:
                pos = axis if axis < d.group_axis else axis - 1
                idx = [slice(None)] * gr.ndim
                idx[pos] = slice(start, stop)
                sl = gr[tuple(idx)]
            res.append(np.ascontiguousarray(sl).reshape(-1, gr.shape[-1]))
        return self._rebuild(tuple(new_shape), d.group_axis, res)

    def transpose(self, axes: Sequence[int]) -> GritArray:
        """Permute axes.  Moving the group axis is not a view (L4)."""
        d = self.desc
        rank = len(self.shape)
        if sorted(axes) != list(range(rank)):
            raise GritValueError(f"axes {list(axes)} are not a permutation of 0..{rank - 1}")
        new_ga = list(axes).index(d.group_axis)
        if new_ga != d.group_axis:
            raise GritValueError(
                "L4: transposing the group axis is not a placement change; the only "
                "spelling is requantize(transpose(decode(x)), grade)")
        units = self._unit_views()
        (outer, inner), per_row = self._row_split()
        if any(p is None for p in per_row) and not (d.n_levels == 2 and d.k1 == 0):
            raise GritValueError("level-1 groups span rows: transpose is not exact here")
        other_axes = [a for a in axes if a != d.group_axis]
        old_other = [a for a in range(rank) if a != d.group_axis]
        perm = [old_other.index(a) for a in other_axes]
        other = [self.shape[a] for a in old_other]
        res: list[Units | None] = []
        for i, u in enumerate(units):
            if u is None or (d.n_levels == 2 and d.k1 == 0 and i == 2):
                res.append(u)
                continue
            known = per_row[i]
            pr = known if known is not None else u.shape[0] // max(1, outer)
            grid = u.reshape(*other, pr, u.shape[-1])
            t = np.transpose(grid, perm + [len(other), len(other) + 1])
            res.append(np.ascontiguousarray(t).reshape(-1, u.shape[-1]))
        new_shape = tuple(self.shape[a] for a in axes)
        return self._rebuild(new_shape, new_ga, res)


def concat(arrays: Sequence[GritArray], axis: int) -> GritArray:
    """Concatenate along ``axis``; frames must agree (placements included)."""
    if not arrays:
        raise GritValueError("concat of nothing")
    first = arrays[0]
    d0 = first.desc
    for a in arrays[1:]:
        if a.desc.with_note(0) != d0.with_note(0):
            raise GritValueError("concat needs identical descriptors (apart from the note)")
        if len(a.shape) != len(first.shape) or any(
            s != t for k, (s, t) in enumerate(zip(a.shape, first.shape)) if k != axis):
            raise GritValueError("concat: shapes differ off the concatenation axis")
    if d0.n_levels == 2 and d0.k1 == 0:
        raise GritValueError("concat of per-tensor-scaled arrays would need one scale: "
                             "requantize instead")
    note = 0
    for a in arrays:
        note |= a.desc.note & NOTE_ASSUMED  # §12 rule 2: sticky
    note |= d0.note & ~NOTE_ASSUMED
    ga = d0.group_axis
    if axis == ga:
        align = d0.k0 * (d0.k1 if d0.n_levels == 2 and d0.k1 else 1)
        for a in arrays[:-1]:
            if a.shape[ga] % align:
                raise GritValueError(f"L5: concat along the group axis needs multiples of {align}")
    grids_all = []
    for a in arrays:
        units = a._unit_views()
        _, per_row = a._row_split()
        if any(p is None for p in per_row):
            raise GritValueError("level-1 groups span rows: concat is not exact here")
        grids_all.append((a._axes_grid(units, per_row), per_row))
    res: list[Units | None] = []
    for i in range(4):
        maybe = [g[0][i] for g in grids_all]
        if maybe[0] is None:
            res.append(None)
            continue
        # identical descriptors (checked above): a plane present in one is in all
        parts = cast("list[Units]", maybe)
        if axis == ga:
            cat = np.concatenate(parts, axis=parts[0].ndim - 2)
        else:
            pos = axis if axis < ga else axis - 1
            cat = np.concatenate(parts, axis=pos)
        res.append(np.ascontiguousarray(cat).reshape(-1, parts[0].shape[-1]))
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    return first._rebuild(tuple(shape), ga, res, desc=d0.with_note(note))
