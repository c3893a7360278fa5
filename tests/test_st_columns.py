"""The compiled scanner of a plain safetensors header (issue 15).

``st_header_columns`` (grit_scan/codec/_fnv.c) turns a header of exactly the
plain shape into the columns safetensors_reader._fast_path builds, and
returns None for anything else, which then takes today's parse.  It may only
ever accept a subset of what today's path accepts, and for that subset give
the same Header.  So every header here, valid or mutated, is read twice, with
the scanner and without it (the pure-Python path, the oracle), and the whole
result must be identical: the table's columns, the records, the metadata,
the issues on the artifact, or the ParseError's message.  Plainly valid
headers must be accepted by the scanner (a scanner that always refused would
fail), real files are held to the safetensors package, and the budgets must
still raise where they did."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grit_scan.artifact import Artifact, Format
from grit_scan.parsers import budgets
from grit_scan.parsers import safetensors_reader as sr

try:
    from grit_scan.codec import _fnv
except ImportError:  # pragma: no cover - built without a compiler
    _fnv = None

needs_c = pytest.mark.skipif(_fnv is None and not os.environ.get("GRIT_REQUIRE_COMPILED"),
                             reason="compiled helper not built")
ROOT = Path(__file__).resolve().parent.parent

# widths from the safetensors format documentation, written out here rather
# than read from the reader's table
BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8,
        "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
        "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64, "U64": 64,
        "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}


class _Bytes:
    """An in-memory ByteSource; ``size`` may claim more bytes than it holds
    (a scan reads the header only), for data regions of petabytes."""

    def __init__(self, data: bytes, size: int | None = None) -> None:
        self.data, self.name = data, "mem"
        self.size = len(data) if size is None else size

    def read_at(self, offset: int, n: int) -> bytes:
        return self.data[offset:offset + n]

    def changed(self) -> str | None:
        return None


def _file(text: str | bytes, region: int) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw + bytes(region)


def _read(data: bytes, compiled: bool, size: int | None = None) -> tuple[Any, ...]:
    """read_header's whole result, comparable; the table as plain lists."""
    art = Artifact(path="m", abs_path="m", format=Format.SAFETENSORS)
    with pytest.MonkeyPatch.context() as m:
        if not compiled:
            m.setattr(sr, "_scan_columns", None)
        try:
            hdr = sr.read_header(_Bytes(data, size), art)
        except sr.ParseError as exc:
            return ("error", str(exc), art.issues)
    t = hdr.table
    cols = None if t is None else (
        t.names, list(t.dtypes), t.shapes(), list(t.ranks), list(t.offsets), list(t.nbytes),
        list(t.available), t.available is t.nbytes, list(t), type(t.ranks), type(t.offsets),
        type(t.nbytes))
    return (hdr.header_len, hdr.data_start, cols, hdr.tensors, hdr.metadata,
            type(hdr.metadata), art.issues)


def _scan(data: bytes) -> Any:
    """The scanner called as read_header calls it."""
    n = struct.unpack("<Q", data[:8])[0]
    return _fnv.st_header_columns(data[8:8 + n], sr._DTYPE_NAME, sr.DTYPE_BITS, 8 + n,
                                  len(data) - 8 - n, sr.MAX_TENSORS, sr.MAX_JSON_ITEMS,
                                  budgets.SAFETENSORS_RANK.value)


def _same(data: bytes) -> bool:
    """Both paths give the same result; True when the scanner accepted."""
    on, off = _read(data, True), _read(data, False)
    assert on == off
    if _fnv is None:
        return False
    cols = _scan(data)
    if cols is not None:  # what it accepts, the pure path reads as a clean table
        assert off[2] is not None and off[3] == {} and off[6] == []
        assert cols[0] == off[2][0] and cols[6] == off[4]
    return cols is not None


# ------------------------------------------------------------- generation

# names: any text a plain string may hold (unicode, quotes of other kinds,
# JSON punctuation), and sometimes characters that need an escape
_PLAIN_CHARS = st.characters(exclude_categories=("Cs",), exclude_characters='"\\',
                             min_codepoint=0x20)
