"""Reason about models, not files: group what one directory holds into the
models it is made of, and finish reading each model as a whole.

* safetensors shards (named by an index, or ``*-0000k-of-0000N``) are one
  model: conventions are inferred over the union of their tensors, because
  transformers and huggingface_hub sharding routinely put a module's weight,
  scale and global scale in different shards (a ``PlaneRef.file`` then points
  into the other shard);
* a GGUF split (``split.no``, ``split.count``, ``split.tensors.count``;
  research: gguf-ggml-internals.md) is one model, and shard 1's
  ``general.file_type`` governs every part (llama-gguf-split writes it to
  shard 1 only); whether every part is there is a rule's question
  (rules/support.split_issues: the missing_shard and index_inconsistency
  kinds);
* a file found under a Hugging Face cache's ``models--ORG--NAME/snapshots/REV/``
  belongs to repository ORG/NAME at revision REV.
"""

from __future__ import annotations

import os
import re
from array import array
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, attrgetter, is_, itemgetter, methodcaller, ne, or_
from typing import TYPE_CHECKING, cast

from ..artifact import (
    Artifact,
    Format,
    PlaneRef,
    PlaneSeq,
    QList,
    QListBuilder,
    QTensor,
    TensorTable,
)
from ..issues import Issue
from ..issues.internal_error import InferenceRaised
from ..names import Declared
from .index import ST_SHARD as _ST_SHARD
from .index import Indexed
from .safetensors_reader import UNQUANTISED_FLOATS

if TYPE_CHECKING:
    from ..conventions import Columns

# patterns compiled where first used (re's cache), not at import: start-up, docs/performance.md
_GGUF_SPLIT = r"^(?P<base>.+)-(?P<no>\d{5})-of-(?P<n>\d{5})\.gguf$"
_HF_SNAPSHOT = (r"(?:^|/)models--(?P<org>[^/]+?)--(?P<name>[^/]+)/snapshots/"
                r"(?P<rev>[^/]+)(?:/|$)")


def hf_location(display: str) -> tuple[str, str] | None:
    """(ORG/NAME, REVISION) when ``display`` lies in a Hugging Face cache
    snapshot (huggingface_hub's layout: ``models--ORG--NAME/snapshots/REV/``)."""
    m = re.search(_HF_SNAPSHOT, display.replace(os.sep, "/"))
    if m is None:
        return None
    return f"{m['org']}/{m['name']}", m["rev"]


def assemble(arts: Sequence[Artifact], index_shards: Sequence[Indexed],
             declared: Declared | None, role: Callable[[str], str],
             tracebacks: list[str] | None = None) -> list[Artifact]:
    """The artifacts read from one directory as the models they make up, in
    the order of ``arts``: new records with their model and, in a Hugging
    Face cache, repository and revision (``arts`` are not changed), then
    conventions inferred across each model's shards, GGUF splits.
    ``index_shards`` says, per index file, the shard names it maps.  An
    unexpected exception while inferring one model's conventions is
    contained to that model, as a reader's is to its file: an internal_error
    issue on its first file, the traceback in ``tracebacks`` (--debug)."""
    st = [a for a in arts if a.format.hf_named]
    models, disjoint = _safetensors_models(st, index_shards)
    gguf = _gguf_models([a for a in arts if a.format is Format.GGUF])
    model_of = {id(a): model for model, members in chain(models.items(), gguf.items())
                for a in members}
    out = [_placed(a, model_of.get(id(a), a.model)) for a in arts]
    at = {id(a): k for k, a in enumerate(arts)}
    for model, old in models.items():
        parsed = [a for a in old if a.parsed]
        placed = [out[at[id(a)]] for a in parsed]
        try:
            done = infer_model(placed, declared, role, model in disjoint)
        except Exception as exc:  # noqa: BLE001 - containment is the point
            done = _contain(placed, model, exc, tracebacks)
        for a, b in zip(parsed, done):
            out[at[id(a)]] = b
        for a in old:
            if isinstance(a.tensors, TensorTable):
                a.tensors.release()
    for old in gguf.values():
        members = [out[at[id(a)]] for a in old]
        if len(members) > 1 or any("split.count" in a.metadata for a in members):
            for a, b in zip(old, _split_file_type(members)):
                out[at[id(a)]] = b
    return out


