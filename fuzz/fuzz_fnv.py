"""A fuzz pass against the compiled FNV-1a helper (grit_scan/codec/_fnv.c).

    python fuzz/fuzz_fnv.py [CASES] [SEED]

Random buffers (bytes, bytearray, and memoryviews starting at odd
addresses), random states and random range arguments, a third of them out
of range (negative, past the end, near 2**63 and 2**64): every call must
either return exactly what an independent FNV-1a (tests/ref_ids.py) gives
for data[pos:pos+n], or raise ValueError/OverflowError; anything else, or a
crash, fails.  .ci/sanitize.sh runs it against a build under ASan/UBSan.
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from ref_ids import fnv1a  # noqa: E402

from grit_scan.codec import fnv  # noqa: E402

EDGES = [0, 1, 7, 8, 15, 16, 63, 64, (1 << 31) - 1, 1 << 31, (1 << 62), (1 << 63) - 1,
         1 << 63, (1 << 64) - 1, 1 << 64, 1 << 70, -1, -(1 << 63), -(1 << 64)]


def _buffer(rng: random.Random) -> bytes | bytearray | memoryview:
    raw = rng.randbytes(rng.choice([0, 1, 5, 17, 64, 65, 200, 1000]))
    kind = rng.randrange(3)
    if kind == 0:
        return raw
    if kind == 1:
        return bytearray(raw)
    skew = rng.randrange(1, 8)  # a view that starts off any alignment
    return memoryview(bytes(skew) + raw)[skew:]


def _arg(rng: random.Random, size: int) -> int:
    return rng.choice(EDGES) if rng.random() < 0.3 else rng.randrange(0, size + 2)


def _one(c: Any, rng: random.Random) -> int:
    """One case, three calls; the number of calls refused."""
    refused = 0
    a, b = _buffer(rng), _buffer(rng)
    pa, pb = _arg(rng, len(a)), _arg(rng, len(b))
    n = _arg(rng, min(len(a), len(b)))
    s128 = rng.choice([bytes(16), rng.randbytes(16), rng.randbytes(rng.randrange(40))])
    s64 = rng.choice([0, (1 << 64) - 1, rng.getrandbits(64), -1, 1 << 64])
    ok_a = 0 <= pa and 0 <= n and pa + n <= len(a)
    ok_b = 0 <= pb and 0 <= n and pb + n <= len(b)
    calls = [
        (lambda: c.fnv1a128_update(s128, a, pa, n), len(s128) == 16 and ok_a,
         lambda: fnv1a(bytes(a)[pa:pa + n], 128, int.from_bytes(s128, "big")).to_bytes(
             16, "big")),
        (lambda: c.fnv1a64_update(s64, a, pa, n), 0 <= s64 < 1 << 64 and ok_a,
         lambda: fnv1a(bytes(a)[pa:pa + n], 64, s64)),
        (lambda: c.fnv1a128_update2(s128, a, pa, s128, b, pb, n),
         len(s128) == 16 and ok_a and ok_b,
         lambda: tuple(fnv1a(bytes(x)[p:p + n], 128, int.from_bytes(s128, "big")).to_bytes(
             16, "big") for x, p in ((a, pa), (b, pb)))),
    ]
    for call, valid, want in calls:
        try:
            got = call()
        except (ValueError, OverflowError):
            if valid:
                raise AssertionError(f"refused a valid call: pos {pa}/{pb} n {n}") from None
            refused += 1
            continue
        if not valid:
            raise AssertionError(f"accepted an invalid call: pos {pa}/{pb} n {n}")
        assert got == want(), (pa, pb, n)
    return refused


def main() -> int:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    c = fnv._compiled
    if c is None:
        print("fuzz_fnv: the compiled helper is not built", file=sys.stderr)
        return 2
    refused = sum(_one(c, rng) for _ in range(cases))
    print(f"fuzz_fnv: {cases} cases x 3 functions, {refused} calls refused, 0 failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
