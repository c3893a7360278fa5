"""§7 grit_check: every clause of every step, the normative order, §14 safety.

Expected statuses and steps come from §7.3's text; plane sizes from §10.
"""

import dataclasses

import pytest
import spec_values as S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ref_ids import desc_fields as ref_desc_fields
from ref_ids import digest as ref_digest
from ref_ids import plane_sizes as ref_plane_sizes

from grit_scan.codec import descriptor as D
from grit_scan.codec import grade as G
from grit_scan.codec import placement as P
from grit_scan.codec.check import (
    expected_plane_sizes,
    grit_check,
    grit_check_or_raise,
    plane_sizes,
)
from grit_scan.codec.errors import (
    GritDigestError,
    GritGradeError,
    GritLayoutError,
    GritSizeError,
    Status,
)
from grit_scan.codec.fingerprint import digest_planes


def a4(name):
    return D.from_hex(S.A4_HEX[name])


def mut(d, **kw):
    return dataclasses.replace(d, **kw)


OK_ARGS = {
    "GRADE_MXFP4": ([1024], S.plane_sizes_s10("GRADE_MXFP4", 1024)),
    "GRADE_NVF4": ([1024], S.plane_sizes_s10("GRADE_NVF4", 1024)),
    "GRADE_Q4KS": ([1024], S.plane_sizes_s10("GRADE_Q4KS", 1024)),
    "GRADE_I8S24": ([1024], S.plane_sizes_s10("GRADE_I8S24", 1024)),
}


def run(d, name="GRADE_MXFP4", shape=None, pb=None, **kw):
    s, p = OK_ARGS[name]
    return grit_check(d, shape or s, pb or p, **kw)


def assert_status(res, status, step, clause=None, plane=None):
    assert res.status == status, res.detail
    assert res.detail is not None and res.detail.step == step, res.detail
    if clause is not None:
        assert res.detail.clause == clause, res.detail
    if plane is not None:
        assert res.detail.plane == plane


# ------------------------------------------------------------------ OK


@pytest.mark.parametrize("name", list(S.A4_HEX))
def test_a4_descriptors_pass_level_1_with_s10_sizes(name):
    for numel in (256, 1024, 4096):
        res = grit_check(a4(name), [numel], S.plane_sizes_s10(name, numel), 1)
        assert res.ok, res.detail
        assert res.sizes.as_list() == S.plane_sizes_s10(name, numel)


def test_b1_and_b2_plane_bytes():
    assert grit_check(a4("GRADE_MXFP4"), [32], S.B1_PLANE_BYTES).ok
    assert grit_check(a4("GRADE_I8S24"), [32], S.B2_PLANE_BYTES).ok


def test_group_axis_on_rank_2():
    d = mut(a4("GRADE_MXFP4"), group_axis=1)
    assert grit_check(d, [3, 64], [96, 6, 0, 0]).ok
    res = grit_check(d, [64, 3], [96, 6, 0, 0])
    assert_status(res, Status.SIZE_MISMATCH, 4, "k0_divides")


# ------------------------------------------------------------------ step 1

STEP1 = [
    ("magic", dict(magic=0x31545248)),
    ("hdr_bytes", dict(hdr_bytes=80)),
    ("version", dict(version=2)),
    ("n_levels", dict(n_levels=0)),
    ("n_levels", dict(n_levels=3)),
    ("flags_reserved", dict(flags=0x40)),
    ("flags_reserved", dict(flags=0x80)),
    ("frame_rsvd", dict(frame_rsvd=1)),
    ("container", dict(container=2)),
    ("one_level", dict(k1=1)),
    ("one_level", dict(scale1=0x356F)),
    ("sparse_and_zp", dict(flags=0x05)),
    ("zp_l1scaled", dict(flags=0x20)),
    ("zp_l1scaled", dict(flags=0x21)),  # HAS_ZP but n_levels = 1
    ("bias_ovr", dict(elem=0x2043 | 0x8000)),
    ("nan_enc", dict(elem=0x2043 | 0x1800)),
    ("nan_enc", dict(scale0=0x4807 | 0x1800)),
    ("nan_enc", dict(zp_fmt=0x43E3 | 0x1800)),
]


