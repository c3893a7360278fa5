"""AutoAWQ GEMV modules (conventions/kinds/awq_gemv.py) written in
WQLinear_GEMV's layout (awq/modules/linear/gemv.py): qweight int32
[out, in·b/32], scales float16 [out, W·32/b], qzeros int32 [out, W], W =
calculate_zeros_width(in, group, 32/b) — the group count rounded up to a
multiple of 32/b, then to a multiple of 2 for group 64 and 4 for group 32
(AutoAWQ raises NotImplementedError for any other group under 128).  The
widths here are computed from that definition, not by the scanner."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mut_conv_tree import of, only, scan, write

MOD = "model.layers.0.self_attn.k_proj"


def up(c: int, d: int) -> int:
    return (c + d - 1) // d


def autoawq_width(in_: int, group: int, pack: int) -> int:
    mult = 1 if group >= 128 else {64: 2, 32: 4}[group]
    return up(up(in_ // group, pack), mult) * mult


def gemv(out: int, in_: int, bits: int, width: int) -> dict[str, np.ndarray]:
    pack = 32 // bits
    return {f"{MOD}.qweight": np.zeros((out, in_ // pack), np.int32),
            f"{MOD}.scales": np.ones((out, width * pack), np.float16),
            f"{MOD}.qzeros": np.zeros((out, width), np.int32)}


def qc(bits: int | None = 4, group: int = 128, version: str | None = "gemv") -> dict:
    c: dict[str, object] = {"quant_method": "awq", "group_size": group, "zero_point": True}
    if bits is not None:
        c["bits"] = bits
    if version is not None:
        c["version"] = version
    return c


def gemv_tensor(tmp_path: Path, tensors, config):
    qs, issues = scan(write(tmp_path, tensors, config))
    q = only(qs)
    assert q.convention == "awq" and "AWQ GEMV" in q.reason
    assert of(issues, "size") == []
    return q, only([i for i in of(issues, "not_representable") if i.tensor == q.name])


@pytest.mark.parametrize("group", [32, 64, 128])
def test_padded_widths_hold(tmp_path: Path, group: int) -> None:
    """in 256: 8, 4 or 2 groups, padded to W = 4, 2, 1 words of zero points
    (group 32: scales as wide as qweight, 32 columns each)."""
    w = autoawq_width(256, group, 8)
    assert w == {32: 4, 64: 2, 128: 1}[group]
    q, iss = gemv_tensor(tmp_path, gemv(64, 256, 4, w), qc(group=group))
    assert tuple(q.shape) == (64, 256) and q.grade["k0"] == str(group)
    assert iss.detail["padded_ok"] is True and iss.detail["data_ok"] is True
    # §7.3 of the unpadded grade: 256/group scales a row, one zero-point byte each
    assert iss.detail["predicted_scale"] == 64 * (256 // group) * 2
    assert iss.detail["present_scale"] == 64 * w * 8 * 2


def test_recognised_from_its_shapes_without_version(tmp_path: Path) -> None:
    """No ``version`` in the config: qweight [64, 32] and scales [64, 8]
    share their rows, which GEMM's [in, ·] and [groups, ·] do not."""
    q, _ = gemv_tensor(tmp_path, gemv(64, 256, 4, 1), qc(version=None))
    assert tuple(q.shape) == (64, 256) and q.grade["k0"] == "128"


def test_scales_not_pack_times_qzeros_are_not_gemv(tmp_path: Path) -> None:
    """scales [64, 16] beside qzeros [64, 1]: 16 is not 8 · 1, so not GEMV;
    nor GEMM (16 is no multiple of qweight's 32 columns)."""
    t = gemv(64, 256, 4, 1)
    t[f"{MOD}.scales"] = np.ones((64, 16), np.float16)
    qs, issues = scan(write(tmp_path, t, qc()))
    assert qs == []
    assert "fit neither GPTQ nor AWQ packing" in only(of(issues, "size")).message


