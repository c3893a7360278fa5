"""bench/conventions.py measures what it says: each tree it builds, at its
--quick size, is recognised by grit as the convention it is named after
(the registry's class claims every module, every quantised tensor carries
that convention, a not-representable one says so), and every convention in
the registry has a tree."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import bench_trees
import pytest

from grit_scan import scan
from grit_scan.conventions import registered

BENCH = Path(__file__).resolve().parent.parent / "bench"


B = bench_trees.load()
QUICK_SHARDS = 50  # what --quick builds

# the registry class whose ``infer`` must claim each tree's modules (None: none may)
CLAIMED_BY = {
    "bf16": None, "unknown": None,
    "modelopt-nvfp4": "modelopt-nvfp4", "ct-nvfp4": "compressed-tensors-nvfp4",
    "fp8-per-tensor": "fp8", "fp8-per-channel": "fp8", "fp8-block": "fp8",
    "finegrained-fp8": "fp8-weight-scale-inv", "gpt-oss-mxfp4": "gpt-oss-mxfp4",
    "ct-mxfp4": "compressed-tensors-mxfp4", "ct-mxfp8": "compressed-tensors-mxfp8",
    "gptq": "gptq", "awq-gemm": "awq", "awq-gemv": "awq-gemv",
    "bnb-nf4": "bitsandbytes-4bit", "bnb-int8": "bitsandbytes-int8",
    "ct-int": "compressed-tensors-int", "ct-pack-quantized": "compressed-tensors-pack-quantized",
    "mlx-affine": "mlx-affine",
}


def test_every_registered_convention_has_a_tree() -> None:
    assert set(CLAIMED_BY) == set(B.TREES)
    assert {c.name for c in registered()} <= set(CLAIMED_BY.values())


@pytest.fixture
def claims(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Which registered conventions' ``infer`` ran, by name."""
    seen: Counter[str] = Counter()
    for conv in registered():
        plain = conv.infer.__func__  # type: ignore[attr-defined]

        def infer(cls: type, ctx: object, mod: str, parts: object, _f: object = plain) -> None:
            seen[cls.name] += 1  # type: ignore[attr-defined]
            _f(cls, ctx, mod, parts)  # type: ignore[operator]

        monkeypatch.setattr(conv, "infer", classmethod(infer))
    yield seen


@pytest.mark.parametrize("name", sorted(B.TREES))
def test_tree_is_its_convention(name: str, tmp_path: Path, claims: Counter[str]) -> None:
    tree = B.TREES[name]
    root = tmp_path / name
    info = B.build(str(root), name, QUICK_SHARDS)
    modules = QUICK_SHARDS * (800 // tree.parts)
    assert info["tensors"] == modules * tree.parts
    rep = scan([str(root)])
    shards = [a for a in rep.artifacts if a.path.endswith(".safetensors")]
    assert len(shards) == QUICK_SHARDS and len(rep.artifacts) == QUICK_SHARDS + 1  # + the index
    assert all(a.parsed for a in rep.artifacts)
    want = CLAIMED_BY[name]
    assert set(claims) == ({want} if want else set())
    convs: Counter[str | None] = Counter()
    reasons: Counter[bool] = Counter()
    for a in rep.artifacts:
        for q in a.quantized:
            convs[q.convention] += 1
            reasons[q.reason is not None] += 1
    kinds = Counter(f.kind for f in rep.findings)
    if tree.convention is None:
        assert not convs
    else:
        assert convs == {tree.convention: modules}
        assert reasons == {tree.not_representable: modules}
    assert ("not_representable" in kinds) == tree.not_representable
    for kind in tree.findings:
        assert kind in kinds
    if tree.convention is None and name != "bf16":
        assert "unsupported_convention" in kinds


@pytest.mark.parametrize("name", sorted(B.TREES))
def test_plans_change_no_report_on_tree(name: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The producers' order puts a module's parts at other distances than one
    after the other (a shard sorted by dtype, then name): a plan replayed
    there gives what each module's convention gives."""
    from grit_scan.conventions import engine

    root = tmp_path / name
    B.build(str(root), name, 3)

    def report() -> str:
        return json.dumps(scan([str(root)]).to_json(), sort_keys=True, default=str)

    planned = report()
    monkeypatch.setattr(engine, "_learn", lambda *a: None)  # every module by hand
    assert report() == planned


@pytest.mark.parametrize("name", sorted(set(B.TREES) - {"bf16", "unknown"}))
def test_plans_change_no_report_with_modules_split(name: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Modules split across two shards (every other module keeps only its
    first part in the first shard; the same signature then has parts in
    either shard): each replayed tensor goes to the shard the convention's
    own pass gives it, with plans and without."""
    from grit_scan.conventions import engine

    sys.path.insert(0, str(BENCH))
    import models

    tree = B.TREES[name]
    root = tmp_path / name
    B.build(str(root), name, 1, per=tree.parts * 8)
    for f in root.glob("model-*.safetensors"):
        f.unlink()
    shards: list[list[tuple[str, str, list[int]]]] = [[], []]
    for k in range(8):
        parts = tree.make(k)
        cut = 1 if k % 2 else len(parts)
        shards[0] += parts[:cut]
        shards[1] += parts[cut:]
    weight_map = {}
    for s, entries in enumerate(shards):
        fname = f"model-{s + 1:05d}-of-00002.safetensors"
        models.write_sparse_safetensors(str(root / fname), tree.order(entries))
        weight_map.update({n: fname for n, _, _ in entries})
    (root / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": weight_map}))

    def report() -> str:
        return json.dumps(scan([str(root)]).to_json(), sort_keys=True, default=str)

    planned = report()
    monkeypatch.setattr(engine, "_learn", lambda *a: None)  # every module by hand
    assert report() == planned
