"""bench/conventions.py loaded as a module: its tree builders (TREES, build)
for the tests that scan the benchmark's trees."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent / "bench"


def load() -> ModuleType:
    name = "bench_conventions"
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / "conventions.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod
