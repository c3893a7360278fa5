"""The code table: one line per finding kind (as ruff's ``codes.rs``).

A kind's stable code, severity, documentation and check live in its own
module under ``grit_scan/rules/kinds/``; this enum only names the kinds so
that code elsewhere refers to them by member, never by a bare string.
``tests/test_registry.py`` holds the two in step.
"""

from __future__ import annotations

import enum


class Kind(str, enum.Enum):
    SIZE_MISMATCH = "size_mismatch"
    GRADE_UNKNOWN = "grade_unknown"
    PLACEMENT_UNKNOWN = "placement_unknown"
    DIGEST_MISMATCH = "digest_mismatch"
    MISSING_SHARD = "missing_shard"
    FILE_UNPARSEABLE = "file_unparseable"
    INDEX_INCONSISTENCY = "index_inconsistency"
    PATH_ESCAPE = "path_escape"
    INTERNAL_ERROR = "internal_error"
    GID_DISAGREEMENT = "gid_disagreement"
    ROLE_DRIFT = "role_drift"
    DECLARED_MISMATCH = "declared_mismatch"
    # GRIT204 (undeclared_zp_convention) is retired: replaced by the two below
    UNLISTED_CHECKPOINT = "unlisted_checkpoint"
    ZP_CONVENTION_MISMATCH = "zp_convention_mismatch"
    ZP_CONVENTION_UNVERIFIED = "zp_convention_unverified"
    ZP_CONVENTION_UNDECLARED = "zp_convention_undeclared"
    ARTIFACT_DRIFT = "artifact_drift"
    NOTE_ASSUMED = "note_assumed"
    PROBE_WARNING = "probe_warning"
    DECODE_DIVERGENCE = "decode_divergence"
    INFERRED_DESCRIPTOR = "inferred_descriptor"
    UNREGISTERED_GRADE = "unregistered_grade"
    NOT_REPRESENTABLE = "not_representable"
    PARTIAL_QUANTIZATION = "partial_quantization"
    QUANTIZATIONS = "quantizations"
    UNSUPPORTED_CONVENTION = "unsupported_convention"
    REFERENCE_REFUSES = "reference_refuses"
    REFERENCE_OPENS = "reference_opens"

    def __str__(self) -> str:
        return self.value
