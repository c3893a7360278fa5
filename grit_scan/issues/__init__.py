"""What a reader or a convention finds wrong: one frozen record per situation.

Like safetensors' one error type with named variants: ``Issue`` is the type,
and each situation is a subclass with typed fields (the numbers, names and
shapes involved), its ``IssueCode`` and ``TEXT``, the one message template
of that situation. Nothing that finds an issue writes its prose: the
message is rendered from the fields when a rule or a report asks for it
(``message``), so a scan that finds one issue per module holds its fields,
not its sentence. ``detail`` is the machine-readable part the JSON report
carries: the fields named in ``DETAIL``, in that order (or a variant's own).

The finding kind owns its messages: the variants that ``rules/kinds/X.py``
reports are in ``issues/X.py``, whose ``CODES`` are the codes that rule
reports, and docs/findings.md shows them on that kind's section (generated,
``rules/docs.py``). ``issues/notes.py`` holds the notes, which the report
lists without a finding. Where the words come from an error raised below
(a parser's ParseError, the OS, the codec's refusal), the variant carries
that text as its ``error`` field and names the situation around it.

A variant that names a tensor has ``tensor`` as its first field, so that
convention inference can replay it for another module with the same plan
(``renamed``; conventions/engine.py).
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec


class IssueCode(str, enum.Enum):
    """What a reader can find wrong; rules map each to a finding kind."""

    UNPARSEABLE = "unparseable"  # the file cannot be read as its format at all
    TRUNCATED = "truncated"  # a tensor's bytes run past the end of the file
    BAD_OFFSETS = "bad_offsets"  # gaps, overlaps, trailing bytes, misalignment
    BAD_TENSOR = "bad_tensor"  # shape x dtype != bytes, unknown dtype, overflow
    DUPLICATE = "duplicate"  # a key or tensor name twice
    GRIT_HEADER = "grit_header"  # a malformed __grit__ header or grit.* key
    SIZE = "size"  # a convention's byte equation fails (plane sizes)
    NOT_REPRESENTABLE = "not_representable"  # a convention GRIT v1 cannot express
    UNSUPPORTED = "unsupported_convention"  # quantised-looking tensors no convention claims
    MISSING_SHARD = "missing_shard"
    INDEX_INCONSISTENT = "index_inconsistent"
    PATH_ESCAPE = "path_escape"
    CHANGED = "changed_during_read"
    SKIPPED = "skipped"  # not a regular file, symlink out of root, unreadable
    NOTE = "note"  # informational
    INTERNAL_ERROR = "internal_error"  # a reader raised: contained to this file
    REFERENCE = "reference_loader"  # the format's reference loader's verdict (parsers/reference.py)


# what a GGUF message says when llama.cpp's loader stops at the problem
LLAMA_CPP_REFUSES = "llama.cpp refuses to load this file"


class _Fields:
    """A variant's fields (and properties) by name, for ``str.format_map``."""

    __slots__ = ("of",)

    def __init__(self, of: object) -> None:
        self.of = of

    def __getitem__(self, name: str) -> Any:
        return getattr(self.of, name)


def shape(dims: tuple[int, ...] | list[int]) -> str:
    """A shape as the messages write it: ``[256, 512]``."""
    return str(list(dims))


class Issue(msgspec.Struct, frozen=True, gc=False):
    """The base of every variant (not instantiated itself).

    A variant is a frozen record: a ``msgspec.Struct`` (slotted, compared
    and hashed by its fields, positional and keyword construction, its
    fields in ``__struct_fields__``), declared like a dataclass.  Not a
    dataclass: creating 125 of those cost about 55 ms of every grit
    process's start-up (docs/performance.md, "Stop 38"), 125 Structs about
    1.5 ms.  ``gc=False``: an issue's fields are strings, numbers and
    tuples or mappings of them, never a cycle, so the cyclic collector
    need not track the one issue a module a not-representable model has."""

    CODE: ClassVar[IssueCode]
    TEXT: ClassVar[str]  # str.format template over the variant's fields
    DETAIL: ClassVar[tuple[str, ...]] = ()  # fields (or properties) that form ``detail``

    if TYPE_CHECKING:
        @property
        def tensor(self) -> str | None: ...

        @property
        def code(self) -> IssueCode: ...

    def __init_subclass__(cls, **kw: Any) -> None:
        # ``code`` is read for every issue by every rule that filters them:
        # a class attribute, not a property
        super().__init_subclass__(**kw)
        if "CODE" in cls.__dict__:
            setattr(cls, "code", cls.CODE)  # noqa: B010  (mypy: a property in its eyes)

    @property
    def message(self) -> str:
        return self.TEXT.format_map(_Fields(self))

    @property
    def detail(self) -> Mapping[str, Any]:
        # a variant that keeps its detail whole has a field of this name
        return {k: getattr(self, k) for k in self.DETAIL}

    def renamed(self, tensor: str) -> Issue:
        """The same issue for the tensor ``tensor`` (variants whose first
        field is ``tensor``)."""
        names: tuple[str, ...] = self.__struct_fields__
        assert names and names[0] == "tensor", type(self).__name__
        cls: Any = type(self)
        made: Issue = cls(tensor, *[getattr(self, n) for n in names[1:]])
        return made

    def others(self) -> tuple[Any, ...]:
        """Every field's value but ``tensor``'s."""
        names: tuple[str, ...] = self.__struct_fields__
        return tuple(getattr(self, n) for n in names if n != "tensor")


def modules() -> list[ModuleType]:
    """This package's modules, one per finding kind (and the notes): for the
    docs and their tests."""
    return [importlib.import_module(f"{__name__}.{info.name}")
            for info in pkgutil.iter_modules(__path__)]


def variants(module: ModuleType) -> list[type[Issue]]:
    """The situations ``module`` defines, in its order."""
    return [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, Issue)
            and c.__module__ == module.__name__ and "TEXT" in c.__dict__]
