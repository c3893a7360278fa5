"""--deep: the rules that read tensor bytes (level 2 and 3, decode cross-checks).

Bytes are streamed in bounded chunks through SafeFile (never mmap):
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
import struct
from collections.abc import Iterator

import numpy as np

from ..codec.check import sparse_order_violation
from ..codec.decode import canonical_planes, decode
from ..codec.errors import GritError
from ..codec.fnv import Fnv128, compiled_backend
from ..codec.grade import registry
from ..codec.layout import geometry, stored_sizes
from ..codec.probes import probe
from ..codec.tables import F_SPARSE, SP_META_BITS, SPORDER_ASC_LSB
from ..model import Artifact, PlaneRef, QTensor, Source, nbytes_map
from ..parsers.fileio import ReadError, SafeFile
from .descriptors import check_tensor
from .finding import Finding

CHUNK = 1 << 20
SAMPLE_ROWS = 8


def _ranges(f: SafeFile, ref: PlaneRef) -> Iterator[bytes]:
    """A plane's bytes in chunks (a broadcast scalar repeated)."""
    if ref.broadcast > 1:
        one = f.read(ref.offset, ref.length)
        for _ in range(ref.broadcast):
            yield one
        return
    for off in range(0, ref.length, CHUNK):
        yield f.read(ref.offset + off, min(CHUNK, ref.length - off))


def _stored_planes(q: QTensor) -> list[PlaneRef | None] | None:
    """Per-plane byte runs (splitting a payload), or None for interleaved
    (BLOCK_AOS) payloads, which are digested by de-interleaving."""
    if q.planes is not None:
        return q.planes
    if q.payload is None or q.desc is None:
        return None
    sizes, aos = stored_sizes(q.desc, list(q.shape), q.layouts)
    if aos:
        return None
    out: list[PlaneRef | None] = []
    off = q.payload.offset
    for n in sizes:
        out.append(PlaneRef(q.payload.tensor, off, n) if n else None)
        off += n
    return out


