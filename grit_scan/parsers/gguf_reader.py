"""A header-only GGUF reader of our own (research: gguf-ggml-internals.md §3-5).

gguf-py's GGUFReader maps the whole file, walks every array eagerly (7.9 s
on a 150k-token vocabulary) and hangs on a hostile array length, so the scan
path reads the header itself: every count and length is checked against the
bytes that remain before anything is allocated, arrays are skipped without
being materialised, nested arrays, unknown value types, empty or duplicate
keys, bad alignment, more than four dimensions, unknown or removed tensor
types and overflowing shapes are refused, and each tensor's on-disk length
is taken from the offsets (gap to the next tensor or the end of the file).
The ``gguf`` package supplies the type table and constants only.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field
from itertools import chain, islice, repeat
from math import prod
from operator import add, eq, floordiv, itemgetter, mul, neg
from typing import Any

from ..artifact import ArtifactDraft, TensorTable
from ..issues import LLAMA_CPP_REFUSES
from ..issues.file_unparseable import GgufNameTooLong
from ..issues.grit_check import GgufNotPacked, GgufOverlap, GgufTruncated
from . import budgets
from .fileio import SafeFile  # noqa: F401
from .interface import ByteSource, ParseError, Unsupported

MAGIC = b"GGUF"
MAX_ALIGNMENT = 1 << 20
MAX_STRING = 1 << 30
MAX_NAME = 64
# LLAMA_CPP_REFUSES (issues/): what a finding says when llama.cpp's gguf.cpp
# would reject the file (research: gguf-ggml-internals.md, "Checks in gguf.cpp HEAD")
KEEP_STRING = 1 << 16  # string values longer than this are skipped, not kept
WINDOW_START = 1 << 12  # the read-ahead window starts small and doubles, so a scan
WINDOW_MAX = 1 << 22  # reads the header plus at most as much again, never the tensors

# value type -> (struct format, size); 8 = string, 9 = array
SCALARS: dict[int, tuple[str, int]] = {
    0: ("<B", 1), 1: ("<b", 1), 2: ("<H", 2), 3: ("<h", 2), 4: ("<I", 4), 5: ("<i", 4),
    6: ("<f", 4), 7: ("<B", 1), 10: ("<Q", 8), 11: ("<q", 8), 12: ("<d", 8),
}
TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool",
              8: "string", 9: "array", 10: "u64", 11: "i64", 12: "f64"}
I64_MAX = (1 << 63) - 1
_U32 = struct.Struct("<I").unpack
_U64 = struct.Struct("<Q").unpack
_Q_FROM = struct.Struct("<Q").unpack_from


@dataclass
class ArrayInfo:
    """A GGUF array value: element type, count and (short arrays) its values."""

    elem_type: int
    count: int
    values: list[Any] | None = None  # kept only for short scalar/string arrays


@dataclass
class GgufHeader:
    """A GGUF header as read: version, alignment, key-values and tensor infos."""

    version: int
    alignment: int
    kv: dict[str, Any] = field(default_factory=dict)
    kv_types: dict[str, int] = field(default_factory=dict)
    # the stored tensors as columns, sorted by name; codes and shapes are
    # each one's ggml type and logical shape in the same order
    tensors: TensorTable = field(default_factory=lambda: TensorTable([], [], [], [], [], [], []))
    codes: list[int] = field(default_factory=list)
    shapes: list[tuple[int, ...]] = field(default_factory=list)
    data_offset: int = 0
    header_bytes: int = 0

    @functools.cached_property
    def types(self) -> dict[str, int]:
        """Tensor name -> ggml type (built once, on demand: GRIT-native files only)."""
        return dict(zip(self.tensors.names, self.codes))


class _Reader:
    """Sequential reads through a bounded window over a SafeFile."""

    def __init__(self, f: ByteSource) -> None:
        self.f = f
        self.pos = 0
        self.win_start = 0
        self.win = b""
        self.next_window = WINDOW_START

    def _refill(self, need: int) -> None:
        self.win_start = self.pos
        self.win = self.f.read_at(self.pos, max(need, self.next_window))
        # read-ahead is at most an eighth of what was consumed: over a ranged
        # source the bytes fetched stay within 1.125x the header, and a
        # skipped array the window does not cover is jumped over, not fetched
        self.next_window = min(WINDOW_MAX, self.next_window * 2,
                               max(WINDOW_START, self.pos // 8))

    def remaining(self) -> int:
        return self.f.size - self.pos

    def take(self, n: int, what: str, arg: object = None) -> bytes:
        """``n`` bytes at the cursor.  ``what`` names them in an error; with
        ``arg`` it is a ``str.format`` template, filled only when an error is
        raised (the tensor-info loop would otherwise build several labels per
        tensor, docs/performance.md)."""
        off = self.pos - self.win_start
        if off < 0 or off + n > len(self.win):
            if n > self.remaining():
                label = what if arg is None else what.format(arg)
                raise ParseError(f"{label} needs {n} bytes at offset {self.pos} but only "
                                 f"{self.remaining()} remain (truncated header?)")
            self._refill(n)
            off = 0
        self.pos += n
        return self.win[off : off + n]

    def skip(self, n: int, what: str) -> None:
        if n > self.remaining():
            raise ParseError(f"{what} needs {n} bytes at offset {self.pos} but only "
                             f"{self.remaining()} remain")
        self.pos += n

    def u32(self, what: str, arg: object = None) -> int:
        v: int = _U32(self.take(4, what, arg))[0]
        return v

    def u64(self, what: str, arg: object = None) -> int:
        v: int = _U64(self.take(8, what, arg))[0]
        return v

    def u64s(self, count: int, what: str, arg: object = None) -> tuple[int, ...]:
        return struct.unpack(f"<{count}Q", self.take(8 * count, what, arg))

    def string(self, what: str, keep: bool = True, arg: object = None) -> str | None:
        n = self.u64(what + " length", arg)
        if n > MAX_STRING or n > self.remaining():
            label = what if arg is None else what.format(arg)
            if n > MAX_STRING:
                raise ParseError(f"{label} claims {n:,} bytes (limit {MAX_STRING:,})")
            raise ParseError(f"{label} claims {n:,} bytes at offset {self.pos} but only "
                             f"{self.remaining():,} remain")
        if not keep or n > KEEP_STRING:
            self.skip(n, what if arg is None else what.format(arg))
            return None
        raw = self.take(n, what, arg)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            label = what if arg is None else what.format(arg)
            raise ParseError(f"{label} at offset {self.pos - n} is not valid UTF-8") from None

    def skip_strings(self, count: int, what: str) -> None:
        """Walk ``count`` strings without decoding them (vocabularies).  The
        cursor and window are held in locals: a method call per string was
        most of a 150,000-token vocabulary's walk."""
        size = self.f.size
        unpack = _Q_FROM
        pos, ws, win = self.pos, self.win_start, self.win
        i = 0
        while i < count:
            rem = size - pos - 8
            if rem < 0:
                self.pos = pos
                raise ParseError(f"{what}: string {i} of {count} runs past the end of the file")
            off = pos - ws
            if off < 0 or off + 8 > len(win):
                self.pos = pos
                self._refill(8)
                ws, win, off = self.win_start, self.win, 0
            (n,) = unpack(win, off)
            if n > MAX_STRING or n > rem:
                self.pos = pos
                raise ParseError(f"{what}: string {i} claims {n:,} bytes but only "
                                 f"{rem:,} remain")
            pos += 8 + n
            i += 1
        self.pos = pos


