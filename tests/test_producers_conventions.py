"""Issue 12 conventions over files the real producers wrote (fixtures/producers,
MANIFEST.json): kinds, the tensors they name, and both exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from scan_exit import scan_exit

import grit_scan

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
BAD = {"structural", "disagreement"}


def _scan(sub: str, deep: bool = False) -> grit_scan.Report:
    return grit_scan.scan([str(P / sub)], deep=deep)


def _kinds(r: grit_scan.Report) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for f in r.findings:
        out.setdefault(str(f.kind), []).append(f)
    return out


def _exit(sub: str, policy: str, deep: bool = False) -> int:
    return scan_exit(P / sub, policy, deep)


# a legacy GPTQ file without checkpoint_format is a disagreement without --deep
# (§13: an undeclared zero-point convention), however correct its bytes
_UNDECLARED = "gptq/v1-legacy-4bit-g128"


@pytest.mark.parametrize("sub", ["ct/w8a8-int8", "ct/w4afp8", "ct/mxfp8", "ct/fp8-block",
                                 "bnb/int8", "modelopt/nvfp4", "gptq/v1-8bit-perchannel",
                                 _UNDECLARED, "gptq/v2-4bit-g32-asym"])
@pytest.mark.parametrize("deep", [False, True])
def test_correct_producer_files_give_no_structural_or_disagreement(sub: str, deep: bool) -> None:
    # FP4 / FP6 / FP8 single-block rows: correct files as the producers wrote them
    if sub == _UNDECLARED and not deep:
        pytest.skip("an undeclared zero-point convention is a disagreement without --deep")
    bad = [(f.kind, f.message) for f in _scan(sub, deep).findings if str(f.severity) in BAD]
    assert bad == []


@pytest.mark.parametrize("sub,conv", [("ct/w8a8-int8", "compressed-tensors-int"),
                                      ("ct/w4afp8", "compressed-tensors-int"),
                                      ("ct/mxfp8", "compressed-tensors-mxfp8")])
def test_fp4_recognised_with_a_descriptor(sub: str, conv: str) -> None:
    arts = [a for a in _scan(sub).artifacts if a.quantized]
    qs = [q for a in arts for q in a.quantized]
    assert len(qs) == 14 and all(q.convention == conv and q.desc is not None for q in qs)
    assert "declared_mismatch" not in _kinds(_scan(sub))


def test_fp4_bnb_int8_refused_with_clause() -> None:
    r = _scan("bnb/int8")
    (f,) = _kinds(r)["not_representable"]
    assert "§8.1" in f.message and "SCB" in f.message and "1/127" in f.message
    assert "declared_mismatch" not in _kinds(r)
    assert _exit("bnb/int8", "graded") == 3 and _exit("bnb/int8", "simple") == 1


def test_fp8_single_block_rows_expressed() -> None:
    r = _scan("ct/fp8-block")
    arts = [a for a in r.artifacts if a.quantized]
    named = {q.name: q for a in arts for q in a.quantized}
    for n in ("model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight",
              "model.layers.1.self_attn.k_proj.weight", "model.layers.1.self_attn.v_proj.weight"):
        q = named[n]
        assert q.desc is not None and q.desc.k0 == 128 and q.planes and q.planes[1]
        assert q.planes[1].broadcast == 64  # [1, 2] scale row repeated for the 64 rows
    notes = [i.message for a in r.artifacts for i in a.issues]
    assert not any("has no scale tensor beside it" in m for m in notes)
    assert all(a.unquantized.get("F8_E4M3", 0) == 0 for a in r.artifacts)


def test_m3_ct_nvfp4_divisor_not_a_registered_grade() -> None:
    # the module whose pieces share one shard (k_proj): no registered grade
    r = _scan("ct/nvfp4a16-sharded")
    qs = [q for a in r.artifacts for q in a.quantized
          if q.name == "model.layers.0.self_attn.k_proj.weight"]
    (q,) = qs
    assert q.grade is None and q.desc is None
    assert "DIVISOR" in (q.reason or "") and "MULTIPLIER" in (q.reason or "")
    nr = [f for f in _kinds(r)["not_representable"] if "DIVISOR" in f.message]
    assert nr and all("§8.1" in f.message for f in nr)


def test_modelopt_nvfp4_keeps_nvf4() -> None:
    qs = [q for a in _scan("modelopt/nvfp4").artifacts for q in a.quantized]
    assert qs and all(q.convention == "modelopt-nvfp4" and q.grade is not None
                      and "s1=binary32" in str(q.grade) for q in qs)


@pytest.mark.parametrize("sub", ["gptq/v1-legacy-4bit-g128", "gptq/v2-4bit-g32-asym",
                                 "gptq/v1-8bit-perchannel"])
def test_zp_bytes_that_agree_give_no_finding_under_deep(sub: str) -> None:
    # FP6: no checkpoint_format is v1, and v1 bytes agree
    k = _kinds(_scan(sub, deep=True))
    assert "zp_convention_mismatch" not in k and "zp_convention_unverified" not in k


def test_zp_undeclared_is_a_disagreement_without_deep() -> None:
    """§13: an undeclared zero-point convention is a disagreement; the message
    says what is assumed and gives the one-line fix.  Under --deep the v1
    bytes of this AutoGPTQ file agree with the assumption and settle it."""
    k = _kinds(_scan(_UNDECLARED))
    (f,) = k["zp_convention_undeclared"]
    assert str(f.severity) == "disagreement" and "zp_convention_unverified" not in k
    assert "assumes v1" in f.message and '"checkpoint_format": "gptq"' in f.message
    assert "quantize_config.json" in f.message and "--deep" in f.message
    assert f.detail["count"] == 14
    assert _exit(_UNDECLARED, "graded") == 2 and _exit(_UNDECLARED, "simple") == 1
    assert _exit(_UNDECLARED, "graded", deep=True) == 3
    assert _exit(_UNDECLARED, "simple", deep=True) == 1


def test_zp_declared_is_a_warning_without_deep() -> None:
    r = _scan("gptq/v1-8bit-perchannel")
    (f,) = _kinds(r)["zp_convention_unverified"]
    assert "--deep" in f.message and "zp_convention_undeclared" not in _kinds(r)


def test_m2_declared_v1_stores_v2() -> None:
    sub = "gptq/m2-declares-v1-stores-v2"
    (f,) = _kinds(_scan(sub, deep=True))["zp_convention_mismatch"]
    assert "v1" in f.message and "v2" in f.message and str(f.severity) == "disagreement"
    expected = {f"model.layers.{i}.{m}.qzeros" for i in (0, 1) for m in (
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")}
    assert set(f.detail["tensors"]) == expected
    assert _exit(sub, "graded", deep=True) == 2 and _exit(sub, "simple", deep=True) == 1


def test_8bit_message_does_not_claim_dense_nibbles() -> None:
    r = _scan("gptq/v1-8bit-perchannel")
    msgs = [f.message for f in r.findings] + [i.message for a in r.artifacts for i in a.issues]
    assert not any("nibble" in m for m in msgs)
    notes = [i.message for a in r.artifacts for i in a.issues if "8-bit GPTQ" in i.message]
    assert len(notes) == 14 and all("256 zero-point bytes" in m or "zero-point bytes" in m
                                    for m in notes)


def test_wrong_bits_is_a_bits_mismatch() -> None:
    sub = "gptq/wrong-bits-config-3"
    k = _kinds(_scan(sub))
    (f,) = k["declared_mismatch"]
    assert f.detail["field"] == "bits" and f.detail["declared"] == "3"
    assert f.detail["actual"] == "4" and f.detail["count"] == 14
    assert "group" not in f.message
    assert _exit(sub, "graded") == 2 and _exit(sub, "simple") == 1


def test_w4afp8_deep_judges_int4_values_not_the_int8_container() -> None:
    """compressed-tensors W4AFP8 stores int4 values sign-extended in int8
    bytes (declared bits 4): the probes judge the codes' reach against int4's
    range of 7, not int8's 127, so a correct file gives no probe_warning."""
    r = _scan("ct/w4afp8", deep=True)
    assert "probe_warning" not in _kinds(r)
    assert _exit("ct/w4afp8", "graded", deep=True) == 3
    assert _exit("ct/w4afp8", "simple", deep=True) == 1


