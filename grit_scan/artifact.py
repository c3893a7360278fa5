"""The format-neutral artifact model: what readers produce and rules consume.

Readers turn files into ``Artifact`` objects: every on-disk tensor
(``StoredTensor``), every quantised logical tensor with the descriptor
recovered or inferred for it and where it came from (``QTensor``), the
declared quantisation, and ``Issue`` records for what the reader found wrong.
An ``Issue`` carries a stable code (``IssueCode``); the rules layer maps codes
to finding kinds and severities.  Nothing here does I/O or reporting.
"""

from __future__ import annotations

import enum
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, islice, repeat
from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, overload

from .codec.errors import GritError
from .issues import Issue

if TYPE_CHECKING:  # annotations only: a float-only scan never loads the codec (issue 15)
    from .codec.descriptor import Descriptor
    from .codec.grade import Grade


class ReadError(GritError):
    """A file that cannot be opened or read (not a regular file, EACCES, EIO)."""


class Format(str, enum.Enum):
    """What a scanned file is; readers are dispatched on it (parsers/interface.py)."""

    SAFETENSORS = "safetensors"
    GGUF = "gguf"
    NPZ = "npz"  # numpy.savez / mlx.core.savez archives
    INDEX = "index"  # *.safetensors.index.json
    MANIFEST = "grit-manifest"
    CONFIG = "config"  # config.json, quantize_config.json, hf_quant_config.json

    @property
    def is_checkpoint_file(self) -> bool:
        """A file that holds tensors (the others describe them)."""
        return self not in (Format.INDEX, Format.MANIFEST, Format.CONFIG)

    @property
    def hf_named(self) -> bool:
        """A file of tensors named as Hugging Face checkpoints name them
        (every tensor format but GGUF, which names its own): conventions are
        inferred over its tensors, per model (parsers/models.py)."""
        return self is not Format.GGUF and self.is_checkpoint_file

    @property
    def is_checkpoint(self) -> bool:
        """Counts as "something was parsed" for exit code 4 (§13)."""
        return self is not Format.CONFIG

    def __str__(self) -> str:
        return self.value


class Source(str, enum.Enum):
    """Where a tensor's descriptor came from."""

    GRIT_HEADER = "grit-header"  # safetensors __metadata__["__grit__"]
    GGUF_KV = "gguf-kv"  # grit.* keys of a GGUF file
    GGML_TYPE = "ggml-type"  # a ggml block type with a decode-exact mapping
    INFERRED = "inferred"  # a known convention (gpt-oss MXFP4, ModelOpt NVFP4, ...)
    MANIFEST = "manifest"  # grit-manifest.json
    NONE = "none"  # no descriptor; ``reason`` says why


class IssueLog:
    """Where convention inference records what it finds wrong, one module
    at a time (``conventions.Ctx.art``): only issues, never an artifact's
    other fields.  ``conventions.infer`` hands its issues back in its
    ``Inferred`` result, and the caller gives each to the file it names."""

    __slots__ = ("issues",)

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def add(self, found: Issue) -> None:
        self.issues.append(found)



