"""Table-driven: every fixture scenario's exact finding kinds, severities,
tensors and both exit codes (issue: grit scan).  Each kind has at least one
scenario that produces it and scenarios that must not."""

import json
from pathlib import Path

import jsonschema
import pytest

import grit_scan
from grit_scan.report.sarif import to_sarif
from grit_scan.rules import Kind
from grit_scan.rules import rules as registry_rules

KINDS = [k.value for k in Kind]

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
SCHEMA = json.loads((ROOT / "docs" / "scan-report.schema.json").read_text())

# scenario -> (deep, {kind: severity}, {kind: tensors that must be named}, graded, simple)
SCENARIOS = {
    "conventions/gpt-oss-mxfp4": (False, {"inferred_descriptor": "warning"}, {}, 3, 1),
    "conventions/ct-nvfp4": (False, {"not_representable": "warning"}, {}, 3, 1),
    "conventions/modelopt-nvfp4": (False, {"inferred_descriptor": "warning"}, {}, 3, 1),
    "conventions/ct-mxfp4": (False, {"inferred_descriptor": "warning"}, {}, 3, 1),
    # one scale over a weight of 16 rows: not representable (§3.7, §3.1)
    "conventions/fp8-per-tensor": (False, {"not_representable": "warning"}, {}, 3, 1),
    "conventions/fp8-per-channel": (False, {"inferred_descriptor": "warning",
                                            "unregistered_grade": "warning"}, {}, 3, 1),
    "conventions/fp8-block": (False, {"not_representable": "warning"},
                              {"not_representable": ["model.layers.0.mlp.gate_proj.weight"]},
                              3, 1),
    "conventions/gptq": (False, {"not_representable": "warning",
                                 "zp_convention_unverified": "warning"},
                         {"not_representable": ["model.layers.0.self_attn.q_proj.weight"]}, 3, 1),
    "conventions/awq": (False, {"not_representable": "warning"}, {}, 3, 1),
    "conventions/bnb-nf4": (False, {"not_representable": "warning"}, {}, 3, 1),
    "conventions/grit-annotated": (False, {"artifact_drift": "warning"}, {}, 3, 1),
    "conventions/grit-gguf": (False, {"artifact_drift": "warning"}, {}, 3, 1),
    "conventions/gguf-q4km": (False, {"inferred_descriptor": "warning",
                                      "not_representable": "warning"}, {}, 3, 1),
    # general.file_type MXFP4_MOE: llama.cpp's recipe mixes types by design (no drift)
    "conventions/gguf-mxfp4": (False, {"inferred_descriptor": "warning",
                                       "unregistered_grade": "warning"}, {}, 3, 1),
    "broken/sharded-ok": (True, {}, {}, 0, 0),
    "broken/wrong-group-size": (False, {"size_mismatch": "structural"},
                                {"size_mismatch": ["model.layers.0.self_attn.k_proj.weight"]},
                                1, 1),
    "broken/truncated-shard": (True, {"size_mismatch": "structural"},
                               {"size_mismatch": ["model.layers.1.self_attn.k_proj.weight"]},
                               1, 1),
    "broken/missing-shard": (False, {"missing_shard": "structural"}, {}, 1, 1),
    "broken/half-converted": (False, {"role_drift": "disagreement"}, {}, 2, 1),
    "broken/note-assumed": (False, {"note_assumed": "warning"}, {}, 3, 1),
    "broken/declared-contradicts": (False, {"declared_mismatch": "disagreement",
                                            "inferred_descriptor": "warning"}, {}, 2, 1),
    "broken/stale-config": (False, {"declared_mismatch": "disagreement"}, {}, 2, 1),
    "broken/gptq-unmarked": (False, {"zp_convention_undeclared": "disagreement",
                                     "not_representable": "warning"}, {}, 2, 1),
    "producers/gptq/m2-declares-v1-stores-v2": (
        True, {"zp_convention_mismatch": "disagreement", "not_representable": "warning"},
        {}, 2, 1),
    "broken/partial-quantization": (False, {"partial_quantization": "warning",
                                            "inferred_descriptor": "warning"},
                                    {"partial_quantization":
                                     ["model.layers.0.self_attn.o_proj.weight"]}, 3, 1),
    "broken/tool-disagreement": (False, {"gid_disagreement": "disagreement",
                                         "unregistered_grade": "warning"}, {}, 2, 1),
    "broken/grade-unknown": (False, {"grade_unknown": "structural"},
                             {"grade_unknown": ["model.layers.0.self_attn.q_proj.weight"]}, 1, 1),
    "broken/placement-unknown": (True, {"placement_unknown": "structural"}, {}, 1, 1),
    "broken/digest-mismatch": (True, {"digest_mismatch": "structural"},
                               {"digest_mismatch": ["model.layers.0.self_attn.q_proj.weight"]},
                               1, 1),
    "broken/index-inconsistent": (False, {"index_inconsistency": "structural"},
                                  {"index_inconsistency": ["model.a.weight", "model.b.weight",
                                                           "model.c.weight"]}, 1, 1),
    "broken/path-escape": (False, {"path_escape": "structural",
                                   "index_inconsistency": "structural"}, {}, 1, 1),
    "broken/unparseable": (False, {"file_unparseable": "structural"}, {}, 1, 1),
    "broken/reference-loader": (True, {"file_unparseable": "structural",
                                       "reference_opens": "info"}, {}, 1, 1),
    "broken/probe-warning": (True, {"probe_warning": "warning"}, {}, 3, 1),
    "broken/decode-divergence": (True, {"decode_divergence": "warning",
                                        "probe_warning": "warning",
                                        "inferred_descriptor": "warning"}, {}, 3, 1),
    "broken/manifest-changed": (False, {"gid_disagreement": "disagreement",
                                        "missing_shard": "structural",
                                        "unlisted_checkpoint": "disagreement",
                                        "artifact_drift": "warning"}, {}, 1, 1),
    "producers/quanto-qint4": (False, {"unsupported_convention": "warning"}, {}, 3, 1),
    "producers/gguf-quants": (False, {"quantizations": "info", "inferred_descriptor": "warning",
                                      "not_representable": "warning",
                                      "unregistered_grade": "warning"}, {}, 3, 1),
    "sample": (False, {"size_mismatch": "structural", "gid_disagreement": "disagreement",
                       "role_drift": "disagreement", "note_assumed": "warning",
                       "unregistered_grade": "warning", "artifact_drift": "warning"}, {}, 1, 1),
}


