"""Paths a pre-commit hook hands over, turned into what to scan.

``model_roots``: the model each changed file belongs to — the directory of
a checkpoint, index or config (a config-only change rescans its model), a
manifest itself — kept only when that directory holds a checkpoint, each
once by real path.  ``dedupe``: scan roots once by real path, dropping a
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


def model_roots(files: list[str]) -> list[str]:
    out: list[str] = []
    for f in files:
        if not os.path.lexists(f):
            continue  # deleted in this commit
        if os.path.basename(f).lower() == MANIFEST_NAME:
            out.append(f)
            continue
        directory = os.path.dirname(f) or "."
        if _holds_checkpoint(directory):
            out.append(directory)
    return dedupe(out)


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
