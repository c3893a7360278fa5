"""The issues ``rules/kinds/missing_shard.py`` reports: an index, a manifest or a
split names a file that is not there."""

from __future__ import annotations

from . import IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "missing_shard"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.MISSING_SHARD,)
