"""Scripted mutation testing of grit-scan's core modules (docs/architecture.md,
"Mutation testing").

    .venv/bin/python tools/mutants.py [--group NAME ...] [--jobs N] [--budget S]
                                      [--rerun RESULTS.json] [--out DIR]
                                      [--timeout S] [--list] [--report-only]

Each target module is mutated one operator at a time (comparison flips,
and/or swaps, ``not`` removal, + / - and * / // swaps, integer constants + 1,
return values replaced, a statement of an if-body replaced by ``pass``).  A
mutant is run against the tests of its group that execute the mutated lines:
a traced run of the group's tests first records which test reaches which
line (memoised functions' caches emptied before each test; what importing a
target runs is traced too; a module-level line gets every test that runs
the module's code), with ``-x`` semantics: the first failure kills it, so
does a run longer than ``--timeout`` (an infinite loop); a mutant no test
reaches survives without a run.  ``--budget S`` runs only the fastest of the
selected tests that fit S traced seconds.

Mutants run in children forked from one process that collected the group's
tests once: the mutated function's code is swapped into the imported module
(every reference to the function sees it), or, for a module not imported
yet, the mutated source is served by an import hook.  Module-level mutants,
and survivors whose lines ran at import (state computed then), are decided
in a fresh interpreter.  Nothing on disk changes.  Tests that start another
Python process see the unmutated code.

Equivalent mutants are listed in tools/mutants-equivalent.txt, one per line:
``ID  reason`` (the ID as the report prints it).  The report
(OUT/mutants-report.md) lists every survivor with its file:line, operator and
mutated line, and the figures per group; OUT/mutants-results.json keeps every
outcome, and ``--rerun`` runs again only the survivors of such a file.
"""

from __future__ import annotations

import argparse
import ast
import copy
import datetime
import difflib
import fnmatch
import glob
import importlib.abc
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from types import CodeType, FrameType, FunctionType, ModuleType
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EQUIVALENT = os.path.join(ROOT, "tools", "mutants-equivalent.txt")

CONVENTION_TESTS = [
    "tests/test_conventions_oracles.py", "tests/test_conventions_fp8_layouts.py",
    "tests/test_conventions_gptq_shapes.py", "tests/test_conventions_registry.py",
    "tests/test_producers_mlx.py",
    "tests/test_producers_awq_gemv.py", "tests/test_producers_bnb4.py",
    "tests/test_producers_conventions.py", "tests/test_producers_decode.py",
    "tests/test_models_shards.py", "tests/test_grit_check_kind.py",
    "tests/test_mut_conv_*.py"]
# the acceptance figure of the conventions package sums these groups
PACKAGE = {"conventions package": ("conventions", "conventions-kinds")}

# group -> (target files, test files that exercise them, fastest first)
GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "models": (
        ["grit_scan/parsers/models.py"],
        ["tests/test_models_split.py", "tests/test_models_shards.py",
         "tests/test_models_columns.py", "tests/test_models_schemes.py",
         "tests/test_producers_models.py", "tests/test_scan_scenarios.py",
         "tests/test_conventions_oracles.py", "tests/test_convention_plans.py",
         "tests/test_bench_conventions.py", "tests/test_models_positions.py",
         "tests/test_plan_planes.py", "tests/test_qtensor_frozen.py",
         "tests/test_models_contain.py", "tests/test_models_issue_homes.py",
         "tests/test_models_objects.py",
         "tests/test_reliability.py::test_an_exception_in_convention_inference_is_contained",
         "tests/test_reliability.py::test_convention_error_lands_on_the_first_readable_shard"],
    ),
    # the conventions package, in two groups run side by side (one test list)
    "conventions": (
        ["grit_scan/conventions/base.py", "grit_scan/conventions/engine.py",
         "grit_scan/conventions/scales.py", "grit_scan/conventions/suffixes.py"],
        # and the tests that hold the engine's plans to layouts and shards
        CONVENTION_TESTS + ["tests/test_mut_conv_layouts.py", "tests/test_mut_conv_engine.py",
                            "tests/test_plan_planes.py",
                            "tests/test_convention_plans.py"],
    ),
    "conventions-kinds": (["grit_scan/conventions/kinds/*.py"], CONVENTION_TESTS),
    "grit_check": (
        ["grit_scan/rules/kinds/grit_check.py"],
        ["tests/test_grit_check_kind.py", "tests/test_rules_kins.py", "tests/test_registry.py",
         "tests/test_qlist.py", "tests/test_producers_bnb4.py", "tests/test_models_schemes.py",
         "tests/test_manifest_read.py", "tests/test_scan_scenarios.py",
         "tests/test_mut_gc_sizes.py"],
    ),
    "grade": (
        ["grit_scan/codec/grade.py"],
        ["tests/test_grade.py", "tests/test_supersedes_explain.py", "tests/test_descriptor.py",
         "tests/test_reliability.py::test_fuzz_grade_parser",
         "tests/test_reliability.py::test_grade_spellings_parse_to_the_spec_grade"],
    ),
}
IMPORT_TIME = "<import>"  # lines run while modules are imported


