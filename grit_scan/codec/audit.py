"""assume_placement, verify_placement and the audit ledger (§12).

The escape hatch must exist, so it is made measurable: a mandatory reason,
a sticky NOTE_ASSUMED bit, an append-only ledger exported as JSONL, a rate
of assumed to total boundary crossings, and an optional ceiling above which
assume_placement itself fails.  The ledger is an explicit ``Ledger`` object
the caller owns and passes in (one per run, per thread pool, per test):
nothing here is process-global.  ``Ledger.from_env()`` reads the ceiling
from GRIT_AUDIT_MAX_RATE for callers that want the environment to set it.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace

from .array import GritArray
from .check import CheckResult, grit_check
from .decode import canonical_planes
from .errors import Detail, GritDigestError, GritLayoutError, GritValueError
from .fingerprint import digest_planes
from .planes import PlaneBuf
from .tables import NOTE_ASSUMED

ENV_MAX_RATE = "GRIT_AUDIT_MAX_RATE"


@dataclass(frozen=True)
class LedgerRecord:
    """§12 rule 3: one record per assume_placement."""

    timestamp: str
    gid_before: str
    gid_after: str
    placement_from: str
    placement_to: str
    reason: str
    source_location: str


class Ledger:
    """The §12 audit ledger: records (rule 3) and the crossing counts behind
    the rate (rule 4).  Append-only and thread-safe; ``max_rate`` is the
    optional ceiling on assumed / total crossings (None = no ceiling)."""

    def __init__(self, max_rate: float | None = None) -> None:
        self._lock = threading.Lock()
        self._records: list[LedgerRecord] = []
        self.total = 0  # boundary crossings
        self.assumed = 0
        self.max_rate = max_rate

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Ledger:
        """A ledger whose ceiling is GRIT_AUDIT_MAX_RATE (unset or blank: none)."""
        raw = (os.environ if environ is None else environ).get(ENV_MAX_RATE)
        if raw is None or raw.strip() == "":
            return cls()
        try:
            return cls(float(raw))
        except ValueError:
            raise GritValueError(f"{ENV_MAX_RATE}={raw!r} is not a number") from None

    def records(self) -> tuple[LedgerRecord, ...]:
        """grit.audit.ledger(): every record so far, oldest first (read-only)."""
        with self._lock:
            return tuple(self._records)

    def jsonl(self) -> str:
        """The ledger as JSON Lines, so CI can diff it."""
        return "".join(json.dumps(asdict(r), sort_keys=True) + "\n" for r in self.records())

    def rate(self) -> float:
        """assumed_crossings / total_boundary_crossings (§12 rule 4)."""
        with self._lock:
            return self.assumed / self.total if self.total else 0.0

    def count_crossing(self) -> None:
        """One boundary crossing that was checked, not assumed."""
        with self._lock:
            self.total += 1

    def count_assumed(self) -> None:
        """One assumed crossing, refused when it would lift the rate above
        ``max_rate`` (so the ceiling is never exceeded, not merely reported)."""
        with self._lock:
            projected = (self.assumed + 1) / (self.total + 1)
            if self.max_rate is not None and projected > self.max_rate:
                raise GritLayoutError(Detail(
                    message=f"assume_placement refused: the assumed-crossing rate would be "
                            f"{projected:.3f}, above the ceiling {self.max_rate} "
                            f"({ENV_MAX_RATE})", step=3))
            self.total += 1
            self.assumed += 1

    def append(self, rec: LedgerRecord) -> None:
        with self._lock:
            self._records.append(rec)


def boundary_check(x: GritArray, level: int = 1, *, ledger: Ledger) -> CheckResult:
    """grit_check at a boundary; counted in ``ledger`` as one crossing."""
    ledger.count_crossing()
    return grit_check(x._canonical_desc(), x.shape, [len(p) for p in x.planes],
                      min(level, 1) if level < 2 else level,
                      planes=x.planes if level >= 2 else None, grades=x.grades)


def _four(planes: Sequence[PlaneBuf]) -> tuple[bytes, bytes, bytes, bytes]:
    """A GritArray holds its four canonical planes as bytes (§3)."""
    data, scale0, scale1, aux = (bytes(p) for p in planes)
    return data, scale0, scale1, aux


def _placements(x: GritArray) -> str:
    d = x.desc
    return f"{d.placement_data:016x}/{d.placement_scale:016x}/{d.placement_meta:016x}"


def assume_placement(
    x: GritArray,
    data: int | None = None,
    scale: int | None = None,
    meta: int | None = None,
    *,
    reason: str,
    ledger: Ledger,
    layouts: Mapping[int, str] | None = None,
) -> GritArray:
    """SAFETY: the caller asserts that ``x``'s stored bytes are already in the
    given placements.  The bytes are re-read under that claim, NOTE_ASSUMED
    is set, and a record is appended to ``ledger`` (§12)."""
    if not isinstance(reason, str) or not reason.strip():
        raise GritValueError("assume_placement needs a non-empty reason (§12 rule 1)")
    ledger.count_assumed()
    stored = x.payload()
    lay = {**x.layouts, **(layouts or {})}
    new_desc = x.desc.with_placements(data, scale, meta)
    new_desc = new_desc.with_note(new_desc.note | NOTE_ASSUMED)
    planes = canonical_planes(new_desc, x.shape, stored, lay)
    y = replace(x, desc=new_desc, planes=_four(planes), layouts=lay)
    frame = inspect.stack()[1]
    ledger.append(LedgerRecord(
        timestamp=_dt.datetime.now(_dt.timezone.utc).isoformat(),
        gid_before=x.gid.hex(), gid_after=y.gid.hex(),
        placement_from=_placements(x), placement_to=_placements(y),
        reason=reason.strip(), source_location=f"{frame.filename}:{frame.lineno}"))
    return y


def verify_placement(
    x: GritArray,
    data: int | None = None,
    scale: int | None = None,
    meta: int | None = None,
    *,
    canonical_digest: bytes,
    layouts: Mapping[int, str] | None = None,
) -> GritArray:
    """Prove that ``x``'s stored bytes are in the given placements by reading
    them: relayout under the claim to ROW_MAJOR and compare the digest of the
    canonical planes with ``canonical_digest`` (the digest of the tensor in
    ROW_MAJOR, recorded by whoever produced it).  On success the result
    carries the placements and NOTE_ASSUMED is cleared; otherwise
    GritDigestError."""
    stored = x.payload()
    lay = {**x.layouts, **(layouts or {})}
    claim = x.desc.with_placements(data, scale, meta)
    planes = _four(canonical_planes(claim, x.shape, stored, lay))
    got = digest_planes(planes)
    if got != canonical_digest:
        raise GritDigestError(Detail(
            message=f"verify_placement: under the claimed placements the canonical digest is "
                    f"{got.hex()}, not {canonical_digest.hex()}", step=5,
            expected=canonical_digest.hex(), actual=got.hex()))
    return replace(x, desc=claim.with_note(claim.note & ~NOTE_ASSUMED),
                   planes=planes, layouts=lay)

