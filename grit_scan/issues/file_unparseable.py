"""The issues ``rules/kinds/file_unparseable.py`` reports: a file that could not
be parsed or read at all (and the paths the walk skipped)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from . import LLAMA_CPP_REFUSES, Issue, IssueCode, field

# the codes of these issues: the rule reports every issue with one of them
KIND = "file_unparseable"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.UNPARSEABLE, IssueCode.DUPLICATE, IssueCode.GRIT_HEADER, IssueCode.CHANGED,
         IssueCode.SKIPPED)


class DuplicateTensor(Issue):
    """A safetensors header that lists a tensor twice."""

    CODE = IssueCode.DUPLICATE
    TEXT = ("tensor {tensor!r} is listed more than once in the header; readers that keep the "
            "last entry (the Rust reference) and readers that keep the first disagree about "
            "its bytes")
    tensor: str


class DuplicateKey(Issue):
    """A key twice inside one header entry."""

    CODE = IssueCode.DUPLICATE
    TEXT = "key {key!r} appears twice inside a header entry"
    tensor: None
    key: str


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


class OverBudget(Issue):
    """A file past one of the scan's budgets (``text`` is the budget's own
    sentence, parsers/budgets.py)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "{text}"
    DETAIL = ("budget",)
    tensor: None
    text: str
    budget: str


class IndexNotObject(Issue):
    """An index whose JSON is not an object."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "an index must be a JSON object"
    tensor: None


class IndexNoWeightMap(Issue):
    """An index without a weight_map of names to shard names."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "the index has no weight_map of tensor -> shard names"
    tensor: None


class IndexShardNotName(Issue):
    """An index whose weight_map maps a tensor to something other than a
    shard's file name (the first such tensor named)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "the index's weight_map maps {tensor!r} to {got}, not to a shard file name"
    tensor: str
    got: str  # what JSON holds there: "a number", "null", ...


# -- grit-manifest.json (parsers/manifest.py)


class NotAManifest(Issue):
    """A grit-manifest.json that is not one."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = 'not a grit-manifest.json: expected {{"grit_manifest": 1, "artifacts": [...]}}'
    tensor: None


class ManifestEntryNoPath(Issue):
    """A manifest artifact entry without a path."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "a manifest artifact entry has no path"
    tensor: None


class _ManifestTensor(Issue):
    """A tensor entry of a manifest's file (``file::tensor``)."""

    CODE = IssueCode.UNPARSEABLE
    tensor: str
    file: str


class ManifestTensorNotObject(_ManifestTensor):
    TEXT = "{file}::{tensor}: entry is not an object"


class ManifestDescNotText(_ManifestTensor):
    TEXT = "{file}::{tensor}: desc: not a hex text"


class ManifestDescInvalid(_ManifestTensor):
    TEXT = "{file}::{tensor}: desc: {error}"
    error: str  # the codec's refusal


class ManifestShapeBad(_ManifestTensor):
    TEXT = "{file}::{tensor}: bad shape"


class ManifestGidInvalid(_ManifestTensor):
    TEXT = "{file}::{tensor}: gid: {error}"
    error: str  # the codec's refusal


class ManifestGidNotText(_ManifestTensor):
    TEXT = "{file}::{tensor}: gid: not a base32 text"


class ManifestDigestBad(_ManifestTensor):
    TEXT = "{file}::{tensor}: digest: not 32 hex digits"


# -- what the format's parser or the file system refused (the error's own text)


