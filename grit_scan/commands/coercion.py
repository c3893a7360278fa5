"""Option values that need no conversion skip typer's pydantic adapters.

Typer (0.2x) coerces every non-flag parameter value, defaults included,
through a pydantic ``TypeAdapter`` built on first use: any command with an
``int`` or ``str`` option imports pydantic and builds a schema per option,
most of the start-up cost of ``grit scan FILE`` (issue 15).  Most values need
no conversion at all: a default of the annotated type, a ``str`` given on the
command line for a ``str`` option, a tuple of strings for ``list[str]``.  An
enum option's string (``--output-format sarif``) is converted by the function
typer's adapter calls for it (``coerce_cli_choice``), without the adapter:
building it imported pydantic, nearly doubling the cost of a small scan.

``direct(param)`` gives such a parameter a runtime coercion that returns those
values as the adapter would (the same value; a list for ``list[str]``; the
enum member a choice names) and hands every other value (a choice that names
no member, whose error is the adapter's) (``--jobs 4``: a string for an int, an enum name, a
path) to typer's own coercion, built then, so conversions and their error
messages are typer's.  tests/test_startup.py holds the shortcut to typer's
results.  A typer without this machinery (older, click-typed) is left alone.
"""

from __future__ import annotations

import enum
import functools
from typing import Any, get_args, get_origin

from typer import _click as click


def plain(annotation: Any, info: Any, value: Any) -> bool:
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
    return (isinstance(annotation, type) and issubclass(annotation, enum.Enum)
            and isinstance(value, annotation))


def choice(annotation: Any, info: Any, value: Any, ctx: click.Context | None) -> Any:
    """The member of the enum ``annotation`` that the string ``value``
    names, as typer's choice adapter finds it (the same function, given the
    same context); None when ``value`` is no enum choice or names no member
    (the adapter then raises its own error)."""
    if (info.parser is not None or not isinstance(value, str)
            or not (isinstance(annotation, type) and issubclass(annotation, enum.Enum))):
        return None
    try:
        from typer._param_types import coerce_cli_choice
    except ImportError:
        return None
    try:
        return coerce_cli_choice(value, choices=list(annotation),
                                 case_sensitive=info.case_sensitive, ctx=ctx)
    except ValueError:
        return None


@functools.cache
def _direct_class() -> type | None:
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # a typer that coerces through click types loads no pydantic
        return None

    class Direct(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: click.Context) -> Any:
            annotation: Any = self.annotation
            if plain(annotation, self.parameter_info, value):
                return list(value) if get_origin(annotation) is list else value
            member = choice(annotation, self.parameter_info, value, ctx)
            if member is not None:
                return member
            real = build_runtime_param(param.type_descriptor)
            param._runtime_param = real  # later values go straight to typer's
            return real._coerce_value(value, param=param, ctx=ctx)

    return Direct


def direct_command(cmd: click.Command) -> None:
    """``direct`` on every parameter of ``cmd``, the help option included
    (click makes that one when the command line is parsed)."""
    for p in cmd.params:
        direct(p)
    get_help_option = cmd.get_help_option

    def help_option(ctx: click.Context) -> Any:
        opt = get_help_option(ctx)
        if opt is not None:
            direct(opt)
        return opt

    setattr(cmd, "get_help_option", help_option)  # noqa: B010 - a method override


def direct(param: click.Parameter) -> None:
    """Install the shortcut on one typer parameter (a no-op for any other)."""
    desc = getattr(param, "type_descriptor", None)
    cls = _direct_class()
    if (cls is None or desc is None or getattr(param, "_runtime_param", 0) is not None
            or desc.file_annotation is not None):
        return
    param._runtime_param = cls(parameter_info=desc.parameter_info,  # type: ignore[attr-defined]
                               annotation=desc.annotation)
