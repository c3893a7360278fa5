"""The user journeys of the docs, run as written: every ``$ command`` in
triage.md, auditing.md, cli.md and pipelines.md is run from the
repository's root, and the lines shown under it are compared with what it
prints on stdout (runs of spaces compare as one, blank lines are ignored,
``...`` stands for any text, and on a line of its own for any lines).
pipelines.md's Python blocks are run too.  Every test file a doc cites
exists."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RUN = ["triage.md", "auditing.md", "cli.md", "pipelines.md"]


def examples(md: str) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) for each ``$ `` line of an indented
    code block; a command ending in ``\\`` continues on the next line."""
    out: list[tuple[str, list[str]]] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("    $ "):
            i += 1
            continue
        cmd = line[6:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        i += 1
        shown: list[str] = []
        while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
            if lines[i].startswith("    $ "):
                break
            if lines[i].strip():
                shown.append(lines[i][4:])
            elif i + 1 < len(lines) and not lines[i + 1].startswith("    "):
                break  # a blank line and then prose: the block ended
            i += 1
        out.append((cmd, shown))
    return out


def _norm(line: str) -> str:
    return " ".join(line.split())


def pattern(shown: list[str]) -> str:
    """A regular expression the command's stdout (normalised lines joined
    by newlines) must match whole."""
    out, first, skip = "", True, False
    for line in map(_norm, shown):
        if line == "...":
            skip = True
            continue
        p = "[^\n]*".join(map(re.escape, line.split("...")))
        if first:
            out += ("(?:[^\n]*\n)*" if skip else "") + p
        else:
            out += ("\n(?:[^\n]*\n)*" if skip else "\n") + p
        first, skip = False, False
    if skip:
        out += "[\\s\\S]*" if first else "(?:\n[^\n]*)*"
    return out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["NO_COLOR"] = "1"
    env["GRIT_PROGRESS_AFTER"] = "3600"
    return env


CASES = [(name, n, cmd, shown) for name in RUN
         for n, (cmd, shown) in enumerate(examples((DOCS / name).read_text()))]


def test_every_journey_doc_has_examples_that_run():
    assert {name for name, *_ in CASES} == set(RUN)
    for name, _n, cmd, shown in CASES:
        assert cmd.startswith("grit ") and shown, (name, cmd)


@pytest.mark.parametrize("name,n,cmd,shown", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_doc_example_prints_what_it_shows(name, n, cmd, shown):
    res = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=_env(), capture_output=True,
                         text=True, check=False)
    got = "\n".join(_norm(x) for x in res.stdout.splitlines() if x.strip())
    assert re.fullmatch(pattern(shown), got), (
        f"{name}: `{cmd}` printed (exit {res.returncode}):\n{res.stdout}{res.stderr}")


def test_the_pattern_has_teeth():
    shown = ["Found 1 finding: ...", "...", "Next: grit rule size_mismatch"]
    assert re.fullmatch(pattern(shown), "Found 1 finding: 1 structural\nx\nNext: grit rule "
                        "size_mismatch")
    assert not re.fullmatch(pattern(shown), "Found 2 findings: 1 structural\nNext: grit rule "
                            "size_mismatch")
    assert not re.fullmatch(pattern(["a", "b"]), "a\nc\nb")


def _python_blocks(md: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", md, flags=re.S)


@pytest.mark.parametrize("n", range(len(_python_blocks((DOCS / "pipelines.md").read_text()))))
def test_pipelines_python_runs(n):
    code = _python_blocks((DOCS / "pipelines.md").read_text())[n]
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(),
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr


def test_every_cited_test_file_exists():
    cited = set()
    for md in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for m in re.finditer(r"\btests/[\w/]+\.py\b", md.read_text()):
            cited.add((md.name, m.group(0)))
    assert cited
    missing = [(doc, path) for doc, path in sorted(cited) if not (ROOT / path).is_file()]
    assert not missing
