"""The format-neutral artifact model: what readers produce and rules consume.

Readers turn files into ``Artifact`` objects: every on-disk tensor
(``StoredTensor``), every quantised logical tensor with the descriptor
recovered or inferred for it and where it came from (``QTensor``), the
declared quantisation, and ``Issue`` records for what the reader found wrong.
An ``Issue`` carries a stable code (``IssueCode``); the rules layer maps codes
to finding kinds and severities.  Nothing here does I/O or reporting.

The per-tensor records are in records.py, and the columns that keep many of
them (``TensorTable``, ``PlaneSeq``, ``QList``) in columns.py; this module
gathers them into an ``Artifact`` and a scan's ``ScanInput``, and names
them all (``__all__``), so the other layers import the model from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from .codec.errors import GritError
from .columns import (
    PlaneSeq,
    QList,
    QListBuilder,
    Recorded,
    Replays,
    TensorTable,
    nbytes_map,
    plane_bytes,
    shape_list,
)
from .issues import Issue
from .records import NO_LAYOUTS, Format, PlaneRef, QTensor, ReadError, Source, StoredTensor

__all__ = [
    "NO_LAYOUTS", "Artifact", "ArtifactDraft", "Format", "Inferred", "IssueLog", "PlaneReader",
    "PlaneRef", "PlaneSeq", "QList", "QListBuilder", "QTensor", "ReadError", "Recorded",
    "Replays", "ScanDraft", "ScanInput", "Source", "StoredTensor", "TensorTable", "nbytes_map",
    "plane_bytes", "shape_list",
]


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
