"""Readers: conventions, GRIT headers, GGUF, manifests and trees.

Independent references: transformers' gpt-oss MXFP4 decode (LUT + ldexp)
and ModelOpt's NVFP4 formula from the research notes; gguf.quants for ggml.
"""

import json
import math
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFWriter
from hypothesis import given, settings
from hypothesis import strategies as st
from ref_decode import ref_decode
from ref_ids import desc_fields, plane_sizes
from ref_ids import gid as ref_gid

from grit_scan.api import tensor_bytes as payload_bytes
from grit_scan.artifact import Source
from grit_scan.codec import grade as G
from grit_scan.codec.decode import decode
from grit_scan.codec.encode import encode
from grit_scan.codec.fingerprint import gid
from grit_scan.codec.grade import registry
from grit_scan.issues import IssueCode
from grit_scan.parsers import fileio, readers
from grit_scan.parsers.tree import collect
from grit_scan.writers import (
    GritTensor,
    Raw,
    write_grit_gguf,
    write_grit_safetensors,
    write_safetensors,
)

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
F32 = np.float32


def art_of(path):
    s = collect([str(path)])
    return [a for a in s.artifacts if a.format in ("safetensors", "gguf")]


def q_named(arts, name):
    for a in arts:
        for q in a.quantized:
            if q.name == name:
                return a, q
    raise KeyError(name)


def grit_decode(a, q):
    return decode(q.desc, list(q.shape), payload_bytes(a, q),
                  grades=registry([q.grade]), layouts=q.layouts)


# ------------------------------------------------------------ conventions

E2M1_LUT = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
            -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def test_gpt_oss_mxfp4_inferred_and_decodes_like_transformers():
    arts = art_of(FIX / "conventions/gpt-oss-mxfp4")
    a, q = q_named(arts, "model.layers.0.mlp.experts.gate_up_proj")
    assert q.source == Source.INFERRED and q.grade.name == "GRADE_MXFP4"
    assert q.shape == (2, 64, 64) and q.convention == "gpt-oss-mxfp4"
    with fileio.SafeFile(a.abs_path) as f:
        blocks = np.frombuffer(f.read_at(q.planes[0].offset, q.planes[0].length), np.uint8)
        scales = np.frombuffer(f.read_at(q.planes[1].offset, q.planes[1].length), np.uint8)
    lut = np.array(E2M1_LUT, F32)
    lo, hi = blocks & 0xF, blocks >> 4
    nib = np.stack([lo, hi], axis=-1).reshape(-1, 32)  # low nibble -> element 2i
    exp = scales.astype(np.int32) - 127
    want = np.ldexp(lut[nib], exp[:, None]).astype(F32).reshape(q.shape)
    got = grit_decode(a, q)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    assert a.unquantized == {"BF16": 2}


def e4m3(codes):
    out = []
    for c in codes:
        c = int(c)
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        if e == 15 and m == 7:
            out.append(math.nan)
            continue
        v = (m / 8) * 2.0**-6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        out.append(-v if s else v)
    return np.array(out, F32)


def test_modelopt_nvfp4_is_decode_exact():
    arts = art_of(FIX / "conventions/modelopt-nvfp4")
    a, q = q_named(arts, "model.layers.0.mlp.down_proj.weight")
    assert q.grade.name == "GRADE_NVF4" and q.convention == "modelopt-nvfp4"
    with fileio.SafeFile(a.abs_path) as f:
        data = np.frombuffer(f.read_at(q.planes[0].offset, q.planes[0].length), np.uint8)
        ws = np.frombuffer(f.read_at(q.planes[1].offset, q.planes[1].length), np.uint8)
        ws2 = np.frombuffer(f.read_at(q.planes[2].offset, 4), "<f4")[0]
    elem = np.array(E2M1_LUT, F32)[np.stack([data & 0xF, data >> 4], -1).reshape(-1)]
    scale = (e4m3(ws) * ws2).astype(F32)  # weight_scale.f32 * weight_scale_2
    want = (elem.reshape(-1, 16) * scale[:, None]).astype(F32).reshape(q.shape)
    got = grit_decode(a, q)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


def test_ct_nvfp4_records_the_divisor():
    (a,) = art_of(FIX / "conventions/ct-nvfp4")
    q = a.quantized[0]
    # M3 (issue 12): a divisor global scale is not NVF4's multiplier: no grade at all
    assert q.grade is None and q.desc is None and q.convention == "compressed-tensors-nvfp4"
    assert any("DIVISOR" in n for n in q.notes)


