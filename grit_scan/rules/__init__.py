"""Rules: the artifact model in, findings out.

Every finding kind is one module under ``kinds/`` (code, severity,
documentation and check); ``registry`` discovers them and runs them inside
containment boundaries.  Rules never open files: ``--deep`` rules get their
bytes from a ``PlaneReader`` the parsers layer hands in.
"""

from __future__ import annotations

from .codes import Kind
from .finding import Finding, Severity
from .registry import Rule, Runner, lookup, parse_selection, rule, rules

__all__ = ["Finding", "Kind", "Rule", "Runner", "Severity", "lookup", "parse_selection",
           "rule", "rules"]
