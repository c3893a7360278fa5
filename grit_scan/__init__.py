"""grit-scan: audit quantized model checkpoints against the GRIT v1 specification.

``grit_scan.scan(paths, deep=False) -> Report`` is the library entry point;
``Report``, ``Finding``, ``Severity`` and ``Kind`` are its types.  They load
on first use, so importing the package (and ``grit --version``) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .api import scan
    from .report.report import Report
    from .rules.codes import Kind
    from .rules.finding import Finding, Severity

__all__ = ["Finding", "Kind", "Report", "Severity", "__version__", "scan"]

_LAZY = {"scan": "api", "Report": "report.report", "Kind": "rules.codes",
         "Finding": "rules.finding", "Severity": "rules.finding"}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'grit_scan' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{mod}", __name__), name)
