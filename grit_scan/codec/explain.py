"""grit_explain (§7.5): a field-by-field diff of two descriptors.

The diff names every frame field, the placements by name, the canonical
grade strings, the decode projections and ends in a one-line verdict:
identical gid, decode-equivalent through a supersedes edge, or the list of
fields that differ.  This module computes; rendering lives in the CLI.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import fmt
from .base32 import encode as b32
from .descriptor import FIELDS, PLACEMENT_FIELDS, Descriptor, from_grade, from_hex
from .fingerprint import gid
from .grade import Grade, registry, resolve
from .placement import placement_name
from .supersedes import REGISTERED_EDGES, Edge, EdgeSet
from .tables import FLAG_NAMES

_HEX128 = re.compile(r"(0x)?[0-9a-fA-F]{128}")


@dataclass(frozen=True)
class Operand:
    """One side of an explain: a descriptor plus what is known about it."""

    label: str
    desc: Descriptor
    grade: Grade | None
    shape: tuple[int, ...] | None = None
    synthesized: bool = False
    layouts: Mapping[int, str] = field(default_factory=dict)

    @property
    def gid(self) -> bytes | None:
        if self.grade is None or self.shape is None:
            return None
        return gid(self.grade, self.desc, self.shape)


def operand(
    text: str,
    shape: Sequence[int] | None = None,
    grades: Mapping[int, Grade] | None = None,
) -> Operand:
    """A 128-hex descriptor, a grade string or a registered grade name."""
    reg = registry() if grades is None else grades
    t = text.strip()
    if _HEX128.fullmatch(t):
        d = from_hex(t)
        return Operand(t, d, reg.get(d.grade_id), tuple(shape) if shape else None)
    g = resolve(t)
    return Operand(t, from_grade(g), g, tuple(shape) if shape else None, synthesized=True)


def _flags_text(v: int) -> str:
    names = [n for bit, n in FLAG_NAMES.items() if v & bit]
    rest = v & ~sum(FLAG_NAMES)
    if rest:
        names.append(f"reserved {rest:#04x}")
    return f"{v:#04x}" + (f" ({'|'.join(names)})" if names else "")


def field_text(name: str, v: int, layouts: Mapping[int, str] | None = None,
               grades: Mapping[int, Grade] | None = None) -> str:
    """A field value as a human reads it."""
    if name in ("elem", "scale0", "scale1", "zp_fmt"):
        return fmt.name(v) if v else "absent"
    if name == "flags":
        return _flags_text(v)
    if name in PLACEMENT_FIELDS:
        return placement_name(v, dict(layouts or {}))
    if name == "magic":
        return f"{v:#010x}"
    if name == "grade_id":
        g = (grades or {}).get(v)
        return f"{v:#018x}" + (f" ({g.name})" if g is not None and g.name else "")
    if name == "note":
        return f"{v:#010x}"
    if name == "container":
        return {0: "dense", 1: "pad8"}.get(v, str(v))
    if name == "sp_meta_fmt":
        return {0: "none", 1: "u2", 2: "u4"}.get(v, str(v))
    if name == "sp_order":
        return {0: "unordered", 1: "asclsb"}.get(v, str(v))
    return str(v)


@dataclass(frozen=True)
class Row:
    """One field of an explain diff: its name and the two sides' values."""

    field: str
    a: str
    b: str
    hashed: bool = True

    @property
    def same(self) -> bool:
        return self.a == self.b


