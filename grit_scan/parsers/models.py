"""Reason about models, not files: group what one directory holds into the
models it is made of, and finish reading each model as a whole.

* safetensors shards (named by an index, or ``*-0000k-of-0000N``) are one
  model: conventions are inferred over the union of their tensors, because
  transformers and huggingface_hub sharding routinely put a module's weight,
  scale and global scale in different shards (a ``PlaneRef.file`` then points
  into the other shard);
* a GGUF split (``split.no``, ``split.count``, ``split.tensors.count``;
  research: gguf-ggml-internals.md) is one model: a missing, extra or
  duplicated part is an issue naming it, and shard 1's ``general.file_type``
  governs every part (llama-gguf-split writes it to shard 1 only);
* a file found under a Hugging Face cache's ``models--ORG--NAME/snapshots/REV/``
  belongs to repository ORG/NAME at revision REV.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import compress
from operator import not_

from ..artifact import Artifact, Format, Issue, IssueCode, QTensor, StoredTensor, TensorTable
from ..names import Declared
from . import conventions

_ST_SHARD = re.compile(r"^(?P<base>.+)-(?P<no>\d{5})-of-(?P<n>\d{5})\.safetensors$")
_GGUF_SPLIT = re.compile(r"^(?P<base>.+)-(?P<no>\d{5})-of-(?P<n>\d{5})\.gguf$")
_HF_SNAPSHOT = re.compile(r"(?:^|/)models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/"
                          r"(?P<rev>[^/]+)(?:/|$)")


def hf_location(display: str) -> tuple[str, str] | None:
    """(ORG/NAME, REVISION) when ``display`` lies in a Hugging Face cache
    snapshot (huggingface_hub's layout: ``models--ORG--NAME/snapshots/REV/``)."""
    m = _HF_SNAPSHOT.search(display.replace(os.sep, "/"))
    if m is None:
        return None
    return f"{m['org']}/{m['name']}", m["rev"]


def assemble(arts: Sequence[Artifact], index_shards: Sequence[Sequence[str]],
             declared: Declared | None, role: Callable[[str], str]) -> None:
    """Finish the artifacts read from one directory (in place): models,
    conventions across shards, GGUF splits, cache repositories.
    ``index_shards`` lists, per index file, the shard names it maps."""
    for a in arts:
        loc = hf_location(a.path)
        if loc is not None:
            a.repo, a.revision = loc
    st = [a for a in arts if a.format is Format.SAFETENSORS]
    for model, members in _safetensors_models(st, index_shards).items():
        for a in members:
            a.model = model
        infer_model([a for a in members if a.parsed], declared, role)
        for a in members:
            if isinstance(a.tensors, TensorTable):
                a.tensors.release()
    gg = [a for a in arts if a.format is Format.GGUF]
    for model, members in _gguf_models(gg).items():
        for a in members:
            a.model = model
        if len(members) > 1 or any("split.count" in a.metadata for a in members):
            check_split(model, members)


def _safetensors_models(arts: Sequence[Artifact], index_shards: Sequence[Sequence[str]]
                        ) -> dict[str, list[Artifact]]:
    by_name = {os.path.basename(a.path): a for a in arts}
    out: dict[str, list[Artifact]] = {}
    taken: set[str] = set()
    for shards in index_shards:
        members = [by_name[s] for s in sorted(set(shards)) if s in by_name and s not in taken]
        if members:
            taken.update(os.path.basename(a.path) for a in members)
            out[_model_key(members[0], "index")] = members
    pattern: dict[str, list[Artifact]] = defaultdict(list)
    for name, a in sorted(by_name.items()):
        if name in taken:
            continue
        m = _ST_SHARD.match(name)
        if m is not None:
            pattern[_model_key(a, m["base"])].append(a)
        else:
            out[a.path] = [a]
    out.update(pattern)
    return out


def _model_key(a: Artifact, base: str) -> str:
    return os.path.join(os.path.dirname(a.path), base)


def infer_model(members: Sequence[Artifact], declared: Declared | None,
                role: Callable[[str], str]) -> None:
    """Conventions over the union of a model's shards; each inferred tensor
    goes to the shard holding its data, issues to the shard they name."""
    if not members:
        return
    if (not any(a.claimed for a in members) and all(map(_only_floats, members))
            and _disjoint(members)):
        # nothing here can be quantised (no convention uses only float
        # dtypes): counted from the dtype columns, no records built
        for a in members:
            _add_counts(a, Counter(a.tensor_dtypes()))
        return
    if len(members) == 1:
        a = members[0]
        a.quantized.extend(conventions.infer(a, _tensors(a), a.claimed, declared, role))
        return
    merged: dict[str, StoredTensor] = {}
    path_of: dict[str, str] = {}  # tensor -> the abs_path of the shard holding it
    by_path = {a.abs_path: a for a in members}
    used: set[str] = set()
    overlap = False
    for a in members:
        used |= a.claimed
        if isinstance(a.tensors, TensorTable) and merged.keys().isdisjoint(a.tensors.names):
            # the usual case, at C speed, with no per-shard map built (issue 15)
            merged.update(zip(a.tensors.names, a.tensors.iter_rows()))
            path_of.update(dict.fromkeys(a.tensors.names, a.abs_path))
            continue
        tensors = _tensors(a)
        if merged.keys().isdisjoint(tensors):
            merged.update(tensors)
            path_of.update(dict.fromkeys(tensors, a.abs_path))
            continue
        overlap = True
        for name, t in tensors.items():
            if name not in merged:  # a duplicate is the index rule's business
                merged[name] = t
                path_of[name] = a.abs_path
    sink = Artifact(path=members[0].path, abs_path="", format=Format.SAFETENSORS)
    qs = conventions.infer(sink, merged, used, declared, role, path_of.get)
    for q in qs:
        home = by_path[path_of.get(_data_tensor(q), members[0].abs_path)]
        _localise(q, home.abs_path)
        home.quantized.append(q)
    for iss in sink.issues:
        _owner_of(iss, path_of, by_path, members[0]).issues.append(iss)
    if not sink.unquantized:
        return
    if overlap:
        for name, t in merged.items():
            if name not in used:
                a = by_path[path_of[name]]
                a.unquantized[t.dtype] = a.unquantized.get(t.dtype, 0) + 1
        return
    for a in members:  # no name in two shards: each shard's own columns
        unused = map(not_, map(used.__contains__, a.tensor_names()))
        _add_counts(a, Counter(compress(a.tensor_dtypes(), unused)))


def _only_floats(a: Artifact) -> bool:
    return set(a.tensor_dtypes()) <= conventions.UNQUANTISED


def _disjoint(members: Sequence[Artifact]) -> bool:
    """No tensor name in two shards (a duplicate counts for its first shard only)."""
    if len(members) == 1:
        return True
    seen: set[str] = set()
    for a in members:
        names = a.tensor_names()
        if not seen.isdisjoint(names):
            return False
        seen.update(names)
    return True


def _add_counts(a: Artifact, counts: Mapping[str, int]) -> None:
    for dt, n in counts.items():
        a.unquantized[dt] = a.unquantized.get(dt, 0) + n


def _tensors(a: Artifact) -> Mapping[str, StoredTensor]:
    if isinstance(a.tensors, TensorTable):
        return a.tensors.by_name()
    return {t.name: t for t in a.tensors}


def _data_tensor(q: QTensor) -> str:
    if q.planes and q.planes[0] is not None and q.planes[0].tensor:
        return q.planes[0].tensor
    if q.payload is not None and q.payload.tensor:
        return q.payload.tensor
    return q.name


def _localise(q: QTensor, home: str) -> None:
    """A plane in the tensor's own file needs no file reference."""
    for ref in (q.planes or []) + [q.payload]:
        if ref is not None and ref.file == home:
            ref.file = None


def _owner_of(iss: Issue, path_of: Mapping[str, str], by_path: Mapping[str, Artifact],
              default: Artifact) -> Artifact:
    if iss.tensor is None:
        return default
    hit = path_of.get(iss.tensor)
    if hit is not None:
        return by_path[hit]
    prefix = iss.tensor + "."
    return next((by_path[p] for n, p in path_of.items() if n.startswith(prefix)), default)


def _gguf_models(arts: Sequence[Artifact]) -> dict[str, list[Artifact]]:
    out: dict[str, list[Artifact]] = defaultdict(list)
    for a in arts:
        m = _GGUF_SPLIT.match(os.path.basename(a.path))
        key = _model_key(a, m["base"]) if m is not None else a.path
        out[key].append(a)
    return out


def check_split(model: str, members: list[Artifact]) -> None:
    """One GGUF split set: every part present once, counts consistent; shard
    1's general.file_type recorded on every part."""
    parsed = [a for a in members if a.parsed]
    if not parsed:
        return
    counts = {c for a in parsed if isinstance(c := a.metadata.get("split.count"), int)}
    numbers: dict[int, list[Artifact]] = defaultdict(list)
    for a in parsed:
        no = a.metadata.get("split.no")
        if isinstance(no, int):
            numbers[no].append(a)
    head = numbers.get(0, [None])[0] or parsed[0]
    base = os.path.basename(model)
    if len(counts) > 1:
        head.issue(IssueCode.INDEX_INCONSISTENT,
                   f"the parts of split {base} disagree on split.count: {sorted(counts)}",
                   counts=sorted(counts))
        return
    n = next(iter(counts), None)
    if not isinstance(n, int) or n < 1:
        return
    for no, parts in sorted(numbers.items()):
        if len(parts) > 1:
            head.issue(IssueCode.INDEX_INCONSISTENT,
                       f"split part {no + 1} of {base} appears {len(parts)} times: "
                       + ", ".join(a.path for a in parts), paths=[a.path for a in parts])
        if no >= n:
            for a in parts:
                head.issue(IssueCode.INDEX_INCONSISTENT,
                           f"{a.path} says it is part {no + 1} of a {n}-part split",
                           path=a.path)
    missing = [k for k in range(n) if k not in numbers]
    for k in missing:
        name = f"{base}-{k + 1:05d}-of-{n:05d}.gguf"
        head.issue(IssueCode.MISSING_SHARD,
                   f"split part {name} is missing: shard {head.path} says the model has {n} "
                   f"part(s) (split.count) and {len(numbers)} are here", path=name)
    want = head.metadata.get("split.tensors.count")
    have = sum(len(a.tensors) for a in parsed)
    if not missing and isinstance(want, int) and want != have:
        head.issue(IssueCode.INDEX_INCONSISTENT,
                   f"split {base} records {want:,} tensors (split.tensors.count) but its parts "
                   f"hold {have:,}", expected=want, actual=have)
    first = numbers.get(0)
    ft = first[0].metadata.get("file_type_name") if first else None
    if isinstance(ft, str):
        for a in parsed:
            if "file_type_name" not in a.metadata:
                a.metadata["file_type_name"] = ft
                a.metadata["file_type_from"] = first[0].path if first else None
