"""--deep digests several tensors of one file at a time (parsers/planes.py,
issue 15): the digests must be exactly the §6.5 digests of the bytes, in the
tensors' order, whatever the chunk boundaries and thread count, and a bad
tensor among many must still be the one reported."""

import dataclasses
import json
import struct

import numpy as np
import pytest

import grit_scan
from grit_scan.artifact import PlaneRef
from grit_scan.codec import grade as G
from grit_scan.codec import placement as P
from grit_scan.codec.encode import encode
from grit_scan.codec.errors import GritValueError
from grit_scan.codec.fingerprint import digest_planes, digest_stream
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
    monkeypatch.setattr(planes_mod, "_pool", None)
    yield
    pool = planes_mod._pool
    if pool is not None:
        pool.shutdown()


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
