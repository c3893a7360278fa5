"""Types of the compiled FNV-1a helper (grit_scan/codec/_fnv.c).

Every function hashes ``data[pos : pos + n]``; a negative, oversized or
out-of-range ``pos``/``n``, a 128-bit state that is not 16 bytes, or a
64-bit state outside [0, 2**64) raises ValueError or OverflowError."""

_Buf = bytes | bytearray | memoryview

def fnv1a128_update(state: bytes, data: _Buf, pos: int, n: int, /) -> bytes: ...
def fnv1a128_update2(state_a: bytes, data_a: _Buf, pos_a: int, state_b: bytes,
                     data_b: _Buf, pos_b: int, n: int, /) -> tuple[bytes, bytes]: ...
def fnv1a64_update(state: int, data: _Buf, pos: int, n: int, /) -> int: ...
