"""compressed-tensors MX formats (conventions/kinds/ct_mxfp4.py,
ct_mxfp8.py) in the layout of fixtures/producers/ct/mxfp4a16 and ct/mxfp8:
MXFP4 ``weight_packed`` U8 [out, in/2] with ``weight_scale`` U8 E8M0
[out, in/32]; MXFP8 ``weight`` F8 [out, in] with ``weight_scale`` U8
[out, in/k0] (OCP MX: k0 = 32).  k0 is the row length over the scales a row,
a uint16 (§3.1).  Written byte by byte (numpy has no FP8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mut_conv_tree import of, only, scan, write_raw

MOD = "model.layers.0.self_attn.k_proj"
MXFP4 = {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized"}
MXFP8 = {"quant_method": "compressed-tensors", "format": "mxfp8-quantized"}


def test_mxfp4_packed_data_not_2d_is_no_tensor(tmp_path: Path) -> None:
    t = {f"{MOD}.weight_packed": ("U8", (8192,)), f"{MOD}.weight_scale": ("U8", (64, 8))}
    qs, _ = scan(write_raw(tmp_path, t, MXFP4))
    assert qs == []


def test_mxfp4_layout(tmp_path: Path) -> None:
    t = {f"{MOD}.weight_packed": ("U8", (64, 128)), f"{MOD}.weight_scale": ("U8", (64, 8))}
    q = only(scan(write_raw(tmp_path, t, MXFP4))[0])
    assert (q.name, tuple(q.shape), q.grade.canonical) == (
        f"{MOD}.weight", (64, 256), "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)")


def mxfp8(tmp_path: Path, wshape, sshape, wdt: str = "F8_E4M3"):
    t = {f"{MOD}.weight": (wdt, wshape), f"{MOD}.weight_scale": ("U8", sshape)}
    return scan(write_raw(tmp_path, t, MXFP8))


@pytest.mark.parametrize("wshape,sshape,k0", [
    ((64, 256), (64, 8), 32), ((64, 256), (64, 1), 256), ((4, 4096), (4, 32), 128),
    ((1, 65535), (1, 1), 65535), ((64, 8), (64, 8), 1)])
def test_mxfp8_k0_is_the_row_over_its_scales(tmp_path: Path, wshape, sshape, k0) -> None:
    qs, issues = mxfp8(tmp_path, wshape, sshape)
    q = only(qs)
    assert q.convention == "compressed-tensors-mxfp8" and q.grade["k0"] == str(k0)
    assert q.grade["e"] == "e4m3" and q.grade["s0"] == "e8m0"
    assert of(issues, "note") == []


def test_mxfp8_e5m2(tmp_path: Path) -> None:
    q = only(mxfp8(tmp_path, (64, 256), (64, 8), "F8_E5M2")[0])
    assert q.grade["e"] == "e5m2"


@pytest.mark.parametrize("wshape,sshape", [
    ((16384,), (64, 8)), ((64, 256), (512,)), ((64, 256), (32, 8)), ((64, 256), (64, 0)),
    ((64, 256), (64, 3)), ((1, 65536), (1, 1)), ((64, 0), (64, 8))],
    ids=["weight-1d", "scale-1d", "rows", "no-scales", "no-whole-run", "k0-over-uint16",
         "empty"])
def test_mxfp8_layouts_it_does_not_know_are_a_note(tmp_path: Path, wshape, sshape) -> None:
    qs, issues = mxfp8(tmp_path, wshape, sshape)
    assert qs == []
    n = only([i for i in of(issues, "note") if "is not an MX layout" in i.message])
    assert n.tensor == MOD