_NAMES = st.text(_PLAIN_CHARS, min_size=0, max_size=40).filter(lambda s: s != "__metadata__")
_ANY_NAMES = st.text(st.characters(exclude_categories=("Cs",)), max_size=8).filter(
    lambda s: s != "__metadata__")
_WS = st.text(" \t\n\r", max_size=2)
_DTYPES = st.sampled_from(sorted(BITS))


@st.composite
def _entries(draw: Any, plain: bool = True) -> tuple[list[dict[str, Any]], int]:
    """Tensors whose offsets tile the region, listed in a random order."""
    names = draw(st.lists(_NAMES if plain else _ANY_NAMES, min_size=1, max_size=12,
                          unique=True))
    ents, pos = [], 0
    for name in names:
        dtype = draw(_DTYPES)
        shape = draw(st.lists(st.integers(0, 6), max_size=4))
        numel = 1
        for d in shape:
            numel *= d
        if numel * BITS[dtype] % 8:  # a whole number of bytes, as a writer would make it
            shape = [*shape, 8]
            numel *= 8
        size = numel * BITS[dtype] // 8
        ents.append({"name": name, "dtype": dtype, "shape": shape,
                     "data_offsets": [pos, pos + size]})
        pos += size
    return draw(st.permutations(ents)), pos


def _render(draw: Any, ents: list[dict[str, Any]], meta: dict[str, str] | None) -> str:
    """A header text written by hand: random whitespace, field and metadata
    order, names not escaped (they hold no '"' or '\\').  An entry's "raw"
    fields (field -> JSON text) replace or add to its three."""
    def ws() -> str:
        return str(draw(_WS))

    def arr(xs: list[int]) -> str:
        return "[" + ws() + ("," + ws()).join(str(x) + ws() for x in xs) + "]"

    parts = []
    for e in ents:
        fields = [("dtype", f'"{e["dtype"]}"'), ("shape", arr(e["shape"])),
                  ("data_offsets", arr(e["data_offsets"]))]
        raw = e.get("raw", {})
        fields = [(k, raw.pop(k) if k in raw and draw(st.booleans()) else v) for k, v in fields]
        fields += list(raw.items())
        order = draw(st.permutations(fields))
        body = ",".join(f'{ws()}"{k}"{ws()}:{ws()}{v}{ws()}' for k, v in order)
        parts.append(f'{ws()}"{e["name"]}"{ws()}:{ws()}{{{body}}}{ws()}')
    if meta is not None:
        body = ",".join(f'{ws()}"{k}"{ws()}:{ws()}"{v}"{ws()}' for k, v in meta.items())
        at = draw(st.integers(0, len(parts)))
        parts.insert(at, f'{ws()}"__metadata__"{ws()}:{ws()}{{{body}{ws()}}}{ws()}')
    return ws() + "{" + ",".join(parts) + "}" + ws()


_META = st.none() | st.dictionaries(_NAMES, _NAMES, max_size=3)


@st.composite
def _plain(draw: Any) -> tuple[str, int]:
    ents, region = draw(_entries())
    return _render(draw, ents, draw(_META)), region


# mutations: tokens and edits a hostile or careless writer produces
_TOKENS = ['"dtype":"F32"', '"shape":[1]', '"data_offsets":[0,0]', '"x":1', "{}", "[]",
           '"a":{"b":{}}', "1.0", "1e3", "-1", "01", "00", str(1 << 62), str((1 << 62) - 1),
           str(1 << 63), str((1 << 63) - 1), str(1 << 64), "9" * 30, "null", "true", "NaN",
           "Infinity", "\\u0061", '\\"', "\\n", "\x01", "\u00e9", ",", ":", "{", "}", "[", "]",
           '"', " ", "\ufeff", '"__metadata__":{}', '"__metadata__":{"k":1}',
           '"__metadata__":{"k":"v","k":"w"}', '"__metadata__":null', '"F32"', '"f32"',
           '"BF16"', '"F4"', '"I64"', "0", "7", "[0,1,2,3,4,5,6,7,8]"]


