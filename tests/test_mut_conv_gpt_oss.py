"""gpt-oss MXFP4 (conventions/kinds/gpt_oss_mxfp4.py) as transformers'
Mxfp4 loader reads it: ``*_blocks`` U8 [..., G, 16] (sixteen bytes, 32
E2M1 codes, a block) and ``*_scales`` U8 [..., G] (one E8M0 exponent a
block of 32): the weight is [..., G·32] (transformers'
convert_moe_packed_tensors asserts blocks.shape[:-1] == scales.shape).
fixtures/conventions/gpt-oss-mxfp4 is that layout; the variants are written
here with numpy and safetensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mut_conv_tree import of, only, scan, write

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "conventions" / "gpt-oss-mxfp4"
QC = {"quant_method": "mxfp4"}
U8 = np.uint8


def test_the_fixture_layout() -> None:
    """Per layer, experts down_proj blocks [2, 32, 2, 16] and gate_up_proj
    [2, 64, 2, 16]: weights [2, 32, 64] and [2, 64, 64], MXFP4 (§10)."""
    qs, issues = scan(FIX)
    got = sorted((q.name, tuple(q.shape), q.convention, str(q.grade)) for q in qs)
    want = sorted((f"model.layers.{i}.mlp.experts.{p}", (2, rows, 64), "gpt-oss-mxfp4",
                   "MXFP4") for i in (0, 1) for p, rows in (("down_proj", 32),
                                                           ("gate_up_proj", 64)))
    assert [g[:3] for g in got] == [w[:3] for w in want]
    assert all(q.grade is not None and q.grade.canonical ==
               "grit1(e=e2m1,k0=32,s0=e8m0,esr=exp2floormaxabs)" for q in qs)
    assert all(q.notes == () for q in qs)
    assert of(issues, "size") == [] and of(issues, "unsupported_convention") == []


def _tree(tmp_path: Path, tensors: dict[str, np.ndarray]):
    return scan(write(tmp_path, tensors, QC))


def test_dotted_blocks_and_scales(tmp_path: Path) -> None:
    """``.blocks`` / ``.scales`` spell the same parts: [4, 2, 16] and [4, 2]
    are a [4, 64] weight."""
    qs, _ = _tree(tmp_path, {"m.experts.w.blocks": np.zeros((4, 2, 16), U8),
                             "m.experts.w.scales": np.full((4, 2), 127, U8)})
    q = only(qs)
    assert (q.name, tuple(q.shape), q.convention) == ("m.experts.w", (4, 64), "gpt-oss-mxfp4")


def test_rank_2_blocks(tmp_path: Path) -> None:
    qs, _ = _tree(tmp_path, {"m.w_blocks": np.zeros((3, 16), U8),
                             "m.w_scales": np.full((3,), 127, U8)})
    assert tuple(only(qs).shape) == (96,)


@pytest.mark.parametrize("tensors", [
    {"m.w.blocks": np.zeros((4, 2, 16), U8), "m.w.scales": np.ones((4, 2), np.float16)},
    {"m.w_blocks": np.zeros((4, 2, 16), U8)},
    {"m.w_blocks": np.zeros((4, 2, 16), np.int8), "m.w_scales": np.full((4, 2), 127, U8)},
], ids=["float-scales", "no-scales", "int8-blocks"])
def test_not_the_layout_is_not_claimed(tmp_path: Path, tensors) -> None:
    """Float ``.scales`` (MLX's), blocks without scales, blocks not U8: no
    gpt-oss tensor."""
    qs, issues = _tree(tmp_path, tensors)
    assert [q for q in qs if q.convention == "gpt-oss-mxfp4"] == []
    assert of(issues, "size") == []


@pytest.mark.parametrize("bshape,actual", [((2, 32, 2, 8), 8), ((16,), 16)])
def test_blocks_not_16_bytes_wide_are_a_size_issue(tmp_path: Path, bshape, actual) -> None:
    qs, issues = _tree(tmp_path, {"m.w_blocks": np.zeros(bshape, U8),
                                  "m.w_scales": np.full(bshape[:-1] or (1,), 127, U8)})
    assert qs == []
    s = only(of(issues, "size"))
    assert (s.detail["expected"], s.detail["actual"], s.tensor) == (16, actual, "m.w")


def test_scales_of_another_shape_are_noted(tmp_path: Path) -> None:
    qs, _ = _tree(tmp_path, {"m.w_blocks": np.zeros((4, 2, 16), U8),
                             "m.w_scales": np.full((4, 3), 127, U8)})
    q = only(qs)
    assert tuple(q.shape) == (4, 64)
    assert q.notes == ("blocks.shape[:-1] [4, 2] != scales.shape [4, 3] (transformers asserts "
                       "they are equal)",)