def test_probe_reach_is_judged_against_the_value_width() -> None:
    from grit_scan.codec import grade as G
    from grit_scan.codec.descriptor import from_grade
    from grit_scan.codec.probes import probe

    d = from_grade(G.parse_grade("grit1(e=s8,k0=128,s0=binary32,esr=ratiomaxabs)"), 1)
    scales = bytes(4) * 2  # two groups of 128, scale 0.0 (only the codes are judged)

    def codes(top: int) -> bytes:
        return bytes([top] + [0] * 255)

    # int4 values: 7 reaches 7, so no warning; 1 never exceeds half of 7
    assert probe(d, (2, 128), [codes(7), scales, b"", b""], 4) == []
    (w,) = probe(d, (2, 128), [codes(1), scales, b"", b""], 4)
    assert "(4-bit values) never exceed 1 of a range of 7" in w
    # read as the s8 container itself, 7 of 127 is suspicious
    (w,) = probe(d, (2, 128), [codes(7), scales, b"", b""])
    assert "never exceed 7 of a range of 127" in w


@pytest.mark.parametrize("sub", ["modelopt/nvfp4", "modelopt/fp8"])
def test_modelopt_activation_scale_is_part_of_its_module(sub: str) -> None:
    """ModelOpt writes each quantised linear as weight, weight_scale,
    (weight_scale_2,) and input_scale (MANIFEST.md); the 7 BF16 tensors
    of the tiny model (norms, embeddings) are its only unquantised ones, in
    NVFP4 as in FP8: input_scale, the activations' scale, belongs to the
    module, never to the unquantised count."""
    import safetensors

    (a,) = [a for a in _scan(sub).artifacts if a.format.value == "safetensors"]
    with safetensors.safe_open(str(P / sub / "model.safetensors"), "np") as f:
        dtypes = {n: f.get_slice(n).get_dtype() for n in f.keys()}
    modules = {n.removesuffix(".input_scale") for n in dtypes if n.endswith(".input_scale")}
    rest = [dt for n, dt in dtypes.items() if n.rpartition(".")[0] not in modules]
    assert len(modules) == len(a.quantized) == 14
    assert rest == ["BF16"] * 7 and a.unquantized == {"BF16": 7}