# values a field may take instead of its own
_VALUES = ['"F32"', '"f32"', '"BF16"', '"F4"', '"I64"', '"X"', '""', "1", "null", "{}", "[]",
           "[0]", "[1]", "[0,0]", "[0,1]", "[0,1,2]", "[1.0]", "[1e0]", "[-1]", "[01]",
           f"[{(1 << 63) - 1}]", f"[{1 << 63}]", f"[{1 << 62},{1 << 62}]",
           f"[{(1 << 62) - 1},{(1 << 62) - 1}]", f"[{1 << 64}]", "[" + "9" * 30 + "]",
           f"[{1 << 28},{1 << 27}]", "[1,1,1,1,1,1,1,1]", "[1,1,1,1,1,1,1,1,1]",
           '"\\u0046\\u0033\\u0032"', '["a"]', "[[1]]", "[true]", "[NaN]"]


@st.composite
def _mutated(draw: Any) -> tuple[str, int]:
    """A plain header with one to three defects, in the values (so the text
    is still JSON, and the checks after the parse decide) or in the text."""
    ents, region = draw(_entries())
    ents = [dict(e) for e in ents]
    meta = draw(_META)
    text_edits = 0
    for _ in range(draw(st.integers(1, 3))):
        e = ents[draw(st.integers(0, len(ents) - 1))]
        kind = draw(st.sampled_from(["value", "extra", "offset", "dim", "region", "name",
                                     "dtype", "meta", "text"]))
        if kind == "value":  # a field takes another value
            e.setdefault("raw", {})[draw(st.sampled_from(["dtype", "shape", "data_offsets"]))] = (
                draw(st.sampled_from(_VALUES)))
        elif kind == "extra":  # a key more, or one of the three twice
            e.setdefault("raw", {})[draw(st.sampled_from(["x", "dtype", "shape", "data_offsets",
                                                          "__metadata__", "Dtype"]))] = (
                draw(st.sampled_from(_VALUES)))
        elif kind == "offset":  # a gap, an overlap, a span that does not fit the shape
            i = draw(st.integers(0, 1))
            e["data_offsets"] = list(e["data_offsets"])
            e["data_offsets"][i] = max(0, e["data_offsets"][i] + draw(st.integers(-2, 2)))
        elif kind == "dim":
            e["shape"] = [*e["shape"], draw(st.sampled_from([0, 1, 2, 3, (1 << 63) - 1]))]
        elif kind == "region":
            region = max(0, region + draw(st.integers(-3, 3)))
        elif kind == "name":  # a name twice, or a name another entry has
            other = ents[draw(st.integers(0, len(ents) - 1))]
            if draw(st.booleans()):
                ents.append(dict(other))
            else:
                e["name"] = other["name"]
        elif kind == "dtype":
            e["dtype"] = draw(st.sampled_from([*BITS, "f32", "F8", "bf16", "__metadata__"]))
        elif kind == "meta":
            meta = {**(meta or {}), draw(_NAMES): draw(_NAMES)}
            if draw(st.booleans()):
                e["name"] = "__metadata__"
        else:
            text_edits += 1
    text = _render(draw, ents, meta)
    for _ in range(text_edits):
        kind = draw(st.sampled_from(EDITS))
        text = edit(draw, kind, text, _TOKENS, ["x", "}", " ", "\n", ",", "{}", "\x00"])
    return text, region


EDITS = ["replace", "insert", "delete", "dup", "cut", "trail"]
_S = TypeVar("_S", str, bytes)


