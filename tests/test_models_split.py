"""GGUF split sets (llama-gguf-split's ``split.no``, ``split.count``,
``split.tensors.count``; research: gguf-ggml-internals.md) read as one
model: a part missing, duplicated or out of range, counts that disagree.

The parts are written by gguf-py's own GGUFWriter; every expected name,
number and count follows from how the test built the set, never from the
scanner's output.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from gguf import GGUFWriter, LlamaFileType

from grit_scan.api import scan
from grit_scan.cli import main


def part(path, no, count, tensors, names, file_type=None):
    """One part: ``split.no`` = ``no`` (0-based, as llama-gguf-split writes
    it), F32 tensors ``names``; ``None`` leaves a key out."""
    w = GGUFWriter(str(path), arch="llama")
    if no is not None:
        w.add_uint16("split.no", no)
    if count is not None:
        w.add_uint16("split.count", count)
    if tensors is not None:
        w.add_int32("split.tensors.count", tensors)
    if file_type is not None:
        w.add_file_type(file_type)
    for n in names:
        w.add_tensor(n, np.zeros(8, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def name(k, n):
    return f"m-{k:05d}-of-{n:05d}.gguf"


def findings(root, kind):
    return [f for f in scan([root]).findings if f.kind.value == kind]


def split_findings(root):
    return sorted((f.kind.value, f.path.rsplit("/", 1)[-1], f.message)
                  for f in scan([root]).findings
                  if f.kind.value in ("missing_shard", "index_inconsistency"))


def test_a_complete_split_is_one_clean_model(tmp_path):
    for k in range(3):
        part(tmp_path / name(k + 1, 3), k, 3, 3, [f"t{k}.weight"])
    assert split_findings(tmp_path) == []


def test_a_missing_part_is_named_with_the_counts(tmp_path):
    part(tmp_path / name(1, 3), 0, 3, 3, ["a.weight"])
    part(tmp_path / name(3, 3), 2, 3, 3, ["c.weight"])
    got = findings(tmp_path, "missing_shard")
    assert len(got) == 1
    f = got[0]
    # reported on part 1 (split.no 0), naming part 2 of 3
    assert f.path.endswith(name(1, 3))
    assert f.message.startswith(f"split part {name(2, 3)} is missing")
    assert "has 3 part(s) (split.count) and 2 are here" in f.message
    # a missing part leaves the tensor count unchecked: it cannot add up
    assert findings(tmp_path, "index_inconsistency") == []


def test_every_missing_part_is_one_finding(tmp_path):
    part(tmp_path / name(2, 4), 1, 4, 4, ["b.weight"])
    got = sorted(f.message.split(" is missing")[0] for f in findings(tmp_path, "missing_shard"))
    assert got == [f"split part {name(k, 4)}" for k in (1, 3, 4)]
    # without part 1 the first part read speaks for the set
    assert {f.path.rsplit("/", 1)[-1] for f in findings(tmp_path, "missing_shard")} == {
        name(2, 4)}
    assert "has 4 part(s) (split.count) and 1 are here" in findings(
        tmp_path, "missing_shard")[0].message


def test_one_file_that_says_it_is_a_split(tmp_path):
    part(tmp_path / "lone.gguf", 0, 2, 2, ["a.weight"])
    got = findings(tmp_path, "missing_shard")
    assert len(got) == 1 and got[0].path.endswith("lone.gguf")
    assert got[0].message.startswith("split part lone-00002-of-00002.gguf is missing")
    assert "has 2 part(s) (split.count) and 1 are here" in got[0].message


@pytest.mark.parametrize("count", [0, None])
def test_no_usable_count_checks_nothing(tmp_path, count):
    part(tmp_path / name(1, 2), 0, count, None, ["a.weight"])
    part(tmp_path / name(2, 2), 1, count, None, ["b.weight"])
    assert split_findings(tmp_path) == []


def test_parts_that_disagree_on_the_count(tmp_path):
    part(tmp_path / name(1, 3), 0, 3, 3, ["a.weight"])
    part(tmp_path / name(2, 3), 1, 2, 3, ["b.weight"])
    got = split_findings(tmp_path)
    # one finding, and no part is called missing: which count would say so?
    assert got == [("index_inconsistency", name(1, 3),
                    "the parts of split m disagree on split.count: [2, 3]")]


def test_a_part_number_twice(tmp_path):
    part(tmp_path / name(1, 2), 0, 2, 2, ["a.weight"])
    part(tmp_path / name(2, 2), 0, 2, 2, ["b.weight"])
    got = split_findings(tmp_path)
    kinds = [g[0] for g in got]
    assert kinds.count("index_inconsistency") == 1 and kinds.count("missing_shard") == 1
    dup = next(g for g in got if g[0] == "index_inconsistency")[2]
    assert dup.startswith("split part 1 of m appears 2 times: ")
    assert name(1, 2) in dup and name(2, 2) in dup
    missing = next(g for g in got if g[0] == "missing_shard")[2]
    assert missing.startswith(f"split part {name(2, 2)} is missing")
    assert "has 2 part(s) (split.count) and 1 are here" in missing


def test_a_part_number_past_the_count(tmp_path):
    part(tmp_path / name(1, 2), 0, 2, 2, ["a.weight"])
    part(tmp_path / name(2, 2), 2, 2, 2, ["b.weight"])  # split.no 2 is a third part
    got = split_findings(tmp_path)
    out_of_range = [g for g in got if "says it is part" in g[2]]
    assert len(out_of_range) == 1
    assert out_of_range[0][0] == "index_inconsistency"
    assert out_of_range[0][2].endswith(f"{name(2, 2)} says it is part 3 of a 2-part split")
    # and part 2 (split.no 1) is missing
    assert [g[2].split(" is missing")[0] for g in got if g[0] == "missing_shard"] == [
        f"split part {name(2, 2)}"]


def test_the_last_part_number_is_in_range(tmp_path):
    # split.no n - 1 is the last part, not one past it
    part(tmp_path / name(1, 2), 0, 2, 2, ["a.weight"])
    part(tmp_path / name(2, 2), 1, 2, 2, ["b.weight"])
    assert split_findings(tmp_path) == []


@pytest.mark.parametrize("recorded", [2, 4])
def test_tensor_count_against_the_parts(tmp_path, recorded):
    part(tmp_path / name(1, 2), 0, 2, recorded, ["a.weight", "b.weight"])
    part(tmp_path / name(2, 2), 1, 2, recorded, ["c.weight"])
    got = split_findings(tmp_path)
    assert got == [("index_inconsistency", name(1, 2),
                    f"split m records {recorded:,} tensors (split.tensors.count) "
                    f"but its parts hold 3")]


def test_a_matching_tensor_count_is_clean(tmp_path):
    part(tmp_path / name(1, 2), 0, 2, 3, ["a.weight", "b.weight"])
    part(tmp_path / name(2, 2), 1, 2, 3, ["c.weight"])
    assert split_findings(tmp_path) == []


def test_two_splits_in_one_directory_are_two_models(tmp_path):
    for base in ("m", "n"):
        for k in range(2):
            part(tmp_path / f"{base}-{k + 1:05d}-of-00002.gguf", k, 2, 2, [f"t{k}.weight"])
    assert split_findings(tmp_path) == []


def test_part_one_file_type_governs_every_part(tmp_path, capsys):
    # llama-gguf-split writes general.file_type to part 1 only
    part(tmp_path / name(1, 3), 0, 3, 3, ["a.weight"], file_type=LlamaFileType.MOSTLY_Q4_K_M)
    part(tmp_path / name(2, 3), 1, 3, 3, ["b.weight"])
    part(tmp_path / name(3, 3), 2, 3, 3, ["c.weight"], file_type=LlamaFileType.MOSTLY_Q8_0)
    assert main(["show", "--json", str(tmp_path)]) in (0, None)
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc)
    files = {f["path"].rsplit("/", 1)[-1]: f for f in _files(doc)}
    assert set(files) == {name(k, 3) for k in (1, 2, 3)}, text
    assert "Q4_K_M" in json.dumps(files[name(2, 3)])  # taken from part 1
    assert "Q4_K_M" in json.dumps(files[name(1, 3)])
    assert "Q8_0" in json.dumps(files[name(3, 3)])  # its own stays
    assert "Q4_K_M" not in json.dumps(files[name(3, 3)])


def _files(doc):
    """Every object with a "path" in a `grit show --json` document."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            if isinstance(x.get("path"), str) and x["path"].endswith(".gguf"):
                out.append(x)
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return out


def test_a_one_part_split_still_has_its_tensor_count_checked(tmp_path):
    # split.count 1 is a usable count: the set is that one part
    part(tmp_path / name(1, 1), 0, 1, 5, ["a.weight", "b.weight"])
    assert split_findings(tmp_path) == [
        ("index_inconsistency", name(1, 1),
         "split m records 5 tensors (split.tensors.count) but its parts hold 2")]


def test_a_split_of_unreadable_parts_is_only_unreadable(tmp_path):
    for k in (1, 2):
        (tmp_path / name(k, 2)).write_bytes(b"GGUF" + bytes(20))  # a header cut short
    got = scan([tmp_path]).findings
    assert {f.path.rsplit("/", 1)[-1] for f in got} == {name(1, 2), name(2, 2)}
    assert {f.kind.value for f in got} == {"file_unparseable"}
