"""The GGUF tensor-info table (issue 15): the one-pass walk over a window
and the packed-layout check must give exactly what reading every entry
field by field gives, the reader that names each problem (gguf_reader._info
and _lay_out_each, the code the walk hands every entry it stops at).
Generated and mutated headers are read both ways; the artifacts, issues,
error messages and bytes read must be identical.  Well-formed files are checked against gguf-py's
own reader, an independent implementation."""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from collections.abc import Iterator

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFReader, GGUFWriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grit_scan.artifact import Format
from grit_scan.parsers import fileio, gguf_reader, readers
from grit_scan.parsers.ggml_types import block_table
from grit_scan.parsers.interface import ReadContext

U64 = (1 << 64) - 1
I64_MAX = (1 << 63) - 1

# ------------------------------------------------------------ file building


def gs(s: bytes) -> bytes:
    return struct.pack("<Q", len(s)) + s


def entry(name: bytes, ne: list[int], ttype: int, offset: int) -> bytes:
    return gs(name) + struct.pack("<I", len(ne)) + b"".join(
        struct.pack("<Q", d) for d in ne) + struct.pack("<IQ", ttype, offset)


def nbytes_of(ne: list[int], ttype: int) -> int:
    """From gguf-py's block table, not ours."""
    bs, size = GGML_QUANT_SIZES[GGMLQuantizationType(ttype)]
    n = 1
    for d in ne:
        n *= d
    return n // bs * size


def header(kv: list[bytes], tensors: list[bytes], align: int, data: int) -> bytes:
    body = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)) + b"".join(kv) + b"".join(
        tensors)
    return body + bytes((-len(body)) % align + data)


# Type codes: mapped (Q8_0, Q4_K, MXFP4), unquantised, not representable,
# and unknown or removed (4, 5, 64, 2^32-1).
TYPES = [0, 1, 8, 12, 14, 24, 30, 39, 2, 4, 5, 64, 0xFFFFFFFF]
KNOWN = [0, 1, 8, 12, 14, 24, 30, 39, 2]
DIMS = [0, 1, 2, 32, 64, 256, 4096, 2**31, I64_MAX, 2**63, U64]


