"""The optional C helper (FNV-1a digests, GGUF string skipping).

Everything else is in pyproject.toml.  ``optional=True``: without a C
compiler the build still succeeds and grit_scan uses its pure-Python paths
(``grit scan --deep`` then says so)."""

import sys

from setuptools import Extension, setup

args = [] if sys.platform == "win32" else ["-O3"]
setup(ext_modules=[Extension("grit_scan.codec._fnv", ["grit_scan/codec/_fnv.c"], optional=True,
                             extra_compile_args=args)])
