"""The issues ``rules/kinds/internal_error.py`` reports: a reader or the inference
of a model raised: contained to that file or model."""

from __future__ import annotations

from . import IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "internal_error"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.INTERNAL_ERROR,)
