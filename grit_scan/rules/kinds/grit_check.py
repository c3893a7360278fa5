"""grit_check (§7.3) against the bytes on disk: size_mismatch, grade_unknown,
placement_unknown.

Steps 1-3 run on the descriptor alone; the size equations then run against
the plane lengths the file actually holds.  Reader issues about a file's own
byte accounting (shape × dtype ≠ bytes, gaps, truncation) are size
mismatches too; a truncated stored tensor that a quantised tensor uses is
reported once, against the logical tensor and its equation.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from itertools import compress, repeat
from operator import attrgetter, eq
from typing import TYPE_CHECKING, Any

from ...artifact import Artifact, Format, QTensor, nbytes_map, plane_bytes
from ...codec.errors import GritCheckError, GritError, Status
from ...issues import IssueCode
from ...issues import grit_check as owned  # the issues size_mismatch reports, and their text
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import issue_findings, judged, kins

# The check and descriptor codec load where a quantised tensor is checked: a
# scan of unquantised files never sizes a plane (start-up, docs/performance.md).
if TYPE_CHECKING:
    from ...codec.check import CheckResult
    from ...codec.descriptor import Descriptor
    from ...codec.grade import Grade

SIZE_MISMATCH = Rule(
    code="GRIT101",
    kind=Kind.SIZE_MISMATCH,
    severity=Severity.STRUCTURAL,
    summary='a §7.3 size equation fails against the bytes on disk',
    doc="""\
**Structural.** A §7.3 size equation fails against the bytes on disk: a plane
is larger or smaller than the descriptor allows. The message gives the
equation and the likeliest cause — a different group size (a scale plane half
or twice its size), a truncated shard, dense/sparse or container confusion.
Also reported for safetensors headers whose own byte accounting is wrong
(shape × dtype ≠ bytes, gaps, overlaps, trailing bytes) and for GGUF tensors
that overlap. A truncated file (tensors running past its end) is one finding
on the file: the bytes expected and present, and the tensors cut short (a
count and the first few; `detail.tensors` lists up to 50).

Example (`fixtures/broken/wrong-group-size`):

    model.layers.0.self_attn.k_proj.weight: scale0 plane is 16 bytes; descriptor requires 32.
    Likeliest cause: the checkpoint was quantised at group_size=64, not 32.

Fix: re-export the descriptor with the group size the scales were computed
with (or requantise); for a truncated shard, download it again.
""",
)
GRADE_UNKNOWN = Rule(
    code="GRIT102",
    kind=Kind.GRADE_UNKNOWN,
    severity=Severity.STRUCTURAL,
    summary="grit_check steps 1-2: the descriptor's grade is unknown or its frame disagrees with it",
    doc="""\
**Structural.** grit_check steps 1–2: the descriptor's frame cannot be
believed (bad magic, version, reserved bits, inconsistent flags), its
grade_id is neither registered nor in the file's `grades` map, or a frame
field disagrees with the grade's canonical string.

Example (`fixtures/broken/grade-unknown`):

    model.layers.0.self_attn.q_proj.weight: grade_id 0x72ed502c18ab2e96 is neither registered
    nor in the file's grades map, so what its bytes mean is unknown (§7.3 step 2)

Fix: write the grade string into the `__grit__` header's `grades` map (or the
`grit.grade.<id>` GGUF key), or correct the frame field the message names.
""",
)
PLACEMENT_UNKNOWN = Rule(
    code="GRIT103",
    kind=Kind.PLACEMENT_UNKNOWN,
    severity=Severity.STRUCTURAL,
    summary='grit_check step 3: a placement word is not defined',
    doc="""\
**Structural.** grit_check step 3: a placement word has an undefined class,
is an unregistered class-0x1 word, or an aux plane and `placement_meta`
disagree (one without the other). Also reported when a class-0x8 expression
is not supplied or does not hash to its word.

Example (`fixtures/broken/placement-unknown`):

    PlacementUnknown (step 3): placement_data: 0x3000000000000001 has class 0x3, which version 1 does not define

