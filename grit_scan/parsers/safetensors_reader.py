"""A header-only safetensors reader of our own (research: hostile-inputs §1).

It enforces what the reference Rust reader enforces (header <= 100 MB and
within the file, strict UTF-8, a JSON object, ``__metadata__`` str->str,
known case-sensitive dtypes, shape x dtype == byte length, offsets
contiguous from 0 covering the data region exactly, overflow-safe
arithmetic), and it goes further where the reference is silent: duplicate
keys are reported (serde keeps the last one), NaN/Infinity and huge
integers are refused, and a truncated shard still lists its intact tensors,
naming each tensor whose bytes run past the end.  Only the header is read.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import add, attrgetter, itemgetter, mul, sub
from typing import Any

from ..artifact import ArtifactDraft, StoredTensor, TensorTable
from ..issues.file_unparseable import DuplicateKey, DuplicateTensor
from ..issues.grit_check import (
    EntryNotObject,
    EntryOverBudget,
    Gap,
    OffsetsNotPair,
    OffsetsReversed,
    Overlap,
    PartialBytes,
    ShapeNotCounts,
    ShapeNotList,
    ShapeOverflow,
    SpanNotShape,
    Trailing,
    Truncated,
    UnknownDtype,
)
from . import budgets, json_text
from .fileio import SafeFile  # noqa: F401
from .interface import ByteSource, ParseError

MAX_HEADER = budgets.HEADER_BYTES.value
MAX_TENSORS = budgets.TENSORS_PER_FILE.value
MAX_JSON_ITEMS = budgets.JSON_ITEMS.value
U64 = 1 << 64

# safetensors 0.8 dtypes and their widths in bits (names are case-sensitive)
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
    "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}
# the dtypes no convention quantises (conventions/scales.py, readers.py,
# models.py): a file or model of only these is counted, never inferred
UNQUANTISED_FLOATS = frozenset({"F32", "F16", "BF16", "F64"})
# each dtype name as one shared string: json.loads builds a new string for
# every value, and a table keeps a dtype per tensor (performance: memory)
_DTYPE_NAME: dict[str, str] = {k: k for k in DTYPE_BITS}


@dataclass
class Header:
    """A safetensors header as read: its length, data start, tensors and metadata."""

    header_len: int
    data_start: int
    tensors: dict[str, StoredTensor] = field(default_factory=dict)
    table: TensorTable | None = None  # the fast path's columns (tensors stays empty)
    metadata: dict[str, str] = field(default_factory=dict)


class _OverBudget(Exception):
    """Raised inside json.loads to stop a parse that exceeds a budget."""

    def __init__(self, objects: int) -> None:
        super().__init__(objects)
        self.objects = objects


def loads_header(text: str, max_objects: int = MAX_TENSORS + 2) -> tuple[Any, list[str]]:
    """A header's JSON, parsed by the standard library: ``json.loads(text)``
    (of duplicate keys the last is kept, as the Rust reference keeps it),
    and every key met again inside the same object, in the order met.
    NaN and Infinity are refused (ValueError), and a parse that closes more
    than ``max_objects`` objects stops (_OverBudget).  Held to json.loads
    by tests/test_readers.py."""
    dups: list[str] = []
    objects = 0

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        # One view of the header: keys are compared after JSON decoding, so
        # an escaped key ("data\u005foffsets") is the same key as its plain
        # spelling.  Each tensor entry is one object: past the budget the
        # parse stops before it builds more (the hook runs as each closes).
        nonlocal objects
        objects += 1
        if objects > max_objects:
            raise _OverBudget(objects)
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            for k, _ in items:
                if k in seen:
                    dups.append(k)
                seen.add(k)
        return out

    obj = _loads_plain(text, max_objects)
    if obj is None:
        obj = json.loads(text, object_pairs_hook=pairs, parse_constant=_reject_constant)
    return obj, dups


def _lone_surrogate(obj: dict[str, Any]) -> str | None:
    """The first key or string value of a parsed header (tensor entries and
    __metadata__, two levels deep) that holds a lone UTF-16 surrogate:
    json.loads accepts ``"\\ud800"``, the Rust reference does not."""
    for k, v in obj.items():
        for s in (k, *(v.keys() if isinstance(v, dict) else ()),
                  *(x for x in (v.values() if isinstance(v, dict) else ())
                    if isinstance(x, str))):
            try:
                s.encode("utf-8")
            except UnicodeEncodeError:
                shown: str = s.encode("utf-8", "backslashreplace").decode("ascii")
                return shown
    return None


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def read_header(f: ByteSource, art: ArtifactDraft) -> Header:
    """Parse and validate the header; problems become issues on ``art``.
    Raises ParseError when nothing can be read."""
    if f.size < 8:
        raise ParseError(f"header too small: the file is {f.size} bytes; a safetensors file "
                         "starts with an 8-byte header length")
    (n,) = struct.unpack("<Q", f.read_at(0, 8))
    if n > MAX_HEADER:
        raise ParseError(f"header length {n} exceeds the {MAX_HEADER:,}-byte limit")
    if 8 + n > f.size:
        raise ParseError(f"header length {n} runs past the end of the {f.size}-byte file")
    raw = f.read_at(8, n)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(f"header is not valid UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        raise ParseError("header starts with a byte-order mark, which is not JSON")
    n_items = budgets.json_items(text, MAX_JSON_ITEMS)
    if n_items > MAX_JSON_ITEMS:
        raise ParseError(budgets.JSON_ITEMS.exceeded("header JSON", n_items))
    if len(text) >= TYPED_FROM and "\\" not in text and not _many_objects(text):
        hdr = _typed_path(text, n, f.size - 8 - n)
        if hdr is not None:
            return hdr
    try:
        obj, dups = loads_header(text)
    except _OverBudget as exc:
        raise ParseError(budgets.TENSORS_PER_FILE.exceeded(
            "the header's object count", exc.objects)) from None
    except json.JSONDecodeError as exc:
        raise ParseError(f"header is not JSON: {exc.msg} at character {exc.pos}") from None
    except RecursionError:
        raise ParseError("header JSON is nested too deeply") from None
    except ValueError as exc:
        raise ParseError(f"header JSON is not acceptable: {exc}") from None
    # counts come from the parsed object, never from the text
    n_tensors = len(obj) - ("__metadata__" in obj) if isinstance(obj, dict) else 0
    if n_tensors > MAX_TENSORS:
        raise ParseError(budgets.TENSORS_PER_FILE.exceeded("the header's tensor count",
                                                           n_tensors))
    if not isinstance(obj, dict):
        raise ParseError(f"header is a JSON {type(obj).__name__}, not an object")
    if "\\u" in text:  # only an escape can spell a lone surrogate
        bad = _lone_surrogate(obj)
        if bad is not None:
            raise ParseError(
                f"header JSON holds a lone surrogate escape in '{bad}', which is not Unicode "
                "text (the safetensors library refuses such a header too)")
    hdr = Header(header_len=n, data_start=8 + n)
    meta = obj.pop("__metadata__", None)
    if "__metadata__" in dups:
        raise ParseError("__metadata__ appears twice in the header")
    if meta is not None:
        if not isinstance(meta, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
            raise ParseError("__metadata__ must map strings to strings")
        hdr.metadata = meta
    for d in sorted(set(dups)):
        if d in obj:
            art.add(DuplicateTensor(d))
        elif d != "__metadata__":
            art.add(DuplicateKey(None, d))
    region = f.size - hdr.data_start
    if _fast_path(obj, hdr, region):
        return hdr
    spans: list[tuple[int, int, str]] = []
    for name, entry in obj.items():
        st = _entry(name, entry, hdr.data_start, region, art)
        if st is not None:
            hdr.tensors[name] = st
            spans.append((st.offset - hdr.data_start, st.offset - hdr.data_start + st.nbytes,
                          name))
    _coverage(spans, region, art)
    return hdr


def _many_objects(text: str, max_objects: int = MAX_TENSORS + 2) -> bool:
    """True when the text may hold more objects than the budget (one "{" each):
    the hook path counts them as it parses and stops at the budget."""
    return len(text) > max_objects and text.count("{") > max_objects


# headers this long or longer try the typed decode first (safetensors_json:
# importing msgspec is not worth it for a short header)
TYPED_FROM = json_text.FAST_FROM
_ENTRY_DTYPE, _ENTRY_SHAPE, _ENTRY_OFFSETS = (attrgetter("dtype"), attrgetter("shape"),
                                              attrgetter("data_offsets"))


def _typed_path(text: str, n: int, region: int) -> Header | None:
    """The header of a text without a backslash, decoded into typed entries
    (safetensors_json) and checked in bulk (``_check_columns``), when it is
    exactly valid: no duplicate key, no unknown field, every check of
    ``_fast_path`` passed.  None sends it to the plain path, which reads
    every header and names every problem; where this gives a header, it is
    the one the plain path gives (tests/test_typed_json.py, tests/test_readers.py)."""
    from . import safetensors_json  # msgspec: for a long header only (TYPED_FROM)

    got = safetensors_json.decode(text)
    if got is None:
        return None
    entries, meta = got
    if 2 * safetensors_json.strings(entries, meta) != text.count('"'):
        return None
    if meta is not None:
        del entries["__metadata__"]
    if not entries or len(entries) > MAX_TENSORS:
        return None
    names, vals = list(entries), list(entries.values())
    del entries
    try:
        # a missing dtype (None) or an unknown one is a KeyError
        dtypes = list(map(_DTYPE_NAME.__getitem__, map(_ENTRY_DTYPE, vals)))
    except KeyError:
        return None
    shapes, offs = list(map(_ENTRY_SHAPE, vals)), list(map(_ENTRY_OFFSETS, vals))
    if None in offs or None in shapes:
        return None
    hdr = Header(header_len=n, data_start=8 + n)
    if meta is not None:
        hdr.metadata = meta
    # msgspec checked the types: every extent a non-negative int64, every
    # offset a non-negative int, every rank within the budget, every offsets
    # a pair; each shape is a tuple, equal ones one (as ``shape_list`` gives)
    same: dict[tuple[int, ...], tuple[int, ...]] = {}
    shapes = list(map(same.setdefault, shapes, shapes))
    ok = _check_columns(names, dtypes, shapes, list(map(len, shapes)),
                        list(map(DTYPE_BITS.__getitem__, dtypes)),
                        None, list(chain.from_iterable(offs)), hdr, region)
    return hdr if ok else None


def _loads_plain(text: str, max_objects: int = MAX_TENSORS + 2) -> dict[str, Any] | None:
    """The header parsed without the per-object hook, when the text itself
    proves the hook would find nothing: no more objects than the budget,
    and no duplicate key.  None: parse with the hook (performance: the hook is
    a Python call per tensor entry).

    Without a backslash every '"' delimits a string, so the text holds
    count('"') / 2 strings.  The parse keeps one string per key and per
    string value it retains; a key dropped as a duplicate (at any depth),
    or a string anywhere these levels do not count, makes the retained
    count fall short of the text's, and the hook decides."""
    if "\\" in text or _many_objects(text, max_objects):
        return None
    obj = json_text.loads(text, parse_constant=_reject_constant)
    if type(obj) is not dict:
        return None
    vals = list(obj.values())
    types = list(map(type, vals))
    entries = [v for v, t in zip(vals, types) if t is dict]
    kept = (len(obj) + types.count(str) + sum(map(len, entries))
            + list(map(type, chain.from_iterable(map(dict.values, entries)))).count(str))
    return obj if 2 * kept == text.count('"') else None