def test_ct_mxfp4_and_fp8():
    (a,) = art_of(FIX / "conventions/ct-mxfp4")
    assert a.quantized[0].grade.name == "GRADE_MXFP4"
    (t,) = art_of(FIX / "conventions/fp8-per-tensor")
    q = t.quantized[0]
    # one scale over 16 rows: no §3.7 group spans rows and k0 is a uint16
    # (§3.1), so no descriptor (spec-notes.md); the bytes are still planned
    assert q.grade is None and q.desc is None and q.convention == "fp8-per-tensor"
    assert "§3.7" in q.reason and "§3.1" in q.reason
    assert q.planes[1].broadcast == 1 and q.planes[1].length == 4
    (iss,) = [i for i in t.issues if i.code == IssueCode.NOT_REPRESENTABLE]
    assert iss.detail["group_shape"] == "per-tensor" and iss.detail["formats"] == "e4m3/binary32"
    (c,) = art_of(FIX / "conventions/fp8-per-channel")
    assert c.quantized[0].planes[1].broadcast == 1
    assert c.quantized[0].convention == "fp8-per-channel"
    assert c.quantized[0].desc.k0 == c.quantized[0].shape[1]


def test_block_fp8_not_representable_with_clause():
    (a,) = art_of(FIX / "conventions/fp8-block")
    iss = [i for i in a.issues if i.code == IssueCode.NOT_REPRESENTABLE]
    assert len(iss) == 1 and iss[0].detail["clause"] == "§3.7" and "2-D" in iss[0].message


def test_gptq_reports_predicted_versus_present_aux_bytes():
    (a,) = art_of(FIX / "conventions/gptq")
    iss = [i for i in a.issues if i.code == IssueCode.NOT_REPRESENTABLE]
    (i,) = iss
    assert i.detail["clause"] == "§0.3(d)"
    assert (i.detail["predicted_aux"], i.detail["present_aux"]) == (6272, 3136)  # research §0.3d
    assert i.detail["data_ok"] and i.detail["scale_ok"]
    assert "6,272" in i.message and "3,136" in i.message
    q = a.quantized[0]
    assert "zpc=minus1" in q.grade.canonical  # checkpoint_format gptq: v1 stores z - 1


def test_awq_and_bnb():
    (a,) = art_of(FIX / "conventions/awq")
    q = a.quantized[0]
    assert q.convention == "awq" and any("Perm([0,2,4,6,1,3,5,7])" in n for n in q.notes)
    assert "zpc" not in q.grade.canonical  # AWQ: no minus one
    (b,) = art_of(FIX / "conventions/bnb-nf4")
    assert [i.detail["clause"] for i in b.issues
            if i.code == IssueCode.NOT_REPRESENTABLE] == ["§0.3(b)"]


def test_gguf_q4km():
    (a,) = art_of(FIX / "conventions/gguf-q4km")
    assert a.metadata["file_type_name"] == "Q4_K_M"
    kinds = {q.convention for q in a.quantized}
    assert kinds == {"ggml:Q4_K", "ggml:Q6_K"}
    q6 = next(q for q in a.quantized if q.convention == "ggml:Q6_K")
    assert q6.desc is None and "offset" in q6.reason
    assert a.unquantized == {"F32": 4}


def test_gguf_mapped_tensors_decode_like_gguf_py():
    import gguf

    for d in ("conventions/gguf-q4km", "conventions/gguf-mxfp4"):
        (a,) = art_of(FIX / d)
        for q in a.quantized:
            if q.desc is None:
                continue
            raw = np.frombuffer(payload_bytes(a, q), np.uint8).reshape(q.shape[0], -1)
            code = {"ggml:Q4_K": 12, "ggml:Q8_0": 8, "ggml:MXFP4": 39}[q.convention]
            want = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(code))
            got = grit_decode(a, q)
            assert np.array_equal(got, want)  # values (the -0 of MXFP4 compares equal)


