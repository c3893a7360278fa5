"""Tensor bytes for ``--deep``: the ``PlaneReader`` handed to the deep rules.

Bytes are read through a ``ByteSource`` in bounded chunks (never mmap, so a
truncated file cannot raise SIGBUS, and a multi-GB tensor never sits in
memory).  A payload stored as one run (GGUF blocks, a GRIT payload) is split
into its planes by the §7.3 sizes; a BLOCK_AOS payload is de-interleaved
block by block.

§6.5 digests are one FNV-1a stream per tensor, so a single digest is
sequential; ``digests`` runs the digests of different tensors two at a time
per thread (interleaved in one C loop) on the scan's pool of threads
(``DigestPool``; the compiled FNV loop and pread both release the GIL), so
that ``--deep`` on one large file uses every core, and each core fully.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from functools import partial

import numpy as np

from ..artifact import Artifact, PlaneRef, QTensor, ReadError
from ..codec.fingerprint import DigestJob, DigestResult, digest_lanes
from ..codec.layout import geometry, stored_sizes
from ..codec.planes import BLOCK_AOS_ORDER
from . import budgets
from .fileio import ReadMeter, SafeFile
from .interface import ByteSource

CHUNK = 1 << 20


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# Digest threads of one scan, shared by all its files (``--jobs`` files in
# parallel submit to the same pool), so that at most this many digests run
# at once and each holds one chunk: memory stays a few MiB whatever the
# file count.
DIGEST_THREADS = _cores()


class DigestPool:
    """The digest threads of one scan: started when a digest first needs
    them, joined by ``close`` (``with DigestPool() as pool:``), so no thread
    and no executor outlives the scan that made them (a forked sweep worker
    makes its own)."""

    __slots__ = ("threads", "_executor", "_lock")

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or DIGEST_THREADS
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.threads,
                                                    thread_name_prefix="grit-digest")
            return self._executor

    def close(self) -> None:
        with self._lock:
            ex, self._executor = self._executor, None
        if ex is not None:
            ex.shutdown(wait=True)

    def __enter__(self) -> DigestPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# A tensor's digest, or the error that stopped it (raised again by the caller
# where it would have read the bytes, so per-tensor handling is unchanged).
Digest = DigestResult


class SourcePlanes:
    """A ``PlaneReader`` over one open ``ByteSource``, opening the other shards
    of the same model (``PlaneRef.file``) when a plane lives there.

    ``threads``: the sources may be read from several threads at once (local
    files: pread at explicit offsets); remote sources are read in turn.
    ``pool``: the scan's digest threads; without one, ``digests`` starts its
    own for the call and joins them before it returns."""

    def __init__(self, source: ByteSource,
                 opener: Callable[[str], ByteSource] | None = None,
                 threads: bool = False, pool: DigestPool | None = None) -> None:
        self.source = source
        self.opener = opener
        self.threads = threads
        self.pool = pool
        self.others: dict[str, ByteSource] = {}
        self._lock = threading.Lock()

    def read(self, offset: int, n: int, file: str | None = None) -> bytes:
        if file is None or self.opener is None:
            return self.source.read_at(offset, n)
        with self._lock:  # one open per shard, whichever digest thread asks first
            src = self.others.get(file)
            if src is None:
                src = self.others[file] = self.opener(file)
        return src.read_at(offset, n)

    def reference(self) -> tuple[bool, str] | None:
        """The safetensors library's verdict on the local file (opens, its
        message), or None when it cannot be asked (parsers/reference.py)."""
        from .reference import safetensors_verdict

        return safetensors_verdict(self.source)

    def digests(self, qs: Sequence[QTensor]) -> list[Digest]:
        """§6.5 digest of each tensor's stored planes, in the order of ``qs``.

        Each worker digests two tensors at a time, interleaved
        (fingerprint.digest_lanes); with ``threads``, up to the pool's
        number of workers run on the scan's pool.  A tensor whose bytes cannot be
        streamed (a short read, a bad layout, a ReadError) gets its error in
        its slot, as the sequential path would meet it.  Every digest has
        finished when this returns, so the caller may close the sources."""
        out: list[Digest] = [b""] * len(qs)
        todo = iter(range(len(qs)))
        lock = threading.Lock()

        def next_job() -> DigestJob | None:
            with lock:
                i = next(todo, None)
            if i is None:
                return None
            q = qs[i]
            return i, lambda: self.stored_planes(q)

        def done(i: int, res: Digest) -> None:
            out[i] = res

        pool = self.pool or DigestPool()
        workers = min(pool.threads, (len(qs) + 1) // 2) if self.threads else 1
        if workers <= 1:
            digest_lanes(next_job, done)
            return out
        try:
            ex = pool.executor()
            futures = [ex.submit(digest_lanes, next_job, done) for _ in range(workers)]
            wait(futures)  # never leave a read running, even when one worker failed
            for fut in futures:
                fut.result()
        finally:
            if pool is not self.pool:
                pool.close()
        return out

    def close(self) -> None:
        for src in self.others.values():
            close = getattr(src, "close", None)
            if close is not None:
                close()
        self.others.clear()

    def _ranges(self, ref: PlaneRef) -> Iterator[bytes]:
        """A plane's bytes in chunks (a broadcast scalar repeated)."""
        if ref.broadcast > 1:
            one = self.read(ref.offset, ref.length, ref.file)
            for _ in range(ref.broadcast):
                yield one
            return
        for off in range(0, ref.length, CHUNK):
            yield self.read(ref.offset + off, min(CHUNK, ref.length - off), ref.file)

    def stored_planes(self, q: QTensor) -> list[tuple[int, Iterable[bytes]]]:
        refs = _plane_refs(q)
        if refs is None:
            return self._aos_planes(q)
        refs = list(refs) + [None] * (4 - len(refs))
        return [(0, ()) if r is None else (r.length * r.broadcast, self._ranges(r))
                for r in refs]

    def _aos_planes(self, q: QTensor) -> list[tuple[int, Iterable[bytes]]]:
        assert q.desc is not None and q.payload is not None
        payload = q.payload
        sizes, _ = stored_sizes(q.desc, list(q.shape), q.layouts)
        nb = geometry(q.desc, list(q.shape)).n_blocks
        per = [s // nb for s in sizes]
        # each plane's byte column inside one interleaved block
        col = {int(p): sum(per[j] for j in BLOCK_AOS_ORDER[: BLOCK_AOS_ORDER.index(p)])
               for p in BLOCK_AOS_ORDER}
        block = sum(per)
        step = max(1, CHUNK // max(block, 1))

        def plane(i: int) -> Iterator[bytes]:
            for b0 in range(0, nb, step):
                n = min(step, nb - b0)
                raw = np.frombuffer(self.read(payload.offset + b0 * block, n * block), np.uint8)
                rows = raw.reshape(n, block)
                yield bytes(rows[:, slice(col[i], col[i] + per[i])].tobytes())

        return [(sizes[i], plane(i)) for i in range(4)]


def _plane_refs(q: QTensor) -> Sequence[PlaneRef | None] | None:
    """Per-plane byte runs (splitting a payload), or None for interleaved
    (BLOCK_AOS) payloads."""
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


@contextmanager
def open_planes(art: Artifact, sources: Mapping[str, Callable[[], ByteSource]] | None = None,
                meter: ReadMeter | None = None, pool: DigestPool | None = None
                ) -> Iterator[SourcePlanes]:
    """The plane reader of one artifact, local or remote (raises ReadError).
    ``sources`` are the scan's remote files (ScanInput.sources); ``meter``
    counts the local bytes read, and ``pool`` is the scan's digest threads."""
    sources = sources or {}
    opener = sources.get(art.abs_path)
    if opener is not None:
        def other(path: str) -> ByteSource:
            # another shard of the same remote model (PlaneRef.file)
            found = sources.get(path)
            if found is None:
                raise ReadError(f"{path}: not a file of this scan")
            return found()

        yield SourcePlanes(opener(), other, pool=pool)
        return
    with SafeFile(art.abs_path, meter) as f:
        _check_deep_source(art, f)
        limit = budgets.DEEP_READ_FACTOR.value * sum(art.tensors_nbytes()) + (64 << 20)
        planes = SourcePlanes(_Bounded(f, limit), partial(SafeFile, meter=meter),
                              threads=True, pool=pool)
        try:
            yield planes
        finally:
            planes.close()
        why = f.changed()
        if why:
            raise ReadError(f"{why} during --deep; its digests and probes cannot be trusted")


def _check_deep_source(art: Artifact, f: SafeFile) -> None:
    """Before --deep reads a byte: the file is the one whose header was read
    (same device, inode, size and mtime), and not a sparse file whose
    apparent size would have --deep read terabytes of zeros (issue 16)."""
    if art.identity is not None and f.identity != art.identity:
        raise ReadError("it is not the file whose header was read (replaced or changed "
                        "since); --deep did not read it")
    ratio = budgets.DEEP_SPARSE_RATIO
    if f.size > (64 << 20) and f.allocated * ratio.value < f.size:
        raise ReadError(ratio.exceeded(f"apparent size {f.size:,} bytes over "
                                       f"{f.allocated:,} allocated", f.size // max(
                                           f.allocated, 1)))


class _Bounded:
    """A ByteSource that refuses to hand out more than ``limit`` bytes in all
    (budgets.DEEP_READ_FACTOR), whichever digest threads ask."""

    def __init__(self, source: SafeFile, limit: int) -> None:
        self.source, self.limit, self.read_total = source, limit, 0
        self.fd = source.fd  # the reference loader reads the file grit opened
        self.name, self.size = source.name, source.size
        self._lock = threading.Lock()

    def read_at(self, offset: int, n: int) -> bytes:
        with self._lock:
            self.read_total += n
            over = self.read_total > self.limit
        if over:
            raise ReadError(budgets.DEEP_READ_FACTOR.exceeded("bytes read by --deep",
                                                              self.read_total))
        return self.source.read_at(offset, n)

    def changed(self) -> str | None:
        return self.source.changed()
