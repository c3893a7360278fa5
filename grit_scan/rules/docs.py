"""Documentation generated from the registry: docs/findings.md, the table of
kinds in docs/exit-codes.md and the kind enum of the JSON schema.

``python -m grit_scan.rules.docs`` rewrites them; tests/test_registry.py
fails when the committed files differ from what this module generates.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import issues
from .finding import Severity
from .registry import rules

TABLE_START = "<!-- generated: kinds by severity -->"
TABLE_END = "<!-- end generated -->"
_EXIT_MEANING = {
    Severity.STRUCTURAL: (1, "at least one **structural** finding"),
    Severity.DISAGREEMENT: (2, "**disagreement** without a structural finding"),
    Severity.WARNING: (3, "**warnings** only"),
}

FINDINGS_HEAD = """\
# Findings

<!-- Generated from grit_scan/rules/kinds/ by `python -m grit_scan.rules.docs`;
     edit the rule modules, not this file. -->

Every finding has a stable `code` (GRIT1xx structural, GRIT2xx disagreement,
GRIT3xx warning, GRIT4xx info), a `kind`, a `severity`, the `path`, the
`tensor` (or null), a one-line `message` and a structured `detail`
(expected, actual, likeliest cause, suggested fix where there is one). The
severity decides the exit code ([exit-codes.md](exit-codes.md)).
`--select` and `--ignore` take kind names, codes or code prefixes (`GRIT1`
is every structural kind); `grit rule KIND|CODE` prints one section below.
Each section shows a message produced by a fixture under `fixtures/` (the
scenario table in `tests/test_scan_scenarios.py` pins them).
"""


def anchor(code: str, name: str) -> str:
    return f"{code.lower()}-{name.replace('_', '-')}"


def findings_md() -> str:
    rows = "\n".join(f"| {r.code} | [{r.name}](#{anchor(r.code, r.name)}) | "
                     f"{r.severity.value} | {r.summary} |" for r in rules())
    table = "| code | kind | severity | summary |\n|---|---|---|---|\n" + rows
    parts = [FINDINGS_HEAD.rstrip(), table]
    owned = {m.KIND: m for m in issues.modules()}
    for r in rules():
        parts.append(f"## {r.code} {r.name}\n\n{r.doc.rstrip()}")
        if r.name in owned and issues.variants(owned[r.name]):
            parts.append(messages(owned[r.name], "Messages from readers and conventions"))
    parts.append("## Notes\n\nWhat a reader or a convention remarks without a finding: "
                 "each file's `notes` in the JSON report, and `grit inventory`.\n\n"
                 + messages(owned[None], "Messages"))
    return "\n\n".join(parts) + "\n"


def messages(module: ModuleType, title: str) -> str:
    """The message templates of one ``issues`` module: each situation's name,
    and its text with its fields in braces."""
    name = module.__name__.replace(".", "/")
    lines = [f"{title} (`{name}.py`):", ""]
    lines += [f"- {v.__name__}: `{v.TEXT}`" for v in issues.variants(module)]
    return "\n".join(lines)


def exit_table() -> str:
    lines = ["| graded (default) | meaning |", "|---|---|", "| 0 | clean: no findings |"]
    for sev, (code, meaning) in _EXIT_MEANING.items():
        kinds = ", ".join(f"{r.name} ({r.code})" for r in rules() if r.severity is sev)
        lines.append(f"| {code} | {meaning}: {kinds} |")
    lines.append("| 4 | no input could be parsed at all (nothing found, or every file "
                 "failed) |")
    return "\n".join(lines)


def with_exit_table(text: str) -> str:
    pat = re.compile(re.escape(TABLE_START) + r".*?" + re.escape(TABLE_END), re.S)
    return pat.sub(lambda _: f"{TABLE_START}\n{exit_table()}\n{TABLE_END}", text)


def with_schema_enums(schema: dict[str, Any]) -> dict[str, Any]:
    finding = schema["$defs"]["finding"]["properties"]
    finding["kind"]["enum"] = [r.name for r in rules()]
    finding["code"] = {"type": "string", "enum": [r.code for r in rules()]}
    return schema


def outputs(root: Path) -> dict[Path, str]:
    """Every generated file's path and its generated text."""
    docs = root / "docs"
    schema_path = docs / "scan-report.schema.json"
    schema = with_schema_enums(json.loads(schema_path.read_text()))
    return {
        docs / "findings.md": findings_md(),
        docs / "exit-codes.md": with_exit_table((docs / "exit-codes.md").read_text()),
        schema_path: json.dumps(schema, indent=2) + "\n",
    }


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path.cwd()
    for path, text in outputs(root).items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