# Well-known keys whose type consumers trust (llama.cpp#26690: a type-confused
# tokenizer array crashed a consumer); a different type is refused.
KNOWN_TYPES: dict[str, tuple[int, int | None]] = {
    "general.architecture": (8, None), "general.name": (8, None),
    "general.file_type": (4, None), "general.quantization_version": (4, None),
    "split.no": (2, None), "split.count": (2, None), "split.tensors.count": (5, None),
    "tokenizer.ggml.tokens": (9, 8), "tokenizer.ggml.scores": (9, 6),
    "tokenizer.ggml.token_type": (9, 5), "tokenizer.ggml.merges": (9, 8),
}


def _value(r: _Reader, vtype: int, key: str, depth: int = 0) -> Any:
    if vtype in SCALARS:
        fmt_, size = SCALARS[vtype]
        v = struct.unpack(fmt_, r.take(size, "value of {!r}", key))[0]
        if vtype == 7 and v not in (0, 1):
            raise ParseError(f"{key!r}: a bool must be 0 or 1; got {v}")
        return bool(v) if vtype == 7 else v
    if vtype == 8:
        return r.string("string value of {!r}", arg=key)
    if vtype == 9:
        if depth > 0:
            raise ParseError(f"{key!r}: nested arrays are not allowed")
        et = r.u32("array type of {!r}", key)
        count = r.u64("array length of {!r}", key)
        if et == 9:
            raise ParseError(f"{key!r}: nested arrays are not allowed")
        if count > budgets.GGUF_ARRAY_ELEMENTS.value:
            raise ParseError(budgets.GGUF_ARRAY_ELEMENTS.exceeded(f"array {key!r}", count))
        if et in SCALARS:
            size = SCALARS[et][1]
            if count > r.remaining() // size:
                raise ParseError(f"{key!r}: an array of {count:,} {TYPE_NAMES[et]} needs "
                                 f"{count * size:,} bytes but only {r.remaining():,} remain")
            if count <= 64:
                fmt_ = "<" + SCALARS[et][0][1] * count
                vals = list(struct.unpack(fmt_, r.take(count * size, "array {!r}", key)))
                return ArrayInfo(et, count, vals)
            r.skip(count * size, f"array {key!r}")
            return ArrayInfo(et, count)
        if et == 8:
            if count > r.remaining() // 8:
                raise ParseError(f"{key!r}: an array of {count:,} strings needs at least "
                                 f"{count * 8:,} bytes but only {r.remaining():,} remain")
            if count <= 64:
                return ArrayInfo(et, count, [r.string(f"{key!r}[{i}]") for i in range(count)])
            r.skip_strings(count, f"array {key!r}")
            return ArrayInfo(et, count)
        raise ParseError(f"{key!r}: array element type {et} is not a GGUF value type")
    raise ParseError(f"{key!r}: value type {vtype} is not a GGUF value type (0-12)")


