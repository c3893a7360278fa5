"""Stands in for the compiled helper ``_fnv.c`` when it was not built.

Python imports an extension module before a source module of the same name
(the import system tries extension suffixes first), so with the helper
built this file is never executed; without it, importing it raises
ImportError, exactly as a missing extension does, and codec/fnv.py takes its
pure-Python loops.  It exists so that import-linter, which reads only
Python files, sees the module and can hold every importer but codec/fnv.py
off it (pyproject.toml).  _fnv.pyi gives mypy the helper's types."""

raise ImportError("grit_scan.codec._fnv: the compiled helper was not built")
