"""docs/architecture.md stays true: its module map names every module of
the package and nothing that does not exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "grit_scan"


def _documented() -> set[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text.split("## Module map", 1)[1].split("## Recipe", 1)[0]
    out: set[str] = set()
    for cell in re.findall(r"^\| (.+?) \|", table, flags=re.M):
        names = re.findall(r"`([^`]+)`", cell)
        base = ""
        for n in names:
            if "/" in n:
                base = n.rsplit("/", 1)[0] + "/"
                out.add(n)
            else:
                out.add(base + n)
    return out


def test_module_map_is_complete_and_true():
    documented = _documented()
    real = {str(p.relative_to(ROOT)) for p in PKG.rglob("*.py")
            if "kinds" not in p.parts and p.name != "__init__.py"}
    real |= {str(p.relative_to(ROOT)) for p in PKG.rglob("*.c")}
    real.add("grit_scan/__init__.py")
    kinds = {d for d in documented if "*" in d}
    assert kinds == {"grit_scan/rules/kinds/*.py", "grit_scan/conventions/kinds/*.py"}
    missing = real - documented
    assert not missing, f"not in docs/architecture.md: {sorted(missing)}"
    stale = {d for d in documented - kinds if not (ROOT / d).exists()}
    assert not stale, f"docs/architecture.md names modules that do not exist: {sorted(stale)}"


def test_layer_contracts_are_listed():
    text = (ROOT / "docs" / "architecture.md").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    n = pyproject.count("[[tool.importlinter.contracts]]")
    assert n >= 6
    assert text.count("\n* ") >= n


def _cycles(graph) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.find_modules_directly_imported_by(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for m in sorted(graph.modules):
        if m not in index:
            visit(m)
    return out


def test_no_import_cycles():
    """No module imports another that imports it back, directly or through
    others, counting imports inside functions (grimp sees those too).
    Imports under ``if TYPE_CHECKING:`` are left out: they never run."""
    import sys

    import grimp

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    graph = grimp.build_graph("grit_scan", exclude_type_checking_imports=True)
    assert _cycles(graph) == []
    # the check can fail: a graph with one import added back has a cycle
    graph.add_import(importer="grit_scan.report.summary", imported="grit_scan.report.formats")
    (cycle,) = _cycles(graph)
    assert {"grit_scan.report.formats", "grit_scan.report.summary"} <= set(cycle)
