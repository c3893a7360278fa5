"""gguf-py's ``gguf.constants`` (the ggml type table, file types, key names)
and ``gguf.tensor_mapping`` (the tensor-name map roles use) without the rest
of the ``gguf`` package.

``import gguf`` runs the package's ``__init__``, which imports every module
of it, numpy and yaml among them: about 0.08-0.15 s, a quarter of a
header-only scan of a 100,000-tensor GGUF, and paid by every scan of a
model with an architecture for its roles (issue 15).  ``gguf/constants.py``
itself imports only ``enum`` and ``typing``, and ``gguf/tensor_mapping.py``
only ``typing`` and ``.constants``.  When ``gguf`` is already imported its
own modules are used; otherwise those files are loaded from the installed
package as modules of a private package (``grit_scan._gguf``, whose path is
gguf's directory, so that ``tensor_mapping``'s relative import finds the
private ``constants``).  Nothing is registered under ``gguf``, so a later
``import gguf`` is unaffected; and if loading fails for any reason the
package is imported as usual.  ``tests/test_gguf_constants.py`` holds both
to ``gguf``'s own.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from types import ModuleType

PRIVATE_PACKAGE = "grit_scan._gguf"


@functools.lru_cache(maxsize=1)
def constants() -> ModuleType:
    return _module("constants")


@functools.lru_cache(maxsize=1)
def tensor_mapping() -> ModuleType:
    return _module("tensor_mapping")


def _module(name: str) -> ModuleType:
    mod = sys.modules.get(f"gguf.{name}")
    if mod is not None:
        return mod
    try:
        return _load_alone(name)
    except Exception:  # noqa: BLE001 - any surprise in gguf's layout: the usual import
        for key in [k for k in sys.modules if k.startswith(PRIVATE_PACKAGE + ".")]:
            sys.modules.pop(key, None)
        return importlib.import_module(f"gguf.{name}")


def _load_alone(name: str) -> ModuleType:
    """gguf's module ``name`` as ``grit_scan._gguf.<name>``."""
    if PRIVATE_PACKAGE not in sys.modules:
        spec = importlib.util.find_spec("gguf")  # locates the package; runs nothing of it
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("gguf is not an installed package")
        pkg = ModuleType(PRIVATE_PACKAGE, "gguf-py's modules, loaded one by one "
                         "(grit_scan/parsers/gguf_constants.py)")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__package__ = PRIVATE_PACKAGE
        sys.modules[PRIVATE_PACKAGE] = pkg  # dataclasses and enums look their module up
    return importlib.import_module(f"{PRIVATE_PACKAGE}.{name}")
