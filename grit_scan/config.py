"""The configuration file: ``[tool.grit]`` in pyproject.toml, or grit.toml.

A pure model (no I/O): ``settings_from_table`` turns the parsed TOML table
into frozen ``Settings``; ``parsers/gritconfig.py`` finds and reads the
file.  Keys (docs/cli.md, "Configuration file"):

    select = ["GRIT1", "gid_disagreement"]     # as --select
    ignore = ["inferred_descriptor"]           # as --ignore
    fail-on = ["structural", "disagreement"]   # as --fail-on
    exit-policy = "graded"                     # as --exit-policy
    [tool.grit.per-path-ignores]               # ([per-path-ignores] in grit.toml)
    "models/legacy/*" = ["artifact_drift"]     # glob (relative to the file) -> kinds

A value is a list of strings or one comma-separated string.  Command-line
options override the file's values key by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from .codec.errors import GritValueError
from .report.policy import ExitPolicy, FailOn, parse_fail_on
from .rules.codes import Kind
from .rules.registry import parse_selection

KEYS = ("select", "ignore", "fail-on", "exit-policy", "per-path-ignores")


class PathIgnore(NamedTuple):
    """Findings of ``kinds`` on paths matching ``glob`` are not reported
    (a NamedTuple, not a frozen dataclass: every scan imports this module, docs/performance.md)."""

    glob: str  # fnmatch pattern, relative to the config file's directory, '/' separated
    kinds: frozenset[Kind]

    def matches(self, rel: str, kind: Kind) -> bool:
        return kind in self.kinds and fnmatchcase(rel, self.glob)


@dataclass(frozen=True)
class Settings:
    """What a config file sets; ``None`` is "not set" (the CLI default)."""

    select: frozenset[Kind] | None = None
    ignore: frozenset[Kind] | None = None
    fail_on: FailOn | None = None
    exit_policy: ExitPolicy | None = None
    per_path_ignores: tuple[PathIgnore, ...] = ()
    source: str | None = None  # the file the settings came from
    base: str = "."  # its directory: per-path globs are relative to it


def _strings(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v.strip() for v in value if v.strip()]
    raise GritValueError(f"{where}: expected a list of strings or a comma-separated string")


def settings_from_table(table: Mapping[str, Any], source: str, base: str) -> Settings:
    """Validate a ``[tool.grit]`` table; errors name the file and the key."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise GritValueError(f"{source}: unknown key(s) {', '.join(unknown)}; known: "
                             + ", ".join(KEYS))

    def where(key: str) -> str:
        return f"{source}: {key}"

    select = ignore = None
    if "select" in table:
        select = parse_selection(_strings(table["select"], where("select")), where("select"))
    if "ignore" in table:
        ignore = parse_selection(_strings(table["ignore"], where("ignore")), where("ignore"))
    fail_on = None
    if "fail-on" in table:
        fail_on = parse_fail_on(_strings(table["fail-on"], where("fail-on")), where("fail-on"))
    policy = None
    if "exit-policy" in table:
        raw = table["exit-policy"]
        if raw not in {p.value for p in ExitPolicy}:
            raise GritValueError(f"{where('exit-policy')}: takes \"graded\" or \"simple\"")
        policy = ExitPolicy(raw)
    per_path: list[PathIgnore] = []
    ppi = table.get("per-path-ignores", {})
    if not isinstance(ppi, Mapping):
        raise GritValueError(f"{where('per-path-ignores')}: expected a table of glob = [kinds]")
    for glob, kinds in ppi.items():
        w = f"{where('per-path-ignores')} {glob!r}"
        per_path.append(PathIgnore(str(glob), parse_selection(_strings(kinds, w), w)
                                   or frozenset()))
    return Settings(select, ignore, fail_on, policy, tuple(per_path), source, base)
