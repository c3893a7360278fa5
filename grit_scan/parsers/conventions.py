"""Descriptors inferred from the conventions people ship in safetensors.

Research: checkpoint-conventions-and-peers.md, Part 2.  Tensors are grouped
by module (the name minus a known suffix); each module's set of tensors and
dtypes identifies a convention.  Expressible conventions get a descriptor
and their planes; conventions GRIT v1 cannot express are reported with the
§0.3 clause (or the section) that excludes them, never ignored.
"""

from __future__ import annotations

import functools
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from math import prod
from operator import add, getitem, mul, ne, sub
from typing import overload

from ..artifact import (
    NO_LAYOUTS,
    Artifact,
    IssueCode,
    PlaneRef,
    PlaneSeq,
    QList,
    QTensor,
    Source,
    StoredTensor,
    TensorTable,
)
from ..codec import descriptor as desc_mod
from ..codec.check import expected_plane_sizes
from ..codec.errors import GritError
from ..codec.grade import GRADE_MXFP4, GRADE_NVF4, Grade, parse_grade
from ..names import (
    DOT_SUFFIX_ENDS,
    ONE_COMPONENT,
    TAIL_SUFFIXES,
    Declared,
    split_name,
    split_names,
)
from .safetensors_reader import UNQUANTISED_FLOATS

# The compiled helper holds the FNV digest loops only: the C paths below are
# never taken, and this module's Python steps run.
_compiled = None

FP8 = {"F8_E4M3", "F8_E5M2"}
# safetensors dtype of a scale tensor -> GRIT format token (§2.6)
SCALE_TOKENS = {"F32": "binary32", "F16": "binary16", "BF16": "bfloat16"}


class Where:
    """Where each stored tensor's bytes are: its name, offset, bytes
    available and file, by position.  What ``PlanPlanes`` keeps of the
    columns, so that the rest of them (dtypes, shapes, byte counts) is freed
    once conventions are inferred (issue 15: memory per stored tensor)."""

    __slots__ = ("names", "offsets", "available", "_files", "_run")

    def __init__(self, names: list[str], offsets: Sequence[int], available: Sequence[int],
                 files: Sequence[str | None], starts: Sequence[int]) -> None:
        self.names, self.offsets, self.available = names, offsets, available
        # the file of each run of columns from the position in ``starts``
        # (None: the artifact's own): a model's shards one after the other.
        # Each position's run is kept (two bytes a tensor): a plane per part
        # of every module asks (issue 15)
        self._files = list(files)
        self._run: Sequence[int] | None = None
        if len(self._files) > 1:
            ends = list(starts[1:]) + [len(names)]
            code = "H" if len(ends) <= 0xFFFF else "q"
            run = array(code)
            for f, n in enumerate(map(sub, ends, starts)):
                run.extend(array(code, (f,)) * n)  # a run at C speed
            self._run = run

    def file_numbers(self) -> tuple[Sequence[int] | None, list[str | None]]:
        """(the number of the file holding each position, or None when
        there is one file; the files by number)."""
        return self._run, self._files

    def file(self, g: int) -> str | None:
        """The file holding the tensor at position ``g``."""
        return self._files[0] if self._run is None else self._files[self._run[g]]


class Columns:
    """The stored tensors conventions are inferred over (one file, or a
    model's shards one after the other), as columns.  A module's records are
    built when the module is looked at, never all at once: a 500-shard model
    would otherwise hold a record, its ints and two dict entries per stored
    tensor at the scan's peak (issue 15: memory per stored tensor)."""

    __slots__ = ("names", "dtypes", "shapes", "offsets", "nbytes", "available", "where",
                 "file", "_index")

    def __init__(self, names: list[str], dtypes: Sequence[str],
                 shapes: Sequence[tuple[int, ...]], offsets: Sequence[int],
                 nbytes: Sequence[int], available: Sequence[int],
                 files: Sequence[str | None] = (None,), starts: Sequence[int] = (0,)) -> None:
        self.names, self.dtypes, self.shapes = names, dtypes, shapes
        self.offsets, self.nbytes, self.available = offsets, nbytes, available
        self.where = Where(names, offsets, available, files, starts)
        self.file: Callable[[int], str | None] = self.where.file  # the file holding position g
        self._index: dict[str, int] | None = None

    @classmethod
    def of(cls, tensors: Sequence[StoredTensor] | Mapping[str, StoredTensor]) -> Columns:
        """The columns of one file's tensors, in their order (a TensorTable's
        are taken as they are)."""
        if isinstance(tensors, TensorTable):
            return cls(tensors.names, tensors.dtypes, tensors.shapes(), tensors.offsets,
                       tensors.nbytes, tensors.available)
        rows = list(tensors.values()) if isinstance(tensors, Mapping) else list(tensors)
        return cls([t.name for t in rows], [t.dtype for t in rows], [t.shape for t in rows],
                   [t.offset for t in rows], [t.nbytes for t in rows],
                   [t.available for t in rows])

    def __len__(self) -> int:
        return len(self.names)

    def row(self, g: int) -> StoredTensor:
        return StoredTensor(self.names[g], self.dtypes[g], self.shapes[g], self.offsets[g],
                            self.nbytes[g], self.available[g])

    def index(self) -> dict[str, int]:
        """name -> position, built on first use (few scans need it)."""
        if self._index is None:
            self._index = dict(zip(self.names, range(len(self.names))))
        return self._index


class PlanPlanes(PlaneSeq):
    """The planes of a tensor a plan was replayed on (``_Plan.apply``) whose
    parts are listed one after the other from position ``g0``: the plan's
    (part, broadcast) per plane, read from the columns when asked.  Four
    slots and one int per tensor, where a list and a PlaneRef per plane took
    about 300 bytes (issue 15: memory per stored tensor)."""

    __slots__ = ("cols", "form", "g0", "home")

    def __init__(self, cols: Where, form: tuple[tuple[int, int] | None, ...],
                 g0: int) -> None:
        self.cols, self.form, self.g0 = cols, form, g0
        self.home: str | None = None

    def __len__(self) -> int:
        return len(self.form)

    @overload
    def __getitem__(self, i: int) -> PlaneRef | None: ...

    @overload
    def __getitem__(self, i: slice) -> list[PlaneRef | None]: ...

    def __getitem__(self, i: int | slice) -> PlaneRef | None | list[PlaneRef | None]:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self.form))[i]]
        p = self.form[i]
        if p is None:
            return None
        c, g = self.cols, self.g0 + p[0]
        file = c.file(g)
        return PlaneRef(c.names[g], c.offsets[g], c.available[g], p[1],
                        None if file == self.home else file)

    def data_file(self) -> tuple[bool, str | None]:
        p = self.form[0] if self.form else None
        if p is None or not self.cols.names[self.g0 + p[0]]:
            return False, None
        file = self.cols.file(self.g0 + p[0])
        return True, None if file == self.home else file

    def plane_bytes(self) -> list[int]:
        av, g0 = self.cols.available, self.g0
        return [0 if p is None else av[g0 + p[0]] * p[1] for p in self.form]

    def localise(self, home: str) -> None:
        self.home = home


