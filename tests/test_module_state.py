"""No module state outlives a scan (docs/architecture.md, "State").

Two halves: a static one, which fails when a module of the package gains a
mutable container at module level (a list, dict or set literal, or a call
that makes one) or a ``global`` statement, unless it is on the allow-list
below with its reason; and a dynamic one, which runs scans one after the
other in this process and shows that nothing of the first reaches the
second: the byte counter, the digest threads, the tracebacks, the module
tables.  New constants are tuples, frozensets or ``types.MappingProxyType``,
which need no entry here."""

from __future__ import annotations

import ast
import copy
import threading
from pathlib import Path

import numpy as np

import grit_scan
from grit_scan.codec import grade as G
from grit_scan.codec.encode import encode
from grit_scan.parsers import fileio, tree
from grit_scan.writers import GritTensor, write_grit_safetensors

PKG = Path(grit_scan.__file__).parent

# Tables filled once, when their module is imported, and only read after
# that: checked below never to be written (item assignment, deletion or a
# mutating method) in their own module or in a module that imports them.
CONSTANT_TABLES = {
    "codec/errors.py": ("_LABELS", "ERROR_FOR_STATUS"),
    "codec/grade.py": ("_KIND", "DEFAULTS", "_INT_RANGES", "_NAME_BY_CANONICAL", "_TOP"),
    "codec/tables.py": ("FORMAT_TOKENS", "FORMAT_ALIASES", "REJECTED_ALIASES", "SP_META_TOKENS",
                        "SP_META_BITS", "SP_ORDER_TOKENS", "REGISTERED_GRADES",
                        "REGISTERED_GRADE_IDS", "FLAG_NAMES", "REGISTERED_PLACEMENTS"),
    "codec/fmt.py": ("_TOKEN_FOR_WORD",),
    "codec/vectors.py": ("B1", "B2"),
    "codec/layout.py": ("REGISTERED_MEANING",),
    "codec/base32.py": ("_DECODE",),
    "codec/placement.py": ("_NAME_BY_WORD", "_NULLARY", "SIGNATURES", "_CANON_CTOR"),
    "writers.py": ("_REGISTERED_IDS",),
    "parsers/ggml_types.py": ("WELL_KNOWN_LAYOUTS", "UNQUANTISED", "NOT_REPRESENTABLE"),
    "parsers/fileio.py": ("_LINK_ERRNOS",),
    "parsers/safetensors_reader.py": ("DTYPE_BITS", "_DTYPE_NAME"),
    "parsers/gguf_reader.py": ("SCALARS", "TYPE_NAMES", "KNOWN_TYPES"),
    "parsers/remote/fsspec_source.py": ("_TIMEOUT_OPTION",),
    "parsers/remote/http.py": ("_DEFAULT_PORT",),
    "parsers/skips.py": ("_WEIGHT_SUFFIXES",),
    "parsers/roles.py": ("_ALIASES",),
    "__init__.py": ("_LAZY",),
    "report/page/markdown.py": ("_REFS",),
    "report/text.py": ("STYLE", "TITLE"),
    "report/inventory.py": ("_FACTS",),
    "report/policy.py": ("GRADED_CODE", "NOTHING_PARSED"),
    "report/summary.py": ("_NOUN", "_WEIGHT_KIND"),
    "report/github.py": ("COMMAND",),
    "report/sarif.py": ("LEVEL",),
    "conventions/scales.py": ("FP8", "SCALE_TOKENS"),
    "rules/kinds/grit_check.py": ("STATUS_RULE",),
    "rules/kinds/declared_mismatch.py": ("FORMAT_CONVENTIONS", "METHOD_CONVENTIONS",
                                         "ALGO_CONVENTIONS"),
    "rules/kinds/deep.py": ("_GGML_TYPE",),
    "rules/finding.py": ("_RANK",),
    "rules/docs.py": ("_EXIT_MEANING",),
    "api.py": ("_SKIP_LABEL",),
    "commands/startup.py": ("COMMAND_OF",),
}

# Written after import, each for the reason given.  Memo tables hold the
# results of pure functions keyed by value (or by an identity they keep
# alive), bounded: what they hold can change a scan's speed, never its result.
WRITTEN_BY_DESIGN = {
    ("conventions/base.py", "_REGISTRY"): "the convention registry: a Convention subclass "
                                          "adds itself when its module is imported",
    ("conventions/base.py", "_SHAPES"): "memo: one tuple per distinct shape, bounded (4,096)",
    ("codec/layout.py", "_LAYOUT_KEYS"): "memo: a layouts mapping's sorted key by identity, "
                                         "the mapping kept alive; cleared past 1,024",
    ("commands/_app.py", "_DEBUG"): "the CLI's --debug flag, set once per command line by "
                                    "its callback (one command per process); the library "
                                    "takes debug= per scan",
}

