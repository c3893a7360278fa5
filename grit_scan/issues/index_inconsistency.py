"""The issues ``rules/kinds/index_inconsistency.py`` reports: an index, a manifest
or a split that disagrees with the files."""

from __future__ import annotations

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "index_inconsistency"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.INDEX_INCONSISTENT,)


class IndexMetadataNotObject(Issue):
    """An index whose metadata is not an object."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = ("the index's metadata is not an object: transformers' loader adds its keys to it "
            "(get_checkpoint_shard_files) and fails")
    tensor: None


class IndexNoMetadata(Issue):
    """An index without a metadata key."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = ("the index has no metadata object: transformers' loader reads index[\"metadata\"] "
            "(get_checkpoint_shard_files) and fails with KeyError")
    tensor: None


class PickleShard(Issue):
    """A safetensors index that names a pickle-style file."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = ("a safetensors index names {path!r}, a pickle-style file: extension confusion "
            "(loaders refuse it, hub#4033)")
    DETAIL = ("path",)
    tensor: str
    path: str


class NotInShard(Issue):
    """An index entry whose shard's header does not list the tensor."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = "the index maps {tensor!r} to {path!r}, whose header does not have it"
    DETAIL = ("path",)
    tensor: str
    path: str


class InSeveralShards(Issue):
    """A tensor that several shards hold."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = ("tensor {tensor!r} is in {count} shards ({listed}): which copy a loader uses "
            "depends on its load order (vllm#54230)")
    tensor: str
    shards: tuple[str, ...]  # sorted

    @property
    def count(self) -> int:
        return len(self.shards)

    @property
    def listed(self) -> str:
        return ", ".join(self.shards)


class NotInIndex(Issue):
    """A shard's tensor that the index does not list."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = ("tensor {tensor!r} in {path!r} is not in the index: loaders that go by the index "
            "never load it")
    DETAIL = ("path",)
    tensor: str
    path: str


class ShardNotIndexed(Issue):
    """A file of an index's shard set, by its name, that the index maps no
    tensor to."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = ("{path!r} is a shard of this index's set by its name, but the index maps no "
            "tensor to it: loaders that go by the index never load it ({count} tensor(s))")
    DETAIL = ("path", "count")
    tensor: None
    path: str
    count: int


# -- the parts of a GGUF split (rules/support.py ``split_issues``)


class SplitCountsDisagree(Issue):
    """Parts of one split that disagree on split.count."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = "the parts of split {base} disagree on split.count: {counts}"
    DETAIL = ("counts",)
    tensor: None
    base: str
    found: tuple[int, ...]  # sorted

    @property
    def counts(self) -> list[int]:
        return list(self.found)


class SplitPartRepeated(Issue):
    """A part number that several files of one split carry."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = "split part {part} of {base} appears {count} times: {listed}"
    DETAIL = ("paths",)
    tensor: None
    part: int  # counted from 1
    base: str
    files: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.files)

    @property
    def listed(self) -> str:
        return ", ".join(self.files)

    @property
    def paths(self) -> list[str]:
        return list(self.files)


class SplitPartOutside(Issue):
    """A part whose number is past its split's count."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = "{path} says it is part {part} of a {n}-part split"
    DETAIL = ("path",)
    tensor: None
    path: str
    part: int  # counted from 1
    n: int


class SplitTensorCount(Issue):
    """A split whose parts hold another number of tensors than it records."""

    CODE = IssueCode.INDEX_INCONSISTENT
    TEXT = ("split {base} records {expected:,} tensors (split.tensors.count) but its parts "
            "hold {actual:,}")
    DETAIL = ("expected", "actual")
    tensor: None
    base: str
    expected: int
    actual: int