@pytest.mark.parametrize("name", list(G.REGISTERED))
def test_a4_grades_written_and_read_back_with_identical_gids(tmp_path, name):
    g = G.REGISTERED[name]
    e = encode(np.random.default_rng(1).standard_normal((4, 512)).astype(F32), g, 1)
    raw = bytes.fromhex(e.desc.hex())
    want = ref_gid(g.canonical, raw, e.shape).to_bytes(16, "big")  # §6.3, independently
    sizes = plane_sizes(desc_fields(raw), e.shape)
    planes = [e.payload[sum(sizes[:i]) : sum(sizes[: i + 1])] for i in range(4)]
    want_values = ref_decode(desc_fields(raw), e.shape, planes)
    t = GritTensor.from_encoded("model.layers.0.mlp.w.weight", e, g)
    write_grit_safetensors(tmp_path / "a.safetensors", [t])
    write_grit_safetensors(tmp_path / "b.safetensors", [t], as_payload=True)
    write_grit_gguf(tmp_path / "c.gguf", [t])
    for f in ("a.safetensors", "b.safetensors", "c.gguf"):
        (a,) = art_of(tmp_path / f)
        (q,) = a.quantized
        assert q.source in (Source.GRIT_HEADER, Source.GGUF_KV)
        assert gid(q.grade, q.desc, q.shape) == want
        got = np.asarray(grit_decode(a, q), np.float32)
        assert ((got.view(np.uint32) == want_values.view(np.uint32))
                | (np.isnan(got) & np.isnan(want_values))).all()


def test_unregistered_grade_through_the_grades_map(tmp_path):
    g = G.parse_grade("grit1(e=e4m3,k0=64,s0=binary16,esr=ratiomaxabs)")
    e = encode(np.ones((2, 64), F32), g, 1)
    write_grit_safetensors(tmp_path / "u.safetensors", [GritTensor.from_encoded("w", e, g)],
                           layouts={})
    (a,) = art_of(tmp_path / "u.safetensors")
    assert a.quantized[0].grade.canonical == g.canonical


def test_layout_expressions_from_the_header(tmp_path):
    from grit_scan.codec import placement as P

    e = encode(np.random.default_rng(2).standard_normal((32, 64)).astype(F32),
               G.GRADE_MXFP4, 1)
    w = P.layout_word("Tile(RowMajor,[16,2])")
    d = e.desc.with_placements(scale=w)
    from grit_scan.codec.layout import from_canonical

    stored = from_canonical(d, e.shape, e.planes, {w: "Tile(RowMajor,[16,2])"})
    t = GritTensor("w", d, e.shape, payload=stored, digest=False)
    write_grit_safetensors(tmp_path / "x.safetensors", [t],
                           layouts={w: "Tile(RowMajor,[16,2])"})
    (a,) = art_of(tmp_path / "x.safetensors")
    q = a.quantized[0]
    assert q.layouts == {w: "Tile(RowMajor,[16,2])"}
    assert np.array_equal(grit_decode(a, q), decode(e.desc, list(e.shape), e.payload))


# ------------------------------------------------------------ broken variants


def test_truncated_shard_lists_intact_tensors():
    (a1, a2) = art_of(FIX / "broken/truncated-shard")
    assert a2.parsed and a1.parsed
    tr = {i.tensor: (i.detail["expected"], i.detail["actual"])
          for i in a2.issues if i.code == IssueCode.TRUNCATED}
    # the last 40 bytes are gone: all 32 of the last scale plane, 8 of its data plane
    assert tr == {"model.layers.1.self_attn.k_proj.weight.grit_scale0": (32, 0),
                  "model.layers.1.self_attn.k_proj.weight.grit_data": (512, 504)}
    intact = [t.name for t in a2.tensors if t.available == t.nbytes]
    assert len(intact) == len(a2.tensors) - 2
    assert "model.layers.1.self_attn.q_proj.weight.grit_data" in intact
    assert all("truncated" in i.message for i in a2.issues if i.code == IssueCode.TRUNCATED)


def test_duplicate_tensor_keys_are_reported(tmp_path):
    body = (b'{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},'
            b'"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}')
    p = tmp_path / "dup.safetensors"
    p.write_bytes(struct.pack("<Q", len(body)) + body + b"abcd")
    a = readers.read_safetensors(str(p), "dup.safetensors")
    assert [i.code for i in a.issues] == [IssueCode.DUPLICATE, IssueCode.REFERENCE]
    assert a.issues[1].detail["opens"] is True  # the library keeps the last key
    assert a.issues[0].tensor == "a"


