"""Supersedes equivalence edges (§11.2).

An edge is a claim, and a wrong edge is silent corruption, so an edge is
only constructed when its mechanical precondition holds: a non-empty reason,
and byte-identical decode projections (§4.5).  For scope "full" this
implementation additionally requires identical encode projections
(er, es, et, esr): the structural form of "encode and decode both agree"
(docs/spec-notes.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .errors import GritValueError
from .grade import REGISTERED, Grade, resolve
from .tables import ENCODE_KEYS, SUPERSEDES_EDGES

SCOPES = ("decode", "full")


@dataclass(frozen=True)
class Edge:
    """One supersedes edge between two grades."""

    src: Grade
    dst: Grade
    scope: str
    reason: str

    def describe(self) -> str:
        return (f"{self.src.name or self.src.canonical} -> {self.dst.name or self.dst.canonical}"
                f" (scope {self.scope}: {self.reason})")


def make_edge(src: Grade | str, dst: Grade | str, scope: str, reason: str) -> Edge:
    """Construct an edge, refusing one whose precondition fails."""
    a = resolve(src) if isinstance(src, str) else src
    b = resolve(dst) if isinstance(dst, str) else dst
    if scope not in SCOPES:
        raise GritValueError(f"edge scope must be 'decode' or 'full'; got {scope!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise GritValueError("a supersedes edge needs a non-empty reason (§11.2)")
    if a.decode_projection != b.decode_projection:
        raise GritValueError(
            "refused: the decode projections differ, so stored bytes are not interchangeable:\n"
            f"  {a.decode_projection}\n  {b.decode_projection}"
        )
    if scope == "full":
        diff = [k for k in ENCODE_KEYS if a[k] != b[k]]
        if diff:
            raise GritValueError(
                "refused: a full-scope edge needs identical encode projections; they differ in "
                + ", ".join(f"{k} ({a[k]} vs {b[k]})" for k in diff)
            )
    return Edge(a, b, scope, reason.strip())


class EdgeSet:
    """A set of edges and the equivalence closure at a scope."""

    def __init__(self, edges: Iterable[Edge] = ()) -> None:
        self.edges: list[Edge] = list(edges)

    def add(self, edge: Edge) -> None:
        self.edges.append(edge)

    def _classes(self, scope: str) -> dict[str, str]:
        """Union-find over canonical strings, edges at or above ``scope``."""
        if scope not in SCOPES:
            raise GritValueError(f"scope must be 'decode' or 'full'; got {scope!r}")
        allowed = SCOPES[SCOPES.index(scope):]
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for e in self.edges:
            if e.scope in allowed:
                ra, rb = find(e.src.canonical), find(e.dst.canonical)
                if ra != rb:
                    parent[ra] = rb
        return {k: find(k) for k in list(parent)}

    def equivalent(self, a: Grade, b: Grade, scope: str = "decode") -> bool:
        """Reflexive-symmetric-transitive closure plus canonical identity."""
        if a.canonical == b.canonical:
            return True
        cls = self._classes(scope)
        ca, cb = cls.get(a.canonical), cls.get(b.canonical)
        return ca is not None and ca == cb

    def path(self, a: Grade, b: Grade, scope: str = "decode") -> list[Edge]:
        """The edges joining a and b (breadth-first), empty when unrelated."""
        allowed = SCOPES[SCOPES.index(scope):]
        adj: dict[str, list[tuple[str, Edge]]] = {}
        for e in self.edges:
            if e.scope in allowed:
                adj.setdefault(e.src.canonical, []).append((e.dst.canonical, e))
                adj.setdefault(e.dst.canonical, []).append((e.src.canonical, e))
        start, goal = a.canonical, b.canonical
        prev: dict[str, tuple[str, Edge] | None] = {start: None}
        frontier = [start]
        while frontier:
            nxt = []
            for node in frontier:
                for other, e in adj.get(node, []):
                    if other not in prev:
                        prev[other] = (node, e)
                        nxt.append(other)
            frontier = nxt
        if goal not in prev or start == goal:
            return []
        out, cur = [], goal
        while prev[cur] is not None:
            node, e = prev[cur]  # type: ignore[misc]
            out.append(e)
            cur = node
        return list(reversed(out))


def registered_edges() -> EdgeSet:
    """RECONSTRUCTION §9: the two v1 edges, each re-checked on construction."""
    return EdgeSet(
        make_edge(REGISTERED[a], REGISTERED[b], scope, reason)
        for a, b, scope, reason in SUPERSEDES_EDGES
    )


REGISTERED_EDGES = registered_edges()
