"""A shard of an index's set that the index maps no tensor to.

transformers loads a sharded checkpoint by its index (``get_checkpoint_shard_files``
in transformers/utils/hub.py): the files it reads are
the weight_map's values, nothing else.  A file named as one of the index's
shards (``model-00002-of-00002.safetensors`` beside
``model.safetensors.index.json``) that the index never names is never
loaded: its tensors are missing from every model built from the index.  The
gate says so (index_inconsistency, structural), and only for files of the
index's own set: another base name, or a shard count no named shard has (a
stale file of an earlier sharding), is not the index's concern."""

import json
from pathlib import Path

from grit_scan import scan
from grit_scan.cli import main
from grit_scan.writers import Raw, write_safetensors


def _shard(root: Path, name: str, n: int) -> None:
    """A shard of ``n`` tensors named after the file (``<file>.<i>.weight``)."""
    stem = name.removesuffix(".safetensors")
    write_safetensors(root / name, {f"{stem}.{i}.weight": Raw("F16", [2], bytes(4))
                                    for i in range(n)})


def _names(name: str, n: int) -> dict[str, str]:
    """The weight_map entries of ``_shard(root, name, n)``."""
    stem = name.removesuffix(".safetensors")
    return {f"{stem}.{i}.weight": name for i in range(n)}


def _index(root: Path, weight_map: dict[str, str], name: str = "model") -> None:
    (root / f"{name}.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": weight_map}))


def _found(root: Path) -> list[tuple[str, str, str]]:
    return [(f.kind.value, f.severity.value, f.message) for f in scan([str(root)]).findings]


def _unindexed(name: str, count: int) -> tuple[str, str, str]:
    return ("index_inconsistency", "structural",
            f"'{name}' is a shard of this index's set by its name, but the index maps no "
            f"tensor to it: loaders that go by the index never load it ({count} tensor(s))")


ONE, TWO = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def test_a_shard_the_index_never_names_is_never_loaded(tmp_path: Path) -> None:
    _shard(tmp_path, ONE, 2)
    _shard(tmp_path, TWO, 3)
    _index(tmp_path, _names(ONE, 2))
    assert _found(tmp_path) == [_unindexed(TWO, 3)]
    assert main(["scan", "--exit-policy", "simple", str(tmp_path)]) == 1
    # named, the set is whole: nothing to say
    _index(tmp_path, _names(ONE, 2) | _names(TWO, 3))
    assert _found(tmp_path) == []


def test_an_empty_weight_map_loads_nothing(tmp_path: Path) -> None:
    _shard(tmp_path, ONE, 2)
    _shard(tmp_path, TWO, 1)
    _index(tmp_path, {})
    assert _found(tmp_path) == [_unindexed(ONE, 2), _unindexed(TWO, 1)]


def test_files_of_another_set_are_not_the_indexs_concern(tmp_path: Path) -> None:
    _shard(tmp_path, ONE, 1)
    _shard(tmp_path, TWO, 1)
    _index(tmp_path, _names(ONE, 1) | _names(TWO, 1))
    # a stale shard of an earlier sharding, another model's shards, a
    # consolidated file: none is of this index's set
    _shard(tmp_path, "model-00001-of-00003.safetensors", 1)
    _shard(tmp_path, "other-00001-of-00002.safetensors", 1)
    _shard(tmp_path, "consolidated.safetensors", 1)
    assert _found(tmp_path) == []


def test_two_indexes_each_judge_their_own_set(tmp_path: Path) -> None:
    cons = "consolidated-00001-of-00001.safetensors"
    _shard(tmp_path, ONE, 1)
    _shard(tmp_path, TWO, 1)
    _shard(tmp_path, cons, 1)
    _index(tmp_path, _names(ONE, 1))
    _index(tmp_path, _names(cons, 1), "consolidated")
    assert _found(tmp_path) == [_unindexed(TWO, 1)]


def test_an_index_naming_no_shard_of_its_base_leaves_every_one_unloaded(
        tmp_path: Path) -> None:
    """The index names only files of another form: every file of its own
    base's shard form is unloaded, whatever its shard count."""
    other = "weights-00001-of-00003.safetensors"
    _shard(tmp_path, other, 1)
    _shard(tmp_path, ONE, 1)
    _index(tmp_path, _names(other, 1))
    assert [f for f in _found(tmp_path) if f[0] == "index_inconsistency"] == [
        _unindexed(ONE, 1)]


def test_an_index_without_a_metadata_object_does_not_load_in_transformers(
        tmp_path: Path) -> None:
    """transformers' get_checkpoint_shard_files reads ``index["metadata"]``
    and adds keys to it: no such key is a KeyError, a null or a list a
    TypeError.  An object, empty or not, loads."""
    _shard(tmp_path, ONE, 1)
    _shard(tmp_path, TWO, 1)
    wm = _names(ONE, 1) | _names(TWO, 1)
    p = tmp_path / "model.safetensors.index.json"
    p.write_text(json.dumps({"weight_map": wm}))
    assert _found(tmp_path) == [(
        "index_inconsistency", "structural",
        "the index has no metadata object: transformers' loader reads index[\"metadata\"] "
        "(get_checkpoint_shard_files) and fails with KeyError")]
    for bad in (None, [], "x"):
        p.write_text(json.dumps({"metadata": bad, "weight_map": wm}))
        assert _found(tmp_path) == [(
            "index_inconsistency", "structural",
            "the index's metadata is not an object: transformers' loader adds its keys to it "
            "(get_checkpoint_shard_files) and fails")], bad
    for good in ({}, {"total_size": 8}):
        p.write_text(json.dumps({"metadata": good, "weight_map": wm}))
        assert _found(tmp_path) == [], good
