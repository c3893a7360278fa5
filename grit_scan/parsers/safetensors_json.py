"""A safetensors header decoded straight into typed entries, for the
reader's bulk path (parsers/safetensors_reader.py, ``_typed_path``).

msgspec decodes the header into ``{name: Entry}`` and checks each entry's
types as it goes (a dtype string, a tuple of non-negative int64 extents, at
most ``budgets.SAFETENSORS_RANK`` of them, a pair of non-negative
integers), which the reader's bulk path otherwise checks in passes of its
own over the standard library's dicts.  ``__metadata__`` is read by a
second decode that keeps that one key.  What this module gives is only a
candidate: msgspec keeps the last of duplicate keys and ignores unknown
fields, so the reader takes it only when the text proves there is neither
(``strings``), and sends every other header to its plain path, which is
the reference (tests/test_typed_json.py and tests/test_readers.py hold the
two to each other).
Imported only for a long header (json_text.FAST_FROM): importing msgspec is
a cost a scan of small files does not pay (docs/performance.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from . import budgets

_Count = Annotated[int, msgspec.Meta(ge=0)]
# an extent: an int64 (the reader's columns hold them so)
_Extent = Annotated[int, msgspec.Meta(ge=0, le=(1 << 63) - 1)]


class Entry(msgspec.Struct, gc=False):
    """One tensor's entry; a field the text does not give is None (as is
    every field of ``__metadata__``'s value, read as an entry).  The shape
    comes as a tuple, the form the reader's table keeps it in."""

    dtype: str | None = None
    shape: Annotated[tuple[_Extent, ...],
                     msgspec.Meta(max_length=budgets.SAFETENSORS_RANK.value)] | None = None
    data_offsets: tuple[_Count, _Count] | None = None


class _Metadata(msgspec.Struct, rename={"metadata": "__metadata__"}):
    metadata: dict[str, str] | None = None


_ENTRIES = msgspec.json.Decoder(dict[str, Entry])
_METADATA = msgspec.json.Decoder(_Metadata)


def decode(text: str) -> tuple[dict[str, Entry], dict[str, str] | None] | None:
    """(each key's entry, ``__metadata__`` or None), or None where msgspec
    refuses the text under these types (the reader's plain path says why)."""
    try:
        entries = _ENTRIES.decode(text)
        meta = _METADATA.decode(text).metadata if "__metadata__" in entries else None
    except (msgspec.DecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    return entries, meta


def strings(entries: dict[str, Entry], meta: dict[str, str] | None) -> int:
    """The strings the decoded header holds, when every entry but
    ``__metadata__`` has its three fields: each key, each entry's three
    field names and its dtype, and ``__metadata__``'s keys and values.
    A text without a backslash holds exactly ``text.count('"') // 2``
    strings, so the two agree only when the text has no key the decode
    dropped (a duplicate at any depth, an unknown field) and no string
    these levels do not count."""
    n = len(entries) - (meta is not None)
    return len(entries) + 4 * n + (2 * len(meta) if meta is not None else 0)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def decode_index(text: str, shards: tuple[str, ...]) -> dict[str, Any] | None:
    """An index's ``weight_map`` (and ``metadata``, if the text has it,
    null included), with every shard name one of ``shards`` and each distinct name
    one string (msgspec gives a Literal's own value); None where msgspec
    refuses the text under that type (a value not among ``shards``, a
    weight_map not a map of strings, a text ``json.loads`` must judge).
    ``parse_index`` reads only these two keys."""
    # a file name that is not text (an undecodable byte, held as a lone
    # surrogate) cannot be a Literal's value: no decoded text equals it
    # without an escape, which the plain parse then matches
    names = tuple(s for s in shards if _utf8(s))
    if not names:
        return None
    named: Any = Literal.__getitem__(names)
    index = msgspec.defstruct("Index", [("weight_map", dict[str, named]),
                                        ("metadata", Any, msgspec.UNSET)])
    try:
        got = msgspec.json.decode(text, type=index)
    except (msgspec.DecodeError, RecursionError):
        return None
    fields = msgspec.structs.asdict(got)
    if fields["metadata"] is msgspec.UNSET:  # (a null is kept: parse_index judges it)
        del fields["metadata"]
    return fields