# ---------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str
    line: int
    end_line: int
    operator: str
    original: str
    mutated: str  # the mutated line(s), as the report shows them
    function: str  # the qualified name of the function it is in ("" at module level)
    source: str = ""  # the whole mutated module

    def public(self) -> dict[str, Any]:
        d = asdict(self)
        del d["source"]
        return d


_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
        ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
        ast.In: ast.NotIn, ast.NotIn: ast.In}
_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult}
_SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
        ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
        ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//",
        ast.And: "and", ast.Or: "or"}


def _skipped_nodes(tree: ast.AST) -> set[int]:
    """Nodes not mutated: docstrings, annotations, f-string parts (their
    positions are not reliable before Python 3.12), TYPE_CHECKING blocks."""
    skip: set[int] = set()

    def drop(n: ast.AST | None) -> None:
        if n is not None:
            skip.update(id(x) for x in ast.walk(n))

    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            drop(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            drop(n.returns)
            for a in [*n.args.args, *n.args.kwonlyargs, *n.args.posonlyargs,
                      n.args.vararg, n.args.kwarg]:
                if a is not None:
                    drop(a.annotation)
        elif isinstance(n, ast.AnnAssign):
            drop(n.annotation)
        elif isinstance(n, ast.If) and ast.unparse(n.test) in ("TYPE_CHECKING",):
            drop(n)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = n.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                drop(body[0])
    return skip


def _edits(tree: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None, str, bool]]:
    """(node, replacement or None for ``pass``, operator name, is_statement)."""
    skip = _skipped_nodes(tree)
    for n in ast.walk(tree):
        if id(n) in skip:
            continue
        if isinstance(n, ast.Compare):
            for i, op in enumerate(n.ops):
                new = _CMP.get(type(op))
                if new is not None:
                    m = copy.deepcopy(n)
                    m.ops[i] = new()
                    yield n, m, f"{_SYM[type(op)]} -> {_SYM[new]}", False
        elif isinstance(n, ast.BoolOp):
            m = copy.deepcopy(n)
            m.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()
            yield n, m, f"{_SYM[type(n.op)]} -> {_SYM[type(m.op)]}", False
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            yield n, copy.deepcopy(n.operand), "not removed", False
        elif isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            m = copy.deepcopy(n)
            m.op = _BIN[type(n.op)]()
            yield n, m, f"{_SYM[type(n.op)]} -> {_SYM[type(m.op)]}", False
        elif isinstance(n, ast.AugAssign) and type(n.op) in _BIN:
            m = copy.deepcopy(n)
            m.op = _BIN[type(n.op)]()
            yield n, m, f"{_SYM[type(n.op)]}= -> {_SYM[type(m.op)]}=", True
        elif (isinstance(n, ast.Constant) and type(n.value) is int):
            yield n, ast.Constant(n.value + 1), f"{n.value} -> {n.value + 1}", False
        elif isinstance(n, ast.Return) and n.value is not None:
            v = n.value
            if isinstance(v, ast.Constant) and v.value is None:
                continue
            if isinstance(v, ast.Constant) and isinstance(v.value, bool):
                yield n, ast.Return(ast.Constant(not v.value)), \
                    f"return {v.value} -> {not v.value}", True
            else:
                yield n, ast.Return(ast.Constant(None)), "return value -> None", True
        if isinstance(n, ast.If):
            for s in n.body:
                if id(s) not in skip and not isinstance(s, ast.Pass):
                    yield s, None, "if-body statement -> pass", True


