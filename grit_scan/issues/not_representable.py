"""The issues ``rules/kinds/not_representable.py`` reports: a convention GRIT
v1 cannot express."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "not_representable"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.NOT_REPRESENTABLE,)


class NotRepresentable(Issue):
    """A module in a convention GRIT v1 cannot express: ``reason`` is the
    convention's own account (the same text its QTensor carries)."""

    CODE = IssueCode.NOT_REPRESENTABLE
    TEXT = "{tensor}: {reason}"
    tensor: str
    reason: str
    # clause, convention, then what the convention recorded (shared by the
    # modules a plan replays it on)
    detail: Mapping[str, Any]

    @property
    def clause(self) -> str:
        return str(self.detail["clause"])

    @property
    def convention(self) -> str:
        return str(self.detail["convention"])


class ActOrder(Issue):
    """GPTQ with desc_act: groups follow g_idx, not contiguous runs."""

    CODE = IssueCode.NOT_REPRESENTABLE
    TEXT = ("{tensor}: GPTQ act-order (desc_act=true) assigns columns to groups through "
            "g_idx; §3.7 grouping is contiguous, so it is not expressible (§0.3(c))")
    DETAIL = ("clause", "convention")
    tensor: str
    clause: ClassVar[str] = "§0.3(c)"
    convention: ClassVar[str] = "gptq"


class UnsupportedFile(Issue):
    """A valid file of a kind grit does not represent (the reader's
    Unsupported text): one line, not a structural finding."""

    CODE = IssueCode.NOT_REPRESENTABLE
    TEXT = "{error}"
    DETAIL = ("unsupported",)
    tensor: None
    error: str
    unsupported: ClassVar[bool] = True
