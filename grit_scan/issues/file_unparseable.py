"""The issues ``rules/kinds/file_unparseable.py`` reports: a file that could not
be parsed or read at all (and the paths the walk skipped)."""

from __future__ import annotations

from . import IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "file_unparseable"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.UNPARSEABLE, IssueCode.DUPLICATE, IssueCode.GRIT_HEADER, IssueCode.CHANGED,
         IssueCode.SKIPPED)
