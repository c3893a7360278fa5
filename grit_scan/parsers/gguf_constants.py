"""gguf-py's ``gguf.constants`` (the ggml type table, file types, key names)
and ``gguf.tensor_mapping`` (the tensor-name map roles use), imported on
first use through the package's public modules.

``import gguf`` runs the package's ``__init__``, which imports numpy and
yaml too (about 0.1 s): that is why these are functions, called only by a
scan that meets a GGUF file or a model whose roles it needs, never at
start-up.  ``tests/test_gguf_constants.py`` holds them to ``gguf``'s own.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def constants() -> ModuleType:
    return importlib.import_module("gguf.constants")


def tensor_mapping() -> ModuleType:
    return importlib.import_module("gguf.tensor_mapping")
