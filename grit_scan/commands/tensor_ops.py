"""FILE::TENSOR operands: a tensor inside a checkpoint, for explain and decode."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import typer

from ..api import ReadError, load_tensor, open_tensor, split_spec, tensor_bytes
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


EXIT_UNREADABLE = 4  # scan's "could not read": the call was valid, the tensor is not decodable


def _refuse(spec: str, message: str, as_json: bool, code: int = EXIT_UNREADABLE,
            **extra: object) -> NoReturn:
    """A decode that cannot be done: one line on stderr, or with ``--json``
    one JSON object on stdout; exit 4 (as scan's could-not-read)."""
    if as_json:
        from .common import emit_json

        emit_json({"tensor": spec, "error": message, "exit_code": code, **extra})
    else:
        from ._app import error_line

        error_line(message)
    raise typer.Exit(code)


def decode_tensor(spec: str, out: Path | None, as_json: bool) -> None:
    from ..codec.decode import decode
    from .decoded import write_decoded

    try:
        art, q, sources = open_tensor(spec)
    except GritError as exc:
        _refuse(spec, str(exc), as_json)
    if q.desc is None:
        _refuse(spec, f"{spec}: no descriptor: {q.reason or 'not representable in GRIT v1'}",
                as_json, reason=q.reason)
    grades = registry([q.grade] if q.grade is not None else [])
    try:
        raw = tensor_bytes(art, q, sources)
        values = decode(q.desc, list(q.shape), raw, grades=grades, layouts=q.layouts)
    except GritCheckError as exc:
        _refuse(spec, f"{exc.status.label} (step {exc.detail.step}): {exc.detail.message}",
                as_json, 1, status=exc.status.label, step=exc.detail.step)
    except (GritError, ReadError) as exc:
        _refuse(spec, f"{spec}: {exc}", as_json)
    write_decoded(values, q.desc, list(q.shape), q.grade, out, as_json, f"{art.path}::{q.name}")


def resolve_many(specs: Sequence[str]) -> list[Operand]:
    return [operand(s) for s in specs]
