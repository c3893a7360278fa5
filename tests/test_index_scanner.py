"""The compiled scanner of a plain safetensors index (issue 15).

``index_json`` (grit_scan/codec/_fnv.c) parses a model.safetensors.index.json
of the plain shape straight from its bytes, and returns None for anything
else, which then takes today's decode, value count and ``json.loads``
(parsers/configs.py read_json_source).  It may only ever accept texts
``json.loads`` accepts, and for those give exactly its value: the oracle
here is the standard library's ``json.loads`` of the decoded text, compared
with types and key order (``True == 1`` and dict equality ignores order, so
plain ``==`` would not do).  Plain indexes must be accepted (a scanner that
always refused would fail), each distinct shard name must be one object,
and the item budgets must refuse exactly where budgets.json_items says,
with read_json_source's issues unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_st_columns import (  # the helper, its marker, a ByteSource, text edits
    EDITS,
    _Bytes,
    _fnv,
    edit,
    needs_c,
)

from grit_scan.artifact import Artifact, Format
from grit_scan.parsers import budgets, configs

ROOT = Path(__file__).resolve().parent.parent
BIG = 10 ** 9  # an item budget no text here reaches


def _typed(v: Any) -> Any:
    """A value with its types and key order made part of equality."""
    if isinstance(v, dict):
        return ("dict", [(_typed(k), _typed(x)) for k, x in v.items()])
    if isinstance(v, list):
        return ("list", [_typed(x) for x in v])
    return (type(v).__name__, v)


def _no_constant(name: str) -> None:
    raise ValueError(name)


def _oracle(raw: bytes) -> tuple[bool, Any]:
    """(True, json.loads's value) or (False, None) when it raises, as
    read_json_source decodes and parses."""
    try:
        return True, json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False, None


def _agrees(raw: bytes) -> bool:
    """The scanner refuses ``raw`` or gives json.loads's value exactly;
    True when it accepted."""
    got = _fnv.index_json(raw, BIG)
    ok, want = _oracle(raw)
    if got is not None:
        assert ok, raw[:200]
        assert _typed(got) == _typed(want)
    return got is not None


# ------------------------------------------------------------- generation
# A document is a tree: ("obj", [(key, doc), ...]) with keys possibly given
# twice, ("arr", [doc, ...]), or a scalar; rendered by hand with random
# whitespace, so duplicate keys and any spacing can be written.

_PLAIN_CHARS = st.characters(exclude_categories=("Cs",), exclude_characters='"\\',
                             min_codepoint=0x20)
_TEXT = st.text(_PLAIN_CHARS, max_size=16)
_KEYS = _TEXT | st.sampled_from(["a", "b", "weight_map", "metadata", "total_size"])
_INTS = st.integers(-(10 ** 18) + 1, 10 ** 18 - 1) | st.sampled_from(
    [0, -1, 10 ** 18 - 1, -(10 ** 18) + 1, 7418583224])
_SCALARS = st.none() | st.booleans() | _INTS | _TEXT
_DOCS = st.recursive(
    _SCALARS,
    lambda kids: (st.tuples(st.just("arr"), st.lists(kids, max_size=4))
                  | st.tuples(st.just("obj"), st.lists(st.tuples(_KEYS, kids), max_size=4))),
    max_leaves=10)
_WS = st.text(" \t\n\r", max_size=2)
# shard names: what writers use, and any text a plain string may hold
_SHARDS = st.lists(st.sampled_from([
    "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
    "model-00003-of-00003.safetensors", "mod\u00e8le-1.safetensors", "\u6a21\u578b.safetensors",
    "x", ""]) | _TEXT, min_size=1, max_size=6)


def _render(draw: Any, doc: Any) -> str:
    def ws() -> str:
        return str(draw(_WS))

    if isinstance(doc, tuple) and doc[0] == "obj":
        body = ",".join(f'{ws()}"{k}"{ws()}:{ws()}{_render(draw, v)}{ws()}' for k, v in doc[1])
        return "{" + body + ws() + "}"
    if isinstance(doc, tuple):
        return "[" + ",".join(ws() + _render(draw, v) + ws() for v in doc[1]) + ws() + "]"
    if isinstance(doc, str):
        return f'"{doc}"'
    return json.dumps(doc)  # null, true, false, an integer


@st.composite
def _index(draw: Any) -> str:
    """A plain index: a weight_map of tensor -> shard (names non-ASCII too,
    a name sometimes twice), metadata and other members of any plain value,
    in any order, with any whitespace."""
    shards = draw(_SHARDS)
    names = draw(st.lists(_TEXT | st.sampled_from(["model.norm.weight", "lm_head.weight"]),
                          max_size=30))
    wm = ("obj", [(n, draw(st.sampled_from(shards))) for n in names])
    meta = ("obj", [("total_size", draw(_INTS)), *draw(st.lists(st.tuples(_KEYS, _DOCS),
                                                                max_size=3))])
    members = [("metadata", meta), ("weight_map", wm)]
    members += draw(st.lists(st.tuples(_KEYS.filter(lambda k: k != "weight_map"), _DOCS),
                             max_size=2))
    if draw(st.integers(0, 9)) == 0:  # weight_map twice: json keeps the last
        members.append(("weight_map", ("obj", [("t", shards[0])])))
    members = draw(st.permutations(members))
    return str(draw(_WS)) + _render(draw, ("obj", members)) + str(draw(_WS))


# edits a hostile or careless writer makes
_TOKENS = ["{", "}", "[", "]", ",", ":", '"', " ", "\\", '\\"', "\\u0041", "\\n", "\x00",
           "\x01", "\x1f", "\x7f", "1.0", "1e3", "1E3", "-", "-0", "01", "00", "0.", ".5",
           "NaN", "Infinity", "-Infinity", "nul", "tru", "true", "false", "null", "truex",
           "9" * 18, "9" * 19, "-" + "9" * 18, "-" + "9" * 19, str(1 << 63), str(1 << 64),
           '"weight_map":{}', '"weight_map":[]', '"weight_map":{"a":1}', '"weight_map":null',
           '"weight_map":{"a":"b","a":"c"}', '"a":{"a":1},"a":2', "\ufeff", "\u00e9", "\u2028",
           "\U0001f600", "[" * 40, "]" * 40, "{}", "[]"]
_TOKENS_B = [t.encode() for t in _TOKENS]
_TRAILS = [b"x", b"}", b" ", b"\n", b",", b"{}", b"\x00"]
_BYTES = [b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
          b"\xef\xbb\xbf", b"\x80"]


@st.composite
def _mutated(draw: Any) -> bytes:
    raw = draw(_index()).encode()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from([*EDITS, "byte"]))
        if kind == "byte":  # raw bytes: broken or refused UTF-8, a BOM
            i = draw(st.integers(0, len(raw)))
            raw = raw[:i] + draw(st.sampled_from(_BYTES)) + raw[i:]
        else:
            raw = edit(draw, kind, raw, _TOKENS_B, _TRAILS)
    return raw


# ----------------------------------------------------- the scanner itself


@needs_c
@settings(max_examples=500, suppress_health_check=[HealthCheck.too_slow])
@given(_index())
def test_plain_indexes_are_accepted_as_json_loads_reads_them(text: str) -> None:
    """Every plain index is taken, and its value is json.loads's: keys in
    order, a key twice at its first place with its last value, integers
    as int and true/false as bool, non-ASCII names."""
    assert _agrees(text.encode())


@needs_c
@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_mutated_indexes_are_refused_or_read_as_json_loads_reads_them(raw: bytes) -> None:
    """Escapes, control characters, floats, exponents, constants, signs,
    leading zeros, 19-digit integers, cuts, trailing bytes, bad UTF-8,
    a BOM, deep nesting, weight_map values that are no strings: None, or
    exactly json.loads's value; never an exception."""
    _agrees(raw)


@needs_c
@settings(max_examples=500)
@given(st.binary(max_size=120))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    _agrees(raw)


@needs_c
@settings(max_examples=300)
@given(st.lists(st.sampled_from(["{", "}", "[", "]", ",", ":", '"a"', '"weight_map"', "1",
                                 "-1", "null", "true", " "]), max_size=40))
def test_token_soup_never_raises(tokens: list[str]) -> None:
    """Structural tokens in any order (the grammar's corners), as a text and
    inside a top-level object."""
    text = "".join(tokens)
    _agrees(text.encode())
    _agrees(("{" + text + "}").encode())


@needs_c
@pytest.mark.parametrize("text", [
    '{"weight_map":{"a\\u0062":"s"}}',                  # an escape, in a name
    '{"weight_map":{"a":"s\\/t"}}',                     # in a shard name
    '{"metadata":{"k":"\\""},"weight_map":{}}',         # in metadata
    '{"weight_map":{"a":"s\x01"}}',                     # a control character (json refuses)
    '{"weight_map":{"a\t":"s"}}',
    '{"metadata":{"total_size":1.5},"weight_map":{}}',  # a fraction
    '{"metadata":{"total_size":1e3},"weight_map":{}}',  # an exponent
    '{"metadata":{"total_size":1E3},"weight_map":{}}',
    '{"metadata":{"total_size":-0.0},"weight_map":{}}',
    '{"metadata":{"total_size":1000000000000000000},"weight_map":{}}',  # 19 digits
    '{"metadata":{"total_size":-1000000000000000000},"weight_map":{}}',
    '{"metadata":{"total_size":' + "9" * 5000 + '},"weight_map":{}}',  # int's digit limit
    '{"metadata":{"total_size":NaN},"weight_map":{}}',  # constants
    '{"metadata":{"total_size":Infinity},"weight_map":{}}',
    '{"metadata":{"total_size":-Infinity},"weight_map":{}}',
    '{"metadata":{"total_size":01},"weight_map":{}}',   # a leading zero
    '{"metadata":{"total_size":-},"weight_map":{}}',
    '{"metadata":{"total_size":+1},"weight_map":{}}',
    '{"weight_map":{"a":1}}',                            # a value that is no string
    '{"weight_map":{"a":null}}', '{"weight_map":{"a":["s"]}}', '{"weight_map":{"a":{}}}',
    '{"weight_map":[]}', '{"weight_map":"s"}', '{"weight_map":null}',
    '{"weight_map":{"a":"s",}}', '{"weight_map":{,"a":"s"}}', '{"weight_map":{"a" "s"}}',
    '{"weight_map":{"a":"s" "b":"s"}}', '{"weight_map":{"a":"s"}', '{"weight_map":{"a":"s"}}}',
    '{"weight_map":{"a":"s"}} x', '{"weight_map":{"a":"s"}}\x00', '{"a":1,}', '{,}', '{"a"}',
    '{"a":[1,]}', '{"a":[,1]}', '{"a":[1 2]}', '{"a":tru}', '{"a":nul}', '{"a":truee}',
    '{"a":True}', '{"a":None}', "[]", "[1]", '"s"', "1", "null", "", " ", "{", "}",
    '\ufeff{"weight_map":{}}',                          # a BOM (json.loads refuses it)
    '{"a":' + "[" * 40 + "]" * 40 + "}",                # deeper than the scanner goes
    "{'a':1}", '{"a":1}{"b":2}', '{"a":1}\u00a0',       # not JSON whitespace
])
def test_what_the_scanner_refuses(text: str) -> None:
    raw = text.encode()
    assert _fnv.index_json(raw, BIG) is None
    _agrees(raw)


@needs_c
@pytest.mark.parametrize("raw", [
    b'{"weight_map":{"a":"\xff"}}', b'{"weight_map":{"\xc3":"s"}}',
    b'{"weight_map":{"a":"\xed\xa0\x80"}}',             # a UTF-8 surrogate
    b'{"weight_map":{"a":"\xc0\xaf"}}',                 # an overlong '/'
    b'{"weight_map":{"a":"\xf4\x90\x80\x80"}}',         # past U+10FFFF
    b'{"metadata":{"\xe9":1},"weight_map":{}}', b'{"x\x80":1}',
])
def test_text_that_is_not_utf8_is_refused(raw: bytes) -> None:
    assert _fnv.index_json(raw, BIG) is None
    assert _oracle(raw) == (False, None)


@needs_c
def test_a_small_index_by_hand() -> None:
    """Values worked out from the text."""
    text = ('\n {"metadata": {"total_size": 7418583224, "format": "pt", "n": null,\n'
            '  "list": [1, -2, true, false, "x", {}, []], "neg": -0},\n'
            ' "weight_map": {"b.weight": "s-2", "a.w\u00e9": "s-1", "b.weight": "s-1",\n'
            '  "\U0001f600": "\u6a21"}, "extra": "weight_map"}\r\n')
    got = _fnv.index_json(text.encode(), BIG)
    assert got == {"metadata": {"total_size": 7418583224, "format": "pt", "n": None,
                                "list": [1, -2, True, False, "x", {}, []], "neg": 0},
                   "weight_map": {"b.weight": "s-1", "a.w\u00e9": "s-1", "\U0001f600": "\u6a21"},
                   "extra": "weight_map"}
    assert list(got) == ["metadata", "weight_map", "extra"]
    assert list(got["weight_map"]) == ["b.weight", "a.w\u00e9", "\U0001f600"]
    assert type(got["metadata"]["list"][2]) is bool and type(got["metadata"]["neg"]) is int


@needs_c
@pytest.mark.parametrize("value", [10 ** 18 - 1, -(10 ** 18) + 1, 0, 1, -1])
def test_integers_up_to_18_digits(value: int) -> None:
    got = _fnv.index_json(f'{{"metadata":{{"total_size":{value}}}}}'.encode(), BIG)
    assert got == {"metadata": {"total_size": value}}


@needs_c
@pytest.mark.parametrize("depth,ok", [(31, True), (32, False)])
def test_nesting_depth(depth: int, ok: bool) -> None:
    """Members nest up to 31 containers below the top-level object."""
    raw = ('{"a":' + "[" * depth + "]" * depth + "}").encode()
    assert (_fnv.index_json(raw, BIG) is not None) == ok
    _agrees(raw)


@needs_c
def test_each_shard_name_is_one_object() -> None:
    """Equal shard names are one str (json.loads makes one per entry), in
    any entry order, also past the scanner's cache of 2048 slots (its
    collisions fall back to one dict of the names)."""
    shards = [f"model-{i:05d}-of-03000.safetensors" for i in range(3000)]
    wm = {f"t{i}": shards[(i * 7919) % 3000] for i in range(12000)}
    raw = json.dumps({"weight_map": wm}).encode()
    got = _fnv.index_json(raw, BIG)
    assert got is not None and _typed(got) == _typed(json.loads(raw))
    vals = list(got["weight_map"].values())
    assert len({id(v) for v in vals}) == len(set(vals)) == 3000
    first: dict[str, str] = {}
    for v in vals:
        assert first.setdefault(v, v) is v
    # names are strings of their own, never one of the shard names' objects
    assert len({id(k) for k in got["weight_map"]}) == 12000


# --------------------------------------------------------------- budgets


@needs_c
@pytest.mark.parametrize("extra", [0, 1])
def test_the_item_budget_is_json_items(extra: int) -> None:
    """Refused exactly when budgets.json_items passes the budget; commas
    and brackets inside names count, and non-ASCII ones are characters."""
    text = '{"weight_map":{"a,[{\u00e9":"s{","b":"s["},"metadata":{"k":[1,2,{}]}}'
    items = budgets.json_items(text)
    assert (_fnv.index_json(text.encode(), items - 1 + extra) is None) == (extra == 0)


def _read(raw: bytes, compiled: bool, fmt: Format = Format.INDEX) -> tuple[Any, ...]:
    """read_json_source's whole result: the value (typed), the issues and
    whether the artifact counts as parsed."""
    art = Artifact(path="m.index.json", abs_path="m.index.json", format=fmt)
    with pytest.MonkeyPatch.context() as m:
        if not compiled:
            m.setattr(configs, "_scan_index", None)
        got = configs.read_json_source(_Bytes(raw), art)
    return _typed(got), art.issues, art.parsed


def _both(raw: bytes) -> tuple[Any, ...]:
    on, off = _read(raw, True), _read(raw, False)
    assert on == off
    return on


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated() | _index().map(str.encode))
def test_read_json_source_reads_as_before(raw: bytes) -> None:
    """With or without the scanner: the same value, issues and parsed flag
    (the messages of bad JSON come from the fallback)."""
    _both(raw)


