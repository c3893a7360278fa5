"""--deep digests several tensors of one file at a time (parsers/planes.py,
issue 15): the digests must be exactly the §6.5 digests of the bytes, in the
tensors' order, whatever the chunk boundaries and thread count, and a bad
tensor among many must still be the one reported."""

import dataclasses
import json
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ref_ids import fnv1a

import grit_scan
from grit_scan.artifact import PlaneRef
from grit_scan.codec import fnv
from grit_scan.codec import grade as G
from grit_scan.codec import placement as P
from grit_scan.codec.encode import encode
from grit_scan.codec.errors import GritValueError
from grit_scan.codec.fingerprint import digest_lanes, digest_planes, digest_stream
from grit_scan.codec.layout import _split_stored, geometry, relayout, stored_sizes
from grit_scan.parsers import planes as planes_mod
from grit_scan.parsers import readers
from grit_scan.writers import GritTensor, write_grit_safetensors

rng = np.random.default_rng(15)
# odd row counts and widths, one- and two-level grades, so that planes end
# at every offset relative to a chunk
SHAPES = [(1, 32), (3, 64), (7, 96), (5, 32), (11, 160), (2, 256), (9, 64), (13, 32)]
GRADES = [G.GRADE_MXFP4, G.GRADE_NVF4]


def build(path, n=20):
    """n GRIT tensors with recorded digests; returns {name: reference digest}."""
    tensors, want = [], {}
    for i in range(n):
        shape = SHAPES[i % len(SHAPES)]
        enc = encode((rng.standard_normal(shape) * 2).astype(np.float32),
                     GRADES[i % len(GRADES)], 1)
        name = f"model.layers.{i}.mlp.w.weight"
        tensors.append(GritTensor.from_encoded(name, enc))
        want[name] = digest_planes(list(enc.planes))  # in memory: the reference
    write_grit_safetensors(path, tensors)
    return want


@pytest.fixture
def threads(monkeypatch):
    # the threaded path even on a one-core runner, with a window (2 x threads)
    # smaller than the tensor count so the bounded queue is exercised
    monkeypatch.setattr(planes_mod, "DIGEST_THREADS", 3)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_threaded_digests_equal_the_reference(tmp_path, monkeypatch, threads, chunk):
    p = tmp_path / "m.safetensors"
    want = build(p)
    monkeypatch.setattr(planes_mod, "CHUNK", chunk)
    art = readers.read_path(str(p))
    qs = list(art.quantized)
    assert len(qs) == 20 and all(q.expected_digest for q in qs)
    with planes_mod.open_planes(art) as pr:
        assert pr.threads
        got = pr.digests(qs)
        one_by_one = [digest_stream(pr.stored_planes(q)) for q in qs]
    assert got == one_by_one == [want[q.name] for q in qs]
    assert got == [q.expected_digest for q in qs]


def test_block_aos_payload_digests_in_threads(tmp_path, monkeypatch, threads):
    """A BLOCK_AOS payload is de-interleaved chunk by chunk in each thread."""
    tensors, ref = [], []
    for i, shape in enumerate([(4, 64), (9, 96), (3, 32), (6, 128), (5, 64)]):
        g = GRADES[i % 2]
        enc = encode(rng.standard_normal(shape).astype(np.float32), g, 1)
        target = enc.desc.with_placements(P.BLOCK_AOS, P.BLOCK_AOS, None)
        moved = relayout(enc.desc, shape, enc.payload, target, {})
        sizes, aos = stored_sizes(target, list(shape), {})
        assert aos
        nb = geometry(target, list(shape)).n_blocks
        stored = _split_stored(np.frombuffer(moved, np.uint8), sizes, aos, nb)
        ref.append(digest_planes([s.tobytes() for s in stored]))
        tensors.append(GritTensor(f"t{i}.weight", target, shape, payload=moved, digest=False))
    p = tmp_path / "aos.safetensors"
    write_grit_safetensors(p, tensors)
    monkeypatch.setattr(planes_mod, "CHUNK", 5)  # a few blocks per chunk
    art = readers.read_path(str(p))
    qs = list(art.quantized)
    assert len(qs) == 5 and all(q.payload is not None for q in qs)
    with planes_mod.open_planes(art) as pr:
        assert pr.digests(qs) == ref


def test_a_failed_digest_stays_in_its_slot(tmp_path, threads):
    """A tensor whose plane runs past the end of the file gets its error in
    its own slot; the others are still digested."""
    p = tmp_path / "m.safetensors"
    want = build(p, 9)
    art = readers.read_path(str(p))
    qs = list(art.quantized)
    size = p.stat().st_size
    bad = qs[4]
    assert bad.planes is not None and bad.planes[0] is not None
    ref = bad.planes[0]
    qs[4] = dataclasses.replace(bad, planes=[PlaneRef(ref.tensor, size - 3, ref.length)]
                                + bad.planes[1:])
    with planes_mod.open_planes(art) as pr:
        got = pr.digests(qs)
    assert isinstance(got[4], GritValueError)
    assert [g for i, g in enumerate(got) if i != 4] == [
        want[q.name] for i, q in enumerate(qs) if i != 4]