@pytest.fixture(scope="module")
def reports():
    return {name: grit_scan.scan([str(FIX / name)], deep=spec[0], jobs=1)
            for name, spec in SCENARIOS.items()}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario(reports, name):
    deep, kinds, tensors, graded, simple = SCENARIOS[name]
    r = reports[name]
    got = {}
    for f in r.findings:
        got.setdefault(f.kind, set()).add(f.severity)
    assert {k: sorted(v) for k, v in got.items()} == {k: [s] for k, s in kinds.items()}
    for kind, names in tensors.items():
        named = {f.tensor for f in r.findings if f.kind == kind}
        named |= {t for f in r.findings if f.kind == kind for t in f.detail.get("tensors", [])}
        assert set(names) <= named, (kind, named)
    assert r.exit_codes == {"graded": graded, "simple": simple}
    for f in r.findings:
        assert f.path and f.message and "\n" not in f.message


def _reference_refuses_report(monkeypatch):
    """reference_refuses has no fixture grit's own parser passes (a test
    holds the two to each other): grit's check for lone surrogates is
    switched off, and --deep's question to the library finds the file."""
    from grit_scan.parsers import safetensors_reader

    monkeypatch.setattr(safetensors_reader, "_lone_surrogate", lambda obj: None)
    r = grit_scan.scan([str(FIX / "broken" / "reference-loader")], deep=True, jobs=1)
    monkeypatch.undo()
    assert "reference_refuses" in {f.kind for f in r.findings}
    return r


def _internal_error_report(monkeypatch):
    """internal_error has no fixture (it is a bug by definition): a reader
    made to raise on one file of the sample produces it, and only there."""
    from grit_scan.parsers import readers

    real = readers.read_path

    def boom(path, ctx=None, fmt=None):
        if path.endswith(".gguf"):
            raise RuntimeError("reader exploded")
        return real(path, ctx, fmt)

    monkeypatch.setattr(readers, "read_path", boom)
    r = grit_scan.scan([str(FIX / "sample")])
    assert [f.kind for f in r.findings if f.kind == "internal_error"] == ["internal_error"]
    assert any(f.kind != "internal_error" for f in r.findings)  # the rest survived
    return r


