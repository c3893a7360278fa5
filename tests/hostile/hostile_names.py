"""A checkpoint tree whose names would take over a terminal or a shell
(issue 16 defect 6), shared by test_escaping.py and test_defects.py."""

from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SHELL = "q.weight'; touch PWNED; echo '"
ESC_NAME = "model.layers.1.self_attn.k_proj.weight\x1b[2J\x1b]52;c;cHduZWQ=\x07\u202egpj"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def rename_tensor(src: Path, dst: Path, old: str, new: str) -> None:
    """Copy a GRIT safetensors file with one logical tensor renamed (header
    keys and the __grit__ table), data bytes unchanged."""
    raw = src.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    grit = json.loads(head["__metadata__"]["__grit__"])
    grit["tensors"] = {k.replace(old, new): {**v, "planes": {p: t.replace(old, new)
                                                            for p, t in v["planes"].items()}}
                       for k, v in grit["tensors"].items()}
    head = {k.replace(old, new): v for k, v in head.items()}
    head["__metadata__"]["__grit__"] = json.dumps(grit)
    text = json.dumps(head).encode()
    text += b" " * (-len(text) % 8)
    dst.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n:])


def hostile_tree(base: Path) -> Path:
    """fixtures/sample under a directory named SHELL/"sample ESC[2J", with
    one tensor renamed ESC_NAME; returns the renamed file."""
    tree = base / SHELL / "sample\x1b[2J"
    shutil.copytree(ROOT / "fixtures" / "sample", tree)
    f = tree / "llama-mxfp4" / "model.safetensors"
    rename_tensor(f, f, "model.layers.1.self_attn.k_proj.weight", ESC_NAME)
    return f
