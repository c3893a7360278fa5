"""Escaping everywhere (issue 16): names and paths from files never put a
control byte or bidi override into any output, and the suggested
`grit explain` command stays two arguments when pasted into a shell.

These render the report in-process through grit_scan.report.formats, which
the base commit 7c46b23 did not have; test_defects.py holds the same
defects through the command line, which runs against that commit too."""

from __future__ import annotations

import io
import re
import subprocess

import pytest
from hostile_names import ESC_NAME, RAW, SHELL, hostile_tree

from grit_scan.api import scan
from grit_scan.report.escape import esc
from grit_scan.report.formats import OutputFormat, RenderOptions, render


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    hostile_tree(base)
    return base, scan([str(base)])


def test_the_hostile_names_reach_the_findings(hostile):
    _, rep = hostile
    assert any(f.tensor == ESC_NAME for f in rep.findings)
    assert any(SHELL in f.path for f in rep.findings)


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_no_raw_control_or_bidi_character_in_any_format(hostile, fmt):
    _, rep = hostile
    for color in (False, True):
        buf = io.StringIO()
        render(rep, fmt, buf, RenderOptions(color=color, width=100))
        out = re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue()) if color else buf.getvalue()
        assert not RAW.search(out), (fmt, RAW.search(out))
    if not fmt.is_document:
        assert "\\x1b[2J" in out and "\\u202e" in out
    else:
        assert "\\u001b[2J" in out  # JSON escapes; parsed, the exact name comes back


def test_esc_table():
    assert esc("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert esc("\u202e\u2066x\u200b") == "\\u202e\\u2066x\\u200b"
    assert esc("tab\there\nnl\x9b") == "tab\\x09here\\x0anl\\x9b"
    assert esc("plain/path::name.weight é") == "plain/path::name.weight é"


def test_suggested_explain_command_is_two_arguments_in_a_real_shell(hostile, tmp_path):
    base, rep = hostile
    f = next(f for f in rep.findings if f.kind.value == "gid_disagreement")
    cmd = f.detail["suggested_fix"]
    assert "touch PWNED" in cmd
    # run the suggestion through bash with `grit` replaced by printf: the
    # arguments come back whole and nothing else runs
    shell_cmd = cmd.replace("grit explain", "printf '%s\\n'", 1)
    r = subprocess.run(["bash", "-c", shell_cmd], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0
    args = r.stdout.split("\n")[:-1]
    assert len(args) == 2 and all("::" in a for a in args)
    assert args[1] == f"{f.path}::{f.tensor}"
    assert not (tmp_path / "PWNED").exists()


def test_error_lines_escape_names(capsys):
    from grit_scan.commands._app import error_line

    error_line("no tensor named a\x1b]52;c;x\x07b")
    assert capsys.readouterr().err == "grit: error: no tensor named a\\x1b]52;c;x\\x07b\n"
