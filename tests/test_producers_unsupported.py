"""Honest unknowns over real producers' files: optimum-quanto, torchao and
HQQ checkpoints (fixtures/producers, MANIFEST.json), which no convention
recognises, give one unsupported_convention warning naming the method (or
the tensors) and how many tensors were not checked; never silence, never a
disagreement or structural finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scan_exit import scan_exit as _exit

import grit_scan
from grit_scan.writers import Raw, write_safetensors

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
BAD = {"structural", "disagreement"}

# the tiny llama of the corpus has 2 layers of 7 linear modules (q, k, v, o,
# gate, up, down): 14 quantised weights.  quanto stores each as ._data (and
# its ._scale); torchao as _weight_qdata, with an I8 _weight_zero_point [out, 1
# or groups] for the integer configs; HQQ as W_q.
CASES = {
    "quanto-qint2": (None, 14, "weight._data"),
    "quanto-qint4": (None, 14, "weight._data"),
    "quanto-qint8": (None, 14, "weight._data"),
    "quanto-qfloat8": (None, 14, "weight._data"),
    "hqq-4bit-g64": (None, 14, "W_q"),
    "torchao-int8-weight-only": ("torchao", 28, None),
    "torchao-float8-weight-only": ("torchao", 14, None),
    "torchao-intx-int4-g128": ("torchao", 28, None),
}


@pytest.mark.parametrize("sub", list(CASES))
@pytest.mark.parametrize("deep", [False, True])
def test_unknown_producers_are_named_not_passed(sub: str, deep: bool) -> None:
    method, count, example = CASES[sub]
    r = grit_scan.scan([str(P / sub)], deep=deep)
    assert [(f.kind, f.message) for f in r.findings if str(f.severity) in BAD] == []
    (f,) = [f for f in r.findings if str(f.kind) == "unsupported_convention"]
    assert str(f.severity) == "warning" and f.detail["count"] == count
    if method is not None:
        assert f"'{method}'" in f.message and f.path.endswith("config.json")
        assert "declared_mismatch" not in {str(x.kind) for x in r.findings}
    else:
        assert example is not None and example in f.message
    assert _exit(P / sub, "graded", deep) == 3 and _exit(P / sub, "simple", deep) == 1


def _tiny(tmp: Path, tensors: dict[str, Raw], qc: dict[str, object] | None) -> Path:
    tmp.mkdir()
    cfg: dict[str, object] = {"model_type": "llama"}
    if qc is not None:
        cfg["quantization_config"] = qc
    (tmp / "config.json").write_text(json.dumps(cfg))
    write_safetensors(tmp / "model.safetensors", tensors)
    return tmp


def test_int8_beside_a_scale_is_unchecked_alone_it_is_not(tmp_path: Path) -> None:
    beside = _tiny(tmp_path / "beside", {
        "m.proj.qdata": Raw("I8", [4, 4], bytes(16)),
        "m.proj.my_scale": Raw("F32", [4, 1], bytes(16)),
        "m.norm.weight": Raw("F32", [4], bytes(16))}, None)
    alone = _tiny(tmp_path / "alone", {
        "m.proj.qdata": Raw("I8", [4, 4], bytes(16)),
        "m.norm.weight": Raw("F32", [4], bytes(16))}, None)
    (f,) = [f for f in grit_scan.scan([str(beside)]).findings]
    assert str(f.kind) == "unsupported_convention" and f.detail["count"] == 1
    assert "m.proj.qdata" in f.message
    assert list(grit_scan.scan([str(alone)]).findings) == []


def test_a_known_method_with_nothing_quantised_stays_a_declared_mismatch(
        tmp_path: Path) -> None:
    floats = {"m.proj.weight": Raw("F32", [4, 4], bytes(64))}
    known = grit_scan.scan([str(_tiny(tmp_path / "k", floats, {"quant_method": "gptq"}))])
    unknown = grit_scan.scan([str(_tiny(tmp_path / "u", floats, {"quant_method": "eetq"}))])
    assert [str(f.kind) for f in known.findings] == ["declared_mismatch"]
    (f,) = unknown.findings
    assert str(f.kind) == "unsupported_convention" and "'eetq'" in f.message
    assert f.detail["count"] == 0
