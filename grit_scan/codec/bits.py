"""Bit packing of plane values (§3.4, §3.5).

Element planes: CT_DENSE packs codes back to back in a bit stream; CT_PAD8
stores a code of width <= 8 in the low bits of its own byte.  LSB-first
(default): code k occupies stream bits [k*w, (k+1)*w), the stream numbered
from bit 0 of byte 0 upward, so element 2j is the low nibble.  MSB-first
(GRIT_F_MSB_FIRST): the stream is numbered from bit 7 of byte 0 downward and
each code is written most significant bit first, so element 2j is the high
nibble.  A multi-byte code (binary16 scale) is therefore little-endian
LSB-first and big-endian MSB-first (docs/spec-notes.md).

Scale and zero-point planes are always LSB-first and CT_PAD8 for widths
<= 8 (§3.4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import GritValueError

if TYPE_CHECKING:  # imported where used: a scan imports this module, not numpy
    import numpy as np


def container_bits(width: int, pad8: bool) -> int:
    """cw(f, ct) of §7.3."""
    return 8 if pad8 and width <= 8 else width


def code_dtype(width: int) -> type:
    """The narrowest unsigned dtype holding a code of ``width`` bits."""
    import numpy as np

    return np.uint8 if width <= 8 else np.uint16 if width <= 16 else np.uint32


def unpack_codes(
    buf: bytes | bytearray | memoryview | np.ndarray,
    count: int,
    width: int,
    pad8: bool = False,
    msb_first: bool = False,
    start: int = 0,
) -> np.ndarray:
    """Codes ``start .. start+count`` of a packed plane, as uint32."""
    import numpy as np

    raw = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf
    cw = container_bits(width, pad8)
    bit0 = start * cw
    nbits = count * cw
    if -(-(bit0 + nbits) // 8) > raw.size:
        raise GritValueError(
            f"plane holds {raw.size} bytes; {count} codes from index {start} need "
            f"{-(-(bit0 + nbits) // 8)}")
    dt = code_dtype(width)
    if count == 0:
        return np.zeros(0, dtype=dt)
    if cw == 8:
        b = raw[start : start + count]
        return b & np.uint8((1 << width) - 1) if width < 8 else b.copy()
    if bit0 % 8 == 0 and not msb_first and cw in (16, 32):
        b = raw[bit0 // 8 : bit0 // 8 + nbits // 8]
        return b.view("<u2" if cw == 16 else "<u4").astype(dt)
    if bit0 % 8 == 0 and cw == 4:
        b = raw[bit0 // 8 : -(-(bit0 + nbits) // 8)]
        lo, hi = (b & 0x0F, b >> 4) if not msb_first else (b >> 4, b & 0x0F)
        out = np.empty(b.size * 2, dtype=np.uint8)
        out[0::2] = lo
        out[1::2] = hi
        return out[:count]
    # general bit stream
    byte0 = bit0 // 8
    byte1 = -(-(bit0 + nbits) // 8)
    bits = np.unpackbits(raw[byte0:byte1], bitorder="big" if msb_first else "little")
    bits = bits[bit0 - byte0 * 8 : bit0 - byte0 * 8 + nbits].reshape(count, cw)[:, :width]
    if msb_first:
        weights = (1 << np.arange(width - 1, -1, -1, dtype=np.uint64)).astype(np.uint64)
    else:
        weights = (1 << np.arange(width, dtype=np.uint64)).astype(np.uint64)
    return (bits.astype(np.uint64) @ weights).astype(dt)


def pack_codes(codes: np.ndarray, width: int, pad8: bool = False,
               msb_first: bool = False) -> bytes:
    """Inverse of unpack_codes; trailing bits of the last byte are zero."""
    import numpy as np

    cw = container_bits(width, pad8)
    flat = np.asarray(codes).reshape(-1)
    n = flat.size
    if n == 0:
        return b""
    if cw in (4, 8):
        c8 = flat.astype(np.uint8, copy=False) & np.uint8((1 << width) - 1)
        if cw == 8:
            return c8.tobytes()
        if n % 2:
            c8 = np.concatenate([c8, np.zeros(1, dtype=np.uint8)])
        lo, hi = (c8[0::2], c8[1::2]) if not msb_first else (c8[1::2], c8[0::2])
        return (lo | (hi << np.uint8(4))).tobytes()
    c = flat.astype(np.uint64) & np.uint64((1 << width) - 1)
    if not msb_first and cw in (16, 32):
        return c.astype("<u2" if cw == 16 else "<u4").tobytes()
    if msb_first:
        shifts = np.arange(width - 1, -1, -1, dtype=np.uint64)
    else:
        shifts = np.arange(width, dtype=np.uint64)
    bits = ((c[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.uint8)
    if cw > width:  # pad8 containers wider than the code (not reached: cw==8 above)
        bits = np.concatenate([bits, np.zeros((n, cw - width), dtype=np.uint8)], axis=1)
    flat = bits.reshape(-1)
    return np.packbits(flat, bitorder="big" if msb_first else "little").tobytes()
