"""GPTQ and AWQ GEMM modules (conventions/kinds/_packed_int.py, gptq.py,
awq.py) written in their producers' layouts: GPTQ qweight int32
[in·b/32, out], scales float16 [groups, out], qzeros int32
[groups, out·b/32], g_idx int32 [in] (AutoGPTQ / GPTQModel); AWQ GEMM
qweight int32 [in, out·b/32], scales [groups, out], qzeros
[groups, out·b/32] (AutoAWQ WQLinear_GEMM).  The expected bit widths, input
widths and group sizes are the packing arithmetic of those shapes (32 bits a
word), the expected byte counts the §7.3 plane equations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mut_conv_tree import of, only, scan, write

MOD = "model.layers.0.mlp.up_proj"
I32, F16 = np.int32, np.float16


def gptq(in_: int, out: int, bits: int, groups: int, g_idx: bool = True,
         qzeros: bool = True) -> dict[str, np.ndarray]:
    t = {f"{MOD}.qweight": np.zeros((in_ * bits // 32, out), I32),
         f"{MOD}.scales": np.ones((groups, out), F16)}
    if qzeros:
        t[f"{MOD}.qzeros"] = np.zeros((groups, out * bits // 32), I32)
    if g_idx:
        t[f"{MOD}.g_idx"] = (np.arange(in_) * groups // in_).astype(I32)
    return t


def awq(in_: int, out: int, bits: int, groups: int) -> dict[str, np.ndarray]:
    return {f"{MOD}.qweight": np.zeros((in_, out * bits // 32), I32),
            f"{MOD}.scales": np.ones((groups, out), F16),
            f"{MOD}.qzeros": np.zeros((groups, out * bits // 32), I32)}


def refused(tmp_path: Path, tensors: dict[str, np.ndarray], qc: dict[str, object]):
    """The module's QTensor and its not_representable (or 8-bit note) issue."""
    qs, issues = scan(write(tmp_path, tensors, qc))
    q = only(qs)
    iss = only([i for i in issues if i.tensor == q.name
                and i.code in ("not_representable", "note")])
    return q, iss


@pytest.mark.parametrize("bits", [2, 4])
def test_g_idx_alone_settles_the_width(tmp_path: Path, bits: int) -> None:
    """No qzeros, a declared width the bytes contradict: qweight's rows
    against g_idx's length give b = 32·rows/in.  36 output columns: 32·36 is
    no multiple of 256, so only the rows give the width."""
    q, iss = refused(tmp_path, gptq(256, 36, bits, 8, qzeros=False),
                     {"quant_method": "gptq", "bits": 3, "group_size": 32})
    assert iss.detail["bits"] == bits
    assert iss.detail["bits_from"] == "qweight rows against g_idx length"
    assert q.convention == "gptq" and tuple(q.shape) == (256, 36)
    assert q.grade is not None and q.grade["e"] == f"u{bits}" and q.grade["k0"] == "32"


def test_rows_as_many_as_g_idx_say_32_bits(tmp_path: Path) -> None:
    """qweight as many rows as g_idx is long: 32 · 256 / 256 = 32 bits a
    value, which no zero-point plane of GRIT holds (no grade)."""
    t = {f"{MOD}.qweight": np.zeros((256, 16), I32),
         f"{MOD}.scales": np.ones((2, 16), F16),
         f"{MOD}.g_idx": np.zeros(256, I32)}
    q, iss = refused(tmp_path, t, {"quant_method": "gptq", "bits": 4})
    assert iss.detail["bits"] == 32 and q.grade is None
    assert "packs its 32-bit zero points" in q.reason


def test_qzeros_as_wide_as_scales_say_32_bits(tmp_path: Path) -> None:
    t = {f"{MOD}.qweight": np.zeros((256, 16), I32),
         f"{MOD}.scales": np.ones((2, 16), F16),
         f"{MOD}.qzeros": np.zeros((2, 16), I32)}
    q, iss = refused(tmp_path, t, {"quant_method": "gptq", "bits": 4})
    assert iss.detail["bits"] == 32
    assert iss.detail["bits_from"] == "qzeros columns against scales columns"


