"""The reader interface: every input format is one reader over a ByteSource.

* ``ByteSource``: where bytes come from (a local file today, a ranged HTTP
  or fsspec source later): ``name``, ``size``, ``read_at(offset, n)``.
* ``Reader``: the abstract base class of the checkpoint readers, one per
  format: ``sniff(head, name, size)`` says whether it owns a file from its
  first bytes, ``claims(name)`` whether its name says so, and ``read`` turns
  a source into a finished ``Artifact``.

``parsers/readers.py`` lists the readers (``CHECKPOINT_READERS``, typed as
``Reader``s); ``parsers/tree.py`` and ``parsers/remote/collect.py`` dispatch
through that tuple, and nothing else compares format names.  A reader
never raises for file contents: problems become ``Issue`` records on the
artifact (``parsed=False`` when nothing could be read).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar, NamedTuple, Protocol, TypeVar

from ..artifact import Artifact, ArtifactDraft, Format, ReadError
from ..codec.errors import GritError
from ..issues.file_unparseable import ChangedWhileRead, ParseFailed, Unreadable
from ..issues.not_representable import UnsupportedFile
from ..names import Declared
from .fileio import ReadMeter

SNIFF_BYTES = 16  # what sniff() is given of a file's head
T = TypeVar("T")


class ParseError(GritError):
    """A file that cannot be read as its format at all: the one error type
    every reader's header parser raises (its message says why), which the
    reader turns into an UNPARSEABLE issue (parsers/readers.py)."""


class Unsupported(ParseError):
    """The variant for a valid file of a form the reader does not represent
    (a big-endian GGUF): one clear line, not a structural finding."""


class ByteSource(Protocol):
    """Random-access, read-only bytes with a known size."""

    @property
    def name(self) -> str: ...

    @property
    def size(self) -> int: ...

    def read_at(self, offset: int, n: int) -> bytes:
        """Up to ``n`` bytes at ``offset``; fewer only at the end."""
        ...

    def changed(self) -> str | None:
        """Why the source is no longer the one opened, or None."""
        ...


def default_role(module: str) -> str:
    return module if module.endswith(".weight") else module + ".weight"


class ReadContext(NamedTuple):
    """What a reader knows besides the bytes: how to show the file, the
    declared quantisation of its directory and its operand-role mapper (for
    the tensors the file's own GRIT records describe; conventions are
    inferred per model, after grouping: parsers/models.py).  A NamedTuple,
    not a frozen dataclass: every scan imports this module (start-up)."""

    display: str
    abs_path: str
    declared: Declared | None = None
    role: Callable[[str], str] = default_role
    # the scan's byte counter (fileio.ReadMeter), if it keeps one
    meter: ReadMeter | None = None
    # the checkpoint (directory) the file belongs to: the reader builds the
    # artifact with it, so no one sets it afterwards
    group: str | None = None


class Reader(ABC):
    """One checkpoint format: a subclass sets ``format`` and implements the
    three methods.  Readers hold no state: one instance serves every scan."""

    __slots__ = ()

    format: ClassVar[Format]

    @abstractmethod
    def sniff(self, head: bytes, name: str, size: int) -> bool:
        """True when this reader owns the file (from its first
        ``SNIFF_BYTES`` bytes and its size)."""

    @abstractmethod
    def claims(self, name: str) -> bool:
        """True when a file of this name is this format even if its bytes
        are broken (so the reader can say why)."""

    @abstractmethod
    def read(self, source: ByteSource, ctx: ReadContext) -> Artifact:
        """The artifact read from ``source``; never raises for file
        contents (problems are issues on the artifact)."""


def read_checked(art: ArtifactDraft, source: ByteSource,
                 read: Callable[[ByteSource, ArtifactDraft], T]) -> T | None:
    """Read a file's header with ``read`` (every reader's one way to turn
    its parser's errors into issues), check that the source did not change
    meanwhile.  None (with an issue on ``art``) when it could not: a
    ``ParseError`` for a malformed header, its ``Unsupported`` variant for a
    valid file the reader cannot represent."""
    art.size = source.size
    art.identity = getattr(source, "identity", None)
    try:
        hdr = read(source, art)
        why = source.changed()
    except Unsupported as exc:
        # one clear line, not a structural finding: the file may be fine
        art.parsed = False
        art.add(UnsupportedFile(None, str(exc)))
        return None
    except ParseError as exc:
        art.parsed = False
        art.add(ParseFailed(None, str(exc)))
        return None
    except ReadError as exc:
        art.parsed = False
        art.add(Unreadable(None, str(exc)))
        return None
    if why:
        art.add(ChangedWhileRead(None, why, "the numbers read from it cannot be trusted"))
    return hdr
