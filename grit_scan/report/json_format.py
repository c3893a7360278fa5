"""The ``--json`` document (docs/json-report.md, docs/scan-report.schema.json)."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence
from json.encoder import encode_basestring_ascii as _string
from operator import attrgetter
from typing import Any

from .._version import __version__
from ..artifact import Artifact, Format, IssueCode, QTensor, Source
from ..codec.base32 import encode as b32
from ..codec.descriptor import Descriptor
from ..codec.fingerprint import gid
from ..codec.grade import Grade
from ..rules.finding import Finding, Severity
from ..rules.support import declared_mix
from .json_text import Lazy, fragment
from .report import Report

REPORT_VERSION = 1

_GRADE, _SOURCE, _CONVENTION = (attrgetter("grade"), attrgetter("source"),
                                attrgetter("convention"))
_NAME, _ROLE, _DESC, _SHAPE, _REASON = (attrgetter("name"), attrgetter("role"),
                                        attrgetter("desc"), attrgetter("shape"),
                                        attrgetter("reason"))


@functools.lru_cache(maxsize=4096)
def _identity_json(grade: Grade | None, desc: Descriptor | None,
                   shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The fields of a tensor record that follow from (grade, descriptor,
    shape) alone, memoised: a checkpoint's tensors share a few of them, and
    packing, hashing and base32-encoding each one again was a large part of
    a --json run (issue 15)."""
    g = gid(grade, desc, shape) if desc is not None and grade is not None else None
    return (grade.canonical if grade is not None else None,
            grade.name if grade is not None else None,
            f"0x{desc.grade_id:016x}" if desc is not None else None,
            g.hex() if g else None, b32(g) if g else None,
            desc.hex() if desc is not None else None)


def _tensor_json(q: QTensor) -> dict[str, Any]:
    grade, name, grade_id, g, g32, desc = _identity_json(q.grade, q.desc, tuple(q.shape))
    return {
        "name": q.name, "role": q.role, "shape": list(q.shape),
        "grade": grade, "grade_name": name, "grade_id": grade_id,
        "gid": g, "gid_base32": g32, "desc": desc,
        "source": q.source.value, "convention": q.convention, "reason": q.reason,
    }


class _TensorText:
    """``_tensor_json(q)``'s text at indentation ``nl`` for a batch of
    tensors: the name and role, then the rest of the record, which is the
    same text for every tensor of one (grade, descriptor, shape, source,
    convention, reason) and is kept per document (issue 15: one record per
    quantised tensor).  Keyed by the identity of the shared objects, which
    ``held`` keeps alive so that an id is never reused while its entry
    lives.  A batch's keys, tails and texts are built by C-level maps: no
    Python code runs per tensor."""

    __slots__ = ("memo", "held")

    def __init__(self) -> None:
        self.memo: dict[str, dict[tuple[Any, ...], str]] = {}  # by indentation
        self.held: list[tuple[object, ...]] = []

    def __call__(self, qs: Sequence[QTensor], nl: str) -> Iterable[str]:
        memo = self.memo.setdefault(nl, {})
        keys = list(zip(map(id, map(_GRADE, qs)), map(id, map(_DESC, qs)), map(_SHAPE, qs),
                        map(id, map(_SOURCE, qs)), map(_CONVENTION, qs), map(_REASON, qs)))
        missing = set(keys).difference(memo)
        if missing:
            first = dict(zip(keys, qs))
            for key in missing:
                q = first[key]
                memo[key] = _tensor_tail(q.grade, q.desc, tuple(q.shape), q.source,
                                         q.convention, q.reason, nl)[1:]
                self.held.append((q.grade, q.desc, q.source))
        inner = nl + "  "
        # "{" + inner + '"name": ' + name + "," + inner + '"role": ' + role + "," + tail
        record = "{{" + inner + '"name": {},' + inner + '"role": {},{}'
        return map(record.format, map(_string, map(_NAME, qs)), map(_string, map(_ROLE, qs)),
                   map(memo.__getitem__, keys))


