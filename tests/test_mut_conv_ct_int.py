"""compressed-tensors int-quantized (conventions/kinds/ct_int.py) in the
layout llm-compressor writes (fixtures/producers/ct/w8a8-int8, w4afp8):
``weight`` I8 [out, in], ``weight_scale`` [out, 1] per channel or
[out, in/g] per group, and with asymmetric schemes ``weight_zero_point`` I8
of the scale's shape; the config's ``config_groups`` give num_bits.  A
4-bit scheme stores each value sign-extended in its byte
(compressed-tensors' int compressor), which is the s8 code of that value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mut_conv_tree import of, only, scan, write

import grit_scan.conventions as conventions

MOD = "model.layers.0.self_attn.k_proj"
I8, F32 = np.int8, np.float32


def qc(bits: int = 8, group: int | None = None, symmetric: bool = True) -> dict:
    weights = {"num_bits": bits, "type": "int", "symmetric": symmetric,
               "strategy": "group" if group else "channel", "group_size": group,
               "dynamic": False}
    return {"quant_method": "compressed-tensors", "format": "int-quantized",
            "config_groups": {"group_0": {"format": "int-quantized", "targets": ["Linear"],
                                          "weights": weights}}}


def tensors(scale_shape=(64, 1), zp_dtype=None, zp_shape=None, wshape=(64, 256)):
    t = {f"{MOD}.weight": np.zeros(wshape, I8),
         f"{MOD}.weight_scale": np.ones(scale_shape, F32)}
    if zp_dtype is not None:
        t[f"{MOD}.weight_zero_point"] = np.zeros(zp_shape or scale_shape, zp_dtype)
    return t


@pytest.mark.parametrize("bits,note", [(4, True), (7, True), (8, False)])
def test_narrow_values_are_noted_as_s8_codes(tmp_path: Path, bits: int, note: bool) -> None:
    qs, _ = scan(write(tmp_path, tensors((64, 2)), qc(bits, 128)))
    q = only(qs)
    assert q.convention == "compressed-tensors-int" and q.grade["e"] == "s8"
    assert q.grade["k0"] == "128"
    want = (f"{bits}-bit values stored one per byte, sign-extended: each byte is the s8 code "
            "of its value",) if note else ()
    assert q.notes == want


def test_asymmetric_int8_zero_points_are_a_plane(tmp_path: Path) -> None:
    """W8A8 asymmetric: an I8 zero point per channel is zp=s8 (§3.4), decoded
    (q - zp) · scale: the affine law."""
    qs, issues = scan(write(tmp_path, tensors(zp_dtype=I8), qc(symmetric=False)))
    q = only(qs)
    assert q.grade["zp"] == "s8" and q.grade["esr"] == "affineminmax"
    assert q.grade["k0"] == "256" and q.planes[3] is not None
    assert of(issues, "not_representable") == []


@pytest.mark.parametrize("zp_dtype,zp_shape", [(np.int32, None), (I8, (32, 1))],
                         ids=["int32", "fewer"])
def test_zero_points_not_one_i8_per_scale_are_refused(tmp_path: Path, zp_dtype,
                                                      zp_shape) -> None:
    qs, issues = scan(write(tmp_path, tensors(zp_dtype=zp_dtype, zp_shape=zp_shape),
                            qc(4, symmetric=False)))
    q = only(qs)
    assert q.grade is None and q.name == f"{MOD}.weight"
    nr = only(of(issues, "not_representable"))
    assert nr.detail["clause"] == "§3.4" and nr.message.startswith(
        f"{MOD}.weight: 4-bit asymmetric int-quantized: weight_zero_point")


@pytest.mark.parametrize("wshape,scale_shape,scale_dtype", [
    ((16384,), (64, 1), F32), ((64, 256), (64, 1), np.int32), ((64, 256), (64, 3), F32),
    ((0, 256), (64, 1), F32), ((64, 0), (64, 1), F32)],
    ids=["1-d", "int-scale", "no-layout", "no-rows", "no-columns"])
def test_layouts_it_does_not_know_are_a_note(tmp_path: Path, wshape, scale_shape,
                                             scale_dtype) -> None:
    t = tensors(scale_shape, wshape=wshape)
    t[f"{MOD}.weight_scale"] = t[f"{MOD}.weight_scale"].astype(scale_dtype)
    qs, issues = scan(write(tmp_path, t, qc()))
    assert qs == []
    n = only([i for i in of(issues, "note") if "int-quantized layout" in i.message])
    assert n.tensor == MOD


@pytest.mark.parametrize("bits,width", [(2, 2), (4, 4), (7, 7), (8, None), (1, None),
                                        ("4", None), (None, None)])
def test_value_bits_in_the_registry(bits, width) -> None:
    """--deep judges the codes' reach at the declared width when it is
    narrower than the s8 code; 8 is the code's own width (None)."""
    (conv,) = [c for c in conventions.registered() if c.name == "compressed-tensors-int"]
    assert conv.value_bits({"bits": bits} if bits is not None else None) == width
