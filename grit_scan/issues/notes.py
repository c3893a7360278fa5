"""Notes: what a reader or a convention remarks without a finding (the JSON
report's ``notes`` of each file, docs/json-report.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import Issue, IssueCode

# the codes of these issues: the rule reports every issue with one of them
KIND = None  # no finding: the report lists them as each file's notes
CODES = (IssueCode.NOTE,)


class QweightWithoutScales(Issue):
    """A packed-integer module with a qweight and no scales."""

    CODE = IssueCode.NOTE
    TEXT = "{tensor}: qweight without scales"
    tensor: str


class NotGraded(Issue):
    """A module described but not given a grade (``why`` says why)."""

    CODE = IssueCode.NOTE
    TEXT = "{tensor}: {why}"
    tensor: str
    why: str
    detail: Mapping[str, Any]


class UnknownLayout(Issue):
    """A quantised weight and scale in a layout this scanner does not know
    (``what`` names the weight and scale as the convention sees them)."""

    CODE = IssueCode.NOTE
    TEXT = "{weight}: {what} is not {known} this scanner knows"
    tensor: str
    weight: str
    what: str
    known: str


class Fp8ScalesUnmatched(Issue):
    """FP8 scales whose count matches no FP8 layout."""

    CODE = IssueCode.NOTE
    TEXT = ("{weight}: {count} scales for a {rows}x{cols} FP8 weight match no per-tensor, "
            "per-channel, per-group or block layout")
    tensor: str
    weight: str
    count: int
    rows: int
    cols: int


class UnusedNoScale(Issue):
    """An FP8/FP4 tensor that no convention consumed and that has no weight
    scale beside it."""

    CODE = IssueCode.NOTE
    TEXT = ("{dtype} tensor {tensor!r} has no scale tensor beside it; its quantisation is "
            "not described")
    tensor: str
    dtype: str


class UnusedScaleLayout(Issue):
    """An FP8/FP4 tensor that no convention consumed, beside a weight scale
    in a layout no convention describes."""

    CODE = IssueCode.NOTE
    TEXT = ("{dtype} tensor {tensor!r} has a scale beside it ({scale!r}) in a layout no "
            "convention describes; its quantisation is not described")
    tensor: str
    dtype: str
    scale: str


class TotalSizeNotCount(Issue):
    """An index total_size that is not a byte count."""

    CODE = IssueCode.NOTE
    TEXT = "index metadata.total_size {value!r} is not a non-negative integer"
    tensor: None
    value: Any


class TotalSizeDiffers(Issue):
    """An index total_size other than the bytes the shards' tensors hold."""

    CODE = IssueCode.NOTE
    TEXT = "index total_size is {actual:,} bytes; the shards' tensors hold {expected:,}"
    DETAIL = ("expected", "actual")
    tensor: None
    expected: int
    actual: int


class SourceNote(Issue):
    """A remote source's own remark about a file it served."""

    CODE = IssueCode.NOTE
    TEXT = "{where}: {note}"
    tensor: None
    where: str
    note: str


class RawAsBfloat16(Issue):
    """npz members of two raw bytes, read as bfloat16."""

    CODE = IssueCode.NOTE
    TEXT = ("{count} member(s) of two raw bytes (descr <V2) read as bfloat16, as MLX and "
            "ml_dtypes store it (numpy has no bfloat16)")
    tensor: None
    count: int


class NpzNotArray(Issue):
    """An npz member that is not a .npy array."""

    CODE = IssueCode.NOTE
    TEXT = "member {member!r} is not a .npy array; not read"
    tensor: None
    member: str


class NpzColumnMajor(Issue):
    """An npz member stored column-major."""

    CODE = IssueCode.NOTE
    TEXT = ("member {member!r} is stored column-major (fortran_order): its bytes are the "
            "transpose of its shape")
    tensor: str
    member: str


class GradeNotCanonical(Issue):
    """A grade string not written in its canonical form."""

    CODE = IssueCode.NOTE
    TEXT = "{where}: grade {key} is not written canonically ({written!r} -> {canonical!r})"
    tensor: None
    where: str
    key: str
    written: str
    canonical: str
