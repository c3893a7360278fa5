"""The JSON schema is forward-compatible: additional properties are allowed
everywhere, so an old consumer validating a newer report still succeeds."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from grit_scan.api import scan

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "scan-report.schema.json").read_text())


def _every_object(node, path=""):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _every_object(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _every_object(v, f"{path}/{i}")


def test_schema_never_forbids_additional_properties():
    for path, obj in _every_object(SCHEMA):
        assert obj.get("additionalProperties", True) is not False, path


def test_old_consumer_accepts_a_report_with_extra_fields():
    doc = scan(["fixtures/sample", "fixtures/broken"]).to_json()
    jsonschema.validate(doc, SCHEMA)
    newer = copy.deepcopy(doc)
    records = [newer, newer["summary"], newer["exit_codes"], *newer["findings"],
               *newer["skipped"]]
    for a in newer["artifacts"]:
        records += [a, *a["tensors"], *a["grades"]]
    for obj in records:  # every record (maps such as `unquantized` keep their value type)
        obj["x_added_in_a_later_release"] = {"any": [1, "thing"]}
    assert len(records) > 50
    jsonschema.validate(newer, SCHEMA)  # what a consumer of report_version 1 does


def test_summary_text_and_next_step_are_in_the_report():
    doc = scan(["fixtures/sample"]).to_json()
    assert doc["summary"]["text"].startswith("Found 7 findings")
    assert doc["next_step"] == "grit rule size_mismatch"
    clean = scan(["fixtures/sample/llama-mxfp4"], ignore="GRIT1").to_json()
    assert clean["next_step"] is None and clean["summary"]["text"] == "No findings in 1 file"


# --- JSON text: the standard json module, lone surrogates as escape text ----

import enum  # noqa: E402
import math  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from grit_scan.report.json_format import TensorRecords, dump  # noqa: E402
from grit_scan.report.json_format import dumps as grit_dumps  # noqa: E402


class _Colour(str, enum.Enum):
    RED = "red\u202e"


class _Level(enum.IntEnum):
    HIGH = 3


_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
            | st.text() | st.sampled_from([_Colour.RED, _Level.HIGH, math.inf, -math.inf, -0.0]))
_KEYS = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: (st.lists(inner, max_size=5) | st.lists(inner, max_size=3).map(tuple)
                   | st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=40)


@settings(max_examples=200, deadline=None)
@given(_DOCS)
def test_json_text_is_json_dumps_indent_2(doc):
    # strings without lone surrogates (hypothesis's text()): exactly the
    # standard library's text
    assert grit_dumps(doc) == json.dumps(doc, indent=2, ensure_ascii=True, default=str)


@settings(max_examples=100, deadline=None)
@given(_DOCS)
def test_json_dump_writes_what_dumps_returns(doc):
    import io

    buf = io.StringIO()
    dump(doc, buf, chunk=3)  # tiny chunks: many partial writes
    assert buf.getvalue() == json.dumps(doc, indent=2, ensure_ascii=True, default=str)


def test_lone_surrogates_are_written_as_their_escape_text():
    """No UTF-8 reader accepts a lone surrogate, escaped or not: an
    undecodable file-name byte (U+DC80..U+DCFF) is written as the text
    \\xNN and any other lone surrogate as the text \\udNNN
    (docs/reliability.md); a character beyond the BMP stays a character,
    and a name that merely looks like an escape stays as it is."""
    import io

    doc = {"name\udcff": ["a\ud800b", "\udfff", "\U0001F600", "\\ud800", "\\\ud800"],
           "x": "\udc80\U0001F600\ud83d"}
    want = ('{\n  "name\\\\xff": [\n    "a\\\\ud800b",\n    "\\\\udfff",\n'
            '    "\\ud83d\\ude00",\n    "\\\\ud800",\n    "\\\\\\\\ud800"\n  ],\n'
            '  "x": "\\\\x80\\ud83d\\ude00\\\\ud83d"\n}')
    assert grit_dumps(doc) == want
    buf = io.StringIO()
    dump(doc, buf)
    assert buf.getvalue() == want
    # and it is JSON whose strings are the escape text
    assert json.loads(want) == {"name\\xff": ["a\\ud800b", "\\udfff", "\U0001F600",
                                                 "\\ud800", "\\\\ud800"],
                                "x": "\\x80\U0001F600\\ud83d"}
    want.encode("utf-8")


def test_json_text_unknown_objects_go_through_default():
    doc = {"path": Path("a/b"), "items": [object.__new__(_Opaque)], 1.5: {}, None: []}
    assert grit_dumps(doc) == json.dumps(doc, indent=2, default=str)


class _Opaque:
    def __str__(self) -> str:
        return "opaque\x1b[2J"


def test_json_text_rejects_the_keys_json_rejects():
    import pytest

    with pytest.raises(TypeError):
        json.dumps({(1, 2): 0}, indent=2)
    with pytest.raises(TypeError):
        grit_dumps({(1, 2): 0})


def test_lazy_tensor_records_write_as_the_list_does():
    """The CLI writes tensor records as it builds them; the document is the
    one Report.to_json() returns, as the standard library writes it."""
    import io

    from grit_scan.report.formats import OutputFormat, render

    report = scan(["fixtures/sample", "fixtures/broken", "fixtures/conventions",
                   "fixtures/producers", "fixtures/conformance"])
    lazy = report.to_json(lazy=True)
    assert any(isinstance(a["tensors"], TensorRecords) and len(a["tensors"])
               for a in lazy["artifacts"])
    buf = io.StringIO()
    render(report, OutputFormat.JSON, buf)
    assert buf.getvalue() == json.dumps(report.to_json(), indent=2, default=str) + "\n"


def test_a_string_like_the_splice_key_is_written_as_itself():
    """Tensor records take the place of a string the writer picked at
    random for that document; a string of the document that looks like one
    is still written as itself."""
    import io

    from grit_scan.report.json_format import dump as dump_doc

    doc = {"a": "grit:0:0", "tensors": TensorRecords([]), "b": ["grit:x:0"]}
    buf = io.StringIO()
    dump_doc(doc, buf)
    assert json.loads(buf.getvalue()) == {"a": "grit:0:0", "tensors": [], "b": ["grit:x:0"]}




@pytest.mark.parametrize("odd", [None, "caf\u00e9", 'a"b', "a\\b", "a\nb", "a\x7fb", "a\x1fb",
                                 "\udcff", "\U0001F600", "~ !#[]"])
def test_tensor_records_escape_each_batch_as_the_encoder_does(odd):
    """A batch of plain ASCII names is written as it is; a batch holding
    any other character (non-ASCII, a quote, a backslash, a control or DEL,
    a lone surrogate) is escaped name by name, as json.dumps writes it."""
    import io

    from grit_scan.artifact import QList, QTensor, Source
    from grit_scan.report.json_format import _tensor_json
    from grit_scan.report.json_format import dumps as grit_dumps

    names = [f"model.layers.{i}.mlp.down_proj.weight" for i in range(5)]
    if odd is not None:
        names[2] = names[2] + odd
    qs = [QTensor(name=n, role=n if i != 3 or odd is None else odd, shape=(4, 32),
                  source=Source.INFERRED, convention="c")
          for i, n in enumerate(names)]
    buf = io.StringIO()
    dump({"tensors": TensorRecords(QList(qs))}, buf)
    assert buf.getvalue() == grit_dumps({"tensors": [_tensor_json(q) for q in qs]})
