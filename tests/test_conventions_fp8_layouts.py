"""FP8 weights with a float scale of every layout a producer writes (per
tensor, per channel, per group, a single block row, 2-D blocks), written here
with the safetensors library and ml_dtypes: the convention, the grade's k0,
scale format and decode projection, and the values `grit` decodes.

Expected k0 is exact arithmetic on the shapes (§3.7: runs along the row);
expected values are the weight times its scale in binary32 (§8.1), computed
here with numpy, rounded once into the scale's dtype when that is narrower
(the dt projection, §4.5) -- torch's ``w.to(scale.dtype) * scale``.
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import save_file

from grit_scan.api import load_tensor, tensor_bytes
from grit_scan.cli import main
from grit_scan.codec.decode import decode
from grit_scan.codec.grade import registry

SCALE = {"F32": (np.float32, "binary32"), "BF16": (ml_dtypes.bfloat16, "bfloat16"),
         "F16": (np.float16, "binary16")}
ELEM = {"F8_E4M3": (ml_dtypes.float8_e4m3fn, "e4m3"), "F8_E5M2": (ml_dtypes.float8_e5m2, "e5m2")}
ROWS, COLS = 16, 64


def fp8_file(root, sshape, sdt="F32", wdt="F8_E4M3", wshape=(ROWS, COLS), declared=None):
    rng = np.random.default_rng(sum(sshape) + len(sdt) + len(wdt))
    w = rng.uniform(-8, 8, size=wshape).astype(ELEM[wdt][0])
    s = rng.uniform(0.01, 2.0, size=sshape).astype(SCALE[sdt][0])
    save_file({"model.layers.0.mlp.up_proj.weight": w,
               "model.layers.0.mlp.up_proj.weight_scale": s}, str(root / "model.safetensors"))
    qc = {"quant_method": "fbgemm_fp8", **(declared or {})}
    (root / "config.json").write_text(json.dumps({"quantization_config": qc}))
    return w, s


def scanned(root, capsys):
    try:
        main(["scan", "--json", str(root)])
    except SystemExit:
        pass
    (art,) = [a for a in json.loads(capsys.readouterr().out)["artifacts"]
              if a["path"].endswith(".safetensors")]
    return art


def k0_of(grade):
    return int(grade.split("k0=")[1].split(",")[0].rstrip(")"))


W = "model.layers.0.mlp.up_proj.weight"

# (scale shape, convention, k0 by §3.7 arithmetic, scale repeated per row)
LAYOUTS = [
    ((ROWS, 1), "fp8-per-channel", COLS, False),
    ((ROWS,), "fp8-per-channel", COLS, False),
    ((ROWS, 4), "fp8-per-group", COLS // 4, False),
    ((ROWS, 2), "fp8-per-group", COLS // 2, False),
    ((1, 4), "fp8-block", COLS // 4, True),
    ((1, 2), "fp8-block", COLS // 2, True),
]


def producer(w, s, sshape, k0, sdt):
    """Each element times its group's scale, in binary32, then projected
    into the scale's dtype (§4.5 dt) when that is not binary32."""
    scale = np.asarray(s, dtype=np.float32).reshape(-1)
    rows, cols = w.shape
    if scale.size == 1:
        per = np.full((rows, cols // k0), scale[0], dtype=np.float32)
    elif len(sshape) == 2 and sshape[0] == 1:
        per = np.tile(scale, (rows, 1))
    else:
        per = scale.reshape(rows, cols // k0)
    full = np.repeat(per, k0, axis=1)
    out = w.astype(np.float32) * full
    if sdt != "F32":
        out = out.astype(SCALE[sdt][0]).astype(np.float32)
    return out


@pytest.mark.parametrize("sshape,conv,k0,_", LAYOUTS)
@pytest.mark.parametrize("sdt", ["F32", "BF16"])
def test_layout_convention_and_grade(tmp_path, capsys, sshape, conv, k0, _, sdt):
    fp8_file(tmp_path, sshape, sdt)
    art = scanned(tmp_path, capsys)
    (x,) = art["tensors"]
    assert (x["name"], x["convention"]) == (W, conv)
    assert k0_of(x["grade"]) == k0 and COLS % k0 == 0
    token = SCALE[sdt][1]
    assert f"s0={token}" in x["grade"] and x["grade"].startswith("grit1(e=e4m3,")
    assert ("dt=" in x["grade"]) == (sdt != "F32")
    assert art["unquantized"] == {}


@pytest.mark.parametrize("sshape,conv,k0,_", LAYOUTS)
@pytest.mark.parametrize("sdt,wdt", [("F32", "F8_E4M3"), ("BF16", "F8_E4M3"),
                                     ("F16", "F8_E5M2")])
def test_layout_decodes_to_weight_times_scale(tmp_path, sshape, conv, k0, _, sdt, wdt):
    w, s = fp8_file(tmp_path, sshape, sdt, wdt)
    art, q = load_tensor(f"{tmp_path / 'model.safetensors'}::{W}")
    assert q.grade is not None and q.grade["e"] == ELEM[wdt][1]
    ours = decode(q.desc, list(q.shape), tensor_bytes(art, q),
                  grades=registry([q.grade]), layouts=q.layouts)
    want = producer(w, s, sshape, k0, sdt)
    ours = np.asarray(ours, dtype=np.float32).reshape(want.shape)
    assert (ours == want).all()
    # a stored scale repeated per row is said so: one block row
    block_row = any(f"all {ROWS} rows lie in one block row" in n for n in q.notes)
    assert block_row == (conv == "fp8-block")


@pytest.mark.parametrize("sshape", [(), (1,)])
@pytest.mark.parametrize("sdt", ["F32", "BF16"])
def test_one_scale_over_many_rows_is_not_representable(tmp_path, capsys, sshape, sdt):
    """One scale over a weight of more than one row has no level-0
    descriptor whose size equations hold (§3.7: k0 would be rows x cols and
    divide one axis; §3.1: k0 <= 65,535): refused, no grade, no gid."""
    fp8_file(tmp_path, sshape, sdt)
    art = scanned(tmp_path, capsys)
    (x,) = art["tensors"]
    assert (x["name"], x["convention"], x["grade"]) == (W, "fp8-per-tensor", None)
    assert "§3.7" in x["reason"] and x.get("gid") is None


def test_two_d_blocks_are_not_representable(tmp_path, capsys):
    fp8_file(tmp_path, (2, 2), wshape=(256, 256))
    art = scanned(tmp_path, capsys)
    (x,) = art["tensors"]
    assert x["convention"] == "fp8-block" and x["grade"] is None
    assert x["reason"].startswith("DeepSeek-style block FP8: weight_scale F32 [2, 2]")


def test_a_declared_block_wider_than_the_run_is_a_partial_block(tmp_path, capsys):
    # one block row of [1, 2] over 64 columns: runs of 32, but 128-wide blocks declared
    fp8_file(tmp_path, (1, 2), declared={"weight_block_size": [128, 128]})
    art = scanned(tmp_path, capsys)
    (x,) = art["tensors"]
    assert x["grade"] is None and "blocks 128 wide over 64 columns" in x["reason"]


def test_a_declared_block_equal_to_the_run_fits(tmp_path, capsys):
    fp8_file(tmp_path, (1, 2), declared={"weight_block_size": [128, COLS // 2]})
    (x,) = scanned(tmp_path, capsys)["tensors"]
    assert x["convention"] == "fp8-block" and k0_of(x["grade"]) == COLS // 2


@pytest.mark.parametrize("sshape,wshape,note", [
    ((ROWS, 3), (ROWS, COLS), f"48 scales for a {ROWS}x{COLS} FP8 weight match no"),
    ((ROWS * 3,), (ROWS, COLS), f"48 scales for a {ROWS}x{COLS} FP8 weight match no"),
    ((1, 3), (ROWS, COLS), f"3 scales for a {ROWS}x{COLS} FP8 weight match no"),
    ((2, 1), (ROWS, COLS), f"2 scales for a {ROWS}x{COLS} FP8 weight match no"),
    ((2, ROWS, 1), (2, ROWS, COLS), "is not a layout this scanner knows"),
])
def test_a_layout_no_convention_knows_is_noted(tmp_path, capsys, sshape, wshape, note):
    fp8_file(tmp_path, sshape, wshape=wshape)
    art = scanned(tmp_path, capsys)
    assert art["tensors"] == []
    assert any(note in n for n in art["notes"]), art["notes"]
    # the weight is left unconsumed, and its note says the scale is there but
    # in a layout no convention describes (not that there is no scale)
    assert any(f"F8_E4M3 tensor '{W}' has a scale beside it ('{W}_scale') in a layout no "
               "convention describes" in n for n in art["notes"]), art["notes"]
    assert not any("has no scale tensor beside it" in n for n in art["notes"]), art["notes"]


@pytest.mark.parametrize("others", [{}, {"input_scale": ()}])
def test_an_fp8_weight_without_a_weight_scale_has_no_scale_beside_it(tmp_path, capsys, others):
    """No weight scale under the module (an activation scale is not one):
    the note says there is none."""
    rng = np.random.default_rng(3)
    tensors = {W: rng.uniform(-8, 8, size=(ROWS, COLS)).astype(ELEM["F8_E4M3"][0]),
               **{W.rpartition(".")[0] + "." + k: np.ones(shape, np.float32)
                  for k, shape in others.items()}}
    save_file(tensors, str(tmp_path / "model.safetensors"))
    art = scanned(tmp_path, capsys)
    assert art["tensors"] == []
    assert any(f"F8_E4M3 tensor '{W}' has no scale tensor beside it" in n
               for n in art["notes"]), art["notes"]


@pytest.mark.parametrize("rows,cols,sshape,want", [
    (16, 64, (), ("per-tensor", 64, 16)),
    (16, 64, (16, 1), ("per-channel", 64, 1)),
    (16, 64, (16, 8), ("per-group", 8, 1)),
    (16, 64, (1, 8), ("block-row", 8, 16)),
    (1, 64, (1, 8), ("per-group", 8, 1)),  # one row: an ordinary per-group scale
    (16, 64, (1, 3), None),
    (16, 64, (16, 3), None),
    (16, 64, (32,), ("per-group", 32, 1)),  # a flat list, two scales a row
    (1, 2 ** 17, (1,), None),  # k0 would be 131072: past the 16-bit k0 field (§3.1)
    (1, 65535, (1,), ("per-channel", 65535, 1)),  # one row: its channel is the tensor
    (2, 2 ** 17, (2, 2), None),  # per-group k0 65536: one past the field
    (16, 1, (16, 1), ("per-channel", 1, 1)),  # one column: one scale a row, k0 = 1
    (16, 0, (16, 1), None),  # no columns: no run of k0 >= 1 (a grade's k0 is 1..65535)
    (0, 64, (0, 8), None),  # no rows: nothing to group (and no division by zero)
    (0, 64, (), None),
])
def test_scale_layouts_by_arithmetic(rows, cols, sshape, want):
    from grit_scan.conventions.scales import scale_layout

    got = scale_layout(rows, cols, sshape)
    assert (None if got is None else (got.name, got.k0, got.broadcast)) == want


@pytest.mark.parametrize("rows", [1, 2, 3, 16])
@pytest.mark.parametrize("cols", [1, 6, 64, 96])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 6, 16, 32, 64, 96, 192])
def test_a_scale_layout_covers_every_element_once(rows, cols, n):
    """Whatever layout is found, §7.3's scale0 count holds: the stored scales,
    repeated ``broadcast`` times, are one per group of k0 along each row."""
    from grit_scan.conventions.scales import scale_layout

    for sshape in [(n,), (rows, n // rows) if n % rows == 0 else (n,), (1, n)]:
        got = scale_layout(rows, cols, sshape)
        if got is None:
            continue
        assert cols % got.k0 == 0
        stored = 1
        for d in sshape:
            stored *= d
        assert stored * got.broadcast * got.k0 == rows * cols, (rows, cols, sshape, got)
