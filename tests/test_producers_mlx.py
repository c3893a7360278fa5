"""MLX affine quantisation as mlx_lm.convert -q writes it
(fixtures/producers/mlx-*, MANIFEST.json): recognised, its bits and group
size read from the shapes, refused as not representable (§8.4: a float bias
per group), and no structural or disagreement finding on the correct files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scan_exit import scan_exit as _exit

import grit_scan

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
# (bits, group) per checkpoint, from the MANIFEST's commands
CASES = {"mlx-q4-g64": (4, 64), "mlx-q3-g32": (3, 32), "mlx-q6-g128": (6, 128)}


@pytest.mark.parametrize("sub", list(CASES))
@pytest.mark.parametrize("deep", [False, True])
def test_mlx_affine_is_recognised_and_refused(sub: str, deep: bool) -> None:
    r = grit_scan.scan([str(P / sub)], deep=deep)
    kinds = {str(f.kind) for f in r.findings}
    assert [(f.kind, f.message) for f in r.findings
            if str(f.severity) in ("structural", "disagreement")] == []
    assert "unsupported_convention" not in kinds
    (f,) = [f for f in r.findings if str(f.kind) == "not_representable"]
    assert "§8.4" in f.message and "MLX" in f.message
    # 2 layers x 7 linear modules, the embedding and lm_head (MANIFEST notes)
    assert f.detail["count"] == 16
    assert _exit(P / sub, "graded", deep) == 3 and _exit(P / sub, "simple", deep) == 1


@pytest.mark.parametrize("sub", list(CASES))
def test_bits_from_the_shapes(sub: str) -> None:
    """k_proj is [64, 256]: weight [64, 256·b/32] U32, scales [64, 256/g]."""
    bits, group = CASES[sub]
    art = next(a for a in grit_scan.scan([str(P / sub)]).artifacts if a.quantized)
    (iss,) = [i for i in art.issues if i.tensor == "model.layers.0.self_attn.k_proj.weight"]
    assert (iss.detail["actual_bits"], iss.detail["group_size"]) == (bits, group)
    assert (iss.detail["in"], iss.detail["out"]) == (256, 64)


def test_a_config_declaring_other_bits_is_named(tmp_path: Path) -> None:
    """The 3-bit group-32 checkpoint with a config claiming 4 bits."""
    dst = tmp_path / "mlx"
    shutil.copytree(P / "mlx-q3-g32", dst)
    cfg = json.loads((dst / "config.json").read_text())
    for key in ("quantization", "quantization_config"):
        if key in cfg:
            cfg[key]["bits"] = 4
    (dst / "config.json").write_text(json.dumps(cfg))
    r = grit_scan.scan([str(dst)])
    (f,) = [f for f in r.findings if str(f.kind) == "declared_mismatch"]
    assert (f.detail["field"], f.detail["declared"], f.detail["actual"]) == ("bits", "4", "3")
    assert _exit(dst, "graded") == 2
