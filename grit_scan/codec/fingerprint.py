"""Fingerprints (§6): grade_id, gid, digest and the printable gid."""

from __future__ import annotations

import functools
import queue
import struct
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence

from . import base32
from .descriptor import Descriptor
from .errors import GritError, GritValueError
from .fnv import Fnv128, fnv1a64, fnv1a128, update_pair
from .grade import Grade
from .planes import PlaneBuf


def grade_id(canonical: str) -> int:
    """§6.2: FNV-1a-64 of the canonical grade string, no NUL."""
    return fnv1a64(canonical.encode("utf-8"))


def gid_bytes(canonical: str, desc: Descriptor | bytes, shape: Sequence[int]) -> bytes:
    """§6.3: FNV-1a-128 over grade ‖ 0x00 ‖ frame ‖ u32 rank ‖ i64 shape."""
    raw = desc.pack() if isinstance(desc, Descriptor) else bytes(desc)
    if len(raw) != 64:
        raise GritValueError("gid needs a 64-byte descriptor")
    try:
        tail = struct.pack("<I", len(shape)) + b"".join(struct.pack("<q", d) for d in shape)
    except struct.error:
        raise GritValueError("shape extents must fit int64 and rank uint32") from None
    msg = canonical.encode("utf-8") + b"\x00" + raw[:28] + raw[32:] + tail
    return fnv1a128(msg)


def gid(grade: Grade | str, desc: Descriptor | bytes, shape: Sequence[int]) -> bytes:
    canonical = grade.canonical if isinstance(grade, Grade) else grade
    if isinstance(desc, Descriptor):
        return _gid_cached(canonical, desc, tuple(shape))
    return gid_bytes(canonical, desc, shape)


@functools.lru_cache(maxsize=65536)
def _gid_cached(canonical: str, desc: Descriptor, shape: tuple[int, ...]) -> bytes:
    """gid is a pure function of its operands; a scan asks for the same few
    (grade, descriptor, shape) triples for thousands of tensors (docs/performance.md)."""
    return gid_bytes(canonical, desc, shape)


def gid_base32(g: bytes) -> str:
    return base32.encode(g)


PlaneChunks = Iterable[tuple[int, Iterable[PlaneBuf]]]


def digest_message(plane_chunks: PlaneChunks) -> Iterator[PlaneBuf]:
    """The bytes §6.5 hashes, as a stream: for each of the four planes in
    Plane order (data, scale0, scale1, aux), u64le(length) then its bytes.

    ``plane_chunks`` gives, for each plane, its byte length and an iterable
    of byte chunks whose lengths add up to it; an absent plane is ``(0, ())``.
    Each plane contributes u64le(length) ‖ bytes (RECONSTRUCTION §2 verifies
    this reading), so the length is hashed before its bytes are read and a
    caller can feed planes far larger than memory chunk by chunk.  Raises
    GritValueError (while streaming) when the chunks disagree with a length
    or when there are not exactly four planes.
    """
    count = 0
    for length, chunks in plane_chunks:
        count += 1
        yield struct.pack("<Q", length)
        seen = 0
        for c in chunks:
            seen += len(c)
            yield c
        if seen != length:
            raise GritValueError(f"plane stream gave {seen} bytes, expected {length}")
    if count != 4:
        raise GritValueError("digest covers exactly four planes: data, scale0, scale1, aux")


def digest_stream(plane_chunks: PlaneChunks) -> bytes:
    """§6.5, streaming: the digest of ``digest_message(plane_chunks)``,
    hashed by ``digest_lanes``, the loop every digest of grit goes through
    (raises the GritError or ValueError that stopped the stream)."""
    got: list[DigestResult] = []
    jobs = iter([(0, lambda: plane_chunks)])
    digest_lanes(lambda: next(jobs, None), lambda _key, res: got.append(res))
    (res,) = got
    if not isinstance(res, bytes):
        raise res
    return res


# One digest job: a key and what yields its planes' chunks (called in the
# lane, so that an error building the stream is that job's error).
DigestJob = tuple[int, Callable[[], PlaneChunks]]
DigestResult = bytes | GritError | ValueError


class _Lane:
    """One digest in progress: its hash state and its current chunk."""

    __slots__ = ("key", "h", "it", "buf", "off", "err")

    def __init__(self, job: DigestJob) -> None:
        self.key, make = job
        self.h = Fnv128()
        self.buf = memoryview(b"")
        self.off = 0
        self.it: Iterator[PlaneBuf] = iter(())
        self.err: GritError | ValueError | None = None
        try:
            self.it = digest_message(make())
        except (GritError, ValueError) as exc:
            self.err = exc

    @property
    def left(self) -> int:
        return len(self.buf) - self.off

    def advance(self, done: Callable[[int, DigestResult], None]) -> bool:
        """Move to the next non-empty chunk; False (after reporting the
        digest or the error) when the stream is over."""
        if self.err is not None:
            done(self.key, self.err)
            return False
        try:
            for c in self.it:
                if len(c):
                    self.buf, self.off = memoryview(c).cast("B"), 0
                    return True
        except (GritError, ValueError) as exc:
            done(self.key, exc)
            return False
        done(self.key, self.h.digest())
        return False


