"""GPTQ modules written here with numpy and the safetensors library in the
layouts GPTQ producers use (qweight int32 [in·b/32, out], qzeros int32
[groups, out·b/32], scales float16 [groups, out], g_idx int32 [in]): the bit
width is read from the shapes by whichever evidence is there (g_idx, else
qzeros, else the declared bits), and act-order is refused (§0.3(c)).
Expected widths and group sizes are the packing arithmetic of those shapes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

import grit_scan

IN, OUT = 256, 64
MOD = "model.layers.0.mlp.up_proj"


def gptq(root, bits, group, g_idx=True, qzeros=True, declared=None):
    groups = IN // group
    t = {f"{MOD}.qweight": np.zeros((IN * bits // 32, OUT), dtype=np.int32),
         f"{MOD}.scales": np.ones((groups, OUT), dtype=np.float16)}
    if qzeros:
        t[f"{MOD}.qzeros"] = np.zeros((groups, OUT * bits // 32), dtype=np.int32)
    if g_idx:
        t[f"{MOD}.g_idx"] = (np.arange(IN) // group).astype(np.int32)
    save_file(t, str(root / "model.safetensors"))
    qc = {"quant_method": "gptq", **(declared or {})}
    (root / "config.json").write_text(json.dumps({"quantization_config": qc}))


def tensor(root):
    r = grit_scan.scan([str(root)])
    (a,) = [a for a in r.artifacts if a.path.endswith(".safetensors")]
    (q,) = a.quantized
    return q, a, r


@pytest.mark.parametrize("bits", [2, 4, 8])
@pytest.mark.parametrize("evidence", ["g_idx", "qzeros"])
def test_bits_from_the_shapes(tmp_path, bits, evidence):
    gptq(tmp_path, bits, 32, g_idx=evidence == "g_idx", declared={"bits": 3})
    q, a, _ = tensor(tmp_path)
    assert q.convention == "gptq" and q.name == f"{MOD}.weight"
    assert tuple(q.shape) == (IN, OUT)
    if bits == 8:
        assert q.grade is None and "8-bit GPTQ" in q.reason
    else:
        assert q.grade is not None and q.grade["e"] == f"u{bits}"
        assert f"packs its {bits}-bit zero points" in q.reason
        assert f"({32 // bits} per int32 word)" in q.reason


@pytest.mark.parametrize("declared,bits", [({"bits": 2}, 2), ({}, 4)])
def test_bits_declared_or_assumed_without_shape_evidence(tmp_path, declared, bits):
    # no g_idx, no qzeros: the shapes cannot tell; the declaration, else 4
    gptq(tmp_path, bits, 32, g_idx=False, qzeros=False, declared=declared)
    q, _, _ = tensor(tmp_path)
    assert f"packs its {bits}-bit zero points" in q.reason
    assert q.grade is not None and q.grade["k0"] == "32" and q.grade["e"] == f"u{bits}"


@pytest.mark.parametrize("group", [32, 64, 128, 256])
def test_group_size_from_scales_rows(tmp_path, group):
    gptq(tmp_path, 4, group)
    q, _, _ = tensor(tmp_path)
    assert q.grade["k0"] == str(group)
    # GRIT predicts one zero-point byte per group and column
    assert q.reason.endswith(f"GRIT predicts {IN // group * OUT:,} zero-point bytes, the file "
                             f"holds {IN // group * OUT * 4 // 8:,}")


def test_act_order_is_refused(tmp_path):
    gptq(tmp_path, 4, 32, declared={"bits": 4, "desc_act": True})
    _, a, r = tensor(tmp_path)
    assert any("act-order (desc_act=true)" in i.message and "§0.3(c)" in i.message
               for i in a.issues)


def test_no_act_order_without_desc_act(tmp_path):
    gptq(tmp_path, 4, 32, declared={"bits": 4, "desc_act": False})
    _, a, _ = tensor(tmp_path)
    assert not any("act-order" in i.message for i in a.issues)
