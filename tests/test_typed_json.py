"""The typed decodes of long headers and indexes (parsers/safetensors_json.py)
against the plain paths they stand in for: where a typed decode gives a
result it is the plain path's, and every text it must not judge (a
duplicate, an unknown field, a value of another type, an invalid layout)
goes to the plain path.  The random headers of tests/test_readers.py run
the three header paths too."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_readers import read_header_by

from grit_scan.artifact import ArtifactDraft, Format
from grit_scan.parsers import configs, index, json_text
from grit_scan.parsers import safetensors_reader as sr


def _file(header: str, data: int) -> bytes:
    raw = header.encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(data)


def _typed(data: bytes) -> sr.Header | None:
    (n,) = struct.unpack("<Q", data[:8])
    return sr._typed_path(data[8:8 + n].decode(), n, len(data) - 8 - n)


def test_a_header_the_safetensors_library_wrote_takes_the_typed_path(tmp_path) -> None:
    """A header written by the safetensors library (with metadata, scalars,
    empty tensors and several dtypes) is decoded by the typed path, and the
    header is the one the hook path reads."""
    from safetensors.numpy import save_file

    arrays = {"b.weight": np.zeros((3, 5), np.float16), "a.scale": np.zeros((), np.float32),
              "c.empty": np.zeros((0, 4), np.uint8), "d.codes": np.zeros((7,), np.int32)}
    path = tmp_path / "x.safetensors"
    save_file(arrays, str(path), metadata={"format": "pt", "producer": "test"})
    data = path.read_bytes()
    got = _typed(data)
    assert got is not None and got.metadata == {"format": "pt", "producer": "test"}
    assert got.table is not None and sorted(got.table.names) == sorted(arrays)
    want = read_header_by(data, "hook")
    assert read_header_by(data, "typed") == want
    assert want[0] == list(got.table)


_ENTRY = '"dtype":"U8","shape":[1],"data_offsets":[0,1]'


def _e(header: str) -> str:
    """``header`` with each @ a valid one-byte entry."""
    return header.replace("@", _ENTRY)


@pytest.mark.parametrize(("header", "data", "typed"), [
    (_e('{"a":{@}}'), 1, True),
    (_e('{"__metadata__":{"dtype":"U8"},"a":{@}}'), 1, True),  # metadata keys are any
    # an unknown field beside a missing one: as many strings as a valid entry
    ('{"a":{"dtype":"U8","shape":[1],"xx":[0,1]}}', 1, False),
    ('{"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1, False),
    (_e('{"a":{@},"a":{@}}'), 1, False),
    (_e('{"a":{@,"x":7}}'), 1, False),
    (_e('{"__metadata__":{"x":1},"a":{@}}'), 1, False),
    (_e('{"__metadata__":{"format":"pt"},"__metadata__":{},"a":{@}}'), 1, False),
    ('{"a":{"dtype":"U8","shape":null,"data_offsets":[0,1]}}', 1, False),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":null}}', 1, False),
    ('{"a":{"dtype":null,"shape":[1],"data_offsets":[0,1]}}', 1, False),
    ('{"a":{"dtype":"X9","shape":[1],"data_offsets":[0,1]}}', 1, False),
    ('{"a":{"dtype":"U8","shape":[true],"data_offsets":[0,1]}}', 1, False),
    ('{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}', 1, False),
    ('{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}', 1, False),
    ('{"a":{"dtype":"U8","shape":[18446744073709551616,0],"data_offsets":[0,0]}}', 0, False),
    # an extent past int64 (the table's columns): the plain path judges it
    ('{"a":{"dtype":"U8","shape":[9223372036854775808,0],"data_offsets":[0,0]}}', 0, False),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}', 1, False),
    ('{"a":"x"}', 0, False),
    ('{"__metadata__":{"format":"pt"}}', 0, False),
    ('{}', 0, False),
    (_e('{"a":{@},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}'), 3, False),
    (_e('{"a":{@}}'), 2, False),  # trailing bytes
    ('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,1]}}', 1, False),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} ', 1, True),  # whitespace
])
def test_the_typed_header_path_takes_only_what_the_plain_path_accepts(
        header: str, data: int, typed: bool) -> None:
    """Each header is read as the hook path reads it; the typed decode gives
    a header only for the exactly valid ones, and sends the others (a
    duplicate at any depth, an unknown or missing field, a value of another
    type, a budget exceeded, a layout that does not tile) to the plain path."""
    raw = _file(header, data)
    assert (_typed(raw) is not None) is typed
    assert read_header_by(raw, "typed") == read_header_by(raw, "hook")


# ------------------------------------------------------------------- the index

_SHARDS = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
_NAMED = st.sampled_from([*_SHARDS, "gone.safetensors", "../x.safetensors"])
_VALUES = st.one_of(_NAMED.map(json.dumps), st.sampled_from(["1", "null", '["a"]', "true"]))
_METADATA = st.sampled_from([None, "null", '{"total_size": 16}', '{"total_size": "x"}', '"m"',
                             '{"total_size": 1e400}', '{"total_size": NaN}', "[]"])


@st.composite
def _indexes(draw: st.DrawFn) -> str:
    """Index texts written by hand: keys that repeat (in the map and at the
    top), values of every type, shards that are not here, metadata of any
    kind, and a weight_map that is not a map."""
    members = []
    meta = draw(_METADATA)
    if meta is not None:
        members.append(f'"metadata": {meta}')
    for _ in range(draw(st.integers(1, 2))):
        if draw(st.booleans()):
            entries = [f'"t{draw(st.integers(0, 5))}.weight": {draw(_VALUES)}'
                       for _ in range(draw(st.integers(0, 6)))]
            members.append('"weight_map": {' + ", ".join(entries) + "}")
        else:
            members.append(f'"weight_map": {draw(_VALUES)}')
    members = draw(st.permutations(members))
    return "{" + ", ".join(members) + "}"


def _parsed(obj: object) -> tuple[object, ...]:
    art = ArtifactDraft(path="i", abs_path="i", format=Format.INDEX)
    wm = index.parse_index(obj, art)
    return (wm, list(wm or ()), art.metadata, art.parsed,
            [(i.code, i.message) for i in art.issues])


def _plain(text: str) -> object:
    try:
        return index.share_shard_names(configs.loads_json(text))
    except ValueError as exc:
        return ("error", type(exc).__name__)


def _by_json_loads(text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(json_text, "FAST_FROM", 0)
    try:
        return index.json_loads(_SHARDS)(text)
    except ValueError as exc:
        return ("error", type(exc).__name__)


@settings(max_examples=400, deadline=None)
@given(_indexes())
def test_an_index_parses_as_the_plain_path_parses_it(text: str) -> None:
    """index.json_loads (the typed decode first) gives what the standard
    library's parse with shared shard names gives, to parse_index: the same
    weight_map in the same order, metadata, issues and refusals."""
    with pytest.MonkeyPatch.context() as m:
        got = _by_json_loads(text, m)
    want = _plain(text)
    if isinstance(want, tuple):
        assert got == want
        return
    assert _parsed(got) == _parsed(want)


def test_a_long_index_is_decoded_typed_with_one_string_per_shard(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A well-formed index of shards that are here takes the typed decode,
    whose values are one string per shard; a shard that is not here sends it
    to the plain parse (which reports it missing)."""
    from grit_scan.parsers import safetensors_json

    wm = {f"m.{i}.weight": _SHARDS[i % 2] for i in range(3000)}
    text = json.dumps({"metadata": {"total_size": 6000}, "weight_map": wm})
    assert len(text) >= json_text.FAST_FROM
    got = safetensors_json.decode_index(text, tuple(_SHARDS))
    assert got == json.loads(text) and list(got["weight_map"]) == list(wm)
    assert len({id(v) for v in got["weight_map"].values()}) == 2
    real = safetensors_json.decode_index
    calls: list[object] = []

    def spy(t: str, s: tuple[str, ...]) -> object:
        calls.append(got := real(t, s))
        return got

    monkeypatch.setattr(safetensors_json, "decode_index", spy)
    assert index.json_loads(_SHARDS)(text) == got and calls == [got]
    wm["m.7.weight"] = "gone.safetensors"
    text = json.dumps({"weight_map": wm})
    plain = index.json_loads(_SHARDS)(text)
    assert _parsed(plain) == _parsed(json.loads(text)) and calls[1:] == [None]
    assert len({id(v) for v in plain["weight_map"].values()}) == 3  # shared there too
    many = [*_SHARDS, *(f"f{i}" for i in range(index.TYPED_SHARDS - 2))]
    index.json_loads(many)(json.dumps({"weight_map": {k: _SHARDS[0] for k in wm}}))
    assert len(calls) == 3 and calls[2] is not None  # as many files as may be typed
    index.json_loads([f"f{i}" for i in range(index.TYPED_SHARDS + 1)])(text)
    index.json_loads([])(text)
    index.json_loads(_SHARDS)(json.dumps({"weight_map": {"a": _SHARDS[0]}}))
    assert len(calls) == 3  # too many files to type, none, or a short text


