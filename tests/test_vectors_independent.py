"""The committed conformance suite, re-derived without grit_scan.

test_vectors_cli_codec checks fixtures/conformance/vectors.json against
the generator and the verifier in grit_scan.codec.vectors.  Here every
value in the JSON that can be recomputed independently is: grade_id and
gid by FNV-1a written from the FNV spec (ref_ids), the printable form by
the Crockford alphabet, the digest by §6.5, plane sizes by §7.3's
equations in exact arithmetic, decoded values by the element-wise §8.1
reference (ref_decode on ref_fmt), each negative vector's first failing
§7.3 step by the step predicates written out below, and the MXFP4 payloads
by the §10.1 / §9.2 encode steps in exact arithmetic.
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import spec_values as S
from ref_decode import ref_decode
from ref_fmt import f32_round, ref_encode_rne
from ref_ids import crockford26, desc_fields, digest, fnv1a, gid, plane_sizes

SUITE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "conformance"
                    / "vectors.json").read_text())

# A.1 registered placements (class 0x1)
REGISTERED = {0x1000000000000001, 0x1000000000000002, 0x1000000000000003, 0x1000000000000004,
              0x1000000000000005, 0x1000000000000011, 0x1000000000000012, 0x1000000000000020}
# grade_id -> the A.4 descriptor whose frame that grade shares (er/esr are not frame fields)
FRAME_OF = {gid_: desc_fields(bytes.fromhex(S.A4_HEX[next(k for k in S.A4_HEX
                                                           if name.startswith(k))]))
            for name, (_, gid_) in S.GRADES.items()}
FRAME_FIELDS = ("n_levels flags elem scale0 scale1 zp_fmt k0 k1 sp_n sp_m sp_meta_fmt sp_order "
                "container").split()
ERROR_OF_STEP = {1: "GradeUnknown", 2: "GradeUnknown", 3: "PlacementUnknown",
                 4: "SizeMismatch", 5: "DigestMismatch"}


def split(payload, sizes):
    out, at = [], 0
    for n in sizes:
        out.append(payload[at : at + n])
        at += n
    return out


def step1_ok(d):
    """§7.3 step 1, clause by clause."""
    sparse, has_zp, l1 = d.flags & 0x04, d.flags & 0x01, d.flags & 0x20
    return (d.magic == 0x31545247 and d.hdr_bytes == 64 and d.version == 1
            and d.n_levels in (1, 2) and d.flags & 0xC0 == 0 and d.frame_rsvd == 0
            and d.container in (0, 1)
            and (d.n_levels != 1 or (d.k1 == 0 and d.scale1 == 0))
            and not (sparse and has_zp)
            and (not l1 or (has_zp and d.n_levels == 2))
            and d.elem >> 15 == 0
            and all((f >> 11) & 3 != 3 for f in (d.elem, d.scale0, d.scale1, d.zp_fmt)))


def step2_ok(d):
    frame = FRAME_OF.get(d.grade_id)
    return frame is not None and all(getattr(d, k) == getattr(frame, k) for k in FRAME_FIELDS)


def step3_ok(d, sizes):
    for p in (d.placement_data, d.placement_scale, d.placement_meta):
        if not (p == 0 or p in REGISTERED or p >> 60 in (0x8, 0xF)):
            return False
    return (sizes[3] > 0) == (d.placement_meta != 0)


def step4_ok(d, shape, sizes):
    if shape[d.group_axis] % d.k0 or (d.flags & 0x04 and shape[d.group_axis] % d.sp_m):
        return False
    return plane_sizes(d, shape) == list(sizes)


def step5_ok(d, planes, expected_digest):
    if expected_digest is not None and f"{digest(planes):032x}" != expected_digest:
        return False
    if d.flags & 0x04 and d.sp_order == 1:  # §7.4: strictly increasing, < sp_m
        bits = {1: 2, 2: 4}[d.sp_meta_fmt]
        meta = int.from_bytes(planes[3], "little")
        n_groups = len(planes[3]) * 8 // (bits * d.sp_n)
        for q in range(n_groups):
            idx = [(meta >> ((q * d.sp_n + j) * bits)) & ((1 << bits) - 1)
                   for j in range(d.sp_n)]
            if any(i >= d.sp_m for i in idx) or any(a >= b for a, b in zip(idx, idx[1:])):
                return False
    return True


def first_failing_step(raw, shape, sizes, payload, expected_digest=None):
    d = desc_fields(raw)
    if not step1_ok(d):
        return 1
    if not step2_ok(d):
        return 2
    if not step3_ok(d, sizes):
        return 3
    if not step4_ok(d, shape, sizes) or len(payload) != sum(sizes):
        return 4
    if not step5_ok(d, split(payload, sizes), expected_digest):
        return 5
    return None


def decoded_bits(raw, shape, payload):
    d = desc_fields(raw)
    planes = split(payload, plane_sizes(d, shape))
    got = np.asarray(ref_decode(d, shape, planes), np.float32).reshape(-1)
    return ["7fc00000" if math.isnan(v) else f"{int(b):08x}"
            for v, b in zip(got.tolist(), got.view(np.uint32))]


@pytest.mark.parametrize("v", SUITE["vectors"], ids=[v["name"] for v in SUITE["vectors"]])
def test_positive_vector_recomputed(v):
    raw, shape = bytes.fromhex(v["desc_hex"]), v["shape"]
    payload = bytes.fromhex(v["payload_hex"])
    d = desc_fields(raw)
    assert d.grade_id == fnv1a(v["grade"].encode(), 64)
    assert v["grade"] in {g for g, _ in S.GRADES.values()}
    g = gid(v["grade"], raw, shape)
    assert v["gid"] == f"{g:032x}"
    assert v["gid_base32"] == crockford26(g)
    assert v["plane_bytes"] == plane_sizes(d, shape)
    assert len(payload) == sum(v["plane_bytes"])
    assert v["digest"] == f"{digest(split(payload, v['plane_bytes'])):032x}"
    assert first_failing_step(raw, shape, v["plane_bytes"], payload, v["digest"]) is None
    assert [b.lower() for b in v["decoded_f32_bits"]] == decoded_bits(raw, shape, payload)
    assert len(v["input_f32_bits"]) == math.prod(shape)


@pytest.mark.parametrize("v", SUITE["negative"], ids=[v["name"] for v in SUITE["negative"]])
def test_negative_vector_fails_at_its_step(v):
    raw, shape = bytes.fromhex(v["desc_hex"]), v["shape"]
    payload = bytes.fromhex(v["payload_hex"])
    if v["check_level"] < 2:
        payload = b"\0" * sum(v["plane_bytes"])  # level 1 reads no plane bytes
    step = first_failing_step(raw, shape, v["plane_bytes"], payload, v.get("expected_digest"))
    assert step is not None and ERROR_OF_STEP[step] == v["expected_error"], step
    name = v["name"]
    if name.startswith("check/step"):
        assert step == int(name[len("check/step")]), step


@pytest.mark.parametrize("s", SUITE["supersedes"], ids=[s["name"] for s in SUITE["supersedes"]])
def test_supersedes_pair_decodes_to_the_committed_values(s):
    payload = bytes.fromhex(s["payload_hex"])
    want = [b.lower() for b in s["decoded_f32_bits"]]
    for key in ("desc_hex_from", "desc_hex_to"):
        assert decoded_bits(bytes.fromhex(s[key]), s["shape"], payload) == want, key


def test_appendix_b_values_are_in_the_suite():
    """The committed suite carries the spec's own B.1/B.2 numbers."""
    by_name = {v["name"]: v for v in SUITE["vectors"]}
    b1 = by_name["mxfp4/tie_to_even"]
    assert (b1["gid"], b1["gid_base32"], b1["digest"]) == (S.B1_GID, S.B1_GID_BASE32,
                                                           S.B1_DIGEST)
    assert b1["payload_hex"] == S.B1_PAYLOAD.hex() and b1["desc_hex"] == S.A4_HEX["GRADE_MXFP4"]
    b2 = by_name["i8s24/quad_pattern"]
    assert (b2["gid"], b2["gid_base32"]) == (S.B2_GID, S.B2_GID_BASE32)
    assert crockford26(int(S.B1_GID, 16)) == S.B1_GID_BASE32  # §6.4's own example


