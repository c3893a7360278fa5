"""Option values that need no conversion skip typer's pydantic adapters.

Typer (0.29) converts every parameter value but a flag's, defaults and
missing values included, through a pydantic ``TypeAdapter`` built when the
parameter first processes a value: any command with an ``int`` or ``str``
option imports pydantic and builds a schema per option, most of the
start-up cost of ``grit scan FILE``.  Most values need no conversion at all:
a default of the annotated type, a ``str`` given on the command line for a
``str`` option, a tuple of strings for ``list[str]``, a missing value, an
enum option's string that is exactly one member's value.

``direct_command(cmd)`` wraps each such parameter's ``process_value`` (click's
public per-parameter hook): values like those are returned as typer's
adapter would return them (the same value; a list for ``list[str]``; ``()``
or None for a missing value; the enum member a choice names), then checked
for being required and passed to the parameter's callback as typer does;
a string for a path option without constraints becomes ``pathlib.Path`` of
it, as typer's adapter makes it; every other value (``--jobs 4``: a string
for an int, a choice that names no member) goes to typer's own
``process_value``, so conversions and
their error messages are typer's.  What a parameter is declared as is read
from the command function's signature (its annotation and its
``typer.Option``/``typer.Argument``).  tests/test_startup.py holds the
shortcut to typer's own results, value by value.
"""

from __future__ import annotations

import enum
import inspect
import pathlib
import types
import typing
from collections.abc import Callable
from typing import Any, get_args, get_origin

from typer.models import ParameterInfo

# Sentinel: the value needs typer's conversion.
CONVERT = object()


def declared(function: Callable[..., Any]) -> dict[str, tuple[Any, ParameterInfo]]:
    """Each parameter of a command function: (its annotation without ``None``
    in a union, its typer.Option/Argument), for parameters that have one."""
    function = inspect.unwrap(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError):
        return {}
    out: dict[str, tuple[Any, ParameterInfo]] = {}
    for name, par in inspect.signature(function).parameters.items():
        annotation = hints.get(name, Any)
        info = par.default
        if get_origin(annotation) is typing.Annotated:
            base, *extras = get_args(annotation)
            annotation = base
            info = next((e for e in extras if isinstance(e, ParameterInfo)), info)
        if not isinstance(info, ParameterInfo):
            continue
        if get_origin(annotation) in (typing.Union, types.UnionType):
            rest = [a for a in get_args(annotation) if a is not type(None)]
            annotation = rest[0] if len(rest) == 1 else annotation
        out[name] = (annotation, info)
    return out


def _is_enum(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, enum.Enum)


def plain(annotation: Any, info: ParameterInfo, value: Any) -> bool:
    """True when typer's adapter would return ``value`` unchanged (a list of
    the same strings for ``list[str]``)."""
    if info.parser is not None:
        return False
    if get_origin(annotation) is list:
        return (get_args(annotation) == (str,) and isinstance(value, (list, tuple))
                and all(type(v) is str for v in value))
    if annotation in (str, int, float):
        return (type(value) is annotation and info.min is None and info.max is None
                and not info.clamp)
    return _is_enum(annotation) and isinstance(value, annotation)


def _any_path(info: ParameterInfo) -> bool:
    """A path option without constraints (no existence, kind, permission,
    resolution or dash check), which typer's adapter turns into
    ``pathlib.Path(value)``: building that adapter (pydantic's path schema)
    was 0.11 s of every ``grit check --payload-file``."""
    return (not info.exists and info.file_okay and info.dir_okay and not info.writable
            and info.readable and not info.resolve_path and not info.allow_dash
            and info.path_type is None)


def choice(annotation: Any, info: ParameterInfo, value: Any, ctx: Any) -> Any:
    """The member of the enum ``annotation`` that the string ``value`` names
    when no token normalisation applies (typer's choice conversion then
    compares ``str(member.value)``, casefolded when not case-sensitive, and
    takes the first member that matches); None otherwise (typer converts, and
    gives its own error when it names none)."""
    if (info.parser is not None or type(value) is not str or not _is_enum(annotation)
            or getattr(ctx, "token_normalize_func", None) is not None):
        return None
    want = value if info.case_sensitive else value.casefold()
    for member in annotation:
        name = str(member.value)
        if (name if info.case_sensitive else name.casefold()) == want:
            return member
    return None


def shortcut(annotation: Any, info: ParameterInfo, multiple: bool, value: Any,
             ctx: Any) -> Any:
    """What typer's conversion returns for ``value``, or CONVERT when typer
    must convert it."""
    if value is None:
        return () if multiple else None
    if info.parser is not None or info.min is not None or info.max is not None:
        return CONVERT
    if annotation is pathlib.Path and type(value) is str and _any_path(info):
        return pathlib.Path(value)
    if plain(annotation, info, value):
        return list(value) if get_origin(annotation) is list else value
    member = choice(annotation, info, value, ctx)
    return CONVERT if member is None else member


def direct(param: Any, annotation: Any, info: ParameterInfo | None) -> None:
    """Install the shortcut on one parameter: its ``process_value`` answers
    plain values itself and hands every other to typer's.  Without a
    declaration (``info`` None: typer's own completion options) only a
    missing value is answered, which typer's conversion returns as None (or
    ``()``) whatever the type."""
    convert = param.process_value

    def process_value(ctx: Any, value: Any) -> Any:
        multiple = bool(param.multiple or param.nargs == -1)
        if value is None:
            got: Any = () if multiple else None
        elif info is None or annotation is bool:
            return convert(ctx, value)  # a flag's bool is never converted
        else:
            got = shortcut(annotation, info, multiple, value, ctx)
        if got is CONVERT or (param.required and param.value_is_missing(got)):
            return convert(ctx, value)  # typer's conversion, or its error
        if param.callback is not None:
            got = param.callback(ctx, param, got)
        return got

    setattr(param, "process_value", process_value)  # noqa: B010 - a method override


def direct_command(cmd: Any) -> None:
    """``direct`` on every parameter of ``cmd``, with its declaration where
    the command function's signature gives one, and on the help option
    (click makes that one when the command line is parsed)."""
    callback = getattr(cmd, "callback", None)
    decl = declared(callback) if callback is not None else {}
    for p in cmd.params:
        annotation, info = decl.get(p.name, (None, None))
        direct(p, annotation, info)
    get_help_option = cmd.get_help_option

    def help_option(ctx: Any) -> Any:
        opt = get_help_option(ctx)
        if opt is not None and "process_value" not in vars(opt):
            direct(opt, None, None)
        return opt

    setattr(cmd, "get_help_option", help_option)  # noqa: B010 - a method override
