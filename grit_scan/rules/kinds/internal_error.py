"""internal_error: a reader or a rule failed on one file; contained there.

Containment (issue 16): an unexpected exception while reading a file
(parsers/tree.py ``contained_read``) or while a rule checks it
(``Runner._contained``) becomes this finding on that file, naming the rule,
and every other file and rule still reports.
"""

from __future__ import annotations

from ...artifact import Artifact
from ...issues import internal_error as owned  # the issues this kind reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issue_findings

RULE = Rule(
    code="GRIT109",
    kind=Kind.INTERNAL_ERROR,
    severity=Severity.STRUCTURAL,
    summary='grit-scan failed while reading or checking a file; the rest of the report stands',
    doc="""\
**Structural.** grit-scan itself failed while reading this file or while one
rule checked it. The finding names the rule (`detail.rule`, `reader` for the
readers) and the exception; every other file and every other rule still
reports, so one hostile file never costs the whole scan. It is structural
because nothing about the file was verified. `--debug` shows the traceback.

Example (a rule that raises, tests/test_reliability.py):

    internal error in rule grit_check while checking this file: ValueError: boom
    (other files are unaffected; --debug shows the traceback)

Fix: report it (with `--debug` output) to grit-scan; meanwhile check the file
with another tool.
""",
)
RULES = (RULE,)


def check_file(art: Artifact) -> list[Finding]:
    return issue_findings(art, RULE, owned.CODES)