Fix: use a registered placement or supply the layout expression in the
file's `layouts` map ([layouts.md](layouts.md)).
""",
)
RULES = (SIZE_MISMATCH, GRADE_UNKNOWN, PLACEMENT_UNKNOWN)

STATUS_RULE = {Status.SIZE_MISMATCH: SIZE_MISMATCH, Status.GRADE_UNKNOWN: GRADE_UNKNOWN,
               Status.PLACEMENT_UNKNOWN: PLACEMENT_UNKNOWN}
SIZE_ISSUES = owned.CODES
_CODE, _TENSOR = attrgetter("code"), attrgetter("tensor")


def check_file(art: Artifact) -> list[Finding]:
    # the issues' codes at C speed (a refused convention gives a file
    # hundreds of issues, none of them about sizes)
    codes = list(map(_CODE, art.issues))
    present = set(codes)
    cut = (set(map(_TENSOR, compress(art.issues, map(eq, codes, repeat(IssueCode.TRUNCATED)))))
           if IssueCode.TRUNCATED in present else set())
    # a truncated file is one finding, at the level of its cause: the
    # tensors it cuts short are listed on it, not reported one by one
    out = (issue_findings(art, SIZE_MISMATCH, SIZE_ISSUES,
                          keep=lambda i: i.code != IssueCode.TRUNCATED)
           if not present.isdisjoint(SIZE_ISSUES) else [])
    suspects = _suspects(art)
    cut_short: list[QTensor] = []
    if suspects:
        nbytes = nbytes_map(art.tensors)
        qs = art.quantized
        for i in suspects:
            q = qs[i]
            if cut and any(p is not None and p.file is None and p.tensor in cut
                           for p in q.refs()):
                cut_short.append(q)
                continue
            out.extend(check_tensor(art, q, nbytes))
    if cut:
        out.insert(0, _truncated(art, cut, cut_short))
    return out


TRUNCATED_SHOWN = 3  # tensor names a truncated file's message shows


def _truncated(art: Artifact, cut: set[str | None], logical: list[QTensor]) -> Finding:
    """The one finding of a truncated file: its bytes expected (where its
    last tensor ends) and present, and the tensors it cuts short (quantised
    tensors by their logical name, then stored tensors no quantised tensor
    uses), a count and the first few."""
    ends = [t.offset + t.nbytes for t in art.tensors]
    expected = max(ends) if ends else None
    names = list(dict.fromkeys(q.name for q in logical))
    claimed = {p.tensor for q in logical for p in q.refs() if p is not None}
    names += sorted(t for t in cut if t is not None and t not in claimed)
    shown = ", ".join(names[:TRUNCATED_SHOWN]) + (
        f" and {len(names) - TRUNCATED_SHOWN} more" if len(names) > TRUNCATED_SHOWN else "")
    have = f"{art.size:,} of {expected:,} bytes" if expected else f"{art.size:,} bytes"
    cause = "the file is truncated (an interrupted download or copy: a truncated shard)"
    return SIZE_MISMATCH.finding(
        art.path, f"the file is truncated: {have} present; {len(names)} tensor(s) run past "
        f"its end ({shown}). Likeliest cause: {cause}.", None,
        {"expected": expected, "actual": art.size, "count": len(names),
         "tensors": names[:50], "likeliest_cause": cause,
         "suggested_fix": "download or copy the file again"})


def _suspects(art: Artifact) -> list[int]:
    """The positions of the tensors check_tensor may find something wrong
    with, ascending.  What check_tensor computes from the descriptor, shape,
    grade and layouts is computed once per kin (docs/performance.md); a tensor is then
    cleared when its planes (or payload) have the lengths the kin's
    descriptor requires, which is check_tensor's usual case, where it finds
    nothing.  Every other tensor is checked by check_tensor itself."""
    qs = art.quantized
    if not qs or art.format is Format.MANIFEST:
        # a manifest's records have no bytes and are never judged
        # (support.judged): not grouped into kins (performance: 25,000 records)
        return []
    # here, not at the top: a scan of unquantised files never sizes a plane
    # (start-up, docs/performance.md)
    from ...codec.layout import stored_sizes

    out: list[int] = []
    for kin in kins(art):
        q = kin.rep
        d = q.desc
        if d is None or not kin.judged:
            continue  # check_tensor finds nothing
        res = _on_descriptor(d, tuple(q.shape), q.grade)
        det = res.detail
        sizes: list[int] | None = None
        if det is None or (res.status == Status.SIZE_MISMATCH and
                           (det.clause or "").startswith("size.")):
            try:
                sizes = stored_sizes(d, list(q.shape), q.layouts)[0]
            except GritError:
                pass
        if sizes is None:  # a finding for every tensor of the kin
            out.extend(kin.idx)
            continue
        out.extend(qs.size_mismatches(kin.idx, sizes))
    if len(out) > 1:
        out.sort()
    return out


@functools.lru_cache(maxsize=4096)
def _on_descriptor(d: Descriptor, shape: tuple[int, ...], grade: Grade | None) -> CheckResult:
    """grit_check steps 1-3 and the size equations on the descriptor alone
    (no bytes): a pure function of (descriptor, shape, grade), memoised since
    a checkpoint's tensors share a handful of them (docs/performance.md)."""
    from ...codec.check import grit_check

    return grit_check(d, list(shape), [-1, -1, -1, -1], 1, grades=_grades(grade))


def _grades(grade: Grade | None) -> dict[int, Grade]:
    """The grades map grit_check resolves grade ids in: the registered grades
    and the tensor's own (built only when needed, not once per tensor)."""
    from ...codec.grade import registry

    return registry([grade] if grade is not None else [])


def _where(q: QTensor) -> str:
    return f"{q.name}" + (f" ({q.convention})" if q.convention and q.convention != "grit"
                          else "")


