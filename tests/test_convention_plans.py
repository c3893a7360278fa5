"""Issue 15: conventions.infer does again, for every module of one signature
(its parts' suffixes, dtypes and shapes), what it learned from the first one.
A plan is an optimisation only: every report must be what running each
module's convention gives."""

import json
from pathlib import Path

import pytest

from grit_scan import scan
from grit_scan.conventions import engine
from grit_scan.writers import Raw, write_safetensors

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(str(p) for p in (ROOT / "fixtures").glob("*/*/") if p.is_dir())


def report(paths: list[str]) -> str:
    return json.dumps(scan(paths).to_json(), sort_keys=True, default=str)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: Path(p).name)
def test_plans_change_no_report(path, monkeypatch):
    planned = report([path])
    monkeypatch.setattr(engine, "_learn", lambda *a: None)  # every module by hand
    assert report([path]) == planned


def _nvfp4(m: str, rows: int, cols: int) -> dict[str, Raw]:
    return {m + ".weight": Raw("U8", [rows, cols // 2], bytes(rows * cols // 2)),
            m + ".weight_scale": Raw("F8_E4M3", [rows, cols // 16], bytes(rows * cols // 16)),
            m + ".weight_scale_2": Raw("F32", [1], bytes(4))}


def test_one_plan_serves_many_modules_and_each_keeps_its_names(tmp_path, monkeypatch):
    """Twelve layers of one signature, one odd shape, one module without its
    global scale: what a plan gives names each module's own tensors, offsets
    and role, and the odd modules go their own way."""
    tensors: dict[str, Raw] = {}
    for k in range(12):
        tensors |= _nvfp4(f"model.layers.{k}.mlp.down_proj", 4, 32)
    tensors |= _nvfp4("model.layers.12.mlp.down_proj", 8, 32)
    odd = _nvfp4("model.layers.13.mlp.down_proj", 4, 32)
    del odd["model.layers.13.mlp.down_proj.weight_scale_2"]
    tensors |= odd
    write_safetensors(tmp_path / "model.safetensors", tensors)
    learned: list[object] = []
    real = engine._learn

    def spy(*a):  # type: ignore[no-untyped-def]
        plan = real(*a)
        learned.append(plan)
        return plan

    monkeypatch.setattr(engine, "_learn", spy)
    qs = {q.name: q for q in scan([str(tmp_path)]).artifacts[0].quantized}
    assert len(learned) == 3 and all(p is not None for p in learned)  # 3 signatures
    assert len(qs) == 14
    for k in (0, 7, 11):
        q = qs[f"model.layers.{k}.mlp.down_proj.weight"]
        assert q.role == f"model.layers.{k}.mlp.down_proj.weight"
        assert [p.tensor for p in q.planes if p is not None] == [
            f"model.layers.{k}.mlp.down_proj.weight",
            f"model.layers.{k}.mlp.down_proj.weight_scale",
            f"model.layers.{k}.mlp.down_proj.weight_scale_2"]
    offsets = {q.planes[0].offset for q in qs.values()}
    assert len(offsets) == 14  # each module's own bytes
    assert qs["model.layers.12.mlp.down_proj.weight"].shape == (8, 32)
    assert qs["model.layers.13.mlp.down_proj.weight"].planes[2] is None
