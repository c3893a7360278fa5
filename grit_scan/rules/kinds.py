"""The finding vocabulary: every kind, its severity and one line about it.

One table, one place (docs/findings.md has a section per kind; a test keeps
the two in step).  Severities order the exit codes of §13.
"""

from __future__ import annotations

STRUCTURAL = "structural"
DISAGREEMENT = "disagreement"
WARNING = "warning"
INFO = "info"
SEVERITIES = (STRUCTURAL, DISAGREEMENT, WARNING, INFO)

KINDS: dict[str, tuple[str, str]] = {
    "size_mismatch": (STRUCTURAL, "a §7.3 size equation fails against the bytes on disk"),
    "grade_unknown": (STRUCTURAL, "grit_check steps 1-2: the descriptor's grade is unknown or "
                                  "its frame disagrees with it"),
    "placement_unknown": (STRUCTURAL, "grit_check step 3: a placement word is not defined"),
    "digest_mismatch": (STRUCTURAL, "--deep: the plane bytes are not the ones described "
                                    "(digest, or ASC_LSB metadata order)"),
    "missing_shard": (STRUCTURAL, "an index or manifest names a file that is not there"),
    "file_unparseable": (STRUCTURAL, "a file could not be parsed or read at all"),
    "index_inconsistency": (STRUCTURAL, "an index and the shard headers disagree"),
    "path_escape": (STRUCTURAL, "a path in an index, manifest or symlink leaves the scanned "
                                "root; it was not opened"),
    "gid_disagreement": (DISAGREEMENT, "the same operand carries different gids in different "
                                       "files, tools or revisions"),
    "role_drift": (DISAGREEMENT, "one logical role carries more than one grade inside one "
                                 "checkpoint (a half-converted checkpoint)"),
    "declared_mismatch": (DISAGREEMENT, "the declared quantisation contradicts the bytes"),
    "undeclared_zp_convention": (DISAGREEMENT, "GPTQ zero points whose v1/v2 convention is not "
                                               "declared"),
    "artifact_drift": (WARNING, "different roles carry different grades in one artifact"),
    "note_assumed": (WARNING, "NOTE_ASSUMED is set: a placement was assumed, not verified"),
    "probe_warning": (WARNING, "--deep: a level-3 decode-sanity probe is suspicious"),
    "decode_divergence": (WARNING, "--deep: GRIT decode and the format's own decoder disagree"),
    "inferred_descriptor": (WARNING, "the descriptor was inferred from a convention, not read "
                                     "from the file"),
    "unregistered_grade": (WARNING, "the grade is valid but not one of the registered six"),
    "not_representable": (WARNING, "a recognised convention GRIT v1 cannot express"),
    "partial_quantization": (WARNING, "only part of the declared scope is quantised"),
}


def severity(kind: str) -> str:
    return KINDS[kind][0]
