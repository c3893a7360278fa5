"""The JSON schema is forward-compatible: additional properties are allowed
everywhere, so an old consumer validating a newer report still succeeds."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema

from grit_scan.api import scan

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "scan-report.schema.json").read_text())


def _every_object(node, path=""):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _every_object(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _every_object(v, f"{path}/{i}")


def test_schema_never_forbids_additional_properties():
    for path, obj in _every_object(SCHEMA):
        assert obj.get("additionalProperties", True) is not False, path


def test_old_consumer_accepts_a_report_with_extra_fields():
    doc = scan(["fixtures/sample", "fixtures/broken"]).to_json()
    jsonschema.validate(doc, SCHEMA)
    newer = copy.deepcopy(doc)
    records = [newer, newer["summary"], newer["exit_codes"], *newer["findings"],
               *newer["skipped"]]
    for a in newer["artifacts"]:
        records += [a, *a["tensors"], *a["grades"]]
    for obj in records:  # every record (maps such as `unquantized` keep their value type)
        obj["x_added_in_a_later_release"] = {"any": [1, "thing"]}
    assert len(records) > 50
    jsonschema.validate(newer, SCHEMA)  # what a consumer of report_version 1 does


def test_summary_text_and_next_step_are_in_the_report():
    doc = scan(["fixtures/sample"]).to_json()
    assert doc["summary"]["text"].startswith("Found 7 findings")
    assert doc["next_step"] == "grit rule size_mismatch"
    clean = scan(["fixtures/sample/llama-mxfp4"], ignore="GRIT1").to_json()
    assert clean["next_step"] is None and clean["summary"]["text"] == "No findings in 1 file"
