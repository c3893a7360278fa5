"""FNV-1a (§6.1): the pure-Python functions against the published FNV test
vectors and an independent implementation (ref_ids, written from the FNV
specification); the compiled helper against the same independent FNV-1a,
including its range arguments and their bounds."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ref_ids import FNV64_OFFSET, FNV64_PRIME, FNV128_OFFSET, FNV128_PRIME, fnv1a

from grit_scan.codec import fnv

try:
    from grit_scan.codec import _fnv
except ImportError:  # pragma: no cover - built without a compiler
    _fnv = None

# draft-eastlake-fnv test vectors (FNV-1a 64) and the §6.1 self-checks
FNV1A64_VECTORS = {b"": 0xCBF29CE484222325, b"a": 0xAF63DC4C8601EC8C,
                   b"foobar": 0x85944171F73967E8}
FNV1A128_VECTORS = {b"": 0x6C62272E07BB014262B821756295C58D,
                    b"a": 0xD228CB696F1A8CAF78912B704E4A8964}


def test_published_constants():
    assert (fnv.FNV64_OFFSET, fnv.FNV64_PRIME) == (FNV64_OFFSET, FNV64_PRIME)
    assert (fnv.FNV128_OFFSET, fnv.FNV128_PRIME) == (FNV128_OFFSET, FNV128_PRIME)
    assert FNV64_PRIME == 0x100000001B3 and FNV128_PRIME == 0x1000000000000000000013B


@pytest.mark.parametrize("data,want", FNV1A64_VECTORS.items())
def test_fnv1a64_published_vectors(data, want):
    assert fnv1a(data, 64) == want  # the test's own implementation
    assert fnv.fnv1a64_py(data) == want
    assert fnv.fnv1a64(data) == want


@pytest.mark.parametrize("data,want", FNV1A128_VECTORS.items())
def test_fnv1a128_published_vectors(data, want):
    assert fnv1a(data, 128) == want
    assert fnv.fnv1a128_py(data) == want
    assert fnv.fnv1a128(data) == want.to_bytes(16, "big")  # §6.1: big-endian
    h = fnv.Fnv128()
    h.update(data)
    assert h.hexdigest() == f"{want:032x}"


@given(st.binary(max_size=200), st.integers(0, 5))
def test_pure_python_against_independent_fnv(data, cut):
    cut = min(cut, len(data))
    assert fnv.fnv1a64_py(data) == fnv1a(data, 64)
    assert fnv.fnv1a64_py(data[cut:], fnv1a(data[:cut], 64)) == fnv1a(data, 64)
    assert fnv.fnv1a128_py(data) == fnv1a(data, 128)
    h = fnv.Fnv128()
    h.update(data[:cut])
    h.update(data[cut:])
    assert h.digest() == fnv1a(data, 128).to_bytes(16, "big")


def test_compiled_helper_is_built_when_required():
    if _fnv is None and not os.environ.get("GRIT_REQUIRE_COMPILED"):
        pytest.skip("the optional C helper was not built and GRIT_REQUIRE_COMPILED is unset")
    assert _fnv is not None and fnv.compiled_backend()


needs_c = pytest.mark.skipif(_fnv is None and not os.environ.get("GRIT_REQUIRE_COMPILED"),
                             reason="the optional C helper was not built")


@needs_c
@pytest.mark.parametrize("n", [0, 1, 7, 63, 64, 65, 255, 1000, 4097])
def test_identical_digests_on_random_buffers(n):
    data = os.urandom(n)
    for start in (fnv.FNV128_OFFSET, 0, (1 << 128) - 1, 0x1234):
        want = fnv1a(data, 128, start).to_bytes(16, "big")
        assert _fnv.fnv1a128_update(start.to_bytes(16, "big"), data, 0, n) == want
    for start in (fnv.FNV64_OFFSET, 0, (1 << 64) - 1):
        assert _fnv.fnv1a64_update(start, data, 0, n) == fnv1a(data, 64, start)


@needs_c
@given(st.binary(max_size=300), st.binary(max_size=300), st.data())
def test_compiled_ranges_against_independent_fnv(a, b, data):
    """Each function hashes exactly data[pos:pos+n], from any state."""
    pa = data.draw(st.integers(0, len(a)))
    pb = data.draw(st.integers(0, len(b)))
    n = data.draw(st.integers(0, min(len(a) - pa, len(b) - pb)))
    sa = data.draw(st.integers(0, (1 << 128) - 1))
    sb = data.draw(st.integers(0, (1 << 128) - 1))
    s64 = data.draw(st.integers(0, (1 << 64) - 1))
    want_a = fnv1a(a[pa : pa + n], 128, sa).to_bytes(16, "big")
    want_b = fnv1a(b[pb : pb + n], 128, sb).to_bytes(16, "big")
    assert _fnv.fnv1a128_update(sa.to_bytes(16, "big"), a, pa, n) == want_a
    assert _fnv.fnv1a128_update2(sa.to_bytes(16, "big"), a, pa, sb.to_bytes(16, "big"), b, pb,
                                 n) == (want_a, want_b)
    assert _fnv.fnv1a64_update(s64, a, pa, n) == fnv1a(a[pa : pa + n], 64, s64)


# positions and lengths a caller could pass by mistake (or a file could
# smuggle in): negative, past the end, wrapping size_t, beyond ssize_t
HUGE = [(-1, 1), (0, -1), (9, 0), (0, 9), (8, 1), (1, (1 << 63) - 1), ((1 << 63) - 1, 1),
        ((1 << 63) - 8, 16), ((1 << 64) - 1, 1), (1 << 64, 0), (0, 1 << 64), (2, 1 << 70)]


@needs_c
@pytest.mark.parametrize("pos,n", HUGE)
def test_compiled_refuses_out_of_range_arguments(pos, n):
    """An 8-byte buffer: every range outside it raises, none is read."""
    buf, s128 = bytes(range(8)), bytes(16)
    with pytest.raises((ValueError, OverflowError)):
        _fnv.fnv1a128_update(s128, buf, pos, n)
    with pytest.raises((ValueError, OverflowError)):
        _fnv.fnv1a64_update(0, buf, pos, n)
    with pytest.raises((ValueError, OverflowError)):
        _fnv.fnv1a128_update2(s128, buf, pos, s128, buf, 0, n)
    with pytest.raises((ValueError, OverflowError)):
        _fnv.fnv1a128_update2(s128, buf, 0, s128, buf, pos, n)


@needs_c
@pytest.mark.parametrize("state", [-1, 1 << 64, 1 << 200])
def test_compiled_refuses_a_64_bit_state_out_of_range(state):
    with pytest.raises(OverflowError):
        _fnv.fnv1a64_update(state, b"abc", 0, 3)


@needs_c
@pytest.mark.parametrize("size", [0, 15, 17, 64])
def test_compiled_refuses_a_128_bit_state_of_the_wrong_size(size):
    with pytest.raises(ValueError, match="16 bytes"):
        _fnv.fnv1a128_update(bytes(size), b"abc", 0, 3)
    with pytest.raises(ValueError, match="16 bytes"):
        _fnv.fnv1a128_update2(bytes(16), b"abc", 0, bytes(size), b"abc", 0, 3)


@needs_c
@given(st.binary(max_size=300))
def test_streaming_equal_through_both_paths(data):
    h = fnv.Fnv128()
    h.update(data)
    assert h.digest() == fnv1a(data, 128).to_bytes(16, "big")


@needs_c
def test_memoryview_and_bytearray_buffers():
    import numpy as np

    arr = np.arange(1000, dtype=np.uint8)
    want = fnv1a(arr.tobytes(), 128).to_bytes(16, "big")
    assert fnv.fnv1a128(memoryview(arr)) == want
    assert fnv.fnv1a128(bytearray(arr.tobytes())) == want


@needs_c
def test_compiled_helper_holds_the_digest_loops_only():
    """The helper is the three FNV loops (codec/_fnv.pyi types them)."""
    assert sorted(n for n in vars(_fnv) if not n.startswith("__")) == [
        "fnv1a128_update", "fnv1a128_update2", "fnv1a64_update"]


def test_the_slow_path_is_never_silent(monkeypatch, capsys):
    """Without the compiled helper every scan says so on stderr, in every
    output format, and --version names the fallback (issue 15)."""
    from pathlib import Path

    from grit_scan.cli import main
    from grit_scan.codec import fnv

    sample = str(Path(__file__).resolve().parent.parent / "fixtures" / "sample")
    monkeypatch.setattr(fnv, "_compiled", None)
    for fmt in ("concise", "json", "sarif"):
        main(["scan", "--output-format", fmt, sample])
        err = capsys.readouterr().err
        assert err.count("grit: warning: running the pure-Python fallback") == 1, (fmt, err)
    main(["--version"])
    assert "compiled helpers: not built" in capsys.readouterr().out
    monkeypatch.undo()
    if fnv.compiled_backend():
        main(["scan", "--json", sample])
        assert "pure-Python fallback" not in capsys.readouterr().err
