"""grit_check's findings on the paths the plain A.4 cases do not take: a
plane in a placement other than ROW_MAJOR (the size equation then checked
on the total, with the placements named), a payload cut into its planes, a
size equation that cannot be evaluated, a class-0x8 word whose expression is
not supplied, a frame field that disagrees with its grade, and --deep, which
decodes a tensor only when its sizes hold.

The files are GRIT-annotated safetensors written here with the safetensors
library.  Expected sizes come from tests/ref_ids.py's exact-arithmetic §7.3
step 4 equations on the spec's A.4 descriptor bytes, placement words from
RECONSTRUCTION §7's table and its class-0x8 hash, digests from ref_ids'
§6.5 FNV-1a; never from grit_scan.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import spec_values as S
from ref_ids import desc_fields, fnv1a, plane_sizes
from ref_ids import digest as ref_digest
from safetensors.numpy import save_file

import grit_scan

W = "model.layers.0.self_attn.k_proj.weight"
SHAPE = [64, 16]  # the A.4 descriptors group along axis 0
PLANES = ("data", "scale0", "scale1", "aux")
MXFP4 = bytes.fromhex(S.A4_HEX["GRADE_MXFP4"])
# RECONSTRUCTION §7: registered placement words
ROW_MAJOR, TILE_16X16 = 0x1000000000000001, 0x1000000000000004
RIGHT = plane_sizes(desc_fields(MXFP4), SHAPE)  # [512, 32, 0, 0]
KINDS = ("size_mismatch", "grade_unknown", "placement_unknown", "digest_mismatch")


def expr_word(text: str) -> int:
    """RECONSTRUCTION §7: 0x8 << 60 | (FNV1a64(text) & (2^60 - 1))."""
    return 0x8 << 60 | (fnv1a(text.encode(), 64) & ((1 << 60) - 1))


def with_field(raw: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(raw)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def tiled(raw: bytes = MXFP4) -> bytes:
    """placement_data (§3.1 bytes 32-39) set to TILE_16X16."""
    out = with_field(raw, 32, "<Q", TILE_16X16)
    assert desc_fields(out).placement_data == TILE_16X16
    assert desc_fields(out).placement_scale == ROW_MAJOR
    return out


def write(path, desc, sizes, shape=SHAPE, payload=False, layouts=None, digest=None):
    tensors, ent = {}, {"desc": desc.hex(), "shape": shape}
    if payload:
        tensors[f"{W}.grit_payload"] = np.zeros(sum(sizes), dtype=np.uint8)
        ent["payload"] = f"{W}.grit_payload"
    else:
        ent["planes"] = {}
        for plane, n in zip(PLANES, sizes):
            if n:
                tensors[f"{W}.grit_{plane}"] = np.zeros(n, dtype=np.uint8)
                ent["planes"][plane] = f"{W}.grit_{plane}"
    if digest is not None:
        ent["digest"] = digest
    hdr = {"grit": 1, "producer": "test", "tensors": {W: ent}}
    if layouts:
        hdr["layouts"] = {f"{k:016x}": v for k, v in layouts.items()}
    save_file(tensors, str(path), metadata={"__grit__": json.dumps(hdr)})
    return path


def findings(path, deep=False):
    return [f for f in grit_scan.scan([str(path)], deep=deep, jobs=1).findings
            if f.kind.value in KINDS]


def plain_message(actual: int, cause: str) -> str:
    return (f"{W}: {actual:,} bytes on disk; the descriptor in its placements "
            f"(data=TILE_16X16, scale=ROW_MAJOR) requires {sum(RIGHT):,} "
            f"({' + '.join(str(n) for n in RIGHT)}). Likeliest cause: {cause}.")


SHORT = "the file is truncated (truncated shard)"
MORE = "the bytes hold more than the descriptor describes: a wrong type, group size or shape"


def test_a_tiled_plane_short_is_checked_on_the_total_and_names_the_placements(tmp_path):
    sizes = [RIGHT[0] - 8, RIGHT[1], 0, 0]
    (f,) = findings(write(tmp_path / "m.safetensors", tiled(), sizes))
    assert (f.kind.value, f.tensor) == ("size_mismatch", W)
    assert f.message == plain_message(sum(sizes), SHORT)
    assert f.detail == {"expected": sum(RIGHT), "actual": sum(sizes), "planes": RIGHT,
                        "likeliest_cause": SHORT, "desc": tiled().hex(),
                        "source": "grit-header"}


def test_tiled_planes_of_the_right_total_but_wrong_split_are_not_called_truncated(tmp_path):
    # the data plane 8 bytes long, scale0 8 short: the total is right, so
    # nothing is missing from the file
    sizes = [RIGHT[0] + 8, RIGHT[1] - 8, 0, 0]
    assert sum(sizes) == sum(RIGHT)
    (f,) = findings(write(tmp_path / "m.safetensors", tiled(), sizes))
    assert f.message == plain_message(sum(RIGHT), MORE)
    assert f.detail["likeliest_cause"] == MORE


def test_a_tiled_payload_of_the_wrong_length_is_checked_on_its_total(tmp_path):
    sizes = [RIGHT[0], RIGHT[1] // 2, 0, 0]
    (f,) = findings(write(tmp_path / "m.safetensors", tiled(), sizes, payload=True))
    assert (f.kind.value, f.tensor) == ("size_mismatch", W)
    assert f.message == plain_message(sum(sizes), SHORT)
    assert (f.detail["expected"], f.detail["actual"]) == (sum(RIGHT), sum(sizes))


def test_tiled_planes_and_payload_of_the_right_lengths_pass(tmp_path):
    assert findings(write(tmp_path / "a.safetensors", tiled(), RIGHT)) == []
    assert findings(write(tmp_path / "b.safetensors", tiled(), RIGHT, payload=True)) == []


def test_a_short_payload_is_cut_into_its_planes_in_order(tmp_path):
    # §3.6: data ‖ scale0 ‖ scale1 ‖ aux; 16 bytes short, so the data plane
    # is whole and scale0 holds half its bytes: one e8m0 scale per 64 elements
    sizes = [RIGHT[0], RIGHT[1] // 2, 0, 0]
    (f,) = findings(write(tmp_path / "m.safetensors", MXFP4, sizes, payload=True))
    numel = SHAPE[0] * SHAPE[1]
    cause = f"the checkpoint was quantised at group_size={numel // (RIGHT[1] // 2)}, not 32"
    assert f.message == (
        f"{W}: payload is {sum(sizes):,} bytes; the descriptor requires {sum(RIGHT):,}. "
        f"scale0 plane is {RIGHT[1] // 2} bytes; descriptor requires {RIGHT[1]}. "
        f"Likeliest cause: {cause}.")
    assert f.detail["likeliest_cause"] == cause
    assert (f.detail["plane"], f.detail["expected"], f.detail["actual"]) == (
        1, RIGHT[1], RIGHT[1] // 2)


def test_a_group_axis_k0_does_not_divide_is_a_descriptor_finding(tmp_path):
    shape = [60, 16]  # §3.7: shape[group_axis] must be a multiple of k0 = 32
    fields = desc_fields(MXFP4)
    assert (fields.group_axis, fields.k0) == (0, 32) and shape[0] % 32
    (f,) = findings(write(tmp_path / "m.safetensors", MXFP4, [480, 30, 0, 0], shape=shape))
    assert (f.kind.value, f.tensor) == ("size_mismatch", W)
    assert f.message == (f"{W}: SizeMismatch (step 4): shape[0] = 60 is not a multiple of "
                         "k0 = 32 (§3.7)")
    assert (f.detail["status"], f.detail["step"]) == ("SizeMismatch", 4)
    assert (f.detail["expected"], f.detail["actual"]) == ("multiple of 32", 60)


def test_a_class_8_word_without_its_expression_is_placement_unknown(tmp_path):
    word = expr_word("Pad(64)")
    raw = with_field(MXFP4, 32, "<Q", word)
    (f,) = findings(write(tmp_path / "m.safetensors", raw, RIGHT))
    assert (f.kind.value, f.tensor) == ("placement_unknown", W)
    assert f.message == (f"{W}: data placement {word:#018x} is a layout expression hash whose "
                         "expression was not supplied; refusing to guess (§5.3)")
    assert f.detail == {"step": 3, "desc": raw.hex()}


def test_a_supplied_expression_pads_the_plane_it_places(tmp_path):
    # Pad(64) on the scale plane: 32 bytes stored as 64 (docs/layouts.md)
    word = expr_word("Pad(64)")
    raw = with_field(MXFP4, 40, "<Q", word)
    assert desc_fields(raw).placement_scale == word
    lay = {word: "Pad(64)"}
    padded = [RIGHT[0], 64, 0, 0]
    assert findings(write(tmp_path / "a.safetensors", raw, padded, layouts=lay)) == []
    (f,) = findings(write(tmp_path / "b.safetensors", raw, RIGHT, layouts=lay))
    assert f.message == (f"{W}: {sum(RIGHT):,} bytes on disk; the descriptor in its placements "
                         f"(data=ROW_MAJOR, scale=EXPR Pad(64)) requires {sum(padded):,} "
                         f"({' + '.join(str(n) for n in padded)}). Likeliest cause: {SHORT}.")


def test_a_frame_field_against_its_grade_carries_its_likeliest_cause(tmp_path):
    raw = with_field(MXFP4, 18, "<H", 64)  # k0 (§3.1 bytes 18-19); GRADE_MXFP4 says 32
    assert desc_fields(raw).k0 == 64
    sizes = plane_sizes(desc_fields(raw), SHAPE)
    (f,) = findings(write(tmp_path / "m.safetensors", raw, sizes))
    assert (f.kind.value, f.tensor) == ("grade_unknown", W)
    assert f.message == (f"{W}: GradeUnknown (step 2): frame field k0 is 64 but grade "
                         "GRADE_MXFP4 implies 32")
    assert (f.detail["step"], f.detail["clause"]) == (2, "frame.k0")
    assert f.detail["likeliest_cause"] == ("the tensor was quantised at group size 64 but the "
                                           "grade says 32 (or the other way round)")


def _zero_planes_digest() -> str:
    # the planes are zeros, so any placement stores the same bytes
    return f"{ref_digest([bytes(RIGHT[0]), bytes(RIGHT[1]), b'', b'']):032x}"


def test_deep_checks_the_digest_of_a_tiled_tensor_whose_sizes_hold(tmp_path):
    wrong = "00" * 16
    assert wrong != _zero_planes_digest()
    for payload in (False, True):
        got = findings(write(tmp_path / f"m{payload}.safetensors", tiled(), RIGHT,
                             payload=payload, digest=wrong), deep=True)
        assert [(f.kind.value, f.tensor) for f in got] == [("digest_mismatch", W)], payload
        assert got[0].detail == {"expected": wrong, "actual": _zero_planes_digest()}


# ------------------------------------------------- GGUF tensors that overlap

OVERLAP = "the next tensor starts inside this tensor's bytes: the file's tensor offsets overlap"
GA, GB = "blk.0.attn_k.weight", "blk.0.attn_q.weight"


def _gguf(path, add):
    """A GGUF written by gguf-py; ``add(writer)`` adds keys and tensors."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch="llama")
    add(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _move_tensor(path, name: str, offset: int) -> None:
    """Set ``name``'s data offset in the GGUF tensor table (name as u64
    length + bytes, n_dims u32, dims u64 each, type u32, offset u64)."""
    raw = bytearray(path.read_bytes())
    key = struct.pack("<Q", len(name)) + name.encode()
    at = raw.rfind(key) + len(key)
    (n_dims,) = struct.unpack_from("<I", raw, at)
    struct.pack_into("<Q", raw, at + 4 + 8 * n_dims + 4, offset)
    path.write_bytes(bytes(raw))


def test_a_grit_native_gguf_tensor_the_next_one_starts_inside_is_not_called_truncated(tmp_path):
    import gguf

    def add(w):
        w.add_uint32("grit.version", 1)
        for n in (GA, GB):
            w.add_string(f"grit.desc.{n}", MXFP4.hex())
            w.add_key_value(f"grit.shape.{n}", SHAPE, gguf.GGUFValueType.ARRAY,
                            sub_type=gguf.GGUFValueType.INT64)
            w.add_tensor(n, np.zeros(sum(RIGHT), dtype=np.int8),
                         raw_dtype=gguf.GGMLQuantizationType.I8)

    path = _gguf(tmp_path / "m.gguf", add)
    assert findings(path) == []
    # 544 bytes each, 32-byte aligned: GB moved from 544 back to 512 leaves
    # GA 512 bytes of its own, its whole data plane and none of scale0
    _move_tensor(path, GB, RIGHT[0])
    got = [f for f in findings(path) if f.tensor == GA and "payload" in f.message]
    assert [f.message for f in got] == [
        f"{GA}: payload is {RIGHT[0]:,} bytes; the descriptor requires {sum(RIGHT):,}. "
        f"scale0 plane is 0 bytes; descriptor requires {RIGHT[1]}. Likeliest cause: {OVERLAP}."]
    assert got[0].detail["likeliest_cause"] == OVERLAP
    # the file cut inside GB too: GB is the truncated file's, GA still overlaps
    path.write_bytes(path.read_bytes()[:-200])
    got = findings(path)
    assert [f.detail["tensors"] for f in got if f.tensor is None] == [[GB]]
    assert [f.detail["likeliest_cause"] for f in got if f.tensor == GA and
            "payload" in f.message] == [OVERLAP]


def test_a_ggml_block_tensor_the_next_one_starts_inside_is_not_called_truncated(tmp_path):
    import gguf

    block, size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q8_0]  # 32 values, 34 bytes
    rows = 4  # four blocks: 136 bytes, the next tensor 32-byte aligned at 160

    def add(w):
        for n in (GA, GB):
            w.add_tensor(n, np.zeros((rows, size), dtype=np.uint8),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)

    path = _gguf(tmp_path / "m.gguf", add)
    assert findings(path) == []
    _move_tensor(path, GB, 128)
    got = [f for f in findings(path) if f.tensor == GA and "on disk" in f.message]
    # Q8_0 as GRIT: s8 codes (one byte a value) ‖ one binary16 scale a block
    planes = [rows * block, rows * 2, 0, 0]
    assert sum(planes) == rows * size
    assert [f.message for f in got] == [
        f"{GA} (ggml:Q8_0): 128 bytes on disk; the descriptor in its placements "
        f"(data=BLOCK_AOS, scale=BLOCK_AOS) requires {rows * size} "
        f"({' + '.join(map(str, planes))}). Likeliest cause: {OVERLAP}."]


