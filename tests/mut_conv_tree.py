"""Small checkpoints written with numpy and the safetensors library in a
producer's layout (its tensor names, dtypes and shapes, and the config it
writes beside them), scanned through the public API: the helpers of the
per-convention tests (tests/test_mut_conv_*.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import save_file

import grit_scan


def write(root: Path, tensors: dict[str, np.ndarray], quantization_config: dict[str, Any] |
          None = None, **files: dict[str, Any]) -> Path:
    """``root/model.safetensors`` holding ``tensors``, a config.json whose
    ``quantization_config`` is the one given, and any further JSON files
    (``hf_quant_config={...}`` writes hf_quant_config.json)."""
    root.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(root / "model.safetensors"))
    write_config(root, quantization_config, **files)
    return root


def scan(root: Path, deep: bool = False) -> tuple[list[Any], list[Any]]:
    """(the quantised tensors, the issues) of the one safetensors file under
    ``root``; no reader or convention may have raised on the way."""
    r = grit_scan.scan([str(root)], deep=deep)
    arts = [a for a in r.artifacts if a.path.endswith(".safetensors")]
    assert len(arts) == 1, [a.path for a in r.artifacts]
    (a,) = arts
    assert [i.message for i in a.issues if i.code == "internal_error"] == []
    assert [f.message for f in r.findings if str(f.kind) == "internal_error"] == []
    return list(a.quantized), list(a.issues)


def of(issues: list[Any], code: str) -> list[Any]:
    """The issues of one code (``"size"``, ``"not_representable"``, ``"note"`` ...)."""
    return [i for i in issues if i.code == code]


def only(items: list[Any]) -> Any:
    assert len(items) == 1, items
    return items[0]


ITEM = {"F8_E4M3": 1, "F8_E5M2": 1, "U8": 1, "I8": 1, "F16": 2, "BF16": 2, "F32": 4,
        "I32": 4, "U32": 4}


def write_raw(root: Path, tensors: dict[str, tuple[str, tuple[int, ...]]],
              quantization_config: dict[str, Any] | None = None,
              short: dict[str, int] | None = None, **files: dict[str, Any]) -> Path:
    """As ``write``, for dtypes numpy has not (FP8): the safetensors file is
    written byte by byte (an 8-byte little-endian header length, the JSON
    header, zero-filled data in the order given).  ``short`` takes that many
    bytes off the named tensors' data spans (a plane bytes short)."""
    root.mkdir(parents=True, exist_ok=True)
    header: dict[str, Any] = {}
    at = 0
    for name, (dtype, shape) in tensors.items():
        n = ITEM[dtype] * int(np.prod(shape, dtype=np.int64)) - (short or {}).get(name, 0)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + n]}
        at += n
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    (root / "model.safetensors").write_bytes(
        len(head).to_bytes(8, "little") + head + bytes(at))
    write_config(root, quantization_config, **files)
    return root


def write_config(root: Path, quantization_config: dict[str, Any] | None,
                 **files: dict[str, Any]) -> None:
    config: dict[str, Any] = {"model_type": "llama"}
    if quantization_config is not None:
        config["quantization_config"] = quantization_config
    (root / "config.json").write_text(json.dumps(config))
    for name, body in files.items():
        (root / f"{name}.json").write_text(json.dumps(body))
