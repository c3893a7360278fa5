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
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: object) -> Any:
        return lambda cls: cls

_T = TypeVar("_T")



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


_NO_DEFAULT: Any = object()


class _Factory:
    """``field(default_factory=...)``'s marker: the default made anew per record."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is made anew for each record (as dataclasses'
    ``field(default_factory=...)``)."""
    return cast("_T", _Factory(default_factory))  # typed as the field's value, for mypy


def _constructor(cls: type) -> Callable[..., None]:
    """``cls``'s ``__init__``: its fields as parameters, in order, with their
    defaults, each stored as it is (what a dataclass's generated
    ``__init__`` does).  Made when the variant's first record is, so that
    a process pays for the variants it makes, not for all 125 (start-up):
    a record then costs about what a dataclass's does."""
    fields: tuple[str, ...] = getattr(cls, "FIELDS")  # noqa: B009  (set by _RecordType)
    defaults: dict[str, Any] = getattr(cls, "_DEFAULTS")  # noqa: B009
    env: dict[str, Any] = {"_put": object.__setattr__, "_NO_DEFAULT": _NO_DEFAULT}
    params, body = [], []
    for name in fields:
        if name not in defaults:
            params.append(name)
        elif type(defaults[name]) is _Factory:
            env[f"_make_{name}"] = defaults[name].make
            params.append(f"{name}=_NO_DEFAULT")
            body.append(f" if {name} is _NO_DEFAULT: {name} = _make_{name}()")
        else:
            env[f"_default_{name}"] = defaults[name]
            params.append(f"{name}=_default_{name}")
        body.append(f" _put(self, {name!r}, {name})")
    text = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or [" pass"])
    exec(text, env)  # noqa: S102  (names are the class's own identifiers)
    init: Callable[..., None] = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _class_var(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class _RecordType(type):
    """Makes each variant a slotted record of the fields its class body
    annotates (``ClassVar``s apart), after those of the variant it extends.

    Declared like a dataclass and read by mypy as one (``dataclass_transform``),
    but cheaper to make: 125 dataclasses cost about 55 ms of every grit
    process's start-up, and msgspec's ``Struct``, which stop 38 used
    instead, about 18 ms for importing msgspec (docs/performance.md, "Stop
    39"); these 125 classes cost well under 1 ms, and a variant's
    constructor is made when its first record is (``_first_init``)."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> _RecordType:
        fields: tuple[str, ...] = ()
        defaults: dict[str, Any] = {}
        for base in bases:
            fields += getattr(base, "FIELDS", ())
            defaults.update(getattr(base, "_DEFAULTS", {}))
        if "__annotate__" in ns and "__annotations__" not in ns:
            # Python 3.14's deferred annotations: the fields are read from the
            # class body's annotations as text
            raise TypeError(f"{name}: declare variants under "
                            "'from __future__ import annotations'")
        own = [k for k, t in ns.get("__annotations__", {}).items()
               if not _class_var(t) and k not in fields]
        for k in own:
            if k in ns:
                defaults[k] = ns.pop(k)
            elif defaults:
                raise TypeError(f"{name}: field {k!r} has no default but follows one that has")
        ns["__slots__"] = tuple(own)
        ns["FIELDS"] = fields + tuple(own)
        ns["_DEFAULTS"] = defaults
        ns.setdefault("__init__", _first_init)  # each variant its own constructor
        return super().__new__(mcls, name, bases, ns)


def _first_init(self: Any, *args: Any, **kw: Any) -> None:
    """A variant's ``__init__`` until its first record: makes the variant's
    constructor (``_constructor``), which replaces it, and uses it."""
    cls = type(self)
    init = _constructor(cls)
    type.__setattr__(cls, "__init__", init)
    init(self, *args, **kw)


class Issue(metaclass=_RecordType):
    """The base of every variant (not instantiated itself).

    A variant is a frozen record declared as a dataclass is: slotted,
    compared (same variant, equal fields) and hashed by its fields, made
    positionally or by keyword, its fields in ``FIELDS``.  The record
    machinery is ``_RecordType`` above, plain Python."""

    __slots__ = ()
    FIELDS: ClassVar[tuple[str, ...]]
    _DEFAULTS: ClassVar[dict[str, Any]]
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

    def values(self) -> tuple[Any, ...]:
        """The fields' values, in ``FIELDS`` order."""
        return tuple([getattr(self, n) for n in self.FIELDS])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.values() == other.values()

    def __hash__(self) -> int:
        return hash((type(self), self.values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled across --jobs processes: made again by the constructor
        return (type(self), self.values())

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
        assert self.FIELDS[:1] == ("tensor",), type(self).__name__
        cls: Any = type(self)
        made: Issue = cls(tensor, *self.values()[1:])
        return made

    def others(self) -> tuple[Any, ...]:
        """Every field's value but ``tensor``'s."""
        return tuple(getattr(self, n) for n in self.FIELDS if n != "tensor")


def modules() -> list[ModuleType]:
    """This package's modules, one per finding kind (and the notes): for the
    docs and their tests."""
    return [importlib.import_module(f"{__name__}.{info.name}")
            for info in pkgutil.iter_modules(__path__)]


def variants(module: ModuleType) -> list[type[Issue]]:
    """The situations ``module`` defines, in its order."""
    return [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, Issue)
            and c.__module__ == module.__name__ and "TEXT" in c.__dict__]