def _functions(tree: ast.Module) -> dict[int, str]:
    """Node id -> qualified name of the outermost function holding it (a
    module-level function or a method of a module-level class)."""
    out: dict[int, str] = {}

    def visit(n: ast.AST, prefix: str) -> None:
        for c in ast.iter_child_nodes(n):
            if isinstance(c, ast.ClassDef):
                visit(c, prefix + c.name + ".")
            elif isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + c.name
                for x in c.body:
                    for y in ast.walk(x):
                        out[id(y)] = q
            else:
                visit(c, prefix)

    visit(tree, "")
    return out


def _offset(lines: Sequence[str], line: int, col: int) -> int:
    """Character offset of (1-based line, UTF-8 byte column)."""
    before = sum(len(x) for x in lines[:line - 1])
    return before + len(lines[line - 1].encode()[:col].decode())


def mutants_of(path: str) -> list[Mutant]:
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        src = f.read()
    tree = ast.parse(src)
    funcs = _functions(tree)
    lines = src.splitlines(keepends=True)
    out: list[Mutant] = []
    seen: set[str] = set()
    for node, new, opname, stmt in _edits(tree):
        ln, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
        eln, ecol = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        a, b = _offset(lines, ln, col), _offset(lines, eln, ecol)
        if new is None:
            text = "pass"
        elif stmt:
            text = ast.unparse(new)
        else:
            text = "(" + ast.unparse(new) + ")"
        msrc = src[:a] + text + src[b:]
        try:
            compile(msrc, path, "exec")
        except SyntaxError:
            continue
        mid = f"{rel}:{ln}:{col}:{opname}"
        k = 2
        while mid in seen:
            mid = f"{rel}:{ln}:{col}:{opname}#{k}"
            k += 1
        seen.add(mid)
        first = msrc[_offset(lines, ln, 0):].split("\n", 1)[0]
        out.append(Mutant(mid, rel, ln, eln, opname, lines[ln - 1].rstrip("\n"),
                          first, funcs.get(id(node), ""), msrc))
    return out


def module_name(rel: str) -> str:
    return rel[:-3].replace("/", ".")


def targets(group: str) -> list[str]:
    files: list[str] = []
    for pat in GROUPS[group][0]:
        files += sorted(glob.glob(os.path.join(ROOT, pat)))
    return [f for f in files if not os.path.basename(f) == "__init__.py"]


def test_files(group: str) -> list[str]:
    """The group's test files (a pattern names every file it matches, in order)."""
    out: list[str] = []
    for t in GROUPS[group][1]:
        path = t.split("::", 1)[0]
        if glob.has_magic(path):
            out += [os.path.relpath(f, ROOT)
                    for f in sorted(glob.glob(os.path.join(ROOT, path)))]
        elif os.path.exists(os.path.join(ROOT, path)):
            out.append(t)
    return out


# ------------------------------------------------------------- the runner


