"""Issue 12, model-level reasoning, over files written by the real producers
(fixtures/producers, MANIFEST.json says who wrote each and what it holds):
modules that straddle shards, split GGUFs, several quantisations side by
side, Hugging Face caches, and llama.cpp's mixing recipes."""

import json
import os
from collections import defaultdict
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import load_file

import grit_scan
from grit_scan.api import tensor_bytes
from grit_scan.cli import main
from grit_scan.codec.decode import decode
from grit_scan.codec.grade import registry
from grit_scan.rules import Severity

ROOT = Path(__file__).resolve().parent.parent
PROD = ROOT / "fixtures" / "producers"
MANIFEST = {e["path"]: e for e in json.loads((PROD / "MANIFEST.json").read_text())["entries"]}


def scan(rel, deep=False):
    return grit_scan.scan([str(PROD / rel)], deep=deep, jobs=1)


def kinds(report):
    return {f.kind.value for f in report.findings}


def serious(report):
    return [f for f in report.findings
            if f.severity in (Severity.STRUCTURAL, Severity.DISAGREEMENT)]


def split_modules(rel):
    """Modules whose tensors the index maps to more than one shard (from the
    index itself, not from grit)."""
    wm = json.loads((PROD / rel / "model.safetensors.index.json").read_text())["weight_map"]
    shards = defaultdict(set)
    for name, shard in wm.items():
        shards[name.rsplit(".", 1)[0]].add(shard)
    return sorted(m for m, s in shards.items() if len(s) > 1)


@pytest.mark.parametrize("rel", ["ct/nvfp4a16-sharded", "ct/fp8-dynamic-sharded"])
@pytest.mark.parametrize("deep", [False, True])
def test_fp1_modules_straddling_shards_are_one_model(rel, deep):
    mods = split_modules(rel)
    assert mods == sorted(MANIFEST[rel]["modules_split_across_shards"])  # the case is real
    r = scan(rel, deep=deep)
    assert not serious(r), [(f.kind, f.path, f.message) for f in serious(r)]
    described = {q.name for a in r.artifacts for q in a.quantized}
    # every linear module of the 2-layer model is recovered, split or not
    wm = json.loads((PROD / rel / "model.safetensors.index.json").read_text())["weight_map"]
    scales = {n.rsplit(".", 1)[0] for n in wm if n.endswith(".weight_scale")}
    assert len(scales) == 14
    assert {n.rsplit(".", 1)[0] for n in described} == scales
    assert r.exit_codes["graded"] == 3 and r.exit_codes["simple"] == 1  # warnings only


def test_fp1_a_straddling_tensor_decodes_to_the_producers_values():
    rel = "ct/fp8-dynamic-sharded"
    name = "model.layers.0.self_attn.v_proj.weight"
    assert name.rsplit(".", 1)[0] in split_modules(rel)
    assert name in MANIFEST[rel]["dequant"]["tensors"]
    art, q = _from_model(rel, name)
    assert any(r is not None and r.file not in (None, art.abs_path) for r in q.planes)
    values = decode(q.desc, list(q.shape), tensor_bytes(art, q),
                    grades=registry([q.grade]), layouts=q.layouts)
    want = load_file(str(PROD / MANIFEST[rel]["dequant"]["path"]))[name]
    assert values.shape == want.shape
    # compressed-tensors decompresses into the model's bfloat16: GRIT's exact
    # product (fp8 x bf16 scale fits binary32 exactly), rounded to bfloat16 by
    # ml_dtypes (RNE), must be the producer's value bit for bit
    ours = values.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    assert np.array_equal(ours, want.astype(np.float32))
    assert not np.array_equal(values, np.zeros_like(values))


def _from_model(rel, name):
    r = scan(rel)
    for a in r.artifacts:
        for q in a.quantized:
            if q.name == name:
                return a, q
    raise AssertionError(name)


def test_fp2_several_quantisations_of_one_model_are_listed_not_compared():
    r = scan("gguf-quants")
    assert "gid_disagreement" not in kinds(r) and "role_drift" not in kinds(r)
    assert "artifact_drift" not in kinds(r)
    (info,) = [f for f in r.findings if f.kind == "quantizations"]
    files = sorted(p.name for p in (PROD / "gguf-quants").glob("*.gguf"))
    want = sorted(f.split("tiny-llama-", 1)[1].removesuffix(".gguf") for f in files)
    assert info.detail["quantizations"] == want and len(want) == 12
    assert info.message.startswith("12 quantisations of one model")
    assert r.exit_codes == {"graded": 3, "simple": 1}  # inferred/not_representable warnings


def test_fp2_unrelated_repositories_in_a_cache_are_not_compared():
    r = scan("hf-cache")
    assert "gid_disagreement" not in kinds(r)
    assert not serious(r), [(f.kind, f.message) for f in serious(r)]
    repos = {a.repo for a in r.artifacts if a.format.is_checkpoint_file}
    assert repos == {"grit-fixtures/tiny-llama-nvfp4", "grit-fixtures/tiny-llama-gptq"}


def test_fp3_split_gguf_is_one_model_under_shard_1s_file_type():
    r = scan("gguf-split")
    assert not serious(r), [(f.kind, f.message) for f in serious(r)]
    parts = [a for a in r.artifacts if a.format.is_checkpoint_file]
    assert len(parts) == 3 and {a.metadata.get("file_type_name") for a in parts} == {"Q4_K_M"}
    assert len({a.model for a in parts}) == 1
    assert r.exit_codes == {"graded": 3, "simple": 1}