@pytest.mark.parametrize("clause,change", STEP1)
def test_step1_each_clause(clause, change):
    assert_status(run(mut(a4("GRADE_MXFP4"), **change)), Status.GRADE_UNKNOWN, 1, clause)


def test_step1_nan_enc_on_scale1_of_two_level():
    d = mut(a4("GRADE_NVF4"), scale1=0x371F | 0x1800)
    assert_status(run(d, "GRADE_NVF4"), Status.GRADE_UNKNOWN, 1, "nan_enc")


@pytest.mark.parametrize("raw", [b"\x00" * 64, b"\xff" * 64])
def test_degenerate_descriptors_14(raw):
    res = grit_check(raw, [32], [16, 1, 0, 0])
    assert_status(res, Status.GRADE_UNKNOWN, 1, "magic")
    with pytest.raises(GritGradeError):
        grit_check_or_raise(raw, [32], [16, 1, 0, 0])


def test_short_descriptor_is_grade_unknown():
    assert grit_check(b"GRT1", [32], [16, 1, 0, 0]).status == Status.GRADE_UNKNOWN


# ------------------------------------------------------------------ step 2


def test_step2_unknown_grade_id():
    res = run(mut(a4("GRADE_MXFP4"), grade_id=0x1234))
    assert_status(res, Status.GRADE_UNKNOWN, 2, "grade_id")


def test_step2_known_only_with_supplied_grades():
    g = G.parse_grade("grit1(e=e2m1,k0=64,s0=e8m0,esr=exp2floormaxabs)")
    d = D.from_grade(g)
    assert grit_check(d, [128], [64, 2, 0, 0]).status == Status.GRADE_UNKNOWN
    assert grit_check(d, [128], [64, 2, 0, 0], grades=G.registry([g])).ok


STEP2 = [
    ("GRADE_MXFP4", "n_levels", dict(n_levels=2)),
    ("GRADE_MXFP4", "flags", dict(flags=0x08)),
    ("GRADE_MXFP4", "elem", dict(elem=0x2887)),
    ("GRADE_MXFP4", "scale0", dict(scale0=0x2887)),
    ("GRADE_NVF4", "scale1", dict(scale1=0x356F)),
    ("GRADE_Q4KS", "zp_fmt", dict(zp_fmt=0x43E3)),
    ("GRADE_MXFP4", "k0", dict(k0=64)),
    ("GRADE_Q4KS", "k1", dict(k1=4)),
    ("GRADE_I8S24", "sp_n", dict(sp_n=1)),
    ("GRADE_I8S24", "sp_m", dict(sp_m=8)),
    ("GRADE_I8S24", "sp_meta_fmt", dict(sp_meta_fmt=2)),
    ("GRADE_I8S24", "sp_order", dict(sp_order=0)),
    ("GRADE_MXFP4", "container", dict(container=1)),
]


@pytest.mark.parametrize("name,field,change", STEP2)
def test_step2_each_frame_field_disagreeing(name, field, change):
    res = run(mut(a4(name), **change), name)
    assert_status(res, Status.GRADE_UNKNOWN, 2, f"frame.{field}")
    assert field in res.detail.message


def test_step2_flags_interleaved_never_matches():
    # RECONSTRUCTION §4: no key sets GRIT_F_INTERLEAVED.
    assert_status(run(mut(a4("GRADE_MXFP4"), flags=0x10)), Status.GRADE_UNKNOWN, 2, "frame.flags")


def test_step2_u4_s4_confusion_named():
    res = run(mut(a4("GRADE_Q4KS"), elem=0x03E3), "GRADE_Q4KS")
    assert "u4 and s4" in (res.detail.cause or "")


# ------------------------------------------------------------------ step 3


@pytest.mark.parametrize("field", ["placement_data", "placement_scale", "placement_meta"])
@pytest.mark.parametrize("word", [0x0000000000000001, 0x3000000000000001, 0x1000000000000099])
def test_step3_bad_class_each_placement(field, word):
    d = mut(a4("GRADE_Q4KS"), **{field: word})
    assert_status(run(d, "GRADE_Q4KS"), Status.PLACEMENT_UNKNOWN, 3, f"{field}.class")


@pytest.mark.parametrize("word", [P.UNSPECIFIED, P.OPAQUE, 0x8123456789ABCDEF, P.TILE_16X16])
def test_step3_legal_placements(word):
    assert run(mut(a4("GRADE_MXFP4"), placement_data=word)).ok


