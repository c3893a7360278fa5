"""The rule registry: every finding kind is one module under ``rules/kinds/``.

A kind module declares ``RULES`` (one ``Rule`` per kind it raises: stable
code, kind, severity, summary and its documentation page) and up to three
checks:

* ``check_file(art)`` — one artifact at a time;
* ``check_scan(scan)`` — across artifacts (models, revisions, manifests);
* ``check_deep(art, planes)`` — ``--deep`` only, with a ``PlaneReader`` that
  the parsers layer hands in (rules never open a file themselves).

Modules are discovered, not listed: adding a kind is adding a module plus a
line in ``codes.py`` (docs/architecture.md).  Every check runs inside a
containment boundary: an unexpected exception becomes a finding naming the
rule and the file, and the rest of the report survives.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NamedTuple, TypeVar, cast

from ..artifact import Artifact, PlaneReader, ReadError, ScanInput
from ..codec.errors import GritValueError
from .codes import Kind
from .finding import Finding, Severity

FileCheck = Callable[[Artifact], Iterable[Finding]]
ScanCheck = Callable[[ScanInput], Iterable[Finding]]
DeepCheck = Callable[[Artifact, PlaneReader], Iterable[Finding]]
OpenPlanes = Callable[[Artifact], AbstractContextManager[PlaneReader]]


@dataclass(frozen=True)
class Rule:
    """One finding kind: its identity, its documentation and its severity."""

    code: str  # stable, e.g. GRIT101; the hundreds digit is the severity class
    kind: Kind
    severity: Severity
    summary: str  # one line
    doc: str  # the documentation page (markdown): meaning, Example, Fix

    @property
    def name(self) -> str:
        return self.kind.value

    def finding(self, path: str, message: str, tensor: str | None = None,
                detail: Mapping[str, Any] | None = None) -> Finding:
        return Finding(self.code, self.kind, self.severity, path, message, tensor,
                       detail or {})


class RuleModule(NamedTuple):
    """A kind module: its rules, and its checks looked up when they run
    (a NamedTuple, not a frozen dataclass: every scan imports this module, docs/performance.md)."""

    module: ModuleType
    rules: tuple[Rule, ...]

    @property
    def name(self) -> str:
        return self.module.__name__.rsplit(".", 1)[-1]

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(r.kind for r in self.rules)

    @property
    def check_file(self) -> FileCheck | None:
        return getattr(self.module, "check_file", None)

    @property
    def check_scan(self) -> ScanCheck | None:
        return getattr(self.module, "check_scan", None)

    @property
    def check_deep(self) -> DeepCheck | None:
        return getattr(self.module, "check_deep", None)


def _load(mod: ModuleType) -> RuleModule:
    rules = getattr(mod, "RULES", None)
    if not isinstance(rules, tuple) or not all(isinstance(r, Rule) for r in rules):
        raise TypeError(f"{mod.__name__} must declare RULES: tuple[Rule, ...]")
    return RuleModule(mod, rules)


@functools.cache
def modules() -> tuple[RuleModule, ...]:
    """Every kind module, in code order."""
    from . import kinds as pkg

    found = [_load(importlib.import_module(f"{pkg.__name__}.{m.name}"))
             for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    return tuple(sorted(found, key=lambda m: min(r.code for r in m.rules)))


@functools.cache
def rules() -> tuple[Rule, ...]:
    """Every rule, in code order."""
    return tuple(sorted((r for m in modules() for r in m.rules), key=lambda r: r.code))


@functools.cache
def _by_kind() -> dict[Kind, Rule]:
    return {r.kind: r for r in rules()}


def rule(kind: Kind) -> Rule:
    return _by_kind()[kind]


def lookup(text: str) -> Rule | None:
    """A rule by its code (GRIT101) or its name (size_mismatch)."""
    t = text.strip()
    for r in rules():
        if t.upper() == r.code or t.lower() == r.name:
            return r
    return None


def _matching(text: str, option: str) -> set[Kind]:
    t = text.strip()
    if not t:
        return set()
    hit = lookup(t)
    if hit is not None:
        return {hit.kind}
    if t.upper().startswith("GRIT"):
        kinds = {r.kind for r in rules() if r.code.startswith(t.upper())}
        if kinds:
            return kinds
    known = ", ".join(f"{r.code} {r.name}" for r in rules())
    raise GritValueError(f"{option}: unknown finding kind or code {t!r}; known: {known}")


def parse_selection(text: str | Iterable[str] | None, option: str) -> frozenset[Kind] | None:
    """``--select``/``--ignore``: kind names, codes or code prefixes
    (``GRIT1`` is every structural kind), comma-separated."""
    if text is None:
        return None
    items = text.split(",") if isinstance(text, str) else list(text)
    out: set[Kind] = set()
    for item in items:
        out |= _matching(item, option)
    return frozenset(out)


def enabled_kinds(select: frozenset[Kind] | None,
                  ignore: frozenset[Kind] | None) -> frozenset[Kind]:
    kinds = frozenset(Kind) if select is None else select
    return kinds - (ignore or frozenset())


# What several rules ask of the same tensors (which of them are judged, their
# identity, the role_drift findings artifact_drift also needs) is computed
# once per Runner.run and dropped with it (docs/performance.md): a context variable, so
# that nothing leaks from one scan into the next, nor between threads.
# Entries are keyed by the id of the object they describe and hold that
# object, so an id is never reused while its entry lives.
_MEMO: ContextVar[dict[tuple[str, int], tuple[object, Any]] | None] = ContextVar(
    "grit_rules_memo", default=None)


T = TypeVar("T")


def memoised(tag: str, of: object, compute: Callable[[], T]) -> T:
    """``compute()``, once per ``Runner.run`` for the object ``of``; outside
    a run (a check called on its own) it is simply computed."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    hit = memo.get((tag, id(of)))
    if hit is not None and hit[0] is of:
        return cast(T, hit[1])
    value = compute()
    memo[(tag, id(of))] = (of, value)
    return value


