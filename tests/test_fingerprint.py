"""§6: FNV-1a self-checks, gid, digest, Crockford base32 (expected values from the spec)."""

import pytest
import spec_values as S
from hypothesis import given
from hypothesis import strategies as st
from ref_ids import crockford26, fnv1a

from grit_scan.codec import base32, fnv
from grit_scan.codec.descriptor import from_hex
from grit_scan.codec.errors import GritValueError
from grit_scan.codec.fingerprint import digest_planes, gid, gid_base32
from grit_scan.codec.grade import GRADE_I8S24, GRADE_MXFP4


def test_fnv_self_checks_6_1():
    assert fnv.fnv1a64(b"a") == S.FNV64_A
    assert fnv.fnv1a128(b"a").hex() == S.FNV128_A
    assert fnv.fnv1a64_py(b"a") == S.FNV64_A
    assert fnv.fnv1a128_py(b"a").to_bytes(16, "big").hex() == S.FNV128_A


def test_fnv_empty_is_offset_basis():
    assert fnv.fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv.fnv1a128(b"").hex() == "6c62272e07bb014262b821756295c58d"


@given(st.binary(max_size=300), st.integers(min_value=0, max_value=300))
def test_streaming_equals_one_shot(data, cut):
    h = fnv.Fnv128()
    h.update(data[:cut])
    h.update(data[cut:])
    assert h.digest() == fnv.fnv1a128(data)
    assert fnv.fnv1a128(data) == fnv1a(data, 128).to_bytes(16, "big")


def test_b1_gid_base32_and_digest():
    d = from_hex(S.A4_HEX["GRADE_MXFP4"])
    g = gid(GRADE_MXFP4, d, [32])
    assert g.hex() == S.B1_GID
    assert gid_base32(g) == S.B1_GID_BASE32
    planes = [S.B1_PAYLOAD[:16], S.B1_PAYLOAD[16:17], b"", b""]
    assert digest_planes(planes).hex() == S.B1_DIGEST


def test_digest_covers_all_four_planes():
    # RECONSTRUCTION §2: absent planes contribute u64le(0); "present planes
    # only" would give a different value.
    planes = [S.B1_PAYLOAD[:16], S.B1_PAYLOAD[16:17], b"", b""]
    only_present = fnv.Fnv128()
    for p in planes[:2]:
        only_present.update(len(p).to_bytes(8, "little") + p)
    assert only_present.hexdigest() != S.B1_DIGEST
    assert digest_planes(planes).hex() == S.B1_DIGEST
    assert digest_planes([planes[0], planes[1], None, None]).hex() == S.B1_DIGEST


def test_b2_gid():
    d = from_hex(S.A4_HEX["GRADE_I8S24"])
    g = gid(GRADE_I8S24, d, [32])
    assert g.hex() == S.B2_GID
    assert gid_base32(g) == S.B2_GID_BASE32


def test_gid_skips_the_note():
    # §11.1 / conformance fp/frame_note_split: the note is not hashed.
    d = from_hex(S.A4_HEX["GRADE_MXFP4"])
    assert gid(GRADE_MXFP4, d.with_note(0xDEADBEEF), [32]).hex() == S.B1_GID
    assert gid(GRADE_MXFP4, d, [64]).hex() != S.B1_GID


def test_base32_example_6_4():
    assert base32.encode(bytes.fromhex(S.B1_GID)) == S.B1_GID_BASE32
    assert base32.decode(S.B1_GID_BASE32) == bytes.fromhex(S.B1_GID)


def test_base32_parse_aliases_and_case():
    text = S.B1_GID_BASE32
    assert base32.decode(text.lower()) == bytes.fromhex(S.B1_GID)
    # I and L read as 1, O as 0 (§6.4)
    assert base32.decode("O" + text[1:]) == base32.decode("0" + text[1:])
    assert base32.decode(text[:5] + "I" + text[6:]) == base32.decode(text[:5] + "1" + text[6:])
    assert base32.decode(text[:5] + "l" + text[6:]) == base32.decode(text[:5] + "1" + text[6:])


@pytest.mark.parametrize("bad", [
    "U" + S.B1_GID_BASE32[1:],                       # U rejected
    S.B1_GID_BASE32[:-1],                            # 25 symbols
    S.B1_GID_BASE32 + "0",                           # 27 symbols
    "8" + S.B1_GID_BASE32[1:],                       # first symbol beyond 0-7
    S.B1_GID_BASE32[:7],                             # a prefix is not an identity
    "!" + S.B1_GID_BASE32[1:],
])
def test_base32_rejects(bad):
    with pytest.raises(GritValueError):
        base32.decode(bad)


@given(st.binary(min_size=16, max_size=16))
def test_base32_round_trip(raw):
    s = base32.encode(raw)
    assert s == crockford26(int.from_bytes(raw, "big"))  # §6.4 from the published alphabet
    assert len(s) == 26 and s[0] in "01234567"
    assert base32.decode(s) == raw
