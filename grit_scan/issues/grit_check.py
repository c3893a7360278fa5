"""The issues ``rules/kinds/grit_check.py`` reports as ``size_mismatch``: bytes
that do not fit what the header or the convention says they hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from . import Issue, IssueCode, shape

# the codes of these issues: the rule reports every issue with one of them
KIND = "size_mismatch"  # the finding kind whose docs section lists these messages
CODES = (IssueCode.TRUNCATED, IssueCode.BAD_OFFSETS, IssueCode.BAD_TENSOR,
         IssueCode.SIZE)


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class BitsandbytesSizes(Issue):
    """bitsandbytes 4-bit parts whose sizes do not fit (``why`` says how)."""

    CODE = IssueCode.SIZE
    TEXT = "{tensor}: bitsandbytes {kind}: {why}"
    tensor: str
    kind: str
    why: str


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
