"""The grit_check finding kinds (size_mismatch, grade_unknown,
placement_unknown) on GRIT-annotated safetensors files this test writes
with the safetensors library: the spec's A.4 descriptors (tests/spec_values),
planes of chosen lengths, one payload tensor or named planes.

Expected sizes come from tests/ref_ids.py's exact-arithmetic §7.3 step 4
equations, grade ids and placement words from the descriptor bytes
(ref_ids.desc_fields), never from grit_scan.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
import spec_values as S
from ref_ids import desc_fields, plane_sizes
from safetensors.numpy import save_file

import grit_scan

PLANES = ("data", "scale0", "scale1", "aux")
SHAPE = [64, 16]  # the A.4 descriptors group along axis 0


def mxfp4():
    return bytes.fromhex(S.A4_HEX["GRADE_MXFP4"])


def nvf4():
    return bytes.fromhex(S.A4_HEX["GRADE_NVF4"])


def right_sizes(desc, shape=SHAPE):
    return plane_sizes(desc_fields(desc), shape)


def write(path, entries, payload=False):
    """``entries``: tensor name -> (descriptor bytes, shape, plane lengths)."""
    tensors, meta = {}, {}
    for name, (desc, shape, sizes) in entries.items():
        ent = {"desc": desc.hex(), "shape": shape}
        if payload:
            key = f"{name}.grit_payload"
            tensors[key] = np.zeros(sum(sizes), dtype=np.uint8)
            ent["payload"] = key
        else:
            ent["planes"] = {}
            for plane, n in zip(PLANES, sizes):
                if n:
                    key = f"{name}.grit_{plane}"
                    tensors[key] = np.zeros(n, dtype=np.uint8)
                    ent["planes"][plane] = key
        meta[name] = ent
    save_file(tensors, str(path), metadata={
        "__grit__": json.dumps({"grit": 1, "producer": "test", "tensors": meta})})


def findings(path):
    return [f for f in grit_scan.scan([str(path)]).findings
            if f.kind.value in ("size_mismatch", "grade_unknown", "placement_unknown")]


W = "model.layers.0.self_attn.k_proj.weight"


@pytest.mark.parametrize("payload", [False, True])
def test_planes_of_the_required_lengths_pass(tmp_path, payload):
    write(tmp_path / "m.safetensors", {W: (mxfp4(), SHAPE, right_sizes(mxfp4())),
                                       "b.weight": (nvf4(), SHAPE, right_sizes(nvf4()))},
          payload=payload)
    assert findings(tmp_path / "m.safetensors") == []


def test_half_the_scales_is_a_doubled_group_size(tmp_path):
    sizes = right_sizes(mxfp4())
    numel = SHAPE[0] * SHAPE[1]
    k0 = desc_fields(mxfp4()).k0
    half = sizes[1] // 2  # one e8m0 byte per group of 2·k0 elements
    assert numel // half == 2 * k0
    write(tmp_path / "m.safetensors", {W: (mxfp4(), SHAPE, [sizes[0], half, 0, 0])})
    (f,) = findings(tmp_path / "m.safetensors")
    assert (f.kind.value, f.tensor) == ("size_mismatch", W)
    assert f.message == (f"{W}: scale0 plane is {half} bytes; descriptor requires {sizes[1]}. "
                         f"Likeliest cause: the checkpoint was quantised at "
                         f"group_size={2 * k0}, not {k0}.")
    assert (f.detail["expected"], f.detail["actual"], f.detail["plane"]) == (sizes[1], half, 1)
    assert f.detail["step"] == 4 and f.detail["clause"] == "size.scale0"
    assert f.detail["suggested_fix"].startswith("re-export the descriptor with the group size")
    assert f.detail["likeliest_cause"] == (
        f"the checkpoint was quantised at group_size={2 * k0}, not {k0}")
    # the one line of the §7.3 equation, in exact arithmetic
    assert f.detail["equation"] == (f"numel={numel}, k0={k0} -> n_groups0={numel // k0}, "
                                    f"cw(e8m0)=8 -> {sizes[1]} bytes.")


def test_a_data_plane_too_long(tmp_path):
    sizes = right_sizes(mxfp4())
    write(tmp_path / "m.safetensors", {W: (mxfp4(), SHAPE, [sizes[0] + 8, sizes[1], 0, 0])})
    (f,) = findings(tmp_path / "m.safetensors")
    assert f.kind.value == "size_mismatch" and f.tensor == W
    assert f.message.startswith(
        f"{W}: data plane is {sizes[0] + 8} bytes; descriptor requires {sizes[0]}.")
    assert (f.detail["expected"], f.detail["actual"], f.detail["plane"]) == (
        sizes[0], sizes[0] + 8, 0)
    assert "suggested_fix" not in f.detail  # no group size explains a data plane


def test_a_payload_of_the_wrong_length(tmp_path):
    sizes = right_sizes(mxfp4())
    short = [sizes[0], sizes[1] // 2, 0, 0]
    write(tmp_path / "m.safetensors", {W: (mxfp4(), SHAPE, short)}, payload=True)
    (f,) = findings(tmp_path / "m.safetensors")
    assert f.kind.value == "size_mismatch" and f.tensor == W
    assert f.message.startswith(
        f"{W}: payload is {sum(short):,} bytes; the descriptor requires {sum(sizes):,}. ")


def test_an_unknown_grade_id(tmp_path):
    raw = bytearray(mxfp4())
    raw[56:64] = struct.pack("<Q", 0x0123456789ABCDEF)  # grade_id: the last 8 bytes (§3.1)
    gid = desc_fields(bytes(raw)).grade_id
    assert gid == 0x0123456789ABCDEF
    write(tmp_path / "m.safetensors", {W: (bytes(raw), SHAPE, right_sizes(mxfp4()))})
    (f,) = findings(tmp_path / "m.safetensors")
    assert (f.kind.value, f.tensor) == ("grade_unknown", W)
    assert f.message == (f"{W}: grade_id {gid:#018x} is neither registered nor in the file's "
                         "grades map, so what its bytes mean is unknown (§7.3 step 2)")
    assert f.detail["step"] == 2 and f.detail["actual"] == f"{gid:#018x}"


def test_a_placement_class_version_1_does_not_define(tmp_path):
    raw = bytearray(mxfp4())
    word = 0x3000000000000001
    raw[32:40] = struct.pack("<Q", word)  # placement_data (§3.1)
    assert desc_fields(bytes(raw)).placement_data == word
    write(tmp_path / "m.safetensors", {W: (bytes(raw), SHAPE, right_sizes(mxfp4()))})
    (f,) = findings(tmp_path / "m.safetensors")
    assert (f.kind.value, f.tensor) == ("placement_unknown", W)
    assert f.message.startswith(
        f"{W}: PlacementUnknown (step 3): placement_data: {word:#018x} has class 0x3")
    assert f.detail["step"] == 3 and f.detail["status"] == "PlacementUnknown"


def test_a_step_1_failure_names_its_step(tmp_path):
    raw = bytearray(mxfp4())
    raw[5] = 9  # version (§3.1 byte 5): only 1 is defined
    assert desc_fields(bytes(raw)).version == 9
    write(tmp_path / "m.safetensors", {W: (bytes(raw), SHAPE, right_sizes(mxfp4()))})
    got = findings(tmp_path / "m.safetensors")
    assert [f.tensor for f in got] == [W]
    assert "(step 1)" in got[0].message and got[0].detail["step"] == 1


def test_only_the_tensors_with_wrong_planes_are_reported(tmp_path):
    ok, bad = right_sizes(mxfp4()), right_sizes(mxfp4())
    bad = [bad[0], bad[1] // 2, 0, 0]
    names = [f"model.layers.{i}.mlp.up_proj.weight" for i in range(6)]
    wrong = {names[1], names[4]}
    write(tmp_path / "m.safetensors", {n: (mxfp4(), SHAPE, bad if n in wrong else ok)
                                       for n in names})
    got = findings(tmp_path / "m.safetensors")
    assert sorted(f.tensor for f in got) == sorted(wrong)
    assert {f.kind.value for f in got} == {"size_mismatch"}


def test_a_truncated_file_shows_three_names_and_a_count(tmp_path):
    names = [f"t{i}.weight" for i in range(7)]
    save_file({n: np.zeros(64, dtype=np.float32) for n in names}, str(tmp_path / "m.safetensors"))
    raw = (tmp_path / "m.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    ends = {k: 8 + n + v["data_offsets"][1] for k, v in json.loads(raw[8:8 + n]).items()
            if k != "__metadata__"}
    keep = 8 + n + 2 * 256 + 10  # two tensors whole, the rest cut short
    (tmp_path / "m.safetensors").write_bytes(raw[:keep])
    cut = sorted(k for k, e in ends.items() if e > keep)
    assert len(cut) == 5
    (f,) = findings(tmp_path / "m.safetensors")
    assert f.message == (
        f"the file is truncated: {keep:,} of {len(raw):,} bytes present; {len(cut)} tensor(s) "
        f"run past its end ({', '.join(cut[:3])} and {len(cut) - 3} more). Likeliest cause: "
        "the file is truncated (an interrupted download or copy: a truncated shard).")
    assert f.detail["tensors"] == cut and f.detail["count"] == len(cut)


def test_a_grit_headers_planes_are_its_tensors_and_nothing_else(tmp_path, capsys):
    """Every stored tensor of a GRIT-annotated file is a plane its header
    names: none is left unquantised or looks like an unclaimed convention."""
    from grit_scan.cli import main

    write(tmp_path / "m.safetensors", {W: (mxfp4(), SHAPE, right_sizes(mxfp4())),
                                       "b.weight": (nvf4(), SHAPE, right_sizes(nvf4()))})
    try:
        main(["scan", "--json", str(tmp_path / "m.safetensors")])
    except SystemExit:
        pass
    doc = json.loads(capsys.readouterr().out)
    (art,) = doc["artifacts"]
    assert art["unquantized"] == {}
    assert sorted(x["name"] for x in art["tensors"]) == sorted([W, "b.weight"])
    assert {x["source"] for x in art["tensors"]} == {"grit-header"}
    assert not [f for f in doc["findings"] if f["kind"] == "unsupported_convention"]


def _truncate_after(path, keep_names):
    """Cut the file right after the last byte of ``keep_names`` (by its own
    header: 8-byte length, JSON, data)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    hdr = {k: v for k, v in json.loads(raw[8:8 + n]).items() if k != "__metadata__"}
    keep = 8 + n + max(hdr[k]["data_offsets"][1] for k in keep_names)
    path.write_bytes(raw[:keep])
    return sorted(k for k, v in hdr.items() if 8 + n + v["data_offsets"][1] > keep), keep


