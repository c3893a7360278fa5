"""bitsandbytes 4-bit NF4 and FP4, with and without double quant, as
bitsandbytes 0.50.2 writes them through transformers (fixtures/producers/bnb-*,
MANIFEST.json): the size equations of quantize_4bit hold, then the tensors
are refused as not representable (a codebook, §0.3(b))."""

from __future__ import annotations

from pathlib import Path

import pytest
from scan_exit import scan_exit as _exit

import grit_scan
from grit_scan.writers import Raw, write_safetensors

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
CASES = {"bnb-nf4": ("nf4", False), "bnb-fp4": ("fp4", False),
         "bnb-fp4-double-quant": ("fp4", True)}


@pytest.mark.parametrize("sub", list(CASES))
@pytest.mark.parametrize("deep", [False, True])
def test_bnb_4bit_sizes_hold_then_refused(sub: str, deep: bool) -> None:
    kind, nested = CASES[sub]
    r = grit_scan.scan([str(P / sub)], deep=deep)
    assert [(f.kind, f.message) for f in r.findings
            if str(f.severity) in ("structural", "disagreement")] == []
    (f,) = [f for f in r.findings if str(f.kind) == "not_representable"]
    assert "§0.3(b)" in f.message and kind in f.message
    assert _exit(P / sub, "graded", deep) == 3 and _exit(P / sub, "simple", deep) == 1
    # k_proj is [64, 256] (MANIFEST): 16,384 codes in blocks of 64 (bnb's default
    # 4-bit blocksize), and with double quant one nested absmax per 256 blocks
    art = next(a for a in r.artifacts if a.quantized)
    (iss,) = [i for i in art.issues if i.tensor == "model.layers.0.self_attn.k_proj.weight"]
    assert (iss.detail["codes"], iss.detail["blocksize"], iss.detail["blocks"]) == (
        64 * 256, 64, 64 * 256 // 64)
    assert iss.detail.get("nested_blocks") == (1 if nested else None)


@pytest.mark.parametrize("absmax,qmap,why", [(3, 16, "power of two"),
                                             (1, 15, "16")])
def test_broken_sizes_are_a_size_mismatch(tmp_path: Path, absmax: int, qmap: int,
                                          why: str) -> None:
    m = "model.layers.0.self_attn.k_proj.weight"
    write_safetensors(tmp_path / "model.safetensors", {
        m: Raw("U8", [64, 1], bytes(64)),
        m + ".absmax": Raw("F32", [absmax], bytes(4 * absmax)),
        m + ".quant_map": Raw("F32", [qmap], bytes(4 * qmap)),
        m + ".quant_state.bitsandbytes__nf4": Raw("U8", [2], b"{}")})
    r = grit_scan.scan([str(tmp_path)])
    (f,) = [f for f in r.findings if str(f.kind) == "size_mismatch"]
    assert why in f.message and "not_representable" not in {str(x.kind) for x in r.findings}
