"""bitsandbytes 4-bit (conventions/kinds/bitsandbytes_4bit.py) in the
layout bitsandbytes 0.50.2 serialises through transformers
(fixtures/producers/bnb-*; QuantState.as_dict): ``weight`` U8 [n/2, 1]
(two codes a byte), ``weight.absmax`` one per block (U8 codes under double
quant), ``weight.quant_map`` F32 [16], under double quant
``weight.nested_absmax`` one per 256 absmax codes and
``weight.nested_quant_map`` F32 [256], and the packed
``weight.quant_state.bitsandbytes__nf4``.  Expected block sizes and counts
are that arithmetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mut_conv_tree import of, only, scan, write

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
MOD = "model.layers.0.self_attn.k_proj"
W = f"{MOD}.weight"
QC = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}


def bnb(codes: int, blocks: int | None, nested: int | None = None, nmap: int = 256,
        weight: bool = True, absmax_dtype=None) -> dict[str, np.ndarray]:
    t: dict[str, np.ndarray] = {}
    if weight:
        t[W] = np.zeros((codes // 2, 1), np.uint8)
    if blocks is not None:
        dt = absmax_dtype or (np.uint8 if nested is not None else np.float32)
        t[f"{W}.absmax"] = np.zeros(blocks, dt)
    t[f"{W}.quant_map"] = np.zeros(16, np.float32)
    if nested is not None:
        t[f"{W}.nested_absmax"] = np.zeros(nested, np.float32)
        t[f"{W}.nested_quant_map"] = np.zeros(nmap, np.float32)
    t[f"{W}.quant_state.bitsandbytes__nf4"] = np.frombuffer(b'{"quant_type": "nf4"}',
                                                             np.uint8).copy()
    return t


def refused(tmp_path: Path, tensors):
    qs, issues = scan(write(tmp_path, tensors, QC))
    q = only(qs)
    assert q.convention == "bitsandbytes-nf4" and q.grade is None
    assert of(issues, "size") == []
    return q, only(of(issues, "not_representable")).detail


def test_the_fixture_tensor_keeps_the_stored_shape() -> None:
    """k_proj [64, 256] is stored as 8,192 bytes [8192, 1]: the refused tensor
    is what the file holds (no descriptor gives the logical shape)."""
    qs, _ = scan(P / "bnb-nf4")
    (q,) = [q for q in qs if q.name == W]
    assert tuple(q.shape) == (8192, 1)


@pytest.mark.parametrize("tensors", [bnb(16384, 256, weight=False), bnb(16384, None)],
                         ids=["no-weight", "no-absmax"])
def test_too_few_parts_hold_to_no_equation(tmp_path: Path, tensors) -> None:
    q, d = refused(tmp_path, tensors)
    assert "blocksize" not in d and "codes" not in d
    assert tuple(q.shape) == ((8192, 1) if W in tensors else ())


def test_blocks_of_16(tmp_path: Path) -> None:
    _, d = refused(tmp_path, bnb(128, 8))
    assert (d["codes"], d["blocksize"], d["blocks"]) == (128, 16, 8)


@pytest.mark.parametrize("codes,blocks", [(64, 8), (192, 4)], ids=["8", "48"])
def test_blocks_not_a_power_of_two_of_16_or_more(tmp_path: Path, codes, blocks) -> None:
    qs, issues = scan(write(tmp_path, bnb(codes, blocks), QC))
    assert qs == []
    s = only(of(issues, "size"))
    assert s.tensor == W and "the block size is not a power of two" in s.message


def test_double_quant_past_256_blocks(tmp_path: Path) -> None:
    """257 absmax codes need ceil(257/256) = 2 nested absmax values."""
    _, d = refused(tmp_path, bnb(257 * 64, 257, nested=2))
    assert (d["blocks"], d["blocksize"], d["nested_blocks"]) == (257, 64, 2)


@pytest.mark.parametrize("nested,nmap,absmax_dtype", [
    (3, 256, None), (1, 256, None), (2, 255, None), (2, 256, np.float32)],
    ids=["too-many", "too-few", "nested-map", "float-absmax"])
def test_double_quant_that_does_not_hold(tmp_path: Path, nested, nmap, absmax_dtype) -> None:
    t = bnb(257 * 64, 257, nested=nested, nmap=nmap, absmax_dtype=absmax_dtype)
    qs, issues = scan(write(tmp_path, t, QC))
    assert qs == []
    s = only(of(issues, "size"))
    assert s.message.startswith(f"{W}: bitsandbytes nf4: double quant: 257 absmax codes "
                                "need 2 nested_absmax values")
