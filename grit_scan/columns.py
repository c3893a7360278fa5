"""The columnar layer: how an artifact keeps many records at the cost of a
few containers, each behind a plain per-record view.

A scan of 500 shards lists 400,000 stored tensors and 200,000 quantised
ones; a record object per tensor costs memory and time no rule needs
(docs/performance.md).  So an artifact's tensors are kept as columns, in
one of three layouts, each a ``Sequence`` of the plain record it stands
for (records.py), so that whoever iterates it sees records:

- ``TensorTable``: a file's stored tensors (``StoredTensor``), as the
  readers fill it (parsers/safetensors_reader.py, gguf_reader.py);
- ``PlaneSeq``: one quantised tensor's planes (``PlaneRef``), kept as
  positions in its model's columns (conventions/engine.py);
- ``QList``: an artifact's quantised tensors (``QTensor``), each an object
  or one int a ``Replays`` makes its record from (a convention's plan
  replayed, a manifest's entries: ``Recorded``), filled by a
  ``QListBuilder``.

All three are immutable once made: a builder fills a QList and hands it over
whole, ``PlaneSeq.localised`` makes new planes, and a TensorTable's
columns are set when it is made (what it computes on first use, its shapes
or rows, it keeps or drops without changing what it lists).  Rules read
the records, or, for speed, the column methods that give the same values
without making them (``QList.units``, ``names``, ``roles``,
``size_mismatches``; ``TensorTable.names``, ``dtypes``, ``nbytes``);
tests/test_qlist.py holds those to the records.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, compress, islice, repeat
from operator import attrgetter
from typing import Any, Protocol, overload

from .records import NO_LAYOUTS, PlaneRef, QTensor, Source, StoredTensor


def _int64(xs: Sequence[int]) -> Sequence[int]:
    """``xs`` as an int64 array, or as it is when a value does not fit (a
    hostile GGUF may state u64 sizes and offsets: they are reported, and
    kept exact)."""
    if isinstance(xs, array) and xs.typecode == "q":
        return xs
    try:
        return array("q", xs)
    except OverflowError:
        return xs


def _bytes(xs: Sequence[int]) -> Sequence[int]:
    """``xs`` as a byte array (ranks: one byte a tensor where a list holds
    a pointer), or as it is when a value does not fit."""
    try:
        return array("B", xs)
    except (OverflowError, TypeError):
        return xs


def shape_list(dims: Sequence[int], ranks: Sequence[int]) -> list[tuple[int, ...]]:
    """Each tensor's shape from flat dimensions and ranks, equal shapes one
    tuple."""
    it = iter(dims)
    shapes = [tuple(islice(it, r)) for r in ranks]
    same: dict[tuple[int, ...], tuple[int, ...]] = {}
    return list(map(same.setdefault, shapes, shapes))


class TensorTable(Sequence[StoredTensor]):
    """The stored tensors of one file, kept as columns and turned into
    StoredTensor records only when someone iterates them (a scan of 500
    unquantised shards never needs to).  Shapes are kept flat (every
    dimension in one int64 array, plus each tensor's rank) until someone
    asks for them (or, from a decoder that made them tuples, ``of_shapes``,
    from the start), then as one list of shared tuples, so a table holds a
    handful of container objects however many tensors it lists: the cyclic
    garbage collector would otherwise walk one list per tensor."""

    __slots__ = ("names", "dtypes", "_dims", "ranks", "offsets", "nbytes", "available",
                 "_shapes", "_rows", "_by_name")

    def __init__(self, names: list[str], dtypes: Sequence[str], dims: Sequence[int],
                 ranks: Sequence[int], offsets: Sequence[int], nbytes: Sequence[int],
                 available: Sequence[int]) -> None:
        # integers as int64 arrays: 8 bytes each, where a list holds a pointer
        # and, above 256, a 32-byte int object (performance: memory per tensor)
        self.names, self.dtypes = names, dtypes
        self._dims: Sequence[int] | None = _int64(dims)
        self.ranks = _bytes(ranks)
        self.offsets, self.nbytes = _int64(offsets), _int64(nbytes)
        self.available = self.nbytes if available is nbytes else _int64(available)
        self._shapes: list[tuple[int, ...]] | None = None
        self._rows: list[StoredTensor] | None = None
        self._by_name: dict[str, StoredTensor] | None = None

    @classmethod
    def of_shapes(cls, names: list[str], dtypes: Sequence[str],
                  shapes: list[tuple[int, ...]], ranks: Sequence[int], offsets: Sequence[int],
                  nbytes: Sequence[int], available: Sequence[int]) -> TensorTable:
        """The table of tensors whose shapes are already tuples, equal
        shapes one tuple (a decoder that makes them so: parsers/
        safetensors_json.py), kept as they are instead of flat; ``ranks``
        are their lengths."""
        table = cls(names, dtypes, (), ranks, offsets, nbytes, available)
        table._shapes, table._dims = shapes, None
        return table

    def shapes(self) -> list[tuple[int, ...]]:
        """Each tensor's shape; equal shapes are one tuple (a checkpoint
        repeats a handful of shapes for every layer: docs/performance.md, memory).
        Built once and kept in place of the flat dimensions (a pointer a
        tensor where the dimensions took eight bytes each); not to be
        mutated."""
        if self._shapes is None:
            assert self._dims is not None
            self._shapes = shape_list(self._dims, self.ranks)
            self._dims = None
        return self._shapes
    def iter_rows(self) -> Iterator[StoredTensor]:
        """The records, built as they are iterated (and not kept)."""
        nbytes = list(self.nbytes)
        # one int object for a tensor's nbytes and available when they are
        # one column (a well-formed header): the records of a whole model
        # are alive at once while its conventions are inferred
        available = nbytes if self.available is self.nbytes else self.available
        cols = zip(self.names, self.dtypes, self.shapes(), self.offsets, nbytes, available)
        return map(tuple.__new__, repeat(StoredTensor), cols)

    def rows(self) -> list[StoredTensor]:
        if self._rows is None:
            self._rows = list(self.iter_rows())
        return self._rows

    def by_name(self) -> dict[str, StoredTensor]:
        if self._by_name is None:
            self._by_name = dict(zip(self.names, self.rows()))
        return self._by_name

    def release(self) -> None:
        """Drop the records built for inference; the columns stay.  A
        500-shard model would otherwise keep a record, a shape tuple and a
        dict entry per tensor for the rest of the scan (performance: memory per
        stored tensor)."""
        self._rows = None
        self._by_name = None

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, i: int) -> StoredTensor: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[StoredTensor]: ...

    def __getitem__(self, i: int | slice) -> StoredTensor | Sequence[StoredTensor]:
        return self.rows()[i]

    def __iter__(self) -> Iterator[StoredTensor]:
        return iter(self.rows())


def nbytes_map(tensors: Sequence[StoredTensor]) -> dict[str, int]:
    """name -> declared byte length of every stored tensor."""
    if isinstance(tensors, TensorTable):
        return dict(zip(tensors.names, tensors.nbytes))
    return {t.name: t.nbytes for t in tensors}


class PlaneSeq(Sequence[PlaneRef | None]):
    """A quantised tensor's planes kept compactly, each PlaneRef built when
    it is asked for (conventions/engine.py keeps a replayed convention's
    planes as positions in the model's columns: a list and a PlaneRef per
    plane was a third of a 500-shard FP8 model's peak memory, docs/performance.md).
    It compares equal to the list of the same PlaneRefs.  Subclasses give
    ``__len__`` and ``__getitem__``."""

    __slots__ = ()

    def __iter__(self) -> Iterator[PlaneRef | None]:
        return map(self.__getitem__, range(len(self)))

    def plane_bytes(self) -> list[int]:
        """Each plane's stored bytes (length x broadcast), 0 when absent."""
        return plane_bytes(list(self))

    def data_file(self) -> tuple[bool, str | None]:
        """(True, its file) when the first plane is present and names its
        stored tensor, else (False, None)."""
        ref = self[0] if len(self) else None
        return (True, ref.file) if ref is not None and ref.tensor else (False, None)

    def localised(self, home: str) -> PlaneSeq:
        """The same planes, those in the file ``home`` without their file
        reference (``file`` None: the artifact's own), as ``_replace`` gives
        a PlaneRef without it: a new sequence (or this one, when nothing
        changes)."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (PlaneSeq, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


def plane_bytes(planes: Sequence[PlaneRef | None]) -> list[int]:
    """Each plane's stored bytes (length x broadcast), 0 when absent."""
    # a list's type is tested first: cheaper than the ABC's isinstance,
    # and the scan asks this of every quantised tensor kept as an object
    if type(planes) is not list and isinstance(planes, PlaneSeq):
        return planes.plane_bytes()
    return [0 if p is None else p.length * p.broadcast for p in planes]


class Replays(Protocol):
    """Quantised tensors made the same way at many places of a model's
    columns (conventions/engine.py: a convention's plan replayed on every
    module of one signature), each named by one int, ``g``.  ``QList`` keeps
    the int instead of a QTensor (performance: a QTensor, its role and its
    planes were about 330 bytes and several microseconds per module)."""

    def make(self, g: int, home: str | None, role: str | None = None) -> QTensor:
        """The QTensor at ``g`` (planes in the file ``home`` have no file
        reference); ``role``, when given, is its role, already computed."""
        ...

    def names(self, gs: Sequence[int]) -> Iterable[str]:
        """``make(g).name`` for each of ``gs``."""
        ...

    def roles(self, gs: Sequence[int]) -> Iterable[str]:
        """``make(g).role`` for each of ``gs``."""
        ...

    def data_position(self, g: int) -> int | None:
        """The column position of the stored tensor holding the data plane
        of ``make(g)`` (which names it), or None."""
        ...

    def data_part(self) -> int | None:
        """``data_position(g) - g`` when the data plane's tensor has a name
        (None: no data plane)."""
        ...

    def size_mismatches(self, gs: Sequence[int], sizes: Sequence[int]) -> Iterable[int]:
        """The indexes k into ``gs`` where ``plane_bytes(make(gs[k]).planes)``
        is not ``sizes`` (all of them when there are no planes)."""
        ...


class QList(Sequence[QTensor]):
    """An artifact's quantised tensors, in order: QTensor objects, and
    tensors a ``Replays`` makes from one int, kept as two array entries and
    made when asked for (each ask makes a new QTensor).  Immutable: a
    ``QListBuilder`` fills one and ``build`` hands it over whole; a stage
    that changes the tensors makes a new list.  The rules and the JSON
    writer read the columns (``units``, ``names``, ``roles``) instead of
    making every tensor.

    Without replays the objects are a plain list (``_kinds`` None).  With
    them, ``_kinds[i]`` is -1 for an object, which is ``_objs[_vals[i]]``,
    else the index in ``_makers`` of the Replays that makes tensor ``i``
    from ``_vals[i]``.  ``_names``, ``_roles`` and ``_grouped`` are computed when first
    asked for and kept (the tensors never change)."""

    __slots__ = ("_objs", "_kinds", "_vals", "_makers", "_home", "_names", "_roles", "_grouped")

    def __init__(self, items: Iterable[QTensor] = (), home: str | None = None) -> None:
        self._objs: list[QTensor] = list(items)
        self._kinds: array[int] | None = None
        self._vals: array[int] | None = None
        self._makers: Sequence[Replays] = ()
        self._home = home
        self._names: list[str] | None = None
        self._roles: list[str] | None = None
        self._grouped: dict[int, list[int]] | None = None

    @classmethod
    def _made(cls, objs: list[QTensor], kinds: array[int] | None, vals: array[int] | None,
              makers: Sequence[Replays], home: str | None) -> QList:
        out = cls((), home)
        out._objs, out._kinds, out._vals, out._makers = objs, kinds, vals, tuple(makers)
        return out

    # --- reading

    @property
    def home(self) -> str | None:
        """The file of the artifact holding these tensors, for ``Replays.make``."""
        return self._home

    def __len__(self) -> int:
        return len(self._objs) if self._kinds is None else len(self._kinds)

    @overload
    def __getitem__(self, i: int) -> QTensor: ...

    @overload
    def __getitem__(self, i: slice) -> QList: ...

    def __getitem__(self, i: int | slice) -> QTensor | QList:
        kinds, vals = self._kinds, self._vals
        if isinstance(i, slice):
            if kinds is None or vals is None:
                return QList(self._objs[i], self._home)
            # the objects list is shared: neither list changes
            out = QList._made(self._objs, kinds[i], vals[i], self._makers, self._home)
            out._roles = self._roles[i] if self._roles is not None else None
            return out
        if kinds is None or vals is None:
            return self._objs[i]
        k, v = kinds[i], vals[i]
        if k < 0:
            return self._objs[v]
        return self._makers[k].make(v, self._home,
                                    self._roles[i] if self._roles is not None else None)

    def __iter__(self) -> Iterator[QTensor]:
        if self._kinds is None:
            return iter(self._objs)
        return map(self.__getitem__, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (QList, list)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"QList({list(self)!r})"

    # --- columns

    @property
    def columnar(self) -> bool:
        """Some tensors are kept as a Replays and an int (not objects)."""
        return self._kinds is not None

    def columns(self) -> tuple[Sequence[int], Sequence[int], Sequence[Replays]] | None:
        """(kinds, vals, makers) when every tensor is a Replays' (else None):
        tensor i is ``makers[kinds[i]]``'s from ``vals[i]``."""
        kinds, vals = self._kinds, self._vals
        if kinds is None or vals is None or -1 in kinds:
            return None
        return kinds, vals, self._makers

    def units(self) -> list[tuple[QTensor, Sequence[int], Replays | None]]:
        """The tensors in groups, in order of each group's first tensor:
        every object alone, and the tensors of each Replays together, as
        (the group's first tensor, the positions of its tensors, ascending,
        its Replays or None)."""
        kinds, vals = self._kinds, self._vals
        if kinds is None or vals is None:
            return [(q, (i,), None) for i, q in enumerate(self._objs)]
        out: list[tuple[QTensor, Sequence[int], Replays | None]] = []
        for k, idx in self._groups().items():
            if k < 0:
                out.extend((self._objs[vals[i]], (i,), None) for i in idx)
            else:
                out.append((self[idx[0]], idx, self._makers[k]))
        out.sort(key=lambda u: u[1][0])
        return out

    def _groups(self) -> dict[int, list[int]]:
        """The positions of the tensors each Replays makes, by its index
        (-1: the objects), ascending; computed once."""
        if self._grouped is not None:
            return self._grouped
        kinds = self._kinds
        assert kinds is not None
        n = len(kinds)
        groups: dict[int, list[int]] = {}
        present = set(kinds)
        if len(present) == 1:
            groups[kinds[0]] = list(range(n))
        elif len(present) <= 8:
            # a C-level pass per Replays (a file holds a few of them)
            for k in sorted(present):
                groups[k] = list(compress(range(n), map(k.__eq__, kinds)))
        else:
            groups = self._by_maker(range(n))
        self._grouped = groups
        return groups

    def _by_maker(self, idx: Iterable[int]) -> dict[int, list[int]]:
        assert self._kinds is not None
        kinds = self._kinds
        got: dict[int, list[int]] = {}
        for i in idx:
            k = kinds[i]
            ix = got.get(k)
            if ix is None:
                got[k] = [i]
            else:
                ix.append(i)
        return got

    def _scatter(self, of: Callable[[Replays, list[int]], Iterable[Any]],
                 obj: Callable[[QTensor], Any]) -> list[Any]:
        """One value per tensor: ``obj(q)`` of each object, and ``of(maker,
        vals)`` for the tensors each Replays makes, put back in order."""
        kinds, vals = self._kinds, self._vals
        if kinds is None or vals is None:
            return list(map(obj, self._objs))
        groups = self._groups()
        out: list[Any] = [None] * len(kinds)
        for k, idx in groups.items():
            got = (map(obj, map(self._objs.__getitem__, map(vals.__getitem__, idx))) if k < 0
                   else of(self._makers[k], list(map(vals.__getitem__, idx))))
            if len(groups) == 1:
                return list(got)
            any(map(out.__setitem__, idx, got))  # out[i] = x, at C speed (each gives None)
        return out

    def names(self) -> list[str]:
        """Each tensor's name, in order, without making the tensors
        (computed once: the rules and the JSON writer each ask)."""
        if self._names is None:
            self._names = self._scatter(lambda m, gs: m.names(gs), _NAME_OF)
        return self._names

    def names_at(self, idx: Iterable[int]) -> list[str]:
        """The names of the tensors at positions ``idx`` (a few), without
        making the tensors."""
        kinds, vals = self._kinds, self._vals
        if kinds is None or vals is None:
            return [self._objs[i].name for i in idx]
        idx = list(idx)
        name_of: dict[int, str] = {}
        for k, ix in self._by_maker(idx).items():  # one call per Replays
            got = ([self._objs[vals[i]].name for i in ix] if k < 0
                   else self._makers[k].names([vals[i] for i in ix]))
            name_of.update(zip(ix, got))
        return [name_of[i] for i in idx]

    def roles(self) -> list[str]:
        """Each tensor's role, in order (computed once)."""
        if self._roles is None:
            self._roles = self._scatter(lambda m, gs: m.roles(gs), _ROLE_OF)
        return self._roles

    def declared(self) -> dict[str, Any] | None:
        """The first tensor's non-empty declared quantisation, in order, or None."""
        kinds = self._kinds
        if kinds is None:
            return next((q.declared for q in self._objs if q.declared), None)
        for q, _idx, _maker in self.units():
            if q.declared:
                return q.declared
        return None

    def size_mismatches(self, idx: Sequence[int], sizes: list[int]) -> list[int]:
        """The positions among ``idx`` (ascending) whose stored planes (or
        payload) do not have the lengths ``sizes`` (per plane) require:
        a QTensor with planes whose ``plane_bytes`` differ, or with a
        payload whose length is not their sum."""
        total = sum(sizes)

        def wrong(q: QTensor) -> bool:
            if q.planes is not None:
                return plane_bytes(q.planes) != sizes
            return q.payload is not None and q.payload.length != total

        if self._kinds is None or self._vals is None:
            return [i for i in idx if wrong(self._objs[i])]
        kinds, vals = self._kinds, self._vals
        out: list[int] = []
        groups = self._groups()
        # a kin's positions are usually one Replays' group, the same list
        # (found by its first position's kind: a GGUF has a group per shape)
        k0 = kinds[idx[0]] if idx else 0
        whole = (k0, idx) if idx and groups.get(k0) is idx else None
        for k, ix in ([whole] if whole is not None else self._by_maker(idx).items()):
            if k < 0:
                out.extend(i for i in ix if wrong(self._objs[vals[i]]))
            else:
                gs = list(map(vals.__getitem__, ix))
                out.extend(map(ix.__getitem__, self._makers[k].size_mismatches(gs, sizes)))
        out.sort()
        return out

    def entries(self) -> Iterator[tuple[QTensor | None, Replays | None, int]]:
        """(the object, None, 0) or (None, its Replays, its int) per tensor."""
        kinds, vals = self._kinds, self._vals
        if kinds is None or vals is None:
            return ((q, None, 0) for q in self._objs)
        objs, makers = self._objs, self._makers
        return ((objs[v], None, 0) if k < 0 else (None, makers[k], v)
                for k, v in zip(kinds, vals))


class QListBuilder:
    """A ``QList`` while it is filled (a reader's draft, the conventions
    engine, a model's shard): objects appended, Replays' tensors added as
    two array entries each.  ``build`` gives the finished list, which
    shares the builder's columns; the builder refuses any addition after
    (``RuntimeError``), so a built list never changes."""

    __slots__ = ("_objs", "_kinds", "_vals", "_makers", "_maker_ix", "home", "_built")

    def __init__(self, items: Iterable[QTensor] = (), home: str | None = None) -> None:
        self._objs: list[QTensor] = list(items)
        self._kinds: array[int] | None = None
        self._vals: array[int] | None = None
        self._makers: list[Replays] = []
        self._maker_ix: dict[Replays, int] = {}
        # the file of the artifact the list is for (``QList.home``)
        self.home = home
        self._built = False

    @classmethod
    def from_columns(cls, objs: list[QTensor], makers: Sequence[Replays], kinds: array[int],
                     vals: array[int]) -> QListBuilder:
        """The builder holding tensor i as ``objs[vals[i]]`` where
        ``kinds[i]`` is -1, else ``makers[kinds[i]]``'s from ``vals[i]``;
        the objects must be in ``objs`` in the order they are listed."""
        out = cls()
        if not makers:
            out._objs = [objs[v] for v in vals]
            return out
        out._objs = objs
        out._take_makers(makers)
        out._kinds, out._vals = kinds, vals
        return out

    def _take_makers(self, makers: Sequence[Replays]) -> None:
        self._makers = list(makers)
        self._maker_ix = {m: k for k, m in enumerate(self._makers)}

    def build(self) -> QList:
        """The finished list (the builder takes no more tensors)."""
        self._built = True
        return self._now()

    def _open(self) -> None:
        if self._built:
            raise RuntimeError("this QList is built: it takes no more tensors")

    def _to_columns(self) -> tuple[array[int], array[int]]:
        self._open()
        if self._kinds is None or self._vals is None:
            n = len(self._objs)
            self._kinds, self._vals = array("i", [-1]) * n, array("q", range(n))
        return self._kinds, self._vals

    def __len__(self) -> int:
        return len(self._objs) if self._kinds is None else len(self._kinds)

    def _now(self) -> QList:
        # the tensors so far, sharing the builder's columns: handed out only
        # once the builder is closed (``build``), else read at once by the
        # two methods below
        return QList._made(self._objs, self._kinds, self._vals, self._makers, self.home)

    def last(self) -> QTensor:
        """The tensor added last."""
        return self._now()[-1]

    def names(self) -> list[str]:
        """Each tensor's name so far, in order (``QList.names``)."""
        return self._now().names()

    def append(self, q: QTensor) -> None:
        self._open()
        if self._kinds is not None and self._vals is not None:
            self._kinds.append(-1)
            self._vals.append(len(self._objs))
        self._objs.append(q)

    def replay(self, maker: Replays, g: int) -> None:
        """Add the tensor ``maker`` makes from ``g``."""
        k = self.maker_index(maker)
        kinds, vals = self._to_columns()
        kinds.append(k)
        vals.append(g)

    def maker_index(self, maker: Replays) -> int:
        """The index ``maker`` has among this list's Replays (given one if new)."""
        self._open()
        k = self._maker_ix.get(maker)
        if k is None:
            k = self._maker_ix[maker] = len(self._makers)
            self._makers.append(maker)
        return k

    def column_arrays(self) -> tuple[array[int], array[int]]:
        """The two columns: appending ``maker_index(m)`` to the first and
        ``g`` to the second adds ``m``'s tensor from ``g`` (conventions/
        engine.py adds 200,000 so)."""
        return self._to_columns()

    def pop(self) -> None:
        """Take the last tensor out."""
        self._open()
        kinds, vals = self._kinds, self._vals
        if kinds is None or vals is None:
            self._objs.pop()
        else:
            if kinds.pop() < 0:
                self._objs.pop()  # objects are in the order they are listed
            vals.pop()

    def add_replays(self, makers: Sequence[Replays], kinds: Iterable[int],
                    vals: Iterable[int]) -> None:
        """Add the tensor ``makers[k]`` makes from ``g`` for each (k, g) of
        ``kinds`` and ``vals``."""
        self._open()
        if not len(self):
            self._objs = []
            self._take_makers(makers)
            # arrays of the columns' types are taken as they are
            self._kinds = kinds if isinstance(kinds, array) and kinds.typecode == "i" \
                else array("i", kinds)
            self._vals = vals if isinstance(vals, array) and vals.typecode == "q" \
                else array("q", vals)
            return
        for k, g in zip(kinds, vals):
            self.replay(makers[k], g)

    def extend(self, items: Iterable[QTensor]) -> None:
        """Add ``items`` (a QList's replayed tensors stay replays when it
        has this builder's home)."""
        self._open()
        if not isinstance(items, QList):
            if self._kinds is None:
                self._objs.extend(items)  # objects only: a list's extend (a GGUF's 100k)
                return
            for q in items:
                self.append(q)
            return
        if items._kinds is None:
            self.extend(items._objs)
            return
        assert items._vals is not None
        if not len(self) and (self.home == items.home or not items._makers):
            self._objs = list(items._objs)
            self._take_makers(items._makers)
            self._kinds, self._vals = array("i", items._kinds), array("q", items._vals)
            return
        for i, (k, v) in enumerate(zip(items._kinds, items._vals)):
            if k < 0:
                self.append(items._objs[v])
            elif items.home == self.home:
                self.replay(items._makers[k], v)
            else:
                self.append(items[i])


class Recorded:
    """What a grit-manifest.json records for one listed file (RECONSTRUCTION
    §10), as columns: a Replays whose int is the entry's position.  A
    manifest lists 25,000 entries (docs/performance.md) that are compared by name and
    gid (rules/kinds/gid_disagreement.py) and rarely looked at one by one,
    so no QTensor is made until one is asked for.

    ``shapes`` are the JSON lists as read (each already checked to be
    non-negative integers) or tuples; ``digests`` is None when no entry
    records one."""

    __slots__ = ("rel", "names_", "shapes", "descs", "gids", "digests", "notes", "objs")

    def __init__(self, rel: str, names: list[str], shapes: Sequence[Sequence[int]],
                 descs: list[Any], gids: list[bytes | None],
                 digests: list[bytes | None] | None) -> None:
        self.rel = rel
        self.names_ = names
        self.shapes = shapes
        self.descs = descs
        self.gids = gids
        self.digests = digests
        self.notes = (f"file={rel}",)  # one tuple for the file's entries
        self.objs: list[QTensor] | None = None  # the entries, when read as objects

    def __len__(self) -> int:
        return len(self.names_)

    def make(self, g: int, home: str | None, role: str | None = None) -> QTensor:
        if self.objs is not None:
            return self.objs[g]
        name = self.names_[g]
        return QTensor(name, f"{self.rel}::{name}", tuple(self.shapes[g]), Source.MANIFEST,
                       self.descs[g], None, "manifest", None, None, None,
                       None if self.digests is None else self.digests[g], self.gids[g],
                       NO_LAYOUTS, self.notes)

    def entry(self, g: int) -> QTensor:
        """The entry at ``g``: the object itself when the entries were read
        as objects (``of_entries``), else made from the columns."""
        return self.make(g, None)

    def names(self, gs: Sequence[int]) -> Iterable[str]:
        return map(self.names_.__getitem__, gs)

    def roles(self, gs: Sequence[int]) -> Iterable[str]:
        return map(f"{self.rel}::".__add__, self.names(gs))

    def data_position(self, g: int) -> int | None:
        return None  # a record names no stored tensor

    def data_part(self) -> int | None:
        return None

    def size_mismatches(self, gs: Sequence[int], sizes: Sequence[int]) -> Iterable[int]:
        return ()  # no planes and no payload: nothing stored to measure

    @staticmethod
    def entries(quantized: QList) -> list[Recorded] | None:
        """The Recorded that make every tensor of ``quantized``, each file's
        entries from 0 up, in order; None when some tensor is another kind
        (a manifest read entry by entry keeps objects)."""
        cols = quantized.columns()
        if cols is None:
            return None
        kinds, vals, makers = cols
        if not all(isinstance(m, Recorded) for m in makers):
            return None
        recs: list[Recorded] = list(makers)  # type: ignore[arg-type]  # checked above
        if len(kinds) != sum(map(len, recs)):
            return None
        # as the reader adds them (a slice or an edit may not be): two
        # C-level comparisons
        return recs if Recorded.columns(recs) == (kinds, vals) else None

    @staticmethod
    def of(quantized: QList) -> list[Recorded]:
        """Each listed file's entries as a Recorded, in order, from a
        manifest artifact's list as its reader made it (parsers/manifest.py
        adds every listed file's entries as one Recorded); a list sliced or
        edited since is refused (ValueError): it no longer says which file
        each entry is from."""
        recs = Recorded.entries(quantized)
        if recs is None:
            raise ValueError("not a grit-manifest.json's entries as read")
        return recs

    @staticmethod
    def of_entries(rel: str, qs: list[QTensor]) -> Recorded:
        """The Recorded of entries read one by one as QTensors (a manifest
        with a malformed entry), which ``entry`` and ``make`` give back."""
        digests = [q.expected_digest for q in qs]
        r = Recorded(rel, [q.name for q in qs], [q.shape for q in qs], [q.desc for q in qs],
                     [q.expected_gid for q in qs],
                     digests if any(d is not None for d in digests) else None)
        r.objs = qs
        return r

    @staticmethod
    def columns(recs: Sequence[Recorded]) -> tuple[array[int], array[int]]:
        """The QList columns (kinds, vals) of every entry of ``recs``, in
        order: ``QListBuilder.add_replays(recs, *Recorded.columns(recs))``."""
        lens = list(map(len, recs))
        return (array("i", chain.from_iterable(map(repeat, range(len(recs)), lens))),
                array("q", chain.from_iterable(map(range, lens))))


_NAME_OF: Callable[[QTensor], str] = attrgetter("name")
_ROLE_OF: Callable[[QTensor], str] = attrgetter("role")
