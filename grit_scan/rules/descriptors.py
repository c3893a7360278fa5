"""Per-tensor descriptor rules: grit_check against the bytes on disk, and
the provenance warnings (inferred, unregistered, not representable,
NOTE_ASSUMED)."""

from __future__ import annotations

from collections import defaultdict

from ..codec import fmt
from ..codec.check import grit_check
from ..codec.descriptor import producer_tag
from ..codec.errors import GritCheckError, GritError, Status
from ..codec.grade import registry
from ..codec.layout import is_canonical, split_payload, stored_sizes
from ..codec.placement import placement_name
from ..model import Artifact, IssueCode, QTensor, Source
from .finding import Finding

STATUS_KIND = {Status.SIZE_MISMATCH: "size_mismatch", Status.GRADE_UNKNOWN: "grade_unknown",
               Status.PLACEMENT_UNKNOWN: "placement_unknown",
               Status.DIGEST_MISMATCH: "digest_mismatch"}


def _where(q: QTensor) -> str:
    return f"{q.name}" + (f" ({q.convention})" if q.convention and q.convention != "grit"
                          else "")


def check_tensor(art: Artifact, q: QTensor, declared_bytes: dict[str, int]) -> list[Finding]:
    """§7.3 steps 1-4 against the on-disk plane lengths.  ``declared_bytes``
    maps stored tensor names to the bytes their header entry claims."""
    d = q.desc
    if d is None or q.reason is not None or q.source in (Source.NONE, Source.MANIFEST):
        return []  # not representable: the not_representable finding explains the bytes
    grades = registry([q.grade] if q.grade is not None else [])
    shape = list(q.shape)
    # steps 1-3 and the equations themselves, on the descriptor alone
    res = grit_check(d, shape, [-1, -1, -1, -1], 1, grades=grades)
    det = res.detail
    if det is not None and not (res.status == Status.SIZE_MISMATCH and
                                (det.clause or "").startswith("size.")):
        kind = STATUS_KIND[res.status]
        msg = f"{q.name}: {res.status.label} (step {det.step}): {det.message}"
        if res.status == Status.GRADE_UNKNOWN and det.clause == "grade_id":
            msg = (f"{q.name}: grade_id {d.grade_id:#018x} is neither registered nor in the "
                   "file's grades map, so what its bytes mean is unknown (§7.3 step 2)")
        return [Finding(kind, art.path, msg, q.name, _detail(res, q))]
    try:
        sizes, aos = stored_sizes(d, shape, q.layouts)
    except GritCheckError as exc:
        return [Finding(STATUS_KIND[exc.status], art.path,
                        f"{q.name}: {exc.detail.message}", q.name,
                        {"step": exc.detail.step, "desc": d.hex()})]
    except GritError as exc:
        return [Finding("placement_unknown", art.path, f"{q.name}: {exc}", q.name)]
    canonical = is_canonical(d)
    if q.planes is not None:
        actual = [0 if p is None else p.length * p.broadcast for p in q.planes]
        declared_short = any(p is not None and p.length < declared_bytes.get(p.tensor or "", 0)
                             for p in q.planes)
        if actual == sizes:
            return []
        if canonical:
            res = grit_check(d, shape, actual, 1, grades=grades)
            return _size_finding(art, q, res, declared_short)
        return [_plain_size(art, q, sum(actual), sum(sizes), sizes, declared_short)]
    if q.payload is not None:
        total = q.payload.length
        short = total < declared_bytes.get(q.payload.tensor or "", 0)
        if total == sum(sizes):
            return []
        if canonical and not aos:
            parts = split_payload(memoryview(bytes(total)), sizes)
            res = grit_check(d, shape, [len(p) for p in parts], 1, grades=grades)
            return _size_finding(art, q, res, short, payload=(total, sum(sizes)))
        return [_plain_size(art, q, total, sum(sizes), sizes, short)]
    return []


def _detail(res, q: QTensor) -> dict:  # type: ignore[no-untyped-def]
    det = res.detail
    out = {"status": res.status.label, "step": det.step, "clause": det.clause,
           "expected": det.expected, "actual": det.actual, "plane": det.plane,
           "desc": q.desc.hex() if q.desc else None, "source": q.source.value,
           "convention": q.convention}
    if det.cause:
        out["likeliest_cause"] = det.cause
    return out


def _size_finding(art: Artifact, q: QTensor, res, truncated: bool,  # type: ignore[no-untyped-def]
                  payload: tuple[int, int] | None = None) -> list[Finding]:
    if res.ok:
        return []
    det = res.detail
    lines = det.message.split("\n")
    msg = f"{_where(q)}: {lines[0]}"
    cause = det.cause
    if truncated:
        cause = "the file is truncated: this tensor's bytes run past its end (truncated shard)"
    if payload is not None:
        msg = (f"{_where(q)}: payload is {payload[0]:,} bytes; the descriptor requires "
               f"{payload[1]:,}. {lines[0]}")
    if cause:
        msg += f" Likeliest cause: {cause}."
    detail = _detail(res, q)
    detail["equation"] = " ".join(x.strip() for x in lines[1:2])
    if cause:
        detail["likeliest_cause"] = cause
    if det.cause and "group_size=" in det.cause:
        detail["suggested_fix"] = ("re-export the descriptor with the group size the scales "
                                   "were computed with, or requantise")
    return [Finding("size_mismatch", art.path, msg, q.name, detail)]