class ParseFailed(Issue):
    """The format's parser refused the file (``error`` is its ParseError's
    text, written where the parser stopped)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "{error}"
    tensor: None
    error: str


class Unreadable(Issue):
    """A file that could not be opened or read (its ReadError's text)."""

    CODE = IssueCode.SKIPPED
    TEXT = "{error}"
    tensor: None
    error: str


class ChangedWhileRead(Issue):
    """A file that changed while it was read (``why`` says how)."""

    CODE = IssueCode.CHANGED
    TEXT = "{why}; {then}"
    tensor: None
    why: str
    then: str  # what that means for what was read


# -- paths the walk did not read (ScanInput.skipped)


class Skipped(Issue):
    """A path the walk skipped: ``kind`` (parsers/skips.py ``SkipKind``)
    names the situation, ``why`` the walk's reason."""

    CODE = IssueCode.SKIPPED
    TEXT = "{path}: {why}"
    tensor: None
    path: str
    why: str
    kind: str | None = None
    escape: bool = False
    more: Mapping[str, Any] = field(default_factory=dict)

    @property
    def detail(self) -> Mapping[str, Any]:
        out: dict[str, Any] = {"path": self.path, **self.more}
        if self.kind is not None:
            out["kind"] = self.kind
        if self.escape:
            out["escape"] = True
        return out


class PathMissing(Issue):
    """A path named on the command line that cannot be found or stat'ed."""

    CODE = IssueCode.SKIPPED
    TEXT = "{path}: {error}"
    DETAIL = ("path", "missing", "kind")
    tensor: None
    path: str
    error: str  # the OS's text
    missing: ClassVar[bool] = True
    kind: ClassVar[str] = "missing"


class NotRegularFile(Issue):
    """A path named on the command line that is a FIFO, socket or device."""

    CODE = IssueCode.SKIPPED
    TEXT = "{path}: not a regular file (FIFO, socket or device); skipped"
    DETAIL = ("path", "kind")
    tensor: None
    path: str
    kind: ClassVar[str] = "not_regular"


class NotACheckpoint(Issue):
    """A file named on the command line that no reader reads."""

    CODE = IssueCode.SKIPPED
    TEXT = "{path}: neither safetensors, GGUF, an index nor a manifest"
    DETAIL = ("path", "kind")
    tensor: None
    path: str
    kind: str


class RemoteManifest(Issue):
    """A grit-manifest.json in a remote tree (read from local directories only)."""

    CODE = IssueCode.SKIPPED
    TEXT = "{path}: manifests are read from local directories only; skipped"
    DETAIL = ("path",)
    tensor: None
    path: str


# -- remote files (parsers/remote/)


class RemoteFailed(Issue):
    """A remote file the server would not give (the error's text, which
    names the URL without its signature)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "{error}"
    DETAIL = ("url", "http_status")
    tensor: None
    error: str
    url: str | None
    http_status: int | None


class RemoteReadRaised(Issue):
    """An unexpected exception while reading one remote file."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = ("internal error while reading this file: {exception}: {error} (other files are "
            "unaffected)")
    DETAIL = ("internal_error",)
    tensor: None
    exception: str
    error: str
    internal_error: ClassVar[bool] = True


# -- JSON files: configs, indexes (parsers/configs.py)


class InvalidJson(Issue):
    """A JSON file that does not parse (the parser's text)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "not valid JSON: {error}"
    tensor: None
    error: str


class PatternRefused(Issue):
    """A config pattern the scan will not compile (``why`` names it and says
    why: names.py ``refused_patterns``)."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = "{why}"
    tensor: None
    why: str


# -- GRIT metadata in a GGUF's grit.* keys (parsers/readers.py)


class GritVersion(Issue):
    """A grit.version other than 1."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "grit.version is {value!r}; version 1 is expected"
    tensor: None
    value: Any


class GritKeyNoTensor(Issue):
    """A grit.desc.* key for a tensor the file does not have."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{key} names a tensor the file does not have"
    tensor: str
    key: str


class GritDescInvalid(Issue):
    """A grit.desc.* value the codec refuses."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{key}: {error}"
    tensor: str
    key: str
    error: str  # the codec's refusal


class GritNotI8(Issue):
    """A GRIT-native GGUF tensor not stored as I8."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{tensor}: a GRIT-native tensor is stored as I8; this one is {type}"
    tensor: str
    type: str


class GritShapeBad(Issue):
    """A grit.shape.* value that is no shape (``why``: budgets.shape_problem)."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "grit.shape.{tensor}: {why}"
    tensor: str
    why: str


class GritShapeMissing(Issue):
    """A GRIT-native GGUF tensor without its logical shape."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = ("{tensor}: grit.shape.{tensor} (the logical shape) is missing; the I8 payload "
            "length does not determine it")
    tensor: str


class GritDigestBad(Issue):
    """A grit.digest.* value that is not 32 hex digits."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "grit.digest.{tensor} is not 32 hex digits"
    tensor: str


# -- a safetensors __grit__ header (parsers/grit_header.py; ``where`` is the
# header or key the map was read from)


class GritMapNotObject(Issue):
    """A grades or layouts map that is not an object."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{where}: '{what}' must be an object"
    tensor: None
    where: str
    what: str  # grades | layouts