def _placed(a: Artifact, model: str | None) -> Artifact:
    """``a`` as a new record with its model, and the Hugging Face cache
    repository and revision its path lies under."""
    loc = hf_location(a.path)
    repo, revision = loc if loc is not None else (a.repo, a.revision)
    return replace(a, model=model, repo=repo, revision=revision)


def put_back(arts: list[Artifact], start: int, old: Sequence[Artifact],
             new: Sequence[Artifact]) -> None:
    """``arts`` with each of ``old`` (all at ``start`` or after) replaced by
    the record at its position in ``new`` (the records ``assemble`` made)."""
    swap = {id(a): b for a, b in zip(old, new)}
    arts[start:] = [swap.get(id(a), a) for a in arts[start:]]


def _contain(members: Sequence[Artifact], model: str, exc: Exception,
             tracebacks: list[str] | None) -> list[Artifact]:
    """``members`` after an exception raised while inferring ``model``'s
    conventions: an internal_error issue on its first file (nothing of the
    model was verified); every other model of the scan is still judged."""
    import traceback

    if tracebacks is not None:
        tracebacks.append(traceback.format_exc())
    if not members:
        return []
    first = members[0]
    why = InferenceRaised(None, model, type(exc).__name__, str(exc)[:500])
    return [replace(first, issues=first.issues + (why,)), *members[1:]]


def _safetensors_models(arts: Sequence[Artifact], index_shards: Sequence[Indexed]
                        ) -> tuple[dict[str, list[Artifact]], set[str]]:
    """The models (their shards, by model key), and the keys of those whose
    shards are known to share no tensor name (an exact index's)."""
    by_name = {os.path.basename(a.path): a for a in arts}
    out: dict[str, list[Artifact]] = {}
    disjoint: set[str] = set()
    taken: set[str] = set()
    for ix in index_shards:
        members = [by_name[s] for s in ix.shards if s in by_name and s not in taken]
        if members:
            taken.update(os.path.basename(a.path) for a in members)
            # one model per index, keyed by the index's file: a directory may
            # hold two indexed models (consolidated.safetensors.index.json
            # beside model.safetensors.index.json)
            key = _model_key(members[0], ix.name)
            out[key] = members
            if ix.exact:
                disjoint.add(key)  # some of an exact index's shards: still disjoint
    pattern: dict[str, list[Artifact]] = defaultdict(list)
    for name, a in sorted(by_name.items()):
        if name in taken:
            continue
        m = re.match(_ST_SHARD, name)
        if m is not None:
            pattern[_model_key(a, m["base"])].append(a)
        else:
            out[a.path] = [a]
    out.update(pattern)
    return out, disjoint


def _model_key(a: Artifact, base: str) -> str:
    return os.path.join(os.path.dirname(a.path), base)


class _Added:
    """What inferring a model's conventions gives one of its shards: its
    tensors (the shard's own first, from a GRIT header), the issues that
    name them and its unquantised counts.  Local to one ``infer_model``
    call, which makes each shard's new record from it."""

    __slots__ = ("quantized", "issues", "unquantized")

    def __init__(self, a: Artifact) -> None:
        self.quantized = QListBuilder(home=a.quantized.home)
        self.quantized.extend(a.quantized)
        self.issues: list[Issue] = []
        self.unquantized: dict[str, int] = dict(a.unquantized)

    def record(self, a: Artifact) -> Artifact:
        return replace(a, quantized=self.quantized.build(), issues=a.issues + tuple(self.issues),
                       unquantized=self.unquantized)


