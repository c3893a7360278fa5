"""NumPy ``.npz`` archives (``numpy.savez``, ``mlx.core.savez``): a ZIP of
``.npy`` members, one tensor each (``model.layers.0.mlp.up_proj.weight.npy``).

Header-only, like the other readers: the standard library's ``zipfile``
reads the archive's central directory through the ``ByteSource``, and
``numpy.lib.format`` reads each member's ``.npy`` header (magic, version,
``descr``, ``fortran_order``, ``shape``); no array is loaded. A member has
an address only when it is stored uncompressed (``savez``): an archive of
``savez_compressed`` is said not to be audited (one line, not a structural
finding: the file may be fine). An object array
(a pickle inside the archive) is never loaded and is said to be unaudited.
Tensors are named by their member names without ``.npy``, dtypes by the
safetensors names where one exists (``<u4`` is ``U32``), else by numpy's
``descr``. numpy has no bfloat16: MLX and ml_dtypes store it as two raw
bytes (``<V2``/``|V2``), which this reader reads as ``BF16`` (an adopted
reading, said on the file as a note), since a weight archive holds no other
two-byte records.
Conventions are inferred over them per model, as over safetensors.
"""

from __future__ import annotations

import io
import struct
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..artifact import Artifact, ArtifactDraft, Format, StoredTensor
from ..issues.grit_check import (
    NpzHeaderBad,
    NpzNoLocalHeader,
    NpzObjectArray,
    NpzSizeMismatch,
    NpzTruncated,
)
from ..issues.notes import NpzColumnMajor, NpzNotArray, RawAsBfloat16
from . import budgets
from .interface import ByteSource, ParseError, ReadContext, Reader, Unsupported, read_checked

if TYPE_CHECKING:  # zipfile loads when an archive is read (start-up, issue 31)
    import zipfile

ZIP_MAGIC = b"PK\x03\x04"
NPY_MAGIC = b"\x93NUMPY"
NPY_HEADER_MAX = 10_000  # numpy's own limit on a .npy header (numpy.lib.format)
LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... name length, extra length
_DTYPES = MappingProxyType({"<f2": "F16", "<f4": "F32", "<f8": "F64", "|i1": "I8", "|u1": "U8",
           "<i2": "I16", "<u2": "U16", "<i4": "I32", "<u4": "U32", "<i8": "I64",
           "<u8": "U64", "|b1": "BOOL", "<V2": "BF16", "|V2": "BF16"})
RAW_BF16 = ("<V2", "|V2")


class NpzReader(Reader):
    __slots__ = ()
    format = Format.NPZ

    def sniff(self, head: bytes, name: str, size: int) -> bool:
        # a ZIP's magic is every ZIP's: the name says it is NumPy's
        return head[:4] == ZIP_MAGIC and self.claims(name)

    def claims(self, name: str) -> bool:
        return name.lower().endswith(".npz")

    def read(self, source: ByteSource, ctx: ReadContext) -> Artifact:
        art = ArtifactDraft(path=ctx.display, abs_path=ctx.abs_path, format=Format.NPZ,
                            group=ctx.group)
        tensors = read_checked(art, source, _archive)
        if tensors is not None:
            art.tensors = tensors
        return art.finish()


def _archive(source: ByteSource, art: ArtifactDraft) -> list[StoredTensor]:
    """The archive's stored tensors, by name (ParseError: not a readable
    archive; Unsupported: members without an address)."""
    import zipfile  # only for an archive: a scan without one never loads it (issue 31)

    try:
        members = _members(source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError,
            NotImplementedError, OverflowError, struct.error, UnicodeError) as exc:
        raise ParseError(f"not a readable NumPy .npz archive: {exc}") from None
    compressed = [m.filename for m in members if m.compress_type != zipfile.ZIP_STORED]
    if compressed:
        raise Unsupported(
            f"{len(compressed)} of the archive's {len(members)} members are compressed "
            f"(numpy.savez_compressed; e.g. {compressed[0]!r}): their bytes have no address "
            "in the file, so grit does not audit this archive; save it with numpy.savez or "
            "mlx.core.savez")
    if len(members) > budgets.TENSORS_PER_FILE.value:
        raise ParseError(budgets.TENSORS_PER_FILE.exceeded("the archive's member count",
                                                           len(members)))
    tensors = [t for t in (_tensor(source, info, art) for info in members) if t is not None]
    tensors.sort(key=lambda t: t.name)
    raw = sum(t.dtype == "BF16" for t in tensors)
    if raw:
        art.add(RawAsBfloat16(None, raw))
    return tensors


