"""The ``--json`` document (docs/json-report.md, docs/scan-report.schema.json),
and the JSON text of every JSON document grit prints, written by the
standard ``json`` module."""

from __future__ import annotations

import functools
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, compress, islice, repeat
from json.encoder import encode_basestring_ascii as _ascii
from operator import attrgetter, eq, itemgetter, ne, sub
from typing import TYPE_CHECKING, Any, SupportsIndex, TextIO, overload

from .._version import __version__
from ..artifact import Artifact, Format, QList, QTensor, Source
from ..issues import IssueCode
from ..rules.finding import Finding, Severity
from ..rules.support import declared_mix

if TYPE_CHECKING:  # the codec loads for a described tensor only (start-up, docs/performance.md)
    from ..codec.descriptor import Descriptor
    from ..codec.grade import Grade
from .escape import has_surrogate, valid_text
from .summary import listed, next_step, not_audited, summary_line

if TYPE_CHECKING:
    from .report import Report

REPORT_VERSION = 1

_SUMMARY_OF = attrgetter("grade", "source", "convention")
_NAME, _ROLE = attrgetter("name"), attrgetter("role")
_TAIL_OF = attrgetter("grade", "desc", "shape", "source", "convention", "reason")
_CODE, _MESSAGE = attrgetter("code"), attrgetter("message")

# --- JSON text ----------------------------------------------------------------


class Lazy(list[Any]):
    """A list whose items are built as they are written: ``fn`` of each of
    ``items``, so that a 400,000-tensor report never holds every tensor
    record at once.  A ``list`` to the json encoder (which takes its length
    and iterates it); it holds no items of its own."""

    __slots__ = ("items", "fn")

    def __init__(self, items: Sequence[Any], fn: Callable[[Any], Any]) -> None:
        super().__init__()
        self.items, self.fn = items, fn

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return len(self.items) > 0

    def __iter__(self) -> Iterator[Any]:
        return map(self.fn, self.items)

    @overload
    def __getitem__(self, i: SupportsIndex) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: SupportsIndex | slice) -> Any:
        if isinstance(i, slice):
            return [self.fn(x) for x in self.items[i]]
        return self.fn(self.items[i.__index__()])

    def __repr__(self) -> str:
        return f"Lazy({len(self)} items)"


# A string of the document holding a lone surrogate (a tensor name from a
# header's "\udfff", an undecodable byte of a file name) cannot be written as
# UTF-8 by any reader; the text carries the escape text escape.valid_text
# gives instead.  The encoder writes such a character as a \udXXX escape: each
# one, after an even run of backslashes, is replaced by the escape text of
# that character.  A well-formed pair (\ud83d\ude00) is a character beyond
# the BMP and stays.
# Compiled where first used (re's cache), not at import: start-up, issue 31.
_LONE = r"\\(\\)|\\u(d[89ab][0-9a-f]{2})(\\ud[c-f][0-9a-f]{2})?|\\u(d[c-f][0-9a-f]{2})"


def _lone(m: re.Match[str]) -> str:
    if m.group(1) is not None or m.group(3) is not None:
        return m.group(0)  # an escaped backslash, or a pair
    code = m.group(2) or m.group(4)
    return _ascii(valid_text(chr(int(code, 16))))[1:-1]


def _valid(text: str) -> str:
    return text if "\\ud" not in text else re.sub(_LONE, _lone, text)


def dumps(doc: Any) -> str:
    """``doc`` as two-space indented JSON in ASCII (no trailing newline):
    ``json.dumps(doc, indent=2, default=str)``, lone surrogates as their
    escape text."""
    return _valid(json.dumps(doc, indent=2, ensure_ascii=True, default=str))


