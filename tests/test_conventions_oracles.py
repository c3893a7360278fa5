"""Conventions held to the files the real producers wrote
(fixtures/producers, MANIFEST.json) and to the producers' own
configurations, read here with the safetensors library and json:

* which modules are quantised: exactly those whose stored tensors include a
  dtype that is not a 16/32-bit float, as each producer wrote them;
* what is not quantised: every other float tensor, counted by dtype in the
  file holding it (grit scan --json's ``unquantized``);
* the group size: the descriptor's k0 is the config's ``group_size``, or
  the row length (the tensor's last dimension, as stored) for per-channel
  schemes;
* the element width: the config's ``bits``.

Nothing expected here is read from grit_scan's tables.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from safetensors import safe_open

from grit_scan.cli import main

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
MANIFEST = json.loads((P / "MANIFEST.json").read_text())
FLOATS = {"F16", "BF16", "F32", "F64"}
CORRECT = sorted(e["path"] for e in MANIFEST["entries"]
                 if e.get("kind") == "hf-dir" and e.get("expect") == "correct")

# the convention each producer's files are (docs/conventions.md names them);
# None: a layout grit does not claim (its tensors are reported unchecked)
CONVENTION = {
    "awq-gemm-4bit-g64": "awq", "awq-gemv-4bit-g128": "awq", "awq/gemm-4bit-g128": "awq",
    "bnb-fp4": "bitsandbytes-fp4", "bnb-fp4-double-quant": "bitsandbytes-fp4",
    "bnb-nf4": "bitsandbytes-nf4", "bnb/nf4": "bitsandbytes-nf4",
    "bnb/int8": "bitsandbytes-int8",
    "ct/fp8-block": "fp8-block", "ct/fp8-dynamic-sharded": "fp8-per-channel",
    "ct-fp8-channel": "fp8-per-channel", "ct-fp8-tensor": "fp8-per-tensor",
    "ct/mxfp4a16": "compressed-tensors-mxfp4", "ct/mxfp8": "compressed-tensors-mxfp8",
    "ct/nvfp4a16-sharded": "compressed-tensors-nvfp4",
    "ct/w4a16-int": "compressed-tensors-pack-quantized",
    "ct/w4afp8": "compressed-tensors-int", "ct/w8a8-int8": "compressed-tensors-int",
    "fp8-finegrained-128": "fp8-block",
    "gptq/v1-8bit-perchannel": "gptq", "gptq/v1-legacy-4bit-g128": "gptq",
    "gptq/v2-4bit-g32-asym": "gptq",
    "mlx-q3-g32": "mlx-affine", "mlx-q4-g64": "mlx-affine", "mlx-q6-g128": "mlx-affine",
    "modelopt/fp8": "fp8-per-tensor", "modelopt/nvfp4": "modelopt-nvfp4",
}


def stored(sub):
    """file name -> {tensor: (dtype, shape)}, by the safetensors library."""
    out = {}
    for f in sorted((P / sub).glob("*.safetensors")):
        with safe_open(str(f), "np") as s:
            out[f.name] = {k: (s.get_slice(k).get_dtype(), tuple(s.get_slice(k).get_shape()))
                           for k in s.keys()}
    return out


def config(sub):
    cfg = json.loads((P / sub / "config.json").read_text())
    return cfg.get("quantization_config") or cfg.get("quantization") or {}


def module_of(name, modules):
    for m in modules:
        if name.startswith(m + "."):
            return m
    return None


def scanned(sub, capsys):
    try:
        main(["scan", "--json", str(P / sub)])
    except SystemExit:
        pass
    doc = json.loads(capsys.readouterr().out)
    return {a["path"].rsplit("/", 1)[-1]: a for a in doc["artifacts"]
            if a["path"].endswith(".safetensors")}


def linear_modules(files):
    """The modules holding a tensor that is not a 16/32-bit float: what the
    producer quantised (names up to the part the producer appended)."""
    mods = set()
    for ts in files.values():
        for n, (dt, _) in ts.items():
            if dt not in FLOATS:
                m = re.match(r"^(.*?(?:_proj|embed_tokens|lm_head))\.", n)
                assert m is not None, n
                mods.add(m.group(1))
    return mods


@pytest.mark.parametrize("sub", CORRECT)
def test_quantised_modules_and_unquantised_counts(sub, capsys):
    files = stored(sub)
    arts = scanned(sub, capsys)
    want = linear_modules(files)
    got = {x["name"]: x for a in arts.values() for x in a["tensors"]}
    conv = CONVENTION.get(sub)
    if conv is None:
        assert got == {}, sub
        return
    assert {module_of(n, want) for n in got} == want, sub
    assert len(got) == len(want)
    assert {x["convention"] for x in got.values()} == {conv}
    for x in got.values():
        # a descriptor is inferred exactly when a grade is; a tensor GRIT v1
        # cannot express says why, whether or not its grade is known
        assert (x["source"] == "inferred") == (x["grade"] is not None), x
        assert x["source"] in ("inferred", "none")
        assert x["grade"] is not None or x["reason"], x
    for f, ts in files.items():
        floats = Counter(dt for n, (dt, _) in ts.items() if module_of(n, want) is None)
        # an activation's scale (input_scale) is no part of the weight's
        # planes: a convention that does not check it counts it unquantised
        acts = Counter(dt for n, (dt, _) in ts.items() if n.endswith(".input_scale"))
        assert arts[f]["unquantized"] in (dict(floats), dict(floats + acts)), (sub, f)
        # a module is listed in the file holding its data (its packed or
        # low-precision weight), wherever its scales are
        data = {n for n, (dt, _) in ts.items()
                if dt not in FLOATS and re.search(r"\.(weight|weight_packed|qweight)$", n)}
        assert arts[f]["n_quantized"] == len(data), (sub, f)


def _k0(grade):
    m = re.search(r"\bk0=(\d+)", grade or "")
    return int(m.group(1)) if m else None


def _row_length(files, name):
    """The logical row length of a quantised weight: the float or FP8
    weight's last dimension as stored."""
    for ts in files.values():
        if name in ts:
            return ts[name][1][-1]
    raise KeyError(name)


