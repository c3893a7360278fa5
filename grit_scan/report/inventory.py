"""``grit show``: what the scan's readers made of the files, as a table or
as JSON (docs/cli.md#grit-show, docs/show-report.schema.json).

It renders the reading of a scan (``artifact.ScanInput``), model by model:
the shard index when there is one, the configs read, then per file its
format, producer, metadata keys, every stored tensor (name, dtype, shape,
offset, bytes) and every quantised tensor with its convention, grade and
descriptor source.  Nothing here reads a file.

The text is plain (no colour, no cursor codes) and never truncated, so it
survives pipes and files; columns are padded to at most ``PAD_MAX``
characters (a longer cell shifts only its own row, so a hostile name cannot
multiply the output).  Every string from a file is escaped (escape.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TextIO

from .._version import __version__
from ..artifact import Artifact, Format, ScanInput, StoredTensor, TensorTable
from ..issues import IssueCode
from .escape import esc

# Bumped by the rules of docs/json-report.md: additions keep it, removals,
# renames and changes of type or meaning bump it.
SHOW_VERSION = 1
PAD_MAX = 60
# Issues listed per file or index; the rest are counted (``issues_omitted``):
# an index naming 50,000 missing shards is one line each in a scan's findings,
# not here.
ISSUES_MAX = 100
_DECLARED_SKIP = ("raw", "all", "sources", "model", "config_dir")
# What a reader states about a file itself (not a metadata key), in the text's
# header line.
_FACTS = {"header_len": "{:,} bytes", "header_bytes": "{:,} bytes",
          "alignment": "alignment {}", "file_type_name": "file type {}"}


def _rows(a: Artifact) -> Iterator[StoredTensor]:
    return a.tensors.iter_rows() if isinstance(a.tensors, TensorTable) else iter(a.tensors)


def byte_order(a: Artifact) -> str | None:
    """A GGUF's byte order: "little" when read, "big" when refused as
    big-endian (the reader's one-line issue), else None."""
    if a.format is not Format.GGUF:
        return None
    if any(i.code is IssueCode.NOT_REPRESENTABLE and i.message.startswith("big-endian GGUF")
           for i in a.issues):
        return "big"
    return "little" if a.parsed else None


def _shape(a: Artifact, shape: Sequence[int]) -> list[int]:
    """A stored tensor's shape as its file lists it: a GGUF's innermost
    dimension first (ne order, as gguf-dump prints it), a safetensors
    file's row-major."""
    return list(reversed(shape)) if a.format is Format.GGUF else list(shape)


def metadata_keys(a: Artifact) -> list[str]:
    keys = a.metadata.get("kv_keys") if a.format is Format.GGUF else \
        a.metadata.get("safetensors_metadata_keys")
    return [str(k) for k in keys] if isinstance(keys, (list, tuple)) else []


def _scalars(md: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in md.items()
            if isinstance(v, (str, int, float)) and not isinstance(v, bool)}


def file_json(a: Artifact) -> dict[str, Any]:
    qs = []
    for q in a.quantized:
        g = q.grade
        qs.append({"name": q.name, "shape": list(q.shape), "convention": q.convention,
                   "grade": g.canonical if g is not None else None,
                   "grade_name": g.name if g is not None else None,
                   "source": q.source.value, "reason": q.reason})
    return {
        "path": a.path, "format": a.format.value, "parsed": a.parsed, "size": a.size,
        "byte_order": byte_order(a), "producer": a.producer,
        "shape_order": "ggml" if a.format is Format.GGUF else "row-major",
        "metadata_keys": metadata_keys(a), "metadata": _scalars(a.metadata),
        "tensors": [{"name": t.name, "dtype": t.dtype, "shape": _shape(a, t.shape),
                     "offset": t.offset, "bytes": t.nbytes} for t in _rows(a)],
        "quantized": qs,
        **_issues(a),
    }


def _issues(a: Artifact) -> dict[str, Any]:
    """The first ISSUES_MAX issues, and how many more there are."""
    return {"issues": [{"code": i.code.value, "message": i.message, "tensor": i.tensor}
                       for i in a.issues[:ISSUES_MAX]],
            "issues_omitted": max(0, len(a.issues) - ISSUES_MAX)}


def _more(omitted: int, indent: str) -> Iterator[str]:
    if omitted:
        yield f"{indent}... and {omitted:,} more (grit scan reports each as a finding)"


class _Model:
    def __init__(self, key: str) -> None:
        self.key = key
        self.index: Artifact | None = None
        self.files: list[Artifact] = []

    @property
    def first(self) -> Artifact | None:
        return self.files[0] if self.files else self.index


def models(data: ScanInput) -> list[_Model]:
    """The artifacts by model, in the order they were read: a sharded
    model's index with its shards, a GGUF split set, a single file; a
    parsed config is not listed (it is the model's configs)."""
    by: dict[str, _Model] = {}
    for a in data.artifacts:
        if a.format is Format.CONFIG and a.parsed:
            continue
        key = a.path if a.format is Format.INDEX else (a.model or a.path)
        m = by.setdefault(key, _Model(key))
        if a.format is Format.INDEX:
            m.index = a
        else:
            m.files.append(a)
    return list(by.values())


def _configs(data: ScanInput, m: _Model) -> dict[str, Any] | None:
    a = m.first
    d = data.declared.get(a.group or "") if a is not None else None
    if not d:
        return None
    return {"sources": [str(s) for s in d.get("sources") or [d.get("source")] if s],
            "declared": {k: v for k, v in d.items()
                         if k not in _DECLARED_SKIP and k != "source" and v is not None}}


def _index_json(a: Artifact) -> dict[str, Any]:
    shards = a.metadata.get("shards")
    return {"path": a.path, "parsed": a.parsed,
            "total_size": a.metadata.get("total_size"),
            "shards": list(shards) if isinstance(shards, (list, tuple)) else [],
            **_issues(a)}


def to_json(data: ScanInput) -> dict[str, Any]:
    """The ``grit show --json`` document (docs/show-report.schema.json)."""
    out = []
    for m in models(data):
        a = m.first
        out.append({"model": m.key,
                    "repo": a.repo if a is not None else None,
                    "revision": a.revision if a is not None else None,
                    "index": _index_json(m.index) if m.index is not None else None,
                    "configs": _configs(data, m),
                    "files": [file_json(f) for f in m.files]})
    return {"show_version": SHOW_VERSION, "tool_version": __version__,
            "roots": list(data.roots), "models": out,
            "skipped": [{"path": str(i.detail.get("path", "")), "reason": i.message,
                         "kind": str(i.detail.get("kind", "other"))} for i in data.skipped]}


# --- text

def _table(head: Sequence[str], rows: Iterable[Sequence[str]], indent: str) -> Iterator[str]:
    rows = list(rows)
    widths = [min(PAD_MAX, max([len(h), *(len(r[k]) for r in rows)]))
              for k, h in enumerate(head)]
    for r in [list(head), *rows]:
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths)] + [r[-1]]
        yield (indent + "  ".join(cells)).rstrip()


