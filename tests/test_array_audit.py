"""§5.4 slices and transposes, concat, §12 audit ledger, §7.6 probes."""

import json

import numpy as np
import pytest

from grit_scan.codec import audit
from grit_scan.codec import grade as G
from grit_scan.codec import placement as P
from grit_scan.codec.array import GritArray, concat
from grit_scan.codec.check import grit_check
from grit_scan.codec.encode import encode
from grit_scan.codec.errors import GritDigestError, GritLayoutError, GritValueError
from grit_scan.codec.fingerprint import digest_planes
from grit_scan.codec.tables import NOTE_ASSUMED

F32 = np.float32
rng = np.random.default_rng(3)


def arr(g, shape, ga):
    v = rng.standard_normal(shape).astype(F32)
    e = encode(v, g, ga)
    return GritArray(e.desc, e.shape, e.planes)


def same(a, b):
    a, b = np.asarray(a, F32), np.asarray(b, F32)
    return a.shape == b.shape and ((a.view(np.uint32) == b.view(np.uint32))
                                   | (np.isnan(a) & np.isnan(b))).all()


@pytest.fixture
def ledger():
    return audit.Ledger()


@pytest.mark.parametrize("g", [G.GRADE_MXFP4, G.GRADE_Q4KS, G.GRADE_I8S24, G.GRADE_NVF4])
def test_slices_are_views_of_decode(g):
    x = arr(g, (6, 512), 1)
    full = x.decode()
    assert same(x.slice(0, 2, 5).decode(), full[2:5])
    assert same(x.slice(1, 256, 512).decode(), full[:, 256:512])


def test_l5_misaligned_group_axis_slice_is_an_error():
    x = arr(G.GRADE_MXFP4, (4, 128), 1)
    with pytest.raises(GritValueError, match="L5"):
        x.slice(1, 16, 64)
    with pytest.raises(GritValueError, match="L5"):
        x.slice(1, 0, 40)
    q = arr(G.GRADE_Q4KS, (2, 512), 1)
    with pytest.raises(GritValueError, match="L5"):
        q.slice(1, 32, 256)  # a whole k0 group but not a whole super-group


def test_transpose_non_group_axis_is_a_placement_change():
    x = arr(G.GRADE_MXFP4, (3, 5, 64), 2)
    t = x.transpose([1, 0, 2])
    assert same(t.decode(), np.transpose(x.decode(), (1, 0, 2)))
    assert t.desc.group_axis == 2


def test_l4_group_axis_transpose_refused():
    x = arr(G.GRADE_MXFP4, (32, 64), 1)
    with pytest.raises(GritValueError, match="L4"):
        x.transpose([1, 0])


def test_concat():
    a, b = arr(G.GRADE_MXFP4, (2, 64), 1), arr(G.GRADE_MXFP4, (3, 64), 1)
    c = concat([a, b], 0)
    assert same(c.decode(), np.concatenate([a.decode(), b.decode()], 0))
    d = concat([a, arr(G.GRADE_MXFP4, (2, 32), 1)], 1)
    assert d.shape == (2, 96)
    with pytest.raises(GritValueError):
        concat([a, arr(G.GRADE_I8S24, (2, 64), 1)], 0)


def test_note_assumed_is_sticky(ledger):
    x = arr(G.GRADE_MXFP4, (32, 64), 1)
    y = audit.assume_placement(x, P.ROW_MAJOR, reason="bytes came from a row-major dump",
                                ledger=ledger)
    assert y.assumed
    assert y.relayout(P.COL_MAJOR, P.COL_MAJOR).assumed
    assert y.slice(0, 0, 8).assumed
    assert concat([x, y], 0).assumed
    # serialisation: the note is in the descriptor bytes
    z = GritArray.from_payload(y.desc, y.shape, y.payload())
    assert z.desc.note & NOTE_ASSUMED
    assert y.gid == x.gid  # the note is not hashed (§11.1)


def test_assume_placement_needs_a_reason(ledger):
    x = arr(G.GRADE_MXFP4, (2, 64), 1)
    for bad in ("", "   "):
        with pytest.raises(GritValueError, match="reason"):
            audit.assume_placement(x, P.ROW_MAJOR, reason=bad, ledger=ledger)
    with pytest.raises(TypeError):
        audit.assume_placement(x, P.ROW_MAJOR, ledger=ledger)  # missing reason: not defaulted


