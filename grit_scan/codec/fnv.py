"""FNV-1a, 64- and 128-bit (§6.1).

The pure-Python loops here are the reference.  When the optional compiled
helper ``grit_scan.codec._fnv`` (the digest loops and nothing else) was built
by the package build, the streaming hashers use it for bulk bytes; both are
held to an independent FNV-1a by test (tests/test_fnv_compiled.py), and
``compiled_backend()`` tells callers which path runs.  This is the helper's
only importer (an import-linter contract in pyproject.toml).
"""

from __future__ import annotations

FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
FNV128_OFFSET = 0x6C62272E07BB014262B821756295C58D
FNV128_PRIME = 0x0000000001000000000000000000013B
_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1

try:  # pragma: no cover - depends on the build
    from . import _fnv as _compiled
except ImportError:  # pragma: no cover - depends on the build
    _compiled = None  # type: ignore[assignment]


def compiled_backend() -> bool:
    """True when the C helper is loaded (the fast path)."""
    return _compiled is not None


def fnv1a64_py(data: bytes | bytearray | memoryview, h: int = FNV64_OFFSET) -> int:
    """Reference FNV-1a-64, continuing from state ``h``."""
    for b in bytes(data):
        h = ((h ^ b) * FNV64_PRIME) & _M64
    return h


def fnv1a128_py(data: bytes | bytearray | memoryview, h: int = FNV128_OFFSET) -> int:
    """Reference FNV-1a-128, continuing from state ``h``."""
    for b in bytes(data):
        h = ((h ^ b) * FNV128_PRIME) & _M128
    return h


def _update128(h: int, data: bytes | bytearray | memoryview) -> int:
    if _compiled is not None and len(data) >= 64:
        return int.from_bytes(_compiled.fnv1a128_update(h.to_bytes(16, "big"), data, 0,
                                                        len(data)), "big")
    return fnv1a128_py(data, h)


def _update64(h: int, data: bytes | bytearray | memoryview) -> int:
    if _compiled is not None and len(data) >= 64:
        return _compiled.fnv1a64_update(h, data, 0, len(data))
    return fnv1a64_py(data, h)


def fnv1a64(data: bytes | bytearray | memoryview) -> int:
    """FNV-1a-64 of ``data`` as an integer."""
    return _update64(FNV64_OFFSET, data)


def fnv1a128(data: bytes | bytearray | memoryview) -> bytes:
    """FNV-1a-128 of ``data``, serialised big-endian (16 bytes, §6.1)."""
    return _update128(FNV128_OFFSET, data).to_bytes(16, "big")


class Fnv128:
    """Streaming FNV-1a-128: feed bytes in chunks, read the digest at the end."""

    __slots__ = ("_h",)

    def __init__(self) -> None:
        self._h = FNV128_OFFSET

    def update(self, data: bytes | bytearray | memoryview) -> None:
        self._h = _update128(self._h, data)

    def digest(self) -> bytes:
        return self._h.to_bytes(16, "big")

    def hexdigest(self) -> str:
        return self.digest().hex()


def update_pair(x: Fnv128, a: bytes | bytearray | memoryview, pa: int,
                y: Fnv128, b: bytes | bytearray | memoryview, pb: int, n: int) -> None:
    """``x.update(a[pa:pa+n]); y.update(b[pb:pb+n])``, the two streams
    interleaved in one C loop (about twice the bytes per cycle of one
    stream, whose xor-multiply chain is latency-bound).  Both ranges must
    lie inside their buffers (ValueError)."""
    if min(pa, pb, n) < 0 or pa + n > len(a) or pb + n > len(b):
        raise ValueError("update_pair: a range runs past its buffer")
    if _compiled is None or n < 64:
        x.update(memoryview(a)[pa : pa + n])
        y.update(memoryview(b)[pb : pb + n])
        return
    sa, sb = _compiled.fnv1a128_update2(x._h.to_bytes(16, "big"), a, pa,
                                        y._h.to_bytes(16, "big"), b, pb, n)
    x._h, y._h = int.from_bytes(sa, "big"), int.from_bytes(sb, "big")
