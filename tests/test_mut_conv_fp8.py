"""FP8 weights with a float scale (conventions/kinds/_fp8.py, fp8.py,
finegrained_fp8.py) in the layouts compressed-tensors, ModelOpt, fbgemm and
transformers' FineGrainedFP8 write: ``weight`` F8 [rows, cols] beside
``weight_scale`` (or ``weight_scale_inv``).  One scale over the whole
tensor is refused (§3.7, §3.1) after its size equation (one byte an
element, one scale of its dtype's width) is checked; a refused tensor
records its element/scale formats.  Written byte by byte (numpy has no FP8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mut_conv_tree import of, only, scan, write_raw

MOD = "model.layers.0.mlp.up_proj"
W, S = f"{MOD}.weight", f"{MOD}.weight_scale"
QC = {"quant_method": "fbgemm_fp8"}
WIDTH = {"F32": 4, "F16": 2, "BF16": 2}
TOKEN = {"F32": "binary32", "F16": "binary16", "BF16": "bfloat16"}


@pytest.mark.parametrize("wdt,elem", [("F8_E4M3", "e4m3"), ("F8_E5M2", "e5m2")])
@pytest.mark.parametrize("sdt", ["F32", "F16", "BF16"])
def test_per_tensor_refusal_records_what_the_file_holds(tmp_path: Path, wdt, elem,
                                                        sdt) -> None:
    qs, issues = scan(write_raw(tmp_path, {W: (wdt, (16, 64)), S: (sdt, (1,))}, QC))
    q = only(qs)
    assert (q.name, q.convention, q.grade) == (W, "fp8-per-tensor", None)
    d = only(of(issues, "not_representable")).detail
    assert d["formats"] == f"{elem}/{TOKEN[sdt]}" and d["group_shape"] == "per-tensor"
    assert (d["weight_shape"], d["scale_shape"], d["actual_group_size"]) == (
        [16, 64], [1, 1], 16 * 64)
    assert (d["data_bytes"], d["scale_bytes"]) == (16 * 64, WIDTH[sdt])
    assert of(issues, "size") == []


def test_two_d_blocks_record_their_formats(tmp_path: Path) -> None:
    t = {W: ("F8_E5M2", (256, 256)), f"{MOD}.weight_scale_inv": ("BF16", (2, 2))}
    _, issues = scan(write_raw(tmp_path, t, {"quant_method": "fp8",
                                             "weight_block_size": [128, 128]}))
    d = only(of(issues, "not_representable")).detail
    assert (d["formats"], d["group_shape"]) == ("e5m2/bfloat16", "2-D blocks")


@pytest.mark.parametrize("block,refused", [([32], False), ([64], True)])
def test_a_one_number_block_size_is_the_block_width(tmp_path: Path, block, refused) -> None:
    """One block row [1, 2] over 64 columns: runs of 32.  A declared
    weight_block_size of one number is the width itself: 32 fits, 64 leaves
    a partial block (§3.7)."""
    t = {W: ("F8_E4M3", (16, 64)), f"{MOD}.weight_scale_inv": ("F32", (1, 2))}
    qs, issues = scan(write_raw(tmp_path, t, {"quant_method": "fp8",
                                              "weight_block_size": block}))
    q = only(qs)
    assert q.convention == "fp8-block"
    if refused:
        nr = only(of(issues, "not_representable"))
        assert q.grade is None and nr.detail["block_width"] == 64
        assert nr.detail["formats"] == "e4m3/binary32"
    else:
        assert q.grade["k0"] == "32" and of(issues, "not_representable") == []


@pytest.mark.parametrize("wshape", [(16, 0), (0, 64)])
def test_an_empty_weight_is_a_note(tmp_path: Path, wshape) -> None:
    """No element to scale: no layout (and no k0 of 0, which §3.1 forbids)."""
    qs, issues = scan(write_raw(tmp_path, {W: ("F8_E4M3", wshape), S: ("F32", (16, 2))}, QC))
    assert qs == []
    assert only([i for i in of(issues, "note") if "is not a layout this scanner knows"
                 in i.message]).tensor == MOD