def _corrupt(path, tensor, plane="data"):
    """Flip one byte in the middle of a stored plane of ``tensor``."""
    with open(path, "r+b") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        start, end = header[f"{tensor}.grit_{plane}"]["data_offsets"]
        at = 8 + n + (start + end) // 2
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x5A]))


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("victim", [0, 11, 19])
def test_one_bad_tensor_among_many_is_the_one_reported(tmp_path, monkeypatch, threads,
                                                       jobs, victim):
    d = tmp_path / "m"
    d.mkdir()
    build(d / "a.safetensors")
    build(d / "b.safetensors")
    name = f"model.layers.{victim}.mlp.w.weight"
    _corrupt(d / "b.safetensors", name, "scale0" if victim % 2 else "data")
    monkeypatch.setattr(planes_mod, "CHUNK", 13)
    r = grit_scan.scan([str(d)], deep=True, jobs=jobs)
    bad = [f for f in r.findings if f.kind.value == "digest_mismatch"]
    assert [(f.path.endswith("b.safetensors"), f.tensor) for f in bad] == [(True, name)]
    assert not [f for f in r.findings if f.kind.value == "file_unparseable"]


# ---------------------------------------------------------------- two lanes

@given(st.binary(max_size=300), st.binary(max_size=300), st.integers(0, 2**128 - 1),
       st.integers(0, 2**128 - 1), st.data())
def test_update_pair_is_two_updates(a, b, ha, hb, data):
    pa = data.draw(st.integers(0, len(a)))
    pb = data.draw(st.integers(0, len(b)))
    n = data.draw(st.integers(0, min(len(a) - pa, len(b) - pb)))
    x, y = fnv.Fnv128(), fnv.Fnv128()
    x._h, y._h = ha, hb
    fnv.update_pair(x, a, pa, y, memoryview(b), pb, n)
    assert x._h == fnv1a(a[pa : pa + n], 128, ha) and y._h == fnv1a(b[pb : pb + n], 128, hb)


@pytest.mark.parametrize("pa,pb,n", [(0, 0, 101), (1, 0, 100), (0, 2, 100), (-1, 0, 1),
                                     (0, 0, -1), (2**63, 0, 1), (0, 0, 2**64)])
def test_update_pair_refuses_ranges_past_a_buffer(pa, pb, n):
    with pytest.raises(ValueError):
        fnv.update_pair(fnv.Fnv128(), bytes(100), pa, fnv.Fnv128(), bytes(101), pb, n)


def _chunked(data, sizes):
    out, i, k = [], 0, 0
    while i < len(data):
        n = sizes[k % len(sizes)]
        out.append(data[i : i + n])
        i, k = i + n, k + 1
    return out


@given(st.lists(st.tuples(st.lists(st.integers(0, 700), min_size=4, max_size=4),
                          st.lists(st.integers(1, 97), min_size=1, max_size=3),
                          st.sampled_from(["ok", "short", "three", "raise"])),
                min_size=0, max_size=7))
def test_digest_lanes_equals_digest_stream(jobs):
    """Any mix of plane sizes, chunkings and failing streams: each job's
    result is what digest_stream gives (or raises) for it alone."""
    r = np.random.default_rng(len(jobs))

    def planes_of(sizes, chunks, how):
        if how == "raise":
            raise GritValueError("cannot build this stream")
        ps = [r.integers(0, 256, n, dtype=np.uint8).tobytes() for n in sizes]
        out = [(len(p), _chunked(p, chunks)) for p in ps]
        if how == "short" and sizes[0]:
            out[0] = (sizes[0] + 1, out[0][1])
        return out[:3] if how == "three" else out

    made = [planes_of(*j) if j[2] != "raise" else None for j in jobs]
    want = []
    for m in made:
        try:
            want.append(digest_stream(m) if m is not None else "err")
        except GritValueError:
            want.append("err")
    todo = iter(range(len(jobs)))
    got = {}

    def make(i):
        if made[i] is None:
            raise GritValueError("cannot build this stream")
        return made[i]

    def next_job():
        i = next(todo, None)
        return None if i is None else (i, lambda: make(i))

    digest_lanes(next_job, got.__setitem__)
    assert sorted(got) == list(range(len(jobs)))
    assert [("err" if isinstance(got[i], GritValueError) else got[i])
            for i in range(len(jobs))] == want


def test_a_read_error_during_deep_is_reported_not_swallowed(tmp_path, monkeypatch, threads):
    """EIO (or the deep_read_factor budget) while digesting: the file gets a
    file_unparseable finding; before, the tensor was skipped in silence."""
    from grit_scan.artifact import ReadError

    p = tmp_path / "m.safetensors"
    build(p, 6)
    real = planes_mod._Bounded.read_at
    calls = []

    def flaky(self, offset, n):
        calls.append(offset)
        if len(calls) == 5:
            raise ReadError(f"read failed at offset {offset}: Input/output error")
        return real(self, offset, n)

    monkeypatch.setattr(planes_mod._Bounded, "read_at", flaky)
    shallow = {f.kind.value for f in grit_scan.scan([str(p)]).findings}
    r = grit_scan.scan([str(p)], deep=True)
    (f,) = [f for f in r.findings if f.kind.value not in shallow]
    assert f.kind.value == "file_unparseable" and "Input/output error" in f.message