def test_a_truncated_quantised_tensor_is_named_once_by_its_logical_name(tmp_path):
    names = [f"model.layers.{i}.mlp.up_proj.weight" for i in range(3)]
    write(tmp_path / "m.safetensors", {n: (mxfp4(), SHAPE, right_sizes(mxfp4())) for n in names})
    cut, keep = _truncate_after(tmp_path / "m.safetensors",
                                [f"{n}.grit_{p}" for n in names[:2] for p in ("data", "scale0")])
    assert cut == sorted(f"{names[2]}.grit_{p}" for p in ("data", "scale0"))
    got = findings(tmp_path / "m.safetensors")
    assert len(got) == 1  # the truncated file, not a size mismatch for the tensor too
    (f,) = got
    assert f.tensor is None and f.detail["tensors"] == [names[2]] and f.detail["count"] == 1
    assert f"; 1 tensor(s) run past its end ({names[2]}). " in f.message


@pytest.mark.parametrize("n_cut", [3, 60])
def test_a_truncated_files_names_shown_and_listed(tmp_path, n_cut):
    names = [f"t{i:03d}.weight" for i in range(n_cut + 1)]
    save_file({n: np.zeros(4, dtype=np.float32) for n in names}, str(tmp_path / "m.safetensors"))
    cut, _ = _truncate_after(tmp_path / "m.safetensors", [names[0]])
    assert len(cut) == n_cut
    (f,) = findings(tmp_path / "m.safetensors")
    shown = ", ".join(cut[:3]) + ("" if n_cut == 3 else f" and {n_cut - 3} more")
    assert f"{n_cut} tensor(s) run past its end ({shown})." in f.message
    assert f.detail["tensors"] == cut[:50] and f.detail["count"] == n_cut