GROUPED = ["awq-gemm-4bit-g64", "awq-gemv-4bit-g128", "awq/gemm-4bit-g128",
           "gptq/v2-4bit-g32-asym", "ct/mxfp4a16", "ct/mxfp8", "ct/w4afp8", "modelopt/nvfp4"]


def _group_size(qc):
    if "group_size" in qc:
        return qc["group_size"]
    sizes = {g["weights"].get("group_size") for g in qc.get("config_groups", {}).values()}
    assert len(sizes) == 1
    return sizes.pop()


@pytest.mark.parametrize("sub", GROUPED)
def test_k0_is_the_configured_group_size(sub, capsys):
    gs = _group_size(config(sub))
    assert isinstance(gs, int) and gs > 0
    got = [x for a in scanned(sub, capsys).values() for x in a["tensors"]]
    assert got and {_k0(x["grade"]) for x in got} == {gs}


@pytest.mark.parametrize("sub", ["ct/fp8-dynamic-sharded", "ct/w8a8-int8"])
def test_per_channel_k0_is_the_row_length(sub, capsys):
    strategies = {g["weights"]["strategy"] for g in config(sub)["config_groups"].values()}
    assert strategies == {"channel"}
    files = stored(sub)
    got = [x for a in scanned(sub, capsys).values() for x in a["tensors"]]
    assert got
    for x in got:
        assert _k0(x["grade"]) == _row_length(files, x["name"]), x["name"]


@pytest.mark.parametrize("sub,bits", [("awq-gemm-4bit-g64", 4), ("gptq/v2-4bit-g32-asym", 4),
                                      ("ct/w8a8-int8", 8)])
def test_element_width_is_the_configured_bits(sub, bits, capsys):
    qc = config(sub)
    declared = qc.get("bits") or qc.get("w_bit") or {
        g["weights"]["num_bits"] for g in qc.get("config_groups", {}).values()}.pop()
    assert declared == bits
    got = [x for a in scanned(sub, capsys).values() for x in a["tensors"]]
    assert got
    for x in got:
        e = re.search(r"\be=([us])(\d+)\b", x["grade"])
        assert e is not None and int(e.group(2)) == bits, x["grade"]


def _raw_tensor(path, name):
    """A tensor read with nothing but struct and json (the safetensors
    format: an 8-byte little-endian header length, a JSON header, data)."""
    import struct

    import ml_dtypes
    import numpy as np

    dtypes = {"F8_E4M3": ml_dtypes.float8_e4m3fn, "BF16": ml_dtypes.bfloat16,
              "F32": np.float32}
    raw = Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    e = json.loads(raw[8:8 + n])[name]
    a, b = e["data_offsets"]
    return np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dtypes[e["dtype"]]).reshape(e["shape"])


