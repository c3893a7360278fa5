"""The issues ``rules/kinds/grit_check.py`` reports as ``size_mismatch``: bytes
that do not fit what the header or the convention says they hold."""

from __future__ import annotations

from typing import Any, ClassVar

from . import LLAMA_CPP_REFUSES, Issue, IssueCode, shape

# the codes of these issues: the rule reports every issue with one of them
KIND = "size_mismatch"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.TRUNCATED, IssueCode.BAD_OFFSETS, IssueCode.BAD_TENSOR,
         IssueCode.SIZE)


class AwqGemvSizes(Issue):
    """AWQ GEMV planes whose byte counts are not the padded ones."""

    CODE = IssueCode.SIZE
    TEXT = ("{module}: AWQ GEMV {out}x{k} at group {group} holds qweight, scales and qzeros "
            "of {expected[0]:,}, {expected[1]:,} and {expected[2]:,} bytes (scales and qzeros "
            "padded to calculate_zeros_width = {width}); the file holds {actual[0]:,}, "
            "{actual[1]:,} and {actual[2]:,}")
    DETAIL = ("expected", "actual")
    tensor: str
    module: str
    out: int
    k: int
    group: int
    width: int
    want: tuple[int, int, int]
    have: tuple[int, int, int]

    @property
    def expected(self) -> list[int]:
        return list(self.want)

    @property
    def actual(self) -> list[int]:
        return list(self.have)


class Nvfp4DataShape(Issue):
    """NVFP4 packed data that is not two-dimensional."""

    CODE = IssueCode.SIZE
    TEXT = "{data}: NVFP4 data is [out, in/2]; got {got}"
    tensor: str
    data: str
    dims: tuple[int, ...]

    @property
    def got(self) -> str:
        return shape(self.dims)


class BitsandbytesSizes(Issue):
    """bitsandbytes 4-bit parts whose sizes do not fit (``why`` says how)."""

    CODE = IssueCode.SIZE
    TEXT = "{tensor}: bitsandbytes {kind}: {why}"
    tensor: str
    kind: str
    why: str


class PackedIntUnfit(Issue):
    """qweight and scales that fit neither GPTQ nor AWQ packing."""

    CODE = IssueCode.SIZE
    TEXT = "{tensor}: qweight {qweight} and scales {scales} fit neither GPTQ nor AWQ packing"
    tensor: str
    qweight_dims: tuple[int, ...]
    scales_dims: tuple[int, ...]

    @property
    def qweight(self) -> str:
        return shape(self.qweight_dims)

    @property
    def scales(self) -> str:
        return shape(self.scales_dims)


class Fp8PerTensorSizes(Issue):
    """Per-tensor FP8 whose weight or scale byte count is wrong."""

    CODE = IssueCode.SIZE
    TEXT = ("{tensor}: per-tensor FP8 holds one byte per element and one {scale_dtype} "
            "scale: {data_want:,} + {scale_want} bytes; the file holds {data_have:,} + "
            "{scale_have}")
    tensor: str
    scale_dtype: str
    data_want: int
    scale_want: int
    data_have: int
    scale_have: int


class MxBlocksShape(Issue):
    """gpt-oss MXFP4 blocks whose last dimension is not 16 bytes."""

    CODE = IssueCode.SIZE
    TEXT = ("{blocks}: gpt-oss MXFP4 blocks have a last dimension of 16 bytes (32 E2M1 "
            "codes); this one is {got}")
    DETAIL = ("expected", "actual")
    tensor: str
    blocks: str
    dims: tuple[int, ...]
    expected: ClassVar[int] = 16

    @property
    def got(self) -> str:
        return shape(self.dims)

    @property
    def actual(self) -> int | None:
        return self.dims[-1] if self.dims else None


# -- a safetensors header entry that does not describe its bytes (parsers/safetensors_reader.py)


class EntryNotObject(Issue):
    """A header entry that is not a JSON object."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = "tensor {tensor!r}: its header entry is not an object"
    tensor: str


class UnknownDtype(Issue):
    """A dtype the safetensors format does not define."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("tensor {tensor!r}: unsupported dtype {dtype!r} (dtypes are case-sensitive: "
            "{known})")
    tensor: str
    dtype: Any  # as the header has it
    names: tuple[str, ...]  # the dtypes there are

    @property
    def known(self) -> str:
        return ", ".join(self.names)


class ShapeNotList(Issue):
    """A shape that is not a JSON list (shown cut to 200 characters)."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("tensor {tensor!r}: shape {dims!r:.200} is not a list of non-negative integers "
            "below 2^64")
    tensor: str
    dims: Any


class ShapeNotCounts(Issue):
    """A shape list holding something other than a 64-bit count."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("tensor {tensor!r}: shape {dims!r} is not a list of non-negative integers below "
            "2^64")
    tensor: str
    dims: list[Any]


class EntryOverBudget(Issue):
    """An entry past one of the scan's budgets (``text`` is the budget's own
    sentence, budgets.py)."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = "tensor {tensor!r}: {text}"
    DETAIL = ("budget",)
    tensor: str
    text: str
    budget: str


class ShapeOverflow(Issue):
    """A shape whose element count does not fit 64 bits."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = "tensor {tensor!r}: shape {dims} overflows 64-bit arithmetic"
    DETAIL = ("expected",)
    tensor: str
    dims: list[int]
    expected: ClassVar[str] = "< 2^64"


