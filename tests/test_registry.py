"""The rule registry: one module per kind, codes by severity class, docs,
schema and SARIF rules generated from it, --select/--ignore by code."""

import json
from pathlib import Path

import pytest

import grit_scan
from grit_scan.cli import main
from grit_scan.codec.errors import GritValueError
from grit_scan.rules import Kind, Severity, lookup, parse_selection, rules
from grit_scan.rules.docs import outputs
from grit_scan.rules.registry import modules

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "fixtures" / "sample"


def test_every_kind_has_exactly_one_rule_and_a_unique_code():
    declared = [r.kind for r in rules()]
    assert sorted(declared) == sorted(Kind)  # the code table and the modules agree
    codes = [r.code for r in rules()]
    assert len(set(codes)) == len(codes)


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r.code)
def test_rule_code_class_matches_severity_and_doc_has_its_parts(rule):
    assert rule.code.startswith(f"GRIT{rule.severity.code_class}")
    assert len(rule.code) == 7 and rule.code[4:].isdigit()
    assert rule.doc.startswith(f"**{rule.severity.value.capitalize()}")
    assert "Example" in rule.doc and "Fix" in rule.doc
    assert rule.summary and "\n" not in rule.summary


def test_modules_are_discovered_not_listed():
    names = {m.name for m in modules()}
    assert "grit_check" in names and "deep" in names
    here = ROOT / "grit_scan" / "rules" / "kinds"
    on_disk = {p.stem for p in here.glob("*.py") if not p.stem.startswith("_")}
    assert names == on_disk


def test_committed_docs_and_schema_are_the_generated_ones():
    for path, text in outputs(ROOT).items():
        assert path.read_text() == text, f"{path.name} is stale: run python -m grit_scan.rules.docs"


def test_schema_kind_and_code_enums_come_from_the_registry():
    schema = json.loads((ROOT / "docs" / "scan-report.schema.json").read_text())
    props = schema["$defs"]["finding"]["properties"]
    assert props["kind"]["enum"] == [r.name for r in rules()]
    assert props["code"]["enum"] == [r.code for r in rules()]


def test_lookup_by_code_or_name():
    assert lookup("GRIT101") is lookup("size_mismatch") is lookup("grit101")
    assert lookup("nope") is None


def test_selection_takes_names_codes_and_prefixes():
    structural = {k for k in Kind if lookup(k.value).severity is Severity.STRUCTURAL}
    assert parse_selection("GRIT1", "--select") == structural
    assert parse_selection("GRIT101,role_drift", "--select") == {Kind.SIZE_MISMATCH,
                                                                 Kind.ROLE_DRIFT}
    with pytest.raises(GritValueError, match="unknown finding kind or code 'GRIT9'"):
        parse_selection("GRIT9", "--select")


def test_select_by_prefix_on_the_sample():
    # README: the sample holds 1 structural, 3 disagreement and 3 warning findings
    full = grit_scan.scan([str(SAMPLE)])
    by_sev = {s: sum(1 for f in full.findings if f.severity is s) for s in Severity}
    assert by_sev == {Severity.STRUCTURAL: 1, Severity.DISAGREEMENT: 3, Severity.WARNING: 3,
                      Severity.INFO: 0}
    only = grit_scan.scan([str(SAMPLE)], select="GRIT2")
    assert len(only.findings) == 3 and all(f.code.startswith("GRIT2") for f in only.findings)
    assert only.exit_code == 2
    rest = grit_scan.scan([str(SAMPLE)], ignore="GRIT1,GRIT2")
    assert {f.severity for f in rest.findings} == {Severity.WARNING}
    assert rest.exit_code == 3


def test_grit_rule_prints_the_documentation(capsys):
    assert main(["rule", "GRIT101"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# size_mismatch (GRIT101)") and lookup("GRIT101").doc in out
    assert main(["rule", "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[0] for ln in lines] == [r.code for r in rules()]
    assert main(["rule", "no_such_kind"]) == 64
    assert "unknown finding kind" in capsys.readouterr().err


def test_findings_are_frozen():
    f = grit_scan.scan([str(SAMPLE)]).findings[0]
    with pytest.raises(AttributeError):
        f.kind = Kind.ROLE_DRIFT
    with pytest.raises(TypeError):
        f.detail["x"] = 1
