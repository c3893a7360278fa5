"""The issues ``rules/kinds/index_inconsistency.py`` reports: an index, a manifest
or a split that disagrees with the files."""

from __future__ import annotations

from . import IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "index_inconsistency"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.INDEX_INCONSISTENT,)
