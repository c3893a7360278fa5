"""file_unparseable: a file that could not be parsed or read at all.

Reader issues (bad magic, broken header, duplicate keys, malformed GRIT
metadata, a file that changed while read, an unreadable file) and paths the
walker would not open that look like checkpoints, or that do not exist.
"""

from __future__ import annotations

from ...artifact import Artifact, ScanInput
from ...issues import IssueCode
from ...issues import file_unparseable as owned  # the issues this kind reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issue_findings

RULE = Rule(
    code="GRIT106",
    kind=Kind.FILE_UNPARSEABLE,
    severity=Severity.STRUCTURAL,
    summary='a file could not be parsed or read at all',
    doc="""\
**Structural.** A file could not be parsed or read at all: bad magic, a
broken header, a hostile length, a duplicate key, a file that changed while
it was read, a FIFO or unreadable file named like a checkpoint, or an
internal error while reading or checking it (the message says so; `--debug`
shows the traceback). A GGUF that llama.cpp's loader rejects is reported
here too, with a message that says "llama.cpp refuses to load this file": a
tensor name of 64 bytes or more (GGML_MAX_NAME; the rest of the file is
still read), more than four dimensions (GGML_MAX_DIMS), a tensor offset that
is not a multiple of the alignment, or tensors not packed in order. If no input could be parsed at all, the graded exit
code is 4.

Example (`fixtures/broken/unparseable`):

    header length 1099511627776 exceeds the 100,000,000-byte limit

Fix: re-download or re-export the file.
""",
)
RULES = (RULE,)
CHECKPOINT_NAMES = (".safetensors", ".gguf", ".json")


def check_file(art: Artifact) -> list[Finding]:
    return issue_findings(
        art, RULE, owned.CODES,
        message=lambda i: (f"malformed GRIT metadata: {i.message}"
                           if i.code == IssueCode.GRIT_HEADER else i.message))


def check_scan(scan: ScanInput) -> list[Finding]:
    """Special files or unreadable paths that look like checkpoints cannot be
    parsed; a path that does not exist cannot either; an unreadable
    directory (as severe as an unreadable file) and a directory past the
    walk_depth budget were not checked.  Other skipped paths
    are only counted (the report lists them)."""
    out = []
    for iss in scan.skipped:
        path = str(iss.detail.get("path", ""))
        if iss.detail.get("escape"):
            continue  # path_escape's
        if (iss.detail.get("missing") or iss.detail.get("unreadable")
                or iss.detail.get("budget") or path.lower().endswith(CHECKPOINT_NAMES)):
            out.append(RULE.finding(path, iss.message))
    return out