class OffsetsNotPair(Issue):
    """data_offsets that are not two 64-bit counts."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("tensor {tensor!r}: data_offsets {offsets!r} are not two non-negative integers "
            "below 2^64")
    tensor: str
    offsets: Any


class OffsetsReversed(Issue):
    """data_offsets whose end is before their start."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = "tensor {tensor!r}: data_offsets end {end} is before start {start}"
    tensor: str
    start: int
    end: int


class PartialBytes(Issue):
    """A tensor whose values do not fill a whole number of bytes."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("tensor {tensor!r}: {numel} {dtype} values are {bits} bits, not a whole number of "
            "bytes")
    tensor: str
    numel: int
    dtype: str
    bits: int


class SpanNotShape(Issue):
    """data_offsets whose span is not the shape times the dtype's width."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("tensor {tensor!r}: shape {dims} x {dtype} is {expected} bytes but data_offsets "
            "span {actual}")
    DETAIL = ("expected", "actual")
    tensor: str
    dims: list[int]
    dtype: str
    expected: int
    actual: int


# -- the data region: gaps, overlaps, truncation, trailing bytes (safetensors and GGUF)


class Gap(Issue):
    """Bytes before a tensor that belong to no tensor."""

    CODE = IssueCode.BAD_OFFSETS
    TEXT = ("{gap} bytes before tensor {tensor!r} belong to no tensor (gap at data offset "
            "{expected})")
    DETAIL = ("expected", "actual")
    tensor: str
    expected: int  # where the tensor should start
    actual: int  # where it starts

    @property
    def gap(self) -> int:
        return self.actual - self.expected


class Overlap(Issue):
    """A tensor that starts inside the one before it."""

    CODE = IssueCode.BAD_OFFSETS
    TEXT = ("tensor {tensor!r} starts at data offset {actual}, inside the previous tensor "
            "(which ends at {expected}): overlapping tensors alias bytes")
    DETAIL = ("expected", "actual")
    tensor: str
    expected: int
    actual: int


class Truncated(Issue):
    """A safetensors tensor whose bytes run past the end of the data region."""

    CODE = IssueCode.TRUNCATED
    TEXT = ("tensor {tensor!r} needs bytes up to data offset {end} but the file's data region "
            "ends at {region}: {actual} of {expected} bytes present (truncated shard?)")
    DETAIL = ("expected", "actual")
    tensor: str
    start: int
    end: int
    region: int

    @property
    def expected(self) -> int:
        return self.end - self.start

    @property
    def actual(self) -> int:
        return max(0, self.region - self.start)


class Trailing(Issue):
    """Bytes after the last tensor that belong to no tensor."""

    CODE = IssueCode.BAD_OFFSETS
    TEXT = ("{extra} bytes after the last tensor belong to no tensor (trailing data: the "
            "offsets do not cover the data region)")
    DETAIL = ("expected", "actual")
    tensor: None
    expected: int  # where the tensors end
    actual: int  # where the region ends

    @property
    def extra(self) -> int:
        return self.actual - self.expected


class GgufNotPacked(Issue):
    """A GGUF tensor that does not start where ggml's packing puts it."""

    CODE = IssueCode.BAD_OFFSETS
    TEXT = ("tensor {tensor!r} starts at data offset {actual}; ggml requires the tensors "
            "packed in order, so it should start at {expected}: " + LLAMA_CPP_REFUSES)
    DETAIL = ("expected", "actual")
    tensor: str
    expected: int
    actual: int


class _GgufSpan(Issue):
    """A GGUF tensor whose bytes (``expected``) do not fit where they lie."""

    DETAIL = ("expected", "actual")
    tensor: str
    type: str
    dims: list[int]
    expected: int
    actual: int


class GgufTruncated(_GgufSpan):
    """A GGUF tensor whose bytes run past the end of the file."""

    CODE = IssueCode.TRUNCATED
    TEXT = ("tensor {tensor!r} ({type} {dims}) needs {expected:,} bytes but the file ends "
            "after {actual:,} (truncated file?)")


class GgufOverlap(_GgufSpan):
    """A GGUF tensor whose bytes run into the next tensor's."""

    CODE = IssueCode.BAD_OFFSETS
    TEXT = ("tensor {tensor!r} ({type} {dims}) needs {expected:,} bytes but the next tensor "
            "starts after {actual:,}: the two overlap")


# -- npz archives (parsers/npz_reader.py)


class NpzNoLocalHeader(Issue):
    """A member whose zip local header is not where the directory says."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = "member {member!r}: no local header at offset {offset}"
    tensor: str
    member: str
    offset: int


class NpzHeaderBad(Issue):
    """A member whose .npy header does not parse (``why`` says how)."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = "member {member!r}: {why}"
    tensor: str
    member: str
    why: str


class NpzObjectArray(Issue):
    """An object array: a pickle inside the archive."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("member {member!r}: an object array: a pickle inside the archive, never loaded; "
            "not audited")
    tensor: str
    member: str


class NpzSizeMismatch(Issue):
    """A member whose shape times its dtype is not its byte count."""

    CODE = IssueCode.BAD_TENSOR
    TEXT = ("member {member!r}: shape {dims} x {descr} is {expected} bytes but the member "
            "holds {actual}")
    tensor: str
    member: str
    dims: list[int]
    descr: str
    expected: int
    actual: int


class NpzTruncated(Issue):
    """A member whose bytes run past the end of the archive."""

    CODE = IssueCode.TRUNCATED
    TEXT = ("tensor {tensor!r} needs bytes up to file offset {end} but the file ends at "
            "{size}: {actual} of {expected} bytes present (truncated archive?)")
    DETAIL = ("expected", "actual")
    tensor: str
    end: int
    size: int
    expected: int
    actual: int
