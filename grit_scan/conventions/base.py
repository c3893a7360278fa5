"""The ``Convention`` base class, its registry, and what a convention is
handed for one module (``Ctx``) with the helpers every convention shares.

A convention is one module under ``conventions/kinds/`` holding one
``Convention`` subclass; defining the class registers it (as gguf-py's
``quants.py`` registers its quant types).  ``registered()`` imports every
module of that package once and returns the conventions in their explicit
precedence: the first whose ``claims`` accepts a module's parts infers it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ..artifact import IssueLog, PlaneRef, QListBuilder, QTensor, Source, StoredTensor
from ..codec import descriptor as desc_mod
from ..codec.grade import Grade
from ..issues.not_representable import NotRepresentable
from ..names import Declared

if TYPE_CHECKING:
    from .engine import Columns, PlanReplays

Parts = dict[str, str]  # a module's parts: suffix -> stored tensor name


class Convention:
    """One producer's convention: how to recognise it, what it is in GRIT
    terms, and what of its declaration the bytes check.  The class
    attributes are what docs/conventions.md tabulates."""

    # the name the registry and docs/conventions.md know it by
    name: ClassVar[str] = ""
    # lower first: the first convention whose ``claims`` accepts a module infers it
    precedence: ClassVar[int] = 0
    producers: ClassVar[str] = ""
    versions_tested: ClassVar[str] = ""
    # recognition: the suffixes that attach its stored tensors to their
    # module, the declared quant_method / format / quant_algo values naming
    # it, and the safetensors dtypes of its parts
    suffixes: ClassVar[tuple[str, ...]] = ()
    declared_as: ClassVar[tuple[str, ...]] = ()
    dtypes: ClassVar[tuple[str, ...]] = ()
    # the ``convention`` values its QTensors carry
    conventions: ClassVar[tuple[str, ...]] = ()
    # plane plan: which stored tensor is which GRIT plane
    planes: ClassVar[str] = ""
    # the grade (representable), or the spec clause and reason it is not
    grade: ClassVar[str] = ""
    not_representable: ClassVar[tuple[str, str] | None] = None
    # the declared parameters the bytes are checked against
    checks: ClassVar[tuple[str, ...]] = ()
    # decode: equal to the producer's dequantiser, or refused and why
    decode: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:
            raise TypeError(f"{cls.__qualname__}: a convention needs a name")
        if cls.name in _REGISTRY:
            raise TypeError(f"convention {cls.name!r} is defined twice")
        _REGISTRY[cls.name] = cls

    @classmethod
    def claims(cls, ctx: Ctx, parts: Parts) -> bool:
        """True when this module's parts are this convention's."""
        raise NotImplementedError

    @classmethod
    def value_bits(cls, declared: Declared | None) -> int | None:
        """The width of the values each element code holds, when the
        convention stores narrower values in a wider code (None: the code's
        own width).  The --deep probes judge the codes' reach against it."""
        return None

    @classmethod
    def infer(cls, ctx: Ctx, mod: str, parts: Parts) -> None:
        """Add the module's QTensor (or issues) to ``ctx``."""
        raise NotImplementedError


# name -> class, filled as the kind modules are imported (class definitions:
# the same for every scan, nothing a scan writes)
_REGISTRY: dict[str, type[Convention]] = {}


@functools.cache
def registered() -> tuple[type[Convention], ...]:
    """Every convention, in precedence order (each kind module imported once)."""
    from . import kinds as pkg

    for m in pkgutil.iter_modules(pkg.__path__):
        if not m.name.startswith("_"):
            importlib.import_module(f"{pkg.__name__}.{m.name}")
    out = tuple(sorted(_REGISTRY.values(), key=lambda c: c.precedence))
    seen: dict[int, str] = {}
    for c in out:
        if c.precedence in seen:
            raise TypeError(f"conventions {seen[c.precedence]!r} and {c.name!r} share "
                            f"precedence {c.precedence}: their order would be arbitrary")
        seen[c.precedence] = c.name
    return out


# Declared keys as the registry's ``declared_as`` names them
_DECLARED_KEYS = (("method", "quant_method"), ("format", "format"), ("quant_algo", "quant_algo"))


