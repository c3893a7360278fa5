"""The inference engine: a model's stored tensors as columns, grouped into
modules, each module handed to the convention that claims it
(``base.claiming``), and what a convention did for one module replayed on
every module of the same signature (a model repeats a handful of
signatures for every layer)."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, count, repeat
from operator import add, getitem, methodcaller, mul, ne, sub
from typing import Any, overload

from ..artifact import (
    NO_LAYOUTS,
    Inferred,
    IssueLog,
    PlaneRef,
    PlaneSeq,
    QList,
    QListBuilder,
    QTensor,
    Source,
    StoredTensor,
    TensorTable,
)
from ..codec import descriptor as desc_mod
from ..codec.grade import Grade
from ..issues import Issue
from ..issues.notes import UnusedNoScale, UnusedScaleLayout
from ..issues.unsupported_convention import Unclaimed
from ..names import Declared
from .base import Ctx, claiming
from .scales import FP8, UNQUANTISED_FLOATS
from .suffixes import split_columns


class Where:
    """Where each stored tensor's bytes are: its name, offset, bytes
    available and file, by position.  What ``PlanPlanes`` keeps of the
    columns, so that the rest of them (dtypes, shapes, byte counts) is freed
    once conventions are inferred (memory per stored tensor)."""

    __slots__ = ("names", "offsets", "available", "_files", "_run")

    def __init__(self, names: list[str], offsets: Sequence[int], available: Sequence[int],
                 files: Sequence[str | None], starts: Sequence[int]) -> None:
        self.names, self.offsets, self.available = names, offsets, available
        # the file of each run of columns from the position in ``starts``
        # (None: the artifact's own): a model's shards one after the other.
        # Each position's run is kept (two bytes a tensor): a plane per part
        # of every module asks
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
    tensor at the scan's peak (memory per stored tensor)."""

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
    """The planes of a tensor a plan was replayed on (``_Plan.apply``),
    made by its ``PlanReplays`` when asked for: per plane, the distance of
    its part from position ``g0`` and its broadcast, read from the columns
    when asked.  Four slots and one int per tensor, where a list and a
    PlaneRef per plane took about 300 bytes (memory per stored tensor)."""

    __slots__ = ("cols", "form", "g0", "home")

    def __init__(self, cols: Where, form: tuple[tuple[int, int] | None, ...],
                 g0: int, home: str | None = None) -> None:
        self.cols, self.form, self.g0 = cols, form, g0
        # the file whose planes need no file reference (the artifact's own)
        self.home = home

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

    def localised(self, home: str) -> PlanPlanes:
        if home == self.home:
            return self
        return PlanPlanes(self.cols, self.form, self.g0, home)


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



UNUSED = bytes.maketrans(b"\x00\x01", b"\x01\x00")  # a used mask -> its unused mask