_MAKERS = {"dict", "list", "set", "defaultdict", "Counter", "OrderedDict", "deque",
           "bytearray", "WeakKeyDictionary", "WeakValueDictionary", "WeakSet"}
_MUTATORS = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
             "setdefault", "add", "discard", "sort", "reverse", "__setitem__", "__delitem__",
             "difference_update", "intersection_update", "symmetric_difference_update"}


def _modules() -> dict[str, ast.Module]:
    return {p.relative_to(PKG).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
            for p in sorted(PKG.rglob("*.py"))}


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements run at import: the module's, and those of its
    top-level if/try/with blocks (not of functions or classes)."""
    out: list[ast.stmt] = []
    for st in body:
        out.append(st)
        if isinstance(st, ast.If):
            out += _module_level(st.body) + _module_level(st.orelse)
        elif isinstance(st, ast.Try):
            out += _module_level(st.body) + _module_level(st.orelse) + _module_level(
                st.finalbody)
            for h in st.handlers:
                out += _module_level(h.body)
        elif isinstance(st, ast.With):
            out += _module_level(st.body)
    return out


def _mutable(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp,
                          ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        f = value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) \
            else None
        return name in _MAKERS
    return False


def module_mutables(mods: dict[str, ast.Module]) -> set[tuple[str, str]]:
    """(module, name) of every module-level mutable container, and
    (module, "global NAME") of every global statement."""
    found: set[tuple[str, str]] = set()
    for rel, tree_ in mods.items():
        for st in _module_level(tree_.body):
            if isinstance(st, ast.Assign):
                targets, value = st.targets, st.value
            elif isinstance(st, ast.AnnAssign):
                targets, value = [st.target], st.value
            else:
                continue
            if not _mutable(value):
                continue
            for t in targets:
                if isinstance(t, ast.Name) and t.id != "__all__":
                    found.add((rel, t.id))
        for node in ast.walk(tree_):
            if isinstance(node, (ast.Global, ast.Nonlocal)) and isinstance(node, ast.Global):
                found.update((rel, f"global {n}") for n in node.names)
    return found


def _allowed() -> set[tuple[str, str]]:
    return {(m, n) for m, names in CONSTANT_TABLES.items() for n in names} | set(
        WRITTEN_BY_DESIGN)


def test_no_new_module_level_mutable_state():
    found = module_mutables(_modules())
    new = sorted(found - _allowed())
    assert not new, (
        "module-level mutable state (it would outlive a scan): make it a tuple, a frozenset "
        "or a types.MappingProxyType, or per-scan state handed down the call path; "
        f"failing that, add it to this test's allow-list with its reason: {new}")
    gone = sorted(_allowed() - found)
    assert not gone, f"allow-listed but no longer in the code (remove the entry): {gone}"


def _writes(tree_: ast.AST, names: set[str]) -> set[str]:
    """Which of ``names`` code run after import (a function's body) writes
    into: ``N[k] = ...``, ``del N[k]``, ``N[k] += ...``, ``N.update(...)``
    and the other mutating methods.  Statements at module level build the
    table while it is imported (base32's aliases)."""
    hit: set[str] = set()
    bodies = [n for n in ast.walk(tree_) if isinstance(n, (ast.FunctionDef,
                                                            ast.AsyncFunctionDef, ast.Lambda))]
    for node in (x for f in bodies for x in ast.walk(f)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and isinstance(node.value, ast.Name) and node.value.id in names:
            hit.add(node.value.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Name) \
                and node.func.value.id in names:
            hit.add(node.func.value.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) \
                and node.target.id in names:
            hit.add(node.target.id)
    return hit


def _imported_from(tree_: ast.Module, rel: str, module: str) -> set[str]:
    """The names ``tree_`` (module ``rel``) imports from ``module`` (both
    paths relative to the package), under the names it binds them to."""
    target = module[:-3].replace("/", ".").removesuffix(".__init__").removesuffix("__init__")
    here = rel[:-3].split("/")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree_):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                full = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            else:
                full = (node.module or "").removeprefix("grit_scan").strip(".")
            if full == target:
                out.update(a.asname or a.name for a in node.names)
    return out


def test_constant_tables_are_never_written():
    """The allow-listed tables are constants in fact: nothing in the package
    writes into one (a write would be state a scan leaves behind)."""
    mods = _modules()
    written = []
    for rel, names in CONSTANT_TABLES.items():
        own = set(names)
        hits = _writes(mods[rel], own)
        for other, tree_ in mods.items():
            if other != rel:
                hits |= _writes(tree_, own & _imported_from(tree_, other, rel))
        written += [(rel, n) for n in sorted(hits)]
    assert not written, written


def test_the_static_check_sees_what_it_must():
    """The checker itself: each kind of module state it claims to catch is
    caught, and the constant forms are not."""
    src = ("import collections\n"
           "A = []\nB: dict[str, int] = {}\nC = {1}\nD = [x for x in ()]\n"
           "E = collections.defaultdict(list)\nF = dict()\n"
           "if True:\n    G = {}\n"
           "T = ()\nU = frozenset({1})\nV = MappingProxyType({'a': 1})\n__all__ = ['x']\n"
           "def f():\n    global H\n    H = 1\n    local = {}\n")
    got = module_mutables({"m.py": ast.parse(src)})
    assert got == {("m.py", n) for n in ("A", "B", "C", "D", "E", "F", "G", "global H")}
    body = "def f():\n    K['a'] = 1\n    L.update({})\n    del M[0]\n    N += 1\n    O.get(1)\n"
    assert _writes(ast.parse(body + "P['a'] = 1\n"),
                   {"K", "L", "M", "N", "O", "P"}) == {"K", "L", "M", "N"}


# --- two scans in one process ------------------------------------------------


def _checkpoint(path: Path) -> None:
    """A GRIT safetensors file whose tensors record their digests; the last
    byte of the file is then changed, so that --deep finds one mismatch."""
    rng = np.random.default_rng(27)
    tensors = []
    for i, shape in enumerate([(3, 64), (5, 32), (2, 256), (7, 96)]):
        enc = encode((rng.standard_normal(shape) * 2).astype(np.float32),
                     (G.GRADE_MXFP4, G.GRADE_NVF4)[i % 2], 1)
        tensors.append(GritTensor.from_encoded(f"model.layers.{i}.mlp.w.weight", enc))
    write_grit_safetensors(path, tensors)
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF
    path.write_bytes(bytes(raw))


def _tables() -> dict[tuple[str, str], object]:
    import importlib

    out = {}
    for rel, names in CONSTANT_TABLES.items():
        mod = rel[:-3].replace("/", ".").removesuffix(".__init__").removesuffix("__init__")
        m = importlib.import_module(f"grit_scan.{mod}" if mod else "grit_scan")
        for n in names:
            out[(rel, n)] = copy.deepcopy(getattr(m, n))
    return out


def _digest_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("grit-digest")]


def test_two_scans_in_one_process_share_nothing(tmp_path, monkeypatch):
    p = tmp_path / "m.safetensors"
    _checkpoint(p)
    tables = _tables()
    meters, reports = [], []
    for _ in range(2):
        meter = fileio.ReadMeter()
        r = grit_scan.scan([str(tmp_path)], deep=True, jobs=2, meter=meter)
        meters.append(meter.total)
        reports.append(r.to_json())
        # the scan's digest threads were joined before it returned
        assert not _digest_threads()
    # --deep ran: the changed byte is one digest mismatch, in both scans
    kinds = [f["kind"] for f in reports[0]["findings"]]
    assert kinds.count("digest_mismatch") == 1, kinds
    assert reports[0] == reports[1]
    # each meter counted its own scan: the header and every tensor's bytes
    # once, never the other scan's (a process-wide counter would double)
    size = p.stat().st_size
    assert meters[0] == meters[1] and size <= meters[0] < 2 * size, (meters, size)
    # and no scan wrote into a module's table
    assert _tables() == tables


def test_tracebacks_are_the_scans_own(tmp_path, monkeypatch):
    """A reader that raises is contained to its file, and --debug gives its
    traceback in that scan's report only: repeated scans report the same
    number, not an ever-growing list."""
    _checkpoint(tmp_path / "a.safetensors")
    _checkpoint(tmp_path / "b.safetensors")

    def boom(*_a, **_k):
        raise RuntimeError("reader failed")

    monkeypatch.setattr(tree.readers, "read_path", boom)
    counts = [len(grit_scan.scan([str(tmp_path)], debug=True).tracebacks) for _ in range(3)]
    assert counts == [2, 2, 2]