def edit(draw: Any, kind: str, text: _S, tokens: Sequence[_S], trails: Sequence[_S]) -> _S:
    """``text`` after one edit of ``kind`` (one of EDITS) at a drawn place:
    a token put over or between its characters, a span deleted or doubled,
    the text cut short, or a trailing token added (tests/test_index_scanner.py
    mutates indexes with it too)."""
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 12)))
    if kind == "replace":
        return text[:i] + draw(st.sampled_from(tokens)) + text[j:]
    if kind == "insert":
        return text[:i] + draw(st.sampled_from(tokens)) + text[i:]
    if kind == "delete":
        return text[:i] + text[j:]
    if kind == "dup":
        return text[:j] + text[i:j] + text[j:]
    if kind == "cut":
        return text[:i]
    return text + draw(st.sampled_from(trails))


# ------------------------------------------------------------------- tests


@needs_c
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_plain())
def test_plain_headers_are_accepted_and_read_as_before(doc: tuple[str, int]) -> None:
    """Every plain header is taken by the scanner, and read_header's result
    is the one the pure path gives (names in text order, the metadata dict,
    the int64 columns)."""
    text, region = doc
    assert _same(_file(text, region))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_mutated_headers_read_as_before(doc: tuple[str, int]) -> None:
    """Duplicates, escapes, floats, signs, leading zeros, huge integers,
    gaps, overlaps, a wrong region, trailing bytes, cuts, nesting, extra keys:
    the scanner refuses or gives what the pure path gives, and read_header's
    result (Header, issues or error message) is the same either way."""
    text, region = doc
    _same(_file(text, region))


@settings(max_examples=200, deadline=None)
@given(_entries(plain=False), _META, st.booleans())
def test_json_dumps_headers_read_as_before(ents: tuple[list[dict[str, Any]], int],
                                           meta: dict[str, str] | None, indent: bool) -> None:
    """Headers written by json.dumps (escapes for quotes, backslashes and
    control characters in names, ASCII escapes for all non-ASCII when
    ensure_ascii): the same result with or without the scanner."""
    entries, region = ents
    obj: dict[str, Any] = {} if meta is None else {"__metadata__": meta}
    for e in entries:
        obj[e["name"]] = {k: e[k] for k in ("dtype", "shape", "data_offsets")}
    for ensure_ascii in (True, False):
        text = json.dumps(obj, ensure_ascii=ensure_ascii, indent=2 if indent else None)
        accepted = _same(_file(text, region))
        if accepted:
            assert "\\" not in text


@needs_c
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 64))
def test_arbitrary_bytes_never_raise(raw: bytes, region: int) -> None:
    """Not JSON, not UTF-8, cut anywhere: None or a table, never an
    exception or a read past the buffer."""
    got = _fnv.st_header_columns(raw, sr._DTYPE_NAME, sr.DTYPE_BITS, 8 + len(raw), region,
                                 sr.MAX_TENSORS, sr.MAX_JSON_ITEMS, 8)
    assert got is None or isinstance(got, tuple)
    _same(_file(raw, region))


@needs_c
def test_columns_of_a_header_written_by_hand() -> None:
    """Expected values worked out from the text: data_start = 8 + header
    length, starts absolute, bytes = elements x bits / 8; names in text
    order, not offset order."""
    text = ('{"b": {"shape": [2, 3], "dtype": "F32", "data_offsets": [2, 26]},\n'
            ' "__metadata__": {"format": "pt", "n\u00e9": "\u4e2d"},\n'
            ' "a\u00e9": {"data_offsets": [0, 2], "dtype": "BF16", "shape": []},\n'
            ' "c": {"dtype": "F4", "shape": [0, 5], "data_offsets": [26, 26]}}')
    raw = text.encode()
    got = _fnv.st_header_columns(raw, sr._DTYPE_NAME, sr.DTYPE_BITS, 8 + len(raw), 26,
                                 100, 1000, 8)
    assert got is not None
    names, dtypes, dims, ranks, starts, nbytes, meta = got
    ds = 8 + len(raw)
    assert names == ["b", "a\u00e9", "c"]
    assert dtypes == ["F32", "BF16", "F4"]
    assert all(d is sr._DTYPE_NAME[d] for d in dtypes)  # the shared strings
    assert dims == struct.pack("=4q", 2, 3, 0, 5) and ranks == [2, 0, 2]
    assert starts == struct.pack("=3q", ds + 2, ds, ds + 26)
    assert nbytes == struct.pack("=3q", 24, 2, 0)
    assert meta == {"format": "pt", "n\u00e9": "\u4e2d"}
    assert _same(_file(text, 26))