def test_a_module_whose_scale_sits_in_a_cut_shard_names_a_short_plane(tmp_path):
    """A module straddling two shards (weight in the first, its per-row
    scale in the second), the second cut right after its header: the
    second shard is the truncated file; the first's module has a scale
    plane of 0 bytes of the 4 rows × 4 F32 bytes its descriptor requires."""
    from grit_scan.writers import Raw, write_safetensors

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    one = tmp_path / "model-00001-of-00002.safetensors"
    two = tmp_path / "model-00002-of-00002.safetensors"
    m0, m1 = "model.layers.0.mlp.down_proj", "model.layers.1.mlp.down_proj"
    first = {m0 + ".weight": Raw("F8_E4M3", [4, 32], bytes(128)),
             m1 + ".weight": Raw("F8_E4M3", [4, 32], bytes(128)),
             m1 + ".weight_scale": Raw("F32", [4, 1], bytes(16))}
    second = {m0 + ".weight_scale": Raw("F32", [4, 1], bytes(16))}
    write_safetensors(one, first)
    write_safetensors(two, second)
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({
        "metadata": {}, "weight_map": {n: p.name for p, part in ((one, first), (two, second))
                                       for n in part}}))
    raw = two.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    two.write_bytes(raw[:8 + n])  # the header whole, no data
    got = {(f.path.rsplit("/", 1)[-1], f.tensor): f for f in findings(tmp_path)}
    assert got[two.name, None].detail["tensors"] == [m0 + ".weight_scale"]
    f = got[one.name, m0 + ".weight"]
    assert (f.detail["plane"], f.detail["expected"], f.detail["actual"]) == (1, 16, 0)
    assert f.detail["likeliest_cause"] == ("the plane is short by 16 bytes: a truncated "
                                           "shard, a short read or a mis-served range")
    assert set(got) == {(two.name, None), (one.name, m0 + ".weight")}