class _Mutated(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the mutated source for one module name."""

    def __init__(self, name: str, path: str, source: str) -> None:
        self.name, self.path, self.source = name, path, source

    def find_spec(self, fullname: str, path: Any, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=self.path)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__file__ = self.path
        exec(compile(self.source, self.path, "exec"), module.__dict__)


def _find_code(code: CodeType, qual: str) -> CodeType | None:
    for c in code.co_consts:
        if isinstance(c, CodeType):
            if c.co_qualname == qual:
                return c
            found = _find_code(c, qual)
            if found is not None:
                return found
    return None


def _patch(m: Mutant) -> bool:
    """In a child: make the mutant live in this process.  A module not yet
    imported is served mutated when it is; an imported one gets the mutated
    function's code swapped in (every reference to the function sees it).
    False: neither applies (module-level code, or a closure that changed)."""
    name = module_name(m.path)
    mod = sys.modules.get(name)
    if mod is None:
        sys.meta_path.insert(0, _Mutated(name, os.path.join(ROOT, m.path), m.source))
        return True
    if not m.function:
        return False
    new = _find_code(compile(m.source, os.path.join(ROOT, m.path), "exec"), m.function)
    if new is None:
        return False
    obj: Any = mod
    for part in m.function.split("."):
        obj = vars(obj).get(part) if hasattr(obj, "__dict__") else None
        if obj is None:
            return False
    for _ in range(5):  # unwrap staticmethod, classmethod, property, lru_cache
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        elif isinstance(obj, property):
            obj = obj.fget
        elif isinstance(obj, FunctionType):
            break
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        else:
            return False
    if not isinstance(obj, FunctionType) or obj.__code__.co_qualname != m.function:
        return False
    try:
        obj.__code__ = new
    except ValueError:  # the closure's free variables changed
        return False
    for v in list(vars(mod).values()):
        clear = getattr(v, "cache_clear", None)
        if callable(clear):
            clear()
    return True


def _import_time_lines(body: Sequence[ast.stmt]) -> Iterator[int]:
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([n.body[0].lineno, *(d.lineno for d in n.decorator_list)])
            yield from range(min(first, n.lineno), n.body[0].lineno)
        elif isinstance(n, ast.ClassDef):
            yield from range(n.lineno, n.body[0].lineno)
            yield from _import_time_lines(n.body)
        else:
            yield from range(n.lineno, (n.end_lineno or n.lineno) + 1)


def _child(fn: Callable[[], int], timeout: float) -> tuple[int | None, float]:
    """Run ``fn`` in a forked child (its own process group, output dropped):
    its exit code, None on timeout."""
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        os.setpgid(0, 0)
        rc = 3
        try:
            dn = os.open(os.devnull, os.O_WRONLY)
            os.dup2(dn, 1)
            os.dup2(dn, 2)
            rc = int(fn())
        except BaseException:  # noqa: BLE001  (a crash of the mutant kills it)
            rc = 4
        finally:
            os._exit(rc)
    deadline = t0 + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), time.monotonic() - t0
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return None, time.monotonic() - t0
        time.sleep(0.01)


def _fresh(m: Mutant, ids: Sequence[str], timeout: float, out_dir: str) -> int | None:
    """Run ``ids`` in a new interpreter with the mutant imported in place of
    its module: pytest's exit code, None on timeout."""
    sel = os.path.join(out_dir, "selected.txt")
    with open(sel, "w") as f:
        f.write("\n".join(ids))
    cmd = [sys.executable, os.path.abspath(__file__), "--one", m.id, "--tests", sel]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


FRESH_BUDGET = 6.0  # seconds of tests (as traced) a fresh interpreter runs, fastest first


def _fastest(ids: Sequence[str], seconds: dict[str, float], budget: float = FRESH_BUDGET
             ) -> list[str]:
    """The fastest of ``ids`` (they come sorted by time) that fit ``budget``
    seconds as traced (at least one)."""
    out: list[str] = []
    total = 0.0
    for i in ids:
        total += seconds.get(i, 0.0)
        if out and total > budget:
            break
        out.append(i)
    return out


def _one(mid: str, tests_file: str) -> int:
    import pytest

    path = mid.split(":", 1)[0]
    m = next(x for x in mutants_of(os.path.join(ROOT, path)) if x.id == mid)
    sys.meta_path.insert(0, _Mutated(module_name(m.path), os.path.join(ROOT, m.path), m.source))
    with open(tests_file) as f:
        ids = f.read().split("\n")
    return int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *ids]))


