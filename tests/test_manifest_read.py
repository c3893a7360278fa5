"""Issue 15: a grit-manifest.json of 25,000 entries is parsed by the standard
library's json and its entries are read a file at a time with C-level
passes (parsers/manifest.py ``_tensors``).  What it reads must be what
json.loads and the entry-by-entry reader give, whatever is wrong with an
entry, and the manifest written by ``grit manifest`` for a real producer's
sharded model must take the fast paths."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grit_scan.api import write_manifest
from grit_scan.artifact import ArtifactDraft, Format
from grit_scan.collector import paused
from grit_scan.parsers import configs, manifest

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "fixtures" / "producers" / "ct" / "fp8-dynamic-sharded"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """compressed-tensors' sharded FP8 model and the manifest grit writes for it."""
    root = tmp_path_factory.mktemp("m") / "model"
    shutil.copytree(MODEL, root)
    out = root / "grit-manifest.json"
    write_manifest([str(root)], out, allow_findings=True)
    return out, json.loads(out.read_text())


def test_the_written_manifest_reads_as_json_loads(written: tuple[Path, dict[str, Any]]
                                                  ) -> None:
    out, doc = written
    assert json.loads(out.read_bytes()) == doc
    art = ArtifactDraft(path=str(out), abs_path=str(out), format=Format.MANIFEST)
    assert configs.read_json(str(out), art) == doc and not art.issues


def _read(path: Path) -> tuple[list[Any], list[tuple[str, str]]]:
    with paused():
        art, _listed = manifest.read_manifest(str(path), str(path), "")
    return list(art.quantized.build()), [(str(i.code), i.message) for i in art.issues]


BREAKS = st.sampled_from([None, "desc", "desc-type", "desc-list", "shape", "shape-float",
                          "shape-neg", "shape-nested", "shape-missing", "gid", "gid-missing",
                          "gid-object", "digest", "digest-bad", "not-object", "bool"])


def _spoil(tensors: dict[str, Any], name: str, ent: dict[str, Any], how: str | None) -> None:
    """Spoil manifest entry ``name`` (``ent``, of ``tensors``) as ``how`` says."""
    if how == "desc":
        ent["desc"] = "zz" + ent["desc"][2:]
    elif how == "desc-type":
        ent["desc"] = 7
    elif how == "desc-list":  # unhashable where a text belongs
        ent["desc"] = [ent["desc"]]
    elif how == "shape-nested":
        ent["shape"] = [ent["shape"][:1]] + ent["shape"][1:]
    elif how == "shape-missing":
        ent.pop("shape", None)
    elif how == "gid-object":
        ent["gid"] = {"gid": ent.get("gid")}
    elif how == "shape":
        ent["shape"] = "4x4"
    elif how == "shape-float":
        ent["shape"] = [float(x) for x in ent["shape"]]
    elif how == "shape-neg":
        ent["shape"] = [-1] + ent["shape"][1:]
    elif how == "gid":
        ent["gid"] = "!!"
    elif how == "gid-missing":
        ent.pop("gid", None)
    elif how == "digest":
        ent["digest"] = "0123456789abcdef" * 2
    elif how == "digest-bad":
        ent["digest"] = "xyz"
    elif how == "not-object":
        tensors[name] = [1]
    elif how == "bool":
        ent["shape"] = [True] + ent["shape"][1:]


def _read_both_ways(doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                    ) -> tuple[list[Any], list[tuple[str, str]]]:
    """``doc`` written as a manifest and read: what the file-at-a-time reader
    gives, asserted equal to what the entry-by-entry reader gives."""
    path = tmp_path / "grit-manifest.json"
    path.write_text(json.dumps(doc))
    fast = _read(path)
    with monkeypatch.context() as m:
        m.setattr(manifest, "_tensors", manifest._each)
        assert _read(path) == fast
    return fast


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(breaks=st.lists(BREAKS, min_size=1, max_size=12))
def test_entries_read_as_one_at_a_time(written: tuple[Path, dict[str, Any]], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       breaks: list[str | None]) -> None:
    """Entries spoilt in assorted ways: the file-at-a-time reader gives the
    QTensors and issues the entry-by-entry reader gives."""
    _out, doc = written
    doc = json.loads(json.dumps(doc))
    entries = [t for a in doc["artifacts"] for t in a["tensors"].items()]
    for k, how in enumerate(breaks):
        name, ent = entries[k % len(entries)]
        tensors = next(a["tensors"] for a in doc["artifacts"] if name in a["tensors"])
        _spoil(tensors, name, ent, how)
    _read_both_ways(doc, tmp_path, monkeypatch)


