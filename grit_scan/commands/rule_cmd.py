"""`grit rule KIND|CODE`: one finding kind's documentation (as `ruff rule`)."""

# No ``from __future__ import annotations`` here: typer reads the commands'
# signatures with typing.get_type_hints, which compiles every string
# annotation (start-up, docs/performance.md); these are evaluated once, at import.

import typer

from ..api import Rule, lookup, rules
from ._app import UsageError, app
from .common import emit_json


@app.command("rule")
def rule_cmd(
    kind: str | None = typer.Argument(None, metavar="[KIND|CODE]",
                                      help="A finding kind (size_mismatch) or code (GRIT101)."),
    show_all: bool = typer.Option(False, "--all", help="List every kind: code, name, severity "
                                  "and summary."),
    as_json: bool = typer.Option(False, "--json", help="Print the rule(s) as JSON."),
) -> None:
    """Explain a finding kind: what it means, an example, how to fix it."""
    if show_all or kind is None:
        if as_json:
            emit_json([_json(r) for r in rules()])
            return
        for r in rules():
            typer.echo(f"{r.code}  {r.name:<26} {r.severity.value:<13} {r.summary}")
        return
    one = lookup(kind)
    if one is None:
        raise UsageError(f"unknown finding kind or code {kind!r} (grit rule --all lists them)")
    if as_json:
        emit_json(_json(one))
        return
    typer.echo(f"# {one.name} ({one.code})\n\n{one.doc}")


def _json(r: Rule) -> dict[str, str]:
    return {"code": r.code, "name": r.name, "severity": r.severity.value,
            "summary": r.summary, "doc": r.doc}