def test_sharded_fp8_modules_decode_as_the_producer_dequantises():
    """Every module of a compressed-tensors FP8 checkpoint that transformers
    sharded over 7 files, several with the weight in one shard and its scale
    in another: grit's decode equals compressed-tensors' dequantisation,
    (weight × scale) in float32 rounded to bfloat16 -- the formula checked
    here against the producer's own dequantised tensor first."""
    import ml_dtypes
    import numpy as np
    from safetensors.numpy import load_file

    from grit_scan.api import load_tensor, tensor_bytes
    from grit_scan.codec.decode import decode
    from grit_scan.codec.grade import registry

    sub = P / "ct/fp8-dynamic-sharded"
    wm = json.loads((sub / "model.safetensors.index.json").read_text())["weight_map"]

    def producer(mod):
        w = _raw_tensor(sub / wm[f"{mod}.weight"], f"{mod}.weight")
        s = _raw_tensor(sub / wm[f"{mod}.weight_scale"], f"{mod}.weight_scale")
        prod = w.astype(np.float32) * s.astype(np.float32)
        return prod.astype(ml_dtypes.bfloat16).astype(np.float32)

    k = "model.layers.0.self_attn.k_proj"
    ref = load_file(str(P / "ct/fp8-dynamic-sharded.dequant.safetensors"))[f"{k}.weight"]
    assert (producer(k) == ref).all()  # the formula is the producer's

    mods = sorted(n[:-len(".weight")] for n in wm if n.endswith("_proj.weight"))
    split = [m for m in mods if wm[f"{m}.weight"] != wm[f"{m}.weight_scale"]]
    assert len(mods) == 14 and split  # some modules do straddle two shards
    for mod in mods:
        art, q = load_tensor(f"{sub}::{mod}.weight")
        ours = decode(q.desc, list(q.shape), tensor_bytes(art, q),
                      grades=registry([q.grade] if q.grade else []), layouts=q.layouts)
        want = producer(mod)
        ours = np.asarray(ours, dtype=np.float32).reshape(want.shape)
        assert ((ours == want) | (np.isnan(ours) & np.isnan(want))).all(), mod


PACKED = ["gptq/v1-legacy-4bit-g128", "gptq/v2-4bit-g32-asym", "gptq/v1-8bit-perchannel",
          "awq/gemm-4bit-g128", "awq-gemm-4bit-g64"]


def _quant_config(sub):
    d = P / sub
    cfg = config(sub)
    for extra in ("quantize_config.json", "quant_config.json"):
        if (d / extra).exists():
            cfg = {**json.loads((d / extra).read_text()), **cfg}
    return cfg


@pytest.mark.parametrize("sub", PACKED)
def test_packed_int_notes(sub):
    """AWQ GEMM interleaves each word's nibbles [0,2,4,6,1,3,5,7] (AutoAWQ's
    pack order); GPTQ v1 stores each zero point minus one, v2 as it is."""
    import grit_scan

    qs = [q for a in grit_scan.scan([str(P / sub)]).artifacts for q in a.quantized]
    assert len(qs) == 14
    for q in qs:
        awq = any("Perm([0,2,4,6,1,3,5,7])" in n for n in q.notes)
        gptq = any("v1 'gptq' stores z-1" in n for n in q.notes)
        assert (awq, gptq) == (sub.startswith("awq"), sub.startswith("gptq")), q.notes


@pytest.mark.parametrize("sub", PACKED)
def test_packed_int_grades_and_zero_point_bytes(sub, capsys):
    """GPTQ and AWQ from their files' shapes: qweight packs 32/b values per
    int32 word (GPTQ [in·b/32, out], AWQ [in, out·b/32]), scales are
    [in/group, out]; GRIT stores a sub-byte zero point one per byte (§3.4),
    so it predicts in/group·out zero-point bytes where qzeros holds
    in/group·out·b/8."""
    qc = _quant_config(sub)
    bits = qc.get("bits") or qc.get("w_bit")
    files = stored(sub)
    arts = scanned(sub, capsys)
    got = {x["name"]: x for a in arts.values() for x in a["tensors"]}
    assert len(got) == 14
    for name, x in got.items():
        mod = name[:-len(".weight")]
        ts = {n: v for f in files.values() for n, v in f.items()}
        (_, qw), (_, sc), (_, qz) = ts[f"{mod}.qweight"], ts[f"{mod}.scales"], ts[f"{mod}.qzeros"]
        if sub.startswith("gptq"):
            k, n = qw[0] * 32 // bits, qw[1]
        else:
            k, n = qw[0], qw[1] * 32 // bits
        assert sc[1] == n
        groups = sc[0]
        group = k // groups
        assert qc.get("group_size") in (group, -1)
        zp_bytes = qz[0] * qz[1] * 4
        assert zp_bytes == groups * n * bits // 8  # the producer's own packing
        v1 = sub.startswith("gptq") and qc.get("checkpoint_format", "gptq") == "gptq"
        canonical = (f"grit1(e=u{bits},k0={group},s0=binary16,zp=u{bits}"
                     f"{',zpc=minus1' if v1 else ''},esr=affineminmax)")
        if bits == 8:
            # 8-bit zero points are one per byte already: no §0.3(d) exclusion,
            # but the word packing is no placement, so no descriptor
            assert x["grade"] is None
            assert f"GRIT predicts {groups * n:,} zero-point bytes and the file holds as many" \
                in x["reason"]
        else:
            assert x["grade"] == canonical, name
            assert x["reason"].endswith(f"GRIT predicts {groups * n:,} zero-point bytes, the "
                                        f"file holds {zp_bytes:,}")
            assert f"packs its {bits}-bit zero points densely ({32 // bits} per int32 word)" \
                in x["reason"]
