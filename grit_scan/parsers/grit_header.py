"""GRIT descriptors carried in files (RECONSTRUCTION §10).

safetensors: ``__metadata__["__grit__"]`` holds a JSON text with the
producer, a ``grades`` map (unregistered grade strings by id), a ``layouts``
map (class-0x8 expressions by word) and per logical tensor its descriptor,
shape, plane tensors (or one payload tensor) and optional digest.  Every
problem becomes an issue naming the tensor; nothing here raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..artifact import ArtifactDraft, PlaneRef, QTensor, Source, StoredTensor
from ..codec import descriptor as desc_mod
from ..codec.errors import GritError
from ..codec.grade import Grade, parse_grade, registry
from ..codec.placement import expression_word, parse_layout
from ..issues.file_unparseable import (
    GritEntryDescInvalid,
    GritEntryDigestBad,
    GritEntryNoPlanes,
    GritEntryNotObject,
    GritEntryPartMissing,
    GritEntryPartNotU8,
    GritEntryPlaneNames,
    GritEntryShapeBad,
    GritGradeIdMismatch,
    GritGradeInvalid,
    GritLayoutIdMismatch,
    GritLayoutInvalid,
    GritMapEntryBad,
    GritMapNotObject,
    GritNoTensors,
    GritNotJson,
    GritNotVersion1,
    GritOverBudget,
    GritProducerNotText,
    GritTooManyEntries,
)
from ..issues.notes import GradeNotCanonical
from . import budgets

_HEX16 = re.compile(r"(0x)?[0-9a-fA-F]{16}")
_HEX32 = re.compile(r"[0-9a-fA-F]{32}")
PLANE_KEYS = ("data", "scale0", "scale1", "aux")


def _hex_keyed_strings(raw: Any, art: ArtifactDraft, where: str,
                       what: str) -> Iterator[tuple[str, str]]:
    """The well-formed '<16 hex>': '<string>' entries of a grades/layouts map;
    malformed ones become GRIT_HEADER issues."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        art.add(GritMapNotObject(None, where, what))
        return
    for k, v in raw.items():
        if not isinstance(k, str) or not _HEX16.fullmatch(k) or not isinstance(v, str):
            art.add(GritMapEntryBad(None, where, what, k))
            continue
        yield k, v


def parse_grades(raw: Any, art: ArtifactDraft, where: str) -> dict[int, Grade]:
    """A grades map: id (16 hex) -> canonical string, each re-hashed."""
    out: dict[int, Grade] = {}
    for k, v in _hex_keyed_strings(raw, art, where, "grades"):
        try:
            g = parse_grade(v)
        except GritError as exc:
            art.add(GritGradeInvalid(None, where, k, str(exc)))
            continue
        gid = int(k, 16)
        if g.grade_id != gid:
            art.add(GritGradeIdMismatch(None, where, g.canonical, f"{g.grade_id:016x}", k))
            continue
        if g.canonical != v:
            art.add(GradeNotCanonical(None, where, k, v, g.canonical))
        out[gid] = g
    return out


