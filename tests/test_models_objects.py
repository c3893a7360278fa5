"""A model's tensors reach the shard holding their data whichever way they
were inferred.

Grouping gives each shard the tensors whose data plane it stores.  Most
modules are replayed from a learned plan and distributed in bulk
(``models._distribute``); a module no plan describes is inferred on its own
and arrives as a QTensor object, and a model holding any such tensor is
distributed one tensor at a time (objects to the shard of their data plane,
with that shard's own planes losing their file reference; replays to the
shard of their data position).  Expectations come from the producer's own
headers, read with ``json``: llm-compressor's 7-shard NVFP4A16 model, whose
modules straddle shards."""

import json
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import grit_scan
from grit_scan import conventions
from grit_scan.conventions import engine
from grit_scan.issues.unsupported_convention import Unclaimed

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "producers" / "ct" / "nvfp4a16-sharded"


def _holders() -> dict[str, str]:
    """Stored tensor name -> the shard whose header lists it."""
    out = {}
    for f in sorted(ROOT.glob("*.safetensors")):
        with f.open("rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            for k in json.loads(fh.read(n)):
                if k != "__metadata__":
                    out[k] = f.name
    return out


def _no_plan_for(pick: Callable[[str], bool]) -> Callable[..., Any]:
    learn = engine._learn

    def wrapped(ctx: Any, mod: str, *rest: Any) -> Any:
        return None if pick(mod) else learn(ctx, mod, *rest)
    return wrapped


WAYS = {
    "every module planned": None,
    "attention unplanned": _no_plan_for(lambda mod: ".self_attn." in mod),
    "no module planned": _no_plan_for(lambda mod: True),
}


@pytest.fixture(params=list(WAYS))
def scanned(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
            ) -> tuple[str, dict[str, str], grit_scan.Report]:
    """(the way, the producer's shard of each stored tensor, the scan)."""
    way: str = request.param
    if WAYS[way] is not None:
        monkeypatch.setattr(engine, "_learn", WAYS[way])
    return way, _holders(), grit_scan.scan([str(ROOT)])


def test_each_tensor_is_on_the_shard_holding_its_data(
        scanned: tuple[str, dict[str, str], grit_scan.Report]) -> None:
    way, holders, rep = scanned
    packed = {n[: -len("_packed")] for n in holders if n.endswith(".weight_packed")}
    seen: list[str] = []
    for a in rep.artifacts:
        here = Path(a.path).name
        for q in a.quantized:
            seen.append(q.name)
            assert q.planes is not None
            data = q.planes[0]
            assert data is not None and data.tensor == q.name + "_packed"
            assert holders[data.tensor] == here, (way, q.name)
            for p in q.planes:
                if p is None or p.tensor is None:
                    continue
                # a plane in this shard names no file; one in another names it
                if holders[p.tensor] == here:
                    assert p.file is None, (way, q.name, p.tensor)
                else:
                    assert p.file is not None and Path(p.file).name == holders[p.tensor]
    assert sorted(seen) == sorted(packed) and len(packed) == 14
    # a straddling module is among them: its scale lies in another shard
    assert any(holders[n + "_scale"] != holders[n + "_packed"] for n in packed)


def test_refusals_follow_their_tensors_whichever_way(
        scanned: tuple[str, dict[str, str], grit_scan.Report]) -> None:
    _way, holders, rep = scanned
    for a in rep.artifacts:
        here = Path(a.path).name
        refused = sorted(i.tensor or "" for i in a.issues if i.code.value == "not_representable")
        assert refused == sorted(n for n in (q.name for q in a.quantized))
        assert all(holders[n + "_packed"] == here for n in refused)


def test_an_issue_naming_no_tensor_goes_to_the_first_shard(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An issue whose tensor is none of the model's (or names none) lands on
    the model's first shard; one naming a quantised tensor lands where that
    tensor went."""
    infer = conventions.infer
    holders = _holders()
    packed = sorted(n[: -len("_packed")] for n in holders if n.endswith(".weight_packed"))
    last = max(packed, key=lambda n: holders[n + "_packed"])  # on a late shard

    def more(*args: Any) -> Any:
        got = infer(*args)
        extra = [Unclaimed("no.such.tensor", 1, ("no.such.tensor",)),
                 Unclaimed(last, 1, (last,))]
        return got._replace(issues=[*got.issues, *extra])

    monkeypatch.setattr(conventions, "infer", more)  # as parsers/models.py calls it
    rep = grit_scan.scan([str(ROOT)])
    where = {i.tensor: Path(a.path).name for a in rep.artifacts for i in a.issues
             if isinstance(i, Unclaimed)}
    first = sorted(p.name for p in ROOT.glob("*.safetensors"))[0]
    assert where["no.such.tensor"] == first
    assert where[last] == holders[last + "_packed"] != first