@dataclass
class Runner:
    """Runs the enabled modules over one scan, containing every failure."""

    enabled: frozenset[Kind] = field(default_factory=lambda: frozenset(Kind))
    debug: bool = False
    tracebacks: list[str] = field(default_factory=list)
    # the findings of kinds not enabled: every header-level check runs
    # whatever the selection, so that what a --select/--ignore or a config
    # file hides is counted in the report, never silently absent (--deep
    # checks of kinds not enabled are not run: they would read bytes)
    hidden: list[Finding] = field(default_factory=list)

    def _active(self) -> list[RuleModule]:
        return list(modules())

    def _contained(self, module: RuleModule, path: str,
                   fn: Callable[[], Iterable[Finding]]) -> list[Finding]:
        try:
            return list(fn())
        except ReadError:
            raise  # --deep: the file went away; reported once per file below
        except Exception as exc:  # noqa: BLE001 - containment is the point
            if self.debug:
                import traceback  # only for --debug (start-up: issue 31)

                self.tracebacks.append(traceback.format_exc())
            return [rule(Kind.INTERNAL_ERROR).finding(
                path, f"internal error in rule {module.name} while checking this file: "
                f"{type(exc).__name__}: {str(exc)[:500]} (other files are unaffected; "
                "--debug shows the traceback)",
                detail={"internal_error": True, "rule": module.name,
                        "exception": type(exc).__name__})]

    def run(self, scan: ScanInput, open_planes: OpenPlanes | None = None,
            progress: Callable[[int, int], None] | None = None,
            jobs: int = 1) -> list[Finding]:
        token = _MEMO.set({})
        try:
            return self._run(scan, open_planes, progress, jobs)
        finally:
            _MEMO.reset(token)

    def _run(self, scan: ScanInput, open_planes: OpenPlanes | None,
             progress: Callable[[int, int], None] | None, jobs: int) -> list[Finding]:
        active = self._active()
        out: list[Finding] = []
        for art in scan.artifacts:
            for m in active:
                check = m.check_file
                if check is not None:
                    out.extend(self._contained(m, art.path, functools.partial(check, art)))
        where = scan.roots[0] if scan.roots else "."
        for m in active:
            check_s = m.check_scan
            if check_s is not None:
                out.extend(self._contained(m, where, functools.partial(check_s, scan)))
        if open_planes is not None:
            out.extend(self._deep(scan.artifacts, active, open_planes, progress, jobs))
        # a contained failure is never filtered away by --select/--ignore
        kept: list[Finding] = []
        for f in out:
            (kept if f.kind in self.enabled or f.kind is Kind.INTERNAL_ERROR
             else self.hidden).append(f)
        return kept

    def _deep(self, arts: Sequence[Artifact], active: list[RuleModule],
              open_planes: OpenPlanes, progress: Callable[[int, int], None] | None,
              jobs: int) -> list[Finding]:
        deep = [m for m in active if m.check_deep is not None and m.kinds & self.enabled]
        todo = [a for a in arts if a.parsed and a.format.is_checkpoint_file]
        if not deep:
            return []

        def one(a: Artifact) -> list[Finding]:
            found: list[Finding] = []
            try:
                with open_planes(a) as planes:
                    for m in deep:
                        check = m.check_deep
                        assert check is not None
                        found.extend(self._contained(m, a.path,
                                                     functools.partial(check, a, planes)))
            except ReadError as exc:
                found.append(rule(Kind.FILE_UNPARSEABLE).finding(
                    a.path, f"--deep could not read it: {exc}"))
            return found

        out: list[Finding] = []
        if jobs <= 1:
            results: Iterable[list[Finding]] = map(one, todo)
        else:
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(max_workers=jobs)
            results = pool.map(one, todo)
        for done, res in enumerate(results, 1):
            out.extend(res)
            if progress:
                progress(done, len(todo))
        if jobs > 1:
            pool.shutdown()
        return out