class GritMapEntryBad(Issue):
    """A grades or layouts entry that is not '<16 hex>': '<string>'."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{where}: {what} entry {key!r} is not '<16 hex>': '<string>'"
    tensor: None
    where: str
    what: str
    key: Any


class GritGradeInvalid(Issue):
    """A grade string the codec refuses."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{where}: grade {key} is invalid: {error}"
    tensor: None
    where: str
    key: str
    error: str


class GritGradeIdMismatch(Issue):
    """A grade string filed under an id it does not hash to."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = ("{where}: grade string {canonical} hashes to {expected}, not the id {actual} it "
            "is filed under")
    DETAIL = ("expected", "actual")
    tensor: None
    where: str
    canonical: str
    expected: str  # the hash, 16 hex digits
    actual: str  # the id it is filed under


class GritLayoutInvalid(Issue):
    """A layout expression the codec refuses."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{where}: layout {key} is invalid: {error}"
    tensor: None
    where: str
    key: str
    error: str


class GritLayoutIdMismatch(Issue):
    """A layout expression filed under a word it does not hash to."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{where}: layout expression {text!r} hashes to {hashed}, not {key}"
    tensor: None
    where: str
    text: str
    hashed: str  # 16 hex digits
    key: str


class GritOverBudget(Issue):
    """A __grit__ header past one of the scan's budgets (its sentence)."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{text}"
    tensor: None
    text: str


class GritTooManyEntries(Issue):
    """More __grit__ entries than the file stores tensors (its budget's sentence)."""

    CODE = IssueCode.GRIT_HEADER
    TEXT = "{text}"
    DETAIL = ("budget",)
    tensor: None
    text: str
    budget: str


class GritNotJson(Issue):
    CODE = IssueCode.GRIT_HEADER
    TEXT = "__grit__ is not JSON: {error}"
    tensor: None
    error: str


class GritNotVersion1(Issue):
    CODE = IssueCode.GRIT_HEADER
    TEXT = '__grit__ must be an object with "grit": 1'
    tensor: None


class GritProducerNotText(Issue):
    CODE = IssueCode.GRIT_HEADER
    TEXT = "__grit__ producer must be a string"
    tensor: None


class GritNoTensors(Issue):
    CODE = IssueCode.GRIT_HEADER
    TEXT = "__grit__ has no 'tensors' object"
    tensor: None


class _GritEntry(Issue):
    """A __grit__ tensor entry that does not describe its tensor."""

    CODE = IssueCode.GRIT_HEADER
    tensor: str


class GritEntryNotObject(_GritEntry):
    TEXT = "__grit__ tensor {tensor!r}: entry is not an object"


class GritEntryDescInvalid(_GritEntry):
    TEXT = "__grit__ tensor {tensor!r}: desc: {error}"
    error: str  # the codec's refusal


class GritEntryShapeBad(_GritEntry):
    TEXT = "__grit__ tensor {tensor!r}: {why}"
    why: str  # budgets.shape_problem


class GritEntryDigestBad(_GritEntry):
    TEXT = "__grit__ tensor {tensor!r}: digest must be 32 hex digits"


class GritEntryNoPlanes(_GritEntry):
    TEXT = "__grit__ tensor {tensor!r}: needs 'planes' or 'payload'"


class GritEntryPlaneNames(_GritEntry):
    TEXT = "__grit__ tensor {tensor!r}: unknown plane names {unknown}"
    names: tuple[str, ...]  # sorted

    @property
    def unknown(self) -> list[str]:
        return list(self.names)


class GritEntryPartMissing(_GritEntry):
    """A payload or plane tensor the entry names and the file lacks."""

    TEXT = "__grit__ tensor {tensor!r}: {part} tensor {stored!r} is not in the file"
    part: str  # "payload", or a plane's name and " plane"
    stored: Any


class GritEntryPartNotU8(_GritEntry):
    """A payload or plane tensor that is not 1-D U8."""

    TEXT = ("__grit__ tensor {tensor!r}: {part} tensor {stored!r} must be 1-D U8; it is "
            "{dtype} {dims}")
    part: str
    stored: str
    dtype: str
    dims: list[int]


class RemoteGaveUp(Issue):
    """A remote root whose failed fetches stopped the scan requesting more."""

    CODE = IssueCode.UNPARSEABLE
    TEXT = ("{root}: {failures} fetches failed, so {skipped} more files were not requested "
            "(at most {limit} failed fetches per remote root)")
    tensor: None
    root: str
    failures: int
    skipped: int
    limit: int