def infer_model(members: Sequence[Artifact], declared: Declared | None,
                role: Callable[[str], str], disjoint: bool = False) -> list[Artifact]:
    """``members`` (a model's shards) as new records with the conventions
    inferred over their union: each inferred tensor in the shard holding its
    data, each issue in the shard it names.  ``disjoint``: the shards are
    known to share no tensor name."""
    if not members:
        return []
    added = [_Added(a) for a in members]
    if (not any(a.claimed for a in members) and all(map(_only_floats, members))
            and (disjoint or _disjoint(members))):
        # nothing here can be quantised (no convention uses only float
        # dtypes): counted from the dtype columns, no records built
        for a, more in zip(members, added):
            _add_counts(more.unquantized, Counter(a.tensor_dtypes()))
        return [more.record(a) for a, more in zip(members, added)]
    # here, not at the top: a model of only floats never needs it (start-up)
    from .. import conventions

    if len(members) == 1:
        a, more = members[0], added[0]
        cols = conventions.Columns.of(a.tensors)
        got = conventions.infer(cols, conventions.used_mask(cols, a.claimed), declared, role)
        more.quantized.extend(got.quantized)
        more.issues.extend(got.issues)
        _add_counts(more.unquantized, got.unquantized)
        return [more.record(a)]
    _infer_shards(members, added, declared, role, disjoint)
    return [more.record(a) for a, more in zip(members, added)]


def _infer_shards(members: Sequence[Artifact], added: Sequence[_Added],
                  declared: Declared | None, role: Callable[[str], str],
                  disjoint: bool) -> None:
    """``infer_model`` of two or more shards, into ``added``."""
    from .. import conventions

    overlap = not (disjoint or _disjoint(members))
    cols = _columns(members, overlap)
    used = conventions.used_mask(cols, set().union(*(a.claimed for a in members)))
    by_path = {a.abs_path: more for a, more in zip(members, added)}
    # taken apart at once: the list is dropped below when every tensor has
    # gone to its shard, and nothing else may keep it alive
    qs, issues, counted = conventions.infer(cols, used, declared, role)
    for a, more in zip(members, added):
        more.quantized.home = a.abs_path  # a replayed tensor's planes there need no file
    first = members[0].abs_path
    if _distribute(qs, cols, [by_path[f or first] for f in cols.where.file_numbers()[1]]):
        qs = QList()
    for q, maker, made_from in qs.entries():
        if q is None:
            assert maker is not None
            at = maker.data_position(made_from)
            if at is not None:  # as _home: the file holding its data plane
                by_path[cols.file(at) or first].quantized.replay(maker, made_from)
                continue
            q = maker.make(made_from, None)
        path = _home(q, cols) or first
        by_path[path].quantized.append(_localise(q, path))
    where = _positions(issues, cols)
    # a tensor no file lists under its own name (a convention's logical
    # ``mod.weight`` over ``weight_packed`` or ``qweight``): its issue goes to
    # the shard its tensor went to, else to the first
    lost = {i.tensor for i, g in zip(issues, where) if g is None and i.tensor is not None}
    held = _holders(lost, added) if lost else {}
    for iss, g in zip(issues, where):
        owner = (held.get(iss.tensor or "", added[0]) if g is None
                 else by_path[cols.file(g) or ""])
        owner.issues.append(iss)
    if not counted:
        return
    unused = used.translate(conventions.UNUSED)
    if overlap:
        for g in compress(range(len(cols)), unused):
            counts = by_path[cols.file(g) or ""].unquantized
            dt = cols.dtypes[g]
            counts[dt] = counts.get(dt, 0) + 1
        return
    start = 0
    for a, more in zip(members, added):  # no name in two shards: each shard's own columns
        n = len(a.tensors)
        _add_counts(more.unquantized,
                    Counter(compress(a.tensor_dtypes(), unused[start:start + n])))
        start += n


