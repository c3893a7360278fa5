"""A model's conventions are inferred over its shards' columns one after the
other (parsers/models.py, conventions.Columns; issue 15).  What each shard
gets must be what the shard layout says: a straddling module goes to the
shard of its data with a file reference for the rest, a name listed twice
counts in its first shard, and an issue goes to the shard of the tensor it
names (or of the first tensor under the module it names)."""

import json
from pathlib import Path

from grit_scan import scan
from grit_scan.writers import Raw, write_safetensors


def _write(root: Path) -> tuple[Path, Path]:
    one, two = root / "model-00001-of-00002.safetensors", root / "model-00002-of-00002.safetensors"
    write_safetensors(one, {
        "m.a.weight": Raw("U8", [4, 16], bytes(64)),          # NVFP4 data: [4, 32] logical
        "dup.weight": Raw("F16", [2], bytes(4)),
    })
    write_safetensors(two, {
        "m.a.weight_scale": Raw("F8_E4M3", [4, 2], bytes(8)),  # one per 16
        "m.a.weight_scale_2": Raw("F32", [1], bytes(4)),
        "dup.weight": Raw("F16", [2], bytes(4)),               # listed in both shards
        "m.c.weight": Raw("F8_E4M3", [4, 8], bytes(32)),
        "m.c.weight_scale": Raw("F32", [3], bytes(12)),        # fits no FP8 scale layout
    })
    index = {"metadata": {}, "weight_map": {
        "m.a.weight": one.name, "dup.weight": one.name, "m.a.weight_scale": two.name,
        "m.a.weight_scale_2": two.name, "m.c.weight": two.name, "m.c.weight_scale": two.name}}
    (root / "model.safetensors.index.json").write_text(json.dumps(index))
    return one, two


def test_shards_get_their_own_tensors_counts_and_issues(tmp_path: Path) -> None:
    one, two = _write(tmp_path)
    arts = {Path(a.abs_path).name: a for a in scan([str(tmp_path)]).artifacts}
    a1, a2 = arts[one.name], arts[two.name]

    assert [q.name for q in a1.quantized] == ["m.a.weight"] and a2.quantized == []
    q = a1.quantized[0]
    assert q.shape == (4, 32) and q.convention == "modelopt-nvfp4"
    planes = [(p.tensor, p.file) for p in q.planes if p is not None]
    assert planes == [("m.a.weight", None), ("m.a.weight_scale", str(two)),
                      ("m.a.weight_scale_2", str(two))]
    # the scales' offsets are their places in shard two's data section
    data2 = 8 + int.from_bytes(two.read_bytes()[:8], "little")
    assert [p.offset for p in q.planes[1:3]] == [data2, data2 + 8]

    assert a1.unquantized == {"F16": 1}
    assert a2.unquantized == {"F8_E4M3": 1, "F32": 1}  # dup.weight counts in shard one only

    notes2 = [(i.tensor, i.message) for i in a2.issues if i.code.value == "note"]
    assert [t for t, _ in notes2] == ["m.c", "m.c.weight"]
    assert "match no per-tensor, per-channel, per-group or block layout" in notes2[0][1]
    assert "has a scale beside it ('m.c.weight_scale') in a layout no convention" in notes2[1][1]
    assert not [i for i in a1.issues if i.code.value == "note"]


def test_an_issue_naming_a_module_goes_to_the_first_shard_listing_a_tensor_under_it(
        tmp_path: Path) -> None:
    """The rule: an issue naming a tensor goes to that tensor's shard; one
    naming a module (``m.d``) to the shard of the first tensor, in listing
    order, whose name starts ``m.d.``: here a tensor of a submodule in
    shard one, although the module's own tensors are in shard two."""
    one = tmp_path / "model-00001-of-00002.safetensors"
    two = tmp_path / "model-00002-of-00002.safetensors"
    write_safetensors(one, {"m.d.sub.weight": Raw("F16", [2], bytes(4)),
                            "m.dd.weight": Raw("F16", [2], bytes(4))})
    write_safetensors(two, {"m.d.weight": Raw("F8_E4M3", [4, 8], bytes(32)),
                            "m.d.weight_scale": Raw("F32", [3], bytes(12))})
    arts = {Path(a.abs_path).name: a for a in scan([str(tmp_path)]).artifacts}
    notes = {name: [i.tensor for i in arts[name].issues if i.code.value == "note"]
             for name in (one.name, two.name)}
    assert notes == {one.name: ["m.d"], two.name: ["m.d.weight"]}


def _fp8(m: str) -> dict[str, Raw]:
    return {m + ".weight": Raw("F8_E4M3", [4, 32], bytes(128)),
            m + ".weight_scale": Raw("F32", [4, 1], bytes(16))}


def _indexed_model(root: Path, base: str, layers: range) -> list[str]:
    """Two shards of FP8 modules under ``base``, and their index."""
    wm: dict[str, str] = {}
    names = []
    half = len(layers) // 2
    for k, part in enumerate((layers[:half], layers[half:])):
        name = f"{base}-0000{k + 1}-of-00002.safetensors"
        tensors: dict[str, Raw] = {}
        for layer in part:
            tensors |= _fp8(f"model.layers.{layer}.mlp.down_proj")
        write_safetensors(root / name, tensors)
        wm |= {n: name for n in tensors}
        names.append(name)
    (root / f"{base}.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": wm}))
    return names


