"""Issue 27, plain immutable records: a QTensor is frozen, so a convention
builds it whole (planes, notes, reason, declared quantisation) before it
hands it on; nothing sets a field afterwards."""

import dataclasses
from pathlib import Path

import pytest

from grit_scan.artifact import PlaneRef, QTensor, Source
from grit_scan.parsers import tree

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def _quantized(path: Path) -> list[QTensor]:
    scan = tree.collect([str(path)])
    return [q for a in scan.artifacts for q in a.quantized]


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(QTensor)])
def test_assigning_any_field_of_a_qtensor_raises(field):
    q = QTensor(name="m.weight", role="m.weight", shape=(4, 32), source=Source.NONE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(q, field, getattr(q, field))
    # one inferred by a convention (and one replayed from its plan) too
    inferred = _quantized(FIXTURES / "conventions" / "gptq")
    assert inferred
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(inferred[0], field, None)


def test_a_qtensor_is_changed_only_by_making_a_new_one():
    q = QTensor(name="m.weight", role="m.weight", shape=(4, 32), source=Source.NONE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.notes += ("x",)  # type: ignore[misc]
    r = dataclasses.replace(q, notes=("x",))
    assert q.notes == () and r.notes == ("x",) and r != q


# not-representable conventions that still say which stored tensors hold the
# bytes: (fixture, convention, the suffix of the data plane's stored tensor,
# the planes present)
NOT_REPRESENTABLE_WITH_PLANES = [
    ("conventions/gptq", "gptq", ".qweight", (True, True, False, True)),
    ("conventions/awq", "awq", ".qweight", (True, True, False, True)),
    ("producers/awq-gemv-4bit-g128", "awq", ".qweight", (True, True, False, True)),
    ("conventions/ct-nvfp4", "compressed-tensors-nvfp4", ".weight_packed",
     (True, True, True, False)),
    ("conventions/fp8-per-tensor", "fp8-per-tensor", ".weight", (True, True, False, False)),
    ("producers/gptq/v1-8bit-perchannel", "gptq", ".qweight", (True, True, False, True)),
]


@pytest.mark.parametrize(("where", "convention", "data", "present"),
                         NOT_REPRESENTABLE_WITH_PLANES, ids=[w for w, *_ in
                                                             NOT_REPRESENTABLE_WITH_PLANES])
def test_a_not_representable_tensor_carries_its_planes(where, convention, data, present):
    """The planes are given when the QTensor is made (they were once set
    after ``not_representable`` had already handed the record on)."""
    qs = [q for q in _quantized(FIXTURES / where)
          if q.convention == convention and q.reason is not None]
    assert qs, where
    for q in qs:
        assert q.planes is not None, q.name
        planes = list(q.planes)
        assert tuple(p is not None for p in planes) == present, q.name
        first = planes[0]
        assert isinstance(first, PlaneRef) and first.length > 0
        module = q.name.removesuffix(".weight")
        assert first.tensor == module + data, q.name
        # the reason is the first note; the notes are the convention's, in order
        assert q.notes[0] == q.reason
        assert q.declared is not None


def test_packed_int_notes_keep_their_order():
    """8-bit GPTQ: its reason, the grade it would have, then the zero-point
    note; 4-bit AWQ: its reason, then the interleave note."""
    (q, *_) = [q for q in _quantized(FIXTURES / "producers" / "gptq" / "v1-8bit-perchannel")
               if q.convention == "gptq"]
    assert len(q.notes) == 3 and q.notes[0] == q.reason
    assert q.notes[1].startswith("would be grit1(") and "word-packing placement" in q.notes[1]
    assert q.notes[2].startswith("zero points: v1 'gptq' stores z-1")
    (a, *_) = [q for q in _quantized(FIXTURES / "conventions" / "awq") if q.convention == "awq"]
    assert len(a.notes) == 2 and a.notes[0] == a.reason
    assert a.notes[1].startswith("AWQ's [0,2,4,6,1,3,5,7] nibble interleave")


def test_localise_is_replace_with_every_other_field_kept():
    """models._localise builds its new record field by field (replace is
    slower): it must be exactly ``dataclasses.replace``'s, whatever fields
    QTensor gains."""
    from grit_scan.parsers import models

    values = {f.name: object() for f in dataclasses.fields(QTensor)}
    home, other = "/m/a.safetensors", "/m/b.safetensors"
    values["planes"] = [PlaneRef("w", 0, 4, 1, home), None, PlaneRef("s", 8, 2, 1, other)]
    values["payload"] = PlaneRef("p", 16, 4, 1, home)
    q = QTensor(**values)
    got = models._localise(q, home)
    want = dataclasses.replace(q, planes=[PlaneRef("w", 0, 4, 1, None), None,
                                          PlaneRef("s", 8, 2, 1, other)],
                               payload=PlaneRef("p", 16, 4, 1, None))
    assert got is not q
    assert all(getattr(got, f.name) is getattr(want, f.name)
               for f in dataclasses.fields(QTensor) if f.name not in ("planes", "payload"))
    assert got == want and q.planes[0].file == home  # the original is as it was
    # only a plane in its own file (a convention's tensor: no payload), or only the payload
    only = dataclasses.replace(q, payload=None)
    assert models._localise(only, home).planes == want.planes
    assert models._localise(only, home).payload is None
    paid = dataclasses.replace(q, planes=None)
    assert models._localise(paid, home) == dataclasses.replace(want, planes=None)
    # nothing in its own file: the record itself
    far = dataclasses.replace(q, planes=[PlaneRef("w", 0, 4, 1, other)], payload=None)
    assert models._localise(far, home) is far
