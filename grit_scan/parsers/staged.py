"""Paths a pre-commit hook hands over, turned into what to scan.

``model_roots``: the model each changed file belongs to — the directory of
a checkpoint, index or config (a config-only change rescans its model), a
manifest itself — kept only when that directory holds a checkpoint, each
once by real path, and only when it lies inside the working directory
once resolved (``changed_roots``).  ``dedupe``: scan roots once by real path, dropping a
path inside another root (pre-commit passes ``./x`` and ``x``, an index and
its shards).
"""

from __future__ import annotations

import os

from .skips import MANIFEST_NAME
from .tree import classify


def _holds_checkpoint(directory: str) -> bool:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return False
    for e in entries:
        try:
            if not e.is_file():
                continue
        except OSError:
            continue
        fmt = classify(e.name, os.path.realpath(e.path))  # SafeFile does not follow links
        if fmt is not None and fmt.is_checkpoint_file:
            return True
    return False


def model_roots(files: list[str], base: str | None = None) -> list[str]:
    """The models ``files`` belong to (see the module doc)."""
    return changed_roots(files, base)[0]


def _inside(real: str, base: str) -> bool:
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def changed_roots(files: list[str], base: str | None = None) -> tuple[list[str], list[str]]:
    """(roots, refused): the models ``files`` belong to, and the changed
    paths refused because their model (a directory, or a manifest) resolves
    outside ``base`` (the working directory: the repository pre-commit runs
    in) through a symbolic link — what a scan of ``base`` would skip as a
    symlink out of the root, so nothing outside is ever read."""
    top = os.path.realpath(base if base is not None else os.getcwd())
    out: list[str] = []
    refused: list[str] = []
    for f in files:
        if not os.path.lexists(f):
            continue  # deleted in this commit
        if os.path.basename(f).lower() == MANIFEST_NAME:
            root = f
        else:
            root = os.path.dirname(f) or "."
        if not _inside(os.path.realpath(root), top):
            refused.append(f)
            continue
        if root is f or _holds_checkpoint(root):
            out.append(root)
    return dedupe(out), refused


def dedupe(paths: list[str]) -> list[str]:
    """Each path once by real path; a path under another directory given is
    dropped (that directory's scan reads it).  Order is kept."""
    reals = [os.path.realpath(p) for p in paths]
    dirs = {r for r, p in zip(reals, paths) if os.path.isdir(p)}
    out: list[str] = []
    seen: set[str] = set()
    for p, r in zip(paths, reals):
        if r in seen:
            continue
        if any(r != d and r.startswith(d.rstrip(os.sep) + os.sep) for d in dirs):
            continue
        seen.add(r)
        out.append(p)
    return out