# compressed-tensors' formats that store no quantised tensor: "dense" (the
# model's tensors as they are: floats, quantisation parameters beside them)
# and "mixed-precision", which only says its config groups differ
CT_UNCOMPRESSED, CT_MIXED = "dense", "mixed-precision"


def ct_formats(declared: Declared) -> list[str]:
    """The storage formats a compressed-tensors declaration names: its
    config groups' and the top-level one (``mixed-precision`` left out)."""
    got = declared.get("formats") or [declared.get("format")]
    return [f for f in got if isinstance(f, str) and f != CT_MIXED]


# the tensors compressed-tensors' sparsity compressors write beside each
# weight (BitmaskCompressor, Sparse24BitMaskCompressor: ``<weight>.compressed``,
# ``.bitmask``, ``.row_offsets``, and ``.shape``), by their last name component
CT_SPARSE_PARTS = frozenset({"compressed", "bitmask", "row_offsets"})


def ct_sparsity(declared: Declared) -> str | None:
    """The ``sparsity_config`` format of a compressed-tensors declaration
    that compresses (not ``dense``), or None."""
    raw = declared.get("raw")
    sp = raw.get("sparsity_config") if isinstance(raw, dict) else None
    fmt = sp.get("format") if isinstance(sp, dict) else None
    if declared.get("method") != "compressed-tensors" or not isinstance(fmt, str) \
            or fmt == CT_UNCOMPRESSED:
        return None
    return fmt


def sparse_parts(names: Iterable[str]) -> int:
    """How many of ``names`` are tensors a sparsity compressor wrote."""
    return sum(n.rpartition(".")[2] in CT_SPARSE_PARTS for n in names)


def recognised(declared: Declared) -> bool:
    """True when a declared quant_method, format or quant_algo names a
    registered convention (docs/conventions.md, "declared as").  A
    compressed-tensors declaration names its storage by format: one that
    names a format no convention reads (``marlin-24``) is not recognised,
    whatever its quant_method (``dense``, uncompressed storage, is)."""
    known = {d for c in registered() for d in c.declared_as}
    if declared.get("method") == "compressed-tensors" and any(
            f != CT_UNCOMPRESSED and f"format={f}" not in known for f in ct_formats(declared)):
        return False
    if any(isinstance(declared.get(key), str) and f"{name}={declared[key]}" in known
           for key, name in _DECLARED_KEYS):
        return True
    # fields the normalised declaration does not keep (MLX's "mode"), as written
    raw = declared.get("raw")
    return isinstance(raw, dict) and any(
        f"{k}={v}" in known for k, v in raw.items() if isinstance(v, str))


def declared_name(declared: Declared) -> str:
    """What a declaration names: its quant_algo, format or quant_method, else
    the fields it gives."""
    for key, name in reversed(_DECLARED_KEYS):
        if isinstance(declared.get(key), str) and declared[key]:
            return f"{name} {declared[key]!r}"
    given = ", ".join(f"{k} {declared[k]}" for k in ("bits", "group_size")
                      if declared.get(k) is not None)
    return f"quantisation without a quant_method ({given or 'no fields grit reads'})"


def by_convention(convention: str | None) -> type[Convention] | None:
    """The convention whose tensors carry this ``convention`` value."""
    for c in registered():
        if convention in c.conventions:
            return c
    return None


def claiming(ctx: Ctx, parts: Parts) -> type[Convention] | None:
    """The convention that infers a module with these parts, or None."""
    for conv in registered():
        if conv.claims(ctx, parts):
            return conv
    return None