class _Campaign:
    """A pytest plugin: after collection, runs the group's mutants instead
    of the tests, each in a child forked from the collected session."""

    def __init__(self, group: str, muts: list[Mutant], files: list[str], timeout: float,
                 out_dir: str, budget: float) -> None:
        self.group, self.muts, self.files, self.budget = group, muts, files, budget
        self.timeout, self.out_dir = timeout, out_dir
        self.results: dict[str, dict[str, Any]] = {}
        self.failed = False
        self.current = IMPORT_TIME

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.failed = True

    def _run_items(self, items: Sequence[Any]) -> int:
        for k, it in enumerate(items):
            self.current = it.nodeid
            it.ihook.pytest_runtest_protocol(
                item=it, nextitem=items[k + 1] if k + 1 < len(items) else None)
            if self.failed:
                return 1
        return 0

    def _traced(self, items: Sequence[Any], out: str) -> int:
        """Every item once, under a line tracer limited to the targets:
        {file: {line: [test ids]}} and each test's seconds, to ``out``."""
        import threading

        wanted = set(self.files)
        hits: dict[str, dict[int, set[str]]] = {f: {} for f in self.files}
        # lines run at import, before the tests (the collection did them):
        # module-level statements, class bodies, def lines and their defaults
        for f in self.files:
            if module_name(os.path.relpath(f, ROOT)) in sys.modules:
                with open(f, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read())
                for ln in _import_time_lines(tree.body):
                    hits[f].setdefault(ln, set()).add(IMPORT_TIME)

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                hits[frame.f_code.co_filename].setdefault(frame.f_lineno, set()).add(
                    self.current)
            return local

        def glob_(frame: FrameType, event: str, arg: Any) -> Any:
            if frame.f_code.co_filename in wanted:
                hits[frame.f_code.co_filename].setdefault(frame.f_lineno, set()).add(
                    self.current)
                return local
            return None

        seconds: dict[str, float] = {}
        sys.settrace(glob_)
        threading.settrace(glob_)
        # what importing a target runs (functions it calls at module level
        # too): each executed again under the tracer, in a namespace of its
        # own that no other module sees
        self.current = IMPORT_TIME
        for f in self.files:
            name = module_name(os.path.relpath(f, ROOT))
            ns = {"__name__": name + "__probe", "__package__": name.rpartition(".")[0],
                  "__file__": f}
            try:
                with open(f, encoding="utf-8") as fh:
                    exec(compile(fh.read(), f, "exec"), ns)
            except Exception:  # noqa: BLE001, S110  (a registry refusing a second definition)
                pass
        for k, it in enumerate(items):
            self.current = it.nodeid
            # a memoised function's body runs for the first test that asks:
            # emptied before each test, it runs for every test that asks
            for f in self.files:
                mod = sys.modules.get(module_name(os.path.relpath(f, ROOT)))
                for v in list(vars(mod).values()) if mod is not None else ():
                    clear = getattr(v, "cache_clear", None)
                    if callable(clear):
                        clear()
            t0 = time.monotonic()
            it.ihook.pytest_runtest_protocol(
                item=it, nextitem=items[k + 1] if k + 1 < len(items) else None)
            seconds[it.nodeid] = time.monotonic() - t0
        sys.settrace(None)
        with open(out, "w") as f:
            json.dump({"seconds": seconds,
                       "hits": {k: {str(ln): sorted(v) for ln, v in d.items()}
                                for k, d in hits.items()}}, f)
        return 1 if self.failed else 0

    def pytest_runtestloop(self, session: Any) -> bool:
        if session.testsfailed:
            raise SystemExit(f"[{self.group}] collection failed")
        items = list(session.items)
        by_id = {it.nodeid: it for it in items}
        cov = os.path.join(self.out_dir, f"cover-{self.group}.json")
        rc, took = _child(lambda: self._traced(items, cov), 3600)
        if rc != 0:
            raise SystemExit(f"[{self.group}] the unmutated tests fail (exit {rc}); fix them first")
        print(f"[{self.group}] traced run of {len(items)} tests: {took:.1f} s", flush=True)
        with open(cov) as f:
            data = json.load(f)
        seconds: dict[str, float] = data["seconds"]
        hits: dict[str, dict[str, list[str]]] = data["hits"]
        # how many lines of each file each test runs: the tests that run most
        # of a mutant's module are tried first (a line every scan runs, such
        # as a convention's claims, is reached by hundreds of tests)
        depth: dict[str, Counter[str]] = {}
        for f, lines in hits.items():
            c: Counter[str] = Counter()
            for tests in lines.values():
                c.update(tests)
            depth[f] = c
        for k, m in enumerate(self.muts, 1):
            lines = hits.get(os.path.join(ROOT, m.path), {})
            ids: set[str] = set()
            for ln in range(m.line, m.end_line + 1):
                ids.update(lines.get(str(ln), ()))
            at_import = IMPORT_TIME in ids
            ids.discard(IMPORT_TIME)
            if at_import and not ids:
                # module-level code: every test that runs this module's code
                ids = {t for v in lines.values() for t in v} - {IMPORT_TIME}
            deep = depth.get(os.path.join(ROOT, m.path), Counter())
            sel = sorted(ids, key=lambda i: (-deep[i], seconds.get(i, 0.0), i))
            if self.budget:
                sel = _fastest(sel, seconds, self.budget)
            t0 = time.monotonic()
            how = ""
            if not sel:
                outcome, note = "survived", "no test reaches it"
            else:
                def go(m: Mutant = m, sel: list[str] = sel) -> int:
                    if not _patch(m):
                        return 5
                    return self._run_items([by_id[i] for i in sel])

                rc, _ = (5, 0.0) if at_import and not m.function else _child(go, self.timeout)
                how = "fork"
                if rc == 5 or (rc == 0 and at_import):
                    # not patchable in place, or run at import (cached state):
                    # a fresh interpreter decides
                    rc = _fresh(m, _fastest(sel, seconds), self.timeout, self.out_dir)
                    how = "fresh"
                if rc is None:
                    outcome, note = "killed", "timeout"
                elif rc == 0:
                    outcome, note = "survived", f"{len(sel)} test(s) pass"
                else:
                    outcome, note = "killed", "" if rc == 1 else f"exit {rc}"
            secs = time.monotonic() - t0
            self.results[m.id] = {**m.public(), "group": self.group, "outcome": outcome,
                                  "note": note, "seconds": round(secs, 2), "how": how}
            print(f"[{self.group}] {k}/{len(self.muts)} {outcome:8} {secs:5.1f}s {how:5} {m.id}",
                  flush=True)
        return True


