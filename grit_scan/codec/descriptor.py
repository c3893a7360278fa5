"""grit_desc — the 64-byte descriptor (§3).

Bytes [0,28) and [32,64) are the frame; [28,32) is the note (§3.1, §11.1).
``Descriptor`` is a plain record of the fields: it can hold any 64 bytes,
including hostile ones, and says nothing about validity (that is
``check.grit_check``).
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, replace

from .errors import GritValueError
from .fnv import fnv1a64
from .grade import FRAME_FIELDS, Grade
from .placement import LINEAR_META, ROW_MAJOR, UNSPECIFIED
from .tables import (
    F_HAS_ZP,
    F_SPARSE,
    GRIT_HDR_BYTES,
    GRIT_MAGIC,
    GRIT_VERSION,
    NOTE_ASSUMED,
    NOTE_PRODUCER_MASK,
    NOTE_PRODUCER_SHIFT,
)

# §3.1: magic u32, hdr_bytes u8, version u8, n_levels u8, flags u8,
# elem/scale0/scale1/zp_fmt u16, group_axis i16, k0 u16, k1 u16,
# sp_n sp_m sp_meta_fmt sp_order container frame_rsvd u8, note u32,
# placement_data/scale/meta u64, grade_id u64.  Little-endian, no padding.
_LAYOUT = struct.Struct("<IBBBBHHHHhHHBBBBBBIQQQQ")
assert _LAYOUT.size == GRIT_HDR_BYTES
SIZE = GRIT_HDR_BYTES

FIELDS = (
    "magic", "hdr_bytes", "version", "n_levels", "flags",
    "elem", "scale0", "scale1", "zp_fmt",
    "group_axis", "k0", "k1",
    "sp_n", "sp_m", "sp_meta_fmt", "sp_order", "container", "frame_rsvd",
    "note",
    "placement_data", "placement_scale", "placement_meta",
    "grade_id",
)
PLACEMENT_FIELDS = ("placement_data", "placement_scale", "placement_meta")


@dataclass(frozen=True)
class Descriptor:
    """The 64-byte GRIT descriptor (§5), one field per attribute."""

    magic: int
    hdr_bytes: int
    version: int
    n_levels: int
    flags: int
    elem: int
    scale0: int
    scale1: int
    zp_fmt: int
    group_axis: int
    k0: int
    k1: int
    sp_n: int
    sp_m: int
    sp_meta_fmt: int
    sp_order: int
    container: int
    frame_rsvd: int
    note: int
    placement_data: int
    placement_scale: int
    placement_meta: int
    grade_id: int

    def __hash__(self) -> int:
        # computed once per object: descriptors key the codec's memo caches,
        # and the generated hash rebuilt a 23-field tuple on every lookup
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            h = hash(tuple(getattr(self, f) for f in FIELDS))
            object.__setattr__(self, "_hash", h)
        return h

    # ---- bytes ------------------------------------------------------------
    def pack(self) -> bytes:
        return _pack(self)

    def hex(self) -> str:
        return self.pack().hex()

    @property
    def frame_bytes(self) -> bytes:
        """desc[0..28) ‖ desc[32..64): what gid hashes (§6.3)."""
        b = self.pack()
        return b[:28] + b[32:]

    # ---- the note (RECONSTRUCTION §6) --------------------------------------
    @property
    def assumed(self) -> bool:
        return bool(self.note & NOTE_ASSUMED)

    @property
    def producer_tag(self) -> int:
        return (self.note >> NOTE_PRODUCER_SHIFT) & NOTE_PRODUCER_MASK

    def with_note(self, note: int) -> Descriptor:
        return replace(self, note=note & 0xFFFFFFFF)

    def with_placements(
        self, data: int | None = None, scale: int | None = None, meta: int | None = None
    ) -> Descriptor:
        return replace(
            self,
            placement_data=self.placement_data if data is None else data,
            placement_scale=self.placement_scale if scale is None else scale,
            placement_meta=self.placement_meta if meta is None else meta,
        )

    @property
    def has_aux(self) -> bool:
        """The plane inventory has an aux plane (RECONSTRUCTION §5)."""
        return bool(self.flags & (F_HAS_ZP | F_SPARSE))


def unpack(data: bytes | bytearray | memoryview) -> Descriptor:
    """Read the first 64 bytes as a descriptor; never reads past them (§3.2)."""
    b = bytes(data[:SIZE])
    if len(b) != SIZE:
        raise GritValueError(f"a descriptor is {SIZE} bytes; got {len(b)}")
    return Descriptor(*_LAYOUT.unpack(b))


@functools.lru_cache(maxsize=4096)
def from_hex(text: str) -> Descriptor:
    """Memoised (descriptors are immutable): a manifest or a GRIT-native GGUF
    repeats a few descriptors for every tensor."""
    t = "".join(text.split()).lower()
    if t.startswith("0x"):
        t = t[2:]
    if len(t) != 2 * SIZE:
        raise GritValueError(f"a descriptor is {2 * SIZE} hex digits; got {len(t)}")
    try:
        raw = bytes.fromhex(t)
    except ValueError:
        raise GritValueError("descriptor hex contains a non-hex character") from None
    return unpack(raw)


def span(buf: bytes | bytearray | memoryview, offset: int = 0) -> int:
    """§3.2 skip rule: how many bytes the descriptor at ``offset`` occupies.

    A future version may grow the descriptor; a reader skips ``hdr_bytes``
    bytes and never reads past them.  A hdr_bytes below 64 cannot be skipped
    safely and is an error.
    """
    if offset < 0 or offset + 5 > len(buf):
        raise GritValueError("buffer too short for a descriptor header")
    hdr = buf[offset + 4]
    if hdr < SIZE:
        raise GritValueError(f"hdr_bytes {hdr} is smaller than the v1 descriptor ({SIZE})")
    if offset + hdr > len(buf):
        raise GritValueError(f"descriptor claims {hdr} bytes but only {len(buf) - offset} remain")
    return int(hdr)


def iter_descriptors(buf: bytes | bytearray | memoryview) -> list[Descriptor]:
    """Read a back-to-back sequence of descriptors, skipping longer ones' tails."""
    out, off = [], 0
    while off < len(buf):
        n = span(buf, off)
        out.append(unpack(buf[off : off + SIZE]))
        off += n
    return out