@st.composite
def tables(draw: st.DrawFn, align: int) -> tuple[list[bytes], int]:
    """Tensor-info entries, usually well formed; in some tables one entry in
    a few is odd: a long, duplicate or non-UTF-8 name, a bad rank, a huge
    dimension, an unknown type, a misaligned or out-of-order offset.  With
    the end of the data when the tensors are packed."""
    n = draw(st.integers(0, 60))
    rate = draw(st.sampled_from([0, 0, 3, 40]))  # one entry in `rate` is odd; 0: none

    def odd_one() -> bool:
        return rate > 0 and draw(st.integers(1, rate)) == 1

    pool = [f"blk.{i // 3}.w{i}.weight".encode() for i in range(n)]
    odd = st.sampled_from([b"", b"\xff\xfe", "é".encode() * 40, b"a" * 63, b"b" * 64,
                           b"c" * 200, pool[0] if pool else b"dup"])
    entries, off = [], 0
    for i in range(n):
        name = draw(odd) if odd_one() else pool[i]
        if odd_one():
            ne = draw(st.lists(st.sampled_from(DIMS), min_size=0, max_size=6))
            ttype = draw(st.sampled_from(TYPES))
        else:
            ttype = draw(st.sampled_from(KNOWN))
            bs = GGML_QUANT_SIZES[GGMLQuantizationType(ttype)][0]
            ne = [bs * draw(st.integers(0, 3))] + draw(st.lists(st.integers(1, 4), max_size=3))
        if odd_one():
            offset = draw(st.sampled_from([0, 1, 31, 32, off + align, max(0, off - align), U64]))
        else:
            offset = off
        try:
            nb = nbytes_of(ne, ttype)
        except (ValueError, KeyError):
            nb = 0
        off = offset + -(-nb // align) * align if offset < U64 and nb < 2**40 else off
        entries.append(entry(name, ne, ttype, offset))
    return entries, off


def mutate(draw: st.DrawFn, blob: bytes) -> bytes:
    """Sometimes one byte flipped, or the bytes cut anywhere."""
    cut = draw(st.sampled_from([None, None, None, "flip", "cut"]))
    if cut == "flip" and blob:
        i = draw(st.integers(0, len(blob) - 1))
        return blob[:i] + bytes([blob[i] ^ draw(st.integers(1, 255))]) + blob[i + 1:]
    if cut == "cut":
        return blob[:draw(st.integers(0, len(blob)))]
    return blob


@st.composite
def gguf_files(draw: st.DrawFn) -> bytes:
    """A GGUF file around a table from ``tables``, its data whole, short or
    long, sometimes mutated.  A padding string moves the table across the
    reader's first 4 KiB window."""
    align = draw(st.sampled_from([32, 32, 64, 1]))
    kv = [gs(b"general.architecture") + struct.pack("<I", 8) + gs(b"llama")]
    if align != 32:
        kv.append(gs(b"general.alignment") + struct.pack("<II", 4, align))
    pad = draw(st.sampled_from([0, 0, 3900, 4000, 4060, 9000]))
    if pad:
        kv.append(gs(b"general.name") + struct.pack("<I", 8) + gs(b"x" * pad))
    entries, off = draw(tables(align))
    data = draw(st.sampled_from([off, off, max(0, off - 1), off + 100, 0]))
    return mutate(draw, header(kv, entries, align, min(data, 1 << 20)))


# ------------------------------------------------------------ the three ways


def per_entry_walk(data: bytes, pos: int, *_: object) -> tuple[int, int]:
    """A walk that takes nothing: every entry goes to the per-entry reader."""
    return pos, 0


@contextlib.contextmanager
def reading(way: str) -> Iterator[None]:
    saved = gguf_reader._infos, gguf_reader._starts
    if way == "python":
        gguf_reader._infos = gguf_reader._tensor_infos_py
        gguf_reader._starts = gguf_reader._packed_starts_py
    else:
        gguf_reader._infos = per_entry_walk
        gguf_reader._starts = lambda *_: None
    try:
        yield
    finally:
        gguf_reader._infos, gguf_reader._starts = saved


def outcome(path: str) -> tuple[object, ...]:
    meter = fileio.ReadMeter()
    a = readers.read_path(path, ReadContext("x.gguf", path, meter=meter), Format.GGUF)
    used = meter.total
    return (a.parsed, [(i.code, i.message, i.tensor, i.detail) for i in a.issues],
            list(a.tensors), a.unquantized, a.metadata,
            [(q.name, q.role, q.shape, q.source, q.desc, q.grade, q.convention, q.reason,
              q.payload, q.layouts) for q in a.quantized], used)


WAYS = ["per-entry", "python"]


def assert_read_alike(blob: bytes) -> tuple[object, ...]:
    """``blob`` read as a file the three ways: the outcomes are equal."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.gguf")
        with open(path, "wb") as f:
            f.write(blob)
        got = {}
        for way in WAYS:
            with reading(way):
                got[way] = outcome(path)
    for way in WAYS[1:]:
        assert got[way] == got["per-entry"], way
    return got["per-entry"]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(gguf_files())
def test_walk_reads_like_the_per_entry_reader(blob):
    assert_read_alike(blob)


def test_each_stop_reason_is_named_as_before():
    """One file per reason the walk stops at an entry: the message is the
    per-entry reader's, whichever way the table is read."""
    q = "blk.0.q.weight"
    cases = {
        "dup": [entry(q.encode(), [32], 8, 0), entry(q.encode(), [32], 8, 64)],
        "utf8": [entry(b"\xff", [32], 8, 0)],
        "rank0": [entry(b"w", [], 8, 0)],
        "rank5": [entry(b"w", [32, 1, 1, 1, 1], 8, 0)],
        "dim": [entry(b"w", [32, 2**63], 8, 0)],
        "overflow": [entry(b"w", [2**62, 4], 0, 0)],
        "type": [entry(b"w", [32], 4, 0)],
        "block": [entry(b"w", [33], 8, 0)],
        "align": [entry(b"w", [32], 8, 3)],
        "long": [entry(b"n" * 64, [32], 0, 0)],
        "overlap": [entry(b"a", [64], 0, 0), entry(b"b", [32], 0, 128)],
        "truncated": [entry(b"a", [1 << 20], 0, 0)],
    }
    issues = {}
    for name, entries in cases.items():
        issues[name] = assert_read_alike(header([], entries, 32, 256))[1]
        assert issues[name], name  # each of these is reported
    assert issues["dup"][-1][1] == f"duplicate tensor name {q!r}"


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
GGUF_FIXTURES = sorted(os.path.join(d, f) for d, _, fs in os.walk(FIXTURES) for f in fs
                       if f.endswith(".gguf"))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GGUF_FIXTURES), st.data())
