"""Issue 15: the rules ask their questions once per kin (tensors of one file
sharing descriptor, grade, shape, source, convention, reason and layouts),
and what several rules need is computed once per rules run.  Grouping is an
optimisation only: every finding must be what a per-tensor pass gives."""

import copy
import dataclasses
from collections.abc import Iterable
from pathlib import Path

import bench_trees
import pytest

from grit_scan.artifact import (
    Artifact,
    Format,
    QList,
    QListBuilder,
    QTensor,
    Recorded,
    ScanInput,
    Source,
)
from grit_scan.parsers import tree
from grit_scan.rules import Kind, registry
from grit_scan.rules.kinds import grit_check, inferred_descriptor, role_drift
from grit_scan.rules.registry import Runner, enabled_kinds, memoised
from grit_scan.rules.support import kins, positions

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for p in (ROOT / "fixtures").glob("*/*/") if p.is_dir())


def run(scan: ScanInput) -> list:
    return Runner(enabled=enabled_kinds(None, None)).run(scan)


def unshared(scan: ScanInput) -> ScanInput:
    """The same scan with nothing shared between tensors: every tensor its own
    descriptor, grade and layouts objects and a shape held as a list, so that
    each is a kin of its own (the per-tensor pass the kins replace)."""
    def alone(qs: Iterable[QTensor]) -> list[QTensor]:
        return [dataclasses.replace(q, desc=copy.copy(q.desc), grade=copy.copy(q.grade),
                                    shape=list(q.shape), layouts=dict(q.layouts)) for q in qs]

    arts = []
    for a in scan.artifacts:
        if a.format is Format.MANIFEST:
            # a manifest's entries stay one Recorded per listed file, as read
            recs = [Recorded.of_entries(r.rel, alone(map(r.entry, range(len(r)))))
                    for r in Recorded.of(a.quantized)]
            build = QListBuilder()
            build.add_replays(recs, *Recorded.columns(recs))
            qs = build.build()
        else:
            qs = QList(alone(a.quantized))
        arts.append(dataclasses.replace(a, quantized=qs))
    return dataclasses.replace(scan, artifacts=tuple(arts))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_findings_do_not_depend_on_how_tensors_share_objects(path):
    scan = tree.collect([str(path)])
    per_tensor = unshared(scan)
    assert all(len(kins(a)) == len(a.quantized) for a in per_tensor.artifacts
               if a.format is not Format.MANIFEST)
    assert run(scan) == run(per_tensor)


def _q(name: str, desc=None, grade=None, shape=(4, 32), source=Source.INFERRED,
       convention: str | None = "c", layouts=None) -> QTensor:
    more = {} if layouts is None else {"layouts": layouts}
    return QTensor(name=name, role=name, shape=shape, source=source, desc=desc, grade=grade,
                   convention=convention, **more)


def _art(qs: list[QTensor], path: str = "m/a.safetensors") -> Artifact:
    return Artifact(path=path, abs_path="/" + path, format=Format.SAFETENSORS, quantized=QList(qs),
                    group="m", model="m")


def test_kins_group_by_shared_objects_and_values_in_order_of_first_tensor():
    d, g = object(), object()  # kins compare these by identity only
    lay: dict[int, str] = {}
    qs = [_q("a", d, g), _q("b", d, g, convention="x"), _q("c", d, g),
          _q("d", d, g, shape=(8, 32)), _q("e", d, g, convention="x"),
          _q("f", d, g, shape=[8, 32]), _q("g", d, g, layouts=lay), _q("h", d, g, layouts=lay)]
    ks = kins(_art(qs))
    assert [[qs[i].name for i in k.idx] for k in ks] == [
        ["a", "c"], ["b", "e"], ["d"], ["f"], ["g", "h"]]
    assert [k.rep.name for k in ks] == ["a", "b", "d", "f", "g"]


def test_many_kins_are_found_by_key_and_keep_their_order():
    # more kins than are compared one by one: the rest are looked up by key
    qs = [_q(f"t{i}", shape=(i % 13 + 1, 2)) for i in range(60)]
    qs += [_q(f"l{i}", shape=[i % 13 + 1, 2]) for i in range(13)]  # a list shape joins its kin
    ks = kins(_art(qs))
    assert len(ks) == 13
    for j, k in enumerate(ks):
        assert list(k.idx) == [i for i in range(60) if i % 13 == j] + [60 + j]


def test_positions_merge_kins_under_one_key_in_tensor_order():
    qs = [_q("a", convention="x"), _q("b", convention="y", shape=(2, 2)),
          _q("c", convention="y"), _q("d", convention="x", shape=(2, 2)),
          _q("e", convention="x"), _q("f", convention=None)]
    got = positions(_art(qs), lambda q: (q.convention,) if q.convention else ())
    assert list(got) == ["x", "y"]  # in order of their first tensor
    assert [qs[i].name for i in got["x"]] == ["a", "d", "e"]
    assert [qs[i].name for i in got["y"]] == ["b", "c"]


