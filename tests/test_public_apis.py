"""The package uses its dependencies (and the standard library) through their
public names only, and what replaced a private one gives what it gave."""

import ast
import random
import re
import warnings
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "grit_scan"


def _private(dotted: str) -> bool:
    return any(p.startswith("_") and p != "__future__" for p in dotted.split("."))


def private_imports(source: str) -> list[str]:
    """Imports of another package's private names in ``source``: ``import
    x._y``, ``from x._y import z``, ``from x import _y`` (the package's own
    modules, absolute or relative, are its own business)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if not a.name.startswith("grit_scan") and _private(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "grit_scan":
                continue
            if _private(node.module):
                found.append(f"from {node.module} import ...")
            found += [f"from {node.module} import {a.name}" for a in node.names
                      if a.name.startswith("_")]
    return found


def test_no_private_imports_of_dependencies():
    bad = {str(f.relative_to(PKG.parent)): private_imports(f.read_text())
           for f in sorted(PKG.rglob("*.py"))}
    assert {f: b for f, b in bad.items() if b} == {}


@pytest.mark.parametrize("line", [
    "from typer import _click as click", "from typer._coercion import RuntimeParam",
    "import typer._param_types", "from re import _parser as p", "import click._compat",
    "def f():\n    from typer._click import exceptions\n"])
def test_the_import_check_sees_each_spelling(line):
    assert private_imports(line)


@pytest.mark.parametrize("line", [
    "import typer.core", "from typer.models import ParameterInfo", "from __future__ import x",
    "from . import _app", "from ._version import __version__", "from grit_scan.codec import _fnv"])
def test_the_import_check_passes_public_and_own_names(line):
    assert not private_imports(line)


# --- config patterns: the shape is Python's own parser's -------------------

def _reference(pattern: str) -> tuple[str | None, int]:
    """Why a pattern may backtrack without bound, and its unbounded repeats,
    read from the tree of Python's own (private) regular expression parser:
    an independent reading that the package may not import."""
    from re import _parser as sre  # the oracle, in the test only

    repeats = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}

    def walk(items, inside, count):
        for op, av in items:
            name = str(op)
            if name in repeats:
                _, hi, sub = av
                unbounded = hi is sre.MAXREPEAT or hi > 64
                if inside and (unbounded or hi > 1):
                    return "a nested quantifier"
                count[0] += unbounded
                why = walk(sub, inside or hi > 1, count)
            elif name == "BRANCH":
                if inside:
                    return "an alternation inside a quantifier"
                why = next((w for alt in av[1] if (w := walk(alt, inside, count))), None)
            elif name in ("GROUPREF", "GROUPREF_EXISTS"):
                return "a backreference"
            elif name == "SUBPATTERN":
                why = walk(av[-1], inside, count)
            elif name in ("ASSERT", "ASSERT_NOT"):
                why = walk(av[1], inside, count)
            else:
                why = None
            if why:
                return why
        return None

    count = [0]
    return walk(sre.parse(pattern), False, count), count[0]


def _ours(pattern: str) -> tuple[str | None, int]:
    from grit_scan.pattern_shape import backtracking

    count = [0]
    return backtracking(pattern, count), count[0]


PIECES = [*"ab|()*+?{}[]^$\\.12,:=!<>P-#x ", "(?:", "(?P<n>", "(?P=n)", "(?=", "(?<=",
          "(?!", "(?>", "(?x)", "(?i:", "(?x:", "(?-x:", "\\d", "\\b", "{2}", "{1,}", "{,3}",
          "{2,70}", "(?(1)", "\\1", "\\12", "\\123", "\\x41", "\\N{DIGIT ONE}", "[^a]", "[]a]",
          "\n", "(?#c)", "*?", "++", "{2}?"]


LEAVES = ["a", "b", "ab", ".", "^", "$", "\\d", "\\.", "[ab]", "[^a]", "[a-c]", "\\b",
          "\\1", "\\x61", " ", "#c\n", "\\123", "\\0"]
OPENERS = ["(", "(?:", "(?P<g>", "(?=", "(?!", "(?<=", "(?>", "(?i:", "(?x:", "(?-x:"]
QUANTIFIERS = ["*", "+", "?", "{2}", "{1,}", "{,3}", "{2,70}", "{0,65}", "*?", "++", "{}",
               "{,}", "{x"]


def _structured(rnd: random.Random, depth: int = 0) -> str:
    """A pattern built from the grammar: atoms, groups of every kind,
    alternations (sometimes of single characters, sometimes with a common
    prefix) and quantifiers, nested."""
    out = []
    for _ in range(rnd.randint(1, 3)):
        roll = rnd.random()
        if roll < 0.4 and depth < 3:
            alts = [_structured(rnd, depth + 1) for _ in range(rnd.choice([1, 1, 2, 3]))]
            if rnd.random() < 0.3:
                alts = ["a" + x for x in alts]
            atom = rnd.choice(OPENERS) + "|".join(alts) + ")"
        elif roll < 0.5:
            atom = "|".join(rnd.choice("abc") for _ in range(rnd.randint(2, 3)))
        else:
            atom = rnd.choice(LEAVES)
        if rnd.random() < 0.5:
            atom += rnd.choice(QUANTIFIERS)
        out.append(atom)
    return ("(?x)" if depth == 0 and rnd.random() < 0.1 else "") + "".join(out)


@pytest.mark.parametrize("seed", range(4))
def test_pattern_shape_is_pythons_own(seed):
    """pattern_shape.py reads a config pattern's repeats, alternations and
    backreferences itself: on every generated pattern that re.compile
    accepts (built from the grammar, or any string of pieces), its verdict
    and its count of unbounded repeats are those read from Python's own
    parser's tree."""
    rnd = random.Random(seed)
    checked, kinds = 0, set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like
        while checked < 6000:
            pattern = (_structured(rnd) if checked % 2 else
                       "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 16))))
            try:
                re.compile(pattern)
            except (re.error, OverflowError, RecursionError):
                continue
            want = _reference(pattern)
            assert _ours(pattern) == want, pattern
            checked += 1
            kinds.add(want[0] or ("open repeats" if want[1] > 2 else None))
    assert kinds == {None, "a nested quantifier", "an alternation inside a quantifier",
                     "a backreference", "open repeats"}  # every verdict was reached


@pytest.mark.parametrize("pattern,why", [
    ("(a+)+b", "a nested quantifier"), ("(a|aa)*b", "an alternation inside a quantifier"),
    ("(a)\\1", "a backreference"), ("(?P<x>a)(?P=x)", "a backreference"),
    ("(a)?(?(1)b|c)", "a backreference"), ("(a{2})*", "a nested quantifier"),
    ("(?x) ( a + ) +", "a nested quantifier"), ("(?:a|b)*", None), ("(ab|ac)*", None),
    ("(a?)*", None), ("(?>a+)+", None), ("\\123*", None), ("x(?#a+)+", None),
    ("a{}", None), ("a{,}b{,}c{,}", "3 unbounded"),
    (r"model\.layers\.\d+\.mlp\.(gate|up)_proj", None), (".*lm_head", None)])
def test_pattern_refusals(pattern, why):
    """Worked cases, each checked against Python's own parser too."""
    from grit_scan.names import pattern_refused

    got = pattern_refused("re:" + pattern)
    assert (got is None) == (why is None) and (why is None or why in got), got
    assert _ours(pattern) == _reference(pattern)


def test_deeply_nested_pattern_is_refused_not_raised():
    from grit_scan.names import pattern_refused

    # 500 levels: past the recursion limit of the parser here or Python's own,
    # depending on the stack already in use; either way a verdict, never a raise
    deep = "(" * 500 + "a" + ")" * 500
    why = pattern_refused("re:" + deep)
    assert why is None or "not a regular expression" in why
    assert pattern_refused("re:" + "(" * 100 + "a" + ")" * 100) is None