def test_a_group_autoawq_does_not_pad_holds_no_padded_equation(tmp_path: Path) -> None:
    """Group 16: calculate_zeros_width raises, so there are no padded widths
    to hold the file to (here padded to 4 words); the §7.3 sizes are still
    recorded, and the padding is not AutoAWQ's."""
    q, iss = gemv_tensor(tmp_path, gemv(64, 256, 4, 4), qc(group=16))
    assert q.grade["k0"] == "16" and iss.detail["padded_ok"] is False


def test_wrong_padding_is_a_size_issue_and_no_tensor(tmp_path: Path) -> None:
    """Group 128 over 256 inputs pads to 1 word; 2 words of qzeros and 16
    scale columns are 64·2·4 and 64·16·2 bytes where 64·1·4 and 64·8·2 are
    due."""
    qs, issues = scan(write(tmp_path, gemv(64, 256, 4, 2), qc()))
    assert qs == []
    s = only(of(issues, "size"))
    assert "calculate_zeros_width = 1" in s.message
    assert s.detail["expected"] == [64 * 256 // 2, 64 * 8 * 2, 64 * 4]
    assert s.detail["actual"] == [64 * 256 // 2, 64 * 16 * 2, 64 * 2 * 4]


@pytest.mark.parametrize("group", [96, 0])
def test_a_declared_group_that_does_not_divide_the_inputs(tmp_path: Path, group: int) -> None:
    q, iss = gemv_tensor(tmp_path, gemv(64, 256, 4, 1), qc(group=group))
    assert q.grade is None and iss.detail["group_size"] is None


def test_a_declared_group_of_one(tmp_path: Path) -> None:
    q, iss = gemv_tensor(tmp_path, gemv(64, 256, 4, 1), qc(group=1))
    assert q.grade["k0"] == "1" and iss.detail["group_size"] == 1


@pytest.mark.parametrize("group,k0", [(65535, "65535"), (65536, None)])
def test_group_at_the_uint16_limit(tmp_path: Path, group: int, k0) -> None:
    """One row of 8·group inputs in one group: k0 is a uint16 (§3.1)."""
    q, _ = gemv_tensor(tmp_path, gemv(1, 8 * group, 4, 1), qc(group=group))
    assert (q.grade["k0"] if q.grade is not None else None) == k0


@pytest.mark.parametrize("bits", [2, 8])
def test_declared_width_sets_the_packing(tmp_path: Path, bits: int) -> None:
    """32/b values a word: 2-bit packs 16, 8-bit 4 (W for 2 groups: 1)."""
    pack = 32 // bits
    q, iss = gemv_tensor(tmp_path, gemv(64, 256, bits, autoawq_width(256, 128, pack)),
                         qc(bits=bits))
    assert tuple(q.shape) == (64, 256) and q.grade["e"] == f"u{bits}"
    assert iss.detail["bits"] == bits and f"({pack} per int32 word)" in q.reason


@pytest.mark.parametrize("bits", [3, None])
def test_a_width_gemv_does_not_pack_reads_as_4(tmp_path: Path, bits) -> None:
    q, iss = gemv_tensor(tmp_path, gemv(64, 256, 4, 1), qc(bits=bits))
    assert tuple(q.shape) == (64, 256) and iss.detail["bits"] == 4


def test_no_inputs_beside_padded_scales_is_a_size_issue(tmp_path: Path) -> None:
    """qweight [4, 0]: no inputs, no groups, so calculate_zeros_width is 0 and
    scales and qzeros are due no byte; the file holds 4·8 float16 scales and
    4 words of zero points."""
    t = {f"{MOD}.qweight": np.zeros((4, 0), np.int32),
         f"{MOD}.scales": np.ones((4, 8), np.float16),
         f"{MOD}.qzeros": np.zeros((4, 1), np.int32)}
    qs, issues = scan(write(tmp_path, t, qc()))
    assert qs == []
    s = only(of(issues, "size"))
    assert (s.detail["expected"], s.detail["actual"]) == ([0, 0, 0], [0, 4 * 8 * 2, 4 * 4])
