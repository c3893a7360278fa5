"""--deep: the rules that look at tensor bytes (levels 2 and 3, decode
cross-checks): digest_mismatch, probe_warning, decode_divergence.

The bytes come from the ``PlaneReader`` the parsers layer hands in, in
bounded chunks (never mmap); no rule opens a file.

* digests (§6.5) of every tensor that carries an expected one (GRIT header,
  grit.digest.* key, or a grit-manifest.json) -> digest_mismatch;
* SPORDER_ASC_LSB metadata order (§7.4) -> digest_mismatch;
* level-3 probes (§7.6) on a few evenly spaced rows -> probe_warning;
* for ggml types with a GRIT mapping, GRIT decode against
  gguf.quants.dequantize on the same sampled rows -> decode_divergence
  (values compared; NaN equals NaN, -0 equals +0).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...artifact import Artifact, PlaneReader, QTensor, ReadError, nbytes_map
from ...codec.errors import GritError
from ..codes import Kind
from ..finding import Finding, Severity
from ..registry import Rule
from ..support import judged
from .grit_check import check_tensor

# The codec loads where --deep checks a tensor: every scan imports this
# module for its RULES (start-up, docs/performance.md).
if TYPE_CHECKING:
    from ...codec.descriptor import Descriptor
    from ...codec.grade import Grade

DIGEST_MISMATCH = Rule(
    code="GRIT104",
    kind=Kind.DIGEST_MISMATCH,
    severity=Severity.STRUCTURAL,
    summary='--deep: the plane bytes are not the ones described (digest, or ASC_LSB metadata order)',
    doc="""\
**Structural, `--deep` only.** The plane bytes are not the ones that were
described: the digest recorded in the file (or in a grit-manifest.json)
differs from the bytes, or SPORDER_ASC_LSB sparsity metadata is out of order.

Example (`fixtures/broken/digest-mismatch`):

    model.layers.0.self_attn.q_proj.weight: plane digest e4b110a9... differs from the recorded
    4352a854...: these are not the bytes that were described (modified, re-quantised or corrupted)

Fix: find out who modified the file; re-export it (and its digest) from the
source of truth.
""",
)
PROBE_WARNING = Rule(
    code="GRIT303",
    kind=Kind.PROBE_WARNING,
    severity=Severity.WARNING,
    summary='--deep: a level-3 decode-sanity probe is suspicious',
    doc="""\
**Warning, `--deep` only.** A level-3 decode-sanity probe (§7.6) on sampled
groups is suspicious: NaN scales (poisoned groups), an E8M0 scale plane with
no dynamic range, integer codes that never approach their range (the range
of the values the convention stores: int4 values held in int8 bytes, as
compressed-tensors W4A8/W4AFP8 store them, are judged against 7, not 127).

Example (`fixtures/broken/probe-warning`):

    all 64 sampled E8M0 scales are code 127: no dynamic range (a constant-filled scale plane, or not E8M0 at all?)

Fix: check the exporter's scale computation.
""",
)
DECODE_DIVERGENCE = Rule(
    code="GRIT304",
    kind=Kind.DECODE_DIVERGENCE,
    severity=Severity.WARNING,
    summary="--deep: GRIT decode and the format's own decoder disagree",
    doc="""\
**Warning, `--deep` only.** For a ggml type with a GRIT mapping, GRIT decode
and ggml's own reference decoder disagree on sampled values (NaN equals NaN,
−0 equals +0). The known cause: an MXFP4 E8M0 scale of 0xFF is NaN in GRIT
and 2^127 in ggml.

Example (`fixtures/broken/decode-divergence`):

    blk.0.ffn_up.weight: 32 of 512 sampled values differ between GRIT decode and ggml's reference decoder;
    E8M0 scale code 0xFF: GRIT decodes it as NaN (§8.2, A.3), ggml as 2^127