def producer_tag(producer: str) -> int:
    """RECONSTRUCTION §6: FNV1a64(producer name) & 0xFFFF; 0 = unknown."""
    return fnv1a64(producer.encode("utf-8")) & NOTE_PRODUCER_MASK if producer else 0


def make_note(assumed: bool = False, producer: str | None = None) -> int:
    return (NOTE_ASSUMED if assumed else 0) | (
        producer_tag(producer or "") << NOTE_PRODUCER_SHIFT
    )


@functools.lru_cache(maxsize=4096)
def from_grade(
    grade: Grade,
    group_axis: int = 0,
    placement_data: int = ROW_MAJOR,
    placement_scale: int = ROW_MAJOR,
    placement_meta: int | None = None,
    note: int = 0,
) -> Descriptor:
    """Build the descriptor of ``grade`` (§3, §10).

    Memoised, so the tensors of one convention share one (immutable)
    Descriptor object: every cache keyed on descriptors then hits by
    identity instead of comparing 23 fields (docs/performance.md).

    placement_meta defaults to what the reference descriptors of A.4 carry:
    UNSPECIFIED without an aux plane, LINEAR_META for sparsity metadata,
    ROW_MAJOR for zero points.
    """
    fr = grade.frame
    if placement_meta is None:
        if fr.flags & F_SPARSE:
            placement_meta = LINEAR_META
        elif fr.flags & F_HAS_ZP:
            placement_meta = ROW_MAJOR
        else:
            placement_meta = UNSPECIFIED
    if not -(1 << 15) <= group_axis < 1 << 15:
        raise GritValueError("group_axis is an int16")
    return Descriptor(
        magic=GRIT_MAGIC,
        hdr_bytes=GRIT_HDR_BYTES,
        version=GRIT_VERSION,
        **{f: getattr(fr, f) for f in FRAME_FIELDS},  # the fields §7.3 step 2 ties to the grade
        group_axis=group_axis,
        frame_rsvd=0,
        note=note,
        placement_data=placement_data,
        placement_scale=placement_scale,
        placement_meta=placement_meta,
        grade_id=grade.grade_id,
    )


@functools.lru_cache(maxsize=4096)
def _pack(d: Descriptor) -> bytes:
    """The 64 bytes of a descriptor (§3.1).  Memoised: a scan packs the same
    few descriptors for every tensor's JSON entry and gid (docs/performance.md)."""
    try:
        return _LAYOUT.pack(*(getattr(d, f) for f in FIELDS))
    except struct.error as exc:
        raise GritValueError(f"descriptor field out of range: {exc}") from None
