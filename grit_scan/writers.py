"""Writers for round trips and fixtures: GRIT-annotated safetensors and
GRIT-native GGUF (RECONSTRUCTION §10).

These write *new* files the caller names; the scanner never writes to a file
it scans.  ``write_safetensors`` takes raw bytes per tensor so it can also
produce deliberately broken files for the hostile-input tests.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .codec.descriptor import Descriptor
from .codec.encode import Encoded
from .codec.fingerprint import digest_planes
from .codec.grade import REGISTERED, Grade

_REGISTERED_IDS = {g.grade_id for g in REGISTERED.values()}


@dataclass
class Raw:
    """One stored tensor: dtype (safetensors spelling), shape, bytes."""

    dtype: str
    shape: Sequence[int]
    data: bytes


def write_safetensors(path: str | os.PathLike[str], tensors: Mapping[str, Raw],
                      metadata: Mapping[str, str] | None = None,
                      header_override: bytes | None = None) -> None:
    """A safetensors file: tensors laid out in the given order, the header
    padded with spaces to a multiple of 8 (as the reference writer does)."""
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    off = 0
    for name, t in tensors.items():
        header[name] = {"dtype": t.dtype, "shape": list(t.shape),
                        "data_offsets": [off, off + len(t.data)]}
        off += len(t.data)
    text = header_override if header_override is not None else json.dumps(
        header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for t in tensors.values():
            f.write(t.data)


@dataclass
class GritTensor:
    """A logical GRIT tensor to write: descriptor, shape, canonical planes
    (or a payload in the descriptor's placements)."""

    name: str
    desc: Descriptor
    shape: Sequence[int]
    planes: Sequence[bytes] | None = None
    payload: bytes | None = None
    grade: Grade | None = None
    digest: bool = True

    @classmethod
    def from_encoded(cls, name: str, enc: Encoded, grade: Grade | None = None) -> GritTensor:
        return cls(name, enc.desc, enc.shape, planes=enc.planes, grade=grade)


def grit_header(tensors: Iterable[GritTensor], producer: str | None,
                layouts: Mapping[int, str] | None = None, as_payload: bool = False
                ) -> tuple[str, dict[str, Raw]]:
    """The __grit__ JSON text and the U8 plane tensors it names."""
    grades: dict[str, str] = {}
    entries: dict[str, Any] = {}
    stored: dict[str, Raw] = {}
    for t in tensors:
        if t.grade is not None and t.grade.grade_id not in _REGISTERED_IDS:
            grades[f"{t.grade.grade_id:016x}"] = t.grade.canonical
        ent: dict[str, Any] = {"desc": t.desc.hex(), "shape": list(t.shape)}
        if as_payload or t.planes is None:
            data = t.payload if t.payload is not None else b"".join(t.planes or [])
            key = f"{t.name}.grit_payload"
            stored[key] = Raw("U8", [len(data)], data)
            ent["payload"] = key
        else:
            planes = {}
            for pname, data in zip(("data", "scale0", "scale1", "aux"), t.planes):
                if data:
                    key = f"{t.name}.grit_{pname}"
                    stored[key] = Raw("U8", [len(data)], bytes(data))
                    planes[pname] = key
            ent["planes"] = planes
        if t.digest and t.planes is not None:
            ent["digest"] = digest_planes(list(t.planes)).hex()
        entries[t.name] = ent
    obj: dict[str, Any] = {"grit": 1}
    if producer:
        obj["producer"] = producer
    if grades:
        obj["grades"] = grades
    if layouts:
        obj["layouts"] = {f"{w:016x}": text for w, text in layouts.items()}
    obj["tensors"] = entries
    return json.dumps(obj, separators=(",", ":")), stored


def write_grit_safetensors(path: str | os.PathLike[str], tensors: Sequence[GritTensor],
                           producer: str | None = "grit-scan",
                           extra: Mapping[str, Raw] | None = None,
                           layouts: Mapping[int, str] | None = None,
                           as_payload: bool = False) -> None:
    text, stored = grit_header(tensors, producer, layouts, as_payload)
    allt = dict(stored)
    allt.update(extra or {})
    write_safetensors(path, allt, {"__grit__": text})


def write_grit_gguf(path: str | os.PathLike[str], tensors: Sequence[GritTensor],
                    producer: str | None = "grit-scan", arch: str = "llama",
                    extra: Mapping[str, tuple[np.ndarray, int | None]] | None = None,
                    kv: Mapping[str, Any] | None = None,
                    layouts: Mapping[int, str] | None = None) -> None:
    """GRIT-native GGUF: each tensor stored as I8 holding data ‖ scale0 ‖
    scale1 ‖ aux, with grit.desc / grit.shape / grit.digest keys."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch=arch)
    w.add_uint32("grit.version", 1)
    if producer:
        w.add_string("grit.producer", producer)
    _add_kv(w, kv)
    for word, text in (layouts or {}).items():
        w.add_string(f"grit.layout.{word:016x}", text)
    for t in tensors:
        data = t.payload if t.payload is not None else b"".join(t.planes or [])
        if t.grade is not None and t.grade.grade_id not in _REGISTERED_IDS:
            w.add_string(f"grit.grade.{t.grade.grade_id:016x}", t.grade.canonical)
        w.add_string(f"grit.desc.{t.name}", t.desc.hex())
        w.add_key_value(f"grit.shape.{t.name}", list(t.shape), gguf.GGUFValueType.ARRAY,
                        sub_type=gguf.GGUFValueType.INT64)
        if t.digest and t.planes is not None:
            w.add_string(f"grit.digest.{t.name}", digest_planes(list(t.planes)).hex())
        arr = np.frombuffer(data, dtype=np.int8).copy()
        w.add_tensor(t.name, arr, raw_dtype=gguf.GGMLQuantizationType.I8)
    for name, (arr, raw) in (extra or {}).items():
        _add_tensor(w, name, arr, raw)
    _finish(w)


def _add_kv(w: Any, kv: Mapping[str, Any] | None) -> None:
    for k, v in (kv or {}).items():
        if isinstance(v, bool):
            w.add_bool(k, v)
        elif isinstance(v, int):
            w.add_uint32(k, v)
        elif isinstance(v, str):
            w.add_string(k, v)


def _add_tensor(w: Any, name: str, arr: np.ndarray, raw: int | None) -> None:
    """A numpy tensor as-is (raw None, or F32/F16), else uint8 bytes of a ggml type."""
    import gguf

    if raw in (None, 0, 1):
        w.add_tensor(name, arr)
    else:
        w.add_tensor(name, arr, raw_dtype=gguf.GGMLQuantizationType(raw))


def _finish(w: Any) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_ggml_gguf(path: str | os.PathLike[str], tensors: Mapping[str, tuple[np.ndarray, int]],
                    arch: str = "llama", kv: Mapping[str, Any] | None = None,
                    file_type: int | None = None) -> None:
    """A plain GGUF of ggml-typed tensors (uint8 byte arrays for quantised
    types, with their ggml type code), for fixtures."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch=arch)
    if file_type is not None:
        w.add_uint32("general.file_type", file_type)
    _add_kv(w, kv)
    for name, (arr, raw) in tensors.items():
        _add_tensor(w, name, arr, raw)
    _finish(w)
