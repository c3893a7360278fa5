"""The issues ``rules/kinds/reference_loader.py`` reports: the format's reference
loader's verdict on a file."""

from __future__ import annotations

from . import IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "reference_refuses"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.REFERENCE,)