class _SourceFile(io.RawIOBase):
    """A ByteSource as the read-only, seekable file ``zipfile`` wants."""

    def __init__(self, source: ByteSource) -> None:
        self.source, self.pos = source, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.source.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, b: Any) -> int:
        data = self.source.read_at(self.pos, len(b))
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)


def _members(source: ByteSource) -> list[zipfile.ZipInfo]:
    import zipfile

    with zipfile.ZipFile(io.BufferedReader(_SourceFile(source))) as zf:
        return zf.infolist()


def _tensor(source: ByteSource, info: zipfile.ZipInfo, art: ArtifactDraft) -> StoredTensor | None:
    name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename

    if info.is_dir() or not info.filename.endswith(".npy"):
        art.add(NpzNotArray(None, info.filename))
        return None
    local = source.read_at(info.header_offset, LOCAL_HEADER.size)
    if len(local) < LOCAL_HEADER.size or local[:4] != ZIP_MAGIC:
        art.add(NpzNoLocalHeader(name, info.filename, info.header_offset))
        return None
    _, n_name, n_extra = LOCAL_HEADER.unpack(local)
    start = info.header_offset + LOCAL_HEADER.size + n_name + n_extra
    parsed = _npy_header(source.read_at(start, 12 + NPY_HEADER_MAX))
    if isinstance(parsed, str):
        art.add(NpzHeaderBad(name, info.filename, parsed))
        return None
    descr, fortran, shape, header_len = parsed
    if descr.startswith("|O"):
        art.add(NpzObjectArray(name, info.filename))
        return None
    numel, width = 1, int(descr[2:]) if descr[2:].isdigit() else 0
    for d in shape:
        numel *= d
    nbytes = info.file_size - header_len
    if width and numel * width != nbytes:
        art.add(NpzSizeMismatch(name, info.filename, list(shape), descr, numel * width, nbytes))
        return None
    if fortran and len(shape) > 1:
        art.add(NpzColumnMajor(name, info.filename))
    offset = start + header_len
    available = max(0, min(nbytes, source.size - offset))
    if available < nbytes:
        art.add(NpzTruncated(name, offset + nbytes, source.size, nbytes, available))
    return StoredTensor(name, _DTYPES.get(descr, descr), shape, offset, nbytes, available)


def _npy_header(raw: bytes) -> tuple[str, bool, tuple[int, ...], int] | str:
    """(descr, fortran_order, shape, bytes before the data) of a .npy
    member's head, read by numpy's own header reader; or why not."""
    import numpy as np  # here: only an .npz needs it (start-up)

    fp = io.BytesIO(raw)
    try:
        major, _ = np.lib.format.read_magic(fp)
        read = {1: np.lib.format.read_array_header_1_0,
                2: np.lib.format.read_array_header_2_0}.get(major)
        if read is None:
            return f".npy format version {major} is not read"
        shape, fortran, dtype = read(fp, max_header_size=NPY_HEADER_MAX)
    except (ValueError, SyntaxError, TypeError, EOFError, OverflowError,
            UnicodeError, struct.error) as exc:
        return f"not a readable .npy header: {' '.join(str(exc).split())[:200]}"
    if dtype.hasobject:
        return ("|O", bool(fortran), tuple(shape), fp.tell())
    return (dtype.str, bool(fortran), tuple(int(d) for d in shape), fp.tell())