def test_inferred_descriptor_counts_every_tensor_of_interleaved_kins():
    scan = tree.collect([str(ROOT / "fixtures" / "conventions" / "gpt-oss-mxfp4")])
    a = next(x for x in scan.artifacts if x.quantized)
    base = list(a.quantized)
    # the file's tensors repeated 30 times, every other copy with its own
    # descriptor object: two kins per tensor kind, interleaved
    qs = []
    for r in range(30):
        for q in base:
            qs.append(dataclasses.replace(q, name=f"{q.name}.{r}",
                                          desc=copy.copy(q.desc) if r % 2 else q.desc))
    b = dataclasses.replace(a, quantized=QList(qs))
    (f,) = inferred_descriptor.check_file(b)
    assert f.detail["count"] == len(qs) == 30 * len(base)
    assert f.detail["tensors"] == [q.name for q in qs[:50]]


def test_grit_check_flags_the_one_tensor_whose_plane_differs_from_its_kin():
    scan = tree.collect([str(ROOT / "fixtures" / "conventions" / "gpt-oss-mxfp4")])
    a = next(x for x in scan.artifacts if x.quantized)
    q0 = next(q for q in a.quantized if q.planes)
    assert grit_check.check_file(a) == []
    qs = [dataclasses.replace(q0, name=f"t{i}") for i in range(40)]
    qs[17] = dataclasses.replace(qs[17], planes=[p._replace(length=p.length - 1)
                                                 if j == 1 and p else p
                                                 for j, p in enumerate(qs[17].planes)])
    b = dataclasses.replace(a, quantized=QList(qs), issues=[])
    found = [f for f in grit_check.check_file(b) if f.tensor is not None]
    assert [(f.kind, f.tensor) for f in found] == [(Kind.SIZE_MISMATCH, "t17")]


def test_role_drift_is_computed_once_per_run_and_the_memo_dies_with_it(monkeypatch):
    calls = []
    real = role_drift._role_drift

    def counting(arts):
        calls.append(1)
        return real(arts)

    monkeypatch.setattr(role_drift, "_role_drift", counting)
    scan = tree.collect([str(ROOT / "fixtures" / "broken" / "half-converted")])
    first = run(scan)
    assert len(calls) == 1  # role_drift and artifact_drift both asked for it
    assert any(f.kind is Kind.ROLE_DRIFT for f in first)
    assert registry._MEMO.get() is None
    assert run(scan) == first
    assert len(calls) == 2  # a new run computes it again
    # outside a run, a check is simply computed
    role_drift.check_scan(scan)
    assert len(calls) == 3


def test_memoised_outside_a_run_computes_every_time():
    n = []
    assert memoised("t", n, lambda: len(n)) == 0
    n.append(1)
    assert memoised("t", n, lambda: len(n)) == 1


BENCH = bench_trees.load()


@pytest.mark.parametrize("name", sorted(BENCH.TREES))
def test_findings_on_bench_trees_are_the_per_tensor_ones(name, tmp_path):
    # two shards of 800 stored tensors: files of a hundred or more quantised
    # tensors, each kept as columns (artifact.QList), so that a finding
    # listing the first 50 tensors of a kind is read from the columns
    BENCH.build(str(tmp_path / name), name, 2)
    scan = tree.collect([str(tmp_path / name)])
    assert any(a.quantized.columnar for a in scan.artifacts) or name in ("bf16", "unknown")
    per_tensor = unshared(scan)
    got = run(scan)
    assert got == run(per_tensor)
    assert got or name == "bf16"  # findings to compare (zp_convention's for GPTQ)


def test_zp_convention_names_the_first_50_gptq_tensors_from_the_columns(tmp_path):
    BENCH.build(str(tmp_path / "gptq"), "gptq", 2)
    scan = tree.collect([str(tmp_path / "gptq")])
    by_path = {a.path: a for a in scan.artifacts}
    found = [f for f in run(scan) if f.kind.value.startswith("zp_convention")]
    assert len(found) == 2
    for f in found:
        a = by_path[f.path]
        assert a.quantized.columnar
        gptq = [q.name for q in a.quantized if q.convention == "gptq"]
        assert len(gptq) > 50
        assert f.detail["count"] == len(gptq) and f.detail["tensors"] == gptq[:50]


def test_partial_quantization_reads_stored_tensors_as_columns_or_records():
    from grit_scan.artifact import TensorTable
    from grit_scan.rules.kinds import partial_quantization

    scan = tree.collect([str(ROOT / "fixtures" / "broken" / "partial-quantization")])
    (a,) = [a for a in scan.artifacts if a.quantized]
    assert isinstance(a.tensors, TensorTable)
    (f,) = partial_quantization.check_file(a)
    assert f.detail["tensors"] == ["model.layers.0.self_attn.o_proj.weight"]
    # the same tensors as records: the same finding
    assert partial_quantization.check_file(dataclasses.replace(a, tensors=tuple(a.tensors))) == [f]
    # a rank-1 float weight is not a linear weight
    flat = tuple(t._replace(shape=(t.shape[0] * t.shape[1],)) if t.name == f.detail["tensors"][0]
                 else t for t in a.tensors)
    assert partial_quantization.check_file(dataclasses.replace(a, tensors=flat)) == []