def _columns(members: Sequence[Artifact], overlap: bool) -> Columns:
    """The shards' columns one after the other, each tensor with the file
    holding it; a name listed in two shards counts in its first (the index
    rule reports the duplicate)."""
    from .. import conventions
    parts = [conventions.Columns.of(a.tensors) for a in members]
    if overlap:
        seen: set[str] = set()
        for k, c in enumerate(parts):
            keep = [n not in seen for n in c.names]
            seen.update(c.names)
            if not all(keep):
                parts[k] = conventions.Columns(
                    list(compress(c.names, keep)), list(compress(c.dtypes, keep)),
                    list(compress(c.shapes, keep)), list(compress(c.offsets, keep)),
                    list(compress(c.nbytes, keep)), list(compress(c.available, keep)))
    starts = list(accumulate((len(c) for c in parts[:-1]), initial=0))
    nbytes = _concat([c.nbytes for c in parts])
    # one column when every shard's is one (a well-formed header's are)
    available = nbytes if all(c.available is c.nbytes for c in parts) else _concat(
        [c.available for c in parts])
    return conventions.Columns(
        list(chain.from_iterable(c.names for c in parts)),
        list(chain.from_iterable(c.dtypes for c in parts)),
        list(chain.from_iterable(c.shapes for c in parts)),
        _concat([c.offsets for c in parts]), nbytes, available,
        [a.abs_path for a in members], starts)


def _concat(cols: Sequence[Sequence[int]]) -> Sequence[int]:
    """Integer columns one after the other: int64 when every one is (issue
    15: memory), else an exact list (a hostile GGUF's u64 values)."""
    if all(isinstance(c, array) and c.typecode == "q" for c in cols):
        out = array("q")
        for c in cols:
            out.extend(c)
        return out
    return list(chain.from_iterable(cols))


def _only_floats(a: Artifact) -> bool:
    return set(a.tensor_dtypes()) <= UNQUANTISED_FLOATS


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


def _add_counts(into: dict[str, int], counts: Mapping[str, int]) -> None:
    for dt, n in counts.items():
        into[dt] = into.get(dt, 0) + n


def _distribute(qs: QList, cols: Columns, homes: Sequence[_Added]) -> bool:
    """Give each shard of ``homes`` (by file number) the replayed tensors
    whose data plane it holds, as ``_home`` would, in a few C-level passes,
    when every tensor of ``qs`` is replayed and has a named data plane
    (performance: a 500-shard model's 200,000 modules).  False: not done."""
    got = qs.columns()
    if got is None:
        return False
    kinds, vals, makers = got
    if not kinds:
        return True  # nothing to give
    parts = [m.data_part() for m in makers]
    if None in parts or "" in cols.names:
        return False
    run, _files = cols.where.file_numbers()
    if run is None:
        homes[0].quantized.add_replays(makers, kinds, vals)
        return True
    offset: list[int] = parts  # type: ignore[assignment]  # no None in it
    shard = list(map(run.__getitem__, map(add, vals, map(offset.__getitem__, kinds))))
    order = sorted(range(len(shard)), key=shard.__getitem__)  # stable: listing order kept
    starts = [0, *compress(range(1, len(order)),
                           map(ne, map(shard.__getitem__, islice(order, 1, None)),
                               map(shard.__getitem__, order)))]
    for a, b in zip(starts, [*starts[1:], len(order)]):
        at = order[a:b]
        homes[shard[at[0]]].quantized.add_replays(makers, map(kinds.__getitem__, at),
                                                   map(vals.__getitem__, at))
    return True


def _home(q: QTensor, cols: Columns) -> str | None:
    """The file holding ``q``'s data: its first plane's (or payload's), which
    ``conventions`` took from ``cols``, else that of a tensor named like it."""
    planes = q.planes
    first = None
    if isinstance(planes, PlaneSeq):
        named, file = planes.data_file()  # without building its PlaneRef
        if named:
            return file
    elif planes:
        first = planes[0]
    for ref in (first, q.payload):
        if ref is not None and ref.tensor:
            return ref.file
    g = cols.index().get(q.name)
    return cols.file(g) if g is not None else None