def mx_exponent(amax, rne):
    """§9.2: floor(log2(amax)) from the binary32 exponent, exactly; for
    exp2rnemaxabs +1 when the significand f satisfies f^2 > 2."""
    e_floor = math.frexp(amax)[1] - 1
    f = Fraction(amax) / Fraction(2) ** e_floor
    return e_floor + 1 if rne and f * f > 2 else e_floor


def mxfp4_encode(values, rne):
    """§10.1 encode steps 1-4 per block of 32 (E2M1 0x2043, E8M0 codes)."""
    codes, scales = [], []
    for b in range(0, len(values), 32):
        blk = values[b : b + 32]
        if any(not math.isfinite(v) for v in blk):
            scales.append(0xFF)
            codes += [0] * 32
            continue
        amax = max(abs(v) for v in blk)
        if amax == 0:
            scales.append(0x7F)
            codes += [ref_encode_rne(0x2043, v) for v in blk]
            continue
        x = min(max(mx_exponent(amax, rne) - 2, -127), 127)
        scales.append(x + 127)
        codes += [ref_encode_rne(0x2043, f32_round(Fraction(v) / Fraction(2) ** x) if v
                                 else v) for v in blk]
    return bytes(codes[i] | codes[i + 1] << 4 for i in range(0, len(codes), 2)) + bytes(scales)


MX = [v for v in SUITE["vectors"] if v["grade"] in (S.GRADES["GRADE_MXFP4"][0],
                                                     S.GRADES["GRADE_MXFP4_RNE"][0])]


@pytest.mark.parametrize("v", MX, ids=[v["name"] for v in MX])
def test_mxfp4_payload_is_the_section_10_1_encode(v):
    d = desc_fields(bytes.fromhex(v["desc_hex"]))
    x = np.array([int(b, 16) for b in v["input_f32_bits"]], np.uint32).view(np.float32)
    x = np.moveaxis(x.reshape(v["shape"]), d.group_axis, -1).reshape(-1)
    rne = v["grade"] == S.GRADES["GRADE_MXFP4_RNE"][0]
    assert mxfp4_encode([float(t) for t in x], rne).hex() == v["payload_hex"]