def used_mask(cols: Columns, names: Iterable[str]) -> bytearray:
    """``infer``'s ``used`` argument: 1 at the position of each of ``names``
    (the tensors a GRIT header already describes)."""
    mask = bytearray(len(cols))
    names = set(names)
    if names:
        at = cols.index()
        for n in names:
            if n in at:
                mask[at[n]] = 1
    return mask


@dataclass
class Ctx:
    """What a convention is given for one module of a model."""

    art: Artifact
    cols: Columns
    declared: Declared | None
    role: Callable[[str], str]
    out: QList
    used: bytearray  # 1 at the position of every tensor a convention consumed
    # the module being looked at: its parts' records and positions, by name
    tensors: dict[str, StoredTensor] = field(default_factory=dict)
    at: dict[str, int] = field(default_factory=dict)
    # one int object per distinct byte length among the planes referenced
    # (a model repeats a handful): memory per quantised tensor, issue 15
    lengths: dict[int, int] = field(default_factory=dict)
    # the PlanReplays of each plan replayed, by the plan's id
    makers: dict[int, PlanReplays] = field(default_factory=dict)

    def look_at(self, sufs: tuple[str, ...], gs: tuple[int, ...]) -> dict[str, str]:
        """Make the module whose parts are ``sufs`` at positions ``gs`` the
        one looked at; returns its parts by name (suffix -> tensor name)."""
        names = list(map(self.cols.names.__getitem__, gs))
        self.at = dict(zip(names, gs))
        self.tensors = dict(zip(names, map(self.cols.row, gs)))
        return dict(zip(sufs, names))

    def ref(self, name: str, broadcast: int = 1) -> PlaneRef:
        return self.ref_at(self.at[name], broadcast)

    def ref_at(self, g: int, broadcast: int = 1) -> PlaneRef:
        c = self.cols
        n = c.available[g]
        return PlaneRef(c.names[g], c.offsets[g], self.lengths.setdefault(n, n), broadcast,
                        c.file(g))

    def add(self, q: QTensor, *names: str) -> None:
        q.declared = self.declared
        self.out.append(q)
        for n in names:
            if n:
                self.used[self.at[n]] = 1


UNUSED = bytes.maketrans(b"\x00\x01", b"\x01\x00")  # a used mask -> its unused mask


def infer(art: Artifact, cols: Columns, used: bytearray, declared: Declared | None,
          role: Callable[[str], str]) -> QList:
    """QTensors for every recognised convention; marks consumed tensors in
    ``used`` (one byte per column position, 1 for the tensors a GRIT header
    already describes) and counts the unquantised remainder on ``art``.
    ``cols`` may be a model's shards one after the other (parsers/models.py):
    a module may keep its weight and scales in different shards."""
    if not any(used):
        counts = Counter(cols.dtypes)
        if set(counts) <= UNQUANTISED_FLOATS:
            # nothing here can be quantised: no convention uses only float dtypes
            for dt, n in counts.items():
                art.unquantized[dt] = art.unquantized.get(dt, 0) + n
            return QList()
        at: Iterable[int] = range(len(cols))
        names: Sequence[str] = cols.names
    else:
        unused = used.translate(UNUSED)
        at, names = compress(range(len(cols)), unused), list(compress(cols.names, unused))
    modules = _group(names, at)
    ctx = Ctx(art, cols, declared, role, QList(), used)
    # the signature of a module: its parts' suffixes, and their (dtype, shape)
    # pairs, each as the number of its first sight, in the parts' order (a
    # module listing them in another order is another signature)
    sigs = array("q")
    sights = None if _compiled is None else getattr(_compiled, "first_sights", None)
    got = (None if sights is None or not isinstance(cols.dtypes, list)
           or not isinstance(cols.shapes, list) else sights(cols.dtypes, cols.shapes))
    if got is not None:  # one C pass, as below
        sigs.frombytes(got)
    else:
        seen: dict[tuple[str, tuple[int, ...]], int] = {}
        sigs.extend(map(seen.setdefault, zip(cols.dtypes, cols.shapes), count()))
        del seen
    sig_at = sigs.__getitem__
    plans: dict[tuple[tuple[str | int, ...], tuple[int, ...]], _Plan | None] = {}
    # a signature whose plan is replayed by its PlanReplays: (that Replays'
    # index in ctx.out, the parts it consumes); such a module costs two
    # array entries, added here (issue 15: 200,000 modules)
    fast: dict[tuple[tuple[str | int, ...], tuple[int, ...]], tuple[int, tuple[int, ...]]] = {}
    kinds, vals = ctx.out.column_arrays()
    add_kind, add_val = kinds.append, vals.append
    # Modules are taken out as they are done (the names list is consumed from
    # its end): what a module's entry held is free for its QTensor, and the
    # whole map is never alive beside every QTensor (issue 15: peak memory)
    # (as a list: a dict's table never shrinks as entries are taken out)
    order = sorted(modules.items(), reverse=True)
    del modules
    replay_c = None if _compiled is None else getattr(_compiled, "replay_modules", None)
    while order:
        if replay_c is not None and fast:
            # the modules of replayed plans, in one C pass (the loop below
            # does the same for them when the helper is missing)
            k_bytes, v_bytes = replay_c(order, sigs, fast, used)
            kinds.frombytes(k_bytes)
            vals.frombytes(v_bytes)
            if not order:
                break
        mod, flat = order.pop()
        gs: tuple[int, ...] = flat[1::2]  # type: ignore[assignment]
        key = (flat[0::2], tuple(map(sig_at, gs)))
        hit = fast.get(key)
        g0 = gs[0]
        if hit is not None and gs[-1] - g0 == len(gs) - 1:
            add_kind(hit[0])
            add_val(g0)
            for k in hit[1]:
                used[g0 + k] = 1
            continue
        plan = plans.get(key, _UNSEEN)
        if plan is None:
            _module(ctx, mod, ctx.look_at(key[0], gs))  # type: ignore[arg-type]
            continue
        if plan is _UNSEEN:
            n_out, n_issues = len(ctx.out), len(art.issues)
            _module(ctx, mod, ctx.look_at(key[0], gs))  # type: ignore[arg-type]
            plan = plans[key] = _learn(ctx, mod, gs, n_out, n_issues)
            if plan is None:
                continue
            # the plan gives this module's QTensor too (_learn checked it):
            # kept as the plan's, like the modules after it
            ctx.out.pop()
        plan.apply(ctx, mod, gs)
        maker = ctx.makers.get(id(plan))
        if maker is not None:
            fast[key] = (ctx.out.maker_index(maker), plan.used)
    # what no convention consumed, in the order the tensors are listed
    unused = used.translate(UNUSED)
    counts = Counter(compress(cols.dtypes, unused))
    for dt, n in counts.items():
        art.unquantized[dt] = art.unquantized.get(dt, 0) + n
    if not FP8.isdisjoint(counts):
        for g in compress(range(len(cols)), unused):
            if cols.dtypes[g] in FP8:
                art.issue(IssueCode.NOTE, f"{cols.dtypes[g]} tensor {cols.names[g]!r} has no "
                          "scale tensor beside it; its quantisation is not described",
                          tensor=cols.names[g])
    return ctx.out


