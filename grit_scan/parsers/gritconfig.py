"""Find and read the configuration file (the model is grit_scan/config.py).

The project root is where grit is run from (the working directory), or the
directory of ``--config FILE``.  Discovery starts at the working directory
and goes upward: in each directory ``grit.toml`` (keys at the top level, or
under ``[tool.grit]``) wins over a ``pyproject.toml`` that has a
``[tool.grit]`` table; a pyproject.toml without one is passed over.  A
config file inside a scanned directory below the project root is never
read: the tree being checked cannot change how it is checked.  These two
file names are the only files read outside the scanned tree, and
``--isolated`` reads neither.

A config file is read with budgets (``CONFIG_FILE_BYTES``, ``CONFIG_DEPTH``,
``CONFIG_PATTERNS``): it must be a regular file (a FIFO or a device is
refused without blocking), and one over a budget is refused whole.  Every
refusal is a ``GritValueError`` naming the file: a usage error, exit 64.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from typing import Any

from ..codec.errors import GritValueError
from .budgets import CONFIG_DEPTH, CONFIG_FILE_BYTES, CONFIG_PATTERNS, PATTERN_CHARS

CONFIG_NAMES = ("grit.toml", "pyproject.toml")


def _over(path: str, what: str, budget_name: str, value: int, unit: str) -> GritValueError:
    return GritValueError(f"{path}: {what} exceeds the {budget_name} budget of {value:,} "
                          f"{unit} (docs/reliability.md)")


def read_bytes(path: str) -> bytes:
    """The file's bytes: a regular file of at most CONFIG_FILE_BYTES, opened
    without blocking (a FIFO is refused, never waited on) and read no
    further than the budget (a device or a file growing while read cannot
    make it read more)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise GritValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GritValueError(f"{path}: not a regular file (a config file must be one)")
        limit = CONFIG_FILE_BYTES.value
        if st.st_size > limit:
            raise _over(path, f"its size ({st.st_size:,} bytes)", CONFIG_FILE_BYTES.name,
                        limit, CONFIG_FILE_BYTES.unit)
        chunks: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise _over(path, "its size", CONFIG_FILE_BYTES.name, limit,
                        CONFIG_FILE_BYTES.unit)
        return b"".join(chunks)
    except OSError as exc:
        raise GritValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


# TOML strings and comments (skipped), and the characters that nest: brackets
# and braces, the dots of dotted keys, and line ends (dots count per line)
_TOKENS = (r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
           r"|#[^\n]*|[\[\]{}.\n]")


def _text_too_deep(text: str, limit: int) -> bool:
    """Whether the text nests deeper than ``limit``, read before parsing:
    brackets and braces open at once, or dots in one line's keys (tomllib
    is recursive in the first and quadratic in the second: 200,000 levels
    took minutes)."""
    import re

    depth = dots = 0
    for m in re.finditer(_TOKENS, text):
        c = m.group(0)
        if c in "[{":
            depth += 1
            if depth > limit:
                return True
        elif c in "]}":
            depth -= 1
        elif c == ".":
            dots += 1
            if dots > limit:
                return True
        elif c == "\n":
            dots = 0
    return False


def _depth_over(doc: Any, limit: int) -> bool:
    """Whether tables and arrays nest deeper than ``limit`` (iterative)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if d > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, d + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node if isinstance(v, (dict, list)))
    return False


def _check_patterns(path: str, table: Mapping[str, Any]) -> None:
    """At most CONFIG_PATTERNS entries in select, ignore, fail-on and
    per-path-ignores together, each glob at most PATTERN_CHARS long."""
    n = 0
    for key in ("select", "ignore", "fail-on"):
        v = table.get(key)
        n += len(v) if isinstance(v, list) else (v.count(",") + 1 if isinstance(v, str) else 0)
    ppi = table.get("per-path-ignores")
    if isinstance(ppi, Mapping):
        for glob, kinds in ppi.items():
            n += 1 + (len(kinds) if isinstance(kinds, list) else 0)
            if len(str(glob)) > PATTERN_CHARS.value:
                raise _over(path, f"a per-path-ignores glob ({len(str(glob)):,} characters)",
                            PATTERN_CHARS.name, PATTERN_CHARS.value, PATTERN_CHARS.unit)
    if n > CONFIG_PATTERNS.value:
        raise _over(path, f"its patterns ({n:,})", CONFIG_PATTERNS.name, CONFIG_PATTERNS.value,
                    CONFIG_PATTERNS.unit)


def read_table(path: str) -> dict[str, Any] | None:
    """The grit table of ``path``: for pyproject.toml ``[tool.grit]`` (None
    when absent); for any other file its ``[tool.grit]`` or its top level.
    Raises GritValueError (exit 64) for a file that is not a regular file,
    is over a budget or is not valid TOML."""
    # here, not at the top: most scans find no config file to parse
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise GritValueError(f"{path}: not valid TOML: not UTF-8 text") from None
    if _text_too_deep(text, CONFIG_DEPTH.value):
        raise _over(path, "its nesting", CONFIG_DEPTH.name, CONFIG_DEPTH.value,
                    CONFIG_DEPTH.unit)
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise _over(path, "its nesting", CONFIG_DEPTH.name, CONFIG_DEPTH.value,
                    CONFIG_DEPTH.unit) from None
    except tomllib.TOMLDecodeError as exc:
        raise GritValueError(f"{path}: not valid TOML: {exc}") from None
    if _depth_over(doc, CONFIG_DEPTH.value):
        raise _over(path, "its nesting", CONFIG_DEPTH.name, CONFIG_DEPTH.value,
                    CONFIG_DEPTH.unit)
    tool = doc.get("tool")
    table = tool.get("grit") if isinstance(tool, dict) else None
    if os.path.basename(path) == "pyproject.toml":
        found = table if isinstance(table, dict) else None
    else:
        found = table if isinstance(table, dict) else doc
    if found is not None:
        _check_patterns(path, found)
    return found


def discover(start: str) -> tuple[str, dict[str, Any]] | None:
    """The nearest config file from ``start`` (the project root: the
    working directory) upward, and its table."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        for name in CONFIG_NAMES:
            path = os.path.join(here, name)
            if os.path.lexists(path):
                table = read_table(path)
                if table is not None:
                    return path, table
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
