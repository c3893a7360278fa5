"""JSON text with two-space indentation, byte for byte what
``json.dumps(doc, indent=2, ensure_ascii=True, default=str)`` prints, in
about half its time.

With ``indent`` set, the standard library gives up its C encoder and walks
the document with nested Python generators; on a 400,000-tensor tree that
walk was about a third of ``grit scan --json`` (issue 15).  This walk appends
to one list, encodes strings with the C ``encode_basestring_ascii`` (so no
raw control byte or bidi character reaches the output, as before; a lone
surrogate is written as its escape text, escape.valid_text) and
inlines the common leaves.  ``tests/test_output_json.py`` holds it to
``json.dumps`` on generated documents.  Reports are trees built by
``Report.to_json``: there is no cycle check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from json.encoder import encode_basestring_ascii as _ascii
from typing import Any, TextIO, overload

from .escape import valid_text

_INF = float("inf")


def _string(s: str) -> str:
    """``s`` as a JSON string in ASCII; a lone surrogate (which no UTF-8
    reader accepts, escaped or not) as its escape text (escape.valid_text).
    Only a string whose text holds ``\\ud`` is looked at again."""
    t: str = _ascii(s)
    return t if "\\ud" not in t else _ascii(valid_text(s))


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


class Lazy(Sequence[Any]):
    """A list whose items are built as they are written: ``fn`` of each of
    ``items``.  A 400,000-tensor report would otherwise hold every tensor
    record (and its text) at once (issue 15: memory per stored tensor).
    Written as a JSON array; anything else sees a read-only sequence."""

    __slots__ = ("items", "fn", "text")

    def __init__(self, items: Sequence[Any], fn: Callable[[Any], Any],
                 text: Callable[[Sequence[Any], str, str], Iterable[str]] | None = None
                 ) -> None:
        # ``text(batch, nl, sep)``, when given, is the JSON text of
        # ``fn(item)`` for each item of a slice of ``items``, each starting
        # on a line indented as ``nl`` (a newline and spaces), joined by
        # ``sep``, as pieces to concatenate; the writer uses it instead of
        # walking ``fn(item)``, so it must be byte for byte that walk's text
        # (tests/test_output_json.py).  A batch, not an item, so that the
        # text can be built by C-level maps (issue 15: one record per
        # quantised tensor)
        self.items, self.fn, self.text = items, fn, text

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self.fn(x) for x in self.items[i]]
        return self.fn(self.items[i])

    def __iter__(self) -> Iterator[Any]:
        return map(self.fn, self.items)


def dumps(doc: Any, default: Callable[[Any], Any] = str) -> str:
    """``doc`` as indented JSON text (no trailing newline)."""
    out: list[str] = []
    _walk(doc, default, out.append, _no_flush)
    return "".join(out)


def _no_flush(force: bool = False) -> None:
    """The whole text is kept (dumps, fragment): nothing to write."""


def dump(doc: Any, stream: TextIO, default: Callable[[Any], Any] = str,
         chunk: int = 8192) -> None:
    """``doc`` written to ``stream`` as ``dumps`` would give it, in pieces of
    about ``chunk`` items, so the text of a large report never exists whole."""
    out: list[str] = []

    def flush(force: bool = False) -> None:
        if force or len(out) >= chunk:
            stream.write("".join(out))
            out.clear()

    _walk(doc, default, out.append, flush)
    stream.write("".join(out))


def fragment(doc: Any, nl: str, default: Callable[[Any], Any] = str) -> str:
    """``doc``'s text as it is written inside a document on a line indented
    as ``nl`` (a newline and the indentation)."""
    out: list[str] = []
    _walk(doc, default, out.append, _no_flush, nl)
    return "".join(out)


# Lazy items whose text is built per batch, then joined and written as one
# piece (issue 15: about 600 KB of tensor records at a time)
_BATCH = 1024


def _walk(doc: Any, default: Callable[[Any], Any], app: Callable[[str], None],
          flush: Callable[[bool], None], start: str = "\n") -> None:
    """Append ``doc``'s text piece by piece; ``flush`` after each container
    item lets ``dump`` write what has accumulated (``flush(True)``: write it
    now, after a batch of Lazy items that was appended as one piece)."""

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
        elif isinstance(o, (list, tuple, Lazy)):
            if not o:
                app("[]")
                return
            inner = nl + "  "
            sep = "," + inner
            app("[")
            lead = inner
            if type(o) is Lazy and o.text is not None:
                items, text = o.items, o.text
                for i in range(0, len(items), _BATCH):
                    # one join: the batch's text is copied once before it is written
                    app("".join(chain((lead,), text(items[i : i + _BATCH], inner, sep))))
                    lead = sep
                    flush(True)
                app(nl + "]")
                return
            for v in o:
                app(lead)
                lead = sep
                if isinstance(v, str):
                    app(_string(v))
                elif type(v) is int:
                    app(int.__repr__(v))
                else:
                    enc(v, inner)
                    flush(False)
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

    try:
        enc(doc, start)
    finally:
        # ``enc`` refers to itself through its closure: a cycle that keeps
        # ``app`` (a list's pieces, in ``fragment``) alive until the cyclic
        # collector runs, which a report pauses (a GGUF of 50,000 shapes
        # kept 50,000 tensor records' pieces, about 110 MB, to the end)
        enc = None  # type: ignore[assignment]