_DTYPE, _SHAPE, _OFFSETS = itemgetter("dtype"), itemgetter("shape"), itemgetter("data_offsets")


def _fast_path(obj: dict[str, Any], hdr: Header, region: int) -> bool:
    """Validate a well-formed header in bulk (C-level maps), filling
    ``hdr``; False sends the header through the per-entry path, which names
    every problem.  Only an exactly valid header takes this path."""
    if not obj:
        return region == 0
    try:
        names = list(obj)
        # itemgetter raises TypeError on anything but a mapping, KeyError on
        # a missing field: both send the header to the per-entry path
        vals = list(obj.values())
        dtypes = list(map(_DTYPE_NAME.__getitem__, map(_DTYPE, vals)))
        shapes = list(map(_SHAPE, vals))
        offs = list(map(_OFFSETS, vals))
        widths = list(map(DTYPE_BITS.__getitem__, dtypes))
    except (KeyError, TypeError):
        return False
    if not names:
        return region == 0
    try:
        ranks = list(map(len, shapes))
        if set(map(len, offs)) != {2} or max(ranks) > budgets.SAFETENSORS_RANK.value:
            return False
        # chain over anything but lists of ints yields non-ints (a string's
        # characters, a dict's keys) or raises: the type test below catches both
        flat_shape = list(chain.from_iterable(shapes))
        flat_offs = list(chain.from_iterable(offs))
        if set(map(type, flat_offs)) != {int} or (
                flat_shape and set(map(type, flat_shape)) != {int}):
            return False
    except TypeError:
        return False
    return _check_columns(names, dtypes, shapes, ranks, widths, flat_shape, flat_offs, hdr,
                          region)


