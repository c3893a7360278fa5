"""The issues ``rules/kinds/reference_loader.py`` reports: the format's reference
loader's verdict on a file."""

from __future__ import annotations

from typing import ClassVar

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "reference_refuses"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.REFERENCE,)


class ReferenceOpens(Issue):
    """The safetensors library opens the file."""

    CODE = IssueCode.REFERENCE
    TEXT = "the safetensors library opens this file"
    DETAIL = ("opens", "error")
    tensor: None
    error: str  # the verdict's (empty when it opens)
    opens: ClassVar[bool] = True


class ReferenceRefuses(Issue):
    """The safetensors library refuses the file (its error's text)."""

    CODE = IssueCode.REFERENCE
    TEXT = "the safetensors library refuses this file: {error}"
    DETAIL = ("opens", "error")
    tensor: None
    error: str
    opens: ClassVar[bool] = False