@pytest.mark.parametrize("how", [b for b in BREAKS.elements if b is not None])
def test_a_late_entry_spoilt_alone(written: tuple[Path, dict[str, Any]], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Only the last entry of a file with an earlier entry of its shape spoilt
    (so 2.0 meets an equal 2 when shapes are compared as distinct values):
    the reader gives what the entry-by-entry reader gives, which names it."""
    _out, doc = written
    doc = json.loads(json.dumps(doc))
    tensors = max((a["tensors"] for a in doc["artifacts"]), key=len)
    items = list(tensors.items())
    name, ent = next(items[j] for j in reversed(range(len(items)))
                     if items[j][1]["shape"] in [e["shape"] for _n, e in items[:j]])
    _spoil(tensors, name, ent, how)
    fast = _read_both_ways(doc, tmp_path, monkeypatch)
    if how not in ("digest", "bool", "gid-missing"):  # nothing wrong to name
        assert any(name in msg for _code, msg in fast[1]), fast[1]


def test_a_clean_manifest_takes_the_fast_path(written: tuple[Path, dict[str, Any]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """No file of the written manifest (one of them lists no tensor) is
    read entry by entry, and the QTensors are what the entry-by-entry
    reader makes."""
    out, doc = written
    calls: list[str] = []
    each = manifest._each

    def spy(art: ArtifactDraft, rel: str, *rest: Any) -> Any:
        calls.append(rel)
        return each(art, rel, *rest)

    monkeypatch.setattr(manifest, "_each", spy)
    fast = _read(out)
    assert calls == []
    monkeypatch.setattr(manifest, "_tensors", each)  # every file entry by entry
    assert _read(out) == fast and len(calls) == 0
    assert len(fast[0]) == sum(len(a["tensors"]) for a in doc["artifacts"]) > 0


def test_no_rule_keys_a_manifest_record(written: tuple[Path, dict[str, Any]]) -> None:
    """support.positions and grit_check skip a manifest's records without
    grouping them: no key function of the rules that group by kin gives a
    record a key, and none is judged (asked here record by record, the
    long way, on the written manifest and the fixture's)."""
    from grit_scan.rules import support
    from grit_scan.rules.kinds import inferred_descriptor, note_assumed, unregistered_grade

    out, _doc = written
    fixture = ROOT / "fixtures" / "broken" / "manifest-changed" / "grit-manifest.json"
    for path in (out, fixture):
        records = _read(path)[0]
        assert records
        for q in records:
            assert not support.judged(q)
            assert unregistered_grade._unregistered(q) == ()
            assert note_assumed._assumed(q) == ()
            assert inferred_descriptor._inferred(q) == ()


def test_resolved_paths_are_realpath(tmp_path: Path) -> None:
    """``manifest._resolved`` gives what os.path.realpath gives for each
    listed path, through a symlinked base, for symlinked, nested, missing,
    dotted and parent names alike."""
    import os

    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "a.safetensors").write_bytes(b"x")
    (real / "sub" / "b.safetensors").write_bytes(b"x")
    (tmp_path / "elsewhere.safetensors").write_bytes(b"x")
    os.symlink(tmp_path / "elsewhere.safetensors", real / "link.safetensors")
    os.symlink(real / "sub", real / "linkdir")
    base = tmp_path / "via"
    os.symlink(real, base)
    rels = ["a.safetensors", "link.safetensors", "sub/b.safetensors", "linkdir/b.safetensors",
            "gone.safetensors", ".", "..", "a.b.c", "sub"]
    got = manifest._resolved(str(base), rels)
    assert got == {r: os.path.realpath(os.path.join(str(base), r)) for r in rels}
    assert got["link.safetensors"] == str((tmp_path / "elsewhere.safetensors").resolve())
    assert got["a.safetensors"] == str(real.resolve() / "a.safetensors")


def _findings(path: Path) -> list[tuple[str, str, str, str]]:
    import grit_scan

    r = grit_scan.scan([str(path)], jobs=1)
    return [(str(f.kind), f.path, f.message,
             json.dumps(dict(f.detail), sort_keys=True, default=str)) for f in r.findings]


def test_gid_check_reads_columns_as_it_reads_objects(written: tuple[Path, dict[str, Any]],
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest read as columns (artifact.Recorded) is checked against its
    files without making an entry that agrees: only the entries whose gid
    changed or whose tensor is gone are made, and the findings are those of
    the same manifest read entry by entry (QTensor objects)."""
    from grit_scan.artifact import Recorded
    from grit_scan.codec import base32

    out, doc = written
    root = tmp_path / "model"
    shutil.copytree(out.parent, root)
    doc = json.loads(json.dumps(doc))
    entries = [t for a in doc["artifacts"] for t in a["tensors"].values()]
    assert len(entries) >= 4
    # two gids changed to another valid gid, one other tensor renamed (gone)
    for ent in entries[1:3]:
        raw = base32.decode(ent["gid"])
        ent["gid"] = base32.encode(bytes(b ^ 0xFF for b in raw))
    tensors = next(a["tensors"] for a in doc["artifacts"] if a["tensors"])
    first = next(iter(tensors))
    tensors[first + ".gone"] = tensors.pop(first)
    man = root / "grit-manifest.json"
    man.write_text(json.dumps(doc))

    made: list[int] = []
    make = Recorded.make

    def spy(self: Recorded, g: int, home: str | None, role: str | None = None) -> Any:
        made.append(g)
        return make(self, g, home, role)

    monkeypatch.setattr(Recorded, "make", spy)
    columns = _findings(man)
    kinds = [k for k, *_ in columns]
    assert kinds.count("gid_disagreement") == 3, columns  # two changed, one gone
    assert 3 <= len(made) < len(entries)  # the three, and any reader's first asks
    # entry by entry (QTensor objects, as a manifest with a malformed entry
    # is read): the same findings
    monkeypatch.setattr(manifest, "_tensors", manifest._each)
    assert _findings(man) == columns


def test_records_out_of_order_are_read_as_objects(written: tuple[Path, dict[str, Any]]
                                                  ) -> None:
    """Recorded.entries gives the columns only as the reader adds them: a
    list sliced, reordered or edited gives None, and Recorded.of, which the
    gid check and the digest join read, refuses it (it no longer says which
    file an entry is from).  Entries read one by one (Recorded.of_entries)
    are given back as the objects themselves, equal to those made from the
    columns."""
    from grit_scan.artifact import QList, Recorded

    out, _doc = written
    with paused():
        art, _l = manifest.read_manifest(str(out), str(out), "")
    q = art.quantized.build()
    recs = Recorded.entries(q)
    assert recs is not None and sum(map(len, recs)) == len(q) > 1
    assert Recorded.of(q) == recs
    want = [(r.rel, r.names_, r.gids) for r in recs]
    assert Recorded.entries(q[1:]) is None
    assert Recorded.entries(q[::-1]) is None
    objects = list(q)
    q = QList(objects)  # made again as objects
    assert Recorded.entries(q) is None
    with pytest.raises(ValueError):
        Recorded.of(q)
    start = 0
    runs = []
    for r in recs:
        runs.append(Recorded.of_entries(r.rel, objects[start:start + len(r)]))
        start += len(r)
    assert [r.entry(j) for r in runs for j in range(len(r))] == objects
    assert all(r.entry(j) is objects[k] for k, (r, j) in enumerate(
        (r, j) for r in runs for j in range(len(r))))
    assert [r.make(j, None) for r in recs for j in range(len(r))] == objects
    got = [(r.rel, r.names_, r.gids) for r in runs]
    assert got == want


def test_a_recorded_digest_reaches_the_deep_scan(tmp_path: Path) -> None:
    # The digests a manifest written with --deep records travel to the files'
    # tensors (manifest.attach_expected): an untouched model verifies clean,
    # and one recorded digest changed in the manifest is one digest_mismatch
    # on that tensor, reporting the recorded value.
    import grit_scan

    root = tmp_path / "model"
    shutil.copytree(ROOT / "fixtures" / "conventions" / "gpt-oss-mxfp4", root)
    out = root / "grit-manifest.json"
    write_manifest([str(root)], out, deep=True, allow_findings=True)
    kinds = [f.kind.value for f in grit_scan.scan([str(root)], deep=True).findings]
    assert "digest_mismatch" not in kinds
    doc = json.loads(out.read_text())
    name, ent = sorted(doc["artifacts"][0]["tensors"].items())[0]
    ent["digest"] = "0" * 32
    out.write_text(json.dumps(doc))
    bad = [f for f in grit_scan.scan([str(root)], deep=True).findings
           if f.kind.value == "digest_mismatch"]
    assert len(bad) == 1 and bad[0].tensor == name
    assert bad[0].detail["expected"] == "0" * 32
