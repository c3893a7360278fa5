"""Start-up discipline (issue 15), held by behaviour, not by timings: what a
``grit`` process imports for --version, help and a small scan, and the
pre-rendered help is the help the typer app prints."""

import os
import subprocess
import sys

import pytest

from grit_scan.commands import help_gen
from grit_scan.commands.help_text import HELP
from grit_scan.writers import Raw, write_safetensors

# Runs the console script's function the way the `grit` launcher does and
# lists, at exit, every module the process imported.
PROBE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + " ".join(sorted(sys.modules))))
sys.argv = ["grit", *sys.argv[1:]]
from grit_scan.cli import run
run()
"""

# Never needed to print the version or help.
HEAVY = ("typer", "click", "rich", "numpy", "gguf", "pydantic", "yaml", "shutil",
         "grit_scan.commands._app", "grit_scan.api")


def imported(args, tmp_path, env_extra=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "_GRIT_COMPLETE",
                        "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION")}
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    err, _, mods = p.stderr.rpartition("\nMODULES ")
    return p.returncode, p.stdout, err, set(mods.split())


def heavy(mods):
    return sorted(m for m in mods if m.split(".")[0] in HEAVY or m in HEAVY)


def test_help_text_module_is_the_generated_one():
    assert help_gen.TARGET.read_text() == help_gen.module_source(), (
        "grit_scan/commands/help_text.py is stale: run python -m grit_scan.commands.help_gen")


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["-h"], [], ["scan", "--help"],
                                  ["rule", "-h"], ["vectors", "--help"]])
def test_version_and_help_import_nothing_heavy(args, tmp_path):
    code, out, err, mods = imported(args, tmp_path)
    assert code == 0 and err == "" and out
    assert heavy(mods) == []


def test_fast_help_is_what_typer_prints(tmp_path):
    """The fast path and the app print the same help (a pipe: 80 columns)."""
    for args in (["--help"], ["scan", "-h"], ["manifest", "--help"], []):
        fast = imported(args, tmp_path)
        slow = imported(args, tmp_path, {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": ""})
        assert "typer" in slow[3]
        assert fast[:3] == slow[:3]


def test_narrow_terminal_and_other_command_lines_go_to_typer(tmp_path):
    code, out, _, mods = imported(["--help"], tmp_path, {"COLUMNS": "60"})
    assert code == 0 and "typer" in mods
    assert out != HELP[""] and "the GRIT v1\n  specification." in out  # wrapped at 58
    for args in (["--debug", "--help"], ["scan", "--bogus", "--help"]):
        assert "typer" in imported(args, tmp_path)[3]


def test_small_scan_imports_no_array_or_gguf_stack(tmp_path):
    """A scan of a small safetensors file: no numpy (no arrays are built),
    no gguf (no GGUF file), no rich and no pydantic for the text report."""
    write_safetensors(tmp_path / "tiny.safetensors",
                      {"w.weight": Raw("BF16", [4, 4], bytes(32))})
    for args in (["scan", "tiny.safetensors"], ["scan", "--json", "tiny.safetensors"]):
        code, out, err, mods = imported(args, tmp_path)
        assert code == 0, err
        assert not {"numpy", "gguf", "rich", "pydantic", "yaml"} & {m.split(".")[0] for m in mods}
    assert "No findings in 1 file" in out or '"findings": []' in out
