"""The issues ``rules/kinds/missing_shard.py`` reports: an index, a manifest or a
split names a file that is not there."""

from __future__ import annotations

from typing import ClassVar

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "missing_shard"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.MISSING_SHARD,)


class ShardMissing(Issue):
    """A shard the index names that is not there."""

    CODE = IssueCode.MISSING_SHARD
    TEXT = ("shard {path!r} is named by {count} tensor(s) in the index but is not there "
            "(loaders that drop it silently leave garbage weights, sglang#32279)")
    DETAIL = ("path",)
    tensor: None
    path: str
    count: int


class SplitPartMissing(Issue):
    """A part of a GGUF split that is not there."""

    CODE = IssueCode.MISSING_SHARD
    TEXT = ("split part {path} is missing: shard {head} says the model has {n} part(s) "
            "(split.count) and {here} are here")
    DETAIL = ("path",)
    tensor: None
    path: str  # the part's name as gguf-split writes it
    head: str
    n: int
    here: int


class ManifestFileGone(Issue):
    """A file a grit-manifest.json lists that is not there."""

    CODE = IssueCode.MISSING_SHARD
    TEXT = "{path}: the manifest lists this file but it is gone"
    DETAIL = ("path", "manifest")
    tensor: None
    path: str
    manifest: ClassVar[bool] = True