def check_tensor(art: Artifact, q: QTensor, declared_bytes: Mapping[str, int]) -> list[Finding]:
    """§7.3 steps 1-4 against the on-disk plane lengths.  ``declared_bytes``
    maps stored tensor names to the bytes their header entry claims."""
    from ...codec.check import grit_check  # see _suspects
    from ...codec.layout import is_canonical, split_payload, stored_sizes

    d = q.desc
    if d is None or not judged(q):
        return []  # not representable: the not_representable finding explains the bytes
    shape = list(q.shape)
    # steps 1-3 and the equations themselves, on the descriptor alone
    res = _on_descriptor(d, tuple(shape), q.grade)
    det = res.detail
    if det is not None and not (res.status == Status.SIZE_MISMATCH and
                                (det.clause or "").startswith("size.")):
        msg = f"{q.name}: {res.status.label} (step {det.step}): {det.message}"
        if res.status == Status.GRADE_UNKNOWN and det.clause == "grade_id":
            msg = (f"{q.name}: grade_id {d.grade_id:#018x} is neither registered nor in the "
                   "file's grades map, so what its bytes mean is unknown (§7.3 step 2)")
        return [STATUS_RULE[res.status].finding(art.path, msg, q.name, _detail(res, q))]
    try:
        sizes, aos = stored_sizes(d, shape, q.layouts)
    except GritCheckError as exc:
        return [STATUS_RULE[exc.status].finding(art.path, f"{q.name}: {exc.detail.message}",
                                                q.name, {"step": exc.detail.step,
                                                         "desc": d.hex()})]
    except GritError as exc:
        return [PLACEMENT_UNKNOWN.finding(art.path, f"{q.name}: {exc}", q.name)]
    if q.planes is not None:
        actual = plane_bytes(q.planes)
        if actual == sizes:
            return []  # the usual case: nothing else is computed (docs/performance.md)
        short = _short_cause(art, [p.tensor for p in q.planes if p is not None and p.length <
                                   declared_bytes.get(p.tensor or "", 0)])
        if is_canonical(d):
            res = grit_check(d, shape, actual, 1, grades=_grades(q.grade))
            return _size_finding(art, q, res, short)
        return [_plain_size(art, q, sum(actual), sum(sizes), sizes, short)]
    if q.payload is not None:
        total = q.payload.length
        if total == sum(sizes):
            return []
        short = _short_cause(art, [q.payload.tensor] if total < declared_bytes.get(
            q.payload.tensor or "", 0) else [])
        if is_canonical(d) and not aos:
            parts = split_payload(memoryview(bytes(total)), sizes)
            res = grit_check(d, shape, [len(p) for p in parts], 1, grades=_grades(q.grade))
            return _size_finding(art, q, res, short, payload=(total, sum(sizes)))
        return [_plain_size(art, q, total, sum(sizes), sizes, short)]
    return []


def _detail(res: CheckResult, q: QTensor) -> dict[str, Any]:
    det = res.detail
    assert det is not None
    out: dict[str, Any] = {
        "status": res.status.label, "step": det.step, "clause": det.clause,
        "expected": det.expected, "actual": det.actual, "plane": det.plane,
        "desc": q.desc.hex() if q.desc else None, "source": q.source.value,
        "convention": q.convention}
    if det.cause:
        out["likeliest_cause"] = det.cause
    return out


def _short_cause(art: Artifact, short: list[str | None]) -> str | None:
    """Why the stored tensors ``short`` hold fewer bytes than their header
    entries declare, None when none does: the next tensor starts inside one
    (its reader said the offsets overlap: a GGUF's tensor table), else the
    file ends inside it (truncated)."""
    if not short:
        return None
    if any(i.code == IssueCode.BAD_OFFSETS and i.tensor in short for i in art.issues):
        return ("the next tensor starts inside this tensor's bytes: the file's tensor offsets "
                "overlap")
    return "the file is truncated: this tensor's bytes run past its end (truncated shard)"


def _size_finding(art: Artifact, q: QTensor, res: CheckResult, short: str | None,
                  payload: tuple[int, int] | None = None) -> list[Finding]:
    if res.ok:
        return []
    det = res.detail
    assert det is not None
    lines = det.message.split("\n")
    msg = f"{_where(q)}: {lines[0]}"
    cause = short or det.cause
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
    return [SIZE_MISMATCH.finding(art.path, msg, q.name, detail)]


def _plain_size(art: Artifact, q: QTensor, actual: int, expected: int, sizes: list[int],
                short: str | None) -> Finding:
    from ...codec.placement import placement_name

    d = q.desc
    assert d is not None
    places = ", ".join(f"{k}={placement_name(v, q.layouts)}" for k, v in (
        ("data", d.placement_data), ("scale", d.placement_scale)))
    msg = (f"{_where(q)}: {actual:,} bytes on disk; the descriptor in its placements "
           f"({places}) requires {expected:,} ({' + '.join(f'{s:,}' for s in sizes)})")
    cause = short or ("the file is truncated (truncated shard)" if actual < expected
                      else "the bytes hold more than the descriptor describes: a wrong type, "
                           "group size or shape")
    return SIZE_MISMATCH.finding(
        art.path, msg + f". Likeliest cause: {cause}.", q.name,
        {"expected": expected, "actual": actual, "planes": sizes, "likeliest_cause": cause,
         "desc": d.hex(), "source": q.source.value})