@needs_c
@pytest.mark.parametrize("text,region", [
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
     '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),          # a name twice
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"dtype":"U8"}}', 1),  # a key twice
    ('{"a":{"dtype":"U8","shape":[1],"shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1]}}', 1),                              # a key missing
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}', 1),   # an extra key
    ('{"\\u0061":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),   # an escape
    ('{"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}', 1),       # a float
    ('{"a":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}', 1),        # a sign
    ('{"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}}', 1),        # a leading zero
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', 2),         # a gap at 0
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 2),         # trailing data
    ('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', 1),         # truncated
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
     '"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),          # an overlap
    ('{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}', 1),         # 12 bits
    ('{"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}}', 4),        # case
    ('{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}', 1),  # rank 9
    ('{"a":{"dtype":"U8","shape":[9223372036854775808,0],"data_offsets":[0,0]}}', 0),
    ('{"a":{"dtype":"U8","shape":[36028797018963968],"data_offsets":[0,36028797018963968]}}',
     0),                                                                  # 2^55 elements
    ('{"a":{"dtype":"U8","shape":[0],"data_offsets":[4611686018427387904,'
     '4611686018427387904]}}', 0),                                        # offset 2^62
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} x', 1),       # trailing text
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}', 1),          # cut
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},}', 1),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}\x00', 1),
    ('{"__metadata__":{"k":"v"},"__metadata__":{"k":"v"},'
     '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"__metadata__":{"k":"v","k":"w"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
     1),
    ('{"__metadata__":{"k":1},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"__metadata__":{"k":{}},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"__metadata__":null,"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"__metadata__":{"k":"v"}}', 0),                                    # no tensor
    ("{}", 0), ("", 0), (" ", 0), ("[]", 0),
    ('\ufeff{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":"x"}', 1),
    ('{"a\x01":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),     # a control char
    ('{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,0]}}', 0),  # 2^64
    ('{"a":{"dtype":"U8","shape":[18446744073709551617],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[0],"data_offsets":[18446744073709551616,'
     '18446744073709551616]}}', 0),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,18446744073709551617]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,00000000000000000001]}}', 1),
    ('{"model.layers.0\x01.self_attn.q_proj":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
     1),                                                                  # inside a long name
    ('{"model.layers.0\x1f.self_attn.q_proj":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
     1),
    ('{"model.layers.0.self_attn.q_proj\\u0031":{"dtype":"U8","shape":[1],'
     '"data_offsets":[0,1]}}', 1),
    ('{"__metadata__":{"format":"pt","long key with a \x0b inside":"v"},'
     '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8" "shape":[1],"data_offsets":[0,1]}}', 1),         # commas missing
    ('{"a":{"dtype":"U8","shape":[1] "data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0 1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1 1],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]} "b":{"dtype":"U8","shape":[0],'
     '"data_offsets":[1,1]}}', 1),
    ('{"__metadata__":{"k":"v" "j":"w"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}',
     1),
    ('{"a":{"dtype":"U8","shape":[1,],"data_offsets":[0,1]}}', 1),        # commas extra
    ('{"a":{"dtype":"U8","shape":[,1],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8",,"shape":[1],"data_offsets":[0,1]}}', 1),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],}}', 1),
    ('{"a" {"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', 1),         # a colon missing
    ('{"a":{"dtype" "U8","shape":[1],"data_offsets":[0,1]}}', 1),
])
def test_what_the_scanner_refuses(text: str, region: int) -> None:
    """Each of these is outside the plain shape or fails a check: the
    scanner says None, and read_header gives what it gave before."""
    data = _file(text, region)
    assert _scan(data) is None
    assert _read(data, True) == _read(data, False)


