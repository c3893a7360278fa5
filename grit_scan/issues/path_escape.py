"""The issues ``rules/kinds/path_escape.py`` reports: a path that resolves outside
the scanned tree."""

from __future__ import annotations

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "path_escape"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.PATH_ESCAPE,)


class IndexEscape(Issue):
    """An index entry whose shard path would leave the scanned directory."""

    CODE = IssueCode.PATH_ESCAPE
    TEXT = ("weight_map sends {tensor!r} to {path!r}: {why} would leave the scanned "
            "directory; it was not opened")
    DETAIL = ("path",)
    tensor: str
    path: str
    why: str  # how it would leave (parsers/index.py ``escapes``)


class ManifestEscape(Issue):
    """A manifest path that would leave the manifest's directory."""

    CODE = IssueCode.PATH_ESCAPE
    TEXT = ("manifest path {path!r} is {why}: it would leave the manifest's directory; not "
            "opened")
    DETAIL = ("path",)
    tensor: None
    path: str
    why: str


class ManifestLinkEscape(Issue):
    """A manifest path that resolves (through a link) outside the tree."""

    CODE = IssueCode.PATH_ESCAPE
    TEXT = "manifest path {path!r} resolves outside the scanned tree; not opened"
    DETAIL = ("path",)
    tensor: None
    path: str


class RemoteListingEscape(Issue):
    """A remote listing that names a path outside its root."""

    CODE = IssueCode.PATH_ESCAPE
    TEXT = "the listing of {root} names {name!r}, {why}: refused, never requested"
    tensor: None
    root: str
    name: str
    why: str


class RemoteCode(Issue):
    """A config.json auto_map entry that loads code from another repository."""

    CODE = IssueCode.PATH_ESCAPE
    TEXT = ("auto_map loads {path!r}: code from another repository, outside the scanned tree "
            "(trust_remote_code would fetch and run it)")
    DETAIL = ("path",)
    tensor: None
    path: str


class UnsafeRemotePath(Issue):
    """A remote address refused as unsafe (the refusal's text)."""

    CODE = IssueCode.PATH_ESCAPE
    TEXT = "{error}"
    tensor: None
    error: str
