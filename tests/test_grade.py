"""§4 grades: the six strings and ids, canonicalisation, rule-6 rejections,
decode projections, refinement and join."""

import pytest
import spec_values as S

from grit_scan.codec import grade as G
from grit_scan.codec.errors import GritValueError

MX = "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)"


@pytest.mark.parametrize("name", list(S.GRADES))
def test_six_grade_strings_and_ids(name):
    text, gid = S.GRADES[name]
    g = G.parse_grade(text)
    assert g.canonical == text
    assert g.grade_id == gid
    assert g.name == name
    assert G.REGISTERED[name].grade_id == gid


@pytest.mark.parametrize("alias", ["mxfp4", "MXFP4", "grade_mxfp4", "Grade_Mxfp4", " mxfp4 "])
def test_names_case_insensitive(alias):
    assert G.by_name(alias).canonical == S.GRADES["GRADE_MXFP4"][0]
    assert G.resolve(alias).grade_id == S.GRADES["GRADE_MXFP4"][1]


def test_all_registered_names_resolve():
    for name in ("mxfp4", "mxfp4_rne", "nvf4", "nvf4_rtz", "q4ks", "i8s24"):
        assert G.by_name(name) is not None
    assert G.GRADE_NVF4_RTZ.grade_id == S.GRADES["GRADE_NVF4_RTZ"][1]


@pytest.mark.parametrize("spelling", [
    "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)",
    " grit1( e = e2m1 , k0 = 32 ,\n s0 = e8m0 ,\t esr = exp2floormaxabs ) ",
    "GRIT1(E=E2M1,K0=32,S0=E8M0,ESR=EXP2FLOORMAXABS)",
    "grit1(esr=exp2floormaxabs,s0=e8m0,k0=32,e=e2m1)",
    "grit1(k0=32,e=e2m1,esr=exp2floormaxabs,s0=e8m0)",
    # defaults are dropped
    "grit1(e=e2m1,k0=32,s0=e8m0,ct=dense,po=lsb,er=rne,es=satfinite,et=binary32,"
    "esr=exp2floormaxabs,dr=rne,ds=satfinite,dt=binary32,ao=unspec,at=unspec,ar=unspec,"
    "asub=any,afma=unspec)",
    # aliases
    "grit1(e=fp4,k0=32,s0=ue8m0,esr=exp2floormaxabs)",
    "grit1(e=FLOAT4_E2M1FN,k0=32,s0=float8_e8m0fnu,esr=exp2floormaxabs,et=fp32)",
    "grit1(e=e2m1,k0=032,s0=e8m0,esr=exp2floormaxabs)",
])
def test_canonicalisation(spelling):
    assert G.canonicalize(spelling) == MX


def test_k1_zero_is_emitted_and_zps_l1_kept():
    g = G.parse_grade("grit1(s1=fp32,k1=0,esr=ratiomaxabs,k0=16,s0=e4m3fn,e=fp4)")
    assert g.canonical == S.GRADES["GRADE_NVF4"][0]
    q = G.parse_grade("grit1(zps=l1,zp=uint6,s1=half,k1=8,s0=uint6,k0=32,e=uint4,"
                      "esr=affineminmax,zpc=plain)")
    assert q.canonical == S.GRADES["GRADE_Q4KS"][0]


def test_every_alias_in_a_grade():
    for alias, tok in S.ALIASES.items():
        if tok in ("u2", "u4", "u6", "u8", "s4", "s8", "e2m1", "e4m3", "e5m2", "e2m3", "e3m2",
                   "e8m0", "binary16", "bfloat16", "binary32"):
            g = G.parse_grade(f"grit1(e={alias},k0=32,s0=e8m0,esr=ratiomaxabs)")
            assert g.canonical == f"grit1(e={tok},k0=32,s0=e8m0,esr=ratiomaxabs)"