def test_ledger_records_and_jsonl(ledger):
    x = arr(G.GRADE_MXFP4, (16, 64), 1)
    y = audit.assume_placement(x, P.COL_MAJOR, P.COL_MAJOR, reason="vendor dump is col-major",
                               ledger=ledger)
    recs = ledger.records()
    assert len(recs) == 1
    r = recs[0]
    assert r.reason == "vendor dump is col-major"
    assert r.gid_before == x.gid.hex() and r.gid_after == y.gid.hex()
    assert r.placement_from.startswith(f"{P.ROW_MAJOR:016x}")
    assert r.placement_to.startswith(f"{P.COL_MAJOR:016x}")
    assert "test_array_audit.py" in r.source_location
    line = json.loads(ledger.jsonl().splitlines()[0])
    assert set(line) == {"timestamp", "gid_before", "gid_after", "placement_from",
                         "placement_to", "reason", "source_location"}


def test_rate_and_ceiling(ledger):
    x = arr(G.GRADE_MXFP4, (2, 64), 1)
    for _ in range(3):
        assert audit.boundary_check(x, ledger=ledger).ok
    audit.assume_placement(x, P.ROW_MAJOR, reason="r", ledger=ledger)
    assert ledger.rate() == pytest.approx(1 / 4)
    ledger.max_rate = 0.3
    with pytest.raises(GritLayoutError, match="GRIT_AUDIT_MAX_RATE"):
        audit.assume_placement(x, P.ROW_MAJOR, reason="r", ledger=ledger)  # 2/5 > 0.3
    for _ in range(6):
        audit.boundary_check(x, ledger=ledger)
    audit.assume_placement(x, P.ROW_MAJOR, reason="r", ledger=ledger)  # 2/11 <= 0.3
    assert len(ledger.records()) == 2


def test_verify_placement_reads_the_bytes(ledger):
    x = arr(G.GRADE_MXFP4, (16, 64), 1)
    canon = digest_planes(x.planes)
    # bytes really stored col-major, but the descriptor says ROW_MAJOR
    col = x.relayout(P.COL_MAJOR, P.COL_MAJOR)
    stored = col.payload()
    lying = GritArray.from_payload(x.desc, x.shape, stored)
    assumed = audit.assume_placement(lying, P.COL_MAJOR, P.COL_MAJOR, reason="known dump",
                                     ledger=ledger)
    assert assumed.assumed
    ok = audit.verify_placement(assumed, P.COL_MAJOR, P.COL_MAJOR, canonical_digest=canon)
    assert not ok.assumed and same(ok.decode(), x.decode())
    with pytest.raises(GritDigestError):  # the bytes are not row-major
        audit.verify_placement(lying, P.ROW_MAJOR, P.ROW_MAJOR, canonical_digest=canon)
    with pytest.raises(GritLayoutError):  # not even realisable for this shape
        audit.verify_placement(lying, P.TILE_16X16, P.TILE_16X16, canonical_digest=canon)


def test_level_3_probes_warn_and_never_fail():
    x = arr(G.GRADE_MXFP4, (4, 256), 1)
    planes = list(x.planes)
    planes[1] = bytes([0x80] * len(planes[1]))  # constant E8M0 plane
    res = grit_check(x.desc, x.shape, level=3, planes=planes)
    assert res.ok and any("no dynamic range" in w for w in res.warnings)
    planes[1] = bytes([0xFF] + [0x80] * (len(planes[1]) - 1))
    res = grit_check(x.desc, x.shape, level=3, planes=planes)
    assert res.ok and any("NaN" in w for w in res.warnings)
    i8 = arr(G.GRADE_I8S24, (2, 128), 1)
    small = list(i8.planes)
    small[0] = bytes([3] * len(small[0]))  # int8 codes that never approach 127
    res = grit_check(i8.desc, i8.shape, level=3, planes=small)
    assert res.ok and any("never exceed" in w for w in res.warnings)
    assert grit_check(i8.desc, i8.shape, level=3, planes=list(i8.planes)).warnings == ()
