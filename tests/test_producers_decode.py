"""`grit decode` against the producers' own dequantised values
(fixtures/producers/<ckpt>.dequant.safetensors; MANIFEST.json names the
function): bit for bit, NaN == NaN, and ±0 compared as values (§2.4 decodes
a negative-zero code as -0; some producers' decoders return +0)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from grit_scan.api import load_tensor, tensor_bytes
from grit_scan.cli import main
from grit_scan.codec.decode import decode
from grit_scan.codec.grade import registry

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"


def _file(sub: str, tensor_prefix: str) -> Path:
    d = P / sub
    if d.is_file():
        return d
    idx = d / "model.safetensors.index.json"
    if idx.exists():
        wm = json.loads(idx.read_text())["weight_map"]
        return d / next(v for k, v in wm.items() if k.startswith(tensor_prefix))
    return next(d.glob("*.safetensors"))


ACCEPTED = [
    ("ct/fp8-dynamic-sharded", "model.layers.0.self_attn.k_proj.weight", None),
    ("ct/fp8-block", "model.layers.0.self_attn.k_proj.weight", None),
    ("ct/w8a8-int8", "model.layers.0.self_attn.k_proj.weight", None),
    ("ct/w4afp8", "model.layers.0.self_attn.k_proj.weight", None),
    ("ct/mxfp8", "model.layers.0.self_attn.k_proj.weight", None),
    ("ct/mxfp4a16", "model.layers.0.self_attn.k_proj.weight", None),
    ("modelopt/nvfp4", "model.layers.0.self_attn.k_proj.weight", None),
    ("gguf-quants/tiny-llama-Q8_0.gguf", "blk.0.attn_k.weight", "gguf-quants/tiny-llama-Q8_0"),
    ("gguf-quants/tiny-llama-Q4_K_M.gguf", "blk.0.attn_k.weight",
     "gguf-quants/tiny-llama-Q4_K_M"),
    ("gguf-moe/tiny-mixtral-MXFP4_MOE.gguf", "blk.0.ffn_gate_exps.weight",
     "gguf-moe/tiny-mixtral-MXFP4_MOE"),
]


def _same(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    bits = ours.view(np.uint32) == ref.view(np.uint32)
    zeros = (ours == 0) & (ref == 0)
    nans = np.isnan(ours) & np.isnan(ref)
    return bits | zeros | nans


@pytest.mark.parametrize("sub,name,stem", ACCEPTED)
def test_decode_matches_producer(sub: str, name: str, stem: str | None) -> None:
    ref = load_file(str(P / f"{stem or sub}.dequant.safetensors"))[name]
    path = _file(sub, name.rsplit(".", 1)[0])
    art, q = load_tensor(f"{path}::{name}")
    assert q.desc is not None
    ours = decode(q.desc, list(q.shape), tensor_bytes(art, q),
                  grades=registry([q.grade] if q.grade else []), layouts=q.layouts)
    ours = np.asarray(ours, dtype=np.float32).reshape(ref.shape)
    assert _same(ours, ref).all()


def test_cli_decode_out_matches_producer(tmp_path: Path) -> None:
    out = tmp_path / "v.f32"
    name = "model.layers.0.self_attn.k_proj.weight"
    rc = main(["decode", f"{P / 'ct/w8a8-int8/model.safetensors'}::{name}", "--out", str(out)])
    assert not rc
    ref = load_file(str(P / "ct/w8a8-int8.dequant.safetensors"))[name]
    got = np.fromfile(out, dtype="<f4").reshape(ref.shape)
    assert (got.view(np.uint32) == ref.view(np.uint32)).all()


REFUSED = [
    ("bnb/int8", "model.layers.0.self_attn.k_proj.weight", "SCB"),
    ("ct/nvfp4a16-sharded", "model.layers.0.self_attn.k_proj.weight", "DIVISOR"),
    ("ct/w4a16-int", "model.layers.0.self_attn.k_proj.weight_packed", "pack-quantized"),
    ("bnb/nf4", "model.layers.0.self_attn.k_proj.weight", "lookup table"),
    ("gptq/v1-legacy-4bit-g128", "model.layers.0.self_attn.k_proj.qweight", "§0.3d"),
    ("gptq/v1-8bit-perchannel", "model.layers.1.self_attn.k_proj.qweight", "placement"),
    ("awq/gemm-4bit-g128", "model.layers.0.self_attn.k_proj.qweight", "§0.3d"),
    # one scale per tensor: no descriptor, so nothing to decode by (§3.7, §3.1)
    ("modelopt/fp8", "model.layers.0.self_attn.k_proj.weight", "per-tensor"),
]


@pytest.mark.parametrize("sub,name,why", REFUSED)
def test_decode_refuses_clearly(sub: str, name: str, why: str, capsys: pytest.CaptureFixture[str]
                                ) -> None:
    path = _file(sub, name.rsplit(".", 1)[0])
    try:
        rc = main(["decode", f"{path}::{name}"])
    except SystemExit as exc:
        rc = int(exc.code or 0)
    assert rc != 0
    err = capsys.readouterr()
    assert why in err.err + err.out