def read_header(f: ByteSource, art: ArtifactDraft) -> GgufHeader:
    from .ggml_types import block_table  # gguf is imported for a GGUF only

    r = _Reader(f)
    if f.size < 4 or r.take(4, "magic") != MAGIC:
        raise ParseError("bad magic: not a GGUF file")
    version = r.u32("version")
    if version & 0xFFFF == 0 and version:
        raise Unsupported(f"big-endian GGUF (version field {version:#010x} reads "
                          "byte-swapped): grit-scan reads little-endian GGUF only; not scanned")
    if version not in (2, 3):
        raise ParseError(f"GGUF version {version} is not supported (2 and 3 are)")
    n_tensors = r.u64("tensor count")
    n_kv = r.u64("key-value count")
    if n_kv > budgets.GGUF_KV_ENTRIES.value:
        raise ParseError(budgets.GGUF_KV_ENTRIES.exceeded("the key-value count", n_kv))
    if n_tensors > budgets.TENSORS_PER_FILE.value:
        raise ParseError(budgets.TENSORS_PER_FILE.exceeded("the tensor count", n_tensors))
    if n_kv > r.remaining() // 13:
        raise ParseError(f"{n_kv:,} key-value pairs cannot fit in the {r.remaining():,} bytes "
                         "that remain")
    if n_tensors > r.remaining() // 28:
        raise ParseError(f"{n_tensors:,} tensors cannot fit in the {r.remaining():,} bytes "
                         "that remain")
    h = GgufHeader(version=version, alignment=32)
    for i in range(n_kv):
        key = r.string("key {}", arg=i)
        if key is None or key == "":
            raise ParseError(f"key {i} is empty or longer than {KEEP_STRING} bytes")
        if not key.isascii():
            raise ParseError(f"key {key!r} is not ASCII")
        if key in h.kv:
            raise ParseError(f"duplicate key {key!r}")
        vtype = r.u32("type of {!r}", key)
        h.kv[key] = _value(r, vtype, key)
        h.kv_types[key] = vtype
        want = KNOWN_TYPES.get(key)
        if want is not None:
            et = h.kv[key].elem_type if isinstance(h.kv[key], ArrayInfo) else None
            if vtype != want[0] or (want[1] is not None and et != want[1]):
                got = TYPE_NAMES.get(vtype, str(vtype)) + (
                    f" of {TYPE_NAMES.get(et, et)}" if et is not None else "")
                need = TYPE_NAMES[want[0]] + (f" of {TYPE_NAMES[want[1]]}" if want[1] else "")
                raise ParseError(f"{key!r} is {got}; it must be {need} (type confusion)")
    if "general.alignment" in h.kv:
        a = h.kv["general.alignment"]
        if h.kv_types["general.alignment"] != 4 or not isinstance(a, int) or a <= 0 or (
                a & (a - 1)) or a > MAX_ALIGNMENT:
            raise ParseError(f"general.alignment {a!r} must be a u32 power of two up to "
                             f"{MAX_ALIGNMENT:,}")
        h.alignment = a
    cols = _Columns()
    rank_limit = budgets.GGUF_RANK.value
    blocks = block_table()
    seen: set[str] = set()
    memo: dict[object, Any] = {}  # one object per distinct shape or length
    i = 0
    while i < n_tensors:
        # the entries the window holds whole, in one call (performance: a call
        # per field was most of reading a 100k-tensor header); an entry it
        # stops at is read by _info, which names the problem or takes it
        off = r.pos - r.win_start
        if 0 <= off < len(r.win):
            new_off, done = _infos(r.win, off, n_tensors - i, h.alignment, rank_limit,
                                   MAX_NAME, blocks, seen, memo, *cols.lists())
            if done:
                r.pos += new_off - off
                i += done
                continue
        _info(r, i, h.alignment, rank_limit, seen, memo, cols, art)
        i += 1
    h.header_bytes = r.pos
    h.data_offset = -(-r.pos // h.alignment) * h.alignment
    _lay_out(h, cols, f.size, art)
    return h


class _Columns:
    """The tensor-info table as read, in file order: one list per field;
    shapes are logical (ne reversed), equal shapes and lengths one object."""

    __slots__ = ("names", "shapes", "types", "offsets", "nbytes")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.shapes: list[tuple[int, ...]] = []
        self.types: list[int] = []
        self.offsets: list[int] = []
        self.nbytes: list[int] = []

    def lists(self) -> tuple[list[str], list[tuple[int, ...]], list[int], list[int], list[int]]:
        return self.names, self.shapes, self.types, self.offsets, self.nbytes


def _info(r: _Reader, i: int, alignment: int, rank_limit: int, seen: set[str],
          memo: dict[object, Any], cols: _Columns, art: ArtifactDraft) -> None:
    """Tensor-info entry ``i``, field by field: every problem is named here."""
    from .ggml_types import block_size, type_name

    name = r.string("tensor {} name", arg=i)
    if name is None:
        raise ParseError(f"tensor {i} name is longer than {KEEP_STRING} bytes")
    if name in seen:
        raise ParseError(f"duplicate tensor name {name!r}")
    seen.add(name)
    if len(name.encode()) >= MAX_NAME:
        # the rest of the file is still read: only llama.cpp stops here
        art.add(GgufNameTooLong(name, MAX_NAME))
    n_dims = r.u32("{!r} n_dims", name)
    if not 1 <= n_dims <= rank_limit:
        raise ParseError(f"tensor {name!r} has {n_dims} dimensions (1 to "
                         f"{rank_limit} allowed: the {budgets.GGUF_RANK.name} budget; "
                         f"ggml's GGML_MAX_DIMS): {LLAMA_CPP_REFUSES}")
    ne = r.u64s(n_dims, "{!r} dim", name)
    numel = 1
    for d in ne:
        if d > I64_MAX:
            raise ParseError(f"tensor {name!r} dimension {d} exceeds INT64_MAX")
        numel *= d
        if numel > I64_MAX:
            raise ParseError(f"tensor {name!r} shape {list(ne)} overflows INT64")
    ttype = r.u32("{!r} type", name)
    bs = block_size(ttype)
    if bs is None or bs[0] == 0:
        raise ParseError(f"tensor {name!r} has unknown or removed ggml type {ttype}")
    if ne[0] % bs[0]:
        raise ParseError(f"tensor {name!r}: ne[0] = {ne[0]} is not a multiple of the "
                         f"{type_name(ttype)} block size {bs[0]}")
    offset = r.u64("{!r} offset", name)
    if offset % alignment:
        raise ParseError(f"tensor {name!r} offset {offset} is not a multiple of the "
                         f"alignment {alignment}: {LLAMA_CPP_REFUSES}")
    nbytes = numel // bs[0] * bs[1]
    shape = ne[::-1]
    cols.names.append(name)
    cols.shapes.append(memo.setdefault(shape, shape))
    cols.types.append(ttype)
    cols.offsets.append(offset)
    cols.nbytes.append(memo.setdefault(nbytes, nbytes))


_LEN = struct.Struct("<Q").unpack_from
_RANK = struct.Struct("<I").unpack_from
_TYPE_OFFSET = struct.Struct("<IQ").unpack_from
_BLOCK = struct.Struct("<II").unpack_from


# per rank, its extents
_DIMS = tuple(struct.Struct(f"<{k}Q").unpack_from for k in range(9))


def _tensor_infos_py(data: bytes, pos: int, count: int, alignment: int, rank_limit: int,
                     max_name: int, blocks: bytes, seen: set[str], memo: dict[object, Any],
                     names: list[str], shapes: list[tuple[int, ...]], types: list[int],
                     offsets: list[int], nbytes: list[int]) -> tuple[int, int]:
    """Up to ``count`` entries that ``data`` holds whole and that raise no
    question, appended to the columns; it stops before the first entry
    _info must read (too long a name, a bad rank, extent, type or offset, an
    empty or overflowing extent, an undecodable or repeated name).
    tests/test_gguf_infos.py holds the two walks to each other."""
    n = len(data)
    n_types = len(blocks) // 8
    rank_limit = min(rank_limit, len(_DIMS) - 1)
    done = 0
    add_seen, setdefault = seen.add, memo.setdefault
    add_name, add_shape, add_type = names.append, shapes.append, types.append
    add_offset, add_nbytes = offsets.append, nbytes.append
    while done < count:
        q = pos
        if n - q < 8:
            break
        (length,) = _LEN(data, q)
        q += 8
        if length >= max_name or n - q < length + 4:
            break
        raw = data[q : q + length]
        q += length
        (nd,) = _RANK(data, q)
        q += 4
        if not 1 <= nd <= rank_limit or n - q < 8 * nd + 12:
            break
        ne = _DIMS[nd](data, q)
        numel = prod(ne)
        # every extent at least 1: the product bounds each prefix's and each
        # extent (an empty extent goes to _info, which checks prefixes)
        if numel == 0 or numel > I64_MAX:
            break
        q += 8 * nd
        t, off = _TYPE_OFFSET(data, q)
        if t >= n_types:
            break
        bs0, bs1 = _BLOCK(blocks, 8 * t)
        if bs0 == 0 or ne[0] % bs0 or off % alignment:
            break
        size = numel // bs0 * bs1
        if size >> 64:
            break
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            break
        if name in seen:
            break
        add_seen(name)
        shape = ne[::-1]
        add_name(name)
        add_shape(setdefault(shape, shape))
        add_type(t)
        add_offset(off)
        add_nbytes(setdefault(size, size))
        pos = q + 12
        done += 1
    return pos, done


_infos = _tensor_infos_py


def _lay_out(h: GgufHeader, c: _Columns, size: int, art: ArtifactDraft) -> None:
    """Absolute ranges, lengths from the offsets, and contiguity (C's rule);
    then the table, sorted by name."""
    from .ggml_types import type_name

    n = len(c.names)
    shapes = c.shapes
    # packed in order and inside the file, as ggml writes them: nothing to
    # report, and each tensor holds all its bytes (performance: the loop in
    # _lay_out_each is ~1 us a tensor)
    starts: list[int] | None = _starts(c.offsets, c.nbytes, h.alignment, h.data_offset, size)
    available = c.nbytes
    if starts is None:
        starts, available = _lay_out_each(h, c, shapes, size, art)
    order = sorted(range(n), key=c.names.__getitem__)
    if n > 1 and order != list(range(n)):
        pick = itemgetter(*order)
        names: list[str] = list(pick(c.names))
        shapes, types = list(pick(shapes)), list(pick(c.types))
        starts, nbytes = list(pick(starts)), list(pick(c.nbytes))
        available = nbytes if available is c.nbytes else list(pick(available))
    else:
        names, types, nbytes = c.names, c.types, c.nbytes
    dtype = {t: type_name(t) for t in set(types)}
    h.tensors = TensorTable(names, list(map(dtype.__getitem__, types)),
                            list(chain.from_iterable(shapes)), list(map(len, shapes)), starts,
                            nbytes, available)
    h.codes = types
    h.shapes = shapes


def _packed_starts_py(offsets: list[int], nbytes: list[int], alignment: int,
                      data_offset: int, size: int) -> list[int] | None:
    """Each tensor's absolute start when the tensors are packed in order
    (the first at 0, each where the one before it ends, padded to the
    alignment) and the last ends inside the file: then _lay_out_each would
    find nothing to report.  None otherwise (tests/test_gguf_infos.py)."""
    if offsets:
        a = alignment
        pads = map(mul, map(neg, map(floordiv, map(neg, nbytes), repeat(a))), repeat(a))
        if offsets[0] != 0 or not all(map(eq, islice(offsets, 1, None),
                                          map(add, offsets, pads))):
            return None
        if data_offset + offsets[-1] + nbytes[-1] > size:
            return None
    return list(map(data_offset.__add__, offsets))


_starts = _packed_starts_py


def _lay_out_each(h: GgufHeader, c: _Columns, shapes: list[tuple[int, ...]], size: int,
                  art: ArtifactDraft) -> tuple[list[int], list[int]]:
    """Each tensor in offset order: where it starts, how many of its bytes
    the file holds, and an issue for each one out of place or cut short."""
    from .ggml_types import type_name

    names, offsets, nbytes_ = c.names, c.offsets, c.nbytes
    n = len(names)
    starts, available = [0] * n, [0] * n
    order = sorted(range(n), key=offsets.__getitem__)
    expect = 0
    for rank, i in enumerate(order):
        name, offset, nbytes = names[i], offsets[i], nbytes_[i]
        start = h.data_offset + offset
        nxt = (h.data_offset + offsets[order[rank + 1]]) if rank + 1 < n else size
        gap = max(0, min(nxt, size) - start)
        if offset != expect:
            art.add(GgufNotPacked(name, expect, offset))
        expect = offset + -(-nbytes // h.alignment) * h.alignment
        if start + nbytes > size:
            art.add(GgufTruncated(name, type_name(c.types[i]), list(shapes[i][::-1]), nbytes,
                                  max(0, size - start)))
        elif gap < nbytes:
            art.add(GgufOverlap(name, type_name(c.types[i]), list(shapes[i][::-1]), nbytes,
                                gap))
        starts[i] = start
        available[i] = min(nbytes, gap)
    return starts, available