def _entries(n: int) -> bytes:
    return ('{"weight_map":{' + ",".join(f'"t{i}":"s"' for i in range(n)) + "}}").encode()


@pytest.mark.parametrize("which", ["index_entries", "json_file_items"])
@pytest.mark.parametrize("extra", [0, 1])
def test_the_budgets_still_report_as_before(monkeypatch: pytest.MonkeyPatch, which: str,
                                            extra: int) -> None:
    """An index at either budget is read; one value over it gets today's
    message, budget name and parsed flag, with the scanner or without."""
    raw = _entries(10)
    items = budgets.json_items(raw.decode())
    for attr in ("INDEX_ENTRIES", "JSON_FILE_ITEMS"):
        b = getattr(budgets, attr)
        limit = items - extra if b.name == which else BIG
        monkeypatch.setattr(budgets, attr, b._replace(value=limit))
    value, issues, parsed = _both(raw)
    if extra == 0:
        assert parsed and not issues and value == _typed(json.loads(raw))
    else:
        assert not parsed and value == _typed(None)
        assert [i.detail["budget"] for i in issues] == [which]
        assert f"({items:,}) exceeds the {which} budget" in issues[0].message


def test_configs_and_manifests_do_not_take_the_scanner() -> None:
    """Configs and manifests never take the scanner (it knows indexes
    only), and read as before."""
    raw = b'{"a":1,"weight_map":{}}'
    for fmt in (Format.CONFIG, Format.MANIFEST):
        assert _read(raw, True, fmt) == _read(raw, False, fmt)


