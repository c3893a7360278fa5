"""AutoAWQ GEMV as AutoAWQ 0.2.9 writes it (fixtures/producers/awq-gemv-4bit-g128,
AutoAWQForCausalLM.quantize + save_quantized): recognised, its sizes held to
AutoAWQ's own GEMV widths with their padding, refused as not representable
(§0.3(d)), its grade decoding as AutoAWQ does, and no false size_mismatch or
declared_mismatch."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open
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


K_PROJ = "model.layers.0.self_attn.k_proj"


def _stored(sub: str, *names: str) -> list[np.ndarray]:
    """Stored tensors as safetensors reads them (not grit)."""
    with safe_open(str(P / sub / "model.safetensors"), "np") as f:
        return [f.get_tensor(n) for n in names]


def test_gemv_padding_is_zero_and_past_the_last_group() -> None:
    """What the padded size equations assume of the real file (AutoAWQ
    0.2.9 AutoAWQForCausalLM.quantize + save_quantized): the 2 real groups
    of k_proj come first, the 6 padding columns of scales and the padding
    nibbles of qzeros are zero (WQLinear_GEMV.from_linear fills a zeros
    buffer from the left)."""
    sc, qz = _stored(SUB, K_PROJ + ".scales", K_PROJ + ".qzeros")
    assert sc.shape == (64, 8) and qz.shape == (64, 1)
    zeros = (qz.view(np.uint32)[:, :, None] >> np.arange(0, 32, 4, dtype=np.uint32)) & 15
    assert (sc[:, 2:] == 0).all() and (sc[:, :2] != 0).all()
    assert (zeros.reshape(64, 8)[:, 2:] == 0).all()


def test_gemv_grade_decodes_as_autoawq() -> None:
    """The grade the convention records, decoded by the codec over the
    unpadded planes (qweight's LSB-first nibbles are GRIT's u4 stream as
    they are; the first groups of scales; the zero points one per byte,
    §3.4), equals AutoAWQ's dequantised weight bit for bit
    (awq-gemv-4bit-g128.dequant.safetensors, AwqQuantizer.pseudo_quantize_tensor
    in float16: (q - z) · scales)."""
    from safetensors.numpy import load_file

    from grit_scan.codec.decode import decode
    from grit_scan.codec.grade import registry

    art = next(a for a in grit_scan.scan([str(P / SUB)]).artifacts if a.quantized)
    (q,) = [q for q in art.quantized if q.name == K_PROJ + ".weight"]
    assert q.grade is not None and q.desc is not None and q.reason is not None
    assert q.grade.canonical == ("grit1(e=u4,k0=128,s0=binary16,zp=u4,esr=affineminmax,"
                                 "dt=binary16)")
    qw, sc, qz = _stored(SUB, K_PROJ + ".qweight", K_PROJ + ".scales", K_PROJ + ".qzeros")
    groups = q.shape[1] // q.desc.k0
    zeros = ((qz.view(np.uint32)[:, :, None] >> np.arange(0, 32, 4, dtype=np.uint32)) & 15)
    zp = zeros.reshape(qz.shape[0], -1)[:, :groups].astype(np.uint8)
    planes = [qw.tobytes(), np.ascontiguousarray(sc[:, :groups]).tobytes(), b"", zp.tobytes()]
    got = np.asarray(decode(q.desc, list(q.shape), planes=planes,
                            grades=registry([q.grade])), dtype=np.float32)
    ref = load_file(str(P / f"{SUB}.dequant.safetensors"))[K_PROJ + ".weight"]
    got = got.reshape(ref.shape)
    assert ((got.view(np.uint32) == ref.view(np.uint32)) | ((got == 0) & (ref == 0))).all()


def test_gemv_with_wrong_padding_is_a_size_mismatch(tmp_path: Path) -> None:
    """scales and qzeros twice as wide as calculate_zeros_width (a writer
    that padded to 16 groups): the padded size equations fail."""
    from safetensors.numpy import save_file

    sub = tmp_path / SUB
    shutil.copytree(P / SUB, sub)
    with safe_open(str(sub / "model.safetensors"), "np") as f:
        # the quantised modules only (numpy reads no bfloat16)
        tensors = {n: f.get_tensor(n) for n in f.keys()
                   if n.endswith((".qweight", ".scales", ".qzeros"))}
    for n in [n for n in tensors if n.endswith((".scales", ".qzeros"))]:
        t = tensors[n]
        tensors[n] = np.concatenate([t, np.zeros_like(t)], axis=1)
    save_file(tensors, str(sub / "model.safetensors"))
    r = grit_scan.scan([str(sub)])
    sizes = [f for f in r.findings if str(f.kind) == "size_mismatch"]
    assert len(sizes) == 14 and all("calculate_zeros_width = 1" in f.message
                                    for f in sizes if "k_proj" in f.message)
    assert scan_exit(sub, "graded") == 1 and scan_exit(sub, "simple") == 1
