"""The issues ``rules/kinds/unsupported_convention.py`` reports: tensors that
look quantised and that no convention claims."""

from __future__ import annotations

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "unsupported_convention"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.UNSUPPORTED,)


class Unclaimed(Issue):
    """Tensors that look quantised and no convention claims."""

    CODE = IssueCode.UNSUPPORTED
    TEXT = ("{count} tensor(s) look quantised but no convention claims them (e.g. "
            "{tensor}): their quantisation is not checked")
    DETAIL = ("count", "tensors")
    tensor: str
    count: int
    first: tuple[str, ...]  # the first 50

    @property
    def tensors(self) -> list[str]:
        return list(self.first)