def parse_layouts(raw: Any, art: ArtifactDraft, where: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for k, v in _hex_keyed_strings(raw, art, where, "layouts"):
        try:
            node = parse_layout(v)
        except GritError as exc:
            art.add(GritLayoutInvalid(None, where, k, str(exc)))
            continue
        word = int(k, 16)
        hashed = expression_word(node.text)
        if hashed != word:
            art.add(GritLayoutIdMismatch(None, where, node.text, f"{hashed:016x}", k))
            continue
        out[word] = node.text
    return out


def recover_safetensors(
    art: ArtifactDraft, text: str, tensors: Mapping[str, StoredTensor], role: Any,
    declared: dict[str, Any] | None = None,
) -> tuple[list[QTensor], set[str]]:
    """QTensors from a __grit__ header, each carrying ``declared`` (the
    declared quantisation that applies); returns them and the stored tensor
    names they consume (planes and payloads)."""
    where = "__grit__"
    n_items = budgets.json_items(text, budgets.JSON_ITEMS.value)
    if n_items > budgets.JSON_ITEMS.value:
        art.add(GritOverBudget(None, budgets.JSON_ITEMS.exceeded("__grit__", n_items)))
        return [], set()
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        art.add(GritNotJson(None, str(exc)))
        return [], set()
    if not isinstance(obj, dict) or obj.get("grit") != 1:
        art.add(GritNotVersion1(None))
        return [], set()
    producer = obj.get("producer")
    if producer is not None and not isinstance(producer, str):
        art.add(GritProducerNotText(None))
        producer = None
    art.producer = producer
    extra = parse_grades(obj.get("grades"), art, where)
    reg = registry(extra.values())
    layouts = parse_layouts(obj.get("layouts"), art, where)
    entries = obj.get("tensors")
    if not isinstance(entries, dict):
        art.add(GritNoTensors(None))
        return [], set()
    if len(entries) > max(len(tensors), 1):
        # every logical tensor names at least one stored tensor of the file,
        # so more entries than stored tensors is a header built to cost time
        art.add(GritTooManyEntries(None, budgets.TENSORS_PER_FILE.exceeded(
            f"__grit__ lists {len(entries):,} tensors for a file that stores {len(tensors):,};"
            " the entry count"), budgets.TENSORS_PER_FILE.name))
        return [], set()
    out: list[QTensor] = []
    used: set[str] = set()
    for name, ent in entries.items():
        q = _one(art, name, ent, tensors, reg, layouts, role, declared)
        if q is not None:
            out.append(q)
            for p in q.refs():
                if p is not None and p.tensor:
                    used.add(p.tensor)
    return out, used


def _one(art: ArtifactDraft, name: str, ent: Any, tensors: Mapping[str, StoredTensor],
         reg: dict[int, Grade], layouts: dict[int, str], role: Any,
         declared: dict[str, Any] | None) -> QTensor | None:
    if not isinstance(ent, dict):
        art.add(GritEntryNotObject(name))
        return None
    try:
        d = desc_mod.from_hex(str(ent.get("desc", "")))
    except GritError as exc:
        art.add(GritEntryDescInvalid(name, str(exc)))
        return None
    shape = ent.get("shape")
    why = budgets.shape_problem(shape, budgets.GRIT_SHAPE_RANK)
    if why:
        art.add(GritEntryShapeBad(name, why))
        return None
    assert isinstance(shape, list)
    its_role = role(name)
    expected_digest = None
    digest = ent.get("digest")
    if digest is not None:
        if isinstance(digest, str) and _HEX32.fullmatch(digest):
            expected_digest = bytes.fromhex(digest)
        else:
            art.add(GritEntryDigestBad(name))

    def made(payload: PlaneRef | None = None,
             planes: list[PlaneRef | None] | None = None) -> QTensor:
        return QTensor(name=name, role=its_role, shape=tuple(shape), source=Source.GRIT_HEADER,
                       desc=d, grade=reg.get(d.grade_id), convention="grit", payload=payload,
                       planes=planes, expected_digest=expected_digest, layouts=layouts,
                       declared=declared)

    if "payload" in ent:
        key = ent["payload"]
        st = tensors.get(key) if isinstance(key, str) else None
        if st is None:
            art.add(GritEntryPartMissing(name, "payload", key))
            return made()
        if not _u8_1d(st):
            art.add(GritEntryPartNotU8(name, "payload", key, st.dtype, list(st.shape)))
        return made(payload=PlaneRef(key, st.offset, st.available))
    planes = ent.get("planes")
    if not isinstance(planes, dict):
        art.add(GritEntryNoPlanes(name))
        return made()
    unknown = set(planes) - set(PLANE_KEYS)
    if unknown:
        art.add(GritEntryPlaneNames(name, tuple(sorted(unknown))))
    refs: list[PlaneRef | None] = []
    for key in PLANE_KEYS:
        tname = planes.get(key)
        if tname is None:
            refs.append(None)
            continue
        st = tensors.get(tname) if isinstance(tname, str) else None
        if st is None:
            art.add(GritEntryPartMissing(name, f"{key} plane", tname))
            refs.append(None)
            continue
        if not _u8_1d(st):
            art.add(GritEntryPartNotU8(name, f"{key} plane", tname, st.dtype, list(st.shape)))
        refs.append(PlaneRef(tname, st.offset, st.available))
    return made(planes=refs)


def _u8_1d(st: StoredTensor) -> bool:
    return st.dtype == "U8" and len(st.shape) == 1