def _group(names: Sequence[str], at: Iterable[int]) -> dict[str, tuple[str | int, ...]]:
    """Module -> (suffix, position, suffix, position, ...) in listing order,
    ``at`` giving each name's position.  A flat tuple is a third of a dict's
    size, and a 500-shard model holds one per module at the scan's peak
    (issue 15: memory per stored tensor).  The compiled helper does the same
    in one C pass when the positions are 0, 1, 2, ... (tests/test_names_split.py
    holds the two to each other)."""
    if _compiled is not None and isinstance(at, range) and isinstance(names, list) and (
            at == range(len(names))):
        grouped: dict[str, tuple[str | int, ...]] = _compiled.group_modules(
            names, ONE_COMPONENT, DOT_SUFFIX_ENDS, TAIL_SUFFIXES, split_name)
        return grouped
    modules: dict[str, tuple[str | int, ...]] = {}
    for g, (mod, suf) in zip(at, split_names(names)):
        got = modules.get(mod)
        modules[mod] = (suf, g) if got is None else got + (suf, g)
    return modules


@dataclass(frozen=True)
class _Plan:
    """What ``_module`` did for one module, with the module's names taken
    out, to do again for every module of the same signature (the suffix,
    dtype and shape of each part) in one ``infer`` call (issue 15: a model
    repeats a handful of signatures for every layer).

    A convention's result depends on its parts' suffixes, dtypes and shapes,
    the declared quantisation (fixed within one call) and, through names
    only, on the module's role and the parts' names and files.  A plan is
    learned only from a module that gave exactly one QTensor and no issue,
    and only when the names can be put back to give that same QTensor
    (``_learn`` checks it field by field); any other signature goes through
    ``_module`` every time."""

    # parts are named by their place in the module's listing, which the
    # signature fixes along with each part's suffix
    part: int  # the part whose name the QTensor takes; -1: module name + ``tail``
    tail: str
    planes: tuple[tuple[int, int] | None, ...] | None  # (part, broadcast) per plane
    used: tuple[int, ...]  # the parts the convention consumed
    shape: tuple[int, ...]
    source: Source
    desc: desc_mod.Descriptor | None
    grade: Grade | None
    convention: str | None
    reason: str | None
    notes: tuple[str, ...]

    def apply(self, ctx: Ctx, mod: str, gs: tuple[int, ...]) -> None:
        if gs[-1] - gs[0] == len(gs) - 1:
            # the parts one after the other (a header lists a module's
            # tensors together): part k is at gs[0] + k, and the QTensor is
            # kept as gs[0], made when asked for (artifact.QList)
            maker = ctx.makers.get(id(self))
            if maker is None:
                maker = ctx.makers[id(self)] = PlanReplays(
                    self, ctx.cols.where, ctx.role, ctx.declared,
                    len(ctx.cols.names[gs[0]]) - len(mod))
            ctx.out.replay(maker, gs[0])
        else:
            q = QTensor(ctx.cols.names[gs[self.part]] if self.part >= 0 else mod + self.tail,
                        ctx.role(mod), self.shape, self.source, self.desc, self.grade,
                        self.convention, self.reason, notes=self.notes, declared=ctx.declared)
            if self.planes is not None:
                ref = ctx.ref_at
                q.planes = [None if p is None else ref(gs[p[0]], p[1]) for p in self.planes]
            ctx.out.append(q)
        for k in self.used:
            ctx.used[gs[k]] = 1


class PlanReplays:
    """The QTensors one ``_Plan`` is replayed into, each made from the
    position of its module's first part (artifact.Replays): a module is two
    array entries until something asks for its QTensor (issue 15: time and
    memory per quantised tensor).  ``cut`` is the length of the first
    part's suffix, which the plan's signature fixes: the module's name is
    that part's name without it."""

    __slots__ = ("plan", "where", "role", "declared", "cut")

    def __init__(self, plan: _Plan, where: Where, role: Callable[[str], str],
                 declared: Declared | None, cut: int) -> None:
        self.plan, self.where, self.role, self.declared, self.cut = (plan, where, role,
                                                                     declared, cut)

    def _module(self, g: int) -> str:
        name = self.where.names[g]
        return name[:len(name) - self.cut]

    def make(self, g: int, home: str | None, role: str | None = None) -> QTensor:
        p = self.plan
        mod = self._module(g)
        q = QTensor(self.where.names[g + p.part] if p.part >= 0 else mod + p.tail,
                    self.role(mod) if role is None else role, p.shape, p.source, p.desc,
                    p.grade, p.convention, p.reason, notes=p.notes, declared=self.declared)
        if p.planes is not None:
            planes = PlanPlanes(self.where, p.planes, g)
            planes.home = home
            q.planes = planes
        return q

    def _modules(self, gs: Sequence[int]) -> Iterable[str]:
        names: Iterable[str] = map(self.where.names.__getitem__, gs)
        return map(getitem, names, repeat(slice(None, -self.cut))) if self.cut else names

    def names(self, gs: Sequence[int]) -> Iterable[str]:
        p = self.plan
        if p.part >= 0:
            return map(self.where.names.__getitem__, map(add, gs, repeat(p.part)))
        return map(add, self._modules(gs), repeat(p.tail))

    def roles(self, gs: Sequence[int]) -> Iterable[str]:
        many = getattr(self.role, "many", None)  # roles.RoleMap: many at once
        if many is not None:
            got: list[str] = many(list(self._modules(gs)))
            return got
        return map(self.role, self._modules(gs))

    def data_part(self) -> int | None:
        form = self.plan.planes
        p = form[0] if form else None
        return None if p is None else p[0]

    def data_position(self, g: int) -> int | None:
        p = self.data_part()
        if p is None or not self.where.names[g + p]:
            return None
        return g + p

    def size_mismatches(self, gs: Sequence[int], sizes: Sequence[int]) -> Iterable[int]:
        form = self.plan.planes
        every = range(len(gs))
        if form is None or len(form) != len(sizes):
            return every
        av = self.where.available
        bad: set[int] = set()
        for p, want in zip(form, sizes):
            if p is None:
                if want != 0:
                    return every
                continue
            got: Iterable[int] = map(av.__getitem__, map(add, gs, repeat(p[0])))
            if p[1] != 1:
                got = map(mul, got, repeat(p[1]))
            bad.update(compress(every, map(ne, got, repeat(want))))
        return sorted(bad)