def test_step3_aux_without_meta_and_reverse():
    d = mut(a4("GRADE_Q4KS"), placement_meta=0)
    assert_status(run(d, "GRADE_Q4KS"), Status.PLACEMENT_UNKNOWN, 3, "aux_without_meta")
    d = mut(a4("GRADE_MXFP4"), placement_meta=P.ROW_MAJOR)
    assert_status(run(d), Status.PLACEMENT_UNKNOWN, 3, "meta_without_aux")


# ------------------------------------------------------------------ step 4


@pytest.mark.parametrize("name", list(S.A4_HEX))
@pytest.mark.parametrize("plane", [0, 1, 2, 3])
@pytest.mark.parametrize("delta", [-1, +1])
def test_step4_each_plane_too_large_and_too_small(name, plane, delta):
    shape, good = OK_ARGS[name]
    pb = list(good)
    if pb[plane] == 0 and delta < 0:
        pytest.skip("an absent plane cannot be smaller")
    pb[plane] += delta
    res = grit_check(a4(name), shape, pb)
    assert_status(res, Status.SIZE_MISMATCH, 4, plane=plane)
    assert res.detail.expected == good[plane] and res.detail.actual == pb[plane]


def test_step4_message_shape_and_likeliest_cause_7_5():
    res = grit_check(a4("GRADE_MXFP4"), [8192], [4096, 128, 0, 0])
    msg = res.detail.message
    assert msg.startswith("scale0 plane is 128 bytes; descriptor requires 256.")
    assert "numel=8192, k0=32 -> n_groups0=256, cw(e8m0)=8 -> 256 bytes" in msg
    assert "group_size=64, not 32" in msg
    twice = grit_check(a4("GRADE_MXFP4"), [8192], [4096, 512, 0, 0])
    assert "group_size=16, not 32" in twice.detail.message


def test_step4_likeliest_causes():
    # dense/sparse confusion: all 1024 s8 elements stored
    res = grit_check(a4("GRADE_I8S24"), [1024], [1024, 64, 0, 128])
    assert "dense/sparse" in res.detail.cause
    # GPTQ/AWQ-style dense-nibble zero points (§0.3d)
    g = G.parse_grade("grit1(e=u4,k0=128,s0=binary16,zp=u4,zpc=minus1,esr=affineminmax)")
    d = D.from_grade(g)
    sizes = plane_sizes(d, [896, 896])
    assert sizes.aux == 6272
    res = grit_check(d, [896, 896], [sizes.data, sizes.scale0, 0, 3136], grades=G.registry([g]))
    assert res.detail.expected == 6272 and res.detail.actual == 3136
    assert "dense nibbles" in res.detail.cause and "§0.3d" in res.detail.cause
    # truncation
    res = grit_check(a4("GRADE_MXFP4"), [1024], [500, 32, 0, 0])
    assert "truncated" in res.detail.cause


def test_step4_zero_divisors_never_divide():
    d = a4("GRADE_I8S24")
    for change, clause in [(dict(k0=0), "k0_zero"), (dict(sp_m=0), "sp_m_zero")]:
        with pytest.raises(GritSizeError) as ei:
            expected_plane_sizes(mut(d, **change), [32])
        assert ei.value.detail.clause == clause and ei.value.detail.step == 4
    # k1 == 0 with two levels is per-tensor, not an error (§14)
    n = a4("GRADE_NVF4")
    assert expected_plane_sizes(n, [32]).scale1 == 4
    q = mut(a4("GRADE_Q4KS"), k1=3)
    with pytest.raises(GritSizeError) as ei:
        expected_plane_sizes(q, [256])
    assert ei.value.detail.clause == "k1_divides"


def test_step4_shape_problems():
    d = a4("GRADE_MXFP4")
    assert_status(grit_check(d, [33], [16, 1, 0, 0]), Status.SIZE_MISMATCH, 4, "k0_divides")
    assert_status(grit_check(mut(d, group_axis=2), [32, 32], [512, 32, 0, 0]),
                  Status.SIZE_MISMATCH, 4, "group_axis")
    assert_status(grit_check(mut(d, group_axis=-1), [32], [16, 1, 0, 0]),
                  Status.SIZE_MISMATCH, 4, "group_axis")
    assert_status(grit_check(d, [-32], [16, 1, 0, 0]), Status.SIZE_MISMATCH, 4, "shape")
    assert_status(grit_check(a4("GRADE_I8S24"), [34], [17, 2, 0, 4]),
                  Status.SIZE_MISMATCH, 4, "k0_divides")
    assert grit_check(d, [0], [0, 0, 0, 0]).ok  # empty tensors are legal


# ------------------------------------------------------------------ step 5


def b1_planes():
    return [S.B1_PAYLOAD[:16], S.B1_PAYLOAD[16:], b"", b""]


def test_step5_digest():
    d = a4("GRADE_MXFP4")
    good = bytes.fromhex(S.B1_DIGEST)
    assert grit_check(d, [32], level=2, planes=b1_planes(), expected_digest=good).ok
    bad = bytes(16)
    res = grit_check(d, [32], level=2, planes=b1_planes(), expected_digest=bad)
    assert_status(res, Status.DIGEST_MISMATCH, 5, "digest")
    with pytest.raises(GritDigestError):
        grit_check_or_raise(d, [32], level=2, planes=b1_planes(), expected_digest=bad)
    # level 1 never looks at contents
    assert grit_check(d, [32], S.B1_PLANE_BYTES, 1, expected_digest=bad).ok


def i8_planes(meta):
    return [bytes([0x7F, 0x2A] * 8), bytes([0x0C, 0x26]), b"", meta]


def test_step5_asc_lsb_order():
    d = a4("GRADE_I8S24")
    assert grit_check(d, [32], level=2, planes=i8_planes(b"\xcc" * 4)).ok
    # quad 0 keeps {3, 0}: descending -> DigestMismatch
    res = grit_check(d, [32], level=2, planes=i8_planes(b"\xc3\xcc\xcc\xcc"))
    assert_status(res, Status.DIGEST_MISMATCH, 5, "asc_lsb", plane=3)
    assert res.detail.actual == [3, 0]
    # equal indices are not strictly increasing (last quad)
    res = grit_check(d, [32], level=2, planes=i8_planes(b"\xcc\xcc\xcc\x5c"))
    assert res.detail.clause == "asc_lsb" and res.detail.actual == [1, 1]
    # UNORDERED metadata is not checked
    dun = mut(d, sp_order=0)
    g = G.parse_grade("grit1(e=s8,k0=32,s0=binary16,sp=2:4:u2:unordered,esr=ratiomaxabs)")
    dun = mut(dun, grade_id=g.grade_id)
    assert grit_check(dun, [32], level=2, planes=i8_planes(b"\xc3" * 4),
                      grades=G.registry([g])).ok


# ------------------------------------------------------------------ order


def test_order_two_faults():
    d = a4("GRADE_MXFP4")
    # step 1 beats step 4
    assert run(mut(d, magic=0), pb=[1, 1, 1, 1]).detail.step == 1
    # earlier step-1 clause wins: version before reserved flags
    assert run(mut(d, version=9, flags=0x40)).detail.clause == "version"
    # step 2 beats step 3
    assert run(mut(d, k0=64, placement_data=0x3000000000000000)).detail.step == 2
    # step 3 beats step 4
    res = grit_check(mut(d, placement_meta=P.ROW_MAJOR), [1024], [1, 1, 1, 1])
    assert res.detail.step == 3
    # two wrong planes: data is reported first
    res = grit_check(d, [1024], [1, 1, 0, 0])
    assert res.detail.plane == 0
    # sizes before content
    res = grit_check(d, [32], level=2, planes=[b"\x00" * 15, b"\x7f", b"", b""],
                     expected_digest=bytes(16))
    assert res.status == Status.SIZE_MISMATCH
    # first frame field in §7.3's list wins
    res = run(mut(d, elem=0x2887, k0=64))
    assert res.detail.clause == "frame.elem"


def test_or_raise_subclasses():
    d = a4("GRADE_MXFP4")
    with pytest.raises(GritSizeError):
        grit_check_or_raise(d, [32], [15, 1, 0, 0])
    with pytest.raises(GritLayoutError):
        grit_check_or_raise(mut(d, placement_data=0x2000000000000000), [32], [16, 1, 0, 0])


def test_level_0_checks_nothing():
    assert grit_check(b"\x00" * 64, [1], [0, 0, 0, 0], 0).ok


