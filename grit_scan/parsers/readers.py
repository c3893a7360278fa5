"""The two checkpoint readers (parsers/interface.py): safetensors and GGUF.

Each reads the header through a ``ByteSource`` (bounded reads), recovers or
infers descriptors, re-checks that the source did not change while it was
read, and records every problem as an issue.  A file that cannot be parsed
at all comes back with ``parsed=False`` and an UNPARSEABLE issue; nothing
here raises for file contents.
"""

from __future__ import annotations

import functools
import re
import struct
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress, groupby, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from ..artifact import (
    Artifact,
    ArtifactDraft,
    Format,
    PlaneRef,
    QListBuilder,
    QTensor,
    ReadError,
    Source,
    StoredTensor,
)
from ..codec.errors import GritError
from ..issues import IssueCode
from ..issues.file_unparseable import (
    GritDescInvalid,
    GritDigestBad,
    GritKeyNoTensor,
    GritNotI8,
    GritShapeBad,
    GritShapeMissing,
    GritVersion,
    Unreadable,
)
from ..issues.not_representable import NotRepresentable
from ..issues.reference_loader import ReferenceOpens, ReferenceRefuses
from ..names import Declared
from . import budgets, gguf_tables, safetensors_reader
from .fileio import SafeFile
from .interface import ByteSource, ReadContext, Reader, default_role, read_checked
from .npz_reader import NpzReader
from .roles import gguf_role

# The GGUF reader, the __grit__ header parser and the descriptor codec load
# where a GGUF file or a GRIT header is read: a scan of float safetensors
# never needs them (performance: start-up).
if TYPE_CHECKING:
    from ..codec.descriptor import Descriptor
    from ..codec.grade import Grade
    from .gguf_reader import GgufHeader

GGUF_MAGIC = b"GGUF"  # gguf_reader.MAGIC, which tests/test_readers.py holds it to

_HEX32 = r"[0-9a-fA-F]{32}"  # compiled where first used (re's cache): start-up, docs/performance.md


class SafetensorsReader(Reader):
    __slots__ = ()
    format = Format.SAFETENSORS

    def sniff(self, head: bytes, name: str, size: int) -> bool:
        """An 8-byte little-endian header length that fits, then JSON."""
        if len(head) < 9:
            return False
        (n,) = struct.unpack("<Q", head[:8])
        return 2 <= n <= min(safetensors_reader.MAX_HEADER, size - 8) and head[8:9] in (
            b"{", b" ", b"\n", b"\t", b"\r")

    def claims(self, name: str) -> bool:
        return name.lower().endswith(".safetensors")

    def read(self, source: ByteSource, ctx: ReadContext) -> Artifact:
        return _read_safetensors(source, ctx)


class GgufReader(Reader):
    __slots__ = ()
    format = Format.GGUF

    def sniff(self, head: bytes, name: str, size: int) -> bool:
        return head[:4] == GGUF_MAGIC

    def claims(self, name: str) -> bool:
        return name.lower().endswith(".gguf")

    def read(self, source: ByteSource, ctx: ReadContext) -> Artifact:
        return _read_gguf(source, ctx)


CHECKPOINT_READERS: tuple[Reader, ...] = (GgufReader(), SafetensorsReader(), NpzReader())


def read_path(path: str, ctx: ReadContext | None = None, fmt: Format | None = None) -> Artifact:
    """Open a local file and read it with the reader of ``fmt`` (or the one
    that sniffs it); an unopenable file becomes an issue, never an exception.
    The file as read: a safetensors file's conventions are inferred when it
    is grouped into its model (``models.assemble``, which a scan and
    ``api.load_tensor`` call)."""
    ctx = ctx or ReadContext(display=path, abs_path=path)
    try:
        with SafeFile(path, ctx.meter) as f:
            reader = next((r for r in CHECKPOINT_READERS if r.format is fmt), None)
            if reader is None:
                head = f.read_at(0, 16)
                reader = next((r for r in CHECKPOINT_READERS
                               if r.sniff(head, path, f.size) or r.claims(path)),
                              CHECKPOINT_READERS[1])
            return reader.read(f, ctx)
    except ReadError as exc:
        art = ArtifactDraft(path=ctx.display, abs_path=ctx.abs_path,
                            format=fmt or Format.SAFETENSORS, parsed=False, group=ctx.group)
        art.add(Unreadable(None, str(exc)))
        return art.finish()


