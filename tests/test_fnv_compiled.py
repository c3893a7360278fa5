"""The compiled helper agrees with the pure-Python reference (§6.1)."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grit_scan.codec import fnv

try:
    from grit_scan.codec import _fnv
except ImportError:  # pragma: no cover - built without a compiler
    _fnv = None

needs_c = pytest.mark.skipif(_fnv is None and not os.environ.get("GRIT_REQUIRE_COMPILED"),
                             reason="the optional C helper was not built")


def test_compiled_helper_is_built_when_required():
    if os.environ.get("GRIT_REQUIRE_COMPILED"):
        assert _fnv is not None and fnv.compiled_backend()


@needs_c
@pytest.mark.parametrize("n", [0, 1, 7, 63, 64, 65, 255, 1000, 4097])
def test_identical_digests_on_random_buffers(n):
    data = os.urandom(n)
    for start in (fnv.FNV128_OFFSET, 0, (1 << 128) - 1, 0x1234):
        want = fnv.fnv1a128_py(data, start).to_bytes(16, "big")
        assert _fnv.fnv1a128_update(start.to_bytes(16, "big"), data) == want
    for start in (fnv.FNV64_OFFSET, 0, (1 << 64) - 1):
        assert _fnv.fnv1a64_update(start, data) == fnv.fnv1a64_py(data, start)


@needs_c
@given(st.binary(max_size=300))
def test_streaming_equal_through_both_paths(data):
    h = fnv.Fnv128()
    h.update(data)
    assert h.digest() == fnv.fnv1a128_py(data).to_bytes(16, "big")


@needs_c
def test_memoryview_and_bytearray_buffers():
    import numpy as np

    arr = np.arange(1000, dtype=np.uint8)
    want = fnv.fnv1a128_py(arr.tobytes()).to_bytes(16, "big")
    assert fnv.fnv1a128(memoryview(arr)) == want
    assert fnv.fnv1a128(bytearray(arr.tobytes())) == want


@needs_c
def test_skip_strings_stops_at_hostile_lengths():
    import struct

    buf = struct.pack("<Q", 3) + b"abc" + struct.pack("<Q", 2) + b"de" + struct.pack(
        "<Q", 1 << 62)
    assert _fnv.skip_strings(buf, 0, 10, 1 << 30) == (21, 2)
    assert _fnv.skip_strings(buf, 0, 1, 1 << 30) == (11, 1)