def infer(cols: Columns, used: bytearray, declared: Declared | None,
          role: Callable[[str], str]) -> Inferred:
    """QTensors for every recognised convention, the issues found, and the
    count of the unquantised remainder by dtype; marks consumed tensors in
    ``used`` (one byte per column position, 1 for the tensors a GRIT header
    already describes).  ``cols`` may be a model's shards one after the
    other (parsers/models.py): a module may keep its weight and scales in
    different shards."""
    log = IssueLog()
    if not any(used):
        counts = Counter(cols.dtypes)
        if set(counts) <= UNQUANTISED_FLOATS:
            # nothing here can be quantised: no convention uses only float dtypes
            return Inferred(QList(), log.issues, dict(counts))
        at: Iterable[int] = range(len(cols))
        names: Sequence[str] = cols.names
    else:
        unused = used.translate(UNUSED)
        at, names = compress(range(len(cols)), unused), list(compress(cols.names, unused))
    modules = _group(names, at)
    ctx = Ctx(log, cols, declared, role, QListBuilder(), used)
    # the signature of a module: its parts' suffixes, and their (dtype, shape)
    # pairs, each as the number of its first sight, in the parts' order (a
    # module listing them in another order is another signature)
    sigs = array("q")
    seen: dict[tuple[str, tuple[int, ...]], int] = {}
    sigs.extend(map(seen.setdefault, zip(cols.dtypes, cols.shapes), count()))
    del seen
    sig_at = sigs.__getitem__
    plans: dict[tuple[tuple[str | int, ...], tuple[int, ...]], _Plan | None] = {}
    # a signature whose plan is replayed by its PlanReplays: (that Replays'
    # index in ctx.out, the part its tensors are made from, the parts'
    # positions of its modules after the first, one after the other, the
    # places of their issues if the plan has one, the Replays).
    # Such a module costs two array entries and its parts' positions here
    # (and a place among the issues, holding its name): the Replays, the
    # ``used`` marks and the issues are filled from them once the loop is
    # done, a few C-level passes a plan (``_Pending``; 200,000 modules)
    fast: dict[tuple[tuple[str | int, ...], tuple[int, ...]], _Pending] = {}
    issues: list[Any] = log.issues  # an issue's place holds its module's name until then
    kinds, vals = ctx.out.column_arrays()
    add_kind, add_val = kinds.append, vals.append
    # Modules are taken out as they are done (the sorted names are consumed
    # from their end): what a module's entry held is free for its QTensor
    # (peak memory).  The names alone are sorted, not the map's items: a
    # tuple per module beside the whole map was the peak of a scan whose
    # every metadata tensor is a module (about 20 MB at 500 shards of HQQ)
    order = sorted(modules, reverse=True)
    flats = list(map(modules.__getitem__, order))
    del modules
    while order:
        mod, flat = order.pop(), flats.pop()
        gs: tuple[int, ...] = flat[1::2]  # type: ignore[assignment]
        key = (flat[0::2], tuple(map(sig_at, gs)))
        hit = fast.get(key)
        if hit is not None:
            add_kind(hit[0])
            add_val(gs[hit[1]])
            hit[2].extend(gs)
            places = hit[3]
            if places is not None:
                places.append(len(issues))
                issues.append(mod)
            continue
        plan = plans.get(key, _UNSEEN)
        if plan is _NOTHING:
            continue
        if plan is None:
            _module(ctx, mod, ctx.look_at(key[0], gs))  # type: ignore[arg-type]
            continue
        if plan is _UNSEEN:
            n_out, n_issues = len(ctx.out), len(log.issues)
            _module(ctx, mod, ctx.look_at(key[0], gs))  # type: ignore[arg-type]
            plan = plans[key] = _learn(ctx, mod, gs, n_out, n_issues)
            if plan is None or plan is _NOTHING:
                continue
            # the plan gives this module's QTensor (and issue) too (_learn
            # checked it): kept as the plan's, like the modules after it
            ctx.out.pop()
            del log.issues[n_issues:]
        plan.apply(ctx, mod, gs)
        maker = ctx.makers[id(plan)]
        fast[key] = (ctx.out.maker_index(maker), maker.anchor, [],
                     None if plan.issue is None else [], maker)
    for _kind, _anchor, parts, places, maker in fast.values():
        _replay_pending(maker, parts, places, used, issues, cols.names)
    # what no convention consumed, in the order the tensors are listed
    unused = used.translate(UNUSED)
    counts = Counter(compress(cols.dtypes, unused))
    if not FP8.isdisjoint(counts):
        _unused_fp8(log, cols, unused)
    if not set(counts) <= UNQUANTISED_FLOATS or any(
            map(_LOOKS_QUANTISED, compress(cols.names, unused))):
        _unclaimed(log, cols, unused)
    return Inferred(ctx.out.build(), log.issues, dict(counts))


_Pending = tuple[int, int, list[int], "list[int] | None", "PlanReplays"]


