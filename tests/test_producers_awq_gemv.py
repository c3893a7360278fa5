"""AutoAWQ GEMV as AutoAWQ 0.2.9 packs it (fixtures/producers/awq-gemv-4bit-g128):
recognised, its sizes held to AutoAWQ's own GEMV widths, refused as not
representable (§0.3(d)), and no false size_mismatch or declared_mismatch."""

from __future__ import annotations

from pathlib import Path

import pytest
from scan_exit import scan_exit

import grit_scan
from grit_scan.cli import main

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
SUB = "awq-gemv-4bit-g128"


def _exit(policy: str, deep: bool = False) -> int:
    return scan_exit(P / SUB, policy, deep)


@pytest.mark.parametrize("deep", [False, True])
def test_gemv_is_no_false_alarm(deep: bool) -> None:
    r = grit_scan.scan([str(P / SUB)], deep=deep)
    bad = [(f.kind, f.message) for f in r.findings
           if str(f.severity) in ("structural", "disagreement")]
    assert bad == []
    (f,) = [f for f in r.findings if str(f.kind) == "not_representable"]
    assert "§0.3(d)" in f.message and "GEMV" in f.message
    assert _exit("graded", deep) == 3 and _exit("simple", deep) == 1


def test_gemv_sizes_are_autoawq_widths() -> None:
    """The MANIFEST's notes (AutoAWQ's calculate_zeros_width): k_proj has in=256
    and 2 real groups of 128, scales [64, 8] and qzeros [64, 1]; the §7.3
    scale plane of those 2 groups is 64·2·2 bytes, the file holds 64·8·2."""
    art = next(a for a in grit_scan.scan([str(P / SUB)]).artifacts if a.quantized)
    (q,) = [q for q in art.quantized if q.name == "model.layers.0.self_attn.k_proj.weight"]
    assert q.convention == "awq" and q.shape == (64, 256) and q.desc is not None
    assert q.desc.k0 == 128
    (iss,) = [i for i in art.issues if i.tensor == q.name]
    d = dict(iss.detail)
    assert d["in"] == 256 and d["out"] == 64 and d["group_size"] == 128
    assert d["predicted_scale"] == 64 * 2 * 2 and d["present_scale"] == 64 * 8 * 2
    assert d["predicted_aux"] == 64 * 2 and d["present_aux"] == 64 * 1 * 4
    assert d["data_ok"] is True and d["padded_ok"] is True


def test_calculate_zeros_width_as_autoawq_writes_it() -> None:
    from grit_scan.conventions.kinds.awq_gemv import zeros_width

    # AutoAWQ: make_divisible(in/g, 8), then a multiple of 1 (g>=128), 2 (g64), 4 (g32)
    assert zeros_width(256, 128, 8) == 8 // 8 and zeros_width(256, 64, 8) == 2
    assert zeros_width(256, 32, 8) == 4 and zeros_width(4096, 128, 8) == 4


@pytest.mark.parametrize("deep", [False, True])
def test_gemm_g64_beside_it_is_the_gemm_convention(deep: bool) -> None:
    """AutoAWQ 0.2.9 GEMM, group 64 (fixtures/producers/awq-gemm-4bit-g64):
    qweight [in, out/8], scales [in/64, out]; the GEMV recogniser leaves it
    to AWQ GEMM, whose §7.3 equations predict twice the zero-point bytes."""
    r = grit_scan.scan([str(P / "awq-gemm-4bit-g64")], deep=deep)
    assert [f for f in r.findings if str(f.severity) in ("structural", "disagreement")] == []
    (f,) = [f for f in r.findings if str(f.kind) == "not_representable"]
    assert "GEMV" not in f.message and "§0.3(d)" in f.message
    # the first tensor listed, mlp.down_proj [in 256, out 256], 4 groups of 64:
    # 4·256 zero points, one byte each in GRIT, 4 bits each in the file
    assert (f.detail["predicted_aux"], f.detail["present_aux"]) == (4 * 256, 4 * 256 // 2)
    sub = P / "awq-gemm-4bit-g64"
    args = ["scan", str(sub)] + (["--deep"] if deep else [])
    for policy, want in (("graded", 3), ("simple", 1)):
        try:
            code = main([*args, "--exit-policy", policy]) or 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        assert code == want