class TensorRecords:
    """An artifact's tensor records, the value of a key in a document
    ``dump`` writes: their text is made a batch at a time (``_TensorText``)
    and written in place of the array, never as 400,000 dicts at once.
    Iterated, the records (``_tensor_json``)."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[QTensor]) -> None:
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(_tensor_json, self.items)


# tensor records whose text is made, joined and written as one piece
_BATCH = 1024


def dump(doc: Any, stream: TextIO, chunk: int = 8192) -> None:
    """``doc`` written to ``stream`` as ``dumps`` gives it (``TensorRecords``
    as the lists of their records), ``chunk`` pieces of the encoder at a
    time, so the text of a large report never exists whole.

    The json encoder writes the document; a ``TensorRecords`` reaches its
    ``default``, which hands it a string of its own (a random key), and the
    records' text is written where the encoder writes that string."""
    nonce = os.urandom(16).hex()  # secrets.token_hex(16), without importing secrets
    spliced: dict[str, TensorRecords] = {}

    def default(o: Any) -> Any:
        if isinstance(o, TensorRecords):
            key = _ascii(f"grit:{nonce}:{len(spliced)}")
            spliced[key] = o
            return key[1:-1]
        return str(o)

    pieces = json.JSONEncoder(indent=2, ensure_ascii=True, default=default).iterencode(doc)
    out: list[str] = []
    line = "\n"  # the newline and indentation of the line being written
    for piece in pieces:
        records = spliced.pop(piece, None) if piece[:1] == '"' else None
        if records is None:
            out.append(piece)
            if "\n" in piece:  # the newline and the indentation after it
                rest = piece[piece.rindex("\n") + 1:]
                line = "\n" + rest[: len(rest) - len(rest.lstrip(" "))]
            if len(out) >= chunk:
                stream.write(_valid("".join(out)))
                out.clear()
            continue
        stream.write(_valid("".join(out)))
        out.clear()
        _records(records, line, stream)
    stream.write(_valid("".join(out)))


def _records(records: TensorRecords, nl: str, stream: TextIO) -> None:
    """The JSON array of ``records`` on a line indented as ``nl``."""
    items = records.items
    if not len(items):
        stream.write("[]")
        return
    inner = nl + "  "
    sep = "," + inner
    text = _TensorText()
    lead = "[" + inner
    for i in range(0, len(items), _BATCH):
        stream.write("".join(chain((lead,), text(items[i : i + _BATCH], inner, sep))))
        lead = sep
    stream.write(nl + "]")