@dataclass
class Ctx:
    """What a convention is given for one module of a model."""

    art: IssueLog  # where its issues go (``ctx.art.issue``); no artifact is edited
    cols: Columns
    declared: Declared | None
    role: Callable[[str], str]
    out: QListBuilder
    used: bytearray  # 1 at the position of every tensor a convention consumed
    # the module being looked at: its parts' records and positions, by name
    tensors: dict[str, StoredTensor] = field(default_factory=dict)
    at: dict[str, int] = field(default_factory=dict)
    # one int object per distinct byte length among the planes referenced
    # (a model repeats a handful): memory per quantised tensor
    lengths: dict[int, int] = field(default_factory=dict)
    # the PlanReplays of each plan replayed, by the plan's id
    makers: dict[int, PlanReplays] = field(default_factory=dict)
    # each replayed module's row in its PlanReplays, by its anchor's position
    _rows: array[int] | None = None

    def rows(self) -> array[int]:
        """The row array the model's PlanReplays share (one entry per column)."""
        if self._rows is None:
            self._rows = array("i", bytes(4 * len(self.cols)))
        return self._rows

    def look_at(self, sufs: tuple[str, ...], gs: tuple[int, ...]) -> dict[str, str]:
        """Make the module whose parts are ``sufs`` at positions ``gs`` the
        one looked at; returns its parts by name (suffix -> tensor name)."""
        names = list(map(self.cols.names.__getitem__, gs))
        self.at = dict(zip(names, gs))
        self.tensors = dict(zip(names, map(self.cols.row, gs)))
        return dict(zip(sufs, names))

    def dtype(self, name: str | None) -> str | None:
        """The dtype of a part (None: no such part)."""
        return self.tensors[name].dtype if name else None

    def ref(self, name: str, broadcast: int = 1) -> PlaneRef:
        return self.ref_at(self.at[name], broadcast)

    def ref_at(self, g: int, broadcast: int = 1) -> PlaneRef:
        c = self.cols
        n = c.available[g]
        return PlaneRef(c.names[g], c.offsets[g], self.lengths.setdefault(n, n), broadcast,
                        c.file(g))

    def add(self, q: QTensor, *names: str) -> None:
        """Append ``q``, built whole (``new_q``: with this module's declared
        quantisation), and mark ``names`` consumed."""
        self.out.append(q)
        for n in names:
            if n:
                self.used[self.at[n]] = 1


def new_q(ctx: Ctx, mod: str, name: str, shape: tuple[int, ...], grade: Grade | None,
          convention: str, group_axis: int = -1, *,
          planes: Sequence[PlaneRef | None] | None = None, notes: tuple[str, ...] = (),
          reason: str | None = None) -> QTensor:
    """A QTensor of ``mod``, whole: inferred with its descriptor when
    ``grade`` is given, with its planes, notes and reason, and the declared
    quantisation that applies (``ctx.declared``).  QTensors are frozen: a
    convention works out everything first, then builds one and ``ctx.add``s it."""
    d = None
    if grade is not None:
        d = descriptor(grade, group_axis % len(shape) if shape else 0)
    return QTensor(name=name, role=ctx.role(mod), shape=shape,
                   source=Source.INFERRED if grade is not None else Source.NONE,
                   desc=d, grade=grade, convention=convention, reason=reason, planes=planes,
                   notes=notes, declared=ctx.declared)


def not_representable(ctx: Ctx, mod: str, name: str, shape: tuple[int, ...], convention: str,
                      clause: str, reason: str, names: list[str], grade: Grade | None = None,
                      group_axis: int = -1, *, planes: Sequence[PlaneRef | None] | None = None,
                      notes: tuple[str, ...] = (), **detail: object) -> QTensor:
    """A recognised tensor GRIT v1 cannot express: its QTensor (with
    ``planes``) carries the reason, then ``notes``, and the artifact a
    not_representable issue citing ``clause``."""
    q = new_q(ctx, mod, name, shape, grade, convention, group_axis, planes=planes,
              notes=(reason, *notes), reason=reason)
    ctx.add(q, *names)
    ctx.art.add(NotRepresentable(name, reason,
                                 {"clause": clause, "convention": convention, **detail}))
    return q


_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {}


def same(shape: tuple[int, ...]) -> tuple[int, ...]:
    """One tuple per distinct shape: a checkpoint repeats a handful of shapes
    for every layer (memory per tensor).  Bounded."""
    got = _SHAPES.get(shape)
    if got is not None:
        return got
    if len(_SHAPES) < 4096:
        _SHAPES[shape] = shape
    return shape


@functools.lru_cache(maxsize=1024)
def descriptor(grade: Grade, group_axis: int) -> desc_mod.Descriptor:
    # positional and memoised here: lru_cache keys keyword arguments slowly,
    # and a convention asks once per module
    return desc_mod.from_grade(grade, group_axis)