def digest_lanes(next_job: Callable[[], DigestJob | None],
                 done: Callable[[int, DigestResult], None]) -> None:
    """§6.5 digests of the jobs ``next_job`` hands out (None: no more), two
    at a time in one thread: one digest is a sequential FNV chain bound by
    its multiply latency, and two interleaved (fnv.update_pair) hash about
    twice the bytes per cycle.  Each finished digest, or the GritError /
    ValueError that stopped its stream, goes to ``done(key, result)``."""
    lanes: list[_Lane | None] = [None, None]
    more = True
    while True:
        for i in (0, 1):
            while lanes[i] is None and more:
                job = next_job()
                if job is None:
                    more = False
                    break
                lane = _Lane(job)
                if lane.advance(done):
                    lanes[i] = lane
        a, b = lanes
        if a is not None and b is not None:
            m = min(a.left, b.left)
            update_pair(a.h, a.buf, a.off, b.h, b.buf, b.off, m)
            a.off += m
            b.off += m
        elif a is not None or b is not None:
            one = a if a is not None else b
            assert one is not None
            one.h.update(one.buf[one.off :])
            one.off = len(one.buf)
        else:
            return
        for i in (0, 1):
            lane_i = lanes[i]
            if lane_i is not None and lane_i.left == 0 and not lane_i.advance(done):
                lanes[i] = None


def read_ahead(chunks: Iterable[PlaneBuf], depth: int = 4) -> Generator[PlaneBuf, None, None]:
    """``chunks``, produced on a thread of their own up to ``depth`` ahead of
    the consumer: a file read (which releases the GIL) runs while the
    previous chunks are hashed.  An exception of the producer is raised
    where its chunk would have come; a consumer that stops early stops the
    producer before this generator closes."""
    slots: queue.Queue[tuple[bool, PlaneBuf | BaseException | None]] = queue.Queue(depth)
    stop = threading.Event()

    def put(item: tuple[bool, PlaneBuf | BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for c in chunks:
                if not put((True, c)):
                    return
            put((False, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            put((False, exc))

    worker = threading.Thread(target=produce, name="grit-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            more, item = slots.get()
            if not more:
                if isinstance(item, BaseException):
                    raise item
                return
            assert not isinstance(item, BaseException) and item is not None
            yield item
    finally:
        stop.set()
        worker.join()


def _cut(chunks: Iterator[PlaneBuf], lengths: Sequence[int]) -> PlaneChunks:
    """Consecutive chunks cut into planes of ``lengths`` bytes (a plane's
    chunks are taken as the digest reads them, so the whole payload is
    never held)."""
    rest: list[memoryview] = []

    def plane(n: int) -> Iterator[PlaneBuf]:
        while n > 0:
            c = rest.pop() if rest else memoryview(next(chunks, b"")).cast("B")
            if not len(c):
                return  # the stream ended short: digest_message says by how much
            if len(c) > n:
                rest.append(c[n:])
                c = c[:n]
            n -= len(c)
            yield c

    return [(n, plane(n)) for n in lengths]


def digest_read_ahead(chunks: Iterable[PlaneBuf], lengths: Sequence[int]) -> bytes:
    """§6.5 digest of a payload given as consecutive chunks, data ‖ scale0 ‖
    scale1 ‖ aux cut at the four ``lengths``: the chunks are produced on
    another thread (``read_ahead``) while ``digest_lanes``, the loop of
    every digest, hashes them, so reading a file costs no time of its own.
    Raises GritValueError when the chunks do not add up to the lengths."""
    if len(lengths) != 4:
        raise GritValueError("digest covers exactly four planes: data, scale0, scale1, aux")
    it = read_ahead(chunks)
    try:
        got = digest_stream(_cut(it, lengths))
        if next(it, None) is not None:
            raise GritValueError(f"the payload runs past its {sum(lengths)} bytes")
        return got
    finally:
        it.close()


def digest_planes(planes: Sequence[PlaneBuf | None]) -> bytes:
    """§6.5 over four in-memory planes (None = absent, hashed as length 0)."""
    if len(planes) != 4:
        raise GritValueError("digest covers exactly four planes: data, scale0, scale1, aux")
    return digest_stream((0, ()) if p is None else (len(p), (p,)) for p in planes)
