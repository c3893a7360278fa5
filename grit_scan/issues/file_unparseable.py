"""The issues ``rules/kinds/file_unparseable.py`` reports: a file that could not
be parsed or read at all (and the paths the walk skipped)."""

from __future__ import annotations

from dataclasses import dataclass

from . import LLAMA_CPP_REFUSES, Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = "file_unparseable"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.UNPARSEABLE, IssueCode.DUPLICATE, IssueCode.GRIT_HEADER, IssueCode.CHANGED,
         IssueCode.SKIPPED)


@dataclass(frozen=True, slots=True)
class DuplicateTensor(Issue):
    """A safetensors header that lists a tensor twice."""

    CODE = IssueCode.DUPLICATE
    TEXT = ("tensor {tensor!r} is listed more than once in the header; readers that keep the "
            "last entry (the Rust reference) and readers that keep the first disagree about "
            "its bytes")
    tensor: str


@dataclass(frozen=True, slots=True)
class DuplicateKey(Issue):
    """A key twice inside one header entry."""

    CODE = IssueCode.DUPLICATE
    TEXT = "key {key!r} appears twice inside a header entry"
    tensor: None
    key: str


@dataclass(frozen=True, slots=True)
class GgufNameTooLong(Issue):
    """A GGUF tensor name of GGML_MAX_NAME bytes or more (the rest of the
    file is still read: only llama.cpp stops here)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = ("tensor name {shown} is {size} bytes; ggml requires fewer than {limit} "
            "(GGML_MAX_NAME): " + LLAMA_CPP_REFUSES)
    tensor: str
    limit: int

    @property
    def shown(self) -> str:
        name = self.tensor
        return f"{name[:80]!r}{'...' if len(name) > 80 else ''}"

    @property
    def size(self) -> int:
        return len(self.tensor.encode())


@dataclass(frozen=True, slots=True)
class OverBudget(Issue):
    """A file past one of the scan's budgets (``text`` is the budget's own
    sentence, parsers/budgets.py)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "{text}"
    DETAIL = ("budget",)
    tensor: None
    text: str
    budget: str


@dataclass(frozen=True, slots=True)
class IndexNotObject(Issue):
    """An index whose JSON is not an object."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "an index must be a JSON object"
    tensor: None


@dataclass(frozen=True, slots=True)
class IndexNoWeightMap(Issue):
    """An index without a weight_map of names to shard names."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "the index has no weight_map of tensor -> shard names"
    tensor: None


# -- grit-manifest.json (parsers/manifest.py)


@dataclass(frozen=True, slots=True)
class NotAManifest(Issue):
    """A grit-manifest.json that is not one."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = 'not a grit-manifest.json: expected {{"grit_manifest": 1, "artifacts": [...]}}'
    tensor: None


@dataclass(frozen=True, slots=True)
class ManifestEntryNoPath(Issue):
    """A manifest artifact entry without a path."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "a manifest artifact entry has no path"
    tensor: None


@dataclass(frozen=True, slots=True)
class _ManifestTensor(Issue):
    """A tensor entry of a manifest's file (``file::tensor``)."""

    CODE = IssueCode.UNPARSEABLE
    tensor: str
    file: str


@dataclass(frozen=True, slots=True)
class ManifestTensorNotObject(_ManifestTensor):
    TEXT = "{file}::{tensor}: entry is not an object"


@dataclass(frozen=True, slots=True)
class ManifestDescNotText(_ManifestTensor):
    TEXT = "{file}::{tensor}: desc: not a hex text"


@dataclass(frozen=True, slots=True)
class ManifestDescInvalid(_ManifestTensor):
    TEXT = "{file}::{tensor}: desc: {error}"
    error: str  # the codec's refusal


@dataclass(frozen=True, slots=True)
class ManifestShapeBad(_ManifestTensor):
    TEXT = "{file}::{tensor}: bad shape"


@dataclass(frozen=True, slots=True)
class ManifestGidInvalid(_ManifestTensor):
    TEXT = "{file}::{tensor}: gid: {error}"
    error: str  # the codec's refusal


@dataclass(frozen=True, slots=True)
class ManifestGidNotText(_ManifestTensor):
    TEXT = "{file}::{tensor}: gid: not a base32 text"


@dataclass(frozen=True, slots=True)
class ManifestDigestBad(_ManifestTensor):
    TEXT = "{file}::{tensor}: digest: not 32 hex digits"