def test_the_typed_header_decode_leaves_constants_to_the_plain_path() -> None:
    """A header msgspec cannot decode (NaN) is left to the plain path, which
    refuses it as the hook path does."""
    raw = _file('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,NaN]}}', 1)
    assert _typed(raw) is None
    assert read_header_by(raw, "typed") == read_header_by(raw, "hook")
    assert read_header_by(raw, "hook")[0] == "error"


def test_a_file_name_that_is_not_text_leaves_the_index_to_its_paths(tmp_path) -> None:
    """A directory holding a file whose name is not UTF-8 (held as a lone
    surrogate) beside its shards: the typed decode leaves that name out of
    its type (it would fail to build), so a long index of the other shards
    is still decoded typed, and a value naming the odd file (an escaped
    surrogate) goes to the plain parse, which matches it."""
    from grit_scan.parsers import safetensors_json

    odd = "bad\udcff.safetensors"
    files = [*_SHARDS, odd]
    wm = {f"m.{i}.weight": _SHARDS[i % 2] for i in range(3000)}
    text = json.dumps({"weight_map": wm})
    assert safetensors_json.decode_index(text, tuple(files)) == json.loads(text)
    assert safetensors_json.decode_index(text, (odd,)) is None
    wm["m.0.weight"] = odd
    text = json.dumps({"weight_map": wm})  # "bad\udcff...": an escape
    assert safetensors_json.decode_index(text, tuple(files)) is None
    got = index.json_loads(files)(text)
    assert got == json.loads(text) and got["weight_map"]["m.0.weight"] == odd


