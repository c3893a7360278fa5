"""Find and read the configuration file (the model is grit_scan/config.py).

Discovery starts at the first scanned path (its directory, for a file) and
goes upward: in each directory ``grit.toml`` (keys at the top level, or
under ``[tool.grit]``) wins over a ``pyproject.toml`` that has a
``[tool.grit]`` table; a pyproject.toml without one is passed over.  These
two file names are the only files read outside the scanned tree, and
``--isolated`` reads neither.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..artifact import ReadError
from ..codec.errors import GritValueError

CONFIG_NAMES = ("grit.toml", "pyproject.toml")


def read_table(path: str) -> dict[str, Any] | None:
    """The grit table of ``path``: for pyproject.toml ``[tool.grit]`` (None
    when absent); for any other file its ``[tool.grit]`` or its top level."""
    # here, not at the top: most scans find no config file to parse
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as exc:
        raise ReadError(f"{path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise GritValueError(f"{path}: not valid TOML: {exc}") from None
    tool = doc.get("tool")
    table = tool.get("grit") if isinstance(tool, dict) else None
    if os.path.basename(path) == "pyproject.toml":
        return table if isinstance(table, dict) else None
    return table if isinstance(table, dict) else doc


def discover(start: str) -> tuple[str, dict[str, Any]] | None:
    """The nearest config file from ``start`` upward and its table."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        here = os.path.dirname(here)
    while True:
        for name in CONFIG_NAMES:
            path = os.path.join(here, name)
            if os.path.isfile(path):
                table = read_table(path)
                if table is not None:
                    return path, table
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
