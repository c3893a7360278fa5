"""§3 descriptor layout, A.4 round trips, the note, the hdr_bytes skip rule."""

import pytest
import spec_values as S
from ref_ids import fnv1a

from grit_scan.codec import descriptor as D
from grit_scan.codec import grade as G
from grit_scan.codec import placement as P
from grit_scan.codec.errors import GritValueError


@pytest.mark.parametrize("name", list(S.A4_HEX))
def test_a4_round_trip_byte_for_byte(name):
    raw = bytes.fromhex(S.A4_HEX[name])
    d = D.unpack(raw)
    assert d.pack() == raw
    assert D.from_grade(G.REGISTERED[name]).pack() == raw
    assert d.grade_id == S.GRADES[name][1]
    assert d.magic == 0x31545247 and raw[:4] == b"GRT1"


def test_a4_reading_of_mxfp4_line_1():
    d = D.from_hex(S.A4_HEX["GRADE_MXFP4"])
    assert (d.hdr_bytes, d.version, d.n_levels, d.flags) == (64, 1, 1, 0)
    assert (d.elem, d.scale0, d.scale1, d.zp_fmt) == (0x2043, 0x4807, 0, 0)


def test_a4_placements_reconstruction_2():
    q = D.from_hex(S.A4_HEX["GRADE_Q4KS"])
    # A.1: GRIT_P_ROW_MAJOR, GRIT_P_LINEAR_META, GRIT_PLACEMENT_UNSPECIFIED
    assert (q.placement_data, q.placement_scale, q.placement_meta) == (0x1000000000000001,) * 3
    assert P.ROW_MAJOR == 0x1000000000000001 and P.LINEAR_META == 0x1000000000000011
    i = D.from_hex(S.A4_HEX["GRADE_I8S24"])
    assert i.placement_meta == 0x1000000000000011
    n = D.from_hex(S.A4_HEX["GRADE_NVF4"])
    assert n.placement_meta == 0 and n.k1 == 0 and n.n_levels == 2


def test_frame_and_note_split():
    d = D.from_hex(S.A4_HEX["GRADE_MXFP4"])
    noted = d.with_note(D.make_note(assumed=True, producer="convert.py/1.0"))
    assert noted.frame_bytes == d.frame_bytes
    assert noted.pack()[28:32] != d.pack()[28:32]
    # RECONSTRUCTION §6: bit 0 assumed, bits 16..31 FNV1a64(producer) & 0xFFFF
    assert noted.assumed and noted.producer_tag == fnv1a(b"convert.py/1.0", 64) & 0xFFFF
    assert noted.pack()[28:32] == (1 | (fnv1a(b"convert.py/1.0", 64) & 0xFFFF) << 16).to_bytes(
        4, "little")
    assert len(d.frame_bytes) == 60


def test_note_layout_reconstruction_6():
    note = D.make_note(assumed=True, producer="x")
    assert note & 1 == 1
    assert (note >> 16) == fnv1a(b"x", 64) & 0xFFFF
    assert note & 0xFFFE == 0
    assert D.make_note() == 0


def test_hdr_bytes_skip_rule():
    a = bytes.fromhex(S.A4_HEX["GRADE_MXFP4"])
    longer = bytearray(bytes.fromhex(S.A4_HEX["GRADE_NVF4"]))
    longer[4] = 80  # a future, longer descriptor
    longer += b"\xAA" * 16
    buf = a + bytes(longer) + a
    descs = D.iter_descriptors(buf)
    assert [x.grade_id for x in descs] == [S.GRADES[n][1] for n in
                                           ("GRADE_MXFP4", "GRADE_NVF4", "GRADE_MXFP4")]
    assert D.span(buf, 64) == 80
    short = bytearray(a)
    short[4] = 32
    with pytest.raises(GritValueError):
        D.span(bytes(short))
    with pytest.raises(GritValueError):
        D.span(bytes(longer[:70]))


def test_degenerate_inputs_unpack():
    assert D.unpack(b"\x00" * 64).magic == 0
    assert D.unpack(b"\xff" * 64).placement_data == 0xFFFFFFFFFFFFFFFF
    with pytest.raises(GritValueError):
        D.unpack(b"\x00" * 63)
    with pytest.raises(GritValueError):
        D.from_hex("zz" * 64)