def test_every_dtype_of_safetensors_0_8(tmp_path):
    from grit_scan.parsers.safetensors_reader import DTYPE_BITS

    t = {f"t.{k}": Raw(k, [8], bytes(v)) for k, v in DTYPE_BITS.items()}
    write_safetensors(tmp_path / "d.safetensors", t)
    a = readers.read_safetensors(str(tmp_path / "d.safetensors"), "d")
    assert a.parsed and not [i for i in a.issues if i.code != IssueCode.NOTE]
    assert len(a.tensors) == len(DTYPE_BITS)


# ------------------------------------------------------------ header-only


def test_scans_read_headers_only_on_multi_gb_sparse_files(tmp_path):
    n = 3 * 1024**3
    header = json.dumps({"big.weight": {"dtype": "U8", "shape": [n],
                                        "data_offsets": [0, n]}}).encode()
    p = tmp_path / "big.safetensors"
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.truncate(8 + len(header) + n)  # sparse: no data blocks written
    w = GGUFWriter(str(tmp_path / "big.gguf"), arch="llama")
    nb = 2 * 1024**3 // 144 * 144
    w.add_tensor_info("blk.0.ffn_up.weight", [nb // 144, 144], np.dtype(np.uint8), nb,
                      raw_dtype=GGMLQuantizationType.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    g = tmp_path / "big.gguf"
    head = g.stat().st_size
    os.truncate(g, head + nb)
    meter = fileio.ReadMeter()
    s = collect([str(tmp_path)], meter=meter)
    used = meter.total
    assert {a.format for a in s.artifacts} == {"safetensors", "gguf"}
    assert all(a.parsed and not a.issues for a in s.artifacts)
    # header bytes, the 16-byte content sniff of each file, and the GGUF
    # reader's read-ahead (it starts at 4 KiB and at most doubles the header)
    assert used <= 8 + len(header) + 16 * 2 + max(4096, 2 * head), used


# --------------------------------------------- the bulk path agrees with safetensors


_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "U8": np.uint8, "I32": np.int32,
              "I64": np.int64, "U16": np.uint16}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(_ST_DTYPES)),
                          st.lists(st.integers(0, 5), max_size=4)),
                min_size=1, max_size=12))
def test_bulk_header_path_matches_safetensors_library(tmp_path_factory, specs):
    """Every valid header takes the bulk (column) path; its records must be
    what the Rust reference reads: names, dtypes, shapes (scalars and empty
    tensors included) and byte ranges, in header order of offsets."""
    from safetensors import safe_open
    from safetensors.numpy import save_file

    arrays = {}
    for i, (dt, shape) in enumerate(specs):
        arrays[f"t{i}"] = np.zeros(shape, dtype=_ST_DTYPES[dt])
    path = tmp_path_factory.mktemp("bulk") / "x.safetensors"
    save_file(arrays, str(path))
    (art,) = art_of(path)
    assert art.parsed and not art.issues
    assert type(art.tensors).__name__ == "TensorTable"  # the bulk path was taken
    (n,) = struct.unpack("<Q", path.read_bytes()[:8])
    ours = {t.name: t for t in art.tensors}
    with safe_open(str(path), framework="numpy") as f:
        assert sorted(f.keys()) == sorted(ours)
        for name in f.keys():
            sl = f.get_slice(name)
            assert ours[name].shape == tuple(sl.get_shape())
            assert ours[name].dtype == sl.get_dtype()
    header = json.loads(path.read_bytes()[8 : 8 + n])
    for name, t in ours.items():
        start, end = header[name]["data_offsets"]
        assert (t.offset, t.nbytes, t.available) == (8 + n + start, end - start, end - start)


class _Bytes:
    """An in-memory ByteSource."""

    def __init__(self, data: bytes) -> None:
        self.data, self.name, self.size = data, "mem", len(data)

    def read_at(self, offset: int, n: int) -> bytes:
        return self.data[offset:offset + n]

    def changed(self) -> str | None:
        return None


_KEYS = st.sampled_from(["a", "b", "a.weight", 'q"x', "c:d", "data_offsets", "dtype", "shape",
                         "__metadata__", "data\\u005foffsets", "e\\\\f"])


