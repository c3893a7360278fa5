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
    config: dict[str, Any] = {"model_type": "llama"}
    if quantization_config is not None:
        config["quantization_config"] = quantization_config
    (root / "config.json").write_text(json.dumps(config))
    for name, body in files.items():
        (root / f"{name}.json").write_text(json.dumps(body))
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