def run_group(group: str, timeout: float, out_dir: str, only: set[str] | None,
              budget: float) -> dict[str, dict[str, Any]]:
    import pytest

    os.chdir(ROOT)
    files = targets(group)
    muts = [m for f in files for m in mutants_of(f)]
    if only is not None:
        muts = [m for m in muts if m.id in only]
    tests = test_files(group)
    print(f"[{group}] {len(muts)} mutants over {len(files)} files; tests: {' '.join(tests)}",
          flush=True)
    if not muts:
        return {}
    plugin = _Campaign(group, muts, files, timeout, out_dir, budget)
    pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--no-header", *tests],
                plugins=[plugin])
    return plugin.results


def run(groups: Sequence[str], timeout: float, out_dir: str, jobs: int,
        rerun: dict[str, dict[str, Any]] | None, budget: float) -> dict[str, dict[str, Any]]:
    """Each group in its own interpreter (``jobs`` at a time)."""
    results: dict[str, dict[str, Any]] = dict(rerun or {})
    pending = list(groups)
    running: list[tuple[str, subprocess.Popen[bytes], str]] = []
    only = None
    if rerun is not None:
        only = os.path.join(out_dir, "rerun-ids.txt")
        with open(only, "w") as f:
            f.write("\n".join(k for k, r in rerun.items() if r["outcome"] == "survived"))
    try:
        _loop(pending, running, results, jobs, out_dir, timeout, only, budget)
    finally:
        for _, proc, _ in running:
            proc.kill()
    return results


def _loop(pending: list[str], running: list[tuple[str, subprocess.Popen[bytes], str]],
          results: dict[str, dict[str, Any]], jobs: int, out_dir: str, timeout: float,
          only: str | None, budget: float) -> None:
    while pending or running:
        while pending and len(running) < jobs:
            g = pending.pop(0)
            res = os.path.join(out_dir, f"results-{g}.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--run-group", g, "--out", out_dir,
                   "--timeout", str(timeout), "--results", res, "--budget", str(budget)]
            if only is not None:
                cmd += ["--only", only]
            log = open(os.path.join(out_dir, f"log-{g}.txt"), "w")
            running.append((g, subprocess.Popen(cmd, cwd=ROOT, stdout=log,
                                                stderr=subprocess.STDOUT), res))
        time.sleep(1)
        for entry in list(running):
            g, proc, res = entry
            if proc.poll() is not None:
                running.remove(entry)
                if proc.returncode != 0 or not os.path.exists(res):
                    raise SystemExit(f"[{g}] failed (exit {proc.returncode}); see "
                                     f"{os.path.join(out_dir, f'log-{g}.txt')}")
                with open(res) as f:
                    results.update(json.load(f))
                print(f"[{g}] done", flush=True)


# ------------------------------------------------------------ the report


