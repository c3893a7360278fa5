"""grit show: the inventory of every producer file, checked against the
formats' own libraries (gguf-py's GGUFReader for GGUF, safetensors'
safe_open and the raw header for safetensors) as the independent reference."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from gguf import GGUFReader
from safetensors import safe_open
from typer.testing import CliRunner

from grit_scan.commands._app import app, register

register()
ROOT = Path(__file__).resolve().parent.parent
PRODUCERS = ROOT / "fixtures" / "producers"
SCHEMA = json.loads((ROOT / "docs" / "show-report.schema.json").read_text())
FILES = sorted(p for p in PRODUCERS.rglob("*")
               if p.suffix in (".safetensors", ".gguf") and "blobs" not in p.parts)
BIG_ENDIAN = PRODUCERS / "gguf-bigendian" / "tiny-llama-Q8_0-BE.gguf"


def show(*args: str) -> tuple[int, dict[str, Any]]:
    r = CliRunner().invoke(app, ["show", "--json", *args])
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    return r.exit_code, doc


def one_file(path: Path) -> dict[str, Any]:
    code, doc = show(str(path))
    files = [f for m in doc["models"] for f in m["files"]]
    assert len(files) == 1, files
    return files[0] | {"exit": code}


def test_every_producer_file_is_covered() -> None:
    assert len([p for p in FILES if p.suffix == ".gguf"]) >= 15
    assert len([p for p in FILES if p.suffix == ".safetensors"]) >= 60


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".gguf" and p != BIG_ENDIAN],
                         ids=lambda p: str(p.relative_to(PRODUCERS)))
def test_gguf_table_matches_gguf_py(path: Path) -> None:
    ref = GGUFReader(path)
    got = one_file(path)
    assert got["parsed"] and got["exit"] == 0 and got["byte_order"] == "little"
    assert got["shape_order"] == "ggml"
    want = {t.name: (t.tensor_type.name, [int(x) for x in t.shape], int(t.data_offset),
                     int(t.n_bytes)) for t in ref.tensors}
    assert {t["name"]: (t["dtype"], t["shape"], t["offset"], t["bytes"])
            for t in got["tensors"]} == want
    assert len(got["tensors"]) == len(ref.tensors)
    # every key of the key-value section (gguf-py adds GGUF.* for the header)
    assert got["metadata_keys"] == [k for k in ref.fields if not k.startswith("GGUF.")]


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".safetensors"],
                         ids=lambda p: str(p.relative_to(PRODUCERS)))
def test_safetensors_table_matches_the_header(path: Path) -> None:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    with safe_open(str(path), "numpy") as f:
        keys, meta = set(f.keys()), f.metadata() or {}
    assert keys == set(header) - {"__metadata__"}
    want = {k: (v["dtype"], v["shape"], 8 + n + v["data_offsets"][0],
                v["data_offsets"][1] - v["data_offsets"][0])
            for k, v in header.items() if k != "__metadata__"}
    got = one_file(path)
    assert got["parsed"] and got["exit"] == 0 and got["shape_order"] == "row-major"
    assert {t["name"]: (t["dtype"], t["shape"], t["offset"], t["bytes"])
            for t in got["tensors"]} == want
    assert len(got["tensors"]) == len(want)
    assert sorted(got["metadata_keys"]) == sorted(meta)


def test_big_endian_gguf_says_clearly_it_is_not_read() -> None:
    ref = GGUFReader(BIG_ENDIAN)  # gguf-py reads it: the file is fine
    assert ref.endianess.name == "BIG" and len(ref.tensors) == 21
    got = one_file(BIG_ENDIAN)
    assert got["byte_order"] == "big" and not got["parsed"] and got["tensors"] == []
    assert any("big-endian GGUF" in i["message"] and "little-endian GGUF only" in i["message"]
               for i in got["issues"])
    assert got["exit"] == 4  # nothing else was given: nothing read
    text = CliRunner().invoke(app, ["show", str(BIG_ENDIAN)]).stdout
    assert "big-endian" in text and "not read   big-endian GGUF" in text


def test_quantised_tensors_carry_convention_grade_and_source() -> None:
    got = one_file(PRODUCERS / "gguf-quants" / "tiny-llama-Q8_0.gguf")
    ref = GGUFReader(PRODUCERS / "gguf-quants" / "tiny-llama-Q8_0.gguf")
    q8 = {t.name for t in ref.tensors if t.tensor_type.name == "Q8_0"}
    qs = {q["name"]: q for q in got["quantized"]}
    assert set(qs) == q8
    # ggml's block_q8_0: 32 int8 codes and one fp16 scale
    assert {(q["convention"], q["grade"], q["source"]) for q in qs.values()} == {
        ("ggml:Q8_0", "grit1(e=s8,k0=32,s0=binary16,esr=ratiomaxabs)", "ggml-type")}
    gptq = one_file(PRODUCERS / "gptq" / "v2-4bit-g32-asym" / "model.safetensors")
    assert gptq["quantized"] and all(q["convention"].startswith("gptq")
                                     for q in gptq["quantized"])
    assert all(q["source"] in ("inferred", "none") for q in gptq["quantized"])
    assert all(q["reason"] for q in gptq["quantized"] if q["source"] == "none")


def test_a_sharded_model_is_shown_per_shard_with_its_index_and_configs() -> None:
    model = PRODUCERS / "ct" / "nvfp4a16-sharded"
    code, doc = show(str(model))
    assert code == 0
    (m,) = doc["models"]
    index = json.loads((model / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert m["index"]["shards"] == shards
    assert m["index"]["total_size"] == index["metadata"]["total_size"]
    assert [Path(f["path"]).name for f in m["files"]] == shards
    # each shard lists exactly the tensors the index maps to it
    for f in m["files"]:
        assert {t["name"] for t in f["tensors"]} == {
            k for k, v in index["weight_map"].items() if v == Path(f["path"]).name}
    cfg = json.loads((model / "config.json").read_text())["quantization_config"]
    assert m["configs"]["sources"] == ["config.json quantization_config"]
    assert m["configs"]["declared"]["method"] == cfg["quant_method"]


def test_text_survives_a_pipe_untruncated() -> None:
    """Piped (not a tty), every name is printed whole, whatever its length."""
    path = PRODUCERS / "bnb" / "nf4" / "model.safetensors"
    r = subprocess.run([sys.executable, "-m", "grit_scan", "show", str(path)],
                       capture_output=True, text=True, timeout=120,
                       env={"COLUMNS": "40", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    names = [k for k in json.loads(raw[8:8 + n]) if k != "__metadata__"]
    lines = r.stdout.splitlines()
    for name in names:
        assert any(line.split()[:1] == [name] for line in lines), name
    assert "\x1b" not in r.stdout


def test_hostile_names_are_escaped_in_text_and_exact_in_json(tmp_path: Path) -> None:
    evil = "w\x1b]0;pwned\x07\u202e"
    header = json.dumps({evil: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "__metadata__": {"k\x1b[2J": "v"}}).encode()
    path = tmp_path / "m.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    text = CliRunner().invoke(app, ["show", str(path)]).stdout
    assert "\x1b" not in text and "\u202e" not in text
    assert "w\\x1b]0;pwned\\x07\\u202e" in text and "k\\x1b[2J" in text
    got = one_file(path)
    assert [t["name"] for t in got["tensors"]] == [evil]
    assert got["metadata_keys"] == ["k\x1b[2J"]


def test_exit_codes(tmp_path: Path) -> None:
    assert CliRunner().invoke(app, ["show", str(tmp_path / "missing")]).exit_code == 4
    (tmp_path / "empty").mkdir()
    assert CliRunner().invoke(app, ["show", str(tmp_path / "empty")]).exit_code == 4
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\xff" * 64)
    good = PRODUCERS / "bnb" / "nf4" / "model.safetensors"
    code, doc = show(str(bad), str(good))
    assert code == 1
    parsed = {Path(f["path"]).name: f["parsed"] for m in doc["models"] for f in m["files"]}
    assert parsed == {"bad.safetensors": False, "model.safetensors": True}


def test_a_gguf_split_set_is_one_model_of_its_parts() -> None:
    code, doc = show(str(PRODUCERS / "gguf-split"))
    assert code == 0
    (m,) = doc["models"]
    parts = sorted((PRODUCERS / "gguf-split").glob("*.gguf"))
    assert [Path(f["path"]).name for f in m["files"]] == [p.name for p in parts]
    for f, p in zip(m["files"], parts):
        assert {t["name"] for t in f["tensors"]} == {t.name for t in GGUFReader(p).tensors}


def test_a_url_is_shown_as_the_local_copy_is(monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from remote_loopback import Loopback

    model = PRODUCERS / "gptq" / "v2-4bit-g32-asym"
    srv = Loopback(repos={"org/gptq": str(model)}).start()
    monkeypatch.setenv("HF_ENDPOINT", srv.url)
    try:
        code, doc = show("hf://org/gptq", "--retries", "0")
    finally:
        srv.stop()
    assert code == 0
    _, local = show(str(model))
    (remote_file,) = [f for m in doc["models"] for f in m["files"]]
    (local_file,) = [f for m in local["models"] for f in m["files"]]
    for key in ("tensors", "quantized", "metadata_keys", "format"):
        assert remote_file[key] == local_file[key], key
    assert doc["models"][0]["configs"]["sources"] == local["models"][0]["configs"]["sources"]
