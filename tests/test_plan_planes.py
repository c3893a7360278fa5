"""Issue 15, memory: a plan replayed on a module whose parts are listed one
after the other keeps its planes as positions in the model's columns
(conventions.PlanPlanes), building each PlaneRef when it is asked for.  What
it gives must be what the shard headers say: each plane's stored tensor, its
absolute offset and length as the header states them, and a file reference
only for a plane in another shard than the tensor's data."""

import json
import struct
from collections.abc import Sequence
from pathlib import Path

import pytest

from grit_scan import conventions, scan
from grit_scan.artifact import PlaneRef, plane_bytes
from grit_scan.writers import Raw, write_safetensors

OUT, IN = 4, 32


def _fp8(m: str) -> dict[str, Raw]:
    # compressed-tensors float-quantized, per channel: one F32 scale per row
    return {m + ".weight": Raw("F8_E4M3", [OUT, IN], bytes(OUT * IN)),
            m + ".weight_scale": Raw("F32", [OUT, 1], bytes(4 * OUT))}


def _header(path: Path) -> dict[str, tuple[int, int]]:
    """name -> (absolute offset, byte length), read with struct and json."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    hdr = json.loads(raw[8:8 + n])
    return {k: (8 + n + v["data_offsets"][0], v["data_offsets"][1] - v["data_offsets"][0])
            for k, v in hdr.items() if k != "__metadata__"}


def _model(root: Path) -> tuple[Path, Path]:
    one, two = root / "model-00001-of-00002.safetensors", root / "model-00002-of-00002.safetensors"
    first = {}
    for k in range(6):
        first |= _fp8(f"model.layers.{k}.mlp.down_proj")
    # a module that straddles the shards: its weight here, its scale there
    first["model.layers.6.mlp.down_proj.weight"] = Raw("F8_E4M3", [OUT, IN], bytes(OUT * IN))
    second = {"model.layers.6.mlp.down_proj.weight_scale": Raw("F32", [OUT, 1], bytes(4 * OUT))}
    for k in range(7, 12):
        second |= _fp8(f"model.layers.{k}.mlp.down_proj")
    write_safetensors(one, first)
    write_safetensors(two, second)
    wm = {name: one.name for name in first} | {name: two.name for name in second}
    (root / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": wm}))
    return one, two


def _expected(one: Path, two: Path, home: Path, data: str, scale: str) -> list[PlaneRef | None]:
    where = {name: (path, at) for path in (one, two) for name, at in _header(path).items()}
    refs: list[PlaneRef | None] = []
    for name in (data, scale):
        path, (offset, length) = where[name]
        refs.append(PlaneRef(name, offset, length, 1, None if path == home else str(path)))
    return refs + [None, None]


@pytest.mark.parametrize("planned", [True, False], ids=["plans", "by-hand"])
def test_planes_are_what_the_headers_say(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         planned: bool) -> None:
    one, two = _model(tmp_path)
    if not planned:
        monkeypatch.setattr(conventions.engine, "_learn", lambda *a: None)  # every module by hand
    arts = {Path(a.abs_path): a for a in scan([str(tmp_path)]).artifacts}
    seen = 0
    lazy = 0
    for home in (one, two):
        for q in arts[home].quantized:
            want = _expected(one, two, home, q.name, q.name + "_scale")
            assert q.planes is not None
            assert list(q.planes) == want and q.planes == want
            assert [q.planes[i] for i in range(-4, 4)] == want + want
            assert q.planes[1:3] == want[1:3]
            assert plane_bytes(q.planes) == [OUT * IN, 4 * OUT, 0, 0]
            assert q.refs() == want + [None]
            assert isinstance(q.planes, Sequence) and len(q.planes) == 4
            assert list(reversed(q.planes)) == want[::-1]
            assert want[1] in q.planes and q.planes.index(None) == 2
            assert q.planes.count(None) == 2
            lazy += isinstance(q.planes, conventions.PlanPlanes)
            seen += 1
    assert seen == 12
    # the straddling module's data is in the first shard, its scale in the second
    straddler = {q.name: q for q in arts[one].quantized}["model.layers.6.mlp.down_proj.weight"]
    assert straddler.planes is not None and straddler.planes[1] is not None
    assert straddler.planes[1].file == str(two)
    if planned:
        # all but the first module of each shard's signature are replayed
        assert lazy >= 9
    else:
        assert lazy == 0


def test_localised_planes_are_new_and_name_no_file_in_their_shard(tmp_path: Path) -> None:
    """``PlaneSeq.localised(home)``: the same planes, those stored in ``home``
    without a file reference; new planes, the ones asked leave as they were.
    Expectations from the headers (``_expected``)."""
    one, two = _model(tmp_path)
    arts = {Path(a.abs_path): a for a in scan([str(tmp_path)]).artifacts}
    planes = None
    for q in arts[one].quantized:
        if q.name == "model.layers.6.mlp.down_proj.weight":
            planes = q.planes
    assert isinstance(planes, conventions.PlanPlanes)
    data, scale = "model.layers.6.mlp.down_proj.weight", "model.layers.6.mlp.down_proj.weight_scale"
    in_one = _expected(one, two, one, data, scale)
    assert list(planes) == in_one  # the scale names the second shard
    # seen from the second shard: the data names the first, the scale no file
    moved = planes.localised(str(two))
    assert isinstance(moved, conventions.PlanPlanes) and moved is not planes
    assert list(moved) == _expected(one, two, two, data, scale)
    assert list(planes) == in_one  # unchanged
    # and back: what was asked of the first again
    assert list(moved.localised(str(one))) == in_one
    assert planes.localised(str(one)) is planes  # already its shard's