def load_equivalent() -> dict[str, str]:
    """tools/mutants-equivalent.txt: ``ID  reason`` a line (two spaces apart)."""
    eq: dict[str, str] = {}
    if os.path.exists(EQUIVALENT):
        with open(EQUIVALENT, encoding="utf-8") as f:
            for raw in f:
                line = raw.rstrip("\n")
                if line.strip() and not line.startswith("#"):
                    mid, _, reason = line.partition("  ")
                    eq[mid.strip()] = reason.strip()
    return eq


def figures(results: dict[str, dict[str, Any]], eq: dict[str, str]
            ) -> dict[str, dict[str, int]]:
    fig: dict[str, dict[str, int]] = {}
    for mid, r in results.items():
        g = group_of(r["path"])
        for key in [g] + [p for p, gs in PACKAGE.items() if g in gs]:
            f = fig.setdefault(key, {"mutants": 0, "killed": 0, "equivalent": 0,
                                     "survived": 0})
            f["mutants"] += 1
            if r["outcome"] == "killed":
                f["killed"] += 1
            elif mid in eq:
                f["equivalent"] += 1
            else:
                f["survived"] += 1
    return fig


def group_of(rel: str) -> str:
    """The group whose targets hold the file ``rel`` (results record their
    group, but a group may have been split since)."""
    for g, (pats, _) in GROUPS.items():
        if any(fnmatch.fnmatch(rel, p) for p in pats):
            return g
    return "?"


