"""The suffix table of every registered convention: how a stored tensor's
name splits into its module and the part it is (``.weight_scale``,
``.qzeros``, ``_blocks``, ...).  Each convention declares its suffixes in its
own module; this puts them together with the generic ``.weight`` and
``.bias``."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

from ..names import GENERIC_SUFFIXES, SuffixTable
from .base import registered


@functools.cache
def table() -> SuffixTable:
    """The table over the generic suffixes and every convention's."""
    return SuffixTable(GENERIC_SUFFIXES + tuple(s for c in registered() for s in c.suffixes))


def split_name(name: str) -> tuple[str, str]:
    """(module, suffix) of a stored tensor name: the longest known suffix."""
    return table().split(name)


def split_names(names: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``map(split_name, names)``, the usual split taken fast."""
    return table().split_all(names)


def split_columns(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """(modules, suffixes): ``split_names`` as two columns."""
    return table().split_columns(names)
