"""JSON text with two-space indentation, byte for byte what
``json.dumps(doc, indent=2, ensure_ascii=True, default=str)`` prints, in
about half its time.

With ``indent`` set, the standard library gives up its C encoder and walks
the document with nested Python generators; on a 400,000-tensor tree that
walk was about a third of ``grit scan --json`` (issue 15).  This walk appends
to one list, encodes strings with the C ``encode_basestring_ascii`` (so no
raw control byte or bidi character reaches the output, as before) and
inlines the common leaves.  ``tests/test_output_json.py`` holds it to
``json.dumps`` on generated documents.  Reports are trees built by
``Report.to_json``: there is no cycle check.
"""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring_ascii as _string
from typing import Any

_INF = float("inf")


def _float(o: float) -> str:
    """json's float text (allow_nan): NaN and the infinities by name."""
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


def _key(k: object) -> str:
    """A dict key as json.dumps converts it (str, float, bool, None, int)."""
    if isinstance(k, str):
        return str(_string(k))
    if isinstance(k, float):
        return str(_string(_float(k)))
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, int):
        return str(_string(int.__repr__(k)))
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def dumps(doc: Any, default: Callable[[Any], Any] = str) -> str:
    """``doc`` as indented JSON text (no trailing newline)."""
    out: list[str] = []
    app = out.append

    def enc(o: Any, nl: str) -> None:
        # ``nl`` is a newline plus the indentation of the line ``o`` starts on;
        # the order of the tests is json.encoder's (a bool is an int there too)
        if isinstance(o, str):
            app(_string(o))
        elif o is None:
            app("null")
        elif o is True:
            app("true")
        elif o is False:
            app("false")
        elif isinstance(o, int):
            app(int.__repr__(o))
        elif isinstance(o, float):
            app(_float(o))
        elif isinstance(o, (list, tuple)):
            if not o:
                app("[]")
                return
            inner = nl + "  "
            sep = "," + inner
            app("[")
            lead = inner
            for v in o:
                app(lead)
                lead = sep
                if isinstance(v, str):
                    app(_string(v))
                elif type(v) is int:
                    app(int.__repr__(v))
                else:
                    enc(v, inner)
            app(nl + "]")
        elif isinstance(o, dict):
            if not o:
                app("{}")
                return
            inner = nl + "  "
            sep = "," + inner
            app("{")
            lead = inner
            for k, v in o.items():
                app(lead + (_string(k) if type(k) is str else _key(k)) + ": ")
                lead = sep
                if isinstance(v, str):
                    app(_string(v))
                elif v is None:
                    app("null")
                elif type(v) is list and v and all(type(x) is int for x in v):
                    # a shape: one line per extent, without a call per extent
                    deeper = inner + "  "
                    app("[" + deeper + ("," + deeper).join(map(int.__repr__, v)) + inner + "]")
                else:
                    enc(v, inner)
            app(nl + "}")
        else:
            enc(default(o), nl)

    enc(doc, "\n")
    return "".join(out)