def report(results: dict[str, dict[str, Any]], eq: dict[str, str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    today = datetime.date.today().isoformat()
    out = [f"# Mutation run, {today}, commit {commit}", "",
           "Reproduce: see docs/architecture.md, \"Mutation testing\"", "",
           "| group | mutants | killed | equivalent | survived | killed % |",
           "|---|---|---|---|---|---|"]
    fig = figures(results, eq)
    for g in [*GROUPS, *PACKAGE]:
        if g in fig:
            f = fig[g]
            live = f["mutants"] - f["equivalent"]
            pct = 100.0 * f["killed"] / live if live else 100.0
            out.append(f"| {g} | {f['mutants']} | {f['killed']} | {f['equivalent']} | "
                       f"{f['survived']} | {pct:.1f} |")
    out += ["", "## Survivors", ""]
    for mid, r in sorted(results.items(), key=lambda x: (x[1]["path"], x[1]["line"])):
        if r["outcome"] == "survived" and mid not in eq:
            out.append(f"- `{r['path']}:{r['line']}` {r['operator']} ({r['note']}): "
                       f"`{r['mutated'].strip()}`  \n  id `{mid}`")
    out += ["", "## Equivalent", ""]
    for mid, r in sorted(results.items(), key=lambda x: (x[1]["path"], x[1]["line"])):
        if r["outcome"] == "survived" and mid in eq:
            out.append(f"- `{mid}`: {eq[mid]}")
    return "\n".join(out) + "\n"


def _kept_lines(old: list[str], now: list[str]) -> dict[int, int]:
    """Old line number -> new line number of every line a diff of ``old``
    and ``now`` keeps unchanged (difflib's matching blocks)."""
    out: dict[int, int] = {}
    for a, b, n in difflib.SequenceMatcher(None, old, now, autojunk=False).get_matching_blocks():
        out.update(zip(range(a + 1, a + n + 1), range(b + 1, b + n + 1)))
    return out


def rekey(rev: str, paths: Sequence[str]) -> int:
    """Equivalent mutants' ids carry line numbers; when lines move, each id
    moves to the one line of its file whose text is the text its line had
    at ``rev`` (its column and operator kept), for the files matching
    ``paths``: ``rev`` must be a revision at which their ids were right.  An
    id whose line text is gone or repeated is listed to be checked again by
    hand."""
    with open(EQUIVALENT, encoding="utf-8") as f:
        rows = f.read().split("\n")
    old_src: dict[str, list[str]] = {}
    now_src: dict[str, list[str]] = {}
    kept: dict[str, dict[int, int]] = {}
    out, unplaced, moved = [], [], 0
    for row in rows:
        mid, sep, reason = row.partition("  ")
        parts = mid.split(":")
        if (row.startswith("#") or not sep or len(parts) < 4 or not parts[1].isdigit()
                or not any(fnmatch.fnmatch(parts[0], g) for g in paths)):
            out.append(row)
            continue
        path, line = parts[0], int(parts[1])
        if path not in old_src:
            got = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT,
                                 capture_output=True, text=True)
            old_src[path] = got.stdout.split("\n") if got.returncode == 0 else []
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                now_src[path] = f.read().split("\n")
        old, now = old_src[path], now_src[path]
        text = old[line - 1] if 0 < line <= len(old) else None
        # the line's place in the new text, where a diff of the two keeps it
        # unchanged (a repeated line such as "return None" that another
        # has taken the number of is followed, not left on its old number)
        if path not in kept:
            kept[path] = _kept_lines(old, now)
        if text is not None and line in kept[path]:
            new = kept[path][line]
            if new != line:
                parts[1] = str(new)
                row = ":".join(parts) + sep + reason
                moved += 1
            out.append(row)
            continue
        hits = [i + 1 for i, t in enumerate(now) if t == text]
        back = 1
        while len(hits) > 1 and back <= 3 and line - back >= 1:
            # a repeated line ("return True"): the lines above it decide
            ctx = old[line - 1 - back]
            hits = [h for h in hits if h - back >= 1 and now[h - 1 - back] == ctx]
            back += 1
        if text is None or len(hits) != 1:
            unplaced.append(mid)
            out.append(row)
            continue
        parts[1] = str(hits[0])
        out.append(":".join(parts) + sep + reason)
        moved += 1
    with open(EQUIVALENT, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    print(f"{moved} id(s) moved; {len(unplaced)} to check by hand")
    for mid in unplaced:
        print(f"  {mid}")
    return 1 if unplaced else 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--group", action="append", choices=list(GROUPS))
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    p.add_argument("--jobs", type=int, default=1, help="groups run at once")
    p.add_argument("--budget", type=float, default=0.0,
                   help="per mutant, run only the fastest selected tests that fit this many "
                        "seconds (as timed in the traced run); 0: every selected test")
    p.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "grit-mutants"))
    p.add_argument("--rerun", help="a mutants-results.json: run only its survivors again")
    p.add_argument("--report-only", action="store_true",
                   help="rewrite the report from OUT/mutants-results.json")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--rekey", metavar="REV",
                   help="move tools/mutants-equivalent.txt's ids to the lines their source "
                        "line has now (the text at git revision REV, found once in the file "
                        "now), list the ones it cannot place, and exit")
    p.add_argument("--rekey-path", action="append", metavar="GLOB",
                   help="with --rekey: only the ids of these files (the ones whose ids were "
                        "last right at REV)")
    # internal: one group's run, one mutant's fresh run
    p.add_argument("--run-group", help=argparse.SUPPRESS)
    p.add_argument("--results", help=argparse.SUPPRESS)
    p.add_argument("--only", help=argparse.SUPPRESS)
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--tests", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.one:
        return _one(a.one, a.tests)
    if a.rekey:
        return rekey(a.rekey, a.rekey_path or ["*"])
    os.makedirs(a.out, exist_ok=True)
    if a.run_group:
        only = None
        if a.only:
            with open(a.only) as f:
                only = set(f.read().split("\n"))
        res = run_group(a.run_group, a.timeout, a.out, only, a.budget)
        with open(a.results, "w") as f:
            json.dump(res, f, indent=1)
        return 0
    groups = a.group or list(GROUPS)
    res_path = os.path.join(a.out, "mutants-results.json")
    if a.list:
        for g in groups:
            ms = [m for f in targets(g) for m in mutants_of(f)]
            for m in ms:
                print(f"{m.id}\t{m.mutated.strip()}")
            print(f"[{g}] {len(ms)} mutants", file=sys.stderr)
        return 0
    if a.report_only:
        with open(res_path) as f:
            results = json.load(f)
    else:
        prev = None
        if a.rerun:
            with open(a.rerun) as f:
                prev = json.load(f)
        results = run(groups, a.timeout, a.out, a.jobs, prev, a.budget)
        with open(res_path, "w") as f:
            json.dump(results, f, indent=1)
    text = report(results, load_equivalent())
    with open(os.path.join(a.out, "mutants-report.md"), "w") as f:
        f.write(text)
    print(text.split("## Survivors")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