Fix: the block is meaningless to one of the two tools; requantise it.
""",
)
RULES = (DIGEST_MISMATCH, PROBE_WARNING, DECODE_DIVERGENCE)

SAMPLE_ROWS = 8
# ggml type codes of the mappings cross-checked against gguf-py's decoder
_GGML_TYPE = {"ggml:MXFP4": 39, "ggml:Q8_0": 8, "ggml:Q4_K": 12}


def check_deep(art: Artifact, planes: PlaneReader) -> list[Finding]:
    out: list[Finding] = []
    nbytes = nbytes_map(art.tensors)
    ready: list[tuple[QTensor, Mapping[int, Grade]]] = []
    for q in art.quantized:
        try:
            grades = _deep_ready(art, q, nbytes)
        except (GritError, ValueError) as exc:
            if isinstance(exc, OSError):
                raise
            continue  # the structural rules already report what is wrong
        if grades is not None:
            ready.append((q, grades))
    # The digests (almost all of --deep's time) first, several tensors at a
    # time: each §6.5 digest is its own sequential stream (docs/performance.md).
    wanted = [q for q, _ in ready if q.expected_digest is not None]
    digests = dict(zip(map(id, wanted), planes.digests(wanted)))
    for q, grades in ready:
        try:
            out.extend(deep_tensor(planes, art, q, grades, digests.get(id(q))))
        except ReadError:
            raise  # an I/O error or a read budget: the file's finding (registry._deep)
        except (GritError, ValueError) as exc:
            if isinstance(exc, OSError):
                raise
            continue  # the structural rules already report what is wrong
    return out


def digest_of(planes: PlaneReader, q: QTensor) -> bytes:
    """§6.5 over the four planes as stored (BLOCK_AOS de-interleaved)."""
    from ...codec.fingerprint import digest_stream

    return digest_stream(planes.stored_planes(q))


def _sample(planes: PlaneReader, q: QTensor) -> tuple[list[int], list[int], bytes] | None:
    """A few evenly spaced canonical rows as (row indices, sub-shape, payload
    in the descriptor's placements), or None when rows are not separable."""
    import numpy as np

    from ...codec.layout import geometry, stored_sizes

    d = q.desc
    assert d is not None
    shape = list(q.shape)
    g = geometry(d, shape)
    if g.outer == 0 or d.group_axis != len(shape) - 1:
        return None
    if d.n_levels == 2 and d.k1 and (g.inner // d.k0) % d.k1:
        return None
    per_row = max(1, g.planes[1].units // g.outer)  # level-0 groups per row
    want = max(SAMPLE_ROWS, -(-64 // per_row))  # enough rows for min(64, n_groups0) groups
    rows = sorted(set(np.linspace(0, g.outer - 1, min(want, g.outer)).round()
                      .astype(int).tolist()))
    sizes, aos = stored_sizes(d, shape, q.layouts)
    if aos or q.planes is None:
        if q.payload is None:
            return None
        total = sum(sizes)
        if total % g.outer or (d.n_levels == 2 and d.k1 == 0):
            return None
        rb = total // g.outer
        parts = [planes.read(q.payload.offset + r * rb, rb, q.payload.file) for r in rows]
        return rows, [len(rows), g.inner], b"".join(parts)
    planes_out: list[bytes] = []
    for i, (ref, n) in enumerate(zip(q.planes, sizes)):
        if ref is None or n == 0:
            planes_out.append(b"")
            continue
        if i == 2 and d.k1 == 0:
            planes_out.append(planes.read(ref.offset, ref.length, ref.file))
            continue
        if ref.broadcast > 1:
            one = planes.read(ref.offset, ref.length, ref.file)
            planes_out.append(one * len(rows))
            continue
        if n % g.outer:
            return None
        rb = n // g.outer
        planes_out.append(b"".join(planes.read(ref.offset + r * rb, rb, ref.file) for r in rows))
    return rows, [len(rows), g.inner], b"".join(planes_out)


def _deep_ready(art: Artifact, q: QTensor, nbytes: dict[str, int]) -> Mapping[int, Grade] | None:
    """The grades to decode ``q`` with, or None when --deep leaves it alone
    (no descriptor, not judged, a structural finding, an unknown grade)."""
    d = q.desc
    if d is None or not judged(q):
        return None
    if check_tensor(art, q, nbytes):
        return None  # a structural finding already explains this tensor's bytes
    from ...codec.grade import registry

    grades = registry([q.grade] if q.grade is not None else [])
    return grades if d.grade_id in grades else None


def deep_tensor(planes: PlaneReader, art: Artifact, q: QTensor, grades: Mapping[int, Grade],
                digest: bytes | GritError | ValueError | None = None) -> list[Finding]:
    """Level 2 and 3 for one tensor whose structure already checked out
    (``_deep_ready``); ``digest`` is its §6.5 digest when already computed
    (or the error that stopped it), else it is computed here."""
    from ...codec.check import sparse_order_violation
    from ...codec.tables import F_SPARSE, SP_META_BITS, SPORDER_ASC_LSB

    out: list[Finding] = []
    d = q.desc
    assert d is not None
    if q.expected_digest is not None:
        got = digest_of(planes, q) if digest is None else digest
        if isinstance(got, Exception):
            raise got
        if got != q.expected_digest:
            out.append(DIGEST_MISMATCH.finding(
                art.path, f"{q.name}: plane digest {got.hex()} differs from the recorded "
                f"{q.expected_digest.hex()}: these are not the bytes that were described "
                "(modified, re-quantised or corrupted)", q.name,
                {"expected": q.expected_digest.hex(), "actual": got.hex()}))
    if d.flags & F_SPARSE and d.sp_order == SPORDER_ASC_LSB and q.planes and q.planes[3]:
        ref = q.planes[3]
        meta = planes.read(ref.offset, ref.length, ref.file)
        from ...codec.layout import geometry  # here: --deep only (start-up)

        g = geometry(d, list(q.shape))
        bad = sparse_order_violation(meta, g.planes[3].units, d.sp_n, d.sp_m,
                                     SP_META_BITS.get(d.sp_meta_fmt, 0))
        if bad is not None:
            out.append(DIGEST_MISMATCH.finding(
                art.path, f"{q.name}: sparsity metadata of group {bad[0]} is {bad[1]}; "
                "SPORDER_ASC_LSB requires strictly increasing indices (§7.4): mma.sp would be "
                "undefined", q.name, {"group": bad[0], "indices": bad[1]}))
    sample = _sample(planes, q)
    if sample is None:
        return out
    rows, sub_shape, payload = sample
    sd = dataclasses.replace(d, group_axis=1)
    from ...codec.decode import canonical_planes
    from ...codec.probes import probe
    from ...conventions.base import by_convention

    # the values' width from the convention (int4 in s8 bytes), not the code's
    conv = by_convention(q.convention)
    bits = conv.value_bits(q.declared) if conv is not None else None
    try:
        canon = [bytes(p) for p in canonical_planes(sd, sub_shape, payload, q.layouts)]
        warnings = probe(sd, sub_shape, canon, bits)
    except GritError:
        return out
    for w in warnings:
        out.append(PROBE_WARNING.finding(art.path, f"{q.name}: {w}", q.name,
                                         {"rows_sampled": rows}))
    if q.convention in _GGML_TYPE:
        out.extend(_divergence(art, q, sd, sub_shape, payload, rows, grades))
    return out


def _divergence(art: Artifact, q: QTensor, sd: Descriptor, sub_shape: list[int],
                payload: bytes, rows: list[int], grades: Mapping[int, Grade]) -> list[Finding]:
    import gguf
    import numpy as np

    from ...codec.decode import decode

    ttype = _GGML_TYPE[q.convention or ""]
    raw = np.frombuffer(payload, np.uint8).reshape(sub_shape[0], -1)
    try:
        with np.errstate(all="ignore"):
            theirs = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType(ttype))
    except Exception:  # noqa: BLE001 - a reference decoder failing is not our finding
        return []
    ours = decode(sd, sub_shape, payload, grades=grades, layouts=q.layouts)
    with np.errstate(invalid="ignore"):
        same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
    if same.all():
        return []
    n = int((~same).sum())
    cause = None
    if ttype == 39:
        e = raw.reshape(-1, 17)[:, 0]
        if (e == 0xFF).any():
            cause = ("E8M0 scale code 0xFF: GRIT decodes it as NaN (§8.2, A.3), ggml as "
                     "2^127, so these blocks mean different things to the two tools")
    detail: dict[str, Any] = {"differing": n, "sampled": int(same.size), "rows_sampled": rows,
                              "likeliest_cause": cause}
    return [DECODE_DIVERGENCE.finding(
        art.path, f"{q.name}: {n} of {same.size} sampled values differ between GRIT decode and "
        "ggml's reference decoder" + (f"; {cause}" if cause else ""), q.name, detail)]
