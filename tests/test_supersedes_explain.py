"""§11.2 supersedes edges and §7.5 grit_explain."""

import pytest
import spec_values as S

from grit_scan.codec import explain as E
from grit_scan.codec import grade as G
from grit_scan.codec.errors import GritValueError
from grit_scan.codec.supersedes import REGISTERED_EDGES, EdgeSet, make_edge


def test_registered_edges_reconstruction_9():
    descs = sorted((e.src.name, e.dst.name, e.scope) for e in REGISTERED_EDGES.edges)
    assert descs == [("GRADE_MXFP4_RNE", "GRADE_MXFP4", "decode"),
                     ("GRADE_NVF4_RTZ", "GRADE_NVF4", "decode")]
    assert all(e.reason for e in REGISTERED_EDGES.edges)


def test_equivalence_closure():
    mx, mxr, nv = G.GRADE_MXFP4, G.GRADE_MXFP4_RNE, G.GRADE_NVF4
    assert REGISTERED_EDGES.equivalent(mx, mxr, "decode")
    assert REGISTERED_EDGES.equivalent(mxr, mx, "decode")  # symmetric
    assert REGISTERED_EDGES.equivalent(mx, mx, "full")  # reflexive
    assert not REGISTERED_EDGES.equivalent(mx, mxr, "full")  # no full-scope edge in v1
    assert not REGISTERED_EDGES.equivalent(mx, nv, "decode")


def test_transitive_closure():
    a = G.parse_grade("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2ceilmaxabs)")
    es = EdgeSet(REGISTERED_EDGES.edges)
    es.add(make_edge(a, G.GRADE_MXFP4_RNE, "decode", "ceil vs rne: encode-only"))
    assert es.equivalent(a, G.GRADE_MXFP4, "decode")
    assert len(es.path(a, G.GRADE_MXFP4)) == 2


def test_edge_preconditions():
    with pytest.raises(GritValueError, match="reason"):
        make_edge(G.GRADE_MXFP4_RNE, G.GRADE_MXFP4, "decode", "")
    with pytest.raises(GritValueError, match="reason"):
        make_edge(G.GRADE_MXFP4_RNE, G.GRADE_MXFP4, "decode", "   ")
    with pytest.raises(GritValueError, match="decode projections differ"):
        make_edge(G.GRADE_MXFP4, G.GRADE_NVF4, "decode", "wishful")
    with pytest.raises(GritValueError, match="encode projections"):
        make_edge(G.GRADE_MXFP4_RNE, G.GRADE_MXFP4, "full", "not really")
    with pytest.raises(GritValueError):
        make_edge(G.GRADE_MXFP4_RNE, G.GRADE_MXFP4, "partial", "x")
    # accumulation-only difference may be full scope
    a = G.parse_grade("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs,ao=seq)")
    assert make_edge(a, G.GRADE_MXFP4, "full", "accumulation contract only").scope == "full"


def test_explain_identical():
    ex = E.explain(E.operand(S.A4_HEX["GRADE_MXFP4"], [32]), E.operand("mxfp4", [32]))
    assert ex.identical and ex.verdict == f"identical gid {S.B1_GID_BASE32}"


def test_explain_decode_equivalent():
    ex = E.explain(E.operand("mxfp4_rne"), E.operand("mxfp4"))
    assert not ex.identical and ex.decode_equivalent
    assert ex.verdict.startswith("decode-equivalent through a supersedes edge")
    assert ex.differences == ("grade_id",)


def test_explain_lists_fields():
    a = E.operand("mxfp4", [1024])
    b = E.operand("grit1(e=e2m1,k0=64,s0=e8m0,esr=exp2floormaxabs)", [1024])
    ex = E.explain(a, b)
    assert ex.differences == ("k0", "grade_id")
    assert ex.verdict.startswith("differ in 2 fields: k0 (32 vs 64)")
    rows = {r.field: r for r in ex.rows}
    assert not rows["decode_projection"].same and rows["elem"].same
    assert set(rows) >= {"magic", "placement_data", "placement_meta", "grade", "gid", "note"}


def test_explain_type_code_mixup_named():
    # "MXFP4 is type code 4 here and 39 there": a descriptor with the wrong
    # element format is named field by field.
    a = E.operand("mxfp4")
    b = E.operand("grit1(e=e4m3,k0=32,s0=e8m0,esr=exp2floormaxabs)")
    ex = E.explain(a, b)
    rows = {r.field: r for r in ex.rows}
    assert (rows["elem"].a, rows["elem"].b) == ("e2m1", "e4m3")
    assert "elem (e2m1 vs e4m3)" in ex.verdict


def test_explain_note_only():
    d = E.operand(S.A4_HEX["GRADE_MXFP4"], [32])
    other = S.A4_HEX["GRADE_MXFP4"][:56] + "01000000" + S.A4_HEX["GRADE_MXFP4"][64:]
    ex = E.explain(d, E.operand(other, [32]))
    assert ex.identical and "note" in ex.verdict
    js = ex.to_json()
    assert js["identical"] and js["a"]["gid_base32"] == S.B1_GID_BASE32