def read_safetensors(path: str, display: str, declared: Declared | None = None,
                     role: Callable[[str], str] | None = None) -> Artifact:
    """A local safetensors file (tests, fuzzing and tools use this form)."""
    return read_path(path, ReadContext(display, path, declared, role or default_role),
                     Format.SAFETENSORS)


def read_gguf(path: str, display: str) -> Artifact:
    """A local GGUF file."""
    return read_path(path, ReadContext(display, path), Format.GGUF)


# what grit finds wrong in a safetensors header: where grit refuses a file,
# the reference loader is asked whether it does too (parsers/reference.py)
_HEADER_BROKEN = frozenset({IssueCode.UNPARSEABLE, IssueCode.BAD_OFFSETS, IssueCode.BAD_TENSOR,
                            IssueCode.TRUNCATED, IssueCode.DUPLICATE})


def _ask_reference(art: ArtifactDraft, source: ByteSource) -> None:
    from .reference import safetensors_verdict  # only for a broken file

    verdict = safetensors_verdict(source)
    if verdict is not None:
        art.add(ReferenceOpens(None, verdict.error) if verdict.opens
                else ReferenceRefuses(None, verdict.error))


def _read_safetensors(source: ByteSource, ctx: ReadContext) -> Artifact:
    art = ArtifactDraft(path=ctx.display, abs_path=ctx.abs_path, format=Format.SAFETENSORS,
                        group=ctx.group)
    declared, role = ctx.declared, ctx.role
    hdr = read_checked(art, source, safetensors_reader.read_header)
    if any(i.code in _HEADER_BROKEN for i in art.issues):
        _ask_reference(art, source)
    if hdr is None:
        return art.finish()
    art.metadata = {"header_len": hdr.header_len}
    if hdr.metadata:
        art.metadata["safetensors_metadata_keys"] = sorted(hdr.metadata)
    used: set[str] = set()
    table = hdr.table
    if table is not None:
        art.tensors = table
        if "__grit__" not in hdr.metadata:
            # nothing more in the file: conventions are inferred per model,
            # across its shards, once the files are grouped (parsers/models.py)
            return art.finish()
        # records only for a GRIT header to be checked against (docs/performance.md)
        tensors: Mapping[str, StoredTensor] = table.by_name()
    else:
        tensors = hdr.tensors
        art.tensors = sorted(tensors.values(), key=itemgetter(0))  # by name
    if "__grit__" in hdr.metadata:
        from .grit_header import recover_safetensors

        qs, used = recover_safetensors(art, hdr.metadata["__grit__"], tensors, role, declared)
        art.quantized.extend(qs)
    art.claimed = used
    return art.finish()


@functools.lru_cache(maxsize=256)
def _ggml_convention(type_name: str) -> str:
    """"ggml:Q4_K", one string object per type for all its tensors (a new
    string per tensor was 58 bytes of each one's memory, docs/performance.md)."""
    return f"ggml:{type_name}"


# Every ggml-typed QTensor's notes: the empty tuple (QTensor.notes is a
# tuple; a list per tensor was 56 bytes and a call each, docs/performance.md).
_NO_NOTES: tuple[str, ...] = ()
_GRIT = object()  # marks a tensor the grit.* keys describe (a run of its own)

# What a ggml tensor's QTensor shares with every tensor of its (type, rank):
# descriptor, grade, convention string and layouts mapping
_Shared = tuple["Descriptor", "Grade", str, Mapping[int, str]]


class _GgmlTensors:
    """A GGUF's tensors of one mapped ggml type and shape, as the Replays
    (artifact.QList) whose int is a tensor's position in the file's table:
    what they share is held once, and a QTensor (with its role and payload
    PlaneRef) is made only when asked for.  The rules read the list's
    columns (performance: a GGUF of 100,000 quantised tensors made 100,000
    QTensors, then grouped them into kins one by one)."""

    __slots__ = ("shape", "shared", "names_", "offsets", "available")

    def __init__(self, shape: tuple[int, ...], shared: _Shared, names: Sequence[str],
                 offsets: Sequence[int], available: Sequence[int]) -> None:
        self.shape = shape
        self.shared = shared
        self.names_ = names
        self.offsets = offsets
        self.available = available

    def make(self, g: int, home: str | None, role: str | None = None) -> QTensor:
        d, grade, conv, layouts = self.shared
        name = self.names_[g]
        return QTensor(name, gguf_role(name) if role is None else role, self.shape,
                       Source.GGML_TYPE, d, grade, conv, None,
                       PlaneRef(name, self.offsets[g], self.available[g]), None, None, None,
                       layouts, _NO_NOTES)

    def names(self, gs: Sequence[int]) -> Iterable[str]:
        return map(self.names_.__getitem__, gs)

    def roles(self, gs: Sequence[int]) -> Iterable[str]:
        return map(gguf_role, self.names(gs))

    def data_position(self, g: int) -> int | None:
        return None  # not a model's columns (parsers/models.py): the table's

    def data_part(self) -> int | None:
        return None

    def size_mismatches(self, gs: Sequence[int], sizes: Sequence[int]) -> Iterable[int]:
        # one payload run: wrong where its length is not the planes' sum
        # (QList.size_mismatches of such an object)
        total = sum(sizes)
        return compress(range(len(gs)), map(total.__ne__, map(self.available.__getitem__, gs)))


