"""FILE::TENSOR operands: a tensor inside a checkpoint, for explain and decode."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import typer

from ..cli import UsageError
from ..codec.errors import GritCheckError, GritError
from ..codec.explain import Operand
from ..codec.grade import registry
from ..model import Artifact, QTensor
from ..parsers import readers
from ..parsers.fileio import ReadError, SafeFile
from ..parsers.tree import _classify


def split_spec(spec: str) -> tuple[str, str] | None:
    if "::" not in spec:
        return None
    path, _, name = spec.rpartition("::")
    return (path, name) if path and name else None


def load(spec: str) -> tuple[Artifact, QTensor]:
    parts = split_spec(spec)
    if parts is None:
        raise UsageError(f"{spec!r} is not FILE::TENSOR")
    path, name = parts
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    kind = _classify(os.path.basename(path), path)
    if kind == "gguf":
        art = readers.read_gguf(path, path)
    elif kind == "safetensors":
        art = readers.read_safetensors(path, path)
    else:
        raise UsageError(f"{path}: neither safetensors nor GGUF")
    if not art.parsed:
        raise UsageError(f"{path}: " + "; ".join(i.message for i in art.issues[:1]))
    for q in art.quantized:
        if q.name == name or q.role == name:
            return art, q
    for q in art.quantized:  # a plane or payload tensor of a logical tensor
        refs = (q.planes or []) + [q.payload]
        if any(r is not None and r.tensor == name for r in refs):
            return art, q
    known = ", ".join(q.name for q in art.quantized[:8])
    raise UsageError(f"{path} has no quantised tensor {name!r}"
                     + (f" (quantised tensors: {known}{', ...' if len(art.quantized) > 8 else ''})"
                        if known else " (it has no quantised tensors)"))


def operand(spec: str) -> Operand:
    art, q = load(spec)
    if q.desc is None:
        raise UsageError(f"{spec}: no descriptor: {q.reason or 'not representable in GRIT v1'}")
    return Operand(f"{art.path}::{q.name}", q.desc, q.grade, tuple(q.shape),
                   layouts=q.layouts)


def payload_bytes(art: Artifact, q: QTensor) -> bytes:
    """The tensor's stored bytes: its payload, or its planes concatenated
    (a broadcast scalar repeated), read through SafeFile."""
    with SafeFile(art.abs_path) as f:
        if q.payload is not None:
            return f.read(q.payload.offset, q.payload.length)
        out = []
        for ref in q.planes or []:
            if ref is None:
                continue
            b = f.read(ref.offset, ref.length)
            out.append(b * ref.broadcast)
        return b"".join(out)


def decode_tensor(spec: str, out: Path | None, as_json: bool) -> None:
    from ..codec.decode import decode
    from .codec_ops import print_check_failure, write_decoded

    art, q = load(spec)
    if q.desc is None:
        raise UsageError(f"{spec}: no descriptor: {q.reason or 'not representable'}")
    grades = registry([q.grade] if q.grade is not None else [])
    try:
        raw = payload_bytes(art, q)
        values = decode(q.desc, list(q.shape), raw, grades=grades, layouts=q.layouts)
    except GritCheckError as exc:
        print_check_failure(exc)
        raise typer.Exit(1) from None
    except (GritError, ReadError) as exc:
        raise UsageError(f"{spec}: {exc}") from None
    write_decoded(values, q.desc, list(q.shape), q.grade, out, as_json)


def resolve_many(specs: Sequence[str]) -> list[Operand]:
    return [operand(s) for s in specs]