@pytest.mark.parametrize("bad", sorted(S.REJECTED))
def test_every_rejected_alias(bad):
    with pytest.raises(GritValueError) as ei:
        G.parse_grade(f"grit1(e={bad},k0=32,s0=e8m0,esr=exp2floormaxabs)")
    msg = str(ei.value)
    assert "'e'" in msg and S.REJECTED[bad] in msg


@pytest.mark.parametrize("text,needle", [
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs,swizzled=1)", "unknown key 'swizzled'"),
    ("grit1(e=e2m1,k0=32,k0=32,s0=e8m0,esr=exp2floormaxabs)", "duplicate key 'k0'"),
    ("grit1(k0=32,s0=e8m0,esr=exp2floormaxabs)", "missing required key e"),
    ("grit1(e=e2m1,s0=e8m0,esr=exp2floormaxabs)", "missing required key k0"),
    ("grit1(e=e2m1,k0=32,esr=exp2floormaxabs)", "missing required key s0"),
    ("grit1(e=e2m1,k0=32,s0=e8m0)", "missing required key esr"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,k1=4,esr=ratiomaxabs)", "'k1' without 's1'"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,s1=binary32,esr=ratiomaxabs)", "'s1' without 'k1'"),
    ("grit1(e=u4,k0=32,s0=u6,zpc=minus1,esr=affineminmax)", "'zpc' without 'zp'"),
    ("grit1(e=u4,k0=32,s0=u6,zps=shared,esr=affineminmax)", "'zps' without 'zp'"),
    ("grit1(e=u4,k0=32,s0=u6,zp=u4,zps=l1,esr=affineminmax)", "without a level-1 scale"),
])
def test_rule_6_rejections_name_the_key(text, needle):
    with pytest.raises(GritValueError) as ei:
        G.parse_grade(text)
    assert needle in str(ei.value)


