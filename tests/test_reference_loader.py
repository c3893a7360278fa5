"""grit's safetensors parser held to the reference loader, the official
``safetensors`` library (``safe_open`` reads the header only), and the
reader's record of the library's verdict on files grit finds broken.

The oracle is the library itself: every generated file is opened by
``safe_open`` directly, and grit's verdict must agree, except where grit is
deliberately stricter (duplicate keys: the library keeps the last one, which
hides a tensor; docs/reliability.md)."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors import safe_open

from grit_scan.issues import IssueCode
from grit_scan.parsers.readers import read_safetensors

WIDTH = {"F32": 32, "F16": 16, "BF16": 16, "I8": 8, "U8": 8, "I32": 32, "I64": 64,
         "F8_E4M3": 8, "F8_E5M2": 8, "F64": 64, "BOOL": 8}
BROKEN = {IssueCode.UNPARSEABLE, IssueCode.BAD_OFFSETS, IssueCode.BAD_TENSOR,
          IssueCode.TRUNCATED, IssueCode.DUPLICATE}


def _library_opens(path: Path) -> tuple[bool, str]:
    try:
        with safe_open(str(path), framework="numpy"):
            return True, ""
    except Exception as exc:  # noqa: BLE001 - the library's refusal, whatever its type
        return False, str(exc)


def _grit_reads(path: Path) -> tuple[bool, list[IssueCode]]:
    art = read_safetensors(str(path), path.name)
    codes = [i.code for i in art.issues]
    return art.parsed and not BROKEN.intersection(codes), codes


def _write(path: Path, header: bytes, data_len: int) -> Path:
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * data_len)
    return path


@st.composite
def files(draw: st.DrawFn) -> tuple[bytes, int]:
    """A header and a data length: a well-formed file, then one perturbation."""
    entries: dict[str, object] = {}
    off = 0
    for i in range(draw(st.integers(0, 4))):
        dt = draw(st.sampled_from(sorted(WIDTH)))
        shape = draw(st.lists(st.integers(0, 6), max_size=3))
        numel = 1
        for s in shape:
            numel *= s
        n = numel * WIDTH[dt] // 8
        name = f"t{i}" + draw(st.sampled_from(["", "\u00e9", "\ud83d\ude00", "\ud800",
                                                "\udfff"]))
        entries[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    data_len = off
    names = [k for k in entries]
    change = draw(st.sampled_from(["none", "end", "length", "shape", "dtype", "shift",
                                   "metadata", "order", "negative", "float"]))
    if names:
        e = entries[draw(st.sampled_from(names))]
        assert isinstance(e, dict)
        if change == "end":
            e["data_offsets"][1] += draw(st.sampled_from([-1, 1]))
        elif change == "shape":
            e["shape"] = e["shape"] + [draw(st.integers(0, 3))]
        elif change == "dtype":
            e["dtype"] = draw(st.sampled_from(["f32", "X", "C64", "F8_E4M3FNUZ"]))
        elif change == "shift":
            e["data_offsets"] = [x + 1 for x in e["data_offsets"]]
            data_len += 1
        elif change == "negative":
            e["shape"] = [-1]
        elif change == "float":
            e["data_offsets"] = [float(x) for x in e["data_offsets"]]
    if change == "length":
        data_len = max(0, data_len + draw(st.sampled_from([-1, 1, 5])))
    elif change == "metadata":
        entries["__metadata__"] = {"format": draw(st.sampled_from(["pt", 1, None]))}
    elif change == "order" and len(names) > 1:
        entries = dict(reversed(list(entries.items())))
    header = json.dumps(entries).encode()  # ensure_ascii: surrogates as \u escapes
    header += b" " * draw(st.integers(0, 8))  # writers pad headers to 8 bytes
    return header, data_len


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(f=files())
def test_grit_agrees_with_the_library(tmp_path: Path, f: tuple[bytes, int]) -> None:
    path = _write(tmp_path / "m.safetensors", *f)
    lib_ok, why = _library_opens(path)
    grit_ok, codes = _grit_reads(path)
    assert grit_ok == lib_ok, (f, why, codes)


@pytest.mark.parametrize("header, data_len, lib_ok", [
    # the library keeps the last of two equal keys; grit refuses (a tensor is hidden)
    (b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
     b'"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1, True),
    (b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', 1, False),  # truncated
    (b'[1]', 0, False),  # not an object
    (b'\xef\xbb\xbf{}', 0, False),  # a byte-order mark
])
def test_verdict_on_files_grit_finds_broken(tmp_path: Path, header: bytes, data_len: int,
                                             lib_ok: bool) -> None:
    path = _write(tmp_path / "m.safetensors", header, data_len)
    opens, why = _library_opens(path)
    assert opens is lib_ok
    art = read_safetensors(str(path), path.name)
    assert BROKEN.intersection(i.code for i in art.issues)  # grit refuses each
    ref = [i for i in art.issues if i.code is IssueCode.REFERENCE]
    assert len(ref) == 1
    assert ref[0].detail["opens"] is opens
    assert ref[0].detail["error"] == " ".join(why.split())


def test_library_not_asked_about_a_sound_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.safetensors",
                  b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', 2)
    art = read_safetensors(str(path), path.name)
    assert not art.issues


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_library_reads_the_file_grit_opened(tmp_path: Path) -> None:
    """The library is handed grit's descriptor, never the path: a file
    swapped after grit opened it is not the one judged."""
    from grit_scan.parsers.fileio import SafeFile
    from grit_scan.parsers.reference import safetensors_verdict

    good = _write(tmp_path / "m.safetensors",
                  b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', 2)
    with SafeFile(str(good)) as f:
        os.rename(good, tmp_path / "old")
        _write(tmp_path / "m.safetensors",
               b'{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', 0)
        verdict = safetensors_verdict(f)
    assert verdict is not None and verdict.opens
    assert safetensors_verdict(object()) is None  # not a local file: not asked


FIX = Path(__file__).resolve().parent.parent / "fixtures" / "broken" / "reference-loader"


def _kinds(deep: bool, name: str) -> list[tuple[str, str]]:
    import grit_scan

    r = grit_scan.scan([str(FIX / name)], deep=deep, jobs=1)
    return [(f.kind, f.message) for f in r.findings]


def test_library_opens_a_file_grit_refuses() -> None:
    """GRIT402 in every scan: the library keeps the last of two entries."""
    for deep in (False, True):
        found = _kinds(deep, "duplicate-key.safetensors")
        assert [k for k, _ in found] == ["file_unparseable", "reference_opens"]
        assert "listed more than once" in found[1][1]  # grit's reason, quoted


def test_grit_refuses_a_lone_surrogate_as_the_library_does() -> None:
    opens, _ = _library_opens(FIX / "lone-surrogate.safetensors")
    assert not opens
    for deep in (False, True):
        (kind, msg), = _kinds(deep, "lone-surrogate.safetensors")
        assert kind == "file_unparseable" and "lone surrogate" in msg


def test_library_refuses_a_file_grit_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """GRIT110 under --deep only. grit's parser is made to miss the lone
    surrogate (as it did before it checked for one): the library, asked
    about every local file under --deep, still catches it, and its own
    message is quoted."""
    from grit_scan.parsers import safetensors_reader

    monkeypatch.setattr(safetensors_reader, "_lone_surrogate", lambda obj: None)
    assert _kinds(False, "lone-surrogate.safetensors") == []
    (kind, msg), = _kinds(True, "lone-surrogate.safetensors")
    assert kind == "reference_refuses"
    opens, why = _library_opens(FIX / "lone-surrogate.safetensors")
    assert not opens and " ".join(why.split()) in msg


def test_exit_codes() -> None:
    from grit_scan.cli import main

    assert main(["scan", "--deep", str(FIX / "lone-surrogate.safetensors")]) == 4  # unreadable
    assert main(["scan", str(FIX / "duplicate-key.safetensors")]) == 1
    assert main(["scan", "--deep", "--ignore", "GRIT1", str(FIX)]) == 0  # info only