def test_m1_a_deleted_split_part_is_named():
    r = scan("gguf-split-missing")
    (f,) = [f for f in r.findings if f.kind == "missing_shard"]
    assert "tiny-llama-Q4_K_M-00002-of-00003.gguf" in f.message
    assert f.detail["path"] == "tiny-llama-Q4_K_M-00002-of-00003.gguf"
    assert r.exit_codes == {"graded": 1, "simple": 1}
    assert main(["scan", str(PROD / "gguf-split-missing")]) == 1
    assert main(["scan", "--exit-policy", "simple", str(PROD / "gguf-split-missing")]) == 1


@pytest.mark.parametrize("rel", ["gguf-quants/tiny-llama-Q4_0.gguf",
                                 "gguf-quants/tiny-llama-Q5_0.gguf",
                                 "gguf-quants/tiny-llama-Q5_1.gguf",
                                 "gguf-quants/tiny-llama-Q4_K_M.gguf",
                                 "gguf-moe/tiny-mixtral-MXFP4_MOE.gguf",
                                 "ct/fp8-dynamic-sharded", "modelopt/fp8", "ct/fp8-block"])
def test_n1_standard_recipes_are_not_drift(rel):
    r = scan(rel)
    assert not {"artifact_drift", "role_drift"} & kinds(r), [
        (f.kind, f.message) for f in r.findings]
    assert not serious(r)
    # warnings only (inferred descriptors, ggml types GRIT v1 cannot express)
    assert r.exit_codes == {"graded": 3, "simple": 1}
    assert main(["scan", "--fail-on", "structural,disagreement", str(PROD / rel)]) == 0
    if rel.endswith(".gguf"):
        types = set(MANIFEST[rel]["tensor_types"].values()) - {"F32", "F16"}
        assert len(types) >= 2  # the recipe really mixes types: the test has teeth


def test_the_sample_still_disagrees_where_it_should():
    # two MXFP4 descriptions of one model with different group sizes are compared
    r = grit_scan.scan([str(ROOT / "fixtures" / "broken" / "tool-disagreement")])
    (f,) = [f for f in r.findings if f.kind == "gid_disagreement"]
    assert "both e2m1/e8m0 groups (the same tensors)" in f.message
    assert f.detail["compared_as"].startswith("models holding the same scheme (e2m1/e8m0 groups")


def _cache(tmp_path, layout):
    """A Hugging Face cache laid out as huggingface_hub does (real files in
    snapshot folders are enough for the repository/revision reading)."""
    import shutil

    sample = ROOT / "fixtures" / "sample"
    for (repo, rev), src in layout.items():
        snap = tmp_path / "hub" / f"models--{repo.replace('/', '--')}" / "snapshots" / rev
        snap.mkdir(parents=True)
        for f in (sample / src).iterdir():
            shutil.copy(f, snap / f.name)
        (snap.parent.parent / "refs").mkdir(exist_ok=True)
        (snap.parent.parent / "blobs").mkdir(exist_ok=True)
    return tmp_path / "hub"


def test_revisions_of_one_repository_are_compared_and_say_so(tmp_path):
    # revision a holds the MXFP4 safetensors (k0=32), revision b the GGUF
    # conversion (k0=64): the same quantisation of the same tensors
    hub = _cache(tmp_path, {("org/m", "a" * 40): "llama-mxfp4",
                            ("org/m", "b" * 40): "llama-gguf"})
    r = grit_scan.scan([str(hub)])
    (f,) = [f for f in r.findings if f.kind == "gid_disagreement"]
    assert f.detail["compared_as"].startswith("revisions of one repository (org/m)")
    assert {a.revision for a in r.artifacts if a.format.is_checkpoint_file} == {"a" * 40,
                                                                              "b" * 40}


def test_unrelated_repositories_are_never_compared(tmp_path):
    hub = _cache(tmp_path, {("org/m", "a" * 40): "llama-mxfp4",
                            ("other/n", "b" * 40): "llama-gguf"})
    r = grit_scan.scan([str(hub)])
    assert "gid_disagreement" not in kinds(r)
    # the same two files outside a cache do disagree (the comparison is real)
    flat = grit_scan.scan([str(ROOT / "fixtures" / "sample" / "llama-mxfp4"),
                           str(ROOT / "fixtures" / "sample" / "llama-gguf")])
    assert "gid_disagreement" in kinds(flat)


@pytest.mark.parametrize("repo", ["tiny-llama-gptq", "tiny-llama-nvfp4"])
def test_fp5_a_snapshot_directory_scans_as_its_model(repo):
    snaps = sorted((PROD / "hf-cache" / "hub" / f"models--grit-fixtures--{repo}" /
                    "snapshots").iterdir())
    for snap in snaps:
        assert any(p.is_symlink() and "../../blobs/" in os.readlink(p) for p in snap.iterdir())
        r = grit_scan.scan([str(snap)])
        assert "path_escape" not in kinds(r) and not serious(r)
        files = [a for a in r.artifacts if a.format.is_checkpoint_file]
        assert files and all(a.parsed for a in files)
        assert {a.repo for a in files} == {f"grit-fixtures/{repo}"}
        assert r.exit_codes == {"graded": 3, "simple": 1}  # warnings only (not_representable)


def test_big_endian_gguf_is_one_clear_unsupported_line():
    r = scan("gguf-bigendian")
    (f,) = r.findings
    assert f.kind == "not_representable" and "big-endian GGUF" in f.message
    assert "\n" not in f.message
    assert r.exit_codes == {"graded": 4, "simple": 2}  # nothing could be read