def test_every_kind_is_produced_and_avoided(reports, monkeypatch):
    produced = {k for r in reports.values() for k in {f.kind for f in r.findings}}
    produced |= {f.kind for f in _internal_error_report(monkeypatch).findings}
    produced |= {f.kind for f in _reference_refuses_report(monkeypatch).findings}
    assert produced == set(KINDS), set(KINDS) - produced
    for kind in KINDS:
        assert any(kind not in {f.kind for f in r.findings} for r in reports.values())


def test_must_not_examples(reports):
    q4km = {f.kind for f in reports["conventions/gguf-q4km"].findings}
    assert "role_drift" not in q4km  # a declared k-quant mix is not drift
    assert not reports["broken/sharded-ok"].findings  # intact shards: no size_mismatch


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_json_report_validates(reports, name):
    doc = reports[name].to_json()
    jsonschema.validate(doc, SCHEMA)
    json.dumps(doc)  # serialisable


@pytest.mark.parametrize("name", ["sample", "broken/wrong-group-size", "broken/sharded-ok"])
def test_sarif_is_structurally_valid(reports, name):
    s = to_sarif(reports[name])
    assert s["version"] == "2.1.0" and s["$schema"].endswith("sarif-2.1.0.json")
    (run,) = s["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in registry_rules()]  # one per kind
    assert {r["properties"]["kind"] for r in rules} == set(KINDS)
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note", "none")
        assert res["message"]["text"]
        loc = res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert loc and "\\" not in loc
    assert len(run["results"]) == len(reports[name].findings)
    json.dumps(s)


def test_simple_policy_maps(reports):
    for r in reports.values():
        assert (r.exit_codes["simple"] == 0) == (r.exit_codes["graded"] == 0)


def test_nothing_parseable_is_exit_4(tmp_path):
    (tmp_path / "a.safetensors").write_bytes(b"\x00" * 3)
    r = grit_scan.scan([str(tmp_path)])
    assert r.exit_codes == {"graded": 4, "simple": 2}
    assert [f.kind for f in r.findings] == ["file_unparseable"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert grit_scan.scan([str(empty)]).exit_codes == {"graded": 4, "simple": 2}


def test_select_and_ignore(reports):
    r = grit_scan.scan([str(FIX / "sample")], select="size_mismatch,role_drift")
    assert {f.kind for f in r.findings} == {"size_mismatch", "role_drift"}
    r = grit_scan.scan([str(FIX / "sample")], ignore=["size_mismatch"])
    assert "size_mismatch" not in {f.kind for f in r.findings}
    assert r.exit_codes["graded"] == 2
    with pytest.raises(grit_scan.codec.errors.GritValueError, match="unknown finding kind"):
        grit_scan.scan([str(FIX / "sample")], select="sizemismatch")


def test_cross_revision_hf_cache(tmp_path):
    """Two snapshots of one repository in a Hugging Face cache layout: the
    revision that changed its group size disagrees by gid."""
    import shutil

    repo = tmp_path / "models--org--model"
    blobs = repo / "blobs"
    blobs.mkdir(parents=True)
    (repo / "refs").mkdir()  # a real cache repository has blobs/, refs/, snapshots/
    for rev, src in (("aaaa", FIX / "broken/tool-disagreement/hf/model.safetensors"),
                     ("bbbb", FIX / "sample/llama-mxfp4/model.safetensors")):
        blob = blobs / f"blob-{rev}"
        shutil.copy(src, blob)
        snap = repo / "snapshots" / rev
        snap.mkdir(parents=True)
        (snap / "model.safetensors").symlink_to(Path("../../blobs") / blob.name)
    r = grit_scan.scan([str(repo)])
    assert r.parsed_any
    paths = {a.path for a in r.artifacts}
    assert all("snapshots" in p for p in paths)  # blobs are reached through snapshots only
    # the snapshot directory alone (what snapshot_download() returns) scans as
    # the model it is: its links into ../../blobs of the same repository
    # belong to it (issue 12 item 7)
    r2 = grit_scan.scan([str(repo / "snapshots" / "aaaa")])
    assert "path_escape" not in {f.kind for f in r2.findings}
    assert [a.path for a in r2.artifacts] == [str(repo / "snapshots/aaaa/model.safetensors")]
    assert r2.parsed_any and r2.artifacts[0].parsed