def _replay_pending(maker: PlanReplays, parts: list[int], places: list[int] | None,
                    used: bytearray, issues: list[Any], names: Sequence[str]) -> None:
    """The rest of a plan's replay (``maker.plan``) on modules already
    listed (their QTensor as ``maker``'s, from their anchor's position):
    ``parts`` holds their parts' positions, one module after the other, and
    ``places`` where each module's issue goes among ``issues`` (holding the
    module's name until then).  ``_Plan.apply`` gives it one module; ``infer``'s loop, every
    module of the plan but its first, once the loop is done."""
    if not parts:
        return
    plan, k = maker.plan, maker.n
    maker.add_flat(parts)
    for part in plan.used:
        any(map(used.__setitem__, parts[part::k], repeat(1)))
    if places:
        assert plan.issue is not None
        variant, rest = plan.issue
        named: Iterable[str] = (
            map(names.__getitem__, parts[plan.part::k]) if plan.part >= 0
            else map(add, map(issues.__getitem__, places), repeat(plan.tail)))
        # each place's name is read before its issue is put there
        any(map(issues.__setitem__, places, map(variant, named, *map(repeat, rest))))


# names producers give quantised data and scales (GPTQ/AWQ qweight, packed
# compressed-tensors, MLX and GPTQ scales, optimum-quanto's _data, torchao's
# _qdata, HQQ's W_q)
_QUANTISED_ENDS = (".qweight", "_packed", ".scales", "._data", "_qdata", ".W_q")
_LOOKS_QUANTISED = methodcaller("endswith", _QUANTISED_ENDS)
# the dtypes quantised values are stored in
_CODE_DTYPES = frozenset({"I8", "U8", "I16", "U16", "I32", "U32", "F8_E4M3", "F8_E5M2",
                          "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"})


def _unused_fp8(log: IssueLog, cols: Columns, unused: Sequence[int]) -> None:
    """A note for each FP8 tensor no convention consumed: it has no scale
    beside it (no tensor under the same module whose last name component
    says "scale", activation scales not counted), or the scale beside it is
    in a layout no convention described (the convention's own note says
    which)."""
    scales: dict[str, str] = {}
    for name in cols.names:
        stem, _, last = name.rpartition(".")
        low = last.lower()
        if "scale" in low and not low.startswith(("input", "output")):
            scales.setdefault(stem, name)
    for g in compress(range(len(cols)), unused):
        dt, name = cols.dtypes[g], cols.names[g]
        if dt not in FP8:
            continue
        sc = scales.get(name.rpartition(".")[0])
        if sc is None or sc == name:
            log.add(UnusedNoScale(name, dt))
        else:
            log.add(UnusedScaleLayout(name, dt, sc))


def _unclaimed(log: IssueLog, cols: Columns, unused: Sequence[int]) -> None:
    """One UNSUPPORTED issue for the tensors no convention claimed that look
    quantised: a name producers give quantised data or scales, or a tensor of
    rank 2 or more in an integer or FP8 dtype beside a tensor named ``scale``
    (the stem before its last component shared)."""
    left = list(compress(range(len(cols)), unused))
    stems = {cols.names[g].rpartition(".")[0] for g in left
             if "scale" in cols.names[g].rpartition(".")[2].lower()}
    found = [cols.names[g] for g in left
             if _LOOKS_QUANTISED(cols.names[g]) or (
                 cols.dtypes[g] in _CODE_DTYPES and len(cols.shapes[g]) >= 2
                 and cols.names[g].rpartition(".")[0] in stems)]
    if found:
        log.add(Unclaimed(found[0], len(found), tuple(found[:50])))


def _group(names: Sequence[str], at: Iterable[int],
           chunk: int = 4096) -> dict[str, tuple[str | int, ...]]:
    """Module -> (suffix, position, suffix, position, ...) in listing order,
    ``at`` giving each name's position.  A flat tuple is a third of a dict's
    size, and a 500-shard model holds one per module at the scan's peak
    (memory per stored tensor)."""
    modules: dict[str, tuple[str | int, ...]] = {}
    get = modules.get
    at = iter(at)
    # a chunk of names split at a time: a split of every name of a 500-shard
    # model held at once (400,000 heads, last components and tuples) raised
    # the scan's peak by about 30 MB
    for lo in range(0, len(names), chunk):
        mods, sufs = split_columns(names[lo:lo + chunk])
        for mod, suf, g in zip(mods, sufs, at):  # ``at`` last: never read past a chunk
            got = get(mod)
            modules[mod] = (suf, g) if got is None else got + (suf, g)
    return modules