def test_two_indexed_models_in_one_directory_are_two_models(tmp_path: Path) -> None:
    """consolidated.safetensors.index.json beside model.safetensors.index.json
    (Mistral-Large-Instruct-2407's two sets of shards, llama.cpp#8807): each
    index's shards are one model, and
    every FP8 module of both is described.  Both were keyed as the
    directory's one indexed model, and the first index's shards were left
    with nothing described."""
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    shards = _indexed_model(tmp_path, "consolidated", range(4)) + _indexed_model(
        tmp_path, "model", range(6))
    arts = {Path(a.abs_path).name: a for a in scan([str(tmp_path)]).artifacts}
    assert {s: len(arts[s].quantized) for s in shards} == {
        "consolidated-00001-of-00002.safetensors": 2, "consolidated-00002-of-00002.safetensors": 2,
        "model-00001-of-00002.safetensors": 3, "model-00002-of-00002.safetensors": 3}
    assert {arts[s].model for s in shards} == {
        str(tmp_path / "consolidated.safetensors.index.json"),
        str(tmp_path / "model.safetensors.index.json")}


def test_an_exact_index_spares_the_name_overlap_check(tmp_path: Path, monkeypatch) -> None:
    """An index that maps each of its shards' tensors to that shard, and
    nothing else, already says no name is in two shards (index.Indexed):
    parsers/models.py does not check again.  An index that is not exact
    leaves the check to be done."""
    from grit_scan.parsers import models

    calls: list[int] = []
    real = models._disjoint

    def spy(members):  # type: ignore[no-untyped-def]
        calls.append(len(members))
        return real(members)

    monkeypatch.setattr(models, "_disjoint", spy)
    _indexed_model(tmp_path, "model", range(4))
    got = scan([str(tmp_path)])
    assert calls == [] and sum(len(a.quantized) for a in got.artifacts) == 4
    # the index now misses a tensor: not exact, so the shards are checked
    ix = tmp_path / "model.safetensors.index.json"
    doc = json.loads(ix.read_text())
    del doc["weight_map"]["model.layers.0.mlp.down_proj.weight_scale"]
    ix.write_text(json.dumps(doc))
    got = scan([str(tmp_path)])
    assert calls == [2] and sum(len(a.quantized) for a in got.artifacts) == 4


def test_an_index_with_swapped_names_is_not_exact(tmp_path: Path) -> None:
    """Every shard is there and holds as many tensors as the index maps to
    it, but the index maps two tensors to each other's shard: both entries
    are reported (the counts alone would call the index exact)."""
    one, two = tmp_path / "model-00001-of-00002.safetensors", \
        tmp_path / "model-00002-of-00002.safetensors"
    write_safetensors(one, {"a.weight": Raw("F16", [2], bytes(4)),
                            "b.weight": Raw("F16", [2], bytes(4))})
    write_safetensors(two, {"c.weight": Raw("F16", [2], bytes(4)),
                            "d.weight": Raw("F16", [2], bytes(4))})
    wm = {"a.weight": one.name, "c.weight": one.name,  # c is in two
          "b.weight": two.name, "d.weight": two.name}  # b is in one
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": wm}))
    got = scan([str(tmp_path)])
    messages = sorted(f.message for f in got.findings if f.kind == "index_inconsistency")
    assert messages == [
        "the index maps 'b.weight' to 'model-00002-of-00002.safetensors', whose header does "
        "not have it",
        "the index maps 'c.weight' to 'model-00001-of-00002.safetensors', whose header does "
        "not have it"]


def test_an_index_shares_its_shard_names_and_is_otherwise_what_json_parsed() -> None:
    """An index's parsed weight_map keeps one string per distinct shard name
    (json.loads makes each value anew): the map equals json.loads' own, key
    for key in the same order, and equal names are one object; a map that
    is not of strings is left as parsed, for parse_index to report."""
    from grit_scan.parsers.index import share_shard_names

    text = json.dumps({"metadata": {"total_size": 8}, "weight_map": {
        f"m.{i}.weight": f"model-{i % 3 + 1:05d}-of-00003.safetensors" for i in range(30)}})
    got = share_shard_names(json.loads(text))
    want = json.loads(text)
    assert got == want and list(got["weight_map"]) == list(want["weight_map"])
    vals = list(got["weight_map"].values())
    assert len({id(v) for v in vals}) == len(set(vals)) == 3
    assert len({id(v) for v in want["weight_map"].values()}) == 30  # what json.loads gives
    odd = {"weight_map": {"a": ["x"], "b": "x"}}
    assert share_shard_names(json.loads(json.dumps(odd))) == odd
    assert share_shard_names([1]) == [1] and share_shard_names(None) is None


def test_an_index_mapping_a_tensor_to_no_file_name_says_which_and_fails(
        tmp_path: Path) -> None:
    """A weight_map value that is not a string: the index is not read (its
    other entries, an escape among them, are not trusted either), and the
    finding names the first such tensor and what JSON holds there, instead
    of saying the index has no weight_map."""
    from grit_scan.cli import main

    write_safetensors(tmp_path / "model.safetensors", {"a.weight": Raw("F16", [2], bytes(4))})
    cases = [(3.0, "a number"), (None, "null"), (True, "a boolean"), (["x"], "an array"),
             ({"f": "x"}, "an object"), (7, "a number")]
    for value, words in cases:
        (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
            "b.weight": "model.safetensors", "a.weight": value, "c.weight": "/etc/passwd"}}))
        rep = scan([str(tmp_path)])
        got = [(f.kind.value, f.severity.value, f.message) for f in rep.findings]
        assert got == [("file_unparseable", "structural",
                        f"the index's weight_map maps 'a.weight' to {words}, not to a shard "
                        "file name")], value
        assert main(["scan", "--exit-policy", "simple", str(tmp_path)]) == 1
    # a weight_map that is not an object is still said so
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": []}))
    assert [f.message for f in scan([str(tmp_path)]).findings] == [
        "the index has no weight_map of tensor -> shard names"]
