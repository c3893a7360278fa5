"""gguf-py's ``gguf.constants`` (the ggml type table, file types, key names)
without the rest of the ``gguf`` package.

``import gguf`` runs the package's ``__init__``, which imports every module
of it, numpy among them: about 0.15 s, a quarter of a header-only scan of a
100,000-tensor GGUF (issue 15).  ``gguf/constants.py`` itself imports only
``enum`` and ``typing``.  When ``gguf`` is already imported its own module is
used; otherwise that one file is loaded from the installed package under a
private name (``gguf.constants`` is not registered, so a later ``import
gguf`` is unaffected), and if that fails for any reason the package is
imported as usual.  ``tests/test_gguf_constants.py`` holds the table to
``gguf``'s own.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from types import ModuleType

PRIVATE_NAME = "grit_scan._gguf_constants"


@functools.lru_cache(maxsize=1)
def constants() -> ModuleType:
    mod = sys.modules.get("gguf.constants")
    if mod is not None:
        return mod
    try:
        return _load_alone()
    except Exception:  # noqa: BLE001 - any surprise in gguf's layout: the usual import
        sys.modules.pop(PRIVATE_NAME, None)
        import gguf.constants

        return gguf.constants


def _load_alone() -> ModuleType:
    spec = importlib.util.find_spec("gguf")  # locates the package; runs nothing of it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("gguf is not an installed package")
    path = os.path.join(list(spec.submodule_search_locations)[0], "constants.py")
    cspec = importlib.util.spec_from_file_location(PRIVATE_NAME, path)
    if cspec is None or cspec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(cspec)
    sys.modules[PRIVATE_NAME] = mod  # dataclasses and enums look their module up
    cspec.loader.exec_module(mod)
    return mod