@needs_c
def test_offsets_in_any_text_order_and_zero_length_tensors() -> None:
    """Offsets listed out of order (sorted by (start, end) before the tiling
    check, as _fast_path does), and empty tensors sharing one offset."""
    text = ('{"z":{"dtype":"U8","shape":[3],"data_offsets":[2,5]},'
            '"e1":{"dtype":"U8","shape":[0],"data_offsets":[2,2]},'
            '"y":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
            '"e2":{"dtype":"U8","shape":[0],"data_offsets":[5,5]},'
            '"e3":{"dtype":"U8","shape":[0],"data_offsets":[2,2]}}')
    data = _file(text, 5)
    assert _scan(data) is not None
    assert _same(data)
    assert _scan(_file(text, 6)) is None and not _same(_file(text, 6))


@needs_c
@pytest.mark.parametrize("dtype,shape,nbytes,ok", [
    ("U8", [1 << 55], 1 << 55, False),               # elements: 2^55 is over
    ("U8", [(1 << 55) - 1], (1 << 55) - 1, True),
    ("U8", [1 << 28, 1 << 27], 1 << 55, False),
    ("U8", [1 << 28, 1 << 27, 0], 0, True),          # a zero makes any product 0
    ("F64", [(1 << 55) - 1], ((1 << 55) - 1) * 8, True),
    ("U8", [(1 << 63) - 1, 0], 0, True),             # dimensions up to 2^63 - 1
    ("U8", [1 << 63, 0], 0, False),
    ("U8", [1 << 31, 1 << 31, 1 << 31, 0], 0, True),
])
def test_bounds_over_huge_regions(dtype: str, shape: list[int], nbytes: int, ok: bool) -> None:
    """A file that claims a petabyte data region (the header is all a scan
    reads): the scanner's bounds are _fast_path's, to the unit."""
    text = json.dumps({"a": {"dtype": dtype, "shape": shape, "data_offsets": [0, nbytes]}})
    raw = text.encode()
    got = _fnv.st_header_columns(raw, sr._DTYPE_NAME, sr.DTYPE_BITS, 8 + len(raw), nbytes,
                                 sr.MAX_TENSORS, sr.MAX_JSON_ITEMS, 8)
    assert (got is not None) == ok
    data = _file(text, 0)
    on, off = _read(data, True, len(data) + nbytes), _read(data, False, len(data) + nbytes)
    assert on == off
    assert (off[2] is not None) == ok  # where the pure path builds a table


@needs_c
@pytest.mark.parametrize("end,ok", [((1 << 62) - 1, True), (1 << 62, False)])
def test_offsets_up_to_2_62(end: int, ok: bool) -> None:
    """Offsets below 2^62 (where _fast_path's int64 arithmetic stays safe):
    U8 tensors of at most 2^55 - 1 bytes each, tiling up to ``end``."""
    chunk, ents, pos = (1 << 55) - 1, {}, 0
    while pos < end:
        size = min(chunk, end - pos)
        ents[f"t{len(ents)}"] = {"dtype": "U8", "shape": [size], "data_offsets": [pos, pos + size]}
        pos += size
    data = _file(json.dumps(ents), 0)
    on, off = _read(data, True, len(data) + end), _read(data, False, len(data) + end)
    assert on == off and (off[2] is not None) == ok
    raw = data[8:]
    got = _fnv.st_header_columns(raw, sr._DTYPE_NAME, sr.DTYPE_BITS, 8 + len(raw), end,
                                 sr.MAX_TENSORS, sr.MAX_JSON_ITEMS, 8)
    assert (got is not None) == ok


@needs_c
def test_long_names_with_every_byte_that_needs_no_escape() -> None:
    """Names longer than the scanner's eight-byte steps, holding DEL, the
    bytes just above the ones it stops at ('!', '#', ']', 0x20) and
    multi-byte UTF-8 at every alignment: accepted, and read as before."""
    tail = "\x7f !#[]{}:,\u00e9\u4e2d\U0001f600"
    names = [("model.layers." + "x" * k + tail * 3)[: 8 + k * 3] for k in range(16)]
    text = json.dumps({n: {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]}
                       for i, n in enumerate(names)}, ensure_ascii=False)
    data = _file(text, len(names))
    assert "\\" not in text and _scan(data) is not None
    assert _same(data)