def _read_gguf(source: ByteSource, ctx: ReadContext) -> Artifact:
    from . import gguf_reader
    from .ggml_types import MAPPINGS  # gguf: GGUF only

    art = ArtifactDraft(path=ctx.display, abs_path=ctx.abs_path, format=Format.GGUF,
                        group=ctx.group)
    h = read_checked(art, source, gguf_reader.read_header)
    if h is None:
        return art.finish()
    table = art.tensors = h.tensors
    art.metadata = _gguf_metadata(h)
    grit = _gguf_grit(art, h)
    # What depends only on the ggml type and rank is built once per distinct
    # pair and shared by its tensors; the tensors of each mapped (type,
    # shape) are one _GgmlTensors, added to the list's columns a run at a
    # time by C-level passes, with no QTensor made (performance: 100k-tensor
    # GGUFs).  Tensors the grit.* keys describe and ggml types without a
    # mapping are objects, made one by one.
    keys = list(zip(h.codes, table.ranks))
    shared: dict[tuple[int, int], _Shared | None] = {}
    for code, rank in set(keys):
        m = MAPPINGS.get(code)
        shared[code, rank] = None if m is None else (
            m.descriptor(rank - 1), m.grade, _ggml_convention(m.name), m.layouts)
    kinds: list[object] = list(map(shared.__getitem__, keys))
    if grit:
        kinds = [_GRIT if name in grit else k for name, k in zip(table.names, kinds)]
    names, shapes, offsets, available = table.names, h.shapes, table.offsets, table.available
    objs: list[QTensor] = []
    makers: list[_GgmlTensors] = []
    maker_of: dict[tuple[int, tuple[int, ...]], int] = {}  # (type, shape) -> its maker
    col_kinds, col_vals = array("i"), array("q")
    start = 0
    for kind, run in groupby(kinds):
        end = start + len(list(run))
        if kind is _GRIT or kind is None:
            got = (list(map(grit.__getitem__, names[start:end])) if kind is _GRIT else
                   [q for i in range(start, end)
                    if (q := _unmapped(art, names[i], h.codes[i], shapes[i], offsets[i],
                                       available[i])) is not None])
            col_kinds.extend(repeat(-1, len(got)))
            col_vals.extend(range(len(objs), len(objs) + len(got)))
            objs.extend(got)
        else:
            ks = list(zip(h.codes[start:end], shapes[start:end]))
            for key in dict.fromkeys(ks):  # each new (type, shape), in order
                if key not in maker_of:
                    maker_of[key] = len(makers)
                    makers.append(_GgmlTensors(key[1], cast(_Shared, kind), names, offsets,
                                               available))
            col_kinds.extend(map(maker_of.__getitem__, ks))
            col_vals.extend(range(start, end))
        start = end
    art.quantized = QListBuilder.from_columns(objs, makers, col_kinds, col_vals)
    return art.finish()


def _unmapped(art: ArtifactDraft, name: str, ttype: int, shape: tuple[int, ...], offset: int,
              available: int) -> QTensor | None:
    """A tensor of a ggml type with no GRIT mapping: counted when unquantised
    (None), else a QTensor without descriptor, and the issue saying why."""
    from .ggml_types import NOT_REPRESENTABLE, UNQUANTISED, type_name

    tn = type_name(ttype)
    if ttype in UNQUANTISED:
        art.unquantized[tn] = art.unquantized.get(tn, 0) + 1
        return None
    reason = NOT_REPRESENTABLE.get(tn, f"ggml type {tn} has no GRIT v1 mapping")
    clause = "§0.3(b)" if "§0.3b" in reason or "codebook" in reason else "§2.4"
    q = QTensor(name=name, role=gguf_role(name), shape=shape, source=Source.NONE,
                convention=f"ggml:{tn}", reason=f"ggml {tn}: {reason}",
                payload=PlaneRef(name, offset, available))
    art.add(NotRepresentable(name, f"ggml {tn}: {reason}",
                             {"clause": clause, "convention": f"ggml:{tn}"}))
    return q


