"""Crockford base32 for 128-bit gids (§6.4)."""

from __future__ import annotations

import functools

from .errors import GritValueError

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DECODE: dict[str, int] = {c: i for i, c in enumerate(ALPHABET)}
# §6.4: on parse, I and L read as 1 and O as 0, case-insensitively; U is rejected.
_DECODE.update({"I": 1, "L": 1, "O": 0})
SYMBOLS = 26  # 128 bits zero-extended on the left to 130 bits


@functools.lru_cache(maxsize=65536)
def encode(value: bytes | int) -> str:
    """Render a 128-bit value as 26 uppercase symbols, most significant first."""
    n = int.from_bytes(value, "big") if isinstance(value, (bytes, bytearray)) else value
    if not 0 <= n < 1 << 128:
        raise GritValueError("a gid is a 128-bit value")
    out = []
    for _ in range(SYMBOLS):
        out.append(ALPHABET[n & 31])
        n >>= 5
    return "".join(reversed(out))


# Crockford symbols (and the I/L/O aliases) to the digits int(..., 32) reads:
# a well-formed gid is then parsed in C (a manifest holds one per tensor)
_INT32_DIGITS = "0123456789abcdefghijklmnopqrstuv"
_TO_INT32 = str.maketrans({c: _INT32_DIGITS[v] for c, v in _DECODE.items()})
_ALLOWED = frozenset(_DECODE)


def decode(text: str) -> bytes:
    """Parse a printable gid back to 16 bytes (big-endian)."""
    s = text.strip().upper()
    if len(s) == SYMBOLS and _ALLOWED.issuperset(s):
        n = int(s.translate(_TO_INT32), 32)
        if not n >> 128:
            return n.to_bytes(16, "big")
    return _decode_checked(s)


def _decode_checked(s: str) -> bytes:
    """Symbol by symbol, to say exactly what is wrong with a gid."""
    if len(s) != SYMBOLS:
        raise GritValueError(
            f"a base32 gid has exactly {SYMBOLS} symbols; got {len(s)}"
            + (" (a prefix is not an identity, §6.4)" if 0 < len(s) < SYMBOLS else "")
        )
    n = 0
    for pos, ch in enumerate(s):
        if ch == "U":
            raise GritValueError(f"'U' at position {pos} is not a Crockford base32 symbol")
        v = _DECODE.get(ch)
        if v is None:
            raise GritValueError(f"{ch!r} at position {pos} is not a Crockford base32 symbol")
        n = (n << 5) | v
    if n >> 128:
        raise GritValueError("the first symbol of a base32 gid must be 0-7 (128-bit value)")
    return n.to_bytes(16, "big")