class Exploding:
    def __len__(self):
        raise AssertionError("plane contents touched at level 1")

    def __getitem__(self, _):
        raise AssertionError("plane contents touched at level 1")


def test_level_1_never_reads_planes():
    d = a4("GRADE_MXFP4")
    assert grit_check(d, [32], [16, 1, 0, 0], 1, planes=[Exploding()] * 4).ok


# ------------------------------------------------------------------ §14 property

VALID = [bytes.fromhex(h) for h in S.A4_HEX.values()]


@st.composite
def descriptors(draw):
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(st.binary(min_size=64, max_size=64))
    base = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(0 if kind == 1 else 1, 4))):
        i = draw(st.integers(0, 63))
        base[i] = draw(st.sampled_from([0, 1, 2, 0x7F, 0x80, 0xFF, draw(st.integers(0, 255))]))
    return bytes(base)


extent = st.one_of(st.integers(0, 4096), st.integers(0, 2**63 - 1), st.integers(-5, -1))
plane_len = st.one_of(st.integers(0, 4096), st.integers(0, 2**62), st.integers(-3, -1))


def ref_sizes(raw, shape):
    """The four plane lengths §7.3 step 4 requires, from tests/ref_ids.py's
    exact-arithmetic equations (None where they do not apply)."""
    try:
        return ref_plane_sizes(ref_desc_fields(raw), shape)
    except (AssertionError, ArithmeticError, IndexError, KeyError, ValueError):
        return None


@settings(max_examples=2_000, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(descriptors(), st.lists(extent, min_size=0, max_size=5),
       st.lists(plane_len, min_size=4, max_size=4), st.booleans())
def test_any_descriptor_gives_exactly_one_status(raw, shape, pb, exact):
    if exact and ref_sizes(raw, shape) is not None:
        pb = ref_sizes(raw, shape)  # the sizes the independent equations give
    res = grit_check(raw, shape, pb, 1)
    assert isinstance(res.status, Status)
    assert (res.status == Status.OK) == (res.detail is None)
    if res.detail is None:
        # OK: the plane lengths are exactly the independent equations' result
        assert pb == ref_sizes(raw, shape)
        return
    assert res.detail.step in (1, 2, 3, 4) and res.detail.message
    if res.detail.step < 4:
        # steps 1-3 read the descriptor alone: any shape and sizes fail alike
        other = grit_check(raw, [32], [0, 0, 0, 0], 1)
        assert (other.status, other.detail and other.detail.step) == (res.status,
                                                                      res.detail.step)
    elif pb == ref_sizes(raw, shape):
        # the sizes are right, so step 4 failed on the shape (§7.3 step 4's
        # shape clauses), never on a plane
        assert res.detail.plane is None


@st.composite
def level_2_inputs(draw):
    raw = draw(descriptors())
    sizes = ref_sizes(raw, [32])
    if sizes is not None and max(sizes) <= 64 and draw(st.booleans()):
        planes = [draw(st.binary(min_size=n, max_size=n)) for n in sizes]
    else:
        planes = draw(st.lists(st.binary(max_size=64), min_size=4, max_size=4))
    true_digest = ref_digest(planes).to_bytes(16, "big")
    dig = true_digest if draw(st.booleans()) else draw(st.binary(min_size=16, max_size=16))
    return raw, planes, dig, dig == true_digest


@settings(max_examples=300, deadline=None)
@given(level_2_inputs())
def test_level_2_any_input_one_status(inputs):
    raw, planes, dig, digest_right = inputs
    res = grit_check(raw, [32], level=2, planes=planes, expected_digest=dig)
    assert isinstance(res.status, Status)
    level_1 = grit_check(raw, [32], [len(p) for p in planes], 1)
    if not level_1.ok:
        # level 2 is level 1 and then step 5: the same first failure
        assert res.status == level_1.status and res.detail.step == level_1.detail.step
    elif not digest_right:
        # the digest is compared to an independent FNV-1a 128 of the planes
        assert not res.ok and res.detail.step == 5
    else:
        assert res.ok or (res.detail.step == 5 and res.detail.clause != "digest")


def test_digest_helper_matches_spec_for_level_2():
    assert digest_planes(b1_planes()).hex() == S.B1_DIGEST