def _aos_planes(f: SafeFile, q: QTensor) -> Iterator[tuple[int, Iterator[bytes]]]:
    assert q.desc is not None and q.payload is not None
    sizes, _ = stored_sizes(q.desc, list(q.shape), q.layouts)
    g = geometry(q.desc, list(q.shape))
    nb = g.n_blocks
    per = [s // nb for s in sizes]
    order = (2, 1, 3, 0)
    col = {i: sum(per[j] for j in order[: order.index(i)]) for i in order}
    block = sum(per)
    step = max(1, CHUNK // max(block, 1))

    def plane(i: int) -> Iterator[bytes]:
        for b0 in range(0, nb, step):
            n = min(step, nb - b0)
            raw = np.frombuffer(f.read(q.payload.offset + b0 * block, n * block), np.uint8)  # type: ignore[union-attr]
            yield raw.reshape(n, block)[:, col[i] : col[i] + per[i]].tobytes()

    for i in range(4):
        yield sizes[i], plane(i)


def digest_of(f: SafeFile, q: QTensor) -> bytes:
    """§6.5 over the four planes as stored (BLOCK_AOS de-interleaved)."""
    h = Fnv128()
    planes = _stored_planes(q)
    if planes is None:
        for n, chunks in _aos_planes(f, q):
            h.update(struct.pack("<Q", n))
            for c in chunks:
                h.update(c)
        return h.digest()
    for ref in list(planes) + [None] * (4 - len(planes)):
        n = 0 if ref is None else ref.length * ref.broadcast
        h.update(struct.pack("<Q", n))
        if ref is not None:
            for c in _ranges(f, ref):
                h.update(c)
    return h.digest()


def _sample(f: SafeFile, q: QTensor) -> tuple[list[int], list[int], bytes] | None:
    """A few evenly spaced canonical rows as (row indices, sub-shape, payload
    in the descriptor's placements), or None when rows are not separable."""
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
    parts: list[bytes] = []
    if aos or q.planes is None:
        if q.payload is None:
            return None
        total = sum(sizes)
        if total % g.outer or (d.n_levels == 2 and d.k1 == 0):
            return None
        rb = total // g.outer
        for r in rows:
            parts.append(f.read(q.payload.offset + r * rb, rb))
        return rows, [len(rows), g.inner], b"".join(parts)
    planes_out: list[bytes] = []
    for i, (ref, n) in enumerate(zip(q.planes, sizes)):
        if ref is None or n == 0:
            planes_out.append(b"")
            continue
        if i == 2 and d.k1 == 0:
            planes_out.append(f.read(ref.offset, ref.length))
            continue
        if ref.broadcast > 1:
            one = f.read(ref.offset, ref.length)
            planes_out.append(one * len(rows))
            continue
        if n % g.outer:
            return None
        rb = n // g.outer
        planes_out.append(b"".join(f.read(ref.offset + r * rb, rb) for r in rows))
    return rows, [len(rows), g.inner], b"".join(planes_out)


def deep_tensor(f: SafeFile, art: Artifact, q: QTensor,
                nbytes: dict[str, int] | None = None) -> list[Finding]:
    """Level 2 and 3 for one tensor whose structure already checked out."""
    out: list[Finding] = []
    d = q.desc
    if d is None or q.reason is not None or q.source in (Source.NONE, Source.MANIFEST):
        return out
    if check_tensor(art, q, nbytes or nbytes_map(art.tensors)):
        return out  # a structural finding already explains this tensor's bytes
    grades = registry([q.grade] if q.grade is not None else [])
    if d.grade_id not in grades:
        return out
    if q.expected_digest is not None:
        got = digest_of(f, q)
        if got != q.expected_digest:
            out.append(Finding(
                "digest_mismatch", art.path,
                f"{q.name}: plane digest {got.hex()} differs from the recorded "
                f"{q.expected_digest.hex()}: these are not the bytes that were described "
                "(modified, re-quantised or corrupted)", q.name,
                {"expected": q.expected_digest.hex(), "actual": got.hex()}))
    if d.flags & F_SPARSE and d.sp_order == SPORDER_ASC_LSB and q.planes and q.planes[3]:
        ref = q.planes[3]
        meta = f.read(ref.offset, ref.length)
        g = geometry(d, list(q.shape))
        bad = sparse_order_violation(meta, g.planes[3].units, d.sp_n, d.sp_m,
                                     SP_META_BITS.get(d.sp_meta_fmt, 0))
        if bad is not None:
            out.append(Finding(
                "digest_mismatch", art.path,
                f"{q.name}: sparsity metadata of group {bad[0]} is {bad[1]}; SPORDER_ASC_LSB "
                "requires strictly increasing indices (§7.4): mma.sp would be undefined", q.name,
                {"group": bad[0], "indices": bad[1]}))
    sample = _sample(f, q)
    if sample is None:
        return out
    rows, sub_shape, payload = sample
    sd = dataclasses.replace(d, group_axis=1)
    try:
        planes = [bytes(p) for p in canonical_planes(sd, sub_shape, payload, q.layouts)]
        warnings = probe(sd, sub_shape, planes)
    except GritError:
        return out
    for w in warnings:
        out.append(Finding("probe_warning", art.path, f"{q.name}: {w}", q.name,
                           {"rows_sampled": rows}))
    if q.convention and q.convention.startswith("ggml:"):
        out.extend(_divergence(art, q, sd, sub_shape, payload, rows, grades))
    return out


def _divergence(art: Artifact, q: QTensor, sd, sub_shape, payload, rows,  # type: ignore[no-untyped-def]
                grades) -> list[Finding]:
    import gguf

    ttype = {"ggml:MXFP4": 39, "ggml:Q8_0": 8, "ggml:Q4_K": 12}.get(q.convention or "")
    if ttype is None:
        return []
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
    return [Finding(
        "decode_divergence", art.path,
        f"{q.name}: {n} of {same.size} sampled values differ between GRIT decode and ggml's "
        f"reference decoder" + (f"; {cause}" if cause else ""), q.name,
        {"differing": n, "sampled": int(same.size), "rows_sampled": rows,
         "likeliest_cause": cause})]


def deep_artifact(art: Artifact) -> list[Finding]:
    if not art.parsed or art.format not in ("safetensors", "gguf"):
        return []
    out: list[Finding] = []
    nbytes = nbytes_map(art.tensors)
    try:
        with SafeFile(art.abs_path) as f:
            for q in art.quantized:
                try:
                    out.extend(deep_tensor(f, art, q, nbytes))
                except (GritError, ValueError) as exc:
                    if isinstance(exc, ReadError):
                        raise
                    continue  # the structural rules already report what is wrong
    except ReadError as exc:
        out.append(Finding("file_unparseable", art.path, f"--deep could not read it: {exc}"))
    return out


def slow_path_note() -> str | None:
    if compiled_backend():
        return None
    return ("--deep is running the pure-Python FNV-1a digest (the compiled helper was not "
            "built): digests will be slow")