@st.composite
def _headers(draw):
    """Header texts with the keys written out by hand, so that a key can
    appear twice (at the top, inside an entry, inside __metadata__), with
    escapes, quotes and colons in names, and with values of other types."""
    parts, off = [], 0
    for _ in range(draw(st.integers(0, 6))):
        key = draw(_KEYS)
        kind = draw(st.sampled_from(["entry", "entry+dup", "meta", "string", "list"]))
        if kind.startswith("entry"):
            n = draw(st.integers(0, 3))
            fields = ['"dtype":"U8"', f'"shape":[{n}]', f'"data_offsets":[{off},{off + n}]']
            off += n
            if kind == "entry+dup":
                fields.append(draw(st.sampled_from(['"dtype":"F32"', '"shape":[1]',
                                                    '"data\\u005foffsets":[0,0]'])))
            parts.append(f'"{key}":{{{",".join(fields)}}}')
        elif kind == "meta":
            parts.append(f'"__metadata__":{{"format":"pt","x":"{draw(_KEYS)}"}}')
        elif kind == "string":
            parts.append(f'"{key}":"{draw(_KEYS)}"')
        else:
            parts.append(f'"{key}":["{draw(_KEYS)}",1]')
    return "{" + ",".join(parts) + "}", off


def read_header_by(data: bytes, path: str) -> tuple[object, ...]:
    """safetensors_reader.read_header of ``data`` by one path: "hook" (the
    reference: every object through the duplicate-key hook), "plain" (the
    standard library's parse without the hook, where the text allows it) or
    "typed" (the typed decode first, safetensors_json, whatever the
    header's length): its table, tensors, metadata and issues, or its error."""
    from grit_scan.artifact import ArtifactDraft, Format
    from grit_scan.parsers import safetensors_reader as sr

    art = ArtifactDraft(path="m", abs_path="m", format=Format.SAFETENSORS)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sr, "TYPED_FROM", 0 if path == "typed" else 1 << 62)
        if path == "hook":
            m.setattr(sr, "_loads_plain", lambda *_: None)
        try:
            hdr = sr.read_header(_Bytes(data), art)
        except sr.ParseError as exc:
            return ("error", str(exc))
    table = list(hdr.table) if hdr.table is not None else None
    return (table, hdr.tensors, hdr.metadata, [(i.code, i.message) for i in art.issues])


@settings(max_examples=300, deadline=None)
@given(_headers())
def test_header_parse_without_the_hook_finds_what_the_hook_finds(doc):
    """safetensors_reader parses a header without its duplicate-key hook,
    or by its typed decode, only when the text proves there is no
    duplicate; the artifact (tables, issues, errors) is the one the hook
    path gives."""
    text, size = doc
    raw = text.encode()
    data = struct.pack("<Q", len(raw)) + raw + bytes(size)
    want = read_header_by(data, "hook")
    assert read_header_by(data, "plain") == want
    assert read_header_by(data, "typed") == want


_JSON_KEYS = st.sampled_from(["a", "b", "\\u0061", "", "é", "\\\"", "dtype", "x y", "\\n"])
_JSON_SCALARS = st.one_of(
    st.sampled_from(["null", "true", "false", "0", "-1", "1.5e3", '"s"', '"\\u00e9"', '"a\\\\b"',
                     "NaN", "Infinity", "-Infinity", "123456789012345678901234567890"]),
    st.integers().map(str), st.text(max_size=5).map(json.dumps))


def _json_texts() -> st.SearchStrategy[str]:
    """JSON texts written by hand, so that a key may repeat inside any
    object, at any depth, spelled plainly or escaped, with NaN and Infinity
    (which the header refuses), huge integers and any whitespace."""
    ws = st.sampled_from(["", " ", "\n\t"])

    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        member = st.tuples(_JSON_KEYS, ws, inner).map(lambda t: f'"{t[0]}":{t[1]}{t[2]}')
        return st.one_of(st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]"),
                         st.lists(member, max_size=5).map(lambda xs: "{" + ",".join(xs) + "}"))

    return st.tuples(ws, st.recursive(_JSON_SCALARS, grow, max_leaves=25), ws).map("".join)


def _reference(text: str) -> tuple[str, object, list[str]]:
    """The standard library's reading of ``text``: json.loads's value (the
    last of duplicate keys kept), the keys met again in their object (in
    the order json.loads closes the objects), or the error's type."""
    dups: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        seen: set[str] = set()
        for k, _ in items:
            if k in seen:
                dups.append(k)
            seen.add(k)
        return dict(items)

    def no_constant(name: str) -> None:
        raise ValueError(name)

    try:
        value = json.loads(text, parse_constant=no_constant)
        json.loads(text, object_pairs_hook=pairs)
    except ValueError as exc:
        return (type(exc).__name__, None, [])
    return ("ok", value, dups)


