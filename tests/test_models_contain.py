"""An exception while a model's conventions are inferred is contained to that
model (parsers/models.py ``_contain``): every file of the model stays in the
report as it was read, the first gets the internal_error, and a model none
of whose files could be parsed costs nothing more."""

import json

import grit_scan
from grit_scan.parsers import models
from grit_scan.writers import Raw, write_safetensors


def _boom(*args, **kw):
    raise RuntimeError("inference exploded")


def _three_shards(tmp_path):
    wm = {}
    for k in range(3):
        name = f"model-{k + 1:05d}-of-00003.safetensors"
        m = f"model.layers.{k}.mlp.down_proj"
        write_safetensors(tmp_path / name, {
            m + ".weight": Raw("U8", [4, 16], bytes(64)),
            m + ".weight_scale": Raw("F8_E4M3", [4, 2], bytes(8)),
            m + ".weight_scale_2": Raw("F32", [1], bytes(4))})
        wm.update({m + s: name for s in (".weight", ".weight_scale", ".weight_scale_2")})
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": wm}))


def test_every_shard_of_a_failed_model_stays_in_the_report(tmp_path, monkeypatch):
    _three_shards(tmp_path)
    monkeypatch.setattr(models, "infer_model", _boom)
    r = grit_scan.scan([str(tmp_path)])
    shards = sorted(a.path.rsplit("/", 1)[-1] for a in r.artifacts
                    if a.path.endswith(".safetensors"))
    assert shards == [f"model-{k:05d}-of-00003.safetensors" for k in (1, 2, 3)]
    bad = [f for f in r.findings if f.kind == "internal_error"]
    assert len(bad) == 1 and bad[0].path.endswith("model-00001-of-00003.safetensors")
    assert "inference exploded" in bad[0].message
    # the other shards are as they were read: parsed, their tensors listed
    for a in r.artifacts:
        if a.path.endswith(".safetensors"):
            assert a.parsed and len(a.tensors) == 3


def test_a_model_with_no_readable_file_is_not_an_internal_error(tmp_path, monkeypatch):
    for k in range(2):
        (tmp_path / f"model-{k + 1:05d}-of-00002.safetensors").write_bytes(b"\xff" * 64)
    monkeypatch.setattr(models, "infer_model", _boom)
    r = grit_scan.scan([str(tmp_path)])
    assert not [f for f in r.findings if f.kind == "internal_error"]
    assert {f.kind for f in r.findings} == {"file_unparseable"}
    assert sum(f.kind == "file_unparseable" for f in r.findings) == 2
