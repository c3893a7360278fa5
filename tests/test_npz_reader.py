"""NumPy .npz archives (parsers/npz_reader.py) as mlx.core.savez writes
them (fixtures/producers/mlx-npz-*, MANIFEST.json): every stored tensor
held to numpy's own reading of the archive, the MLX convention applied as
it is to the same arrays in safetensors, and broken or hostile archives
reported with a defined exit code."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
from scan_exit import scan_exit as _exit

import grit_scan
from grit_scan.issues import IssueCode
from grit_scan.parsers.readers import read_path

P = Path(__file__).resolve().parent.parent / "fixtures" / "producers"
NPZ = P / "mlx-npz-q4-g64" / "weights.npz"


def test_every_tensor_is_where_numpy_finds_it() -> None:
    """Names, shapes, byte counts and the bytes at each offset, against
    numpy.load of the same archive (the independent reader)."""
    art = read_path(str(NPZ))
    assert art.parsed and [i.code for i in art.issues] == [IssueCode.NOTE]  # the bf16 note
    raw = NPZ.read_bytes()
    with np.load(NPZ) as ref:
        assert sorted(ref.files) == [t.name for t in art.tensors]
        for t in art.tensors:
            arr = ref[t.name]
            assert t.shape == arr.shape
            assert t.nbytes == t.available == arr.nbytes
            assert raw[t.offset:t.offset + t.nbytes] == arr.tobytes()
            # U32 codes, bfloat16 scales/biases/norms as two raw bytes
            assert t.dtype == {"<u4": "U32", "|V2": "BF16", "<V2": "BF16"}[arr.dtype.str]


def test_same_findings_as_the_same_arrays_in_safetensors() -> None:
    npz = grit_scan.scan([str(P / "mlx-npz-q4-g64")])
    st = grit_scan.scan([str(P / "mlx-q4-g64")])
    assert [(f.kind, f.message, f.detail.get("count")) for f in npz.findings] == \
        [(f.kind, f.message, f.detail.get("count")) for f in st.findings]
    assert [str(f.kind) for f in npz.findings] == ["not_representable"]
    for sub in ("mlx-npz-q4-g64", "mlx-q4-g64"):
        assert _exit(P / sub, "graded") == 3 and _exit(P / sub, "simple") == 1


def test_compressed_archive_is_said_not_audited() -> None:
    """savez_compressed members have no address: one line, exit 4 (nothing
    read), and no claim that the declared quantisation is missing."""
    r = grit_scan.scan([str(P / "mlx-npz-compressed")])
    (f,) = r.findings
    assert str(f.kind) == "not_representable" and "compressed" in f.message
    assert _exit(P / "mlx-npz-compressed", "graded") == 4


def _zip(path: Path, members: dict[str, bytes], stored: bool = True) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def test_hostile_archives(tmp_path: Path) -> None:
    cases = {
        "not-a-zip.npz": b"PK\x03\x04" + b"\0" * 40,
        "garbage.npz": b"definitely not a zip archive",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    obj = np.empty(2, dtype=object)
    obj[:] = [1, "x"]
    _zip(tmp_path / "pickle.npz", {"w.npy": _npy(obj)})
    lying = bytearray(_npy(np.zeros((4, 4), np.float32)))
    at = lying.index(b"(4, 4)")
    lying[at:at + 6] = b"(4, 9)"  # the header claims more than it holds
    _zip(tmp_path / "lying.npz", {"w.npy": bytes(lying)})
    _zip(tmp_path / "notnpy.npz", {"readme.txt": b"hello", "w.npy": b"\x93NUMPY\x09\x00"})
    for name, want in [("not-a-zip.npz", "not a readable NumPy .npz archive"),
                       ("garbage.npz", "not a readable NumPy .npz archive"),
                       ("pickle.npz", "a pickle inside the archive"),
                       ("lying.npz", "the member holds"),
                       ("notnpy.npz", ".npy format version 9 is not read")]:
        r = grit_scan.scan([str(tmp_path / name)])
        assert any(want in f.message for f in r.findings), (name, [f.message for f in r.findings])
        assert r.exit_code in (1, 4)


def _cut_member_tail(buf: bytes, cut: int) -> bytes:
    """An archive of one stored member whose last ``cut`` data bytes are
    gone, the central directory kept (moved up, the end record's offset to
    it fixed): the member, as the directory lists it, runs past the end."""
    eocd = buf.rindex(b"PK\x05\x06")
    cd_size, cd_off = int.from_bytes(buf[eocd + 12:eocd + 16], "little"), int.from_bytes(
        buf[eocd + 16:eocd + 20], "little")
    head, cd, end = buf[:cd_off - cut], buf[cd_off:cd_off + cd_size], bytearray(buf[eocd:])
    end[16:20] = (cd_off - cut).to_bytes(4, "little")
    return head + cd + bytes(end)


def test_a_member_running_past_the_end_is_named_truncated(tmp_path: Path) -> None:
    """Like a truncated safetensors shard: the tensor whose bytes run past
    the end of the file is named, with how many of its bytes are there
    (expected from the archive's own sizes, not from the reader)."""
    w = np.arange(4096, dtype=np.float32).reshape(64, 64)
    raw = io.BytesIO()
    np.savez(raw, **{"model.embed.weight": w})
    cut = 6000
    p = tmp_path / "cut.npz"
    p.write_bytes(_cut_member_tail(raw.getvalue(), cut))
    with zipfile.ZipFile(p) as zf:  # the standard library still lists the member
        (info,) = zf.infolist()
    art = read_path(str(p))
    trunc = [i for i in art.issues if i.code is IssueCode.TRUNCATED]
    assert [i.tensor for i in trunc] == ["model.embed.weight"]
    # the member's data is its last w.nbytes bytes; the file now ends before
    # the directory's listing of it does by ``cut`` less the directory's size
    data_start = info.file_size - w.nbytes
    local = p.read_bytes()[info.header_offset:info.header_offset + 30]
    local_end = (info.header_offset + 30 + int.from_bytes(local[26:28], "little")
                 + int.from_bytes(local[28:30], "little"))  # its own name and extra field
    present = p.stat().st_size - (local_end + data_start)
    assert trunc[0].detail == {"expected": w.nbytes, "actual": present}
    assert 0 < present < w.nbytes
    (st,) = art.tensors
    assert st.nbytes == w.nbytes and st.available == present
