"""NVFP4 as compressed-tensors (nvfp4-pack-quantized: ``weight_packed`` U8
[out, in/2], ``weight_scale`` F8_E4M3 [out, in/16], ``weight_global_scale``
F32, a divisor) and NVIDIA ModelOpt (``weight`` U8, ``weight_scale``
F8_E4M3, ``weight_scale_2`` F32, a multiplier) write it
(conventions/kinds/_nvfp4.py, ct_nvfp4.py, modelopt_nvfp4.py); the
layouts are those of fixtures/producers/ct/nvfp4a16-sharded and
modelopt/nvfp4.  Files are written byte by byte (numpy has no FP8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mut_conv_tree import of, only, scan, write_raw

MOD = "model.layers.0.self_attn.k_proj"
CT = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized"}
MODELOPT = {"producer": {"name": "modelopt", "version": "0.47.0"},
            "quantization": {"quant_algo": "NVFP4", "group_size": 16}}
# GRADE_NVF4 (§10.3): E2M1, blocks of 16 with an E4M3 scale, one binary32 scale1 (k1 = 0)
NVF4 = "grit1(e=e2m1,k0=16,s0=e4m3,k1=0,s1=binary32,esr=ratiomaxabs)"
MISSING = ("the per-tensor global scale tensor is missing: decode would use a wrong scale "
           "(transformers#48372)")


def ct(scale_shape=(64, 16), glob: bool = True, data_shape=(64, 128)):
    t = {f"{MOD}.weight_packed": ("U8", data_shape),
         f"{MOD}.weight_scale": ("F8_E4M3", scale_shape)}
    if glob:
        t[f"{MOD}.weight_global_scale"] = ("F32", (1,))
    return t


@pytest.mark.parametrize("rows,scales,group", [(64, 16, 16), (48, 32, 8)])
def test_ct_global_divisor_refused_with_the_bytes_group(tmp_path: Path, rows, scales,
                                                         group) -> None:
    """in = 2·128 = 256 over the scales of a row: 256/16 = 16 (256/32 = 8),
    whatever is declared; the group runs along the row, not down the rows."""
    qs, issues = scan(write_raw(tmp_path, ct((rows, scales), data_shape=(rows, 128)), CT))
    q = only(qs)
    assert (q.name, tuple(q.shape), q.grade) == (f"{MOD}.weight", (rows, 256), None)
    nr = only(of(issues, "not_representable"))
    assert nr.detail["actual_group_size"] == group and nr.detail["would_be"] == NVF4
    assert nr.detail["clause"] == "§8.1"


@pytest.mark.parametrize("scale_shape", [(64, 24), (1024,), (64, 0)],
                         ids=["no-whole-group", "1-d", "empty"])
def test_ct_scales_that_give_no_group(tmp_path: Path, scale_shape) -> None:
    _, issues = scan(write_raw(tmp_path, ct(scale_shape), CT))
    assert only(of(issues, "not_representable")).detail["actual_group_size"] is None


def test_ct_without_global_scale_is_nvf4_noted(tmp_path: Path) -> None:
    """No divisor beside it: the registered NVF4 grade, named after the
    module's weight, and the missing global scale noted."""
    qs, issues = scan(write_raw(tmp_path, ct(glob=False), CT))
    q = only(qs)
    assert q.name == f"{MOD}.weight" and q.convention == "compressed-tensors-nvfp4"
    assert q.grade.canonical == NVF4 and tuple(q.shape) == (64, 256)
    assert q.notes == (MISSING,) and of(issues, "not_representable") == []


@pytest.mark.parametrize("scale2", [True, False])
def test_modelopt_global_multiplier(tmp_path: Path, scale2: bool) -> None:
    t = {f"{MOD}.weight": ("U8", (64, 128)), f"{MOD}.weight_scale": ("F8_E4M3", (64, 16))}
    if scale2:
        t[f"{MOD}.weight_scale_2"] = ("F32", ())
    qs, _ = scan(write_raw(tmp_path, t, None, hf_quant_config=MODELOPT))
    q = only(qs)
    assert (q.name, q.convention, q.grade.canonical) == (f"{MOD}.weight", "modelopt-nvfp4", NVF4)
    assert tuple(q.shape) == (64, 256)
    assert q.notes == (() if scale2 else (MISSING,))
    assert (q.planes[2] is not None) is scale2


@pytest.mark.parametrize("who", ["ct", "modelopt"])
def test_data_not_2d_is_a_size_issue(tmp_path: Path, who: str) -> None:
    if who == "ct":
        t, qc, files = ct(data_shape=(8192,)), CT, {}
        data = f"{MOD}.weight_packed"
    else:
        t = {f"{MOD}.weight": ("U8", (8192,)), f"{MOD}.weight_scale": ("F8_E4M3", (64, 16))}
        qc, files, data = None, {"hf_quant_config": MODELOPT}, f"{MOD}.weight"
    qs, issues = scan(write_raw(tmp_path, t, qc, **files))
    assert qs == []
    s = only(of(issues, "size"))
    assert s.message == f"{data}: NVFP4 data is [out, in/2]; got [8192]" and s.tensor == MOD


def test_a_u8_weight_with_a_float_scale_is_not_nvfp4(tmp_path: Path) -> None:
    """ModelOpt's NVFP4 scale is F8_E4M3; a U8 weight beside a float32
    weight_scale is no convention's."""
    t = {f"{MOD}.weight": ("U8", (64, 128)), f"{MOD}.weight_scale": ("F32", (64, 16))}
    qs, _ = scan(write_raw(tmp_path, t, None, hf_quant_config=MODELOPT))
    assert qs == []