def _module(ctx: Ctx, mod: str, parts: dict[str, str]) -> None:
    """The module handed to the first convention, in precedence order, that
    claims it; a module none claims is left for the unquantised count."""
    conv = claiming(ctx, parts)
    if conv is not None:
        conv.infer(ctx, mod, parts)


@dataclass(frozen=True)
class _Plan:
    """What ``_module`` did for one module, with the module's names taken
    out, to do again for every module of the same signature (the suffix,
    dtype and shape of each part) in one ``infer`` call (a model
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
    # the one issue the module gave (a not-representable convention's): its
    # variant and every field but ``tensor``, the QTensor's name (issues.py);
    # the fields are shared by every module the plan is replayed on
    issue: tuple[Callable[..., Issue], tuple[Any, ...]] | None = None

    def apply(self, ctx: Ctx, mod: str, gs: tuple[int, ...]) -> None:
        # the QTensor is kept as the position of one of its parts (the data
        # plane's), made when asked for (artifact.QList) by this plan's
        # PlanReplays, which keeps where the module's other parts are
        maker = ctx.makers.get(id(self))
        if maker is None:
            maker = ctx.makers[id(self)] = PlanReplays(self, ctx, mod, gs)
        ctx.out.replay(maker, gs[maker.anchor])
        issues: list[Any] = ctx.art.issues
        places = None
        if self.issue is not None:
            places = [len(issues)]
            issues.append(mod)
        # what infer's loop does for every module of the plan but its first
        _replay_pending(maker, list(gs), places, ctx.used, issues, ctx.cols.names)


class PlanReplays:
    """The QTensors one ``_Plan`` is replayed into, each made from the
    position ``g`` of its module's anchor part (artifact.Replays): the data
    plane's part, else the part it is named after, else the first.  A module
    is two array entries in the QList, and here its parts' distances from
    ``g`` (four bytes a part: one after the other in a header listing a
    module's tensors together, further apart where the producer sorts a file
    by dtype and then name, as torch's safetensors writer does), until
    something asks for its QTensor (time and memory per quantised tensor).
    ``cut`` is the length of the anchor part's suffix, which the plan's
    signature fixes: the module's name is that part's name without it."""

    __slots__ = ("plan", "where", "role", "declared", "cut", "anchor", "homed", "n", "rows",
                 "dist")

    def __init__(self, plan: _Plan, ctx: Ctx, mod: str, gs: tuple[int, ...]) -> None:
        self.plan, self.where, self.role, self.declared = (plan, ctx.cols.where, ctx.role,
                                                           ctx.declared)
        form = plan.planes
        # the part whose file is the tensor's (parsers/models.py ``_home``):
        # its data plane's, else the stored tensor it is named after
        self.homed = True
        if form and form[0] is not None:
            self.anchor = form[0][0]
        elif plan.part >= 0:
            self.anchor = plan.part
        else:
            self.anchor, self.homed = 0, False
        self.cut = len(ctx.cols.names[gs[self.anchor]]) - len(mod)
        self.n = len(gs)
        # each module's row of distances, by its anchor's position (one array
        # over the columns, shared by the model's PlanReplays)
        self.rows = ctx.rows()
        self.dist = array("i")

    def add_flat(self, parts: list[int]) -> None:
        """Keep each module whose parts' positions are the next ``self.n``
        of ``parts`` (C-level passes); its ``g`` is its anchor part's."""
        k = self.n
        anchors = parts[self.anchor::k]
        base = len(self.dist)
        any(map(self.rows.__setitem__, anchors, range(base, base + len(parts), k)))
        self.dist.extend(map(sub, parts, chain.from_iterable(map(repeat, anchors, repeat(k)))))

    def at(self, g: int, part: int) -> int:
        """The position of part ``part`` of the module at ``g``."""
        return g + self.dist[self.rows[g] + part] if part != self.anchor else g

    def _module(self, g: int) -> str:
        name = self.where.names[g]
        return name[:len(name) - self.cut]

    def make(self, g: int, home: str | None, role: str | None = None) -> QTensor:
        p = self.plan
        mod = self._module(g)
        planes = None
        if p.planes is not None:
            row = self.rows[g]
            dist = self.dist
            planes = PlanPlanes(self.where, tuple(
                None if f is None else (dist[row + f[0]], f[1]) for f in p.planes), g, home)
        return QTensor(self.where.names[self.at(g, p.part)] if p.part >= 0 else mod + p.tail,
                       self.role(mod) if role is None else role, p.shape, p.source, p.desc,
                       p.grade, p.convention, p.reason, planes=planes, notes=p.notes,
                       declared=self.declared)

    def _modules(self, gs: Sequence[int]) -> Iterable[str]:
        names: Iterable[str] = map(self.where.names.__getitem__, gs)
        return map(getitem, names, repeat(slice(None, -self.cut))) if self.cut else names

    def _positions(self, gs: Sequence[int], part: int) -> Iterable[int]:
        """``map(self.at, gs, repeat(part))``, at C speed."""
        if part == self.anchor:
            return gs
        rows = map(add, map(self.rows.__getitem__, gs), repeat(part))
        return map(add, gs, map(self.dist.__getitem__, rows))

    def names(self, gs: Sequence[int]) -> Iterable[str]:
        p = self.plan
        if p.part >= 0:
            return map(self.where.names.__getitem__, self._positions(gs, p.part))
        return map(add, self._modules(gs), repeat(p.tail))

    def roles(self, gs: Sequence[int]) -> Iterable[str]:
        many = getattr(self.role, "many", None)  # roles.RoleMap: many at once
        if many is not None:
            got: list[str] = many(list(self._modules(gs)))
            return got
        return map(self.role, self._modules(gs))

    def data_part(self) -> int | None:
        # g is the data plane's part, or the stored tensor the QTensor is
        # named after when it has no data plane (where ``_home`` looks then)
        return 0 if self.homed else None

    def data_position(self, g: int) -> int | None:
        if not self.homed or not self.where.names[g]:
            return None
        return g

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
            got: Iterable[int] = map(av.__getitem__, self._positions(gs, p[0]))
            if p[1] != 1:
                got = map(mul, got, repeat(p[1]))
            bad.update(compress(every, map(ne, got, repeat(want))))
        return sorted(bad)


_UNSEEN = _Plan(-1, "", None, (), (), Source.NONE, None, None, None, None, ())
# the plan of a module no convention did anything with (no QTensor, no issue,
# no tensor consumed): the modules of its signature are skipped (a
# checkpoint whose convention nobody claims repeats one for every tensor)
_NOTHING = _Plan(-1, "", None, (), (), Source.NONE, None, None, None, None, ())


def _learn(ctx: Ctx, mod: str, gs: tuple[int, ...], n_out: int,
           n_issues: int) -> _Plan | None:
    """The plan of what ``_module`` just did for ``mod`` (whose parts are at
    positions ``gs``), or None."""
    extra = ctx.art.issues[n_issues:]
    if len(ctx.out) == n_out and not extra and not any(map(ctx.used.__getitem__, gs)):
        return _NOTHING
    if len(ctx.out) != n_out + 1 or len(extra) > 1:
        return None
    q = ctx.out.last()
    issue: tuple[Callable[..., Issue], tuple[Any, ...]] | None = None
    if extra:
        # a not-representable module's issue: named by its QTensor (its
        # first field), and saying nothing else of the module
        got = extra[0]
        if got.tensor != q.name or got.FIELDS[:1] != ("tensor",):
            return None
        issue = (type(got), got.others())
        if mod in repr(issue[1]):
            return None
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
                 q.source, q.desc, q.grade, q.convention, q.reason, tuple(q.notes), issue)
    # the same QTensor (and issue) again from the plan, field by field, else no plan
    probe = Ctx(ctx.art, ctx.cols, ctx.declared, ctx.role, QListBuilder(),
                bytearray(len(ctx.used)))
    n = len(ctx.art.issues)
    plan.apply(probe, mod, gs)
    again = probe.out.last()
    if ctx.art.issues[n:] != extra:
        return None
    del ctx.art.issues[n:]
    if (again != q or tuple(k for k, g in enumerate(gs) if probe.used[g]) != used
            or q.payload is not None or q.expected_digest is not None
            or q.expected_gid is not None or q.layouts is not NO_LAYOUTS):
        return None
    return plan

