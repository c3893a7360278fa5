"""Turn a command-line operand into an explain Operand.

An operand is a 128-hex descriptor, a grade string, or a registered grade
name.  (FILE::TENSOR operands join when the readers land.)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cli import UsageError
from ..codec import explain as explain_mod
from ..codec.errors import GritError


def resolve_operand(text: str, shape: Sequence[int] | None) -> explain_mod.Operand:
    try:
        return explain_mod.operand(text, shape)
    except GritError as exc:
        raise UsageError(
            f"{text!r} is not a descriptor, grade string or grade name: {exc}") from None