def _gguf_metadata(h: GgufHeader) -> dict[str, Any]:
    md: dict[str, Any] = {"gguf_version": h.version, "alignment": h.alignment,
                          "kv_count": len(h.kv), "header_bytes": h.header_bytes,
                          # every key, for grit show: a tuple, which the scan's JSON
                          # report does not list (it lists scalars and lists)
                          "kv_keys": tuple(h.kv)}
    for key in ("general.architecture", "general.name", "general.file_type",
                "general.quantization_version", "split.no", "split.count",
                "split.tensors.count"):
        v = h.kv.get(key)
        if isinstance(v, (int, str, float)) and not isinstance(v, bool):
            md[key] = v
    ft = md.get("general.file_type")
    if isinstance(ft, int):
        md["file_type_name"] = _file_type_name(ft)
    return md


def _file_type_name(ft: int) -> str:
    """gguf's ``LlamaFileType(ft).name`` less ``MOSTLY_`` (the shipped
    copy when it was made from the installed gguf: gguf_tables.py)."""
    try:
        name = gguf_tables.file_type_name(ft)
    except LookupError:
        from .gguf_constants import constants

        try:
            name = constants().LlamaFileType(ft).name
        except ValueError:
            name = None
    return name.removeprefix("MOSTLY_") if name is not None else f"file type {ft}"


def _gguf_grit(art: ArtifactDraft, h: GgufHeader) -> dict[str, QTensor]:
    """GRIT-native tensors through the grit.* keys (RECONSTRUCTION §10)."""
    from ..codec import descriptor as desc_mod
    from ..codec.grade import registry
    from . import gguf_reader
    from .ggml_types import type_name
    from .grit_header import parse_grades, parse_layouts

    kv = h.kv
    if not any(k.startswith("grit.") for k in kv):
        return {}
    if kv.get("grit.version") != 1:
        art.add(GritVersion(None, kv.get("grit.version")))
    producer = kv.get("grit.producer")
    art.producer = producer if isinstance(producer, str) else None
    grades_raw = {k.removeprefix("grit.grade."): v for k, v in kv.items()
                  if k.startswith("grit.grade.")}
    layouts_raw = {k.removeprefix("grit.layout."): v for k, v in kv.items()
                   if k.startswith("grit.layout.")}
    reg = registry(parse_grades(grades_raw, art, "grit.grade.*").values())
    layouts = parse_layouts(layouts_raw, art, "grit.layout.*")
    by_name = {st.name: st for st in h.tensors}
    out: dict[str, QTensor] = {}
    for key, val in kv.items():
        if not key.startswith("grit.desc."):
            continue
        name = key.removeprefix("grit.desc.")
        st = by_name.get(name)
        if st is None:
            art.add(GritKeyNoTensor(name, key))
            continue
        try:
            d = desc_mod.from_hex(str(val))
        except GritError as exc:
            art.add(GritDescInvalid(name, key, str(exc)))
            continue
        if h.types[name] not in (24,):  # I8 carries data ‖ scale0 ‖ scale1 ‖ aux
            art.add(GritNotI8(name, type_name(h.types[name])))
        shape_v = kv.get(f"grit.shape.{name}")
        if isinstance(shape_v, gguf_reader.ArrayInfo) and shape_v.values is not None:
            why = budgets.shape_problem(list(shape_v.values), budgets.GRIT_SHAPE_RANK)
            if why:
                art.add(GritShapeBad(name, why))
                continue
            shape = tuple(int(x) for x in shape_v.values)
        else:
            art.add(GritShapeMissing(name))
            continue
        expected_digest = None
        dg = kv.get(f"grit.digest.{name}")
        if isinstance(dg, str) and re.fullmatch(_HEX32, dg):
            expected_digest = bytes.fromhex(dg)
        elif dg is not None:
            art.add(GritDigestBad(name))
        out[name] = QTensor(name=name, role=gguf_role(name), shape=shape,
                            source=Source.GGUF_KV, desc=d, grade=reg.get(d.grade_id),
                            convention="grit", layouts=layouts,
                            payload=PlaneRef(name, st.offset, st.available),
                            expected_digest=expected_digest)
    return out