def _localise(q: QTensor, home: str) -> QTensor:
    """``q`` with no file reference on a plane in the tensor's own file
    ``home`` (a QTensor just inferred, not yet given to its artifact): a new
    record when one changes, else ``q`` itself.

    The new record is ``dataclasses.replace(q, planes=..., payload=...)``,
    built by naming every field: replace costs twice as much, and a model of
    many shards whose modules have no plan gives one such record a module
    (tests/test_qtensor_frozen.py holds it to replace's)."""
    planes = local = q.planes
    if isinstance(planes, PlaneSeq):
        local = planes.localised(home)  # its PlaneRefs are built when asked
    elif planes is not None and any(p is not None and p.file == home for p in planes):
        local = [_here(p, home) for p in planes]
    payload = _here(q.payload, home)
    if local is planes and payload is q.payload:
        return q
    return QTensor(name=q.name, role=q.role, shape=q.shape, source=q.source, desc=q.desc,
                   grade=q.grade, convention=q.convention, reason=q.reason, payload=payload,
                   planes=local, expected_digest=q.expected_digest,
                   expected_gid=q.expected_gid, layouts=q.layouts, notes=q.notes,
                   declared=q.declared)


def _here(ref: PlaneRef | None, home: str) -> PlaneRef | None:
    """``ref`` without its file when that file is ``home``."""
    return ref._replace(file=None) if ref is not None and ref.file == home else ref


def _holders(names: set[str], added: Sequence[_Added]) -> dict[str, _Added]:
    """Which shard's new record holds the quantised tensor of each of
    ``names`` (the first, for a name two shards hold)."""
    out: dict[str, _Added] = {}
    for more in added:
        for name in more.quantized.names():
            if name in names and name not in out:
                out[name] = more
    return out


_TENSOR = attrgetter("tensor")


def _positions(issues: Sequence[Issue], cols: Columns) -> list[int | None]:
    """Where each issue's tensor is: that tensor, else the first tensor (in
    listing order) under the module it names (``NAME.``), else None.

    One pass over the names for all the modules named, never one per issue:
    a sharded FP8 model whose every module has a scale layout this scanner
    does not know gives one issue per module, and a scan per issue would be
    hours on 400,000 tensors."""
    tensors: list[str | None] = list(map(_TENSOR, issues))
    named = set(tensors)
    named.discard(None)
    if not named:
        return [None] * len(tensors)
    # C-level passes: whether any issue names a stored tensor (a set test
    # that stops at the first: a not-representable convention's issues name
    # a logical ``mod.weight`` no file lists, and the name -> position map
    # of 400,000 tensors then is not built), a lookup of every name where
    # one does (None finds nothing), then the names not found, looked for
    # as modules
    if named.isdisjoint(cols.names):
        got: list[int | None] = [None] * len(tensors)
        want = cast("set[str]", named)  # None discarded
    else:
        del named  # not held beside the position map (peak memory)
        got = list(map(cols.index().get, tensors))  # type: ignore[arg-type]
        left = set(compress(tensors, map(is_, got, repeat(None))))
        left.discard(None)
        want = cast("set[str]", left)
    if not want:
        return got
    first = _first_under(cols.names, want)
    if not first:
        return got
    return [first.get(t) if g is None and t is not None else g for t, g in zip(tensors, got)]


_RPARTITION, _LAST = methodcaller("rpartition", "."), itemgetter(2)
_MAX_PROBES = 8  # _first_under's substring passes before the split
_MAX_DEPTHS = 4  # _first_under's passes, one a depth, before it sorts instead
_DOTS = methodcaller("count", ".")