def test_mutated_fixtures_read_alike(path, data):
    """The committed GGUF files (cut to 64 KiB, as fuzz/make_corpus.py cuts
    them), mutated: the three ways agree."""
    with open(path, "rb") as f:
        assert_read_alike(mutate(data.draw, f.read(65536)))


# ------------------------------------------------------------ unit level


@st.composite
def windows(draw: st.DrawFn) -> tuple[bytes, int, int, int, int]:
    """A window over a table (cut anywhere, sometimes mutated), a position
    at one of its entries, a count, an alignment and a rank limit."""
    align = draw(st.sampled_from([1, 32, 4096]))
    entries, _ = draw(tables(align))
    starts = [0]
    for e in entries:
        starts.append(starts[-1] + len(e))
    blob = mutate(draw, b"".join(entries) + draw(st.binary(max_size=16)))
    pos = min(draw(st.sampled_from(starts)), len(blob))
    return blob, pos, draw(st.integers(0, 80)), align, draw(st.sampled_from([0, 1, 2, 4, 5]))


# ------------------------------------------------------------ against gguf-py


@pytest.mark.parametrize("n,align", [(1, 32), (300, 32), (700, 64)])
def test_table_matches_gguf_py(tmp_path, n, align):
    """Columns against gguf's GGUFReader on a file its writer made: names,
    logical shapes, type names, absolute offsets and lengths; 300 and 700
    tensors put the table across the reader's first windows."""
    path = str(tmp_path / "m.gguf")
    w = GGUFWriter(path, arch="llama")
    if align != 32:
        w.add_custom_alignment(align)
    kinds = [(GGMLQuantizationType.Q4_K, 144, 256), (GGMLQuantizationType.F32, 4, 1),
             (GGMLQuantizationType.Q8_0, 34, 32), (GGMLQuantizationType.Q6_K, 210, 256)]
    for i in range(n):
        t, size, bs = kinds[i % len(kinds)]
        rows = 1 + i % 3
        raw = np.zeros((rows, size * (1 + i % 2)), dtype=np.uint8)
        w.add_tensor(f"blk.{i // 5}.tensor_with_a_longer_name.{n - i}.weight", raw,
                     raw_dtype=t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    theirs = {t.name: t for t in GGUFReader(path).tensors}
    for way in WAYS:
        with reading(way):
            a = readers.read_gguf(path, "m.gguf")
        assert a.parsed and not [i for i in a.issues if i.code != "not_representable"]
        names = list(a.tensors.names)
        assert names == sorted(theirs)
        for st_ in a.tensors:
            t = theirs[st_.name]
            assert st_.shape == tuple(int(x) for x in reversed(t.shape.tolist()))
            assert st_.dtype == t.tensor_type.name
            assert st_.offset == t.data_offset
            assert st_.nbytes == st_.available == t.n_bytes


def test_block_table_is_gguf_py_s():
    """The walk's per-type block sizes: gguf-py's table, (0, 0) for a code
    it does not know (removed types 4 and 5 among them)."""
    known = {t.value: GGML_QUANT_SIZES.get(t) for t in GGMLQuantizationType}
    table = block_table()
    for code in range(64):
        want = known.get(code) or {41: (128, 18), 42: (64, 18)}.get(code) or (0, 0)
        assert struct.unpack_from("<II", table, 8 * code) == want, code
    assert struct.unpack_from("<II", table, 8 * 12) == (256, 144)  # Q4_K, by the spec of ggml
