"""grit-scan: audit quantized model checkpoints against the GRIT v1 specification.

Scan files, directories, shard indexes, grit-manifest.json files or URLs and
read the report::

    import grit_scan

    report = grit_scan.scan(["models/"])          # the model the CLI renders
    report.exit_code                              # 0 clean ... 4 nothing read
    report.exit_codes                             # {"graded": ..., "simple": ...}
    report.summary                                # files, tensors, findings by severity
    for f in report.findings:                     # Finding: code, kind, severity,
        print(f.severity, f.kind, f.path, f.message)   # path, tensor, message, detail
    report.to_json()                              # the `grit scan --json` document

``scan`` raises ``NoSuchPath`` for a local path that does not exist and
``GritValueError`` for an unknown finding kind in ``select``/``ignore``;
both are ``GritError``s.  ``Report``, ``Finding``, ``Severity`` and ``Kind``
are its types.  Everything loads on first use, so importing the package
(and ``grit --version``) stays cheap.  docs/pipelines.md has the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    import os

    from .api import ManifestRefused, NoSuchPath
    from .codec.errors import GritError, GritValueError
    from .report.report import Report
    from .rules.codes import Kind
    from .rules.finding import Finding, Severity

__all__ = ["Finding", "GritError", "GritValueError", "Kind", "ManifestRefused", "NoSuchPath",
           "Report", "Severity", "__version__", "scan"]

_LAZY = {"Report": "report.report", "Kind": "rules.codes",
         "Finding": "rules.finding", "Severity": "rules.finding",
         "NoSuchPath": "api", "ManifestRefused": "api",
         "GritError": "codec.errors", "GritValueError": "codec.errors"}


def scan(paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] = (".",),
         deep: bool = False, select: str | Iterable[str] | None = None,
         ignore: str | Iterable[str] | None = None, jobs: int | None = None,
         **options: Any) -> Report:
    """Scan files, directories, shard indexes, manifests or URLs and return
    the ``Report``.

    ``paths``: what to scan (a local path, ``hf://ORG/REPO[@REV]``,
    ``https://``, ``s3://``).  ``deep``: also read tensor bytes (digests,
    probes, decode cross-checks).  ``select``/``ignore``: finding kinds,
    codes (``GRIT101``) or code prefixes (``GRIT1``).  ``jobs``: files read
    in parallel.  Other keywords (``fail_on``, ``settings``, ``remote``,
    ``progress``, ``read_progress``, ``debug``) are those of
    ``grit_scan.api.scan``.

    The report has ``findings``, ``artifacts``, ``summary``, ``exit_code``
    (graded), ``exit_codes`` (graded and simple) and ``to_json()``.  Raises
    ``NoSuchPath`` for a local path that does not exist, ``GritValueError``
    for an unknown kind."""
    from .api import scan as _scan

    return _scan(paths, deep=deep, select=select, ignore=ignore, jobs=jobs, **options)


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'grit_scan' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{mod}", __name__), name)
