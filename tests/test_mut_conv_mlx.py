"""MLX affine quantisation (conventions/kinds/mlx_affine.py) as
``mlx_lm.convert -q`` writes it (fixtures/producers/mlx-*): ``weight`` U32
[out, in·b/32] (b-bit codes in one bit stream), ``scales`` and ``biases``
[out, in/g] in the model's float dtype, the config's ``quantization``
giving group_size and bits.  The input width is scales' columns times the
declared group, the width 32·(weight columns)/in; where the shapes do not
settle them the stored shape is kept."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mut_conv_tree import of, only, scan, write

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
MOD = "model.layers.0.self_attn.k_proj"
F16 = np.float16


@pytest.mark.parametrize("sub,bits", [("mlx-q4-g64", 4), ("mlx-q3-g32", 3),
                                      ("mlx-q6-g128", 6)])
def test_fixture_k_proj_is_64_by_256(sub: str, bits: int) -> None:
    """The tiny model's k_proj: 64 outputs (one kv head of 64) over hidden 256."""
    qs, _ = scan(P / sub)
    (q,) = [q for q in qs if q.name == f"{MOD}.weight"]
    assert tuple(q.shape) == (64, 256) and q.convention == "mlx-affine" and q.grade is None


def mlx(tmp_path: Path, wshape, sshape, group=64, bits=4, wdtype=np.uint32):
    t = {f"{MOD}.weight": np.zeros(wshape, wdtype), f"{MOD}.scales": np.ones(sshape, F16),
         f"{MOD}.biases": np.zeros(sshape, F16)}
    quant = {"bits": bits, "mode": "affine"}
    if group is not None:
        quant["group_size"] = group
    root = write(tmp_path, t)
    (root / "config.json").write_text(json.dumps({"model_type": "llama",
                                                  "quantization": quant,
                                                  "quantization_config": quant}))
    return scan(root)


def refused(tmp_path: Path, *args, **kw):
    qs, issues = mlx(tmp_path, *args, **kw)
    q = only(qs)
    nr = only([i for i in of(issues, "not_representable") if i.tensor == q.name])
    assert nr.detail["clause"] == "§8.4"
    return q, nr.detail


def test_group_of_one(tmp_path: Path) -> None:
    """256 scale columns at group 1: 256 inputs, 32·32/256 = 4 bits."""
    q, d = refused(tmp_path, (64, 32), (64, 256), group=1)
    assert tuple(q.shape) == (64, 256) and (d["actual_bits"], d["group_size"]) == (4, 1)


@pytest.mark.parametrize("wshape,sshape,group", [
    ((64, 32), (32, 4), 64),    # scales rows not the weight's
    ((64, 32), (64, 4), None),  # no declared group size
    ((64, 32), (64, 4), 0),     # a group of 0
    ((64, 33), (64, 4), 64),    # 32·33 bits over 256 inputs: no whole width
    ((64, 32), (64, 0), 64),    # no scale columns: no inputs
])
def test_shapes_that_do_not_settle_keep_the_stored_shape(tmp_path: Path, wshape, sshape,
                                                         group) -> None:
    q, d = refused(tmp_path, wshape, sshape, group=group)
    assert tuple(q.shape) == wshape and "actual_bits" not in d and "in" not in d


def test_a_float_weight_beside_scales_and_biases_is_not_mlx(tmp_path: Path) -> None:
    qs, _ = mlx(tmp_path, (64, 256), (64, 4), wdtype=F16)
    assert qs == []
