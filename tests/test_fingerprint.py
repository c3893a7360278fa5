"""§6: FNV-1a self-checks, gid, digest, Crockford base32 (expected values from the spec)."""

import pytest
import spec_values as S
from hypothesis import given, settings
from hypothesis import strategies as st
from ref_ids import crockford26, fnv1a
from ref_ids import digest as ref_digest

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


# ---------------------------------------------------------------- read ahead

def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    at = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(at, at[1:])]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(0, 400), max_size=8),
       st.lists(st.integers(0, 200), min_size=4, max_size=4))
def test_digest_read_ahead_is_the_digest_of_the_cut_planes(data, cuts, sizes):
    """Chunks of any size, planes cut at any lengths: §6.5 over the planes
    split_payload gives (the independent reference of ref_ids)."""
    from grit_scan.codec.fingerprint import digest_read_ahead
    from grit_scan.codec.layout import payload_lengths, split_payload

    lengths = payload_lengths(len(data), sizes)
    planes = [bytes(p) for p in split_payload(data, sizes)]
    assert lengths == [len(p) for p in planes] and sum(lengths) == len(data)
    want = ref_digest(planes).to_bytes(16, "big")
    assert digest_read_ahead(iter(_pieces(data, cuts)), lengths) == want


def test_digest_read_ahead_refuses_a_stream_that_disagrees_with_its_lengths():
    from grit_scan.codec.errors import GritValueError
    from grit_scan.codec.fingerprint import digest_read_ahead

    with pytest.raises(GritValueError, match="expected 10"):
        digest_read_ahead([b"abc", b"def"], [10, 0, 0, 0])
    with pytest.raises(GritValueError, match="runs past"):
        digest_read_ahead([b"abc", b"def"], [2, 1, 0, 0])
    with pytest.raises(GritValueError, match="four planes"):
        digest_read_ahead([b"abc"], [3])


def test_read_ahead_hands_on_the_producers_error_and_stops_it():
    import threading

    from grit_scan.codec.fingerprint import read_ahead

    def failing():
        yield b"a"
        raise OSError("disk gone")

    it = read_ahead(failing())
    assert next(it) == b"a"
    with pytest.raises(OSError, match="disk gone"):
        next(it)
    made = []

    def endless():
        while True:
            made.append(1)
            yield b"x"

    it = read_ahead(endless(), depth=2)
    assert next(it) == b"x"
    it.close()  # the consumer stops: the producer thread ends with it
    assert not [t for t in threading.enumerate() if t.name == "grit-read-ahead"]
    assert len(made) <= 4
