"""The issues ``rules/kinds/path_escape.py`` reports: a path that resolves outside
the scanned tree."""

from __future__ import annotations

from . import IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "path_escape"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.PATH_ESCAPE,)
