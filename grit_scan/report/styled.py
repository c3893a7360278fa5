"""Styled text for the text formats, with rich loaded only for colour.

``Text`` holds (string, style) spans; ``make_console`` gives a console that
prints them.  With colour on it is rich's Console, as before.  With colour
off (a pipe, a file, CI, ``NO_COLOR``) rich would write the plain text and a
newline, so the plain console does exactly that itself and rich is never
imported: importing it costs more than scanning a small file (docs/performance.md).

The plain console writes what rich writes, byte for byte:
tests/test_startup.py compares them.  Where rich would change the text
(it expands tabs by cell width and drops BEL, BS, VT, FF and CR; strings from
files never carry them, escape.esc has escaped them) the line goes through
rich itself.  A broken pipe and an unencodable character end the process
the way rich ends it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from rich.console import Console as RichConsole
    from rich.text import Text as RichText

# What rich's Text would change: tabs (expanded) and the control codes it strips.
_RICH_CHANGES = frozenset("\t\x07\x08\x0b\x0c\r")


class Text:
    """A line of output: spans of text, each with a rich style (or none)."""

    __slots__ = ("spans",)

    def __init__(self, text: str = "", style: str | None = None) -> None:
        self.spans: list[tuple[str, str | None]] = [(text, style)]

    def append(self, text: str, style: str | None = None) -> Text:
        self.spans.append((text, style))
        return self

    @property
    def plain(self) -> str:
        return "".join(s for s, _ in self.spans)

    def no_command(self) -> Text:
        """This line, or (when it would begin, after blanks, with ``::``, a
        GitHub Actions workflow command) the line with that first colon shown
        as ``\\x3a`` (escape.no_command), styles kept."""
        plain = self.plain
        if not plain.lstrip().startswith("::"):
            return self
        at = len(plain) - len(plain.lstrip())
        out = Text()
        out.spans = []
        for s, style in self.spans:
            if 0 <= at < len(s):
                s, at = s[:at] + "\\x3a" + s[at + 1:], -1
            elif at >= 0:
                at -= len(s)
            out.spans.append((s, style))
        return out

    def rich(self) -> RichText:
        """As rich: the first span's style is the whole line's base style
        (``Text(s, style=...)``), the others are appended over it."""
        from rich.text import Text as RichText

        (first, base), *rest = self.spans
        out = RichText(first, style=base or "")
        for s, style in rest:
            out.append(s, style=style)
        return out


class Console(Protocol):
    def print(self, text: Text | None = None) -> None: ...


def _rich_console(out: TextIO, color: bool, width: int | None) -> RichConsole:
    from rich.console import Console as RichConsole

    return RichConsole(file=out, highlight=False, markup=False, emoji=False, soft_wrap=True,
                       color_system=("auto" if out.isatty() else "standard") if color else None,
                       force_terminal=color, width=width)


class _Rich:
    def __init__(self, out: TextIO, color: bool, width: int | None) -> None:
        self.console = _rich_console(out, color, width)

    def print(self, text: Text | None = None) -> None:
        if text is None:
            self.console.print()
        else:
            self.console.print(text.no_command().rich())


class _Plain:
    """rich's Console with colour off and soft wrap, without rich."""

    def __init__(self, out: TextIO, width: int | None) -> None:
        self.out, self.width = out, width
        self.fallback: _Rich | None = None

    def print(self, text: Text | None = None) -> None:
        if text is not None:
            text = text.no_command()
        line = "" if text is None else text.plain
        if not _RICH_CHANGES.isdisjoint(line):
            if self.fallback is None:
                self.fallback = _Rich(self.out, False, self.width)
            self.fallback.print(text)
            return
        try:
            try:
                self.out.write(line + "\n")
            except UnicodeEncodeError as error:  # rich's words, so the error reads the same
                error.reason = (f"{error.reason}\n*** You may need to add "
                                "PYTHONIOENCODING=utf-8 to your environment ***")
                raise
            self.out.flush()
        except BrokenPipeError:
            # as rich's Console.on_broken_pipe: stdout to /dev/null, exit 1
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(1) from None


def make_console(out: TextIO, color: bool, width: int | None = None) -> Console:
    """A console that never wraps and styles only when ``color`` is on (with
    colour off no escape code at all is written: no bold, dim or italic).
    A legacy Windows terminal keeps rich, which writes to it through win32."""
    if color or (sys.platform == "win32" and out.isatty()):
        return _Rich(out, color, width)
    return _Plain(out, width)
