"""reference_refuses / reference_opens: grit's verdict on a safetensors file
against the reference loader's, the official ``safetensors`` library
(parsers/reference.py asks it, header only, on the file grit opened).

* Under ``--deep`` every local safetensors file grit reads without a
  structural finding is put to the library; a refusal is structural: every
  loader built on it (transformers, vLLM, TGI) fails on the file.
* In every scan, a file grit finds broken is put to the library too; when
  the library opens it, an info finding says so (grit is stricter there on
  purpose, as for duplicate keys, or grit is wrong: either way the engineer
  should know that loaders will use the file).
"""

from __future__ import annotations

from ...artifact import Artifact, Format, PlaneReader
from ...issues import IssueCode
from ...issues import reference_loader as owned  # the issues this kind reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issues_with

REFUSES = Rule(
    code="GRIT110",
    kind=Kind.REFERENCE_REFUSES,
    severity=Severity.STRUCTURAL,
    summary="--deep: the safetensors library refuses a file grit reads",
    doc="""\
**Structural, `--deep` only.** The official `safetensors` library, the
reference loader that transformers, vLLM and TGI load through, refuses a
local file whose header grit reads without a structural finding. grit hands
the library the file it opened (`safe_open`, header only, on grit's own
descriptor), so both judge the same bytes. Its message is quoted. Remote
files are not put to the library.

A test holds grit's header verdict to the library's on generated files
(`tests/test_reference_loader.py`), so this finding means grit has met a case
the two judge differently: worth a report to grit too.

Example (a header the library cannot parse):

    the safetensors library refuses this file, which grit reads: Error while deserializing header: ...

Fix: re-export the file with the safetensors library (`save_file`).
""",
)
OPENS = Rule(
    code="GRIT402",
    kind=Kind.REFERENCE_OPENS,
    severity=Severity.INFO,
    summary="the safetensors library opens a file grit finds broken",
    doc="""\
**Info.** grit found a safetensors file broken (the structural findings on
the same file say why), but the official `safetensors` library opens it, so
loaders will use it. grit is stricter than the library on purpose in one
known case: a header that names one key twice, where the library silently
keeps the last entry and a tensor disappears. Any other case is worth a
report to grit. Never changes the exit code: the structural finding does.

Example (a header with the key `a` twice):

    the safetensors library opens this file (so loaders will use it) although grit finds it broken: ...

Fix: fix what the structural findings name; do not rely on the library's
leniency.
""",
)
RULES = (REFUSES, OPENS)


def check_file(art: Artifact) -> list[Finding]:
    out = []
    for iss in issues_with(art, owned.CODES):
        if iss.detail.get("opens") is True:
            why = next((i.message for i in art.issues if i.code is not IssueCode.REFERENCE
                        and i.code is not IssueCode.NOTE), "")
            out.append(OPENS.finding(
                art.path, "the safetensors library opens this file (so loaders will use it) "
                f"although grit finds it broken: {why}", None, {"grit": why}))
    return out


def check_deep(art: Artifact, planes: PlaneReader) -> list[Finding]:
    if art.format is not Format.SAFETENSORS or not art.parsed or issues_with(
            art, owned.CODES):
        return []  # a broken file was put to the library when it was read
    verdict = planes.reference()
    if verdict is None or verdict[0]:
        return []
    return [REFUSES.finding(art.path, "the safetensors library refuses this file, which grit "
                            f"reads: {verdict[1]}", None, {"error": verdict[1]})]