def test_awq_width_from_the_columns_over_a_wrong_declaration(tmp_path: Path) -> None:
    """AWQ GEMM 4-bit: qweight [256, 64/8], scales [2, 64]: 32 / (64/8) = 4
    bits, whatever the config says."""
    q, iss = refused(tmp_path, awq(256, 64, 4, 2),
                     {"quant_method": "awq", "bits": 2, "group_size": 128})
    assert (iss.detail["bits"], iss.detail["bits_from"]) == (
        4, "qweight columns against scales columns")
    assert q.convention == "awq" and tuple(q.shape) == (256, 64)
    assert q.grade["e"] == "u4" and q.grade["k0"] == "128"


def test_shapes_that_fit_neither_packing(tmp_path: Path) -> None:
    """qweight [256, 24] against scales [2, 64]: 64 is no multiple of 24, so
    neither GPTQ (equal columns) nor AWQ (scales columns a divisor of 32
    times qweight's) packs them."""
    t = {f"{MOD}.qweight": np.zeros((256, 24), I32),
         f"{MOD}.scales": np.ones((2, 64), F16),
         f"{MOD}.qzeros": np.zeros((2, 8), I32)}
    qs, issues = scan(write(tmp_path, t, {"quant_method": "awq", "bits": 4}))
    assert qs == []
    assert "fit neither GPTQ nor AWQ packing" in only(of(issues, "size")).message


def test_awq_columns_whose_ratio_does_not_divide_32(tmp_path: Path) -> None:
    """scales 3 times as wide as qweight: 32/3 is no whole width."""
    t = {f"{MOD}.qweight": np.zeros((256, 8), I32),
         f"{MOD}.scales": np.ones((2, 24), F16)}
    qs, issues = scan(write(tmp_path, t, {"quant_method": "awq", "bits": 4}))
    assert qs == [] and len(of(issues, "size")) == 1


def test_scales_without_columns_fit_neither(tmp_path: Path) -> None:
    """scales [2, 0] beside qweight [256, 8]: no output column to pack, and
    no width 32 / (0 / 8) (a division by zero before)."""
    t = {f"{MOD}.qweight": np.zeros((256, 8), I32), f"{MOD}.scales": np.ones((2, 0), F16)}
    qs, issues = scan(write(tmp_path, t, {"quant_method": "awq", "bits": 4}))
    assert qs == []
    assert "fit neither GPTQ nor AWQ packing" in only(of(issues, "size")).message


def test_qweight_without_scales_is_a_note(tmp_path: Path) -> None:
    t = gptq(256, 64, 4, 2)
    del t[f"{MOD}.scales"]
    qs, issues = scan(write(tmp_path, t, {"quant_method": "gptq", "bits": 4}))
    assert qs == []
    assert only([i for i in of(issues, "note") if "qweight without scales" in i.message]
                ).tensor == MOD


@pytest.mark.parametrize("wshape,sshape", [((16, 64), (128,)), ((1024,), (2, 64)),
                                           ((16, 64, 1), (2, 64)), ((16, 64), (2, 64, 1))])
def test_qweight_or_scales_not_2d_is_no_tensor(tmp_path: Path, wshape, sshape) -> None:
    """Neither packing is a matrix of another rank: no QTensor, no size
    equation, and the tensors stay unclaimed (reported as unsupported)."""
    t = {f"{MOD}.qweight": np.zeros(wshape, I32), f"{MOD}.scales": np.ones(sshape, F16)}
    qs, issues = scan(write(tmp_path, t, {"quant_method": "gptq", "bits": 4}))
    assert qs == [] and of(issues, "size") == [] and of(issues, "not_representable") == []
    assert f"{MOD}.qweight" in only(of(issues, "unsupported_convention")).message


@pytest.mark.parametrize("declared,bits,evidence", [
    ({"bits": 3}, 3, "declared"), ({"bits": 4}, 4, "declared"), ({"bits": 2}, 2, "declared"),
    ({"bits": 5}, 4, "assumed (no g_idx, qzeros or declared bits)"),
    ({"bits": "4"}, 4, "assumed (no g_idx, qzeros or declared bits)"),
    ({}, 4, "assumed (no g_idx, qzeros or declared bits)")])
