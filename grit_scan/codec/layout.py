"""What placements mean, and relayout to and from ROW_MAJOR (§5.2-§5.4).

Every plane is a sequence of *units* in canonical (ROW_MAJOR) order:

| plane  | unit                                   | natural 2-D shape (rows, cols)          |
|--------|----------------------------------------|-----------------------------------------|
| data   | one element code                       | (outer, inner * N / M)                  |
| scale0 | one level-0 scale code                 | (outer, inner / k0)                     |
| scale1 | one level-1 group: S1, or [S1, Z1]     | (outer, inner / k0 / k1) when it tiles  |
| aux    | one zero-point code, or one group of M | (outer, inner / k0), (outer, inner / M) |
|        | positions' N metadata indices          |                                         |

where ``inner`` is the group-axis extent and ``outer`` the product of the
other extents.  Canonical order visits the group axis fastest (docs/layouts.md).

A placement maps canonical unit order to physical order (a permutation of
units) and may change the byte form: ``BlockAos`` interleaves the planes per
(super-)group as scale1 ‖ scale0 ‖ aux ‖ data, ``PackK4`` packs scale0 and
aux u6 codes into ggml's 12-byte get_scale_min_k4 blocks, ``Pad(a)`` pads a
plane to a multiple of ``a`` bytes.  Registered words are read as the
expressions they name (``REGISTERED_MEANING``).  OPAQUE cannot be relayouted
(L3); an unresolvable class-0x8 word is refused (§5.3).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from . import fmt
from .bits import container_bits, pack_codes, unpack_codes
from .descriptor import Descriptor
from .errors import Detail, GritLayoutError, GritSizeError, GritValueError
from .placement import (
    BLOCK_AOS,
    COL_MAJOR,
    LINEAR_META,
    MEMO_CHARS,
    META_M16N8K32,
    PACK_K4_12B,
    ROW_MAJOR,
    SWIZZLE_128X4B,
    TILE_16X16,
    UNSPECIFIED,
    Layout,
    expression_word,
    parse_layout,
    placement_class,
    placement_name,
)
from .planes import BLOCK_AOS_ORDER, PLANE_NAMES, Plane, PlaneBuf
from .sizes import expected_plane_sizes
from .tables import CT_PAD8, F_HAS_ZP, F_MSB_FIRST, F_SPARSE, F_ZP_L1SCALED, SP_META_BITS

REGISTERED_MEANING: dict[int, str] = {
    ROW_MAJOR: "RowMajor",
    COL_MAJOR: "ColMajor",
    SWIZZLE_128X4B: "Swizzle128x4",
    TILE_16X16: "Tile(RowMajor,[16,16])",
    BLOCK_AOS: "BlockAos",
    LINEAR_META: "RowMajor",  # §3.8 packing with quads in linear order = canonical
    PACK_K4_12B: "PackK4",
}

# A plane's units as a (units, bytes-or-codes-per-unit) array; placements move
# whole units (§5.2), so the element dtype does not matter to them.
if TYPE_CHECKING:  # numpy is imported where arrays are built: a scan imports this module
    import numpy as np
    import numpy.typing as npt

    Units = npt.NDArray[Any]
    U8s = npt.NDArray[np.uint8]  # raw stored bytes
    Idx = npt.NDArray[np.int64]  # a unit permutation: physical j holds logical idx[j]
else:  # the names stay importable (codec/array.py annotates with Units)
    Units = U8s = Idx = Any


def _refuse(msg: str, plane: int | None = None) -> GritLayoutError:
    return GritLayoutError(Detail(message=msg, step=3, plane=plane, clause="relayout"))


# --------------------------------------------------------------------------
# plane geometry
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PlaneSpec:
    """One plane of a tensor's geometry: whether it is present and its units."""

    index: Plane
    present: bool
    units: int
    per_unit: int  # codes per unit
    width: int  # bits per code
    pad8: bool
    msb: bool
    dims: tuple[int, int]  # natural (rows, cols); (1, units) when none

    @property
    def cw(self) -> int:
        return container_bits(self.width, self.pad8)

    @property
    def canonical_bytes(self) -> int:
        return -(-self.units * self.per_unit * self.cw // 8)


@dataclass(frozen=True)
class Geometry:
    """A tensor's shape seen through its descriptor: groups and planes."""

    shape: tuple[int, ...]
    group_axis: int
    outer: int
    inner: int
    n_blocks: int  # AoS blocks: level-1 groups, one for per-tensor, else level-0 groups
    planes: tuple[PlaneSpec, PlaneSpec, PlaneSpec, PlaneSpec]


def geometry(d: Descriptor, shape: Sequence[int]) -> Geometry:
    """Unit inventory of each plane; raises GritSizeError when the §7.3
    equations do not hold for this shape."""
    sz = expected_plane_sizes(d, shape)
    ga = d.group_axis
    inner = shape[ga]
    outer = sz.numel // inner if inner else 0
    sparse = bool(d.flags & F_SPARSE)
    per_row_data = inner * d.sp_n // d.sp_m if sparse else inner
    gpr = inner // d.k0  # level-0 groups per row
    data = PlaneSpec(Plane.DATA, True, sz.nnz, 1, fmt.width(d.elem), d.container == CT_PAD8,
                     bool(d.flags & F_MSB_FIRST), (outer, per_row_data))
    s0 = PlaneSpec(Plane.SCALE0, True, sz.n_groups0, 1, fmt.width(d.scale0), True, False,
                   (outer, gpr))
    if d.n_levels == 2:
        mult = 2 if d.flags & F_ZP_L1SCALED else 1
        if d.k1 == 0:
            dims1 = (1, 1)
        elif gpr % d.k1 == 0:
            dims1 = (outer, gpr // d.k1)
        else:
            dims1 = (1, sz.n_groups1)
        s1 = PlaneSpec(Plane.SCALE1, True, sz.n_groups1, mult, fmt.width(d.scale1), False, False,
                       dims1)
    else:
        s1 = PlaneSpec(Plane.SCALE1, False, 0, 1, 1, False, False, (1, 0))
    if sparse:
        metabits = SP_META_BITS.get(d.sp_meta_fmt, 0)
        aux = PlaneSpec(Plane.AUX, True, sz.numel // d.sp_m, d.sp_n, metabits, False, False,
                        (outer, inner // d.sp_m))
    elif d.flags & F_HAS_ZP:
        aux = PlaneSpec(Plane.AUX, True, sz.n_groups0, 1, fmt.width(d.zp_fmt), True, False,
                        (outer, gpr))
    else:
        aux = PlaneSpec(Plane.AUX, False, 0, 1, 1, False, False, (1, 0))
    if d.n_levels == 2:
        n_blocks = sz.n_groups1 if d.k1 else 1
    else:
        n_blocks = sz.n_groups0
    return Geometry(tuple(shape), ga, outer, inner, n_blocks, (data, s0, s1, aux))


# --------------------------------------------------------------------------
# layout nodes -> unit permutations
# --------------------------------------------------------------------------


@dataclass
class _Attrs:
    """The attributes of a layout expression (§5.3)."""

    aos: bool = False
    packk4: bool = False
    pad: int = 0


class _Perm:
    """A permutation of units: physical = forward(logical)."""

    def forward(self, x: Units) -> Units:  # x: (n, u)
        raise NotImplementedError

    def backward(self, y: Units) -> Units:
        raise NotImplementedError

    @property
    def identity(self) -> bool:
        return False


class _Identity(_Perm):
    def forward(self, x: Units) -> Units:
        return x

    def backward(self, y: Units) -> Units:
        return y

    @property
    def identity(self) -> bool:
        return True


class _Index(_Perm):
    """physical[j] = logical[idx[j]]."""

    def __init__(self, idx: Idx) -> None:
        import numpy as np
        self.idx = idx
        self.inv = np.empty_like(idx)
        self.inv[idx] = np.arange(idx.size, dtype=idx.dtype)

    def forward(self, x: Units) -> Units:
        return x[self.idx]

    def backward(self, y: Units) -> Units:
        return y[self.inv]


class _Chunked(_Perm):
    """Perm(π): within chunks of len(π) units, physical j holds logical π[j]."""

    def __init__(self, pi: Sequence[int] | Idx) -> None:
        import numpy as np
        self.pi = np.asarray(pi, dtype=np.int64)
        self.inv = np.argsort(self.pi)
        L = self.pi.size
        half = L // 2
        # ggml's nibble orders: byte b of a run holds elements b and b + L/2
        self.nibble_pairs = L % 2 == 0 and bool(
            (self.pi[0::2] == np.arange(half)).all() and (self.pi[1::2] == np.arange(half) + half
                                                          ).all())

    def forward(self, x: Units) -> Units:
        L = self.pi.size
        return x.reshape(-1, L, x.shape[-1])[:, self.pi].reshape(x.shape)

    def backward(self, y: Units) -> Units:
        L = self.pi.size
        return y.reshape(-1, L, y.shape[-1])[:, self.inv].reshape(y.shape)


class _Compose(_Perm):
    def __init__(self, first: _Perm, then: _Perm) -> None:
        self.first, self.then = first, then

    def forward(self, x: Units) -> Units:
        return self.then.forward(self.first.forward(x))

    def backward(self, y: Units) -> Units:
        return self.first.backward(self.then.backward(y))

    @property
    def identity(self) -> bool:
        return self.first.identity and self.then.identity


class _Unbuilt(_Perm):
    """What a placement's permutation is when only its validity and its
    byte-level attributes were asked for (sizing, ``arrays=False``): a scan
    sizes planes but never moves units, and building the index arrays is
    what imported numpy into every GGUF scan (docs/performance.md)."""


_UNBUILT = _Unbuilt()


def _index_perm(node: Layout, rows: int, cols: int, ctx: tuple[int, int],
                arrays: bool = True) -> Idx | None:
    """The unit permutation of ``node`` on a rows x cols plane, as an index
    array (None when ``arrays`` is off: validated only)."""
    p = _build(node, rows, cols, ctx, _Attrs(), arrays)
    if not arrays:
        return None
    import numpy as np
    ar = np.arange(rows * cols, dtype=np.int64)[:, None]
    idx: Idx = p.forward(ar)[:, 0]
    return idx


def _build(node: Layout, rows: int, cols: int, ctx: tuple[int, int], attrs: _Attrs,
           arrays: bool = True) -> _Perm:
    """The unit permutation of ``node`` and its byte-level attributes.  Every
    refusal comes before any array is built, so with ``arrays`` off the same
    expressions are refused with the same messages and the same attributes
    are collected, without numpy (performance: sizing needs no permutation)."""
    rank, ga = ctx
    n = rows * cols
    c = node.ctor
    if c == "RowMajor":
        return _Identity()
    if c == "ColMajor":
        if rank != 2:
            raise GritValueError(f"ColMajor is rank-2 storage; this tensor has rank {rank}")
        if ga == 0:
            raise GritValueError(
                "ColMajor with group axis 0 would transpose the group axis, which is not a "
                "placement change (L4)")
        if not arrays:
            return _UNBUILT
        import numpy as np
        return _Index(np.arange(n, dtype=np.int64).reshape(rows, cols).T.reshape(-1))
    if c == "Tile":
        inner = cast(Layout, node.args[0])
        dims = cast("tuple[int, ...]", node.args[1])
        if len(dims) == 1:
            (b,) = dims
            if n % b:
                raise GritValueError(f"Tile([{b}]) needs a multiple of {b} units; plane has {n}")
            inner_pi = _index_perm(inner, 1, b, ctx, arrays)
            return _UNBUILT if inner_pi is None else _Chunked(inner_pi)
        if len(dims) != 2:
            raise GritValueError("Tile takes one or two dimensions")
        a, b = dims
        if rows % a or cols % b:
            raise GritValueError(f"Tile([{a},{b}]) does not divide the plane's {rows}x{cols} units")
        inner_idx = _index_perm(inner, a, b, ctx, arrays)
        if inner_idx is None:
            return _UNBUILT
        import numpy as np
        base = np.arange(n, dtype=np.int64).reshape(rows // a, a, cols // b, b)
        tiles = base.transpose(0, 2, 1, 3).reshape(-1, a * b)
        return _Index(tiles[:, inner_idx].reshape(-1))
    if c == "Interleave":
        inner = cast(Layout, node.args[0])
        k = cast(int, node.args[1])
        first = _build(inner, rows, cols, ctx, attrs, arrays)
        if rows % k:
            raise GritValueError(f"Interleave(.., {k}) needs rows divisible by {k}; got {rows}")
        if not arrays:
            return _UNBUILT
        import numpy as np
        idx = np.arange(n, dtype=np.int64).reshape(rows // k, k, cols)
        return _Compose(first, _Index(idx.transpose(0, 2, 1).reshape(-1)))
    if c == "Swizzle":
        bbits, lowbit, shift = cast("tuple[int, int, int]", node.args)
        period = 1 << (bbits + lowbit + shift)
        if n % period:
            raise GritValueError(f"Swizzle{node.args} needs a multiple of {period} units")
        if not arrays:
            return _UNBUILT
        import numpy as np
        o = np.arange(n, dtype=np.int64)
        mask = ((1 << bbits) - 1) << lowbit
        return _Index(o ^ ((o >> shift) & mask))
    if c == "Swizzle128x4":
        if rows % 128 or cols % 4:
            raise GritValueError(
                f"SWIZZLE_128X4B needs rows % 128 == 0 and cols % 4 == 0; plane is {rows}x{cols}")
        if not arrays:
            return _UNBUILT
        import numpy as np
        r = np.arange(rows, dtype=np.int64)[:, None]
        cc = np.arange(cols, dtype=np.int64)[None, :]
        tile = (r // 128) * (cols // 4) + cc // 4
        phys = tile * 512 + (r % 32) * 16 + ((r // 32) % 4) * 4 + cc % 4
        inv = np.empty(n, dtype=np.int64)
        inv[phys.reshape(-1)] = np.arange(n, dtype=np.int64)
        return _Index(inv)
    if c == "Perm":
        pi = cast("tuple[int, ...]", node.args[0])
        if n % len(pi):
            raise GritValueError(f"Perm of length {len(pi)} does not divide {n} units")
        return _Chunked(pi) if arrays else _UNBUILT
    if c == "Compose":
        first_node, then_node = cast("tuple[Layout, Layout]", node.args)
        first = _build(first_node, rows, cols, ctx, attrs, arrays)
        then = _build(then_node, rows, cols, ctx, attrs, arrays)
        return _Compose(first, then) if arrays else _UNBUILT
    if c == "BlockAos":
        attrs.aos = True
        return _Identity()
    if c == "PackK4":
        attrs.packk4 = True
        return _Identity()
    if c == "Pad":
        attrs.pad = max(attrs.pad, cast(int, node.args[0]))
        return _Identity()
    if c == "Opaque":
        raise _refuse("an Opaque layout can be consumed but never relayouted (L3)")
    raise _refuse(f"no relayout is defined for layout constructor {c}")


def _collect_attrs(node: Layout, attrs: _Attrs) -> None:
    if node.ctor == "BlockAos":
        attrs.aos = True
    elif node.ctor == "PackK4":
        attrs.packk4 = True
    elif node.ctor == "Pad":
        attrs.pad = max(attrs.pad, cast(int, node.args[0]))
    elif node.ctor == "Opaque":
        raise _refuse("an Opaque layout can be consumed but never relayouted (L3)")
    for a in node.args:
        if isinstance(a, Layout):
            _collect_attrs(a, attrs)


@functools.lru_cache(maxsize=256)
def _short_word(node: Layout) -> int:
    return expression_word(node.text)


def _word_of(text: str, node: Layout) -> int:
    """The class-0x8 word of ``node``, parsed from ``text`` (its canonical
    text hashed): once per short expression, as parse_layout parses it."""
    return _short_word(node) if len(text) <= MEMO_CHARS else expression_word(node.text)


def resolve_layout(word: int, layouts: Mapping[int, str] | None, plane: int) -> Layout:
    """The layout expression a placement word stands for, or refuse (§5.3)."""
    if word == UNSPECIFIED:
        raise _refuse(f"{PLANE_NAMES[plane]} placement is UNSPECIFIED (not asserted); decode needs "
                      "a placement", plane)
    if word in REGISTERED_MEANING:
        return parse_layout(REGISTERED_MEANING[word])
    if word == META_M16N8K32:
        raise _refuse("META_M16N8K32 (the PTX mma.sp fragment order) is declared unsupported "
                      "for relayout by this implementation", plane)
    cls = placement_class(word)
    if cls == 0xF:
        raise _refuse(f"{PLANE_NAMES[plane]} placement is OPAQUE: it can never be relayouted (L3)",
                      plane)
    if cls == 0x8:
        # §5.3: a class-0x8 word means only what the caller's layouts map
        # (from the file or the reader's format table) says; never guess.
        text = (layouts or {}).get(word)
        if text is None:
            raise _refuse(f"{PLANE_NAMES[plane]} placement {word:#018x} is a layout "
                          "expression hash whose expression was not supplied; refusing to "
                          "guess (§5.3)", plane)
        node = parse_layout(text)
        if _word_of(text, node) != word:
            raise _refuse(f"layout expression {text!r} does not hash to {word:#018x}", plane)
        return node
    raise _refuse(f"{PLANE_NAMES[plane]} placement {placement_name(word)} is not defined", plane)


@dataclass
class PlaneLayout:
    """A plane's unit permutation and layout attributes."""

    perm: _Perm
    attrs: _Attrs


def plane_layouts(d: Descriptor, g: Geometry, layouts: Mapping[int, str] | None = None,
                  arrays: bool = True) -> list[PlaneLayout | None]:
    """Resolve each present plane's placement into a unit permutation and
    byte-level attributes.  With ``arrays`` off the placements are checked
    and their attributes collected exactly as otherwise, but no permutation
    is built (``_Unbuilt``): what sizing needs, without numpy (docs/performance.md)."""
    words = (d.placement_data, d.placement_scale, d.placement_scale, d.placement_meta)
    ctx = (len(g.shape), g.group_axis)
    out: list[PlaneLayout | None] = []
    for i, spec in enumerate(g.planes):
        if not spec.present:
            out.append(None)
            continue
        node = resolve_layout(words[i], layouts, i)
        attrs = _Attrs()
        rows, cols = spec.dims
        if rows * cols != spec.units:
            rows, cols = 1, spec.units
        if spec.units <= 1:
            # a single unit (a per-tensor scale) is unmoved by any permutation;
            # only the byte-level constructors apply
            _collect_attrs(node, attrs)
            perm: _Perm = _Identity()
        else:
            try:
                perm = _build(node, rows, cols, ctx, attrs, arrays)
            except GritValueError as exc:
                raise _refuse(f"{PLANE_NAMES[i]} placement {node.text}: {exc}", i) from None
        out.append(PlaneLayout(perm, attrs))
    present = [pl for pl in out if pl is not None]
    aos = [pl.attrs.aos for pl in present]
    if any(aos) and not all(aos):
        raise _refuse("BLOCK_AOS must be set on every present plane")
    pk = [out[1] is not None and out[1].attrs.packk4, out[3] is not None and out[3].attrs.packk4]
    if any(pk) and not all(pk):
        raise _refuse("PackK4 joins scale0 and the zero-point plane: set it on both "
                      "placement_scale and placement_meta")
    if all(pk):
        s0, aux = g.planes[Plane.SCALE0], g.planes[Plane.AUX]
        if not (d.flags & F_HAS_ZP and s0.width == 6 and aux.width == 6 and s0.units % 8 == 0):
            raise _refuse("PACK_K4_12B needs u6 scales and u6 zero points in groups of 8")
    if any(pl.attrs.pad for pl in present) and any(aos):
        raise _refuse("Pad and BlockAos cannot be combined")
    return out


# --------------------------------------------------------------------------
# stored byte forms
# --------------------------------------------------------------------------


def is_canonical(d: Descriptor) -> bool:
    """True when every present plane is ROW_MAJOR (or LINEAR_META for metadata)."""
    if d.placement_data != ROW_MAJOR or d.placement_scale != ROW_MAJOR:
        return False
    return d.placement_meta in (UNSPECIFIED, ROW_MAJOR, LINEAR_META) or not d.has_aux


def stored_sizes(d: Descriptor, shape: Sequence[int],
                 layouts: Mapping[int, str] | None = None) -> tuple[list[int], bool]:
    """Bytes each plane occupies in its placement, and whether they are
    interleaved (BlockAos): the payload is then one stream of their sum.

    Memoised on (descriptor, shape, layouts): a checkpoint's tensors share a
    handful of descriptors and shapes, and parsing layout expressions for
    every plane of every tensor dominated a scan (docs/performance.md)."""
    sizes, aos = _stored_sizes(d, tuple(shape), _layouts_key(layouts) if layouts else ())
    return list(sizes), aos


# A file's (or ggml type's) layouts mapping is shared by all its tensors, so its
# sorted key is kept by identity; the mapping itself is held too, so an id is
# never reused while its entry lives.  Bounded: cleared past 1024 mappings.
_LAYOUT_KEYS: dict[int, tuple[Mapping[int, str], tuple[tuple[int, str], ...]]] = {}


def _layouts_key(layouts: Mapping[int, str]) -> tuple[tuple[int, str], ...]:
    hit = _LAYOUT_KEYS.get(id(layouts))
    if hit is not None and hit[0] is layouts:
        return hit[1]
    key = tuple(sorted(layouts.items()))
    if len(_LAYOUT_KEYS) >= 1024:
        _LAYOUT_KEYS.clear()
    _LAYOUT_KEYS[id(layouts)] = (layouts, key)
    return key


@functools.lru_cache(maxsize=4096)
def _stored_sizes(d: Descriptor, shape: tuple[int, ...],
                  layouts: tuple[tuple[int, str], ...]) -> tuple[tuple[int, ...], bool]:
    sizes, aos = _compute_stored_sizes(d, shape, dict(layouts) if layouts else None)
    return tuple(sizes), aos


def _compute_stored_sizes(d: Descriptor, shape: Sequence[int],
                          layouts: Mapping[int, str] | None) -> tuple[list[int], bool]:
    g = geometry(d, shape)
    # sizes need the placements' validity and byte forms, not their unit
    # permutations: a header-only scan never imports numpy (docs/performance.md)
    pls = plane_layouts(d, g, layouts, arrays=False)
    sizes = []
    for spec, pl in zip(g.planes, pls):
        n = spec.canonical_bytes if spec.present else 0
        if pl is not None and pl.attrs.pad:
            n = -(-n // pl.attrs.pad) * pl.attrs.pad
        sizes.append(n)
    if pls[1] is not None and pls[1].attrs.packk4:
        sizes[1] = g.planes[Plane.SCALE0].units // 8 * 12
        sizes[3] = 0
    aos = bool(pls[0] is not None and pls[0].attrs.aos)
    return sizes, aos


def split_payload(payload: bytes | memoryview, sizes: Sequence[int]) -> list[bytes | memoryview]:
    """Split data ‖ scale0 ‖ scale1 ‖ aux by plane sizes (§3.6).

    A short payload fills the planes in order (so the first short plane is
    the one a check reports); surplus bytes go to the last plane that has a
    size, so the check reports that plane as too large.
    """
    out: list[bytes | memoryview] = []
    off = 0
    for n in sizes:
        out.append(payload[off : off + n])
        off += len(out[-1])
    if off < len(payload):
        last = max((i for i, n in enumerate(sizes) if n), default=0)
        out[last] = bytes(out[last]) + bytes(payload[off:])
    return out


def payload_lengths(total: int, sizes: Sequence[int]) -> list[int]:
    """The plane lengths ``split_payload`` gives a payload of ``total``
    bytes, without the payload: a short payload fills the planes in order,
    surplus bytes go to the last plane that has a size."""
    out: list[int] = []
    left = total
    for n in sizes:
        out.append(min(n, left))
        left -= out[-1]
    if left:
        out[max((i for i, n in enumerate(sizes) if n), default=0)] += left
    return out


def unit_codes(spec: PlaneSpec, raw: PlaneBuf | U8s) -> Units:
    """A plane's codes as a (units, codes per unit) array (§5.2: placements move units)."""
    codes = unpack_codes(raw, spec.units * spec.per_unit, spec.width, spec.pad8, spec.msb)
    return codes.reshape(spec.units, spec.per_unit)


def unit_bytes(spec: PlaneSpec, units: Units) -> bytes:
    return pack_codes(units.reshape(-1), spec.width, spec.pad8, spec.msb)


def _unpack_k4(raw: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """ggml get_scale_min_k4 over 12-byte blocks -> (sc, m), 8 each per block."""
    import numpy as np
    q = raw[: n_groups // 8 * 12].reshape(-1, 12).astype(np.uint32)
    sc = np.empty((q.shape[0], 8), dtype=np.uint32)
    m = np.empty((q.shape[0], 8), dtype=np.uint32)
    sc[:, :4] = q[:, 0:4] & 63
    m[:, :4] = q[:, 4:8] & 63
    sc[:, 4:] = (q[:, 8:12] & 0xF) | ((q[:, 0:4] >> 6) << 4)
    m[:, 4:] = (q[:, 8:12] >> 4) | ((q[:, 4:8] >> 6) << 4)
    return sc.reshape(-1), m.reshape(-1)


def _pack_k4(sc: np.ndarray, m: np.ndarray) -> bytes:
    import numpy as np
    s = sc.reshape(-1, 8).astype(np.uint32) & 63
    mm = m.reshape(-1, 8).astype(np.uint32) & 63
    q = np.empty((s.shape[0], 12), dtype=np.uint32)
    q[:, 0:4] = s[:, :4] | ((s[:, 4:] >> 4) << 6)
    q[:, 4:8] = mm[:, :4] | ((mm[:, 4:] >> 4) << 6)
    q[:, 8:12] = (s[:, 4:] & 0xF) | ((mm[:, 4:] & 0xF) << 4)
    return q.astype(np.uint8).tobytes()


def _split_stored(payload: U8s, sizes: list[int], aos: bool, n_blocks: int) -> list[U8s]:
    """The stored bytes of each plane: consecutive, or de-interleaved from
    BLOCK_AOS blocks (each block holds every plane's share, BLOCK_AOS_ORDER)."""
    import numpy as np
    if not aos:
        parts: list[U8s] = []
        off = 0
        for n in sizes:
            parts.append(payload[off : off + n])
            off += n
        return parts
    per = []
    for i in range(4):
        if sizes[i] % n_blocks:
            raise _refuse(f"BLOCK_AOS: the {PLANE_NAMES[i]} plane ({sizes[i]} bytes) does "
                          f"not split into {n_blocks} whole-byte blocks", i)
        per.append(sizes[i] // n_blocks)
    block = sum(per)
    grid = payload[: block * n_blocks].reshape(n_blocks, block) if n_blocks else payload[:0]
    out: list[U8s] = [np.zeros(0, np.uint8)] * 4
    col = 0
    for i in BLOCK_AOS_ORDER:
        out[i] = np.ascontiguousarray(grid[:, col : col + per[i]]).reshape(-1)
        col += per[i]
    return out


def _join_stored(stored: list[bytes], sizes: list[int], aos: bool, n_blocks: int) -> bytes:
    import numpy as np
    if not aos:
        return b"".join(stored)
    cols = []
    for i in BLOCK_AOS_ORDER:
        if sizes[i]:
            cols.append(np.frombuffer(stored[i], dtype=np.uint8).reshape(n_blocks, -1))
    if not cols:
        return b""
    return np.concatenate(cols, axis=1).tobytes()


def to_canonical(
    d: Descriptor, shape: Sequence[int], payload: bytes | bytearray | memoryview,
    layouts: Mapping[int, str] | None = None,
) -> list[bytes]:
    """relayout(p -> ROW_MAJOR): the stored payload (in ``d``'s placements)
    as the four canonical planes."""
    import numpy as np
    g = geometry(d, shape)
    out: list[bytes] = []
    for spec, p in zip(g.planes, to_canonical_codes(d, shape, payload, layouts)):
        out.append(unit_bytes(spec, p) if isinstance(p, np.ndarray) else bytes(p))
    return out


def to_canonical_codes(
    d: Descriptor, shape: Sequence[int], payload: bytes | bytearray | memoryview,
    layouts: Mapping[int, str] | None = None,
) -> list[np.ndarray | memoryview]:
    """Like to_canonical, but a plane that had to be permuted comes back as
    its flat array of codes in canonical order (saving decode a pack and an
    unpack); an unpermuted plane comes back as a view of its bytes."""
    import numpy as np
    g = geometry(d, shape)
    pls = plane_layouts(d, g, layouts)
    sizes, aos = stored_sizes(d, shape, layouts)
    raw = np.frombuffer(payload, dtype=np.uint8)
    if raw.size != sum(sizes):
        raise GritSizeError(Detail(
            message=f"payload is {raw.size} bytes; in these placements the planes occupy "
                    f"{sum(sizes)} ({' + '.join(map(str, sizes))})", step=4,
            expected=sum(sizes), actual=raw.size, clause="size.payload"))
    stored = _split_stored(raw, sizes, aos, g.n_blocks)
    out: list[np.ndarray | memoryview] = [memoryview(b"")] * 4
    k4 = pls[1] is not None and pls[1].attrs.packk4
    units: dict[int, np.ndarray] = {}
    if k4:
        sc, m = _unpack_k4(stored[1], g.planes[Plane.SCALE0].units)
        units[1] = sc[:, None]
        units[3] = m[:, None]
    for i, (spec, pl) in enumerate(zip(g.planes, pls)):
        if pl is None:
            continue
        if pl.perm.identity and i not in units:
            out[i] = stored[i].data[: spec.canonical_bytes]  # Pad: drop the tail
            continue
        phys = units.get(i)
        pairs = _nibble_pairs(spec, pl.perm) if phys is None else None
        if pairs is not None:
            # fast path for (j, j + L/2) nibble pairing: low nibbles of a run of
            # L/2 bytes are elements 0..L/2-1, high nibbles the rest
            b = np.asarray(stored[i]).reshape(-1, pairs.pi.size // 2)
            out[i] = np.concatenate([b & 0x0F, b >> 4], axis=1).reshape(-1)
            continue
        if phys is None:
            phys = unit_codes(spec, stored[i])
        out[i] = np.ascontiguousarray(pl.perm.backward(phys)).reshape(-1)
    return out


def _nibble_pairs(spec: PlaneSpec, perm: _Perm) -> _Chunked | None:
    if isinstance(perm, _Compose):
        if perm.then.identity:
            perm = perm.first
        elif perm.first.identity:
            perm = perm.then
    if (isinstance(perm, _Chunked) and perm.nibble_pairs and spec.width == 4
            and spec.cw == 4 and not spec.msb and spec.per_unit == 1):
        return perm
    return None


def from_canonical(
    d: Descriptor, shape: Sequence[int], planes: Sequence[PlaneBuf],
    layouts: Mapping[int, str] | None = None,
) -> bytes:
    """relayout(ROW_MAJOR -> p): canonical planes to the payload in ``d``'s placements."""
    g = geometry(d, shape)
    pls = plane_layouts(d, g, layouts)
    sizes, aos = stored_sizes(d, shape, layouts)
    stored: list[bytes] = [b"", b"", b"", b""]
    phys_units: dict[int, np.ndarray] = {}
    for i, (spec, pl) in enumerate(zip(g.planes, pls)):
        if pl is None:
            continue
        if len(planes[i]) != spec.canonical_bytes:
            raise GritValueError(f"{PLANE_NAMES[i]} plane is {len(planes[i])} bytes; "
                                 f"canonical size is {spec.canonical_bytes}")
        k4 = pl.attrs.packk4 and i in (Plane.SCALE0, Plane.AUX)  # PackK4 joins scale0 and aux only
        if pl.perm.identity and not k4:
            phys = None
        else:
            phys = pl.perm.forward(unit_codes(spec, planes[i]))
        if k4:
            phys_units[i] = phys if phys is not None else unit_codes(spec, planes[i])
            continue
        b = bytes(planes[i]) if phys is None else unit_bytes(spec, phys)
        if pl.attrs.pad:
            b = b + bytes(sizes[i] - len(b))
        stored[i] = b
    if phys_units:
        stored[1] = _pack_k4(phys_units[1].reshape(-1), phys_units[3].reshape(-1))
        stored[3] = b""
    return _join_stored(stored, sizes, aos, g.n_blocks)


def relayout(
    d: Descriptor, shape: Sequence[int], payload: bytes | bytearray | memoryview,
    target: Descriptor, layouts: Mapping[int, str] | None = None,
) -> bytes:
    """relayout(target <- d): through ROW_MAJOR, so L2 (composition) holds by
    construction.  ``target`` differs from ``d`` only in its placements."""
    if d.with_placements(target.placement_data, target.placement_scale,
                         target.placement_meta).with_note(0) != target.with_note(0):
        raise GritValueError("relayout changes placements only; the frames differ otherwise")
    return from_canonical(target, shape, to_canonical(d, shape, payload, layouts), layouts)
