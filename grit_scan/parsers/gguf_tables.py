"""gguf-py's tables that a scan needs, shipped with grit-scan, so that a
scan imports no gguf: the tensor-name maps roles use (Hugging Face name ->
GGUF name, one layer), the ggml type table (name, elements and bytes per
block) and the file-type names.

``import gguf`` runs the package's ``__init__``: numpy, yaml and every gguf
module, about a quarter of the instructions of a 25-shard scan and most of a
small one's (docs/performance.md).  What a scan reads of gguf is data:
``gguf_tables.json`` holds ``tensor_mapping.get_tensor_name_map(arch,
1).mapping`` for every architecture, ``constants.GGML_QUANT_SIZES`` with
the names of ``GGMLQuantizationType`` and those of ``LlamaFileType``, from
the gguf release it was generated from, with a CRC-32 of that release's
``constants.py`` and ``tensor_mapping.py``.

The table is used only when the installed gguf's two files have those
checksums (found with ``importlib.util.find_spec``, which does not import
the package): then it is exactly what gguf's own objects hold.  Any other
gguf installation is asked itself (parsers/roles.py, ggml_types.py,
readers.py), so a scan always follows the installed gguf.
``tests/test_gguf_tables.py`` holds the table to gguf's objects.

Regenerate after a gguf upgrade::

    python -m grit_scan.parsers.gguf_tables
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import zlib
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

TABLE = os.path.join(os.path.dirname(__file__), "gguf_tables.json")  # os.path: start-up
SOURCES = ("constants.py", "tensor_mapping.py")


class TableMap:
    """What roles.py reads of a gguf ``TensorNameMap``: ``mapping`` (key ->
    (tensor type, GGUF name); the type is not kept: None) and ``get_name``."""

    __slots__ = ("mapping",)

    def __init__(self, names: Mapping[str, str]) -> None:
        self.mapping: dict[str, tuple[None, str]] = {k: (None, v) for k, v in names.items()}

    def get_name(self, key: str) -> str | None:
        got = self.mapping.get(key)
        return got[1] if got is not None else None


def installed_sources() -> dict[str, int] | None:
    """The CRC-32 of the installed gguf's ``constants.py`` and
    ``tensor_mapping.py``, without importing gguf (None: not found)."""
    try:
        spec = importlib.util.find_spec("gguf")
    except (ImportError, ValueError):
        return None
    where = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not where:
        return None
    out = {}
    for name in SOURCES:
        try:
            with open(os.path.join(where[0], name), "rb") as fh:
                out[name] = zlib.crc32(fh.read())
        except OSError:
            return None
    return out


@lru_cache(maxsize=1)
def current() -> dict[str, Any] | None:
    """The table, when it was made from the installed gguf's sources; None
    otherwise (no table, a damaged one, another gguf: ask gguf).  Read once
    a process: the file ships with the package and never changes."""
    try:
        with open(TABLE, encoding="utf-8") as fh:
            table = json.loads(fh.read())
    except (OSError, ValueError):
        return None
    if not isinstance(table, dict) or table.get("sources") != installed_sources():
        return None
    return table


def name_map(arch_name: str) -> TableMap | bool | None:
    """The one-layer name map of the architecture gguf calls ``arch_name``;
    False when the installed gguf has no such architecture; None when the
    table cannot answer (ask gguf itself)."""
    table = current()
    if table is None:
        return None
    flat = table["archs"].get(arch_name)
    if flat is None:
        return False
    keys, names = table["keys"], table["names"]
    return TableMap(dict(zip(map(keys.__getitem__, flat[0::2]),
                             map(names.__getitem__, flat[1::2]))))


def ggml_types() -> dict[int, tuple[str, tuple[int, int] | None]] | None:
    """Each ``GGMLQuantizationType`` code: its name and its (elements, bytes)
    per block from ``GGML_QUANT_SIZES`` (None where gguf has none); None
    when the table cannot answer."""
    table = current()
    if table is None:
        return None
    return {int(code): (name, (elems, size) if elems else None)
            for code, (name, elems, size) in table["types"].items()}


def file_type_name(code: int) -> str | None:
    """``LlamaFileType(code).name`` (None: no such file type); raises
    LookupError when the table cannot answer."""
    table = current()
    if table is None:
        raise LookupError("no gguf table for the installed gguf")
    got = table["file_types"].get(str(code))
    return got if isinstance(got, str) else None


# ------------------------------------------------------------ generation

# One architecture's map, built in a fresh interpreter: gguf's TensorNameMap
# updates its class-level block mappings with an architecture's overrides
# (ARCTIC), so a map built after another's in the same process can differ
# from what a process that builds it first (every scan) gets.
_ONE = """
import json, sys
from gguf import constants, tensor_mapping
by_name = {v: k for k, v in constants.MODEL_ARCH_NAMES.items()}
out = {}
for name in sys.argv[1:]:
    m = tensor_mapping.get_tensor_name_map(by_name[name], 1)
    out[name] = {k: v[1] for k, v in m.mapping.items()}
print(json.dumps(out))
"""


def build(arch_names: list[str] | None = None) -> dict[str, dict[str, str]]:
    """Each architecture's one-layer map as gguf's own function gives it to
    a process that builds that map first (one child per architecture whose
    overrides gguf applies to its class, one for all the others)."""
    from gguf import constants, tensor_mapping  # the generator, never a scan

    names = arch_names if arch_names is not None else sorted(constants.MODEL_ARCH_NAMES.values())
    overriding = {constants.MODEL_ARCH_NAMES[a]
                  for a in tensor_mapping.TensorNameMap.arch_block_mappings_cfg}
    batches = [[n for n in names if n not in overriding]]
    batches += [[n] for n in names if n in overriding]
    out: dict[str, dict[str, str]] = {}
    import subprocess  # only when the table is made (start-up: issue 31)

    env = {**os.environ, "PYTHONHASHSEED": "0"}
    for batch in filter(None, batches):
        got = subprocess.run([sys.executable, "-c", _ONE, *batch], capture_output=True,
                             text=True, check=True, env=env).stdout
        out.update(json.loads(got))
    return out


def generate() -> str:
    """The table's JSON text, from the installed gguf."""
    from importlib.metadata import version

    maps = build()
    keys = sorted({k for m in maps.values() for k in m})
    names = sorted({v for m in maps.values() for v in m.values()})
    ki, ni = {k: i for i, k in enumerate(keys)}, {v: i for i, v in enumerate(names)}
    archs = {a: [x for k, v in m.items() for x in (ki[k], ni[v])] for a, m in sorted(maps.items())}
    from gguf import constants

    types = {str(t.value): [t.name, *constants.GGML_QUANT_SIZES.get(t, (0, 0))]
             for t in constants.GGMLQuantizationType}
    file_types = {str(t.value): t.name for t in constants.LlamaFileType}
    table = {"gguf": version("gguf"), "sources": installed_sources(), "types": types,
             "file_types": file_types, "keys": keys, "names": names, "archs": archs}
    return json.dumps(table, separators=(",", ":")) + "\n"


def main(argv: list[str]) -> int:
    path = argv[0] if argv else TABLE
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(generate())
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