def test_deep_nesting_in_a_long_header_is_the_plain_paths_refusal() -> None:
    """An unknown field nested 100,000 deep in a header past the typed
    decode's threshold: refused as the hook path refuses it, no crash."""
    deep = "[" * 100_000 + "]" * 100_000
    for header in (_e('{"a":{@,"x":DEEP}}'), '{"__metadata__":{"format":"pt"},"a":DEEP}'):
        header = header.replace("DEEP", deep)
        raw = _file(header, 1)
        assert len(raw) > json_text.FAST_FROM and _typed(raw) is None
        assert read_header_by(raw, "typed") == read_header_by(raw, "hook")


def test_a_scan_beside_a_file_name_that_is_not_text_finds_nothing(tmp_path) -> None:
    """The scan of a well-formed two-shard model with a long index, in a
    directory that also holds a file whose name is not UTF-8: no finding
    (the typed index decode once raised on that name, and the index was
    reported as invalid JSON)."""
    import os

    from safetensors.numpy import save_file

    from grit_scan.api import scan

    wm = {}
    for s in (1, 2):
        arrays = {f"m.{s}.{i}.weight": np.zeros((2,), np.float16) for i in range(1500)}
        name = f"model-0000{s}-of-00002.safetensors"
        save_file(arrays, str(tmp_path / name))
        wm.update(dict.fromkeys(arrays, name))
    text = json.dumps({"metadata": {"total_size": 12000}, "weight_map": wm})
    assert len(text) > json_text.FAST_FROM
    (tmp_path / "model.safetensors.index.json").write_text(text)
    (tmp_path / os.fsdecode(b"odd\xff.txt")).write_text("x")
    got = scan([str(tmp_path)])
    assert [f.message for f in got.findings] == []
    assert {a.format for a in got.artifacts} >= {"index", "safetensors"}
