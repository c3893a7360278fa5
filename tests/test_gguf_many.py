"""A GGUF with thousands of tensors of mixed ggml types, in runs and
interleaved (issue 15: the reader builds each run of one mapped type with
C-level maps; the --json writer writes tensor records in batches).  The
QTensors are held to gguf-py's GGUFReader and the ggml type table; the
report text to ``json.dumps`` of the report's document."""

from __future__ import annotations

import io
import json
from collections import Counter

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFReader, GGUFWriter

from grit_scan.api import scan
from grit_scan.artifact import Source
from grit_scan.parsers import readers
from grit_scan.parsers.ggml_types import MAPPINGS, NOT_REPRESENTABLE
from grit_scan.report.formats import OutputFormat, render

T = GGMLQuantizationType
# types in runs of different lengths, then interleaved one by one
PATTERN = ([T.Q4_K] * 700 + [T.F32] * 3 + [T.Q8_0] * 40 + [T.MXFP4] * 5 + [T.Q6_K] * 2
           + [T.Q4_K, T.F32, T.Q8_0, T.Q6_K, T.MXFP4, T.Q4_K] * 600)


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("many") / "many.gguf")
    w = GGUFWriter(path, arch="llama")
    for i, t in enumerate(PATTERN):
        block_elems, block_bytes = GGML_QUANT_SIZES[t]
        rows = 1 + i % 3
        lead = (2,) if i % 7 == 0 else ()  # some rank-3 tensors
        raw = np.zeros((*lead, rows, block_bytes * (1 + i % 2)), dtype=np.uint8)
        # names in file order are not sorted: the table is
        w.add_tensor(f"blk.{i % 13}.t{len(PATTERN) - i:05d}.weight", raw, raw_dtype=t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_qtensors_are_gguf_py_tensors_through_the_type_table(many):
    art = readers.read_gguf(many, "many.gguf")
    theirs = sorted(GGUFReader(many).tensors, key=lambda t: t.name)
    quantised = [t for t in theirs if t.tensor_type != T.F32]
    assert [q.name for q in art.quantized] == [t.name for t in quantised]
    assert art.unquantized == {"F32": sum(t.tensor_type == T.F32 for t in theirs)}
    for q, t in zip(art.quantized, quantised):
        shape = tuple(int(x) for x in reversed(t.shape.tolist()))
        assert (q.name, q.role, q.shape) == (t.name, t.name, shape)
        assert q.payload is not None and q.planes is None
        assert (q.payload.tensor, q.payload.offset, q.payload.length) == (
            t.name, t.data_offset, t.n_bytes)
        assert (q.expected_digest, q.expected_gid, q.declared) == (None, None, None)
        assert list(q.notes) == []
        m = MAPPINGS.get(t.tensor_type.value)
        name = t.tensor_type.name
        assert q.convention == f"ggml:{name}"
        if m is None:
            assert q.source is Source.NONE and q.desc is None and q.grade is None
            assert q.reason == f"ggml {name}: {NOT_REPRESENTABLE[name]}"
        else:
            assert q.source is Source.GGML_TYPE and q.reason is None
            assert q.desc == m.descriptor(len(shape) - 1) and q.grade is m.grade
            assert q.layouts == m.layouts
    n_nr = sum(q.source is Source.NONE for q in art.quantized)
    assert Counter(i.code for i in art.issues) == {"not_representable": n_nr}


def test_tensors_of_one_type_and_rank_share_their_objects(many):
    """Memory per tensor (issue 15): descriptor, grade, convention, layouts
    and the (empty, immutable) notes are one object per (type, rank)."""
    art = readers.read_gguf(many, "many.gguf")
    by_kind: dict[tuple[str | None, int], set[tuple[int, ...]]] = {}
    for q in art.quantized:
        if q.source is Source.GGML_TYPE:
            by_kind.setdefault((q.convention, len(q.shape)), set()).add(
                (id(q.desc), id(q.grade), id(q.convention), id(q.layouts), id(q.notes)))
    assert len(by_kind) >= 6 and all(len(ids) == 1 for ids in by_kind.values())
    q = next(q for q in art.quantized if q.source is Source.GGML_TYPE)
    with pytest.raises(AttributeError):  # a note would reach every tensor: refused
        q.notes.append("x")


def test_json_records_in_batches_are_the_document(many):
    """More tensors than one batch of records, of many kinds: the text is
    ``json.dumps`` of the report's document, written in several pieces."""
    report = scan([many])
    assert len(report.artifacts[0].quantized) > 3 * 1024

    class Pieces(io.StringIO):
        sizes: list[int] = []

        def write(self, s: str) -> int:
            self.sizes.append(len(s))
            return super().write(s)

    out = Pieces()
    render(report, OutputFormat.JSON, out)
    text = out.getvalue()
    assert text == json.dumps(report.to_json(), indent=2, default=str) + "\n"
    assert len(out.sizes) > 3 and max(out.sizes) < len(text) / 3


def test_summary_counts_every_tensor(many):
    """The per-artifact grade and source counts (counted per run of equal
    tensors) against a count over the tensors themselves."""
    report = scan([many])
    qs = report.artifacts[0].quantized
    a = report.to_json()["artifacts"][0]
    assert a["sources"] == dict(sorted(Counter(q.source.value for q in qs).items()))
    want = Counter(q.grade.canonical if q.grade is not None else q.convention for q in qs)
    assert {g["grade"]: g["count"] for g in a["grades"]} == want
    assert len(want) == 4  # Q4_K's, Q8_0's and MXFP4's grades; Q6_K by its convention
    counts = [g["count"] for g in a["grades"]]
    assert counts == sorted(counts, reverse=True)


def test_tensors_are_columns_one_maker_per_type_and_shape(many):
    """The mapped tensors are kept as columns (parsers/readers.py
    ``_GgmlTensors``, issue 15): one maker per distinct (ggml type, shape),
    counted here from gguf-py's reader; what the rules read from the
    columns (names, roles, groups, kins, size checks) is what the same
    tensors give as objects."""
    from grit_scan.artifact import Artifact, Format, QList
    from grit_scan.rules import support

    art = readers.read_gguf(many, "many.gguf")
    q = art.quantized
    assert q.columnar
    cols = q.columns()
    assert cols is None  # Q6_K's tensors (unmapped, with a reason) are objects
    theirs = GGUFReader(many).tensors
    mapped = {(int(t.tensor_type), tuple(int(x) for x in reversed(t.shape.tolist())))
              for t in theirs if int(t.tensor_type) in MAPPINGS}
    units = q.units()
    makers = {id(m) for _rep, _idx, m in units if m is not None}
    assert len(makers) == len(mapped) > 6
    objs = QList(list(q))
    assert not objs.columnar
    assert q.names() == objs.names() and q.roles() == objs.roles()
    for rep, idx, maker in units:
        assert all(q[i].shape == rep.shape and q[i].convention == rep.convention for i in idx)
        assert (maker is None) == (rep.source is not Source.GGML_TYPE)
    # kins: the same partition of the names, whether columns or objects
    as_objects = Artifact(path="o", abs_path="o", format=Format.GGUF, quantized=QList(objs))

    def partition(a):
        names = a.quantized.names()
        return sorted(sorted(names[i] for i in kin.idx) for kin in support._kins(a))

    assert partition(art) == partition(as_objects)
    # a payload is wrong where its length is not the planes' sum
    for rep, idx, _maker in units[:12]:
        assert rep.payload is not None
        for sizes in ([rep.payload.length], [rep.payload.length - 1, 0], [1, 2]):
            assert q.size_mismatches(idx, sizes) == objs.size_mismatches(idx, sizes)
    assert q.size_mismatches(units[0][1], [0]) == list(units[0][1])