def _plain_size(art: Artifact, q: QTensor, actual: int, expected: int, sizes: list[int],
                truncated: bool) -> Finding:
    d = q.desc
    assert d is not None
    places = ", ".join(f"{k}={placement_name(v, q.layouts)}" for k, v in (
        ("data", d.placement_data), ("scale", d.placement_scale)))
    msg = (f"{_where(q)}: {actual:,} bytes on disk; the descriptor in its placements "
           f"({places}) requires {expected:,} ({' + '.join(f'{s:,}' for s in sizes)})")
    cause = ("the file is truncated (truncated shard)" if truncated or actual < expected
             else "the bytes hold more than the descriptor describes: a wrong type, group "
                  "size or shape")
    return Finding("size_mismatch", art.path, msg + f". Likeliest cause: {cause}.", q.name,
                   {"expected": expected, "actual": actual, "planes": sizes,
                    "likeliest_cause": cause, "desc": d.hex(), "source": q.source.value})


def provenance(art: Artifact) -> list[Finding]:
    """inferred_descriptor, unregistered_grade, not_representable and
    note_assumed, each grouped per artifact so 300 tensors make one line."""
    out: list[Finding] = []
    inferred: dict[str, list[str]] = defaultdict(list)
    unreg: dict[int, list[str]] = defaultdict(list)
    assumed: dict[int, list[str]] = defaultdict(list)
    grades = {}
    for q in art.quantized:
        if q.desc is None or q.reason is not None or q.source in (Source.NONE, Source.MANIFEST):
            continue
        if q.source in (Source.INFERRED, Source.GGML_TYPE):
            inferred[q.convention or "?"].append(q.name)
        if q.grade is not None and q.grade.name is None:
            unreg[q.grade.grade_id].append(q.name)
            grades[q.grade.grade_id] = q.grade
        if q.desc.assumed:
            assumed[q.desc.producer_tag].append(q.name)
    for conv, names in sorted(inferred.items()):
        how = ("ggml's block struct" if conv.startswith("ggml:") else f"the {conv} convention")
        out.append(Finding(
            "inferred_descriptor", art.path,
            f"{len(names)} tensor descriptor(s) inferred from {how}; the file carries no GRIT "
            f"descriptor for them (e.g. {names[0]})", names[0] if len(names) == 1 else None,
            {"convention": conv, "count": len(names), "tensors": names[:50],
             "suggested_fix": "write a __grit__ header (or grit.* GGUF keys) at export time"}))
    for gid, names in sorted(unreg.items()):
        g = grades[gid]
        out.append(Finding(
            "unregistered_grade", art.path,
            f"{len(names)} tensor(s) use grade {g.canonical} ({gid:#018x}), which is valid but "
            "not one of the six registered grades: tools must carry its string to agree on it",
            names[0] if len(names) == 1 else None,
            {"grade": g.canonical, "grade_id": f"0x{gid:016x}", "count": len(names),
             "tensors": names[:50]}))
    nrep: dict[tuple[str, str], list[str]] = defaultdict(list)
    reasons: dict[tuple[str, str], str] = {}
    for iss in art.issues:
        if iss.code == IssueCode.NOT_REPRESENTABLE:
            key = (str(iss.detail.get("convention", "?")), str(iss.detail.get("clause", "")))
            nrep[key].append(iss.tensor or "?")
            reasons.setdefault(key, iss.message.split(": ", 1)[-1])
    for (conv, clause), names in sorted(nrep.items()):
        detail = {"convention": conv, "clause": clause, "count": len(names),
                  "tensors": names[:50], "reason": reasons[(conv, clause)]}
        first = next((i.detail for i in art.issues if i.code == IssueCode.NOT_REPRESENTABLE
                      and i.tensor == names[0]), {})
        for k in ("predicted_aux", "present_aux", "group_size", "bits"):
            if k in first:
                detail[k] = first[k]
        out.append(Finding(
            "not_representable", art.path,
            f"{len(names)} tensor(s) in a convention GRIT v1 cannot express ({clause}): "
            f"{reasons[(conv, clause)]}", names[0] if len(names) == 1 else None, detail))
    for tag, names in sorted(assumed.items()):
        who = art.producer if art.producer and producer_tag(art.producer) == tag else None
        label = f"{who} (tag {tag:#06x})" if who else (f"producer tag {tag:#06x}" if tag else
                                                      "an unknown producer")
        out.append(Finding(
            "note_assumed", art.path,
            f"{len(names)} tensor(s) carry NOTE_ASSUMED from {label}: their placement was "
            "assumed by assume_placement, never verified from the bytes (§12)",
            names[0] if len(names) == 1 else None,
            {"producer_tag": f"{tag:#06x}", "producer": who, "count": len(names),
             "tensors": names[:50],
             "suggested_fix": "verify_placement against the producer's canonical digest"}))
    return out


def elem_bits(q: QTensor) -> int | None:
    return fmt.unpack(q.desc.elem).width if q.desc is not None else None
