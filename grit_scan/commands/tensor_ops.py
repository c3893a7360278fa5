"""FILE::TENSOR operands: a tensor inside a checkpoint, for explain and decode."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer

from ..api import ReadError, load_tensor, split_spec, tensor_bytes
from ..artifact import Artifact, QTensor
from ..codec.errors import GritCheckError, GritError
from ..codec.explain import Operand
from ..codec.grade import registry
from ._app import UsageError

__all__ = ["decode_tensor", "load", "operand", "resolve_many", "split_spec"]


def load(spec: str) -> tuple[Artifact, QTensor]:
    try:
        return load_tensor(spec)
    except GritError as exc:
        raise UsageError(str(exc)) from None


def operand(spec: str) -> Operand:
    art, q = load(spec)
    if q.desc is None:
        raise UsageError(f"{spec}: no descriptor: {q.reason or 'not representable in GRIT v1'}")
    return Operand(f"{art.path}::{q.name}", q.desc, q.grade, tuple(q.shape),
                   layouts=q.layouts)


def decode_tensor(spec: str, out: Path | None, as_json: bool) -> None:
    from ..codec.decode import decode
    from .codec_ops import print_check_failure, write_decoded

    art, q = load(spec)
    if q.desc is None:
        raise UsageError(f"{spec}: no descriptor: {q.reason or 'not representable'}")
    grades = registry([q.grade] if q.grade is not None else [])
    try:
        raw = tensor_bytes(art, q)
        values = decode(q.desc, list(q.shape), raw, grades=grades, layouts=q.layouts)
    except GritCheckError as exc:
        print_check_failure(exc)
        raise typer.Exit(1) from None
    except (GritError, ReadError) as exc:
        raise UsageError(f"{spec}: {exc}") from None
    write_decoded(values, q.desc, list(q.shape), q.grade, out, as_json)


def resolve_many(specs: Sequence[str]) -> list[Operand]:
    return [operand(s) for s in specs]