_UNSEEN = _Plan(-1, "", None, (), (), Source.NONE, None, None, None, None, ())


def _learn(ctx: Ctx, mod: str, gs: tuple[int, ...], n_out: int,
           n_issues: int) -> _Plan | None:
    """The plan of what ``_module`` just did for ``mod`` (whose parts are at
    positions ``gs``), or None."""
    if len(ctx.out) != n_out + 1 or len(ctx.art.issues) != n_issues:
        return None
    q = ctx.out[-1]
    names = ctx.cols.names
    by_name = {names[g]: k for k, g in enumerate(gs)}
    part, tail = by_name.get(q.name, -1), ""
    if part < 0:
        if not q.name.startswith(mod):
            return None
        tail = q.name[len(mod):]
    planes: list[tuple[int, int] | None] | None = None
    if q.planes is not None:
        planes = []
        for p in q.planes:
            k = by_name.get(p.tensor or "") if p is not None else None
            if p is not None and k is None:
                return None
            planes.append(None if p is None or k is None else (k, p.broadcast))
    if any(mod in note for note in q.notes):
        return None  # a note naming the module would name the wrong one
    used = tuple(k for k, g in enumerate(gs) if ctx.used[g])
    plan = _Plan(part, tail, tuple(planes) if planes is not None else None, used, q.shape,
                 q.source, q.desc, q.grade, q.convention, q.reason, tuple(q.notes))
    # the same QTensor again from the plan, field by field, else no plan
    probe = Ctx(ctx.art, ctx.cols, ctx.declared, ctx.role, QList(), bytearray(len(ctx.used)))
    plan.apply(probe, mod, gs)
    again = probe.out[0]
    if (again != q or tuple(k for k, g in enumerate(gs) if probe.used[g]) != used
            or q.payload is not None or q.expected_digest is not None
            or q.expected_gid is not None or q.layouts is not NO_LAYOUTS):
        return None
    return plan


def _dt(ctx: Ctx, name: str | None) -> str | None:
    return ctx.tensors[name].dtype if name else None


_BNB_PARTS = frozenset((".weight.quant_map", ".weight.absmax",
                        ".weight.quant_state.bitsandbytes__nf4",
                        ".weight.quant_state.bitsandbytes__fp4"))