def _dims(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


def _file_text(a: Artifact) -> Iterator[str]:
    f = file_json(a)
    yield f"file {esc(a.path)}"
    order = f", {f['byte_order']}-endian" if f["byte_order"] else ""
    version = a.metadata.get("gguf_version")
    fmt = a.format.value + (f" v{version}" if isinstance(version, int) else "")
    yield f"  format     {fmt}{order}, {a.size:,} bytes"
    if not a.parsed:
        why = "; ".join([i.message for i in a.issues if i.tensor is None][:3]) or "unreadable"
        yield f"  not read   {esc(why)}"
        return
    yield f"  producer   {esc(a.producer) if a.producer else 'not stated'}"
    md = f["metadata"]
    facts = [label.format(md[k] if isinstance(md[k], int) else esc(str(md[k])))
             for k, label in _FACTS.items() if k in md]
    if facts:
        yield "  header     " + ", ".join(facts)
    keys = f["metadata_keys"]
    yield f"  metadata   {len(keys)} key{'' if len(keys) == 1 else 's'}"
    for k in keys:
        v = md.get(k)
        yield f"    {esc(k)}" + (f" = {esc(str(v))}" if v is not None else "")
    shown = [i for i in f["issues"] if i["tensor"] is None]
    for i in shown:
        yield f"  note       {esc(i['code'])}: {esc(i['message'])}"
    yield from _more(f["issues_omitted"], "  note       ")
    n = len(a.tensors)
    order_note = " (shapes innermost first, as gguf-dump)" if a.format is Format.GGUF else ""
    yield f"  tensors    {n}{order_note}"
    yield from _table(("name", "dtype", "shape", "offset", "bytes"),
                      ((esc(t["name"]), esc(t["dtype"]), ",".join(map(str, t["shape"])),
                        str(t["offset"]), str(t["bytes"])) for t in f["tensors"]), "    ")
    qs = f["quantized"]
    yield f"  quantised  {len(qs)}"
    if qs:
        yield from _table(("name", "logical shape", "convention", "grade", "source"),
                          ((esc(q["name"]), _dims(q["shape"]), esc(q["convention"] or "-"),
                            esc(q["grade_name"] or q["grade"] or "-"),
                            q["source"] + (f": {esc(q['reason'])}" if q["reason"] else ""))
                           for q in qs), "    ")


def render_text(data: ScanInput, out: TextIO) -> None:
    """The inventory as plain text, model by model."""
    first = True
    for m in models(data):
        if not first:
            out.write("\n")
        first = False
        a = m.first
        n = len(m.files)
        head = f"model {esc(m.key)}"
        if a is not None and a.repo:
            head += f" (Hub cache {esc(a.repo)}@{esc(a.revision or '?')})"
        out.write(head + f": {n} file{'' if n == 1 else 's'}\n")
        if m.index is not None:
            ix = _index_json(m.index)
            total = ix["total_size"]
            out.write(f"  index      {esc(m.index.path)}: {len(ix['shards'])} shards"
                      + (f", total_size {total:,}" if isinstance(total, int) else "") + "\n")
            for s in ix["shards"]:
                out.write(f"    {esc(str(s))}\n")
            for i in ix["issues"]:
                out.write(f"    note: {esc(i['message'])}\n")
            for line in _more(ix["issues_omitted"], "    note: "):
                out.write(line + "\n")
        cfg = _configs(data, m)
        if cfg is not None:
            out.write("  configs    " + esc(", ".join(cfg["sources"])) + "\n")
            for k, v in cfg["declared"].items():
                out.write(f"    {esc(str(k))} = {esc(str(v))}\n")
        for f in m.files:
            out.write("\n")
            for line in _file_text(f):
                out.write("  " + line + "\n")
    for i in data.skipped:
        out.write(f"skipped {esc(i.message)}\n")