# --- the document -------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _identity_json(grade: Grade | None, desc: Descriptor | None,
                   shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The fields of a tensor record that follow from (grade, descriptor,
    shape) alone, memoised: a checkpoint's tensors share a few of them, and
    packing, hashing and base32-encoding each one again was a large part of
    a --json run (docs/performance.md)."""
    from ..codec.base32 import encode as b32
    from ..codec.fingerprint import gid

    g = gid(grade, desc, shape) if desc is not None and grade is not None else None
    return (grade.canonical if grade is not None else None,
            grade.name if grade is not None else None,
            f"0x{desc.grade_id:016x}" if desc is not None else None,
            g.hex() if g else None, b32(g) if g else None,
            desc.hex() if desc is not None else None)


def _tensor_json(q: QTensor) -> dict[str, Any]:
    grade, name, grade_id, g, g32, desc = _identity_json(q.grade, q.desc, tuple(q.shape))
    return {
        "name": q.name, "role": q.role, "shape": list(q.shape),
        "grade": grade, "grade_name": name, "grade_id": grade_id,
        "gid": g, "gid_base32": g32, "desc": desc,
        "source": q.source.value, "convention": q.convention, "reason": q.reason,
    }


class _TensorText:
    """The text of ``_tensor_json(q)`` for each tensor of a batch, at
    indentation ``nl``, joined by ``sep``, as pieces to concatenate: the
    name and role, then the rest of the record, which is the same text for
    every tensor of one (grade, descriptor, shape, source, convention,
    reason) and is kept per document (performance: one record per quantised
    tensor).  The rest is looked up once per run of consecutive tensors
    with equal such attributes (compared as tuples, so objects shared by a
    run compare by identity; the text is a function of their values), by
    the identity of the shared objects, which ``held`` keeps alive so that
    an id is never reused while its entry lives.  Every per-tensor step is a
    C-level map."""

    __slots__ = ("memo", "held")

    def __init__(self) -> None:
        self.memo: dict[tuple[Any, ...], str] = {}
        self.held: list[tuple[object, ...]] = []

    def tails(self, keys: Sequence[tuple[Any, ...]], nl: str) -> list[str]:
        """The records' text after their role (from the comma), one per
        ``_TAIL_OF`` key.  The texts not yet known are made by one
        ``json.dumps`` of their list, cut at its items: each call of the
        standard encoder with ``indent`` leaves a few KB of cyclic garbage
        (its nested closures), which stays while rendering pauses the
        collector, so one call per distinct tensor would cost a GGUF of
        40,000 shapes some 100 MB."""
        ids = [(id(g), id(d), sh, id(src), conv, why, nl)
               for g, d, sh, src, conv, why in keys]
        memo = self.memo
        new = {i: k for i, k in zip(ids, keys) if i not in memo}
        if new:
            docs = []
            for grade, desc, shape, source, convention, reason in new.values():
                g, name, grade_id, gid_hex, g32, d = _identity_json(grade, desc, tuple(shape))
                docs.append({"shape": list(shape), "grade": g, "grade_name": name,
                             "grade_id": grade_id, "gid": gid_hex, "gid_base32": g32,
                             "desc": d, "source": source.value, "convention": convention,
                             "reason": reason})
                self.held.append((grade, desc, source))
            # "[\n  {...},\n  {...}\n]": an item's lines are indented by two
            # spaces or more, and only a new item starts a line with "  {"
            items = dumps(docs)[4:-2].split(",\n  {")
            for i, text in zip(new, items):
                # "{" + lines indented for a record on a line indented as nl,
                # with the quote and comma that end the role before it
                memo[i] = '",' + text.lstrip("{").replace("\n  ", nl)
        return [memo[i] for i in ids]

    def __call__(self, qs: Sequence[QTensor], nl: str, sep: str) -> Iterable[str]:
        """Each record on a line indented as ``nl``, joined by ``sep``."""
        inner = nl + "  "
        if isinstance(qs, QList) and qs.columnar:
            # from the columns (artifact.QList): a tail per group of tensors,
            # names and roles without making the tensors
            names, roles = qs.names(), qs.roles()
            per: list[str] = [""] * len(qs)
            units = qs.units()
            for (_rep, idx, _maker), tail in zip(units, self.tails(
                    [_TAIL_OF(u[0]) for u in units], nl)):
                # per[i] = the tail, at C speed (each __setitem__ gives None)
                any(map(per.__setitem__, idx, repeat(tail)))
            tails: Iterable[str] = per
        else:
            keys = list(map(_TAIL_OF, qs))
            starts, runs = _runs(keys)
            tails = chain.from_iterable(map(repeat, self.tails([keys[i] for i in starts], nl),
                                            runs))
            names, roles = list(map(_NAME, qs)), list(map(_ROLE, qs))
        # each record: "{" + inner + '"name": "' + name + '",' + inner + '"role": "' + role
        # + '",' + tail, the first without a separator before it (five pieces;
        # the strings' quotes are in the pieces around them)
        head = "{" + inner + '"name": "'
        return chain.from_iterable(zip(
            chain((head,), repeat(sep + head)), _strings(names),
            repeat('",' + inner + '"role": "'), _strings(roles), tails))


# the characters the json encoder (ensure_ascii) writes as themselves:
# printable ASCII but the quote and the backslash
_PLAIN = bytes(c for c in range(0x20, 0x7F) if c not in b'"\\')
_UNQUOTE = itemgetter(slice(1, -1))


def _strings(items: Sequence[str]) -> Iterable[str]:
    """The JSON strings of a batch without their quotes.  A batch of plain
    names (``_PLAIN`` only, which the encoder writes as they are) is itself,
    as one pass over its joined text at C speed decides; else each is
    encoded at C speed, after a lone surrogate is replaced by its escape
    text (ASCII text has none: a regex pass over the batch decides
    otherwise)."""
    text = "".join(items)
    if text.isascii():
        if not text.encode("ascii").translate(None, _PLAIN):
            return items
    elif has_surrogate(text):
        return map(_UNQUOTE, map(_ascii, map(valid_text, items)))
    return map(_UNQUOTE, map(_ascii, items))


def _runs(keys: list[Any]) -> tuple[list[int], Iterator[int]]:
    """Where each run of equal consecutive ``keys`` starts, and its length,
    found at C speed (tuples compare their items by identity first): a
    file's tensors are a few long runs, which then cost no Python code per
    tensor (docs/performance.md)."""
    if not keys:
        return [], iter(())
    starts = [0, *compress(range(1, len(keys)), map(ne, islice(keys, 1, None), keys))]
    return starts, map(sub, [*starts[1:], len(keys)], starts)


def artifact_summary(a: Artifact, lazy: bool = False) -> dict[str, Any]:
    grades: Counter[tuple[str, str | None, str]] = Counter()
    sources: Counter[str] = Counter()
    # counted per run of equal (grade, source, convention), then per
    # (grade object, source object, convention), then named (docs/performance.md); the
    # names are a function of the values, and first-seen order is kept, so
    # ties sort as before
    qs = a.quantized
    if qs.columnar:  # a group per Replays and object, in order of their first tensor
        units = qs.units()
        keys = [_SUMMARY_OF(u[0]) for u in units]
        starts, runs = list(range(len(units))), iter([len(u[1]) for u in units])
    else:
        keys = list(map(_SUMMARY_OF, qs))
        starts, runs = _runs(keys)
    counts: dict[tuple[int, int, str | None], int] = {}
    grade_of: dict[int, Grade | None] = {}
    source_of: dict[int, Source] = {}
    for i, n in zip(starts, runs):
        grade, source, conv = keys[i]
        k = (id(grade), id(source), conv)
        if k in counts:
            counts[k] += n
        else:
            counts[k] = n
            grade_of[id(grade)], source_of[id(source)] = grade, source
    for (g_id, s_id, conv), n in counts.items():
        g = grade_of[g_id]
        sources[source_of[s_id].value] += n
        if g is not None:
            grades[(g.canonical, g.name, f"0x{g.grade_id:016x}")] += n
        elif conv:
            grades[(conv, None, "")] += n
    md = {k: v for k, v in a.metadata.items() if isinstance(v, (str, int, float, list))}
    return {
        "path": a.path, "format": a.format.value, "parsed": a.parsed, "size": a.size,
        "producer": a.producer,
        "n_tensors": len(a.tensors), "n_quantized": len(a.quantized),
        "unquantized": dict(sorted(a.unquantized.items())),
        "grades": [{"grade": k[0], "name": k[1], "grade_id": k[2] or None, "count": n}
                   for k, n in sorted(grades.items(), key=lambda kv: -kv[1])],
        "sources": dict(sorted(sources.items())),
        "declared_mix": declared_mix(a),
        "metadata": md,
        # picked at C speed: a refused convention gives a file hundreds of issues
        "notes": list(map(_MESSAGE, compress(a.issues, map(eq, map(_CODE, a.issues),
                                                           repeat(IssueCode.NOTE))))),
        "tensors": (TensorRecords(a.quantized) if lazy
                    else [_tensor_json(q) for q in a.quantized]),
    }


# --json lists at most this many findings of one kind on one file; the rest
# of such a run is one ``findings_grouped`` entry (count and first names), so
# the document stays in proportion to what is wrong, not to how often (an
# index naming 30,000 missing shards gave 13 MB)
FINDINGS_PER_GROUP = 100
GROUP_NAMES = 50  # names (or messages) a grouped entry lists


def bound_findings(findings: list[Finding]) -> tuple[list[Finding], list[dict[str, Any]]]:
    """(the findings listed, the grouped entries for the rest): the first
    FINDINGS_PER_GROUP of each (kind, path) in report order, then one entry
    per (kind, path) with more: ``{"code", "kind", "severity", "path",
    "count", "first"}``, ``count`` the findings not listed and ``first`` the
    tensors (else the messages) of the first GROUP_NAMES of them."""
    seen: Counter[tuple[str, str]] = Counter()
    kept: list[Finding] = []
    rest: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        key = (f.kind.value, f.path)
        seen[key] += 1
        if seen[key] <= FINDINGS_PER_GROUP:
            kept.append(f)
        else:
            rest.setdefault(key, []).append(f)
    grouped = []
    for fs in rest.values():
        f = fs[0]
        grouped.append({
            "code": f.code, "kind": f.kind.value, "severity": f.severity.value,
            "path": f.path, "count": len(fs),
            "first": [x.tensor if x.tensor else x.message[:200] for x in fs[:GROUP_NAMES]]})
    return kept, grouped


def summary(report: Report, ckpt: list[Artifact] | None = None) -> dict[str, Any]:
    """The document's ``summary`` (``Report.summary``)."""
    ckpt = listed(report) if ckpt is None else ckpt
    counts = Counter(f.severity for f in report.findings)
    return {
        "files": len(ckpt),
        "parsed": sum(1 for a in ckpt if a.parsed),
        "tensors": sum(len(a.tensors) for a in ckpt),
        "quantized": sum(len(a.quantized) for a in ckpt if a.format is not Format.MANIFEST),
        "findings": {s.value: counts.get(s, 0) for s in Severity},
        "text": summary_line(report),
        "ignored": report.ignored,
        "not_audited": not_audited(report),
    }


def to_json(report: Report, lazy: bool = False) -> dict[str, Any]:
    """The document; with ``lazy`` its tensor records are built as
    ``dump`` writes them (the CLI's path), not all at once."""
    ckpt = listed(report)
    listed_findings, grouped = bound_findings(report.findings)
    return {
        "report_version": REPORT_VERSION,
        "tool_version": __version__,
        "roots": report.roots,
        "deep": report.deep,
        "exit_codes": report.exit_codes,
        "fail_on": report.fail_on.to_json(),
        "summary": summary(report, ckpt),
        "next_step": next_step(report),
        "artifacts": [artifact_summary(a, lazy) for a in ckpt],
        "findings": (Lazy(listed_findings, Finding.to_json) if lazy
                     else [f.to_json() for f in listed_findings]),
        "findings_grouped": grouped,
        "skipped": report.skipped,
        "messages": report.messages,
    }