def _module(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    g = parts.get
    blocks = g("_blocks") or g(".blocks")
    scales_u8 = g("_scales") or (g(".scales") if _dt(ctx, g(".scales")) == "U8" else None)
    if blocks and scales_u8 and _dt(ctx, blocks) == "U8":
        return _gpt_oss(ctx, mod, blocks, scales_u8)
    if g(".qweight"):
        return _gptq_awq(ctx, mod, parts)
    if not _BNB_PARTS.isdisjoint(parts):
        return _bnb(ctx, mod, parts)
    packed = g(".weight_packed")
    if packed:
        sc = g(".weight_scale")
        if _dt(ctx, packed) == "U8" and sc and _dt(ctx, sc) == "F8_E4M3":
            return _nvfp4(ctx, mod, packed, sc, g(".weight_global_scale"), "compressed-tensors")
        if _dt(ctx, packed) == "U8" and sc and _dt(ctx, sc) == "U8":
            return _ct_mxfp4(ctx, mod, packed, sc)
        return _ct_pack(ctx, mod, parts)
    w = g(".weight")
    wdt = _dt(ctx, w)
    if wdt == "U8" and _dt(ctx, g(".weight_scale")) == "F8_E4M3":
        return _nvfp4(ctx, mod, w or "", g(".weight_scale") or "", g(".weight_scale_2"),
                      "modelopt")
    if w and wdt == "I8":
        scb = g(".SCB")
        if scb:
            return _bnb_int8(ctx, mod, w, scb, parts)
        sc = g(".weight_scale")
        if sc:
            return _ct_int(ctx, mod, w, sc, parts)
    if w and wdt in FP8:
        sinv = g(".weight_scale_inv")
        if sinv:
            return _fp8(ctx, mod, w, sinv, parts, "weight_scale_inv")
        sc = g(".weight_scale")
        if sc and _dt(ctx, sc) == "U8":
            return _ct_mxfp8(ctx, mod, w, sc)
        if sc:
            return _fp8(ctx, mod, w, sc, parts)
    return None  # everything else is left for the unquantised count


def _q(ctx: Ctx, mod: str, name: str, shape: tuple[int, ...], grade: Grade | None,
       convention: str, group_axis: int = -1) -> QTensor:
    d = None
    if grade is not None:
        d = _desc(grade, group_axis % len(shape) if shape else 0)
    return QTensor(name=name, role=ctx.role(mod), shape=shape,
                   source=Source.INFERRED if grade is not None else Source.NONE,
                   desc=d, grade=grade, convention=convention)


_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {}


def _same(shape: tuple[int, ...]) -> tuple[int, ...]:
    """One tuple per distinct shape: a checkpoint repeats a handful of shapes
    for every layer (issue 15: memory per tensor).  Bounded."""
    got = _SHAPES.get(shape)
    if got is not None:
        return got
    if len(_SHAPES) < 4096:
        _SHAPES[shape] = shape
    return shape


@functools.lru_cache(maxsize=1024)
def _desc(grade: Grade, group_axis: int) -> desc_mod.Descriptor:
    # positional and memoised here: lru_cache keys keyword arguments slowly,
    # and a convention asks once per module (issue 15)
    return desc_mod.from_grade(grade, group_axis)


# ---- expressible ---------------------------------------------------------------


def _gpt_oss(ctx: Ctx, mod: str, blocks: str, scales: str) -> None:
    """gpt-oss MXFP4: *_blocks U8 [..., G, 16] and *_scales U8 [..., G]."""
    b, s = ctx.tensors[blocks], ctx.tensors[scales]
    if len(b.shape) < 2 or b.shape[-1] != 16:
        ctx.art.issue(IssueCode.SIZE, f"{blocks}: gpt-oss MXFP4 blocks have a last dimension "
                      f"of 16 bytes (32 E2M1 codes); this one is {list(b.shape)}",
                      tensor=mod, expected=16, actual=b.shape[-1] if b.shape else None)
        return
    shape = _same(tuple(b.shape[:-2]) + (b.shape[-2] * 32,))
    q = _q(ctx, mod, mod, shape, GRADE_MXFP4, "gpt-oss-mxfp4")
    q.planes = [ctx.ref(blocks), ctx.ref(scales), None, None]
    if tuple(b.shape[:-1]) != tuple(s.shape):
        q.notes += (f"blocks.shape[:-1] {list(b.shape[:-1])} != scales.shape "
                       f"{list(s.shape)} (transformers asserts they are equal)",)
    ctx.add(q, blocks, scales)


def _nvfp4(ctx: Ctx, mod: str, data: str, scale: str, glob: str | None, who: str) -> None:
    """NVFP4 (compressed-tensors nvfp4-pack-quantized, ModelOpt): E2M1 pairs
    with the even column in the low nibble, one E4M3 scale per 16, and a
    per-tensor F32 global scale.

    ModelOpt's ``weight_scale_2`` is a multiplier (decode
    ``e2m1 * (weight_scale * weight_scale_2)``): exactly GRADE_NVF4's scale1
    (§10.3).  compressed-tensors' ``weight_global_scale`` is a divisor
    (decode ``x * (weight_scale / weight_global_scale)``, forward.py
    ``_dequantize``); §8.1 only multiplies scale levels, and 1/global is in
    no plane, so those bytes get no grade (never the registered one, which
    would decode them weight_global_scale² times too large)."""
    d = ctx.tensors[data]
    if len(d.shape) != 2:
        ctx.art.issue(IssueCode.SIZE, f"{data}: NVFP4 data is [out, in/2]; got "
                      f"{list(d.shape)}", tensor=mod)
        return
    shape = _same((d.shape[0], d.shape[1] * 2))
    if who == "compressed-tensors" and glob is not None:
        q = _not(ctx, mod, mod + ".weight", shape, "compressed-tensors-nvfp4", "§8.1",
                 "compressed-tensors stores weight_global_scale as a DIVISOR: it decodes "
                 "x·(weight_scale / weight_global_scale) (global = 448·6/amax); GRIT's level-1 "
                 "scale is a MULTIPLIER (§8.1: S = scale1·scale0, outermost first) and "
                 "1/weight_global_scale is in no plane, so these bytes have no exact GRIT v1 "
                 "descriptor (read as GRADE_NVF4 they would decode weight_global_scale² times "
                 "too large; ModelOpt's weight_scale_2 is the multiplier NVF4 means)",
                 [data, scale, glob], would_be=str(GRADE_NVF4))
        q.planes = [ctx.ref(data), ctx.ref(scale), ctx.ref(glob), None]
        return
    # ModelOpt's data tensor is MODULE.weight: its name string serves (memory)
    name = data if who == "modelopt" else mod + ".weight"
    q = _q(ctx, mod, name, shape, GRADE_NVF4, sys.intern(f"{who}-nvfp4"))
    q.planes = [ctx.ref(data), ctx.ref(scale), ctx.ref(glob) if glob else None, None]
    if glob is None:
        q.notes += ("the per-tensor global scale tensor is missing: decode would use a "
                       "wrong scale (transformers#48372)",)
    ctx.add(q, data, scale, glob or "")


def _ct_mxfp4(ctx: Ctx, mod: str, packed: str, scale: str) -> None:
    d = ctx.tensors[packed]
    if len(d.shape) != 2:
        return
    shape = _same((d.shape[0], d.shape[1] * 2))
    q = _q(ctx, mod, mod + ".weight", shape, GRADE_MXFP4, "compressed-tensors-mxfp4")
    q.planes = [ctx.ref(packed), ctx.ref(scale), None, None]
    ctx.add(q, packed, scale)


@dataclass(frozen=True)
class ScaleLayout:
    """How a 2-D weight's scale tensor maps onto §3.7 groups along the last axis."""

    name: str  # per-tensor, per-channel, per-group, block-row
    k0: int
    broadcast: int  # how many times the stored scale bytes repeat to make scale0


@functools.lru_cache(maxsize=1024)
def scale_layout(rows: int, cols: int, sshape: tuple[int, ...]) -> ScaleLayout | None:
    """The scale layouts that are runs along the input axis.  A 2-D block
    scale ``[1, G]`` over a weight of ``rows`` > 1 rows (every row inside one
    block: compressed-tensors FP8_BLOCK k/v_proj, DeepSeek weight_scale_inv) is
    per-group along the row with every row's scales equal, so scale0 is the
    stored ``[1, G]`` repeated ``rows`` times.  Memoised: a pure function of
    shapes that a checkpoint repeats for every layer."""
    n = prod(sshape)
    out: ScaleLayout | None = None
    if len(sshape) == 2 and sshape[0] == 1 and sshape[1] > 1 and rows > 1:
        if cols % sshape[1] == 0:
            out = ScaleLayout("block-row", cols // sshape[1], rows)
    elif n == rows:
        out = ScaleLayout("per-channel", cols, 1)
    elif n == 1:
        out = ScaleLayout("per-tensor", cols, rows)
    elif n > rows and n % rows == 0 and cols % (n // rows) == 0:
        out = ScaleLayout("per-group", cols // (n // rows), 1)
    return out if out is not None and out.k0 <= 65535 else None


def _dt_field(sdt: str) -> str:
    """The decode projection (§4.5 dt) of a convention whose decoder computes in
    the scale's dtype (torch: ``q.to(scale.dtype) * scale``): the binary32
    product projected once into that dtype gives the same bits, because it is
    exact in binary32 (≤ 8 + 8 significant bits) and rounded once (§8.1 step 6)."""
    return "" if sdt == "binary32" else f",dt={sdt}"


def _fp8(ctx: Ctx, mod: str, w: str, sc: str, parts: dict[str, str],
         key: str = "weight_scale") -> None:
    """FP8 with per-tensor, per-channel, per-group or single-block-row scales
    (expressible), or 2-D block scales (not)."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    plan = _fp8_plan(wt.dtype, st.dtype, tuple(wt.shape), tuple(st.shape), key)
    if plan.status == "unknown":
        ctx.art.issue(IssueCode.NOTE, f"{w}: FP8 weight with a {st.dtype} scale of shape "
                      f"{list(st.shape)} is not a layout this scanner knows", tensor=mod)
        return
    if plan.status == "blocks":
        return _fp8_blocks(ctx, mod, w, sc, key)
    lay = plan.layout
    if lay is None or plan.grade is None:
        rows, cols = wt.shape
        ctx.art.issue(IssueCode.NOTE, f"{w}: {prod(st.shape)} scales for a {rows}x{cols} FP8 "
                      "weight match no per-tensor, per-channel, per-group or block layout",
                      tensor=mod)
        return
    if lay.name == "block-row" and not _block_fits(ctx, mod, w, sc, key, lay):
        return
    q = _q(ctx, mod, w, tuple(wt.shape), plan.grade, plan.convention)
    q.planes = [ctx.ref(w), ctx.ref(sc, lay.broadcast), None, None]
    if plan.note is not None:
        q.notes += (plan.note,)
    ctx.add(q, w, sc, *[parts[s] for s in (".input_scale",) if s in parts])


@dataclass(frozen=True)
class _Fp8Plan:
    """What an FP8 weight's dtypes and shapes settle (memoised per signature)."""

    status: str  # "ok", "unknown" (not 2-D or no float scale), "blocks", "no-layout"
    grade: Grade | None = None
    convention: str = ""
    layout: ScaleLayout | None = None
    note: str | None = None


@functools.lru_cache(maxsize=1024)
def _fp8_plan(wdt: str, sdt_name: str, wshape: tuple[int, ...], sshape: tuple[int, ...],
              key: str) -> _Fp8Plan:
    """What an FP8 weight and its scale are, from dtypes and shapes alone:
    memoised, since every layer repeats a handful of them (issue 15)."""
    elem = "e4m3" if wdt == "F8_E4M3" else "e5m2"
    sdt = SCALE_TOKENS.get(sdt_name)
    if len(wshape) != 2 or sdt is None:
        return _Fp8Plan("unknown")
    rows, cols = wshape
    if len(sshape) == 2 and sshape[0] > 1 and sshape[1] > 1 and sshape[0] != rows:
        return _Fp8Plan("blocks")
    lay = scale_layout(rows, cols, sshape)
    if lay is None:
        return _Fp8Plan("no-layout")
    g = parse_grade(f"grit1(e={elem},k0={lay.k0},s0={sdt}{_dt_field(sdt)},esr=ratiomaxabs)")
    conv = "fp8-block" if lay.name == "block-row" else sys.intern(f"fp8-{lay.name}")
    note = None
    if lay.name == "per-tensor":
        note = ("a per-tensor scale is this per-channel grade with every row's scale "
                "equal: GRIT's scale0 plane repeats the one stored scale per row")
    elif lay.name == "block-row":
        note = (f"{key} {list(sshape)}: all {rows} rows lie in one block row, so the "
                f"2-D blocks are runs of {lay.k0} along each row (§3.7) with every row's "
                "scales equal: GRIT's scale0 plane repeats the stored row once per row")
    return _Fp8Plan("ok", g, conv, lay, note)


def _block_fits(ctx: Ctx, mod: str, w: str, sc: str, key: str, lay: ScaleLayout) -> bool:
    """A declared block width that is not the run length means a partial last
    block, which §3.7 (shape[group_axis] a multiple of k0) cannot express."""
    wbs = (ctx.declared or {}).get("weight_block_size")
    bw = wbs[-1] if isinstance(wbs, list) and wbs and isinstance(wbs[-1], int) else None
    if bw is None or bw == lay.k0:
        return True
    cols = ctx.tensors[w].shape[1]
    _not(ctx, mod, w, tuple(ctx.tensors[w].shape), "fp8-block", "§3.7",
         f"block FP8 with blocks {bw} wide over {cols} columns: the last block is partial, and "
         "§3.7 requires the group axis to be a multiple of k0", [w, sc], block_width=bw)
    return False


def _ct_mxfp8(ctx: Ctx, mod: str, w: str, sc: str) -> None:
    """compressed-tensors mxfp8-quantized: F8 elements, one U8 E8M0 scale per
    32 along the row (OCP MX): MX with an FP8 element, expressible (§2.6)."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    if len(wt.shape) != 2 or len(st.shape) != 2 or st.shape[0] != wt.shape[0] or (
            st.shape[1] == 0 or wt.shape[1] % st.shape[1] or wt.shape[1] // st.shape[1] > 65535):
        ctx.art.issue(IssueCode.NOTE, f"{w}: an F8 weight {list(wt.shape)} with a U8 scale "
                      f"{list(st.shape)} is not an MX layout this scanner knows", tensor=mod)
        return
    elem = "e4m3" if wt.dtype == "F8_E4M3" else "e5m2"
    k0 = wt.shape[1] // st.shape[1]
    g = parse_grade(f"grit1(e={elem},k0={k0},s0=e8m0,esr=exp2floormaxabs)")
    q = _q(ctx, mod, w, tuple(wt.shape), g, "compressed-tensors-mxfp8")
    q.planes = [ctx.ref(w), ctx.ref(sc), None, None]
    ctx.add(q, w, sc)


def _ct_int(ctx: Ctx, mod: str, w: str, sc: str, parts: dict[str, str]) -> None:
    """compressed-tensors int-quantized (W8A8, W4A8, W4AFP8): integer values one
    per I8 byte, a float scale per tensor / channel / group, and (asymmetric)
    a weight_zero_point; decode ``(q - zp) * scale`` in the scale's dtype.

    Every width is ``e=s8``: a declared 4-bit scheme stores each value
    sign-extended in its byte, which is exactly that s8 code (the narrower
    ``e=s4,ct=pad8`` would make the descriptor depend on the config, which a
    single-file decode does not read).  Zero points: an I8 plane is ``zp=s8``; a sub-byte zero
    point stored sign-extended is not the zero-extended CT_PAD8 §3.4 requires."""
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    sdt = SCALE_TOKENS.get(st.dtype)
    lay = scale_layout(wt.shape[0], wt.shape[1], tuple(st.shape)) if (
        len(wt.shape) == 2 and sdt is not None) else None
    if lay is None or sdt is None:
        ctx.art.issue(IssueCode.NOTE, f"{w}: an I8 weight {list(wt.shape)} with a {st.dtype} "
                      f"scale {list(st.shape)} is not an int-quantized layout this scanner "
                      "knows", tensor=mod)
        return
    # Always s8: the descriptor must not depend on the config (decode of one file
    # reads none), and every b-bit value sign-extended into an int8 byte is that s8.
    bits = (ctx.declared or {}).get("bits")
    elem, ct = "s8", ""
    zp = parts.get(".weight_zero_point")
    names = [w, sc] + ([zp] if zp else [])
    if zp is not None and (elem != "s8" or ctx.tensors[zp].dtype != "I8"
                           or prod(ctx.tensors[zp].shape) != prod(st.shape)):
        _not(ctx, mod, w, tuple(wt.shape), "compressed-tensors-int", "§3.4",
             f"{bits or 8}-bit asymmetric int-quantized: weight_zero_point "
             f"{ctx.tensors[zp].dtype} {list(ctx.tensors[zp].shape)} holds sign-extended "
             "sub-byte zero points; §3.4 stores sub-byte zero points zero-extended (CT_PAD8)",
             names)
        return
    zpf, esr = (",zp=s8", "affineminmax") if zp else ("", "ratiomaxabs")
    g = parse_grade(f"grit1(e={elem},k0={lay.k0},s0={sdt}{zpf}{ct}{_dt_field(sdt)},esr={esr})")
    q = _q(ctx, mod, w, tuple(wt.shape), g, "compressed-tensors-int")
    q.planes = [ctx.ref(w), ctx.ref(sc, lay.broadcast), None,
                ctx.ref(zp, lay.broadcast) if zp else None]
    if isinstance(bits, int) and bits < 8:
        q.notes += (f"{bits}-bit values stored one per byte, sign-extended: each byte is "
                       "the s8 code of its value",)
    ctx.add(q, *names)


# ---- recognised, not expressible in v1 --------------------------------------------


def _not(ctx: Ctx, mod: str, name: str, shape: tuple[int, ...], convention: str,
         clause: str, reason: str, names: list[str], grade: Grade | None = None,
         group_axis: int = -1, **detail: object) -> QTensor:
    q = _q(ctx, mod, name, shape, grade, convention, group_axis)
    q.source = Source.NONE if grade is None else Source.INFERRED
    q.reason = reason
    q.notes += (reason,)
    ctx.add(q, *names)
    ctx.art.issue(IssueCode.NOT_REPRESENTABLE, f"{name}: {reason}", tensor=name,
                  clause=clause, convention=convention, **detail)
    return q


def _fp8_blocks(ctx: Ctx, mod: str, w: str, sc: str, key: str) -> None:
    wt, st = ctx.tensors[w], ctx.tensors[sc]
    shape = tuple(wt.shape)
    _not(ctx, mod, w, shape, "fp8-block", "§3.7",
         f"DeepSeek-style block FP8: {key} {st.dtype} {list(st.shape)} holds one scale per "
         "2-D tile; GRIT v1 groups are runs along one axis (§3.7, §0.3), so 2-D blocks are "
         "not expressible", [w, sc])


def _bnb(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    kind = "nf4" if ".weight.quant_state.bitsandbytes__nf4" in parts else (
        "fp4" if ".weight.quant_state.bitsandbytes__fp4" in parts else "4-bit")
    w = parts.get(".weight", mod)
    _not(ctx, mod, w, ctx.tensors[w].shape if w in ctx.tensors else (), f"bitsandbytes-{kind}",
         "§0.3(b)", f"bitsandbytes {kind} decodes through a lookup table stored with the tensor "
         "(quant_map): a codebook format, which GRIT v1 has no element class for (§0.3(b))",
         list(parts.values()))


def _bnb_int8(ctx: Ctx, mod: str, w: str, scb: str, parts: dict[str, str]) -> None:
    """bitsandbytes LLM.int8: weight I8 and SCB, the per-row absmax."""
    _not(ctx, mod, w, tuple(ctx.tensors[w].shape), "bitsandbytes-int8", "§8.1",
         "bitsandbytes LLM.int8 stores the per-row absmax (SCB), not a scale: it decodes "
         "(q·SCB)·(1/127) (int8_vectorwise_dequant). The 1/127 factor is in no plane, and "
         "§8.1 multiplies the scale levels together before the element, so even a second "
         "level holding 1/127 would round differently; GRIT v1 cannot express these bytes "
         "exactly", list(parts.values()))


def _ct_pack(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    packed = parts[".weight_packed"]
    names = list(parts.values())
    _not(ctx, mod, packed, ctx.tensors[packed].shape, "compressed-tensors-pack-quantized",
         "§2.4", "compressed-tensors pack-quantized stores value + 2^(b-1) in int32 words "
         "(offset-binary codes); no v1 element format decodes a biased integer without a "
         "zero-point plane", names)


def _packed_bits(ctx: Ctx, parts: dict[str, str], w: tuple[int, ...], s: tuple[int, ...]
                 ) -> tuple[str, int, str] | None:
    """(convention, bits, evidence) from the shapes alone, where they settle it.

    GPTQ qweight is [in·b/32, out] and scales [groups, out]: b follows from
    ``in``, which g_idx [in] states, or from qzeros [groups, out·b/32].  AWQ
    GEMM qweight is [in, out·b/32] with scales [groups, out]: b follows directly."""
    t = ctx.tensors
    if w[1] == s[1]:
        gi, qz = parts.get(".g_idx"), parts.get(".qzeros")
        if gi and len(t[gi].shape) == 1 and t[gi].shape[0] and (32 * w[0]) % t[gi].shape[0] == 0:
            return "gptq", 32 * w[0] // t[gi].shape[0], "qweight rows against g_idx length"
        if qz and len(t[qz].shape) == 2 and s[1] and (32 * t[qz].shape[1]) % s[1] == 0:
            return "gptq", 32 * t[qz].shape[1] // s[1], "qzeros columns against scales columns"
        return "gptq", 0, ""
    if w[1] and s[1] % w[1] == 0 and 32 % (s[1] // w[1]) == 0:
        return "awq", 32 // (s[1] // w[1]), "qweight columns against scales columns"
    return None


def _gptq_awq(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    """GPTQ and AWQ: recognised, reported as not byte-representable (§0.3(d))
    with the predicted and present zero-point bytes; act-order (§0.3(c)).

    The bit width comes from the bytes where the shapes settle it (so a wrong
    declared ``bits`` is a declared_mismatch on bits, not a group-size story),
    else from the declaration."""
    t = ctx.tensors
    qw, qz, sc = parts.get(".qweight"), parts.get(".qzeros"), parts.get(".scales")
    names = [n for n in parts.values()]
    if not (qw and sc):
        ctx.art.issue(IssueCode.NOTE, f"{mod}: qweight without scales", tensor=mod)
        return
    w, s = t[qw], t[sc]
    decl = ctx.declared or {}
    if len(w.shape) != 2 or len(s.shape) != 2:
        return
    found = _packed_bits(ctx, parts, tuple(w.shape), tuple(s.shape))
    if found is None:
        ctx.art.issue(IssueCode.SIZE, f"{mod}: qweight {list(w.shape)} and scales "
                      f"{list(s.shape)} fit neither GPTQ nor AWQ packing", tensor=mod)
        return
    convention, bits, evidence = found
    if not bits:
        db = decl.get("bits")
        bits, evidence = (db, "declared") if isinstance(db, int) and db in (2, 3, 4, 8) else (
            4, "assumed (no g_idx, qzeros or declared bits)")
    per_word = 32 // bits if bits in (2, 4, 8) else 0
    if convention == "gptq":
        k = w.shape[0] * 32 // bits if (w.shape[0] * 32) % bits == 0 else 0
        n = w.shape[1]
    else:
        k, n = w.shape[0], s.shape[1]
    groups = s.shape[0]
    group = k // groups if groups and k and k % groups == 0 else None
    shape = (k, n)  # as stored: [in, out]; groups run along in (axis 0)
    grade = None
    if group is not None and 1 <= group <= 65535 and per_word:
        zpc = ",zpc=minus1" if convention == "gptq" and decl.get("format") != "gptq_v2" else ""
        grade = parse_grade(f"grit1(e=u{bits},k0={group},s0=binary16,zp=u{bits}{zpc},"
                            "esr=affineminmax)")
    detail: dict[str, object] = {"bits": bits, "bits_from": evidence, "group_size": group,
                                 "in": k, "out": n}
    predicted = present = None
    if grade is not None and qz:
        d = desc_mod.from_grade(grade, group_axis=0)
        try:
            sizes = expected_plane_sizes(d, shape)
            predicted, present = sizes.aux, t[qz].nbytes
            detail.update(predicted_aux=predicted, present_aux=present,
                          data_ok=sizes.data == w.nbytes, scale_ok=sizes.scale0 == s.nbytes)
        except GritError:
            pass
    if bits == 8 and grade is not None:
        # 8-bit zero points are one per byte already: §0.3(d) does not apply.
        _gptq8(ctx, mod, shape, convention, grade, predicted, names, detail)
        q = ctx.out[-1]
    else:
        reason = (f"{convention.upper()} packs its {bits}-bit zero points densely "
                  f"({32 // bits if bits else '?'} per int32 word); GRIT v1 stores sub-byte "
                  "zero points one per byte (§3.4), so the checkpoint is not byte-representable "
                  "(§0.3(d))")
        if predicted is not None:
            reason += (f": GRIT predicts {predicted:,} zero-point bytes, the file holds "
                       f"{present:,}")
        q = _not(ctx, mod, mod + ".weight", shape, convention, "§0.3(d)", reason, names, grade,
                 group_axis=0, **detail)
    q.planes = [ctx.ref(qw), ctx.ref(sc), None, ctx.ref(qz) if qz else None]
    if convention == "awq":
        q.notes += ("AWQ's [0,2,4,6,1,3,5,7] nibble interleave is the placement "
                       "Perm([0,2,4,6,1,3,5,7]) (§3.5); the zero points are what v1 cannot hold",)
    if convention == "gptq" and decl.get("desc_act"):
        ctx.art.issue(IssueCode.NOT_REPRESENTABLE,
                      f"{mod}.weight: GPTQ act-order (desc_act=true) assigns columns to groups "
                      "through g_idx; §3.7 grouping is contiguous, so it is not expressible "
                      "(§0.3(c))", tensor=mod + ".weight", clause="§0.3(c)", convention="gptq")
    if convention == "gptq":
        q.notes += ("zero points: v1 'gptq' stores z-1 (ZP_MINUS1), 'gptq_v2' stores z",)


def _gptq8(ctx: Ctx, mod: str, shape: tuple[int, int], convention: str, grade: Grade,
           predicted: int | None, names: list[str], detail: dict[str, object]) -> None:
    """8-bit GPTQ/AWQ: the zero-point plane matches §3.4 (one per byte), so no
    spec exclusion applies; what this scanner does not derive is the qweight
    word packing (4 input rows per int32 word) as a placement (§5), so it gives
    no descriptor and says exactly that (a note, not not_representable)."""
    why = (f"8-bit {convention.upper()}: zero points are one per byte as §3.4 stores them "
           f"(GRIT predicts {predicted:,} zero-point bytes and the file holds as many), so "
           "§0.3(d) does not apply; this scanner does not derive the qweight word packing "
           "(4 input rows per int32 word) as a placement (§5), so it infers no descriptor"
           if predicted is not None else
           f"8-bit {convention.upper()}: this scanner does not derive the qweight word packing "
           "(4 input rows per int32 word) as a placement (§5), so it infers no descriptor")
    q = _q(ctx, mod, mod + ".weight", shape, None, convention, group_axis=0)
    q.reason = why
    q.notes += (why,)
    q.notes += (f"would be {grade} with a word-packing placement",)
    ctx.add(q, *names)
    ctx.art.issue(IssueCode.NOTE, f"{mod}.weight: {why}", tensor=mod + ".weight", **detail)