@settings(max_examples=1000, deadline=None)
@given(_json_texts())
def test_header_json_is_json_loads(text: str) -> None:
    """safetensors_reader.loads_header is the standard library's json: the
    same value (types and key order included), the same duplicate keys
    refused, the same texts refused (NaN and Infinity too)."""
    from grit_scan.parsers import safetensors_reader as sr

    want = _reference(text)
    try:
        obj, dups = sr.loads_header(text)
        got: tuple[str, object, list[str]] = ("ok", obj, dups)
    except ValueError as exc:
        got = (type(exc).__name__, None, [])
    assert got == want
    assert json.dumps(got[1]) == json.dumps(want[1])  # key order and int/bool types too


def test_header_json_object_budget() -> None:
    from grit_scan.parsers import safetensors_reader as sr

    text = "{" + ",".join(f'"t{i}":{{}}' for i in range(5)) + "}"  # six objects
    assert sr.loads_header(text, 6)[0] == json.loads(text)
    with pytest.raises(sr._OverBudget) as exc:
        sr.loads_header(text, 5)
    assert exc.value.objects == 6


def test_fixture_tables_match_the_safetensors_package() -> None:
    """Every valid safetensors fixture, read by grit, against an
    independent reader: names, dtypes and shapes from the safetensors
    package, offsets from the standard library's json, metadata from both."""
    from grit_scan.artifact import ArtifactDraft, Format
    from grit_scan.parsers import safetensors_reader as sr

    safetensors = pytest.importorskip("safetensors")
    root = Path(__file__).resolve().parent.parent / "fixtures"
    checked = 0
    for p in sorted(root.glob("**/*.safetensors")):
        data = p.read_bytes()
        try:
            with safetensors.safe_open(str(p), "numpy") as f:
                theirs = {k: (f.get_slice(k).get_dtype(), list(f.get_slice(k).get_shape()))
                          for k in f.keys()}
                their_meta = f.metadata() or {}
        except Exception:  # noqa: BLE001 - a fixture the reference refuses
            continue
        art = ArtifactDraft(path="m", abs_path="m", format=Format.SAFETENSORS)
        try:
            hdr = sr.read_header(_Bytes(data), art)
        except sr.ParseError:
            continue  # refused by grit as well as read by safetensors: other tests
        rows = list(hdr.table) if hdr.table is not None else list(hdr.tensors.values())
        if art.issues:
            continue
        n = struct.unpack("<Q", data[:8])[0]
        obj = json.loads(data[8:8 + n])
        assert hdr.metadata == their_meta == obj.pop("__metadata__", {}), p
        assert {t.name: (t.dtype, list(t.shape)) for t in rows} == theirs, p
        for t in rows:
            start, end = obj[t.name]["data_offsets"]
            assert (t.offset, t.nbytes) == (8 + n + start, end - start), p
        checked += 1
    assert checked > 20


def test_header_duplicates_are_found_with_or_without_escapes():
    from grit_scan.artifact import ArtifactDraft, Format
    from grit_scan.parsers import safetensors_reader as sr

    for text in ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                 '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
                 '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"dtype":"U8"}}',
                 '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                 '"\\u0061":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'):
        raw = text.encode()
        art = ArtifactDraft(path="m", abs_path="m", format=Format.SAFETENSORS)
        sr.read_header(_Bytes(struct.pack("<Q", len(raw)) + raw + b"\0"), art)
        assert [i.code for i in art.issues][:1] == [IssueCode.DUPLICATE], text
    # a header without duplicates (and a key with a colon) takes the plain parse
    plain = ('{"__metadata__":{"format":"pt"},"m:0.weight":'
             '{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}')
    assert sr._loads_plain(plain) == json.loads(plain)


def test_gguf_magic_sniffed_without_the_reader_is_the_readers():
    """readers.py sniffs GGUF files by their magic without importing the GGUF
    reader (start-up, issue 15): the same four bytes the reader checks."""
    from grit_scan.parsers import gguf_reader

    assert readers.GGUF_MAGIC == gguf_reader.MAGIC == b"GGUF"
