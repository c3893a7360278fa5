"""Turn a command-line operand into an explain Operand.

An operand is a 128-hex descriptor, a grade string, a registered grade name,
or FILE::TENSOR (a quantised tensor inside a safetensors or GGUF file).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..codec import explain as explain_mod
from ..codec.errors import GritError
from ._app import UsageError
from .tensor_ops import operand as tensor_operand
from .tensor_ops import split_spec


def resolve_operand(text: str, shape: Sequence[int] | None) -> explain_mod.Operand:
    if split_spec(text) is not None:
        return tensor_operand(text)
    try:
        return explain_mod.operand(text, shape)
    except GritError as exc:
        raise UsageError(
            f"{text!r} is not a descriptor, grade string, grade name or FILE::TENSOR: {exc}"
        ) from None