def test_width_declared_or_assumed(tmp_path: Path, declared, bits: int, evidence: str) -> None:
    """No g_idx and no qzeros: the declared width when GPTQ packs it (2, 3,
    4, 8), else 4.  3-bit values straddle words: no whole count a word, so no
    grade; 24 rows of 32 bits are 256 3-bit inputs."""
    q, iss = refused(tmp_path, gptq(256, 64, bits, 8, g_idx=False, qzeros=False),
                     {"quant_method": "gptq", **declared})
    assert (iss.detail["bits"], iss.detail["bits_from"]) == (bits, evidence)
    assert tuple(q.shape) == (256, 64) and iss.detail["in"] == 256
    assert f"packs its {bits}-bit zero points" in q.reason
    if bits == 3:
        assert q.grade is None
    else:
        assert q.grade["e"] == f"u{bits}" and q.grade["k0"] == "32"


def test_declared_8_bits_without_shape_evidence(tmp_path: Path) -> None:
    q, iss = refused(tmp_path, gptq(256, 64, 8, 8, g_idx=False, qzeros=False),
                     {"quant_method": "gptq", "bits": 8})
    assert (iss.detail["bits"], iss.detail["bits_from"]) == (8, "declared")
    assert q.grade is None and q.reason.startswith("8-bit GPTQ")
    assert tuple(q.shape) == (256, 64)


def test_odd_row_count_of_2_bit_values(tmp_path: Path) -> None:
    """17 rows of sixteen 2-bit values: 272 inputs in 17 groups of 16."""
    q, iss = refused(tmp_path, gptq(272, 64, 2, 17), {"quant_method": "gptq", "bits": 2})
    assert tuple(q.shape) == (272, 64) and iss.detail["group_size"] == 16
    assert q.grade["k0"] == "16"


def test_rows_that_hold_no_whole_count_of_3_bit_values(tmp_path: Path) -> None:
    """25 rows of 32 bits are 800 bits: no whole count of 3-bit inputs, so
    no input width and no group size, even over one scale row."""
    t = {f"{MOD}.qweight": np.zeros((25, 64), I32), f"{MOD}.scales": np.ones((1, 64), F16)}
    q, iss = refused(tmp_path, t, {"quant_method": "gptq", "bits": 3})
    assert iss.detail["bits"] == 3 and iss.detail["group_size"] is None and q.grade is None


def test_groups_that_do_not_divide_the_inputs(tmp_path: Path) -> None:
    """3 scale rows over 256 inputs: no whole group size, no grade."""
    q, iss = refused(tmp_path, gptq(256, 64, 4, 3, g_idx=False),
                     {"quant_method": "gptq", "bits": 4})
    assert iss.detail["group_size"] is None and q.grade is None


def test_group_of_one(tmp_path: Path) -> None:
    """As many scale rows as inputs: groups of 1 (k0 = 1, §3.1)."""
    q, iss = refused(tmp_path, gptq(64, 64, 4, 64), {"quant_method": "gptq", "bits": 4})
    assert iss.detail["group_size"] == 1 and q.grade["k0"] == "1"


@pytest.mark.parametrize("group,k0", [(65535, "65535"), (65536, None)])
def test_group_at_the_uint16_limit(tmp_path: Path, group: int, k0) -> None:
    """AWQ GEMM, one group over all inputs: k0 is a uint16 (§3.1), so 65,535
    is a grade and 65,536 is none."""
    t = {f"{MOD}.qweight": np.zeros((group, 1), I32),
         f"{MOD}.scales": np.ones((1, 8), F16),
         f"{MOD}.qzeros": np.zeros((1, 1), I32)}
    q, iss = refused(tmp_path, t, {"quant_method": "awq", "bits": 4})
    assert iss.detail["group_size"] == group and q.convention == "awq"
    assert (q.grade["k0"] if q.grade is not None else None) == k0


@pytest.mark.parametrize("scale_dtype,scale_ok", [(F16, True), (np.float32, False)])
def test_plane_equations_of_data_and_scales(tmp_path: Path, scale_dtype, scale_ok) -> None:
    """§7.3 for 4-bit, groups of 32 over 256 x 64: data 256·64/2 bytes (the
    qweight's), scale0 8·64 binary16 values (float32 scales are twice that)."""
    t = gptq(256, 64, 4, 8)
    t[f"{MOD}.scales"] = t[f"{MOD}.scales"].astype(scale_dtype)
    _, iss = refused(tmp_path, t, {"quant_method": "gptq", "bits": 4})
    assert iss.detail["data_ok"] is True and iss.detail["scale_ok"] is scale_ok
    assert (iss.detail["predicted_aux"], iss.detail["present_aux"]) == (8 * 64, 8 * 64 // 2)
