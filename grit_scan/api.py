"""The library API: ``grit_scan.scan(paths, deep=False) -> Report``.

Pipelines get the same model the CLI renders: ``report.findings``,
``report.exit_codes`` and ``report.to_json()`` (docs/pipelines.md).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Sequence

from .codec.errors import GritValueError
from .parsers.tree import collect
from .report.model import Report, from_scan
from .rules import run
from .rules.deep import slow_path_note
from .rules.kinds import KINDS


def parse_kinds(text: str | Iterable[str] | None, option: str) -> set[str] | None:
    if text is None:
        return None
    items = text.split(",") if isinstance(text, str) else list(text)
    kinds = {k.strip() for k in items if k.strip()}
    bad = sorted(kinds - set(KINDS))
    if bad:
        raise GritValueError(f"{option}: unknown finding kind(s) {', '.join(bad)}; known: "
                             f"{', '.join(sorted(KINDS))}")
    return kinds


def scan(
    paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] = (".",),
    deep: bool = False,
    select: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    jobs: int | None = None,
    debug: bool = False,
    progress: Callable[[int, int], None] | None = None,
    read_progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Scan files, directories or manifests and return the report."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    roots = [os.fspath(p) for p in paths] or ["."]
    sel = parse_kinds(select, "--select")
    ign = parse_kinds(ignore, "--ignore")
    n_jobs = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    # A scan allocates hundreds of thousands of small, acyclic objects (header
    # entries, tensor records): the cyclic collector would rescan them over
    # and over, tripling the cost of reading headers.  It is paused for the
    # scan and restored afterwards.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        data = collect(roots, deep=deep, progress=read_progress)
        findings = run(data, deep_scan=deep, jobs=n_jobs, debug=debug, progress=progress)
    finally:
        if was_enabled:
            gc.enable()
    if sel is not None:
        findings = [f for f in findings if f.kind in sel]
    if ign:
        findings = [f for f in findings if f.kind not in ign]
    report = from_scan(data, findings)
    if deep:
        note = slow_path_note()
        if note:
            report.messages.append(note)
    return report