PRODUCERS = Path(__file__).resolve().parent.parent / "fixtures" / "producers"


@pytest.mark.parametrize("sub", ["gguf-quants/tiny-llama-Q4_K_M.gguf",
                                 "gguf-quants/tiny-llama-Q8_0.gguf",
                                 "gguf-moe/tiny-mixtral-MXFP4_MOE.gguf",
                                 "awq/gemm-4bit-g128", "gptq/v2-4bit-g32-asym"])
def test_correct_producer_files_have_no_grit_check_finding(sub):
    """Files the producers wrote (MANIFEST.json: expect "correct"): a GGUF's
    block payloads are exactly the sizes of their ggml types, and GPTQ/AWQ
    tensors GRIT v1 cannot express are refused, never sized."""
    expect = {e["path"]: e["expect"] for e in json.loads(
        (PRODUCERS / "MANIFEST.json").read_text())["entries"]}
    assert expect[sub] == "correct"
    assert findings(PRODUCERS / sub) == []


def test_a_truncated_file_still_sizes_its_intact_tensors(tmp_path):
    names = [f"model.layers.{i}.mlp.up_proj.weight" for i in range(3)]
    ok = right_sizes(mxfp4())
    half = [ok[0], ok[1] // 2, 0, 0]
    write(tmp_path / "m.safetensors", {names[0]: (mxfp4(), SHAPE, half),
                                       names[1]: (mxfp4(), SHAPE, ok),
                                       names[2]: (mxfp4(), SHAPE, ok)})
    _truncate_after(tmp_path / "m.safetensors",
                    [f"{n}.grit_{p}" for n in names[:2] for p in ("data", "scale0")])
    got = sorted(findings(tmp_path / "m.safetensors"), key=lambda f: f.tensor or "")
    assert [(f.kind.value, f.tensor) for f in got] == [("size_mismatch", None),
                                                       ("size_mismatch", names[0])]
    assert got[0].detail["tensors"] == [names[2]]
    assert got[1].detail["plane"] == 1 and got[1].detail["actual"] == ok[1] // 2