class StoredTensor(NamedTuple):
    """One tensor as the file lists it (a safetensors key or a GGUF tensor).
    A NamedTuple: a scan builds hundreds of thousands of these."""

    name: str
    dtype: str  # safetensors dtype or ggml type name
    shape: tuple[int, ...]  # as the file states it (GGUF: numpy order)
    offset: int  # absolute offset of the first byte in the file
    nbytes: int  # what the header says the tensor occupies
    available: int  # how many of those bytes the file actually holds


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
    asks for them, then as one list of shared tuples, so a table holds a
    handful of container objects however many tensors it lists: the cyclic
    garbage collector would otherwise walk one list per tensor."""

    __slots__ = ("names", "dtypes", "_dims", "ranks", "offsets", "nbytes", "available",
                 "_shapes", "_rows", "_by_name")

    def __init__(self, names: list[str], dtypes: Sequence[str], dims: Sequence[int],
                 ranks: Sequence[int], offsets: Sequence[int], nbytes: Sequence[int],
                 available: Sequence[int]) -> None:
        # integers as int64 arrays: 8 bytes each, where a list holds a pointer
        # and, above 256, a 32-byte int object (issue 15: memory per tensor)
        self.names, self.dtypes = names, dtypes
        self._dims: Sequence[int] | None = _int64(dims)
        self.ranks = _bytes(ranks)
        self.offsets, self.nbytes = _int64(offsets), _int64(nbytes)
        self.available = self.nbytes if available is nbytes else _int64(available)
        self._shapes: list[tuple[int, ...]] | None = None
        self._rows: list[StoredTensor] | None = None
        self._by_name: dict[str, StoredTensor] | None = None

    def shapes(self) -> list[tuple[int, ...]]:
        """Each tensor's shape; equal shapes are one tuple (a checkpoint
        repeats a handful of shapes for every layer: issue 15, memory).
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
        dict entry per tensor for the rest of the scan (issue 15: memory per
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


NO_LAYOUTS: Mapping[int, str] = MappingProxyType({})


class PlaneRef(NamedTuple):
    """Where one stored byte run of a quantised tensor lives (immutable: a
    NamedTuple, as cheap to make as a tuple, since the scan makes one per
    plane it is asked for)."""

    tensor: str | None  # the stored tensor holding it (None: synthesised)
    offset: int  # absolute file offset
    length: int  # bytes available on disk
    broadcast: int = 1  # >1: a scalar repeated this many times (per-tensor scales)
    # the file holding it when that is another shard of the same model (a
    # module whose weight and scales straddle shards); None: the artifact's own
    file: str | None = None


class PlaneSeq(Sequence[PlaneRef | None]):
    """A quantised tensor's planes kept compactly, each PlaneRef built when
    it is asked for (conventions/engine.py keeps a replayed convention's
    planes as positions in the model's columns: a list and a PlaneRef per
    plane was a third of a 500-shard FP8 model's peak memory, issue 15).
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


@dataclass(frozen=True, slots=True)
class QTensor:
    """A logical quantised tensor and what GRIT says about its bytes.
    Frozen: whoever makes one (a convention, a reader, a plan's replays)
    builds it whole; a later stage that changes it makes a new one
    (``dataclasses.replace``)."""

    name: str
    role: str  # normalised operand name for cross-file matching
    shape: tuple[int, ...]
    source: Source
    desc: Descriptor | None = None
    grade: Grade | None = None
    convention: str | None = None  # e.g. "gpt-oss-mxfp4", "ggml:Q4_K", "gptq"
    reason: str | None = None  # why there is no descriptor
    # stored bytes: either one payload run (GGUF blocks, __grit__ payload) or
    # one run per plane in data, scale0, scale1, aux order (None = absent)
    payload: PlaneRef | None = None
    planes: Sequence[PlaneRef | None] | None = None
    expected_digest: bytes | None = None
    expected_gid: bytes | None = None  # recorded by a grit-manifest.json
    # layout expressions by placement word (§5.3); usually one mapping per
    # file or ggml type, shared by its tensors and never mutated
    layouts: Mapping[int, str] = field(default_factory=lambda: NO_LAYOUTS)
    # a tuple: most tensors have none, and one empty tuple serves them all
    notes: tuple[str, ...] = ()
    declared: dict[str, Any] | None = None  # the declared quantisation that applies

    @property
    def grade_id(self) -> int | None:
        return self.desc.grade_id if self.desc is not None else None

    def refs(self) -> list[PlaneRef | None]:
        """Its planes then its payload (None where absent)."""
        return [*(self.planes or ()), self.payload]


class Replays(Protocol):
    """Quantised tensors made the same way at many places of a model's
    columns (conventions/engine.py: a convention's plan replayed on every
    module of one signature), each named by one int, ``g``.  ``QList`` keeps
    the int instead of a QTensor (issue 15: a QTensor, its role and its
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
    from ``_vals[i]``.  ``_roles`` and ``_grouped`` are computed when first
    asked for and kept (the tensors never change)."""

    __slots__ = ("_objs", "_kinds", "_vals", "_makers", "home", "_roles", "_grouped")

    def __init__(self, items: Iterable[QTensor] = (), home: str | None = None) -> None:
        self._objs: list[QTensor] = list(items)
        self._kinds: array[int] | None = None
        self._vals: array[int] | None = None
        self._makers: Sequence[Replays] = ()
        # the file of the artifact holding these tensors, for ``Replays.make``
        self.home = home
        self._roles: list[str] | None = None
        self._grouped: dict[int, list[int]] | None = None

    @classmethod
    def _made(cls, objs: list[QTensor], kinds: array[int] | None, vals: array[int] | None,
              makers: Sequence[Replays], home: str | None) -> QList:
        out = cls((), home)
        out._objs, out._kinds, out._vals, out._makers = objs, kinds, vals, tuple(makers)
        return out

    # --- reading

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
                return QList(self._objs[i], self.home)
            # the objects list is shared: neither list changes
            out = QList._made(self._objs, kinds[i], vals[i], self._makers, self.home)
            out._roles = self._roles[i] if self._roles is not None else None
            return out
        if kinds is None or vals is None:
            return self._objs[i]
        k, v = kinds[i], vals[i]
        if k < 0:
            return self._objs[v]
        return self._makers[k].make(v, self.home,
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
        """Each tensor's name, in order, without making the tensors."""
        return self._scatter(lambda m, gs: m.names(gs), _NAME_OF)

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
        out._objs, out._makers = objs, list(makers)
        out._maker_ix = {m: k for k, m in enumerate(out._makers)}
        out._kinds, out._vals = kinds, vals
        return out

    def build(self) -> QList:
        """The finished list (the builder takes no more tensors)."""
        self._built = True
        return QList._made(self._objs, self._kinds, self._vals, self._makers, self.home)

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
        # the tensors so far, read at once by the two methods below (the
        # list shares the builder's columns, so it is never handed out)
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
            self._objs, self._makers = [], list(makers)
            self._maker_ix = {m: k for k, m in enumerate(self._makers)}
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
            self._objs, self._makers = list(items._objs), list(items._makers)
            self._maker_ix = {m: k for k, m in enumerate(self._makers)}
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
    manifest lists 25,000 entries (issue 15) that are compared by name and
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


class Inferred(NamedTuple):
    """What ``conventions.infer`` found over a file's or a model's columns:
    the quantised tensors, the issues (in the order found), and the count
    of every unquantised stored tensor by dtype (in the order first seen)."""

    quantized: QList
    issues: list[Issue]
    unquantized: dict[str, int]


@dataclass(frozen=True)
class Artifact:
    """One scanned file (or manifest) and everything read from it: made
    whole by its reader (``ArtifactDraft.finish``) and never edited after;
    a later stage that adds to it (grouping into models, a manifest's
    expectations) makes a new one (``dataclasses.replace``)."""

    path: str  # display path, relative to the scan root
    abs_path: str
    format: Format
    size: int = 0
    tensors: Sequence[StoredTensor] = ()
    quantized: QList = field(default_factory=QList)
    unquantized: Mapping[str, int] = field(default_factory=dict)  # dtype -> count
    metadata: Mapping[str, Any] = field(default_factory=dict)
    issues: tuple[Issue, ...] = ()
    producer: str | None = None
    group: str | None = None  # the checkpoint (directory) this file belongs to
    parsed: bool = True  # False when the file could not be parsed at all
    # the model this file is part of (parsers/models.py): a safetensors shard
    # set, a GGUF split set, a single file; and, in a Hugging Face cache, the
    # repository ("org/name") and revision it was found under
    model: str | None = None
    repo: str | None = None
    revision: str | None = None
    # tensor names a GRIT header already describes (not inferred again)
    claimed: frozenset[str] = frozenset()
    # (device, inode, size, mtime) of the local file its header was read from:
    # --deep refuses to read a different file under the same name
    identity: tuple[int, int, int, int] | None = None

    def tensor_names(self) -> Sequence[str]:
        """The stored tensors' names (columns: no records are built)."""
        if isinstance(self.tensors, TensorTable):
            return self.tensors.names
        return [t.name for t in self.tensors]

    def tensor_dtypes(self) -> Sequence[str]:
        """The stored tensors' dtypes (columns: no records are built)."""
        if isinstance(self.tensors, TensorTable):
            return self.tensors.dtypes
        return [t.dtype for t in self.tensors]

    def tensor_kinds(self) -> Iterable[tuple[str, str, int]]:
        """(name, dtype, rank) of every stored tensor, from the columns when
        there are columns (no records are built)."""
        if isinstance(self.tensors, TensorTable):
            return zip(self.tensors.names, self.tensors.dtypes, self.tensors.ranks)
        return ((t.name, t.dtype, len(t.shape)) for t in self.tensors)

    def tensors_nbytes(self) -> Sequence[int]:
        """The bytes each stored tensor's header entry claims."""
        if isinstance(self.tensors, TensorTable):
            return self.tensors.nbytes
        return [t.nbytes for t in self.tensors]


@dataclass
class ArtifactDraft:
    """An ``Artifact`` while its reader fills it in: the same fields, the
    containers open, and ``issue`` to record a problem.  Only the parsers
    layer makes one; ``finish`` is the Artifact every later stage sees."""

    path: str
    abs_path: str
    format: Format
    size: int = 0
    tensors: Sequence[StoredTensor] = field(default_factory=list)
    quantized: QListBuilder = field(default_factory=QListBuilder)
    unquantized: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    producer: str | None = None
    group: str | None = None
    parsed: bool = True
    claimed: set[str] = field(default_factory=set)
    identity: tuple[int, int, int, int] | None = None

    def add(self, found: Issue) -> None:
        self.issues.append(found)


    def finish(self) -> Artifact:
        """The artifact as read (a list of stored tensors becomes a tuple)."""
        tensors = self.tensors
        return Artifact(self.path, self.abs_path, self.format, self.size,
                        tensors if isinstance(tensors, TensorTable) else tuple(tensors),
                        self.quantized.build(), self.unquantized, self.metadata,
                        tuple(self.issues),
                        self.producer, self.group, self.parsed, claimed=frozenset(self.claimed),
                        identity=self.identity)


@dataclass(frozen=True)
class ScanInput:
    """Everything the readers produced for one scan: made whole by the
    collector (``ScanDraft.finish``), read by the rules, never edited."""

    roots: tuple[str, ...]
    artifacts: tuple[Artifact, ...] = ()
    declared: Mapping[str, dict[str, Any]] = field(default_factory=dict)  # group -> config
    skipped: tuple[Issue, ...] = ()
    deep: bool = False
    tracebacks: tuple[str, ...] = ()  # contained read errors (--debug)
    # remote files of this scan: abs_path -> a function that reopens it as a
    # ByteSource (--deep streams their tensors); dropped with the scan
    sources: Mapping[str, Callable[[], Any]] = field(default_factory=dict)


@dataclass
class ScanDraft:
    """A ``ScanInput`` while the collector reads it (parsers/tree.py,
    parsers/remote/collect.py): the same fields, open lists and maps."""

    roots: list[str]
    artifacts: list[Artifact] = field(default_factory=list)
    declared: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: list[Issue] = field(default_factory=list)
    deep: bool = False
    tracebacks: list[str] = field(default_factory=list)
    sources: dict[str, Callable[[], Any]] = field(default_factory=dict)

    def finish(self) -> ScanInput:
        return ScanInput(tuple(self.roots), tuple(self.artifacts), self.declared,
                         tuple(self.skipped), self.deep, tuple(self.tracebacks), self.sources)


class PlaneReader(Protocol):
    """Tensor bytes for the ``--deep`` rules, handed in by the parsers layer
    (parsers/planes.py), so that no rule opens or reads a file itself."""

    def read(self, offset: int, n: int, file: str | None = None) -> bytes:
        """Up to ``n`` bytes at absolute offset ``offset`` of the artifact's
        file, or of ``file`` (another shard of the same model, PlaneRef.file)."""
        ...

    def stored_planes(self, q: QTensor) -> list[tuple[int, Iterable[bytes]]]:
        """The four planes (data, scale0, scale1, aux) as stored, each as its
        byte length and a stream of bounded chunks (§6.5 digests them in this
        form; BLOCK_AOS payloads are de-interleaved)."""
        ...

    def reference(self) -> tuple[bool, str] | None:
        """The format's reference loader's verdict on the file: (opens, its
        message when it refuses), or None when it cannot be asked."""
        ...

    def digests(self, qs: Sequence[QTensor]) -> list[bytes | GritError | ValueError]:
        """The §6.5 digest of each tensor's stored planes, in order (several
        at a time where the source allows), or the error that stopped it."""
        ...
