"""parsers/json_text.loads is json.loads: the same value (type for type,
sign of zero included) wherever json.loads accepts a text, and the same
exception where it refuses one.  The oracle is the standard library."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grit_scan.parsers import json_text

ROOT = Path(__file__).resolve().parents[1]


def _refuse(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (1 is not 1.0, -0.0 is
    not 0.0, key order counts)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a)
                                                     == math.copysign(1, b))
    return bool(a == b)


scalars = (st.none() | st.booleans()
           | st.integers(min_value=-(1 << 80), max_value=1 << 80)
           | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(values, st.booleans(), st.sampled_from([None, 0, 2]))
def test_same_value_as_json_loads(doc: Any, ascii_only: bool, indent: int | None) -> None:
    text = json.dumps(doc, ensure_ascii=ascii_only, indent=indent)
    want = json.loads(text)
    for fast_from in (0, json_text.FAST_FROM):  # msgspec first, and never
        assert same(json_text.loads(text, fast_from=fast_from), want)
        assert same(json_text.loads(text.encode("utf-8"), fast_from=fast_from), want)


@pytest.mark.parametrize("text", [
    "[1e400]",          # json.loads: inf; msgspec refuses it
    "[-1e400]",
    '["\\ud800"]',      # a lone surrogate escape: json.loads keeps it
    '{"a": "\\udfff", "b": 1}',
    "[18446744073709551616, -9223372036854775809, 1e-400]",
    '{"a": 1, "a": 2}',  # the last of duplicate keys, as json.loads keeps it
])
def test_texts_only_the_standard_library_accepts(text: str) -> None:
    assert same(json_text.loads(text, fast_from=0), json.loads(text))


@pytest.mark.parametrize("text", [
    "[NaN]", "[Infinity]", "[-Infinity]",    # parse_constant refuses them
    "[01]", "[1.]", '{"a": 1,}', "[1] x", '["\x01"]', "", "\ufeff[1]", "[" * 100_000,
])
def test_refusals_are_the_standard_library_s(text: str) -> None:
    def outcome(fn: Any) -> tuple[type[BaseException], str]:
        with pytest.raises((ValueError, RecursionError)) as exc:
            fn(text, parse_constant=_refuse)
        return exc.type, str(exc.value)

    assert outcome(lambda t, **kw: json_text.loads(t, fast_from=0, **kw)) == outcome(json.loads)


def test_every_json_file_under_fixtures() -> None:
    files = [p for p in (ROOT / "fixtures").rglob("*.json") if p.is_file()]
    assert len(files) > 20
    for p in files:
        raw = p.read_bytes()
        try:
            want = json.loads(raw)
        except ValueError:
            continue
        assert same(json_text.loads(raw, fast_from=0), want), p


def test_long_texts_are_decoded_by_msgspec() -> None:
    """At FAST_FROM characters msgspec decodes (its import is the cost the
    threshold weighs); below it, the standard library alone."""
    import sys

    long = json.dumps({"x": "a" * json_text.FAST_FROM})
    assert same(json_text.loads(long), json.loads(long))
    assert "msgspec" in sys.modules
