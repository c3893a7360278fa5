"""The issues ``rules/kinds/internal_error.py`` reports: a reader or the inference
of a model raised: contained to that file or model."""

from __future__ import annotations

from typing import ClassVar

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "internal_error"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.INTERNAL_ERROR,)


class ReaderRaised(Issue):
    """A reader raised: contained to its file."""

    CODE = IssueCode.INTERNAL_ERROR
    TEXT = ("internal error while reading this file: {exception}: {error} (other files are "
            "unaffected; --debug shows the traceback)")
    DETAIL = ("internal_error", "rule", "exception")
    tensor: None
    exception: str  # its class's name
    error: str  # its text, cut to 500 characters
    internal_error: ClassVar[bool] = True
    rule: ClassVar[str] = "reader"


class InferenceRaised(Issue):
    """Convention inference raised: contained to its model."""

    CODE = IssueCode.INTERNAL_ERROR
    TEXT = ("internal error while inferring the conventions of model {model}: {exception}: "
            "{error} (other models are unaffected; --debug shows the traceback)")
    DETAIL = ("internal_error", "rule", "exception")
    tensor: None
    model: str
    exception: str
    error: str  # cut to 500 characters
    internal_error: ClassVar[bool] = True
    rule: ClassVar[str] = "conventions"