def _check_columns(names: list[str], dtypes: list[Any], shapes: list[Any], ranks: list[int],
                   widths: list[int], flat_shape: list[int] | None, flat_offs: list[int],
                   hdr: Header, region: int) -> bool:
    """``_fast_path``'s arithmetic checks, one C-level pass each (no numpy:
    importing it costs more than checking a 100-shard model's headers).
    Every value stays an int64: extents below 2^63, element counts below
    2^55, and offsets, which tile [0, region), below 2^62.  ``flat_shape``
    is every extent, one after the other, which the table keeps; None:
    ``shapes`` are tuples whose extents the caller checked, kept as they are."""
    if region >= 1 << 62:
        return False
    if flat_shape and (min(flat_shape) < 0 or max(flat_shape) >= 1 << 63):
        return False
    numels = list(map(math.prod, shapes))
    if max(numels) >= 1 << 55:
        return False
    start, end = flat_offs[0::2], flat_offs[1::2]
    nbytes = list(map(sub, end, start))
    # shape x dtype is a whole number of bytes, the span's (none negative:
    # no extent is)
    if list(map(mul, numels, widths)) != list(map(mul, nbytes, repeat(8))):
        return False
    # offsets listed one after the other from 0 tile the data region;
    # listed in another order, they do when sorted
    if not (start[0] == 0 and end[-1] == region and start[1:] == end[:-1]):
        spans = sorted(zip(start, end))
        if spans[0][0] != 0 or spans[-1][1] != region:
            return False
        if list(map(itemgetter(0), spans[1:])) != list(map(itemgetter(1), spans[:-1])):
            return False
    offsets = list(map(add, start, repeat(hdr.data_start)))
    hdr.table = (TensorTable(names, dtypes, flat_shape, ranks, offsets, nbytes, nbytes)
                 if flat_shape is not None
                 else TensorTable.of_shapes(names, dtypes, shapes, ranks, offsets, nbytes, nbytes))
    return True