@pytest.mark.parametrize("text,needle", [
    ("grit1(e=e2m1,k0=0,s0=e8m0,esr=exp2floormaxabs)", "'k0'"),
    ("grit1(e=e2m1,k0=65536,s0=e8m0,esr=exp2floormaxabs)", "'k0'"),
    ("grit1(e=e2m1,k0=+32,s0=e8m0,esr=exp2floormaxabs)", "'k0'"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=maxabs)", "'esr'"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=ratiomaxabs,ao=pairwise(0))", "'ao'"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=ratiomaxabs,dt=e4m3)", "'dt'"),
    ("grit1(e=s8,k0=32,s0=binary16,sp=2:4,esr=ratiomaxabs)", "'sp'"),
    ("grit1(e=s8,k0=32,s0=binary16,sp=2:8:u2:asclsb,esr=ratiomaxabs)", "'sp'"),
    ("grit1(e=s8,k0=32,s0=binary16,sp=5:4:u2:asclsb,esr=ratiomaxabs)", "'sp'"),
    ("grit1(e=bogus,k0=32,s0=e8m0,esr=ratiomaxabs)", "'e'"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=ratiomaxabs", "grit1("),
    ("mxfp4(e=e2m1)", "grit1("),
    ("grit1(e=e2m1,,k0=32,s0=e8m0,esr=ratiomaxabs)", "empty field"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=ratiomaxabs,zp=u4,sp=2:4:u2:asclsb)", "one aux plane"),
])
def test_value_rejections(text, needle):
    with pytest.raises(GritValueError) as ei:
        G.parse_grade(text)
    assert needle in str(ei.value)


def test_decode_projections():
    assert G.GRADE_MXFP4.decode_projection == S.MXFP4_DECODE_PROJECTION
    assert G.GRADE_MXFP4_RNE.decode_projection == S.MXFP4_DECODE_PROJECTION
    assert G.GRADE_Q4KS.decode_projection == S.Q4KS_DECODE_PROJECTION
    assert G.GRADE_NVF4.decode_projection == G.GRADE_NVF4_RTZ.decode_projection
    assert "sp=2:4:u2:asclsb" in G.GRADE_I8S24.decode_projection
    assert "zp=" not in G.GRADE_I8S24.decode_projection


def test_frame_fields_implied():
    f = G.GRADE_Q4KS.frame
    assert (f.n_levels, f.flags, f.elem, f.scale0, f.scale1, f.zp_fmt, f.k0, f.k1) == (
        2, 0x21, 0x43E3, 0x43E5, 0x356F, 0x43E5, 32, 8)
    s = G.GRADE_I8S24.frame
    assert (s.flags, s.sp_n, s.sp_m, s.sp_meta_fmt, s.sp_order) == (0x04, 2, 4, 1, 1)
    m = G.parse_grade("grit1(e=u4,k0=128,s0=binary16,zp=u4,zpc=minus1,ct=pad8,po=msb,"
                      "esr=affineminmax)").frame
    assert m.flags == 0x01 | 0x02 | 0x08 and m.container == 1


def _acc(**kw):
    base = "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs"
    return G.parse_grade(base + "".join(f",{k}={v}" for k, v in kw.items()) + ")")


def test_refinement_order():
    seq, pw4, pw8, tree, unspec = (_acc(ao="seq"), _acc(ao="pairwise(4)"), _acc(ao="pairwise(8)"),
                                   _acc(ao="tree"), _acc())
    assert G.refines(seq, pw4) and G.refines(pw4, tree) and G.refines(tree, unspec)
    assert G.refines(seq, unspec) and G.refines(seq, seq)
    assert not G.refines(unspec, seq) and not G.refines(tree, pw4)
    assert not G.refines(pw4, pw8) and not G.refines(pw8, pw4)
    pres, ftz = _acc(asub="preserve"), _acc(asub="ftz")
    assert not G.refines(pres, ftz) and not G.refines(ftz, pres)
    assert G.refines(pres, unspec)
    # a different representation is never a refinement
    assert not G.refines(G.GRADE_MXFP4, G.GRADE_MXFP4_RNE)


def test_join():
    assert G.join(_acc(ao="seq"), _acc(ao="pairwise(4)"))["ao"] == "pairwise(4)"
    assert G.join(_acc(ao="pairwise(4)"), _acc(ao="pairwise(8)"))["ao"] == "tree"
    assert G.join(_acc(asub="preserve"), _acc(asub="ftz"))["asub"] == "any"
    assert G.join(_acc(afma="fused"), _acc(afma="unfused"))["afma"] == "unspec"
    j = G.join(_acc(ao="seq", at="binary32"), _acc(ao="seq", at="binary32"))
    assert j.canonical == _acc(ao="seq", at="binary32").canonical
    with pytest.raises(GritValueError, match="esr"):
        G.join(G.GRADE_MXFP4, G.GRADE_MXFP4_RNE)


def test_unregistered_format_word_spelling():
    g = G.parse_grade("grit1(e=0x2065,k0=32,s0=0X4807,esr=exp2floormaxabs)")
    assert g.canonical == "grit1(e=e3m2,k0=32,s0=e8m0,esr=exp2floormaxabs)"
    h = G.parse_grade("grit1(e=0x03e5,k0=32,s0=e8m0,esr=exp2floormaxabs)")  # s6
    assert h["e"] == "0x03e5"
    with pytest.raises(GritValueError):
        G.parse_grade("grit1(e=0x2040,k0=32,s0=e8m0,esr=exp2floormaxabs)")  # 1-bit


# --------------------------------------------------------- §4.4 diagnostics, by rule

@pytest.mark.parametrize("text,needle", [
    ("grit1(e=e2m1,k0=32),s0=e8m0,esr=ratiomaxabs)", "unbalanced ')'"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=ratiomaxabs,ao=pairwise(4)", "unbalanced '('"),
    ("grit1(e=e2m1,k0=,s0=e8m0,esr=ratiomaxabs)", "'k0' has an empty value"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=ratiomaxabs,ao=)", "'ao' has an empty value"),
    ("grit1(e=s8,k0=32,s0=binary16,sp=a:4:u2:asclsb,esr=ratiomaxabs)",
     "N and M must be decimal integers"),
    ("grit1(e=s8,k0=32,s0=binary16,sp=2:4:u8:asclsb,esr=ratiomaxabs)",
     "metadata format must be u2 or u4"),
    ("grit1(e=s8,k0=32,s0=binary16,sp=2:4:u2:sorted,esr=ratiomaxabs)",
     "order must be unordered or asclsb"),
    ("grit1(e=s8,k0=32,s0=binary16,sp=0:4:u2:asclsb,esr=ratiomaxabs)", "need 1 <= N <= M"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs,ao=pairwise(x))", "'ao'"),
    ("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs,ao=bogus)", "'ao'"),
])
def test_each_rejection_says_which_rule(text, needle):
    with pytest.raises(GritValueError) as ei:
        G.parse_grade(text)
    assert needle in str(ei.value)


@pytest.mark.parametrize("n,m,meta", [(2, 4, "u2"), (1, 4, "u2"), (4, 4, "u2"), (2, 16, "u4"),
                                      (8, 16, "u4")])
def test_sparsity_within_its_metadata_bits(n, m, meta):
    # §3.3: an index below M fits the metadata's bits (u2: M <= 4, u4: M <= 16)
    g = G.parse_grade(f"grit1(e=s8,k0=32,s0=binary16,sp={n}:{m}:{meta}:asclsb,esr=ratiomaxabs)")
    assert g["sp"] == f"{n}:{m}:{meta}:asclsb"
    assert G.sparsity(g)[:2] == (n, m)


@pytest.mark.parametrize("m,meta", [(5, "u2"), (8, "u2"), (17, "u4")])
def test_sparsity_past_its_metadata_bits(m, meta):
    with pytest.raises(GritValueError, match="does not fit"):
        G.parse_grade(f"grit1(e=s8,k0=32,s0=binary16,sp=1:{m}:{meta}:asclsb,esr=ratiomaxabs)")


def test_missing_keys_are_all_named_in_one_message():
    with pytest.raises(GritValueError) as ei:
        G.parse_grade("grit1(e=e2m1)")
    msg = str(ei.value)
    assert msg.startswith("missing required keys ") and all(k in msg for k in ("k0", "s0", "esr"))


def test_pairwise_k_is_canonical_decimal():
    g = G.parse_grade("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs,ao=pairwise(008))")
    assert g["ao"] == "pairwise(8)"
    assert "pairwise(8)" in g.canonical


def test_a_grade_string_must_be_text():
    with pytest.raises(GritValueError, match="must be text"):
        G.parse_grade(5)  # type: ignore[arg-type]


def test_a_grade_prints_as_its_canonical_string():
    assert str(G.GRADE_MXFP4) == S.GRADES["GRADE_MXFP4"][0]


# ----------------------------------------------------------------- resolve()

@pytest.mark.parametrize("text,name", [("nvfp4", "GRADE_NVF4"), ("NVFP4_RTZ", "GRADE_NVF4_RTZ"),
                                       ("q4_k", "GRADE_Q4KS"), ("mxfp4", "GRADE_MXFP4"),
                                       (" grade_i8s24 ", "GRADE_I8S24")])
def test_resolve_names_and_aliases(text, name):
    assert G.resolve(text).canonical == S.GRADES[name][0]


def test_resolve_mxfp8_is_the_ocp_mx_grade():
    # OCP MX v1.0: E4M3 elements, one E8M0 scale per 32, the floor scale rule
    g = G.resolve("mxfp8")
    assert (g["e"], g["k0"], g["s0"], g["esr"]) == ("e4m3", "32", "e8m0", "exp2floormaxabs")


def test_resolve_refuses_a_family_name_with_its_reason():
    with pytest.raises(GritValueError) as ei:
        G.resolve("fp8")
    assert "FP8 names a family" in str(ei.value) and "mxfp4" in str(ei.value)


def test_resolve_an_unknown_name_lists_the_names():
    with pytest.raises(GritValueError) as ei:
        G.resolve("bogus")
    msg = str(ei.value)
    assert msg.startswith("unknown grade name 'bogus'")
    assert all(n.removeprefix("GRADE_").lower() in msg for n in S.GRADES) and "mxfp8" in msg


def test_resolve_text_that_is_no_name_is_parsed_as_a_grade_string():
    with pytest.raises(GritValueError, match="grit1"):
        G.resolve("e2m1.k0")
    assert G.resolve(" GRIT1(E=E2M1, K0=32, S0=E8M0, ESR=EXP2FLOORMAXABS) ") == G.GRADE_MXFP4


# ---------------------------------------------------- §4.3: join is a least upper bound

AO = ["seq", "pairwise(4)", "pairwise(8)", "tree", "unspec"]
ASUB = ["preserve", "ftz", "any"]


@pytest.mark.parametrize("a", AO)
@pytest.mark.parametrize("b", AO)
def test_join_is_commutative_and_an_upper_bound_on_ao(a, b):
    x, y = _acc(ao=a), _acc(ao=b)
    j = G.join(x, y)
    assert j == G.join(y, x)
    assert G.refines(x, j) and G.refines(y, j)
    # least: any common upper bound among the values is above the join
    for c in AO:
        z = _acc(ao=c)
        if G.refines(x, z) and G.refines(y, z):
            assert G.refines(j, z), (a, b, c)


@pytest.mark.parametrize("a", ASUB)
@pytest.mark.parametrize("b", ASUB)
def test_join_on_the_subnormal_axis(a, b):
    j = G.join(_acc(asub=a), _acc(asub=b))
    assert j == G.join(_acc(asub=b), _acc(asub=a))
    assert j["asub"] == (a if a == b else "any")


@pytest.mark.parametrize("field,value", [("k0", "1"), ("k0", "65535"), ("k1", "0"),
                                         ("k1", "65535")])
def test_k_fields_accept_their_whole_16_bit_range(field, value):
    # §3.1: k0 is a u16 that must be at least 1; k1 a u16 (0: one scale per tensor)
    extra = ",s1=binary32" if field == "k1" else ""
    k0 = value if field == "k0" else "32"
    k1 = f",k1={value}" if field == "k1" else ""
    g = G.parse_grade(f"grit1(e=e2m1,k0={k0},s0=e4m3{k1}{extra},esr=ratiomaxabs)")
    assert g[field] == value


def test_k1_past_its_16_bit_field_is_refused():
    with pytest.raises(GritValueError, match="'k1' must be in 0..65535"):
        G.parse_grade("grit1(e=e2m1,k0=16,s0=e4m3,k1=65536,s1=binary32,esr=ratiomaxabs)")


def test_pairwise_one_is_the_smallest_pairwise():
    g = G.parse_grade("grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs,ao=pairwise(1))")
    assert g["ao"] == "pairwise(1)"


@pytest.mark.parametrize("sp,needle", [("1:256:u4:asclsb", "need 1 <= N <= M <= 255"),
                                       ("1:255:u4:asclsb", "does not fit"),
                                       ("1:17:u4:asclsb", "does not fit")])
def test_sparsity_m_limits(sp, needle):
    with pytest.raises(GritValueError, match=needle):
        G.parse_grade(f"grit1(e=s8,k0=32,s0=binary16,sp={sp},esr=ratiomaxabs)")


def test_a_field_without_a_value():
    with pytest.raises(GritValueError, match="field 'e' is not key=value"):
        G.parse_grade("grit1(e,k0=32,s0=e8m0,esr=ratiomaxabs)")
