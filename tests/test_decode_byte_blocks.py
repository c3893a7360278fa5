"""decode() reads one-level BLOCK_AOS payloads of whole-byte codes (ggml
Q8_0 and its kin) in place, without a relayout (issue 15).  That path must
give the general path's values bit for bit, canonical NaN included (§1.2),
and refuse what the general path refuses."""

import numpy as np
import pytest

from grit_scan.codec import decode as decode_mod
from grit_scan.codec import placement as P
from grit_scan.codec.decode import decode
from grit_scan.codec.descriptor import from_grade
from grit_scan.codec.errors import GritError
from grit_scan.codec.grade import parse_grade, registry
from grit_scan.codec.layout import _split_stored, geometry, stored_sizes

GRADES = [
    "grit1(e=s8,k0=32,s0=binary16,esr=ratiomaxabs)",  # ggml Q8_0
    "grit1(e=e4m3,k0=32,s0=binary16,esr=ratiomaxabs)",  # a table-decoded element
    "grit1(e=s8,k0=16,s0=bfloat16,esr=ratiomaxabs)",
    "grit1(e=u8,k0=8,s0=e8m0,esr=exp2floormaxabs)",  # one-byte scales
    "grit1(e=e5m2,k0=32,s0=e4m3,esr=ratiomaxabs)",  # Inf elements
]


def setup(text, shape, group_axis, seed):
    g = parse_grade(text)
    d = from_grade(g, group_axis=group_axis, placement_data=P.BLOCK_AOS,
                   placement_scale=P.BLOCK_AOS)
    sizes, aos = stored_sizes(d, list(shape), {})
    assert aos
    rng = np.random.default_rng(seed)
    payload = rng.integers(0, 256, size=sum(sizes), dtype=np.uint8)
    blocks = payload.reshape(geometry(d, list(shape)).n_blocks, -1)
    sw = blocks.shape[1] - d.k0
    blocks[0, :sw] = 0xFF  # a NaN scale in every scale format here
    inf = {"binary16": b"\x00\x7c", "bfloat16": b"\x80\x7f"}.get(g["s0"] or "")
    if inf is not None:  # Inf x 0 is a NaN of another sign bit on x86 (0xFFC00000)
        blocks[1, :sw] = np.frombuffer(inf, np.uint8)
        blocks[1, sw:] = 0
    return g, d, sizes, payload


def general(d, g, shape, sizes, payload):
    """The general path: de-interleave, then decode canonical planes."""
    nb = geometry(d, list(shape)).n_blocks
    planes = [p.tobytes() for p in _split_stored(payload, sizes, True, nb)]
    return decode(d, list(shape), planes=planes, grades=registry([g]))


@pytest.mark.parametrize("text", GRADES)
@pytest.mark.parametrize("shape,group_axis", [((7, 96), 1), ((3, 2, 64), 2), ((64, 5), 0)])
@pytest.mark.parametrize("chunk", [1, 100, 1 << 16])
def test_in_place_equals_the_general_path(text, shape, group_axis, chunk):
    g, d, sizes, payload = setup(text, shape, group_axis, len(text) + shape[0])
    assert decode_mod._byte_blocks(d, g, list(shape), payload.tobytes(), {}) is not None
    got = decode(d, list(shape), payload.tobytes(), grades=registry([g]), chunk=chunk)
    want = general(d, g, shape, sizes, payload)
    assert got.shape == want.shape == shape
    assert (got.view(np.uint32) == want.view(np.uint32)).all()  # NaN bits included
    assert np.isnan(got).any()  # random scale bytes: the NaN fix-up ran
    nan_bits = got.view(np.uint32)[np.isnan(got)]
    assert (nan_bits == 0x7FC00000).all()


def test_output_array_is_filled():
    g, d, sizes, payload = setup(GRADES[0], (4, 64), 1, 0)
    out = np.full((4, 64), 7.0, np.float32)
    got = decode(d, [4, 64], payload.tobytes(), grades=registry([g]), out=out)
    want = general(d, g, (4, 64), sizes, payload)
    assert (out.view(np.uint32) == want.view(np.uint32)).all()
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


@pytest.mark.parametrize("delta", [-1, 1, -34])
def test_a_payload_of_the_wrong_size_is_refused_as_before(delta):
    g, d, sizes, payload = setup(GRADES[0], (4, 64), 1, 0)
    raw = payload.tobytes()
    raw = raw[:delta] if delta < 0 else raw + bytes(delta)
    assert decode_mod._byte_blocks(d, g, [4, 64], raw, {}) is None
    with pytest.raises(GritError, match="payload is"):
        decode(d, [4, 64], raw, grades=registry([g]))


def test_other_placements_take_the_general_path():
    g = parse_grade(GRADES[0])
    for data, scale in ((P.ROW_MAJOR, P.ROW_MAJOR), (P.COL_MAJOR, P.ROW_MAJOR),
                        (P.BLOCK_AOS, P.ROW_MAJOR)):  # the last is refused, by the general path
        d = from_grade(g, group_axis=1, placement_data=data, placement_scale=scale)
        assert decode_mod._byte_blocks(d, g, [4, 64], bytes(4 * 64 + 4 * 2 * 2), {}) is None
