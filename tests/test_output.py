"""Output formats (issue 14): snapshots of every format on fixtures/sample,
terminal behaviour at widths 80 and 200 and piped, NO_COLOR / FORCE_COLOR,
the GitHub annotation syntax, the summary line and CLI conventions."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from grit_scan.api import scan
from grit_scan.cli import main
from grit_scan.report.formats import OutputFormat, RenderOptions, render, summary_line
from grit_scan.report.github import escape_data, escape_property

ROOT = Path(__file__).resolve().parent.parent
SNAP = Path(__file__).resolve().parent / "snapshots"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def sample():
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        yield scan(["fixtures/sample"])
    finally:
        os.chdir(cwd)


def rendered(report, fmt, **kw) -> str:
    buf = io.StringIO()
    render(report, fmt, buf, RenderOptions(**kw))
    return buf.getvalue()


def normalise(text: str) -> str:
    """Only the volatile bits: the tool version."""
    text = re.sub(r'("tool_version": )"[^"]*"', r'\1"X"', text)
    return re.sub(r'("name": "grit-scan",\s*"version": )"[^"]*"', r'\1"X"', text)


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_snapshot_of_every_format_on_the_sample(sample, fmt, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("COLUMNS", raising=False)  # the snapshots are piped output
    got = normalise(rendered(sample, fmt, color=False))
    path = SNAP / f"sample.{fmt.value}.txt"
    if os.environ.get("GRIT_UPDATE_SNAPSHOTS"):
        path.write_text(got)
    assert got == path.read_text(), f"{path.name} differs (GRIT_UPDATE_SNAPSHOTS=1 rewrites)"


def test_summary_counts_come_from_the_findings(sample):
    # fixtures/sample: 1 size_mismatch, 2 role_drift + 1 gid_disagreement,
    # 3 warnings, over the three checkpoints (docs/json-report.md example)
    assert summary_line(sample) == ("Found 7 findings: 1 structural, 3 disagreements, "
                                    "3 warnings in 3 of 3 files")
    for fmt in OutputFormat:
        out = rendered(sample, fmt, color=False)
        if fmt.is_document:
            doc = json.loads(out)
            props = doc["runs"][0]["properties"] if fmt is OutputFormat.SARIF else {
                "summary": doc["summary"]["text"], "next_step": doc["next_step"]}
            assert props["summary"] == summary_line(sample)
            assert props["next_step"] == "grit rule size_mismatch"
        else:
            tail = out.rstrip("\n").splitlines()[-2:]
            assert tail == [summary_line(sample), "Next: grit rule size_mismatch"]


def test_concise_is_one_line_per_finding(sample):
    lines = rendered(sample, OutputFormat.CONCISE, color=False).splitlines()
    body = lines[:lines.index("")]
    assert len(body) == len(sample.findings)
    cut = "… (--output-format full)"
    for f in sample.findings:
        loc = f.path + (f"::{f.tensor}" if f.tensor else "")
        head = f"{loc}: {f.code} {f.kind.value} "
        (line,) = [b for b in body if b.startswith(head) and (
            b[len(head):] == f.message
            or (b.endswith(cut) and f.message.startswith(b[len(head):-len(cut)])))]
        assert len(line) < 300  # a longer message is cut short, whole in full and JSON
    assert [b.split(":", 1)[0] for b in body] == sorted(b.split(":", 1)[0] for b in body)


def test_grouped_collapses_the_same_finding_on_many_files(tmp_path):
    import shutil

    src = ROOT / "fixtures" / "sample" / "half-converted" / "model.safetensors"
    for i in range(12):
        (tmp_path / f"m{i:02d}").mkdir()
        shutil.copy(src, tmp_path / f"m{i:02d}" / "model.safetensors")
    rep = scan([str(tmp_path)], select="note_assumed")
    assert len(rep.findings) == 12
    out = rendered(rep, OutputFormat.GROUPED, color=False).splitlines()
    grouped = [line for line in out if line.startswith("GRIT302")]
    assert len(grouped) == 1
    assert "x12 in 12 file(s)" in grouped[0]
    # the first paths, as many as keep the line under 300 characters
    shown = re.search(r"\[(.*) and (\d+) more\]$", grouped[0])
    assert shown is not None and len(shown.group(1).split(", ")) + int(shown.group(2)) == 12
    assert f"{tmp_path}/m00/model.safetensors" in grouped[0] and len(grouped[0]) < 300


def test_statistics_counts_per_kind(sample):
    out = rendered(sample, OutputFormat.CONCISE, statistics=True, color=False)
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+\d+\s+GRIT", line)]
    assert rows[0] == ["2", "GRIT202", "role_drift"]
    assert sorted(r[2] for r in rows) == sorted({f.kind.value for f in sample.findings})
    assert sum(int(r[0]) for r in rows) == len(sample.findings)
    doc = json.loads(rendered(sample, OutputFormat.JSON, statistics=True))
    assert {s["kind"]: s["count"] for s in doc["statistics"]}["role_drift"] == 2


def _cli(args, env_extra=None, columns=None):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR",
                                                              "COLUMNS")}
    env.update(env_extra or {})
    if columns:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-m", "grit_scan", *args], capture_output=True,
                          text=True, cwd=ROOT, env=env)


def _unbroken(out: str, report) -> None:
    """No path or suggested command is split across lines."""
    for f in report.findings:
        assert f.path in out
        fix = f.detail.get("suggested_fix")
        if isinstance(fix, str):
            assert fix in out


@pytest.mark.parametrize("columns", [80, 200, None])
@pytest.mark.parametrize("fmt", ["concise", "full", "grouped", "github"])
def test_piped_output_never_splits_paths_or_commands(sample, fmt, columns):
    r = _cli(["scan", "--output-format", fmt, "fixtures/sample"], columns=columns)
    assert r.returncode == 1
    assert not ANSI.search(r.stdout) and "\x1b" not in r.stdout
    if fmt == "full":
        _unbroken(r.stdout, sample)
    for line in r.stdout.splitlines():
        assert not line.startswith(" " * 2 + "odel"), line  # no continuation fragments


@pytest.mark.parametrize("width", [80, 200])
def test_terminal_width_never_splits_paths_or_commands(sample, width):
    """Coloured (as on a terminal) at 80 and 200 columns: paths and commands
    stay whole; the explain diff goes vertical when a row would not fit."""
    out = rendered(sample, OutputFormat.FULL, color=True, width=width)
    plain = ANSI.sub("", out)
    assert ANSI.search(out)
    _unbroken(plain, sample)
    diff = [line for line in plain.splitlines() if line.startswith("      decode_projection")]
    if width == 80:
        assert diff == ["      decode_projection"]
        assert "        A: gritdec1(e=e2m1,k0=32," in plain
    else:
        assert len(diff) == 1 and "  ->  " in diff[0]


def test_no_color_removes_every_style_and_force_color_forces_it(sample, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    for env, want in (({"NO_COLOR": "1"}, False), ({"FORCE_COLOR": "1"}, True), ({}, True)):
        monkeypatch.delenv("NO_COLOR", raising=False)
        monkeypatch.delenv("FORCE_COLOR", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        buf = Tty()
        render(sample, OutputFormat.FULL, buf, RenderOptions(width=200))
        assert ("\x1b[" in buf.getvalue()) is want, env
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    piped = io.StringIO()
    render(sample, OutputFormat.CONCISE, piped, RenderOptions())
    assert "\x1b[" in piped.getvalue()


# --- GitHub workflow commands -------------------------------------------

# The documented syntax: ::COMMAND k1=v1,k2=v2::MESSAGE, one per line, where
# properties escape % CR LF : , and the message escapes % CR LF
# (docs.github.com workflow-commands; @actions/core command.ts).
GH = re.compile(r"^::(error|warning|notice) ((?:[a-z]+=[^,:\r\n]*)(?:,[a-z]+=[^,:\r\n]*)*)"
                r"::([^\r\n]*)$")


def _unescape(s: str) -> str:
    return (s.replace("%2C", ",").replace("%3A", ":").replace("%0A", "\n")
            .replace("%0D", "\r").replace("%25", "%"))


def test_github_annotations_follow_the_documented_syntax(sample, monkeypatch):
    monkeypatch.chdir(ROOT)
    lines = rendered(sample, OutputFormat.GITHUB).splitlines()
    ann = [line for line in lines if line.startswith("::")]
    assert len(ann) == len(sample.findings)
    levels = {"structural": "error", "disagreement": "error", "warning": "warning",
              "info": "notice"}
    for line, f in zip(ann, sample.findings):
        m = GH.match(line)
        assert m, line
        props = dict(p.split("=", 1) for p in m.group(2).split(","))
        assert m.group(1) == levels[f.severity.value]
        assert _unescape(props["file"]) == f.path
        assert _unescape(props["title"]).startswith(f"{f.code} {f.kind.value}")
        assert _unescape(m.group(3)) == f.message


def test_github_escaping_table():
    # the toolkit's table, applied in this order (% first)
    assert escape_data("100%\r\nx") == "100%25%0D%0Ax"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    assert escape_data("a:b,c") == "a:b,c"


# --- CLI conventions ------------------------------------------------------

def test_one_error_style_for_click_usage_errors(capsys):
    assert main(["scan", "--bogus"]) == 64
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("grit: error: No such option: --bogus")
    assert "Error:" not in "\n".join(err)
    assert main(["scan", "--output-format", "xml", "fixtures/sample"]) == 64
    assert capsys.readouterr().err.startswith("grit: error: Invalid value for '--output-format'")
    assert main(["rule", "nope"]) == 64
    assert capsys.readouterr().err.startswith("grit: error: unknown finding kind")


def test_h_and_global_options_after_the_command(capsys):
    assert main(["-h"]) == 0
    out = capsys.readouterr().out
    commands = out.split("Commands:", 1)[1].split()
    assert commands[0] == "scan"
    for want in ("Examples:", "grit scan", "Exit codes", "130 interrupted", "grit rule"):
        assert want in out
    assert main(["scan", "-h"]) == 0
    out = capsys.readouterr().out
    assert "<list[str]>" not in out and "[[PATH]" not in out and "<str>" not in out
    assert main(["scan", "--debug", "--select", "size_mismatch", "fixtures/sample"]) == 1


def test_help_has_no_typer_type_names(capsys):
    for cmd in (["explain"], ["grade"], ["decode"], ["rule"], ["manifest"], ["scan"]):
        assert main([*cmd, "--help"]) == 0
        out = capsys.readouterr().out
        assert not re.search(r"<(str|int|path|list\[[a-z]+\])>", out), (cmd, out)
        assert "]...]..." not in out


def test_output_file(tmp_path, capsys):
    out = tmp_path / "r.sarif"
    assert main(["scan", "--output-format", "sarif", "--output-file", str(out),
                 "fixtures/sample"]) == 1
    assert capsys.readouterr().out == ""
    assert json.loads(out.read_text())["version"] == "2.1.0"
    assert main(["scan", "--output-file", str(tmp_path / "no" / "dir"), "fixtures/sample"]) == 64
    assert "grit: error: --output-file" in capsys.readouterr().err


def test_json_and_sarif_aliases(capsys):
    assert main(["scan", "--json", "fixtures/sample"]) == 1
    assert json.loads(capsys.readouterr().out)["report_version"] == 1
    assert main(["scan", "--json", "--output-format", "sarif", "fixtures/sample"]) == 64
    assert "exclusive" in capsys.readouterr().err


def test_completion_of_option_values():
    from grit_scan.commands.scan_cmds import complete_kinds

    assert "size_mismatch" in complete_kinds("size")
    assert complete_kinds("size_mismatch,role") == ["size_mismatch,role_drift"]
    assert "GRIT101" in complete_kinds("GRIT1")
    for words, want in (("grit scan --output-format s", ["sarif"]),
                        ("grit scan --exit-policy s", ["simple"]),
                        ("grit scan --select size_mismatch,ro", ["size_mismatch,role_drift"])):
        env = {"_GRIT_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": "3"}
        assert _cli([], env_extra=env).stdout.split() == want


CTRL_C = r"""
import sys, time
from concurrent.futures import ThreadPoolExecutor
import grit_scan.commands.scan_run as sc
from grit_scan.cli import run

def slow_scan(*a, **k):
    # a --jobs pool whose workers would keep the process alive for a minute
    with ThreadPoolExecutor(4) as pool:
        futs = [pool.submit(time.sleep, 60) for _ in range(4)]
        sys.stderr.write("ready\n"); sys.stderr.flush()
        for f in futs:
            f.result()

sc.scan = slow_scan
sys.argv = ["grit", "scan", "--jobs", "4", "."]
run()
"""


def test_ctrl_c_exits_130_with_one_interrupted_line():
    p = subprocess.Popen([sys.executable, "-c", CTRL_C], stderr=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert p.stderr is not None
    assert p.stderr.readline() == "ready\n"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130
    assert err.splitlines() == ["grit: error: interrupted"]
    assert out == ""


def test_suggested_fix_parses_as_the_two_operands(sample):
    f = next(f for f in sample.findings if f.kind.value == "gid_disagreement")
    argv = shlex.split(f.detail["suggested_fix"])
    assert argv[:2] == ["grit", "explain"] and len(argv) == 4
    assert argv[3] == f"{f.path}::{f.tensor}"
