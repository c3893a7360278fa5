"""Docs stay honest: the CLI reference matches the CLI, every finding kind
has a section, the README's commands are the ones CI runs, links resolve."""

import re
import subprocess
from pathlib import Path

import typer.main

from grit_scan.cli import app, register

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def cli_tree():
    register()
    root = typer.main.get_command(app)
    out = {"": {o for p in root.params for o in p.opts if o.startswith("-")}}

    def walk(cmd, prefix):
        for name, c in getattr(cmd, "commands", {}).items():
            full = f"{prefix} {name}".strip()
            if getattr(c, "commands", None):
                walk(c, full)
            else:
                out[full] = {o for p in c.params for o in getattr(p, "opts", [])
                             if o.startswith("-")}

    walk(root, "")
    return out


def doc_tree():
    text = (DOCS / "cli.md").read_text()
    sections = re.split(r"^## grit ", text, flags=re.M)
    out = {"": set(re.findall(r"^\| `(--[a-z-]+)`", sections[0], flags=re.M))}
    for sec in sections[1:]:
        name = sec.splitlines()[0].strip()
        out[name] = set(re.findall(r"^\| `(--[a-z-]+)", sec, flags=re.M))
    return out


def test_every_command_and_option_is_documented_and_exists():
    cli, docs = cli_tree(), doc_tree()
    assert set(cli) == set(docs), (set(cli) ^ set(docs))
    for cmd in cli:
        assert cli[cmd] - {"--help"} == docs[cmd], (cmd, cli[cmd] ^ docs[cmd])


def readme_block(marker):
    text = (ROOT / "README.md").read_text()
    after = text.split(f"<!-- {marker} -->", 1)[1]
    return after.split("```sh\n", 1)[1].split("\n", 1)[0]


def test_readme_commands_are_what_ci_runs():
    text = (ROOT / "README.md").read_text()
    assert text.index("<!-- ci:main -->") < text.index("<!-- ci:test -->") < 1400
    main_cmd, test_cmd = readme_block("ci:main"), readme_block("ci:test")
    assert "grit scan fixtures/sample" in main_cmd and "pip install ." in main_cmd
    assert "pip install '.[test]'" in test_cmd and "pytest" in test_cmd
    ci = (ROOT / ".ci" / "run").read_text()
    assert "block ci:main" in ci and "block ci:test" in ci
    # .ci/run's own extraction gives exactly these lines
    script = ci.split("block() {", 1)[1].split("\n}\n", 1)[0]
    for marker, want in (("ci:main", main_cmd), ("ci:test", test_cmd)):
        got = subprocess.run(["bash", "-c", "block() {" + script + "\n}\nblock " + marker],
                             capture_output=True, text=True, cwd=ROOT).stdout.strip()
        assert got == want


def test_markdown_links_resolve():
    for md in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", md.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            assert (md.parent / target).exists(), (md.name, target)


def test_adopted_readings_are_documented():
    text = (DOCS / "spec-notes.md").read_text()
    for sec in ("§1 [V]", "§2 [V]", "§3 [A]", "§4 [A]", "§6 [A]", "§7 [A]", "§8 [A]", "§9 [A]"):
        assert sec in text, sec


def test_completion_and_version():
    from grit_scan import __version__
    from grit_scan.cli import main

    assert main(["--version"]) == 0
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_each_command_is_registered_by_the_module_command_of_names():
    import typer.main

    from grit_scan.commands._app import COMMAND_OF

    register()
    root = typer.main.get_command(app)
    names = set(getattr(root, "commands", {}))
    assert names == set(COMMAND_OF)
    for name, cmd in root.commands.items():
        if getattr(cmd, "callback", None) is not None:
            assert cmd.callback.__module__.endswith("." + COMMAND_OF[name]), name