@needs_c
def test_the_fallback_when_the_scanner_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """An index the scanner refuses (an escaped name, a float) is read by
    json.loads: its value, no issue; one it takes never reaches json.loads."""
    calls: list[bytes] = []
    scan = configs._scan_index

    def spy(raw: bytes, limit: int) -> Any:
        calls.append(raw)
        return scan(raw, limit)

    loads = configs.json.loads
    parsed: list[str] = []

    def loads_spy(text: str, **kw: Any) -> Any:
        parsed.append(text)
        return loads(text, **kw)

    monkeypatch.setattr(configs, "_scan_index", spy)
    monkeypatch.setattr(configs.json, "loads", loads_spy)
    refused = b'{"metadata":{"total_size":1.5},"weight_map":{"a\\u0062":"s"}}'
    art = Artifact(path="m", abs_path="m", format=Format.INDEX)
    assert configs.read_json_source(_Bytes(refused), art) == {
        "metadata": {"total_size": 1.5}, "weight_map": {"ab": "s"}}
    assert not art.issues and art.parsed and calls == [refused] and len(parsed) == 1
    taken = b'{"weight_map":{"ab":"s"}}'
    assert configs.read_json_source(_Bytes(taken), art) == {"weight_map": {"ab": "s"}}
    assert calls == [refused, taken] and len(parsed) == 1


def _fixture_indexes() -> list[Path]:
    return sorted(ROOT.glob("fixtures/**/*.index.json"))


@needs_c
def test_fixture_indexes_are_taken() -> None:
    """Every index under fixtures/ (writers' own output) is accepted and
    read as json.loads reads it, but the one whose Windows paths need
    backslash escapes (refused, and read by json.loads)."""
    files = _fixture_indexes()
    assert files
    for p in files:
        raw = p.read_bytes()
        assert _agrees(raw) == (b"\\" not in raw), p
        assert _read(raw, True) == _read(raw, False)