@functools.lru_cache(maxsize=4096)
def _tensor_tail(grade: Grade | None, desc: Descriptor | None, shape: tuple[int, ...],
                 source: Source, convention: str | None, reason: str | None, nl: str) -> str:
    g, name, grade_id, gid_hex, g32, d = _identity_json(grade, desc, shape)
    return fragment({"shape": list(shape), "grade": g, "grade_name": name,
                     "grade_id": grade_id, "gid": gid_hex, "gid_base32": g32, "desc": d,
                     "source": source.value, "convention": convention, "reason": reason}, nl)




def artifact_summary(a: Artifact, lazy: bool = False) -> dict[str, Any]:
    grades: Counter[tuple[str, str | None, str]] = Counter()
    sources: Counter[str] = Counter()
    # counted per (grade object, source, convention) at C speed, then named
    # (issue 15); first-seen order is kept, so ties sort as before
    qs = a.quantized
    gs, ss = list(map(_GRADE, qs)), list(map(_SOURCE, qs))
    grade_of: dict[int, Grade | None] = dict(zip(map(id, gs), gs))
    source_of: dict[int, Source] = dict(zip(map(id, ss), ss))
    for (g_id, s_id, conv), n in Counter(zip(map(id, gs), map(id, ss),
                                             map(_CONVENTION, qs))).items():
        g = grade_of[g_id]
        sources[source_of[s_id].value] += n
        if g is not None:
            grades[(g.canonical, g.name, f"0x{g.grade_id:016x}")] += n
        elif conv:
            grades[(conv, None, "")] += n
    md = {k: v for k, v in a.metadata.items() if isinstance(v, (str, int, float, list))}
    return {
        "path": a.path, "format": a.format.value, "parsed": a.parsed, "size": a.size,
        "producer": a.producer,
        "n_tensors": len(a.tensors), "n_quantized": len(a.quantized),
        "unquantized": dict(sorted(a.unquantized.items())),
        "grades": [{"grade": k[0], "name": k[1], "grade_id": k[2] or None, "count": n}
                   for k, n in sorted(grades.items(), key=lambda kv: -kv[1])],
        "sources": dict(sorted(sources.items())),
        "declared_mix": declared_mix(a),
        "metadata": md,
        "notes": [i.message for i in a.issues if i.code == IssueCode.NOTE],
        "tensors": (Lazy(a.quantized, _tensor_json, _TensorText()) if lazy
                    else [_tensor_json(q) for q in a.quantized]),
    }


def listed(report: Report) -> list[Artifact]:
    """The artifacts a report lists: configs and manifests (metadata, not
    artifacts) only when they could not be read."""
    return [a for a in report.artifacts
            if a.format not in (Format.CONFIG, Format.MANIFEST) or not a.parsed]


def to_json(report: Report, lazy: bool = False) -> dict[str, Any]:
    """The document; with ``lazy`` its tensor records are built as
    ``json_text.dump`` writes them (the CLI's path), not all at once."""
    from .formats import next_step, summary_line

    counts = Counter(f.severity for f in report.findings)
    ckpt = listed(report)
    return {
        "report_version": REPORT_VERSION,
        "tool_version": __version__,
        "roots": report.roots,
        "deep": report.deep,
        "exit_codes": report.exit_codes,
        "fail_on": report.fail_on.to_json(),
        "summary": {
            "files": len(ckpt),
            "parsed": sum(1 for a in ckpt if a.parsed),
            "tensors": sum(len(a.tensors) for a in ckpt),
            "quantized": sum(len(a.quantized) for a in ckpt if a.format is not Format.MANIFEST),
            "findings": {s.value: counts.get(s, 0) for s in Severity},
            "text": summary_line(report),
        },
        "next_step": next_step(report),
        "artifacts": [artifact_summary(a, lazy) for a in ckpt],
        "findings": (Lazy(report.findings, Finding.to_json) if lazy
                     else [f.to_json() for f in report.findings]),
        "skipped": report.skipped,
        "messages": report.messages,
    }