def _many(k: int, sep: str = ",") -> str:
    return "{" + sep.join(f'"t{i}":{{"dtype":"U8","shape":[1],"data_offsets":[{i},{i + 1}]}}'
                          for i in range(k)) + "}"


@needs_c
@pytest.mark.parametrize("limit,ok", [(5, True), (4, False)])
def test_the_tensor_budget_still_raises(monkeypatch: pytest.MonkeyPatch, limit: int,
                                        ok: bool) -> None:
    """Five tensors: accepted at a budget of five, and over a budget of four
    the scanner refuses and read_header raises today's ParseError."""
    monkeypatch.setattr(sr, "MAX_TENSORS", limit)
    data = _file(_many(5), 5)
    assert (_scan(data) is not None) == ok
    on, off = _read(data, True), _read(data, False)
    assert on == off
    if not ok:
        assert on[0] == "error" and "tensors_per_file" in on[1]


@needs_c
def test_the_json_items_budget_still_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner counts what budgets.json_items counts, commas and
    brackets inside names included; one item over and read_header raises
    today's ParseError."""
    text = _many(3).replace('"t1"', '"t,{[1"')
    items = budgets.json_items(text)
    for limit in (items, items - 1):
        monkeypatch.setattr(sr, "MAX_JSON_ITEMS", limit)
        data = _file(text, 3)
        assert (_scan(data) is not None) == (limit == items)
        on, off = _read(data, True), _read(data, False)
        assert on == off
        if limit < items:
            assert on[0] == "error" and "json_items" in on[1]


@needs_c
def test_a_large_header_is_accepted() -> None:
    """Past SMALL_HEADER tensors today's path validates with numpy: the
    same table."""
    k = 3 * sr.SMALL_HEADER
    data = _file(_many(k, sep=",\n  "), k)
    assert _scan(data) is not None
    assert _same(data)


def _fixture_files() -> list[Path]:
    return sorted(ROOT.glob("fixtures/**/*.safetensors"))


def test_fixture_files_read_as_before() -> None:
    """Every safetensors file under fixtures/: the same result with or
    without the scanner, and the scanner takes most of them."""
    files = _fixture_files()
    assert files
    taken = sum(_same(p.read_bytes()) for p in files)
    if _fnv is not None:
        assert taken >= len(files) // 2, (taken, len(files))


@needs_c
def test_accepted_fixture_tables_match_the_safetensors_package() -> None:
    """What the scanner accepts, checked against an independent reader:
    names, dtypes and shapes from the safetensors package, offsets from the
    standard library's json, metadata from both."""
    safetensors = pytest.importorskip("safetensors")
    checked = 0
    for p in _fixture_files():
        data = p.read_bytes()
        cols = _scan(data)
        if cols is None:
            continue
        n = struct.unpack("<Q", data[:8])[0]
        obj = json.loads(data[8:8 + n])
        meta = obj.pop("__metadata__", {})
        names, dtypes, dims, ranks, starts, nbytes, got_meta = cols
        with safetensors.safe_open(str(p), "numpy") as f:
            assert sorted(names) == sorted(f.keys())
            assert got_meta == (f.metadata() or {}) == meta
            flat = list(struct.unpack(f"={len(dims) // 8}q", dims))
            k = 0
            for name, dtype, r in zip(names, dtypes, ranks):
                sl = f.get_slice(name)
                assert dtype == sl.get_dtype() and flat[k:k + r] == list(sl.get_shape())
                k += r
        assert list(struct.unpack(f"={len(names)}q", starts)) == [
            8 + n + obj[x]["data_offsets"][0] for x in names]
        assert list(struct.unpack(f"={len(names)}q", nbytes)) == [
            obj[x]["data_offsets"][1] - obj[x]["data_offsets"][0] for x in names]
        checked += 1
    assert checked