def _is_uint(x: Any) -> bool:
    return type(x) is int and 0 <= x < U64


def _entry(name: str, entry: Any, data_start: int, region: int,
           art: ArtifactDraft) -> StoredTensor | None:
    if type(entry) is not dict:
        art.add(EntryNotObject(name))
        return None
    dtype, shape, offs = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    width = DTYPE_BITS.get(dtype) if isinstance(dtype, str) else None
    if width is None or not isinstance(dtype, str):
        art.add(UnknownDtype(name, dtype, tuple(sorted(DTYPE_BITS))))
        return None
    if type(shape) is not list:
        art.add(ShapeNotList(name, shape))
        return None
    if len(shape) > budgets.SAFETENSORS_RANK.value:
        art.add(EntryOverBudget(name, budgets.SAFETENSORS_RANK.exceeded("shape rank", len(shape)),
                                budgets.SAFETENSORS_RANK.name))
        return None
    numel = 1
    for d in shape:
        if type(d) is not int or d < 0 or d >= U64:
            art.add(ShapeNotCounts(name, shape))
            return None
        numel *= d
        if numel >= U64:  # bounded at every step: a product never grows past 128 bits
            art.add(ShapeOverflow(name, shape))
            return None
    if type(offs) is not list or len(offs) != 2 or not (_is_uint(offs[0]) and _is_uint(offs[1])):
        art.add(OffsetsNotPair(name, offs))
        return None
    start, end = offs
    if end < start:
        art.add(OffsetsReversed(name, start, end))
        return None
    bits = numel * width
    if bits % 8:
        art.add(PartialBytes(name, numel, dtype, bits))
        return None
    want = bits // 8
    if want != end - start:
        art.add(SpanNotShape(name, shape, dtype, want, end - start))
        return None
    available = max(0, min(end, region) - start)
    return StoredTensor(name, dtype, tuple(shape), data_start + start, end - start, available)


def _coverage(spans: list[tuple[int, int, str]], region: int, art: ArtifactDraft) -> None:
    """Offsets must tile [0, region) exactly: report gaps, overlaps, trailing
    bytes and truncation (each truncated tensor by name)."""
    spans.sort()
    pos = 0
    for start, end, name in spans:
        if start > pos:
            art.add(Gap(name, pos, start))
        elif start < pos:
            art.add(Overlap(name, pos, start))
        pos = max(pos, end)
        if end > region:
            art.add(Truncated(name, start, end, region))
    if pos < region:
        art.add(Trailing(None, pos, region))