def _first_under(names: Sequence[str], want: set[str], chunk: int = 4096) -> dict[str, int]:
    """For each of ``want`` that some name starts with followed by a dot,
    the position of the first such name.  ``name.startswith(t + ".")``
    exactly when ``t`` is the name's first ``t.count(".") + 1`` components
    and the name has more: C-level passes over the names per distinct
    depth of ``want`` (a module name, a tensor name: one or two), a chunk
    of ``chunk`` names at a time (the split of 400,000 names held at once
    was tens of megabytes)."""
    first: dict[str, int] = {}
    # only a name holding some wanted name's last component and a dot can
    # start with that name and a dot: one substring test a name (C-level)
    # first, so that names nothing wanted can head are not split (a GPTQ
    # model's refusals name ``mod.weight``, which heads no stored name)
    # (a list comprehension: ``map(methodcaller("__contains__", p), ...)``
    # took three times as long).  Past a few probes a pass each would cost
    # more than the split it saves: every name is kept
    probes = {last + "." for last in set(map(_LAST, map(_RPARTITION, want)))}
    if len(probes) <= _MAX_PROBES:
        keep: list[bool] = []
        for p in probes:
            hit = [p in n for n in names]
            keep = hit if not keep else list(map(or_, keep, hit))
        if not any(keep):
            return first
        pos = list(compress(range(len(names)), keep))
        names = list(compress(names, keep))
    else:
        pos = list(range(len(names)))
    depths = set(map(_DOTS, want))
    if len(depths) > _MAX_DEPTHS:
        return _first_in_order(names, pos, want)
    for d in depths:
        split = methodcaller("split", ".", d + 1)
        head = itemgetter(slice(0, d + 1))
        for lo in range(0, len(names), chunk):
            parts = list(map(split, names[lo:lo + chunk]))
            deeper = list(map((d + 2).__eq__, map(len, parts)))  # a component after the head
            heads = list(map(".".join, map(head, compress(parts, deeper))))
            at = compress(pos[lo:lo + len(parts)], deeper)
            # a wanted head has d dots, so it is wanted at this depth only
            for h, g in compress(zip(heads, at), map(want.__contains__, heads)):
                first.setdefault(h, g)
    return first


_BLOCK = 256  # _first_in_order's range minima: positions per block


def _first_in_order(names: Sequence[str], pos: Sequence[int], want: set[str]) -> dict[str, int]:
    """``_first_under`` where the wanted names have many depths: a pass per
    depth would split every name once a depth, which hostile names of a
    thousand components each made minutes (each module one dot deeper than
    the last, each with an issue).  Here the names are sorted once; the
    names that start with ``t + "."`` are one run of them, from the first
    not below ``t + "."`` to the first not below ``t + "/"`` (the character
    after the dot), and the first position in that run is a range minimum
    over blocks of ``_BLOCK`` positions.  Time is the sort plus two binary
    searches and at most about 2 x _BLOCK + n / _BLOCK comparisons a wanted
    name; memory is a few lists as long as ``names``."""
    order = sorted(range(len(names)), key=names.__getitem__)
    keys = list(map(names.__getitem__, order))
    at = list(map(pos.__getitem__, order))
    del order
    mins = [min(at[i:i + _BLOCK]) for i in range(0, len(at), _BLOCK)]
    first: dict[str, int] = {}
    for t in want:
        lo = bisect_left(keys, t + ".")
        hi = bisect_left(keys, t + "/", lo)
        if lo == hi:
            continue
        inner_lo, inner_hi = -(-lo // _BLOCK), hi // _BLOCK  # the whole blocks inside
        if inner_lo >= inner_hi:
            first[t] = min(at[lo:hi])
            continue
        first[t] = min((min(mins[inner_lo:inner_hi]), *at[lo:inner_lo * _BLOCK],
                        *at[inner_hi * _BLOCK:hi]))
    return first



def _gguf_models(arts: Sequence[Artifact]) -> dict[str, list[Artifact]]:
    out: dict[str, list[Artifact]] = defaultdict(list)
    for a in arts:
        m = re.match(_GGUF_SPLIT, os.path.basename(a.path))
        key = _model_key(a, m["base"]) if m is not None else a.path
        out[key].append(a)
    return out


def _split_file_type(members: list[Artifact]) -> list[Artifact]:
    """``members`` (a GGUF split's parts) with shard 1's general.file_type
    recorded on every part (llama-gguf-split writes it to shard 1 only).
    Whether the set is whole is a rule's question (rules/support.split_issues)."""
    parsed = [a for a in members if a.parsed]
    numbers: dict[int, list[Artifact]] = defaultdict(list)
    for a in parsed:
        no = a.metadata.get("split.no")
        if isinstance(no, int):
            numbers[no].append(a)
    first = numbers.get(0)
    ft = first[0].metadata.get("file_type_name") if first else None
    if not isinstance(ft, str):
        return members
    shown = first[0].path if first else None
    return [replace(a, metadata={**a.metadata, "file_type_name": ft, "file_type_from": shown})
            if a.parsed and "file_type_name" not in a.metadata else a for a in members]