@dataclass(frozen=True)
class Explanation:
    """Two operands compared field by field, and the verdict."""

    a: Operand
    b: Operand
    rows: tuple[Row, ...]
    differences: tuple[str, ...]
    verdict: str
    identical: bool
    decode_equivalent: bool
    edges: tuple[Edge, ...] = ()

    def to_json(self) -> dict[str, Any]:
        def side(o: Operand) -> dict[str, Any]:
            g = o.gid
            return {
                "label": o.label,
                "desc": o.desc.hex(),
                "grade": o.grade.canonical if o.grade else None,
                "grade_name": o.grade.name if o.grade else None,
                "decode_projection": o.grade.decode_projection if o.grade else None,
                "shape": list(o.shape) if o.shape is not None else None,
                "gid": g.hex() if g else None,
                "gid_base32": b32(g) if g else None,
                "synthesized_from_grade": o.synthesized,
            }

        return {
            "a": side(self.a),
            "b": side(self.b),
            "fields": [
                {"field": r.field, "a": r.a, "b": r.b, "same": r.same, "hashed": r.hashed}
                for r in self.rows
            ],
            "differences": list(self.differences),
            "verdict": self.verdict,
            "identical": self.identical,
            "decode_equivalent": self.decode_equivalent,
            "edges": [e.describe() for e in self.edges],
        }

    def lines(self) -> list[str]:
        """Plain-text rendering: one row per field, '*' marks a difference."""
        w = max(len(r.field) for r in self.rows)
        wa = max(len(r.a) for r in self.rows)
        out = [f"  {'field':<{w}}  {'A':<{wa}}  B",
               f"  A = {self.a.label}", f"  B = {self.b.label}"]
        for r in self.rows:
            mark = " " if r.same else "*"
            tail = "" if r.hashed else "   (note: not hashed)"
            out.append(f"{mark} {r.field:<{w}}  {r.a:<{wa}}  {r.b}{tail}")
        out.append(f"Verdict: {self.verdict}")
        return out


def explain(
    a: Operand,
    b: Operand,
    edges: EdgeSet | None = None,
    grades: Mapping[int, Grade] | None = None,
) -> Explanation:
    """Diff two operands field by field and give the verdict."""
    edges = REGISTERED_EDGES if edges is None else edges
    reg = dict(registry() if grades is None else grades)
    for o in (a, b):
        if o.grade is not None:
            reg.setdefault(o.grade.grade_id, o.grade)
    rows: list[Row] = []
    for name in FIELDS:
        va, vb = getattr(a.desc, name), getattr(b.desc, name)
        la = field_text(name, va, a.layouts, reg)
        lb = field_text(name, vb, b.layouts, reg)
        if la == lb and va != vb:  # two unknown words can render alike
            la, lb = f"{la} [{va:#x}]", f"{lb} [{vb:#x}]"
        rows.append(Row(name, la, lb, hashed=name != "note"))
    rows.append(Row("grade", a.grade.canonical if a.grade else "(unknown grade_id)",
                    b.grade.canonical if b.grade else "(unknown grade_id)"))
    rows.append(Row("decode_projection",
                    a.grade.decode_projection if a.grade else "(unknown)",
                    b.grade.decode_projection if b.grade else "(unknown)"))
    if a.shape is not None or b.shape is not None:
        rows.append(Row("shape", str(list(a.shape)) if a.shape is not None else "(not given)",
                        str(list(b.shape)) if b.shape is not None else "(not given)"))
    ga, gb = a.gid, b.gid
    if ga is not None or gb is not None:
        rows.append(Row("gid", b32(ga) if ga else "(needs grade and shape)",
                        b32(gb) if gb else "(needs grade and shape)"))

    frame_diff = [r.field for r in rows if r.field in FIELDS and r.field != "note" and not r.same]
    shape_diff = a.shape is not None and b.shape is not None and a.shape != b.shape
    differences = tuple(frame_diff + (["shape"] if shape_diff else []))
    note_only = not differences and a.desc.note != b.desc.note

    edge_path: list[Edge] = []
    decode_eq = False
    if not differences:
        if ga is not None and gb is not None:
            verdict = f"identical gid {b32(ga)}"
        else:
            verdict = "identical frame and grade: the gid is equal for any shape"
        if note_only:
            verdict += " (the notes differ; the note is not hashed, §11.1)"
        return Explanation(a, b, tuple(rows), differences, verdict, True, True)
    if (
        set(differences) == {"grade_id"}
        and a.grade is not None
        and b.grade is not None
        and edges.equivalent(a.grade, b.grade, "decode")
    ):
        decode_eq = True
        edge_path = edges.path(a.grade, b.grade, "decode")
        via = "; ".join(e.describe() for e in edge_path) or "identical decode projection"
        verdict = f"decode-equivalent through a supersedes edge: {via}"
    else:
        shown = []
        for name in differences:
            ra = next((r for r in rows if r.field == name), None)
            shown.append(f"{name} ({ra.a} vs {ra.b})" if ra else name)
        n = len(differences)
        verdict = f"differ in {n} field{'s' if n != 1 else ''}: " + ", ".join(shown)
    return Explanation(a, b, tuple(rows), differences, verdict, False, decode_eq, tuple(edge_path))
