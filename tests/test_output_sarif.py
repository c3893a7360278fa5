"""SARIF: valid against the official 2.1.0 schema (tests/sarif/, source in
its README), fingerprints stable across runs and across moving the
repository, normalised repo-relative URIs, distinct locations."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest

from grit_scan.api import scan
from grit_scan.report.sarif import repo_path, to_sarif

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json").read_text())
CASES = ["fixtures/sample", "fixtures/broken"]


@pytest.mark.parametrize("root", CASES)
def test_sarif_validates_against_the_official_schema(root, monkeypatch):
    monkeypatch.chdir(ROOT)
    doc = to_sarif(scan([root]))
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    errors = list(jsonschema.Draft4Validator(SCHEMA).iter_errors(doc))
    assert errors == []
    assert doc["runs"][0]["results"]


def _prints(doc):
    return [r["partialFingerprints"]["gritFinding/v1"] for r in doc["runs"][0]["results"]]


def test_fingerprints_are_stable_across_runs_and_moves(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    first = _prints(to_sarif(scan(["fixtures/sample"])))
    assert first == _prints(to_sarif(scan(["fixtures/sample"])))
    assert len(set(first)) == len(first)  # distinct results, distinct fingerprints
    # the repository moved elsewhere and scanned from there, by a relative path,
    # an absolute path and a path with ./ and ..
    for where in ("a", "b/deeper"):
        moved = tmp_path / where / "repo"
        shutil.copytree(ROOT / "fixtures" / "sample", moved / "fixtures" / "sample")
        monkeypatch.chdir(moved)
        for arg in ("fixtures/sample", str(moved / "fixtures" / "sample"),
                    "./fixtures/../fixtures/sample"):
            doc = to_sarif(scan([arg]))
            assert _prints(doc) == first, arg
            uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]
                    for r in doc["runs"][0]["results"]]
            assert all(u["uriBaseId"] == "%SRCROOT%" and u["uri"].startswith("fixtures/sample/")
                       for u in uris), uris


def test_locations_are_distinct_and_carry_tensor_role_and_bytes(monkeypatch):
    monkeypatch.chdir(ROOT)
    rep = scan(["fixtures/sample"])
    results = to_sarif(rep)["runs"][0]["results"]
    keys = [json.dumps(r["locations"], sort_keys=True) + r["ruleId"] for r in results]
    assert len(set(keys)) == len(keys)  # the two role_drift results differ by role
    sm = next(r for r in results if r["ruleId"] == "GRIT101")
    loc = sm["locations"][0]
    assert loc["logicalLocations"][0]["name"] == "model.layers.1.self_attn.k_proj.weight"
    # this finding names a logical tensor whose planes are stored as
    # *.grit_data / *.grit_scale0: a region only when it is a stored tensor
    art = next(a for a in rep.artifacts if a.path == rep.findings[0].path)
    names = {t.name for t in art.tensors}
    if rep.findings[0].tensor in names:
        assert "region" in loc["physicalLocation"]
    else:
        assert "region" not in loc["physicalLocation"]


def test_region_is_the_tensor_bytes_from_the_header(tmp_path, monkeypatch):
    """A finding on a stored tensor gets byteOffset/byteLength as the
    safetensors header says: 8 + header length + data_offsets."""
    import struct

    monkeypatch.chdir(ROOT)
    rep = scan(["fixtures/broken"])
    doc = to_sarif(rep)
    checked = 0
    for f, r in zip(rep.findings, doc["runs"][0]["results"]):
        region = r["locations"][0]["physicalLocation"].get("region")
        if region is None or not f.path.endswith(".safetensors"):
            continue
        raw = Path(f.path).read_bytes()
        n = struct.unpack("<Q", raw[:8])[0]
        begin, end = json.loads(raw[8:8 + n])[f.tensor]["data_offsets"]
        assert region == {"byteOffset": 8 + n + begin, "byteLength": end - begin}
        checked += 1
    assert checked > 0


def test_uris_are_normalised_and_percent_encoded(tmp_path):
    assert repo_path("./a/b/../c.gguf") == "a/c.gguf"
    assert repo_path(str(tmp_path / "x" / "m.gguf"), str(tmp_path)) == "x/m.gguf"
    assert repo_path("/elsewhere/m.gguf", str(tmp_path)) == "/elsewhere/m.gguf"
    odd = tmp_path / "we ird%;'#?" / "m.safetensors"
    odd.parent.mkdir()
    shutil.copy(ROOT / "fixtures" / "sample" / "llama-mxfp4" / "model.safetensors", odd)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        doc = to_sarif(scan(["."]))
    finally:
        os.chdir(cwd)
    uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"]
    assert uri == "we%20ird%25%3B%27%23%3F/m.safetensors"
    assert list(jsonschema.Draft4Validator(SCHEMA).iter_errors(doc)) == []


def test_rules_carry_documentation_from_the_registry():
    from grit_scan.api import rules

    doc = to_sarif(scan(["fixtures/sample/llama-mxfp4"]))
    by_id = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    for r in rules():
        d = by_id[r.code]
        assert d["help"]["markdown"] == r.doc and d["help"]["text"] == r.doc
        assert d["fullDescription"]["text"] and d["helpUri"].endswith(r.name.replace("_", "-"))
